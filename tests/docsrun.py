"""Executes the examples of a Markdown page (the docs and the README), so that what they show is
what gpcheck does. Used by tests/unit/test_docs_examples.py.

What runs, in a fresh working directory per page, in page order:
- `<!-- doc-test: use SRC as DST -->` copies SRC (relative to the page's folder) to DST in the
  working directory; later examples see that file.
- a ```gpspec block that starts with `model` must pass `gpcheck check`; any other ```gpspec block is
  a fragment and must appear in the file the last `use` named (its lines in order; a `...` line
  stands for any lines), so a fragment cannot drift from the complete file.
- a ```console block: each `$ gpcheck ...` line runs (the command line's `main`, in this process,
  100 columns) and its output must be the lines that follow it, up to the next `$` line (times
  like `0.01 s` and runs of spaces are normalised; a `...` line stands for any lines). `$` lines of other programs
  (pip, python -m venv) are not run: CI's fresh install runs them.
- `<!-- doc-test: save FILE -->` before a complete ```gpspec block also saves it as FILE.
- `<!-- doc-test: pytest FILE -->` before a ```python block writes it to FILE and runs pytest on it;
  a ```pycon block runs as a doctest; other ```python blocks run as scripts and must not fail.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_FENCE = re.compile(r"^(```+)([\w{}-]*)[^\n]*\n(.*?)^\1\s*$", re.M | re.S)
_DIRECTIVE = re.compile(r"<!--\s*doc-test:\s*(.*?)\s*-->")
_TIME = re.compile(r"\b\d+(\.\d+)?\s?(s|ms|min)\b")


@dataclass
class Block:
    kind: str  # the fence's info word, or "directive"
    text: str
    line: int  # 1-based line of the page where it starts


def blocks(page: Path) -> list[Block]:
    """The page's fenced blocks and doc-test directives, in order."""
    text = page.read_text(encoding="utf-8")
    found = [Block("directive", m.group(1), text.count("\n", 0, m.start()) + 1) for m in _DIRECTIVE.finditer(text)]
    found += [Block(m.group(2), m.group(3), text.count("\n", 0, m.start()) + 1) for m in _FENCE.finditer(text)]
    return sorted(found, key=lambda b: b.line)


def _norm(lines: list[str]) -> list[str]:
    return [" ".join(_TIME.sub("T", line).split()) for line in lines]


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether `actual` is `expected` with each `...` line standing for any lines (normalised)."""
    exp, act = _norm(expected), _norm(actual)
    while exp and exp[-1] == "":
        exp.pop()
    while act and act[-1] == "":
        act.pop()

    def go(i: int, j: int) -> bool:
        if i == len(exp):
            return j == len(act)
        if exp[i] == "...":
            return any(go(i + 1, k) for k in range(j, len(act) + 1))
        return j < len(act) and (exp[i] == act[j] or (exp[i].endswith("...") and act[j].startswith(exp[i][:-3])))\
            and go(i + 1, j + 1)

    return go(0, 0)


def contained(fragment: list[str], whole: list[str]) -> bool:
    """Whether the fragment's lines (stripped, `...` skipped) occur in `whole` in order."""
    want = [s.strip() for s in fragment if s.strip() and s.strip() != "..."]
    have = iter(s.strip() for s in whole)
    return all(any(w == h for h in have) for w in want)


_ENV = {"COLUMNS": "100", "NO_COLOR": "1", "FORCE_COLOR": None}


def _gpcheck(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`gpcheck ARGS` in `cwd`, in this process: the command line's own `main` with standard
    output and error captured, 100 columns, no colour. In process rather than `python -m gpcheck`
    in a child: a child imports gpcheck again (0.5 to 1 s of CPU per command, about twenty
    commands in the pages); what a fresh process does at the boundary (signals, exit codes,
    closed descriptors) is tested in test_good_citizen.py, test_fail_safe.py, test_interrupts.py."""
    from gpcheck.checker.cli.command import main

    out, err = io.BytesIO(), io.BytesIO()
    saved_env = {k: os.environ.get(k) for k in _ENV}
    saved_std, saved_cwd = (sys.stdout, sys.stderr), os.getcwd()
    wrappers = [io.TextIOWrapper(b, encoding="utf-8", newline="\n", write_through=True) for b in (out, err)]
    sys.stdout, sys.stderr = wrappers
    try:
        for k, v in _ENV.items():
            _setenv(k, v)
        os.chdir(cwd)
        try:
            code = main(args)
        except SystemExit as e:  # pragma: no cover - main returns its exit code
            code = e.code if isinstance(e.code, int) else 2
    finally:
        for w in wrappers:
            w.flush()
            w.detach()  # so that dropping the wrapper does not close the bytes it wrote to
        sys.stdout, sys.stderr = saved_std
        os.chdir(saved_cwd)
        for k, v in saved_env.items():
            _setenv(k, v)
    return subprocess.CompletedProcess(["gpcheck", *args], code, out.getvalue().decode("utf-8", "replace"),
                                       err.getvalue().decode("utf-8", "replace"))


def _pytest(test_file: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m pytest -q TEST_FILE` in `cwd`, in this process (`pytest.main`, as pytester's
    in-process runs): the plugin is found the way a user's run finds it (its entry point), and
    the example's checks share the models this process loaded and checked (tests/bundled.py,
    shared_verify), where a child would load and check cwsr again (20 to 40 s of CPU). The
    example's own modules are forgotten afterwards."""
    import pytest

    before, saved_cwd, out = set(sys.modules), os.getcwd(), io.StringIO()
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:xdist", "--import-mode=importlib",
                                "--rootdir", str(cwd), test_file])
    finally:
        os.chdir(saved_cwd)
        for name in set(sys.modules) - before:
            if str(getattr(sys.modules[name], "__file__", None) or "").startswith(str(cwd)):
                del sys.modules[name]
    return subprocess.CompletedProcess(["pytest", test_file], int(code), out.getvalue(), "")


def _setenv(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def run_page(page: Path, work: Path) -> list[str]:
    """Run every example of `page` in `work`; the list of failures (empty when all pass)."""
    failures: list[str] = []
    current: Path | None = None
    pending_pytest: str | None = None
    pending_save: str | None = None
    where = lambda b: f"{page.name}:{b.line}"  # noqa: E731
    for b in blocks(page):
        if b.kind == "directive":
            words = b.text.split()
            if words[:1] == ["use"] and len(words) == 4 and words[2] == "as":
                shutil.copyfile(page.parent / words[1], work / words[3])
                current = work / words[3]
            elif words[:1] == ["save"] and len(words) == 2:
                pending_save = words[1]
            elif words[:1] == ["pytest"] and len(words) == 2:
                pending_pytest = words[1]
            else:
                failures.append(f"{where(b)}: unknown doc-test directive {b.text!r}")
        elif b.kind == "gpspec":
            if b.text.lstrip().startswith("model "):
                spec = work / (pending_save or "_example.gpspec")
                pending_save = None
                spec.write_text(b.text, encoding="utf-8")
                r = _gpcheck(["check", str(spec)], work)
                if r.returncode != 0:
                    failures.append(f"{where(b)}: the spec does not check:\n{r.stderr}")
            elif current is None or not contained(b.text.splitlines(), current.read_text().splitlines()):
                failures.append(f"{where(b)}: a fragment not found in {current.name if current else 'any used file'}")
        elif b.kind == "console":
            failures += _console(b, work, where(b))
        elif b.kind == "pycon":
            test = doctest.DocTestParser().get_doctest(b.text, {}, where(b), str(page), b.line)
            out: list[str] = []
            cwd = os.getcwd()
            os.chdir(work)
            try:
                runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
                runner.run(test, out=out.append)
            finally:
                os.chdir(cwd)
            if runner.failures:
                failures.append(f"{where(b)}: doctest failed:\n{''.join(out)}")
        elif b.kind == "python":
            if pending_pytest:
                (work / pending_pytest).write_text(b.text, encoding="utf-8")
                r = _pytest(pending_pytest, work)
                pending_pytest = None
            else:
                r = subprocess.run([sys.executable, "-c", b.text], cwd=work, capture_output=True, text=True,
                                   timeout=600, env=dict(os.environ, PYTHONPATH=str(ROOT)))
            if r.returncode != 0:
                failures.append(f"{where(b)}: the Python example failed:\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return failures


def _console(b: Block, work: Path, where: str) -> list[str]:
    failures = []
    lines = b.text.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            i += 1
            continue
        cmd, j = lines[i][2:], i + 1
        while j < len(lines) and not lines[j].startswith("$ "):
            j += 1
        expected = lines[i + 1:j]
        words = shlex.split(cmd)
        for cut in (">", "|", "&&"):  # a redirection or a pipe: the gpcheck part runs, its output unchecked
            if cut in words:
                words, expected = words[:words.index(cut)], []
        if words and words[0] == "gpcheck":
            r = _gpcheck(words[1:], work)
            if "Traceback" in r.stderr or r.returncode == 2:
                failures.append(f"{where}: `{cmd}` failed (exit {r.returncode}):\n{r.stderr[-2000:]}")
            elif expected and not matches(expected, (r.stdout + r.stderr).splitlines()):
                failures.append(f"{where}: `{cmd}` printed\n{r.stdout}{r.stderr}\ninstead of\n" + "\n".join(expected))
        i = j
    return failures

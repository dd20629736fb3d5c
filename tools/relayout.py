"""Issue 34: `checker/` in one folder per stage. The table of moves (old path -> new path) and the
rewrite of every reference to a moved module: absolute imports, `from gpcheck.checker import x`,
dotted strings (`mock.patch("gpcheck.checker.x.f")`, pyproject's entry point, docs' automodule)
and paths in prose and comments (`checker/x.py`).

    python tools/relayout.py                        # git mv what is still in its old place, then rewrite
    python tools/relayout.py --rewrite-imports-only # rewrite references only (e.g. after a merge)
    python tools/relayout.py --check                # print what would change, change nothing

Both modes are idempotent: a name or path already in the new layout is left alone, so the rewrite
can run again on a merged tree to re-point files written against the old layout. Four old module
names are now package names (`api`, `cli`, `engines`, `report`): a bare `gpcheck.checker.api` in an
import statement is the old module and is rewritten; a bare one in a string or prose is ambiguous
and only reported. At the end the script lists any top-level `checker/*.py` it has no mapping
for: add a line to MOVES and run it again."""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# old path -> new path (a file, or a folder moved whole). Top-level checker/*.py first.
MOVES: dict[str, str] = {
    # core: what every stage shares (verdicts, the resource budget, the progress line)
    "checker/verdict.py": "checker/core/verdict.py",
    "checker/budget.py": "checker/core/budget.py",
    "checker/progress.py": "checker/core/progress.py",
    # engines
    "checker/explicit.py": "checker/engines/explicit/explicit.py",
    "checker/fast_explicit.py": "checker/engines/explicit/fast_explicit.py",
    "checker/liveness.py": "checker/engines/explicit/liveness.py",
    "checker/unpermute.py": "checker/engines/explicit/unpermute.py",
    "checker/refinement.py": "checker/engines/explicit/refinement.py",
    "checker/latency.py": "checker/engines/latency/latency.py",
    "checker/fast_latency.py": "checker/engines/latency/fast_latency.py",
    "checker/witness.py": "checker/engines/smt/witness.py",
    "checker/smt": "checker/engines/smt",
    "checker/param": "checker/engines/param",
    "checker/timed": "checker/engines/timed",
    # the Python API around the engines
    "checker/api.py": "checker/api/model_api.py",
    "checker/engines.py": "checker/api/smt_dispatch.py",
    "checker/trace_api.py": "checker/api/trace_api.py",
    "checker/testing.py": "checker/api/testing.py",
    "checker/reproduce.py": "checker/api/reproduce.py",
    "checker/assumptions.py": "checker/api/assumptions.py",
    # reports for people and for programs
    "checker/report.py": "checker/report/render.py",
    "checker/textout.py": "checker/report/textout.py",
    "checker/error_report.py": "checker/report/error_report.py",
    "checker/narrative.py": "checker/report/narrative.py",
    # the project's own regression checks: the bundled library, `expect` lines, the seed claims
    "checker/library.py": "checker/regression/library.py",
    "checker/expectations.py": "checker/regression/expectations.py",
    "checker/claims.py": "checker/regression/claims.py",
    "checker/claims_rule.py": "checker/regression/claims_rule.py",
    # many checks at once
    "checker/sweep.py": "checker/distributed/sweep.py",
    "checker/sweep_report.py": "checker/distributed/sweep_report.py",
    "checker/html_report.py": "checker/distributed/html_report.py",
    "checker/cluster.py": "checker/distributed/cluster.py",
    "checker/corpus.py": "checker/distributed/corpus.py",
    # front ends
    "checker/cli.py": "checker/cli/command.py",
    "checker/commands": "checker/cli/commands",
    "checker/lsp.py": "checker/cli/lsp.py",
    "checker/lsp_symbols.py": "checker/cli/lsp_symbols.py",
    "checker/pytest_plugin.py": "checker/cli/pytest_plugin.py",
    "checker/manual.py": "checker/cli/manual.py",
    "checker/outputs.py": "checker/cli/outputs.py",
    # replay's search is an engine (it explores the model along a trace, with Z3's help for dead
    # ends and past max_candidates): traces/ keeps formats, sources, observations and the report
    "traces/replay.py": "checker/engines/replay/search.py",
    "traces/hidden.py": "checker/engines/replay/hidden.py",
    # replay through an event mapping (the mapping's file format stays in traces/mapping.py)
    "traces/mapped.py": "checker/engines/replay/mapped.py",
}

# Top-level checker modules that stay where they are.
STAY = {"checker/__init__.py"}

# The new folders' __init__ docstrings (written when the folder has none).
PACKAGE_DOCS: dict[str, str] = {
    "checker/core": "Verdicts, the resource budget and the progress line: what every stage of `checker/` "
                    "shares.\n\nMay import: `gpcheck.spec` only (traces/ imports this package, so nothing "
                    "above it may be imported here).",
    "checker/engines": "The engines: explicit search and its liveness and latency passes, the Z3 engines "
                       "(bmc, k-induction, PDR), the for-all prover and the timed engine.\n\nMay import: "
                       "`gpcheck.spec`, `gpcheck.gpmodel`, `gpcheck.traces`, `gpcheck.checker.core`. "
                       "Inside: param -> smt -> timed, latency -> explicit (never the other way).",
    "checker/engines/explicit": "Breadth-first search over the successor function (python and compiled "
                                "cores), liveness under weak fairness, symmetry's un-permutation.\n\nMay "
                                "import: `gpcheck.spec`, `gpcheck.gpmodel`, `gpcheck.checker.core`.",
    "checker/engines/latency": "Latency properties on the explored state graph (python and compiled "
                               "cores).\n\nMay import: `engines.explicit` and what it may import.",
    "checker/engines/replay": "Replay: is a recorded trace a behaviour of a model (search.py, hidden.py: "
                              "the candidate-state search along the trace, TLA+ trace validation); the "
                              "report it returns is gpcheck.traces.replay_report's.\n\nMay import: "
                              "`engines.smt` (dead ends, the symbolic fallback), `engines.explicit`, "
                              "`gpcheck.traces` and below.",
    "checker/api": "The Python API: `load`, `verify` (model_api), `replay`, `check_trace` (trace_api), "
                   "the assertions of test suites (testing), the command line of a call (reproduce).\n\n"
                   "May import: the engines, `report`, `core`, `traces`, `gpmodel`, `spec`.",
    "checker/report": "Reports: rich tables and counterexamples for people, errors as JSON data, a "
                      "counterexample as a story, the width of text output.\n\nMay import: "
                      "`gpcheck.checker.core`, `gpcheck.traces`, `gpcheck.spec`.",
    "checker/regression": "The project's own checks of its models: the bundled library as one run, "
                          "`expect` lines, the seed claims.\n\nMay import: `api`, `report`, the engines "
                          "and below.",
    "checker/distributed": "Many checks at once: parameter sweeps and their reports, trace corpora, the "
                           "Dask cluster that runs them.\n\nMay import: `regression`, `api`, `report`, "
                           "the engines and below.",
    "checker/cli": "Front ends: the `gpcheck` command (command, commands/), the language server (lsp), the "
                   "pytest plugin, the files a command reads and writes (outputs), the documentation "
                   "finder (manual).\n\nMay import: everything below it; nothing imports it.",
}

# Old module names that are now package names: a bare reference outside an import is ambiguous.
MOVED_ROOTS = ("gpcheck.checker.", "gpcheck.traces.")  # the packages whose modules the table moves

COLLIDING = {"gpcheck.checker.api", "gpcheck.checker.cli", "gpcheck.checker.engines", "gpcheck.checker.report"}

# The documented public paths (README, docs/api.md): they keep working (NOTE(public-paths) in
# checker/__init__.py), so prose (.md) keeps them; code is pointed at the modules themselves.
PUBLIC = {"gpcheck.checker.testing", "gpcheck.checker.trace_api", "gpcheck.checker.verdict",
          "gpcheck.checker.pytest_plugin"}

# Files that name the old public paths on purpose (the aliases themselves): treated as prose.
KEEP_PUBLIC = {"checker/__init__.py", "checker/cli/pytest_plugin.py"}

TEXT_SUFFIXES = {".py", ".md", ".toml", ".gpspec", ".rst", ".cfg", ".ini"}


def dotted(path: str) -> str:
    return "gpcheck." + path.removesuffix(".py").replace("/", ".")


# Names that moved to another module when the circles were broken (old and first new path -> now).
SYMBOLS: dict[str, str] = {
    "gpcheck.checker.param.verify_for_all": "gpcheck.checker.api.for_all.verify_for_all",
    "gpcheck.checker.engines.param.verify_for_all": "gpcheck.checker.api.for_all.verify_for_all",
}

OLD2NEW = {dotted(o): dotted(n) for o, n in MOVES.items()} | SYMBOLS
NEW_DIRS = {n for n in MOVES.values() if not n.endswith(".py")} | set(PACKAGE_DOCS)


def new_names() -> set[str]:
    """Every module and package of the new layout that exists in the tree (and those the table names)."""
    names = {dotted(n) for n in MOVES.values()} | {dotted(p) for p in PACKAGE_DOCS}
    for d in NEW_DIRS:
        for p in (ROOT / d).rglob("*.py") if (ROOT / d).is_dir() else ():
            names.add(dotted(str(p.relative_to(ROOT))).removesuffix(".__init__"))
    return names


def _prefix(name: str, table) -> str | None:
    parts = name.split(".")
    for k in range(len(parts), 2, -1):
        if ".".join(parts[:k]) in table:
            return ".".join(parts[:k])
    return None


def map_dotted(name: str, new: set[str], in_import: bool = False) -> str:
    """The new name of `name` (a module, or a module and an attribute path); unchanged if new already."""
    old = _prefix(name, OLD2NEW)
    if old is None:
        return name
    cur = _prefix(name, new)
    if cur is not None and len(cur) > len(old):
        return name  # already in the new layout (e.g. gpcheck.checker.engines.smt.bmc)
    if old == name and old in COLLIDING and not in_import:
        return name  # bare: the old module or the new package; see report_ambiguous
    return OLD2NEW[old] + name[len(old):]


def _rewrite_import(node: ast.stmt, new: set[str]) -> list[tuple[str, list[tuple[str, str | None]]]] | None:
    """The statements replacing `node` as (module, [(name, alias)]), or None if it stays."""
    if isinstance(node, ast.Import):
        if not any(a.name.startswith(MOVED_ROOTS) for a in node.names):
            return None
        out = [(map_dotted(a.name, new, in_import=True), a.asname) for a in node.names]
        if out == [(a.name, a.asname) for a in node.names]:
            return None
        return [("", out)]
    assert isinstance(node, ast.ImportFrom)
    if node.level or not node.module or not (node.module + ".").startswith(MOVED_ROOTS):
        return None
    groups: dict[str, list[tuple[str, str | None]]] = {}
    changed = False
    for a in node.names:
        full = f"{node.module}.{a.name}"
        if a.name == "*":
            base, nm, alias = map_dotted(node.module, new, in_import=True), a.name, a.asname
        elif full in OLD2NEW and (full not in new or full in COLLIDING):  # a moved module, by name
            base, nm = OLD2NEW[full].rsplit(".", 1)
            alias = a.asname or (a.name if nm != a.name else None)
        elif full in new:  # a module of the new layout
            base, nm, alias = node.module, a.name, a.asname
        else:  # a name inside a module that may have moved
            base, nm, alias = map_dotted(node.module, new, in_import=True), a.name, a.asname
        changed |= (base, nm, alias) != (node.module, a.name, a.asname)
        groups.setdefault(base, []).append((nm, alias))
    return list(groups.items()) if changed else None


def _render(indent: str, stmts, original: ast.stmt) -> str:
    lines = []
    for module, names in stmts:
        parts = [n if a is None else f"{n} as {a}" for n, a in names]
        if module == "":
            lines.append(indent + "import " + ", ".join(parts))
            continue
        line = f"{indent}from {module} import {', '.join(parts)}"
        if len(line) > 110 and len(parts) > 1:
            line = f"{indent}from {module} import (\n" + "".join(f"{indent}    {p},\n" for p in parts) + f"{indent})"
        lines.append(line)
    return "\n".join(lines)


def rewrite_imports(text: str, new: set[str]) -> str:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    src = text.splitlines(keepends=True)
    edits = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            stmts = _rewrite_import(node, new)
            if stmts is not None:
                edits.append((node, stmts))
    for node, stmts in sorted(edits, key=lambda e: -e[0].lineno):
        first, last = node.lineno - 1, node.end_lineno - 1
        head = src[first][:node.col_offset]
        tail = src[last][node.end_col_offset:]
        if head.strip():  # `x; import y` on one line: leave it to the dotted pass
            continue
        src[first:last + 1] = [_render(head, stmts, node) + tail]
    return "".join(src)


DOTTED = re.compile(r"(?<![\w.])gpcheck\.(?:checker|traces)(?:\.\w+)+")
# `from gpcheck.checker.x import a, b as c` / `import gpcheck.checker.x` inside strings and prose
FROM_TEXT = re.compile(r"(?<![\w.])(?:from gpcheck\.(?:checker|traces)(?:\.\w+)* import \w+(?: as \w+)?(?:, \w+(?: as \w+)?)*"
                       r"|import gpcheck\.(?:checker|traces)(?:\.\w+)+(?: as \w+)?)")


def _rewrite_import_text(m: re.Match[str], new: set[str]) -> str:
    node = ast.parse(m.group(0)).body[0]
    stmts = _rewrite_import(node, new)
    return m.group(0) if stmts is None else _render("", stmts, node).replace("\n", "; ")
PATH = re.compile(r"(?<![\w.\-])(?:checker|traces)(?:/\w+)+(?:\.py\b)?/?")


def map_path(path: str) -> str:
    body = path.rstrip("/")
    slash = path[len(body):]
    old = None
    for o in MOVES:
        if body == o or body.startswith(o + "/") or (o.endswith(".py") and body == o[:-3]):
            if old is None or len(o) > len(old):
                old = o
    if old is None or (old.endswith(".py") and body == old[:-3]):
        return path
    for n in NEW_DIRS:  # already new (checker/engines/smt is new, checker/smt is old)
        if (body == n or body.startswith(n + "/")) and len(n) > len(old):
            return path
    return MOVES[old] + body[len(old):] + slash


def rewrite_text(path: Path, text: str, new: set[str], ambiguous: list[str]) -> str:
    if path.suffix == ".py":
        text = rewrite_imports(text, new)
    prose = path.suffix == ".md" or str(path.relative_to(ROOT)) in KEEP_PUBLIC

    def public(m: re.Match[str]) -> bool:
        line = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
        return prose and "automodule" not in line and any(
            m.group(0) == p or m.group(0).startswith((p + ".", f"from {p} ", f"import {p}"))
            for p in PUBLIC)

    text = FROM_TEXT.sub(lambda m: m.group(0) if public(m) else _rewrite_import_text(m, new), text)
    out = DOTTED.sub(lambda m: m.group(0) if public(m) else map_dotted(m.group(0), new), text)
    for m in DOTTED.finditer(out):
        start = out.rfind("\n", 0, m.start()) + 1
        before = out[start:m.start()]
        if before.rstrip().endswith(("from", "import")):
            continue  # an import: rewritten above when it was the old module
        if m.group(0) in COLLIDING and m.group(0) in OLD2NEW:
            line = out.count("\n", 0, m.start()) + 1
            ambiguous.append(f"{path.relative_to(ROOT)}:{line}: bare {m.group(0)} (old module or new package?)")
    return PATH.sub(lambda m: map_path(m.group(0)), out)


def tracked_files() -> list[Path]:
    r = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                       text=True, check=True)
    return [ROOT / p for p in r.stdout.splitlines() if Path(p).suffix in TEXT_SUFFIXES and (ROOT / p).is_file()]


def git_mv(src: str, dst: str, check: bool) -> None:
    print(f"git mv {src} {dst}")
    if not check:
        (ROOT / dst).parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "mv", src, dst], cwd=ROOT, check=True)


def do_moves(check: bool) -> None:
    for old, new in MOVES.items():
        src, dst = ROOT / old, ROOT / new
        if not src.exists():
            continue
        if not dst.exists():
            git_mv(old, new, check)
        elif src.is_dir():  # files added to the old folder after the move (e.g. by a merge)
            for p in sorted(src.rglob("*")):
                if p.is_file() and "__pycache__" not in p.parts and not (dst / p.relative_to(src)).exists():
                    git_mv(str(p.relative_to(ROOT)), str((dst / p.relative_to(src)).relative_to(ROOT)), check)
        else:
            print(f"warning: both {old} and {new} exist; merge them by hand", file=sys.stderr)
    for d, doc in PACKAGE_DOCS.items():
        init = ROOT / d / "__init__.py"
        if not init.exists():
            print(f"create {init.relative_to(ROOT)}")
            if not check:
                init.parent.mkdir(parents=True, exist_ok=True)
                init.write_text(f'"""{doc}"""\n')
                subprocess.run(["git", "add", str(init)], cwd=ROOT, check=True)


def fix_pyproject(text: str) -> str:
    """Every package of the new layout in `[tool.setuptools] packages`."""
    listed = set(re.findall(r'"(gpcheck(?:\.\w+)*)"', text))
    missing = sorted(dotted(d) for d in NEW_DIRS if (ROOT / d / "__init__.py").exists() and dotted(d) not in listed)
    if missing:
        text = text.replace('"gpcheck.checker", ', '"gpcheck.checker", ' + "".join(f'"{m}", ' for m in missing), 1)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rewrite-imports-only", action="store_true", help="rewrite references, move nothing")
    ap.add_argument("--check", action="store_true", help="print what would change, change nothing")
    args = ap.parse_args(argv)
    if not args.rewrite_imports_only:
        do_moves(args.check)
    new = new_names()
    ambiguous: list[str] = []
    for path in tracked_files():
        if path.resolve() == Path(__file__).resolve():
            continue
        text = path.read_text()
        out = rewrite_text(path, text, new, ambiguous)
        if path.name == "pyproject.toml":
            out = fix_pyproject(out)
        if out != text:
            print(f"rewrite {path.relative_to(ROOT)}")
            if not args.check:
                path.write_text(out)
    for a in ambiguous:
        print(f"ambiguous: {a}", file=sys.stderr)
    unmapped = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "checker").glob("*.py")
                      if str(p.relative_to(ROOT)) not in STAY | set(MOVES))
    for u in unmapped:
        print(f"unmapped: {u} (add it to MOVES and run again)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The documentation shows what gpcheck does: every example of the pages below runs
(tests/docsrun.py says how), and the site builds with warnings as errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.docsrun import ROOT, contained, matches, run_page

PAGES = ["docs/getting-started.md", "docs/tutorial.md", "docs/language.md", "docs/api.md", "README.md"]


@pytest.mark.parametrize("page", PAGES)
def test_examples_run(page: str, tmp_path: Path) -> None:
    failures = run_page(ROOT / page, tmp_path)
    assert not failures, "\n\n".join(failures)


def test_the_runner_catches_drift(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    page = tmp_path / "src" / "page.md"
    (tmp_path / "src" / "a.gpspec").write_text("model a\nvar x: 0..1 = 0\naction go { require x == 0\n x = 1 }\n")
    page.write_text("<!-- doc-test: use a.gpspec as a.gpspec -->\n```gpspec\naction go { require x == 1\n```\n"
                    "```console\n$ gpcheck check a.gpspec\nok: something else\n```\n")
    (tmp_path / "work").mkdir()
    failures = run_page(page, tmp_path / "work")
    assert len(failures) == 2 and "fragment" in failures[0] and "instead of" in failures[1]


def test_matching_rules() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["took 0.01 s"], ["took  1.25 s"])
    assert not matches(["a", "b"], ["a", "c"])
    assert contained(["x = 1", "...", "z"], ["x = 1", "y", "z"]) and not contained(["z", "x = 1"], ["x = 1", "z"])


def test_reserved_words_are_the_grammars() -> None:
    """The language reference lists exactly the grammar's keywords (the contextual ones apart)."""
    import re

    grammar = (ROOT / "spec" / "grammar.lark").read_text(encoding="utf-8")
    keywords = set(re.findall(r'"([a-z_]+)"', grammar))
    text = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    listed = text[text.index("Reserved words:"):]
    reserved = set(listed[listed.index("`") + 1:listed.index("`;")].split())
    contextual = set(re.findall(r"`([a-z_]+)`", listed[listed.index("`;"):listed.index("names elsewhere")]))
    assert reserved | contextual == keywords, (keywords - reserved - contextual, (reserved | contextual) - keywords)


def test_site_builds_without_warnings(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                        str(ROOT / "docs"), str(tmp_path / "html")], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-5000:]
    assert (tmp_path / "html" / "models" / "cwsr.html").is_file()


def test_an_empty_detail_column_is_never_squeezed(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 33: a 100-column table with long property names folded the empty `detail` heading
    into two-letter pieces (`de` / `ta` / `il`)."""
    from gpcheck.checker.cli.command import main

    main(["verify", str(ROOT / "docs" / "tutorial" / "step3_fair.gpspec"), "--width", "100"])
    out = capsys.readouterr().out
    assert not any(line.strip() in ("de", "ta", "il") for line in out.splitlines()), out

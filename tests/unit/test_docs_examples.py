"""The documentation shows what gpcheck does: every example of the pages below runs
(tests/docsrun.py says how), and the site builds with warnings as errors."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bundled import run_folder, shared_verify
from tests.docsrun import ROOT, contained, matches, run_page

PAGES = ["docs/getting-started.md", "docs/tutorial.md", "docs/language.md", "docs/api.md", "README.md"]


@pytest.mark.parametrize("page", PAGES)
def test_examples_run(page: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    # getting-started's `gpcheck verify` (the whole library), the README's plugin example (cwsr) and
    # the model page below check the same bundled models: once per run (tests/bundled.py)
    with shared_verify(run_folder(tmp_path_factory)):
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


def _build_site(tmp_path: Path, *options: str) -> Path:
    """Build a copy of docs/ (the model pages are generated into the copy, not the checkout) with
    warnings as errors; the HTML folder."""
    src = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", src, ignore=shutil.ignore_patterns("_build", "__pycache__"))
    (tmp_path / "spec").mkdir()  # docs/grammar.md includes ../spec/grammar.lark
    shutil.copyfile(ROOT / "spec" / "grammar.lark", tmp_path / "spec" / "grammar.lark")
    for page in (src / "models").glob("*.md"):  # the checkout's generated pages, if any: made again
        if page.name != "index.md":
            page.unlink()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", *options,
                        str(src), str(tmp_path / "html")], capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-5000:]
    assert (tmp_path / "html" / "models" / "cwsr.html").is_file()
    return tmp_path / "html"


def test_site_builds_without_warnings(tmp_path: Path) -> None:
    """Every page, the model pages without their verdicts (checking all 21 bundled models took
    about 20 s of the build's 30 s of CPU): the verdict columns are test_a_model_page_shows_each_verdict's
    and the slow tier's full build's."""
    _build_site(tmp_path, "-D", "gpcheck_model_results=0")
    page = (tmp_path / "docs" / "models" / "cwsr.md").read_text(encoding="utf-8")
    assert "## Properties" in page and "Checked by the explicit engine" not in page


@pytest.mark.slow  # every bundled model checked for its page (about 30 s of CPU); fast: the two tests above and below
def test_site_builds_without_warnings_with_every_models_verdicts(tmp_path: Path) -> None:
    _build_site(tmp_path)
    page = (tmp_path / "docs" / "models" / "cwsr.md").read_text(encoding="utf-8")
    assert "Checked by the explicit engine at the default constants" in page


def test_a_model_page_shows_each_verdict(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The model page's verdict columns (what the site build without `gpcheck_model_results=0`
    shows), on one small bundled model: each property's verdict is its expectation's."""
    from gpcheck.checker import Verdict
    from gpcheck.checker.cli.commands.model_page import model_page
    from gpcheck.checker.regression.library import expectation_met
    from gpcheck.spec import load_spec

    model = load_spec("kfd_monitor")
    with shared_verify(run_folder(tmp_path_factory)):  # the run getting-started's `gpcheck verify` made
        page = model_page(model)
    assert "Checked by the explicit engine at the default constants" in page
    rows = {line.split("|")[1].strip(" `"): [c.strip() for c in line.split("|")[2:-1]]
            for line in page.splitlines() if line.startswith("| `")}
    assert {e.property for e in model.expectations} <= set(rows)
    for e in model.expectations:
        kind, expected, verdict = rows[e.property][:3]
        assert expected == e.verdict, (e.property, rows[e.property])
        assert expectation_met(e.verdict, Verdict(verdict.split()[0])), (e.property, rows[e.property])
    assert "[" in rows["rt_preempt_latency"][2] and "steps)" in rows["no_starvation"][2]


def test_an_empty_detail_column_is_never_squeezed(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 33: a 100-column table with long property names folded the empty `detail` heading
    into two-letter pieces (`de` / `ta` / `il`)."""
    from gpcheck.checker.cli.command import main

    main(["verify", str(ROOT / "docs" / "tutorial" / "step3_fair.gpspec"), "--width", "100"])
    out = capsys.readouterr().out
    assert not any(line.strip() in ("de", "ta", "il") for line in out.splitlines()), out

"""Sphinx extension: one page per bundled model, generated from the model when the build starts
(`gpcheck.checker.cli.commands.model_page`, the same text `gpcheck models MODEL --markdown` prints),
into `docs/models/` (git-ignored; `models/index.md` lists them with a glob).

`-D gpcheck_model_results=0` leaves the verdicts out (`model_page(run=False)`): every page, its
constants, properties and definitions, without checking every bundled model first. The default
test run builds the site that way (tests/unit/test_docs_examples.py); the slow tier and a
release build check every model."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _generate(app: Any) -> None:
    from gpcheck.checker.cli.commands.model_page import model_page
    from gpcheck.spec import bundled_models, load_spec

    out = Path(app.srcdir) / "models"
    out.mkdir(exist_ok=True)
    names = set(bundled_models())
    for stale in out.glob("*.md"):
        if stale.stem != "index" and stale.stem not in names:
            stale.unlink()
    for name in sorted(names):
        text = model_page(load_spec(name), run=app.config.gpcheck_model_results)
        page = out / f"{name}.md"
        if not page.is_file() or page.read_text(encoding="utf-8") != text:
            page.write_text(text, encoding="utf-8")


def setup(app: Any) -> dict[str, Any]:
    app.add_config_value("gpcheck_model_results", True, "env", bool)
    app.connect("builder-inited", _generate)
    return {"parallel_read_safe": True, "version": "1"}

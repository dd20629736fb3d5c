"""Sphinx extension: one page per bundled model, generated from the model when the build starts
(`gpcheck.checker.cli.commands.model_page`, the same text `gpcheck models MODEL --markdown` prints),
into `docs/models/` (git-ignored; `models/index.md` lists them with a glob)."""

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
        text = model_page(load_spec(name))
        page = out / f"{name}.md"
        if not page.is_file() or page.read_text(encoding="utf-8") != text:
            page.write_text(text, encoding="utf-8")


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _generate)
    return {"parallel_read_safe": True, "version": "1"}

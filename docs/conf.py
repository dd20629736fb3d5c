"""Sphinx configuration of gpcheck's documentation site.

Sphinx with MyST (Markdown sources, so that `gpcheck docs` can print the same files offline) and the
Furo theme; the model pages are generated from the bundled models at build time
(`_ext/gpcheck_models.py`), the CLI reference from the argument parser (`_ext/gpcheck_cli.py`) and the
Python API from its docstrings (autodoc). Build: `python -m sphinx -W -b html docs docs/_build/html`
(warnings are errors, as in the test `tests/unit/test_docs_site.py`)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))  # the checkout: `import gpcheck` finds spec/, checker/, ...

project = "gpcheck"
author = "The gpcheck authors"
copyright = "2026, The gpcheck authors"
extensions = ["myst_parser", "sphinx.ext.autodoc", "gpcheck_models", "gpcheck_cli", "gpspec_lexer"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "editors/*.json", "editors/README.md", "tutorial/*"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
html_theme = "furo"
html_title = "gpcheck"
autodoc_typehints = "description"
autodoc_member_order = "bysource"
suppress_warnings = ["myst.xref_missing"]

"""Our modules' syntax trees, parsed once per test process.

tests/unit/test_import_order.py (the import graph, five times over the tree and its planted
copies) and tests/unit/test_layers.py (each module's import rules) read the same 225 modules;
`ast.parse` of them is about 1.2 s of CPU. Keyed on the source text, so a copy of a module
elsewhere is the same entry. The trees are only read, never changed."""

from __future__ import annotations

import ast
from functools import lru_cache


@lru_cache(maxsize=None)
def _parse(text: str) -> ast.Module:
    return ast.parse(text)


def parse(text: str, filename: str) -> ast.Module:
    """`ast.parse(text, filename)`, shared by every caller with the same text."""
    try:
        return _parse(text)
    except SyntaxError:
        return ast.parse(text, filename)  # raises again, naming the file

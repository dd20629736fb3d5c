"""Values and states written the way a .gpspec file writes them, for every text report: `true`
and `false` (never Python's True/False), enum members by name, arrays as `[a, b, c]` (an
enum- or bool-indexed array as `[Member: v, ...]`), structs as `{field: v, ...}`.

Why here: replay (traces/) and the engines' reports (checker/) both print decoded states
(gpcheck.gpmodel.layout.Layout.decode's shape); one formatter keeps them alike, and `spec` is the
layer both may import."""

from __future__ import annotations

import textwrap
from typing import Any, Iterable


def show(value: Any) -> str:
    """One decoded value in gpspec syntax."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, dict):
        if _is_struct(value):
            return "{" + ", ".join(f"{k}: {show(v)}" for k, v in value.items()) + "}"
        return "[" + ", ".join(f"{k}: {show(v)}" for k, v in value.items()) + "]"
    return str(value)


def _is_struct(d: dict[str, Any]) -> bool:
    # enum/bool-indexed arrays decode to dicts keyed by member names (capitalised by convention)
    # or "false"/"true"; struct fields are lower-case identifiers
    return not any(str(k)[:1].isupper() or k in ("true", "false") for k in d)


def show_state(state: dict[str, Any]) -> str:
    """`x = 1, busy = false, q = [0, 2]`: a whole state on one line."""
    return ", ".join(f"{k} = {show(v)}" for k, v in state.items())


def wrap_items(items: Iterable[str], width: int, indent: str) -> list[str]:
    """Items joined by ", " into lines of at most `width` columns (an item longer than a line
    gets a line of its own, unbroken), each line starting with `indent`; no trailing spaces."""
    lines: list[str] = []
    line = ""
    room = max(20, width - len(indent))
    for item in items:
        piece = item if not line else ", " + item
        if line and len(line) + len(piece) > room:
            lines.append(indent + line + ",")
            line = item
        else:
            line += piece
    if line:
        lines.append(indent + line)
    return [ln.rstrip() for ln in lines]


def wrap_text(text: str, width: int, indent: str) -> list[str]:
    """Prose wrapped to `width` with every line indented by `indent`."""
    return textwrap.wrap(text, width=max(20, width), initial_indent=indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False) or [indent.rstrip()]

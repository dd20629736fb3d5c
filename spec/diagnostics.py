"""Rendering of diagnostics: `file:line:col: error: msg`, the source line with a caret, notes.

Library code never prints; the command line renders with these functions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpcheck.spec.limits import source_lines
from gpcheck.spec.span import Span

if TYPE_CHECKING:  # errors.py imports this module (SpecError.render): annotations only
    from gpcheck.spec.errors import Diagnostic


def _caret(span: Span, source: dict[str, str]) -> list[str]:
    text = source.get(span.file)
    if text is None or span.line < 1:
        return []
    lines = source_lines(text)
    if span.line > len(lines):
        return []
    line = lines[span.line - 1]
    width = 1
    if span.end_line == span.line and span.end_column > span.column:
        width = span.end_column - span.column
    pad = "".join("\t" if ch == "\t" else " " for ch in line[: span.column - 1])
    return [f"    {line}", f"    {pad}{'^' * width}"]


def render_one(d: Diagnostic, source: dict[str, str]) -> str:
    where = f"{d.span}: " if d.span is not None else ""
    out = [f"{where}{d.severity.value}: {d.message}"]
    if d.span is not None:
        out.extend(_caret(d.span, source))
    for span, note in d.notes:
        nwhere = f"{span}: " if span is not None else ""
        out.append(f"{nwhere}note: {note}")
        if span is not None:
            out.extend(_caret(span, source))
    return "\n".join(out)


def render_text(diagnostics: list[Diagnostic], source: dict[str, str]) -> str:
    return "\n".join(render_one(d, source) for d in diagnostics)


def render_json(diagnostics: list[Diagnostic]) -> list[dict[str, Any]]:
    return [
        {
            "severity": d.severity.value,
            "file": d.span.file if d.span else None,
            "line": d.span.line if d.span else None,
            "column": d.span.column if d.span else None,
            "message": d.message,
            "notes": [n for _, n in d.notes],
        }
        for d in diagnostics
    ]

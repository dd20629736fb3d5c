"""Errors as data: the `{"error": {"file", "line", "column", "message"}}` object that every
command prints on stdout under `--json` when it fails (bad input, usage, a stop), so that editors
and scripts get something to parse as well as the exit code.

A spec error carries its located diagnostics (all of them go into `"errors"`, the first is
`"error"`); other errors name their place at the start of the message (`run.jsonl:4: ...`,
`trace.json:1:7: ...`), which is parsed back out; an error without a place has nulls there."""

from __future__ import annotations

import os
import re
from typing import Any

from gpcheck.spec.errors import SpecError

_LOCATED = re.compile(r"^(?P<file>[^\s:][^:\n]*?):(?P<line>\d+)(?::(?P<column>\d+))?: (?P<message>.*)$", re.S)


def located(message: str) -> dict[str, Any]:
    """`FILE:LINE[:COL]: text` → {"file", "line", "column", "message"}; anything else keeps the
    whole text as the message and nulls for the place."""
    m = _LOCATED.match(message)
    if m is None:
        head, sep, rest = message.partition(": ")
        if sep and (os.path.exists(head) or _looks_like_path(head)):  # `FILE: text`: a whole file
            return {"file": head, "line": None, "column": None, "message": rest}
        return {"file": None, "line": None, "column": None, "message": message}
    column = m.group("column")
    return {"file": m.group("file"), "line": int(m.group("line")),
            "column": int(column) if column is not None else None, "message": m.group("message")}


def _looks_like_path(word: str) -> bool:
    return bool(word) and not any(c.isspace() for c in word) and ("/" in word or "." in word[1:])


def error_object(exc: BaseException | str, kind: str = "error") -> dict[str, Any]:
    """The JSON object for a failed command: `{"error": {...}}`, with `"errors"` listing every
    diagnostic of a spec error, and `"kind"` saying which sort of failure it was (`spec`,
    `usage`, `trace`, `stopped`, `internal`, ...)."""
    if isinstance(exc, SpecError):
        items = [{"file": d.span.file if d.span else None,
                  "line": d.span.line if d.span else None,
                  "column": d.span.column if d.span else None,
                  "message": d.message + "".join(f"; {n}" for _, n in d.notes)}
                 for d in exc.diagnostics]
        first = dict(items[0]) if items else {"file": None, "line": None, "column": None, "message": str(exc)}
        first["kind"] = "spec"
        return {"error": first, "errors": items}
    text = exc if isinstance(exc, str) else str(exc)
    first = located(text)
    first["kind"] = kind
    return {"error": first, "errors": [{k: v for k, v in first.items() if k != "kind"}]}

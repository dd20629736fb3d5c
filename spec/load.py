"""Entry points of the front end: a spec file, source text or bundled model name → ir.Model."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Mapping

from gpcheck.spec import ir
from gpcheck.spec.errors import ConstantError, Diagnostic, Severity, SpecSyntaxError, UsageError
from gpcheck.spec.limits import MAX_INT, normalize_newlines
from gpcheck.spec.parser import parse_spec
from gpcheck.spec.span import Span
from gpcheck.spec.typecheck import check_spec


def load_source(text: str, file: str = "<string>", consts: Mapping[str, int] | None = None) -> ir.Model:
    """Parse and type-check gpspec text; raises SpecSyntaxError / SpecTypeError / ConstantError."""
    text = normalize_newlines(text)
    spec = parse_spec(text, file)
    return check_spec(spec, consts or {}, {file: text})


def bundled_models() -> dict[str, Path]:
    """The models shipped in spec/models/, by name (the file stem)."""
    root = resources.files("gpcheck.spec") / "models"
    out: dict[str, Path] = {}
    for entry in sorted(root.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".gpspec"):
            out[entry.name[: -len(".gpspec")]] = Path(str(entry))
    return out


def resolve_spec_path(spec: str | Path) -> Path:
    """A path as given, or the file of a bundled model when `spec` names one."""
    p = Path(spec)
    if p.exists():
        return p
    models = bundled_models()
    if isinstance(spec, str) and spec in models:
        return models[spec]
    hint = f" (bundled models: {', '.join(models)})" if models else ""
    raise UsageError(f"{spec}: no such file or bundled model{hint}")


def load_spec(spec: str | Path, consts: Mapping[str, int] | None = None) -> ir.Model:
    """Load a spec file or bundled model by name, with constant overrides."""
    path = resolve_spec_path(spec)
    name = str(spec) if not Path(spec).exists() else str(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror or e}") from None
    return load_source(decode_source(data, name), name, consts)


def decode_source(data: bytes, file: str) -> str:
    """UTF-8 source text; bytes that are not UTF-8 are a located SpecSyntaxError (line and
    column of the first bad byte, CR/CRLF/LF line ends alike)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        head = normalize_newlines(data[: e.start].decode("utf-8", "replace"))
        line = head.count("\n") + 1
        col = len(head) - (head.rfind("\n") + 1) + 1
        text = normalize_newlines(data.decode("utf-8", "replace"))
        msg = f"not UTF-8 text: byte 0x{data[e.start]:02x} cannot start or continue a character here"
        raise SpecSyntaxError([Diagnostic(Severity.ERROR, Span(file, line, col, line, col + 1), msg)],
                              {file: text}) from None


_CONST_VALUE = re.compile(r"[+-]?(0[xX][0-9a-fA-F]{1,64}|0[oO][0-7]{1,64}|0[bB][01]{1,256}|[0-9]{1,80})")
_HEX_OCT_BIN = re.compile(r"[+-]?0[xXoObB]")


def parse_const_overrides(items: list[str]) -> dict[str, int]:
    """`["N=8", "CAP=2"]` → {"N": 8, "CAP": 2}; booleans written true/false become 1/0."""
    out: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        # an instance's constant is dotted (`gpu0.Q`: NOTE(instances))
        if not sep or not all(part.isidentifier() for part in name.split(".")):
            raise ConstantError([Diagnostic(Severity.ERROR, None, f"--const {item!r}: expected NAME=INTEGER")])
        out[name] = parse_const_value(item, value)
    return out


def parse_const_value(item: str, value: str) -> int:
    """One constant's value as the user typed it in `item`: true/false (1/0) or an integer in
    ASCII digits (decimal, 0x, 0o, 0b); anything else is a ConstantError naming `item`."""
    value = value.strip()
    if value.lower() in ("true", "false"):
        return int(value.lower() == "true")
    # ASCII as typed: int() would also read other scripts' digits ('٣' as 3) and underscores
    if not _CONST_VALUE.fullmatch(value):
        raise ConstantError(
            [Diagnostic(Severity.ERROR, None, f"--const {item!r}: {value!r} is not an integer "
                                              "(ASCII digits, e.g. 8, -1 or 0x10)")]
        )
    return int(value, 0) if _HEX_OCT_BIN.match(value) else int(value, 10)

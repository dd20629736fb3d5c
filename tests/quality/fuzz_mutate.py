"""Shared pieces of the issue-19 fuzzers: the `Case` record, where the seeds live, the check that
an error is located, and the mutators of values, JSON documents, bytes and gzip streams that
every input kind uses (tests/quality/fuzzcases.py puts the kinds together)."""

from __future__ import annotations

import copy
import gzip
import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT.parent / "shared" / "spec-examples"
MODELS = ROOT / "spec" / "models"
SIM = ROOT / "traces" / "corpus" / "sim"

@dataclass
class Case:
    """Files (name -> bytes, written into a fresh directory) and the argv run there."""

    kind: str
    mutation: str
    files: dict[str, bytes]
    argv: list[str]
    input: str  # the file the errors should name
    outputs: list[str] = field(default_factory=list)  # files the command promises to write on success


# ---------------------------------------------------------------------------------------------
# Located errors


_STRUCT = r"(?:top-level \w+|byte \d+|states\[\d+\]|traceEvents\[\d+\]|record \d+|parts\[\d+\]|recording|table \S+|#meta|\"?loop|\"?vars)"


def is_located(stderr: str, input_name: str) -> bool:
    """Does the first error line name `input_name` with a line (and column), or a table/row,
    record or JSON position? Lines of other files (the model of a trace) count too, when they
    carry a line and column."""
    first = next((ln for ln in stderr.splitlines() if ln.strip()), "")
    first = first.removeprefix("gpcheck: error: ")
    name = re.escape(input_name)
    if re.match(rf"^(?:\S*/)?{name}:\d+(?::\d+)?[: ]", first):
        return True
    if re.match(rf"^(?:\S*/)?{name}: {_STRUCT}", first):
        return True
    return bool(re.match(r"^\S+\.gpspec:\d+:\d+: ", first))


# ---------------------------------------------------------------------------------------------
# Generic value mutators


def huge_numbers(rng: random.Random) -> Any:
    return rng.choice([10**9, 10**12, 2**63, 2**64 + 1, 10**30, -(10**18), 10**400, 1e308, -1e308, 1.5e300,
                       float("inf"), float("nan"), -1, 0, 4294967291, 2**31])


def _random_value(rng: random.Random) -> Any:
    choice = rng.randrange(12)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return huge_numbers(rng)
    if choice == 3:
        return rng.choice(["", "x", "\u00e9\u4e2d", "1" * 5000, "-5", "nan", "1e999", "Agent 2", "\x00"])
    if choice == 4:
        return []
    if choice == 5:
        return {}
    if choice == 6:
        return [rng.randrange(-3, 5) for _ in range(rng.randrange(4))]
    if choice == 7:
        return {"#bigint": rng.choice(["1", "-3", "9" * 5000, "x", "1e3", ""])}
    if choice == 8:
        return {"#map": rng.choice([[], [[1]], [[{"#bigint": "0"}, 1]], "x", [["a", "b", "c"]]])}
    if choice == 9:
        return {"#tup": rng.choice([[], [1, 2], "x"])}
    if choice == 10:
        return "__DEEP__"
    return rng.randrange(-2, 3)


def _paths(obj: Any, limit: int = 4000) -> list[tuple[Any, Any]]:
    """(container, key) of every value inside obj (breadth first, at most `limit`)."""
    out: list[tuple[Any, Any]] = []
    todo = [obj]
    while todo and len(out) < limit:
        x = todo.pop(0)
        if isinstance(x, dict):
            for k in list(x):
                out.append((x, k))
                todo.append(x[k])
        elif isinstance(x, list):
            for i in range(len(x)):
                out.append((x, i))
                todo.append(x[i])
    return out


def mutate_obj(rng: random.Random, obj: Any, n: int = 1) -> tuple[Any, str]:
    """A copy of a JSON value with `n` structured mutations (field delete, type change, huge
    value, duplication, deep nesting marker); returns it and a description."""
    obj = copy.deepcopy(obj)
    what = []
    for _ in range(n):
        paths = _paths(obj)
        if not paths:
            return _random_value(rng), "replace-root"
        c, k = rng.choice(paths)
        op = rng.randrange(6)
        if op == 0 and isinstance(c, dict):
            del c[k]
            what.append(f"del {k}")
        elif op == 1 and isinstance(c, list):
            c.insert(k, copy.deepcopy(c[k]))
            what.append("dup")
        elif op == 2:
            c[k] = [c[k]]
            what.append("wrap")
        elif op == 3 and isinstance(c, dict):
            c[rng.choice(["zz", "args", "meta", "state", "t", "#meta", "ph", "kind", "ts", "dur"])] = _random_value(rng)
            what.append("add-key")
        else:
            c[k] = _random_value(rng)
            what.append(f"set {k}={type(c[k]).__name__}")
    return obj, ",".join(what)


def dump_json(rng: random.Random, obj: Any, indent: int | None = None) -> bytes:
    """json.dumps with NaN/Infinity allowed and the deep-nesting marker expanded."""
    text = json.dumps(obj, indent=indent, allow_nan=True)
    while '"__DEEP__"' in text:
        d = rng.choice([50, 900, 1100, 5000, 100_000])
        o, c = rng.choice([("[", "]"), ('{"a":', "}")])
        text = text.replace('"__DEEP__"', o * d + "1" + c * d, 1)
    return text.encode()


def mutate_bytes(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """Byte-level damage: flips, bad UTF-8, NUL, truncation, line-ending changes."""
    op = rng.randrange(7)
    if not data:
        return b"\xff", "bad-utf8"
    pos = rng.randrange(len(data))
    if op == 0:
        b = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b), "flip"
    if op == 1:
        return data[:pos] + rng.choice([b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\x00"]) + data[pos:], "bad-utf8"
    if op == 2:
        return data[:pos], "truncate"
    if op == 3:
        return data.replace(b"\n", b"\r\n"), "crlf"
    if op == 4:
        return data.replace(b"\n", b"\r"), "cr"
    if op == 5:
        return data[:pos] + data[pos:pos + rng.randrange(1, 200)] * rng.randrange(2, 50) + data[pos:], "repeat"
    return b"", "empty"


def gzip_damage(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """Compressed bytes, corrupted in the deflate stream, truncated, or with a bad trailer."""
    z = gzip.compress(data, mtime=0)
    op = rng.randrange(4)
    if op == 0:
        b = bytearray(z)
        i = rng.randrange(10, max(11, len(b) - 8))
        b[i] ^= 0xFF
        return bytes(b), "gzip-flip"
    if op == 1:
        return z[: rng.randrange(10, len(z))], "gzip-truncate"
    if op == 2:
        return z[:-8] + b"\0" * 8, "gzip-bad-crc"
    return z + b"garbage", "gzip-trailing"

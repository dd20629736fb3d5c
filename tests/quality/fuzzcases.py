"""Hostile inputs for every parser and importer: seeds, structured mutators and the check that
an error is located (issue 19).

A `Case` is some files and a `gpcheck` command line over them. The generators here are plain
functions of a `random.Random`, so the long run (tests/quality/fuzz_run.py, seeded) and the CI
slice (tests/quality/test_fuzz_slice.py, hypothesis `st.randoms()`) share them; specs also get a
hypothesis strategy that derives random sentences from the gpspec grammar itself
(`grammar_specs`).

Input kinds: `spec` (gpspec text), `trace` (gpcheck JSON Lines, plain and gzip), `itf`, and one
kind per import format (`nsys`, `rocpd`, `kineto`, `chrome`, `rocprof`, `cupti`, `record`).
Mutations: by token and byte, truncation, deep nesting, huge numbers and sizes, CR/CRLF line
endings (specs); by field, type, nesting, line and compression (traces and JSON inputs); by
cell, column and row (CSV); by value type, table and page corruption (SQLite).
"""

from __future__ import annotations

import copy
import gzip
import io
import json
import random
import re
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT.parent / "shared" / "spec-examples"
MODELS = ROOT / "spec" / "models"
SIM = ROOT / "traces" / "corpus" / "sim"

KINDS = ("spec", "trace", "itf", "nsys", "rocpd", "kineto", "chrome", "rocprof", "cupti", "record")


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


# ---------------------------------------------------------------------------------------------
# Specs


_KEYWORDS = ["model", "const", "enum", "struct", "var", "action", "internal", "fair", "invariant", "transition",
             "liveness", "terminal", "allow", "deadlock", "constraint", "expect", "require", "if", "else", "then",
             "for", "in", "let", "all", "any", "count", "sum", "min", "max", "not", "and", "or", "implies",
             "eventually", "always", "leads_to", "bool", "true", "false"]
_PUNCT = ["(", ")", "{", "}", "[", "]", ",", ":", ";", "=", "==", "..", "->", "'", ".", "+", "-", "*", "/", "%",
          "<", "<=", "@", "#", '"', "\t", "\n"]
_TOKEN = re.compile(r"\s+|#[^\n]*|\w+|\.\.|->|[=!<>]=|\S")


def spec_seeds() -> dict[str, str]:
    out = {}
    for d in (EXAMPLES, MODELS):
        if d.is_dir():
            for p in sorted(d.glob("*.gpspec")):
                out[p.name] = p.read_text()
    return out


def deep_spec(rng: random.Random) -> tuple[str, str]:
    """A spec whose nesting (parentheses, operators, blocks, types, initialisers) is deep."""
    d = rng.choice([40, 60, 120, 500, 1200, 5000, 50_000])
    kind = rng.randrange(8)
    head = "model deep\nvar x: 0..3 = 0\nvar b: bool = false\n"
    if kind == 0:
        return head + f"invariant i: {'(' * d}x{')' * d} >= 0\n", f"parens{d}"
    if kind == 1:
        return head + f"invariant i: {'not ' * d}b\n", f"not{d}"
    if kind == 2:
        return head + f"invariant i: {' + '.join(['x'] * d)} >= 0\n", f"plus{d}"
    if kind == 3:
        return head + f"action a {{ {'if b { ' * d} x = 1 {'}' * d} }}\n", f"if{d}"
    if kind == 4:
        return head + f"var a: {'[0..1] -> ' * d}bool = false\n", f"array-type{d}"
    if kind == 5:
        return head + f"invariant i: {'-' * d}x <= 3\n", f"neg{d}"
    if kind == 6:
        return head + f"invariant i: {'if b then ' * d}true{' else false' * d}\n", f"ite{d}"
    return head + f"invariant i: {' and '.join(['b'] * d)}\n", f"and{d}"


def huge_spec(rng: random.Random) -> tuple[str, str]:
    """A spec with a constant, range or array too large to enumerate."""
    big = rng.choice(["10000000", "1000000000", "2147483648", "99999999999999999999", "9" * 5000,
                      "10*10*10*10*10*10*10*10*10*10*10*10", "N*N*N*N*N*N*N*N*N*N*N*N*N*N*N*N*N*N*N*N*N*N"])
    kind = rng.randrange(7)
    head = f"model huge\nconst N = {rng.choice(['8', '100000', '1000000000'])}\nconst M = {big}\n"
    if kind == 0:
        return head + "var x: 0..M = 0\naction a { x = x + 1 }\nallow deadlock\n", "range-var"
    if kind == 1:
        return head + "var a: [0..M] -> bool = false\naction t { a[0] = true }\n", "array"
    if kind == 2:
        return head + "var x: 0..M = any\naction t { require x > 0 }\nallow deadlock\n", "any-init"
    if kind == 3:
        return head + "var c: 0..3 = 0\naction t(p: 0..M) { c = 1 }\n", "param"
    if kind == 4:
        return head + "var c: 0..3 = 0\ninvariant i: all k in 0..M: k >= 0\n", "fold"
    if kind == 5:
        return head + "var c: 0..3 = 0\naction t { for k in 0..M { c = 1 } }\n", "for"
    return head + "var a: [0..N] -> [0..N] -> [0..N] -> 0..3 = 0\naction t { a[0][0][0] = 1 }\n", "array3"


def mutate_spec_tokens(rng: random.Random, text: str) -> tuple[str, str]:
    toks = _TOKEN.findall(text)
    what = []
    for _ in range(rng.randrange(1, 4)):
        if not toks:
            break
        i = rng.randrange(len(toks))
        op = rng.randrange(5)
        if op == 0:
            del toks[i]
            what.append("del")
        elif op == 1:
            toks.insert(i, toks[i])
            what.append("dup")
        elif op == 2 and i + 1 < len(toks):
            toks[i], toks[i + 1] = toks[i + 1], toks[i]
            what.append("swap")
        elif op == 3:
            toks.insert(i, rng.choice(_KEYWORDS + _PUNCT))
            what.append("insert")
        else:
            ints = [j for j, t in enumerate(toks) if t.isdigit()]
            if ints:
                toks[rng.choice(ints)] = rng.choice(["1000000000", "99999999999999999999", "9" * 5000, "0", "4096"])
                what.append("int")
    return "".join(toks), "tokens:" + ",".join(what)


def spec_case(rng: random.Random, seeds: dict[str, str], fast: bool = False) -> Case:
    """One mutated spec, checked (`check`) or verified with small limits (`verify`; never
    when `fast`)."""
    name, text = rng.choice(sorted(seeds.items()))
    r = rng.random()
    if r < 0.35:
        text, what = mutate_spec_tokens(rng, text)
    elif r < 0.5:
        data, what = mutate_bytes(rng, text.encode())
        return _spec_case(rng, data, "bytes:" + what, fast)
    elif r < 0.65:
        text, what = deep_spec(rng)
    elif r < 0.8:
        text, what = huge_spec(rng)
    else:
        text, what = mutate_spec_tokens(rng, text)
        text = text.replace("\n", rng.choice(["\r\n", "\r"]))
        what = "eol+" + what
    return _spec_case(rng, text.encode(), what, fast)


def _spec_case(rng: random.Random, data: bytes, what: str, fast: bool = False) -> Case:
    argv = ["check", "f.gpspec"] if fast or rng.random() < 0.6 else \
        ["verify", "f.gpspec", "--max-states", "3000", "--timeout", "5"]
    return Case("spec", what, {"f.gpspec": data}, argv, "f.gpspec")


# -- the grammar as a hypothesis strategy

_VOCAB = {"NAME": ["x", "y", "b", "N", "A", "B", "S", "a", "k", "p", "go", "int"], "INT": ["0", "1", "2", "3", "7"],
          "STRING": ['"doc"']}


def _grammar() -> tuple[dict[str, list[list[str]]], dict[str, str]]:
    """The gpspec grammar's rules (name -> alternatives) and literal terminals."""
    from lark import Lark

    g = Lark.open(str(ROOT / "spec" / "grammar.lark"), parser="lalr")
    rules: dict[str, list[list[str]]] = {}
    for r in g.rules:
        rules.setdefault(r.origin.name, []).append([s.name for s in r.expansion])
    lits = {t.name: t.pattern.value for t in g.terminals if t.pattern.type == "str"}
    return rules, lits


def grammar_specs(max_depth: int = 6):  # type: ignore[no-untyped-def]
    """Hypothesis strategy: gpspec text derived at random from the grammar's own rules
    (syntactically valid; names from a small vocabulary so that some also type-check), joined
    by random whitespace: spaces, LF, CRLF, CR or comments."""
    from hypothesis import strategies as st

    rules, lits = _grammar()

    @st.composite
    def derive(draw):  # type: ignore[no-untyped-def]
        out: list[str] = []
        stack: list[tuple[str, int]] = [("start", 0)]
        while stack:
            sym, depth = stack.pop()
            if sym in rules:
                alts = rules[sym]
                if depth >= max_depth:  # prefer the shortest alternative to terminate
                    alts = sorted(alts, key=len)[:1]
                alt = draw(st.sampled_from(alts))
                stack.extend((s, depth + 1) for s in reversed(alt))
            elif sym in lits:
                out.append(lits[sym])
            else:
                out.append(draw(st.sampled_from(_VOCAB.get(sym, ["x"]))))
        seps = draw(st.lists(st.sampled_from([" ", "\n", "\r\n", "\r", " # c\n", "\t"]), min_size=1, max_size=3))
        return "".join(t + seps[i % len(seps)] for i, t in enumerate(out))

    return derive()


# ---------------------------------------------------------------------------------------------
# gpcheck traces


def trace_seeds() -> dict[str, bytes]:
    """Corpus traces whose header names a bundled model (replayable without --model)."""
    out = {}
    for p in sorted(SIM.glob("*.jsonl*")):
        data = gzip.decompress(p.read_bytes()) if p.name.endswith(".gz") else p.read_bytes()
        head = json.loads(data.split(b"\n", 1)[0])
        if (MODELS / f"{head.get('model')}.gpspec").exists() and len(data) < 200_000:
            out[p.name.removesuffix(".gz")] = data
    return out


def trace_case(rng: random.Random, seeds: dict[str, bytes]) -> Case:
    name, data = rng.choice(sorted(seeds.items()))
    lines = data.split(b"\n")
    r = rng.random()
    if r < 0.2:  # header fields
        head = json.loads(lines[0])
        if rng.random() < 0.5 and head.get("constants"):
            k = rng.choice(sorted(head["constants"]))
            head["constants"][k] = huge_numbers(rng)
            what = f"header-const {k}"
        else:
            head, what = mutate_obj(rng, head)
            what = "header:" + what
        lines[0] = dump_json(rng, head)
    elif r < 0.55 and len(lines) > 2:  # event fields
        i = rng.randrange(1, len(lines) - 1)
        try:
            ev = json.loads(lines[i])
        except ValueError:
            ev = {}
        ev, what = mutate_obj(rng, ev, rng.randrange(1, 3))
        lines[i] = dump_json(rng, ev)
        what = f"event:{what}"
    elif r < 0.65 and len(lines) > 2:
        i = rng.randrange(1, len(lines) - 1)
        op = rng.randrange(3)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[i])
        else:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        what = ["del-line", "dup-line", "cut-line"][op]
    elif r < 0.7 and len(lines) > 2:
        i = rng.randrange(1, len(lines) - 1)
        d = rng.choice([100, 1500, 100_000])
        lines[i] = b'{"action": "x", "state": {"a": ' + b"[" * d + b"1" + b"]" * d + b"}}"
        what = f"deep-state{d}"
    else:
        joined, what = mutate_bytes(rng, b"\n".join(lines))
        lines = joined.split(b"\n")
    body = b"\n".join(lines)
    gz = rng.random() < 0.4
    fname = "t.jsonl.gz" if gz else "t.jsonl"
    if gz:
        if rng.random() < 0.5:
            body, w2 = gzip_damage(rng, body)
            what += "+" + w2
        else:
            body = gzip.compress(body, mtime=0)
    cmd = rng.randrange(4)
    if cmd == 0:
        argv, outs = ["replay", fname], []
    elif cmd == 1:
        argv, outs = ["export", fname, "--perfetto", "o.json"], ["o.json"]
    elif cmd == 2:
        argv, outs = ["replay", fname, "--itf", "o.itf.json", "--perfetto", "o.json"], ["o.json"]
    else:
        argv, outs = ["export", fname, "--itf", "o.itf.json"], []
    return Case("trace", what, {fname: body}, argv, fname, outs)


# ---------------------------------------------------------------------------------------------
# ITF


def itf_seeds() -> dict[str, tuple[bytes, str]]:
    """ITF files of counterexamples of the example specs (name -> (bytes, spec file))."""
    from checker import verify
    from traces.itf import to_itf

    out = {}
    for f, consts in (("rewind.gpspec", {"N": 3}), ("starve.gpspec", {})):
        p = EXAMPLES / f
        if not p.exists():
            continue
        rep = verify(str(p), consts=consts, max_states=20000)
        for r in rep.results:
            if r.counterexample is not None:
                from spec import load_spec

                obj = to_itf(load_spec(str(p), consts), r.counterexample.steps, r.counterexample.loop)
                out[f"{f}-{r.property}"] = (json.dumps(obj).encode(), str(p))
                break
    return out


def itf_case(rng: random.Random, seeds: dict[str, tuple[bytes, str]]) -> Case:
    name, (data, spec) = rng.choice(sorted(seeds.items()))
    if rng.random() < 0.75:
        obj, what = mutate_obj(rng, json.loads(data), rng.randrange(1, 4))
        body = dump_json(rng, obj)
    else:
        body, what = mutate_bytes(rng, data)
    argv = ["replay", "f.itf.json", "--model", spec] if rng.random() < 0.6 else \
        ["export", "f.itf.json", "--model", spec, "--perfetto", "o.json"]
    return Case("itf", what, {"f.itf.json": body}, argv, "f.itf.json")


# ---------------------------------------------------------------------------------------------
# Raw GPU traces for `import`


def kineto_doc() -> dict[str, Any]:
    base = 1_700_000_000_000_000_000
    return {
        "schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}], "baseTimeNanoseconds": base,
        "traceEvents": [
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 99, "tid": 1, "ts": 10.0,
             "dur": 2.5, "args": {"correlation": 7}},
            {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 13, "ts": 20.123, "dur": 100.5,
             "args": {"queued": 0, "device": 0, "context": 1, "stream": 13, "correlation": 7, "grid": [4, 2, 1],
                      "block": [128, 1, 1]}},
            {"ph": "X", "cat": "kernel", "name": "relu", "pid": 0, "tid": 14, "ts": 30.0, "dur": 5.0,
             "args": {"queued": 0, "device": 0, "context": 1, "stream": 14, "correlation": 8}},
            {"ph": "M", "name": "thread_name", "pid": 0, "tid": 13, "args": {"name": "stream 13 "}},
        ],
    }


def chrome_doc() -> list[Any]:
    return [
        {"ph": "B", "name": "k1", "cat": "kernel", "pid": 1, "tid": 2, "ts": 1.0, "args": {"correlation": 3}},
        {"ph": "E", "pid": 1, "tid": 2, "ts": 4.5},
        {"ph": "X", "name": "k2", "cat": "kernel", "pid": 1, "tid": 3, "ts": 2.0, "dur": 1.0,
         "args": {"priority": -2, "grid": [2, 1, 1]}},
        {"ph": "s", "id": 3, "pid": 1, "tid": 1, "ts": 0.5},
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "gpu"}},
    ]


def cupti_doc() -> list[Any]:
    return [
        {"kind": "stream", "stream_id": 13, "priority": 0, "context_id": 1},
        {"kind": "stream", "stream_id": 14, "priority": 4294967291, "context_id": 1},
        {"kind": "kernel", "name": "spin", "start": 1000, "end": 9000, "queued": 400, "stream_id": 13,
         "context_id": 1, "device_id": 0, "correlation_id": 17, "grid": [528, 1, 1], "priority": "n/a"},
        {"kind": "kernel", "name": "spin", "start": 5000, "end": 6000, "stream_id": 14, "context_id": 1,
         "device_id": 0, "correlation_id": 18, "grid_x": 264, "grid_y": 1, "grid_z": 1},
        {"kind": "driver", "name": "cuLaunchKernel", "start": 300, "correlation_id": 17},
    ]


def record_doc() -> dict[str, Any]:
    cols = ["launch", "block", "t_entry", "t_exit", "sm_entry", "sm_exit", "status", "max_gap_ns", "sum_gap_ns",
            "n_gaps"]
    return {"gpcheck_record": 1, "workload": "priority", "variant": "v", "device": {"pid": 7, "name": "H200"},
            "clock": {"base_ns": 1000}, "params": {}, "streams": [{"name": "low", "cuda_priority": 0},
                                                                   {"name": "high", "cuda_priority": -5}],
            "launches": [{"seq": 0, "kernel": "low:0", "kidx": 0, "stream": "low", "grid": 2, "t_launch": 5},
                         {"seq": 1, "kernel": "high:0", "kidx": 0, "stream": "high", "grid": 1, "t_launch": 8}],
            "blocks": {"columns": cols, "rows": [[0, 0, 10, 50, 1, 1, 0, 3, 3, 1], [0, 1, 12, 60, 2, 3, 1, 0, 0, 0],
                                                 [1, 0, 20, 30, 4, 4, 0, 0, 0, 0]]},
            "host_events": [{"t": 15, "action": "preempt", "meta": {"x": 1}}],
            "gaps": {"columns": ["launch", "block", "t", "length_ns"], "rows": [[0, 0, 20, 5]]},
            "counters": {"a": 1}}


ROCPROF_HEADER = ["Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id", "Kernel_Name",
                  "Correlation_Id", "Start_Timestamp", "End_Timestamp", "Workgroup_Size_X", "Workgroup_Size_Y",
                  "Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"]


def rocprof_rows(n: int = 4) -> list[list[str]]:
    return [["KERNEL_DISPATCH", "Agent 2", str(1 + i % 2), "0", "77", str(i + 1), f"k{i}", str(i + 1),
             str(1000 * i + 10), str(1000 * i + 500), "256", "1", "1", "1000", "1", "1"] for i in range(n)]


def csv_bytes(header: list[str], rows: list[list[str]]) -> bytes:
    import csv

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue().encode()


def rocprof_case_bytes(rng: random.Random) -> tuple[bytes, str]:
    header = list(ROCPROF_HEADER)
    rows = rocprof_rows(rng.randrange(1, 8))
    op = rng.randrange(6)
    if op == 0 and rows:
        r = rng.choice(rows)
        r[rng.randrange(len(r))] = rng.choice(["", "nan", "inf", "-inf", "1e400", "9" * 5000, "x", "-1", "1.5",
                                               "Agent", "\x00", '"', "1e308"])
        what = "cell"
    elif op == 1:
        del header[rng.randrange(len(header))]
        what = "drop-column"
    elif op == 2 and rows:
        r = rng.choice(rows)
        del r[rng.randrange(len(r)):]
        what = "short-row"
    elif op == 3:
        data = csv_bytes(header, rows) + b'k,"unterminated\n' + b"x" * rng.choice([10, 200_000])
        return data, "unterminated-quote"
    elif op == 4:
        rng.shuffle(header)
        what = "shuffle-header"
    else:
        data, w = mutate_bytes(rng, csv_bytes(header, rows))
        return data, "bytes:" + w
    return csv_bytes(header, rows), what


def make_nsys(path: str, rng: random.Random) -> str:
    """A small nsys export whose kernel rows carry randomly typed values."""
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", [(1, "gemm"), (3, "cudaLaunchKernel")])
    cols = ["start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "shortName",
            "gridX", "gridY", "gridZ"]
    if rng.random() < 0.2:
        cols.remove(rng.choice(cols))
    con.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL ({', '.join(c + ' INTEGER' for c in cols)})")
    pid = (4242 << 24) | 7
    for i in range(rng.randrange(1, 5)):
        full = {"start": 1000 * i, "end": 1000 * i + 500, "deviceId": 0, "contextId": 1, "streamId": 13 + i % 2,
                "correlationId": 10 + i, "globalPid": pid, "shortName": 1, "gridX": 2, "gridY": 1, "gridZ": 1}
        if rng.random() < 0.5:
            full[rng.choice(cols)] = rng.choice([None, "x", 1.5, 2**63 - 1, -(2**63), b"\x00\xff", 1e300, "", "12"])
        con.execute(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({', '.join('?' * len(cols))})",
                    [full[c] for c in cols])
    con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, globalTid INTEGER, correlationId INTEGER, "
                "nameId INTEGER)")
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?)",
                (rng.choice([500, None, "x", 1.5]), pid + 1, rng.choice([10, "y", None]), rng.choice([3, "z", 99])))
    con.execute("CREATE TABLE TARGET_INFO_CUDA_STREAM (streamId INTEGER, processId INTEGER, contextId INTEGER, "
                "priority INTEGER)")
    con.execute("INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (?,?,?,?)",
                (13, 4242, 1, rng.choice([0, 4294967291, "x", None, 2**62, -(2**62)])))
    if rng.random() < 0.5:
        con.execute("CREATE TABLE GPU_CONTEXT_SWITCH_EVENTS (tag INTEGER, contextId INTEGER, timestamp INTEGER, "
                    "globalPid INTEGER)")
        con.execute("INSERT INTO GPU_CONTEXT_SWITCH_EVENTS VALUES (?,?,?,?)",
                    (rng.choice([1, "t", None]), 1, rng.choice([2000, None, "q"]), pid))
        con.execute("CREATE TABLE ENUM_GPU_CTX_SWITCH (id INTEGER, name TEXT)")
        con.execute("INSERT INTO ENUM_GPU_CTX_SWITCH VALUES (?, ?)", (rng.choice([1, "one", None]), "START"))
    con.commit()
    con.close()
    return path


def make_rocpd(path: str, rng: random.Random) -> str:
    u = "_0000"
    con = sqlite3.connect(path)
    con.execute(f"CREATE TABLE rocpd_kernel_dispatch{u} (id INTEGER PRIMARY KEY, pid INTEGER, agent_id INTEGER, "
                "kernel_id INTEGER, dispatch_id INTEGER, queue_id INTEGER, stream_id INTEGER, start BIGINT, end BIGINT, "
                "workgroup_size_x INTEGER, grid_size_x INTEGER, event_id INTEGER)")
    for i in range(rng.randrange(1, 4)):
        row = [i + 1, 1, 1, 1, i + 1, 1, 0, 1000 * (i + 1), 1000 * (i + 1) + 500, 64, 640, 1]
        if rng.random() < 0.6:
            row[rng.randrange(1, len(row))] = rng.choice([None, "x", 1.5, 2**63 - 1, b"\xff", 1e300, "7"])
        con.execute(f"INSERT INTO rocpd_kernel_dispatch{u} VALUES ({','.join('?' * 12)})", row)
    con.execute(f"CREATE TABLE rocpd_info_kernel_symbol{u} (id INTEGER PRIMARY KEY, kernel_name TEXT, "
                "display_name TEXT)")
    con.execute(f"INSERT INTO rocpd_info_kernel_symbol{u} VALUES (1, 'k.kd', ?)", (rng.choice(["k", None, 5]),))
    con.execute(f"CREATE TABLE rocpd_info_agent{u} (id INTEGER PRIMARY KEY, absolute_index INTEGER, type TEXT)")
    con.execute(f"INSERT INTO rocpd_info_agent{u} VALUES (1, ?, 'GPU')", (rng.choice([2, None, "a", 1.5]),))
    con.execute(f"CREATE TABLE rocpd_info_process{u} (id INTEGER PRIMARY KEY, pid INTEGER)")
    con.execute(f"INSERT INTO rocpd_info_process{u} VALUES (1, ?)", (rng.choice([31337, "p", None]),))
    con.execute(f"CREATE TABLE rocpd_event{u} (id INTEGER PRIMARY KEY, correlation_id INTEGER)")
    con.execute(f"INSERT INTO rocpd_event{u} VALUES (1, ?)", (rng.choice([70, "c", 1.5, None, 2**63 - 1]),))
    con.execute(f"CREATE TABLE rocpd_string{u} (id INTEGER PRIMARY KEY, string TEXT)")
    con.execute(f"INSERT INTO rocpd_string{u} VALUES (1, 'hipLaunchKernel')")
    con.execute(f"CREATE TABLE rocpd_region{u} (id INTEGER PRIMARY KEY, start BIGINT, name_id INTEGER, "
                "event_id INTEGER)")
    con.execute(f"INSERT INTO rocpd_region{u} VALUES (1, ?, 1, 1)", (rng.choice([900, "s", None, 1e300]),))
    con.commit()
    con.close()
    return path


def _sqlite_bytes(rng: random.Random, make: Callable[[str, random.Random], str]) -> tuple[bytes, str]:
    with tempfile.TemporaryDirectory() as d:
        data = Path(make(str(Path(d) / "x.sqlite"), rng)).read_bytes()
    r = rng.random()
    if r < 0.6:
        return data, "values"
    if r < 0.8:
        b = bytearray(data)
        for _ in range(rng.randrange(1, 20)):
            b[rng.randrange(100, len(b))] = rng.randrange(256)
        return bytes(b), "page-flip"
    return data[: rng.randrange(16, len(data))], "truncate"


_JSON_DOCS: dict[str, Callable[[], Any]] = {"kineto": kineto_doc, "chrome": chrome_doc, "cupti": cupti_doc,
                                            "record": record_doc}


def import_case(rng: random.Random, fmt: str) -> Case:
    if fmt in _JSON_DOCS:
        doc = _JSON_DOCS[fmt]()
        r = rng.random()
        if r < 0.7:
            doc, what = mutate_obj(rng, doc, rng.randrange(1, 4))
            data = dump_json(rng, doc)
        elif r < 0.8:
            d = rng.choice([1000, 5000, 100_000])
            data, what = b"[" * d + b"]" * d, f"deep{d}"
        else:
            data, what = mutate_bytes(rng, dump_json(rng, doc, indent=1))
        name = "in.json"
    elif fmt == "rocprof":
        data, what = rocprof_case_bytes(rng)
        name = "in.csv"
    else:
        data, what = _sqlite_bytes(rng, make_nsys if fmt == "nsys" else make_rocpd)
        name = "in.sqlite"
    if rng.random() < 0.2:
        data, w2 = gzip_damage(rng, data) if rng.random() < 0.5 else (gzip.compress(data, mtime=0), "gzip")
        what += "+" + w2
    out = "o.jsonl.gz" if rng.random() < 0.3 else "o.jsonl"
    argv = ["import", name, "--out", out] + (["--format", fmt] if rng.random() < 0.5 else [])
    return Case(fmt, what, {name: data}, argv, name, [out])


# ---------------------------------------------------------------------------------------------
# All kinds


class Generator:
    """Seeds loaded once; `case(kind, rng)` one hostile input of that kind."""

    def __init__(self) -> None:
        self.specs = spec_seeds()
        self.traces = trace_seeds()
        self._itf: dict[str, tuple[bytes, str]] | None = None

    @property
    def itfs(self) -> dict[str, tuple[bytes, str]]:
        if self._itf is None:
            self._itf = itf_seeds()
        return self._itf

    def case(self, kind: str, rng: random.Random, fast: bool = False) -> Case:
        """One input of `kind`; `fast` keeps to commands that take milliseconds (the CI slice)."""
        if kind == "spec":
            return spec_case(rng, self.specs, fast)
        if kind == "trace":
            return trace_case(rng, self.traces)
        if kind == "itf":
            return itf_case(rng, self.itfs)
        return import_case(rng, kind)

    def cases(self, kind: str, n: int, seed: int) -> Iterator[Case]:
        rng = random.Random(f"{kind}-{seed}")
        for _ in range(n):
            yield self.case(kind, rng)

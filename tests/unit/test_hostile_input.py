"""Regression tests for every failure class of issue 19 (hostile input): each input once made
`gpcheck` print a traceback, an unlocated error, blow up in time or memory, or report success
without its output. Now each is a located error with exit code 2 (or a normal run)."""

from __future__ import annotations

import gzip
import json
import os
import re
import sqlite3
import time
from pathlib import Path

import pytest

from gpcheck.checker.cli.command import main
from gpcheck.spec import SpecError, load_source
from gpcheck.spec.limits import MAX_DOMAIN, MAX_NESTING, MAX_SLOTS

HEAD = "model m\nconst N = 3\nvar x: 0..3 = 0\nvar b: bool = false\n"


def spec_error(text: str) -> tuple[int, int, str]:
    """(line, column, message) of the first error of a spec, which must fail fast."""
    t = time.monotonic()
    with pytest.raises(SpecError) as e:
        load_source(text, "f.gpspec")
    assert time.monotonic() - t < 20
    d = e.value.first
    assert d.span is not None and d.span.file == "f.gpspec" and d.span.line >= 1 and d.span.column >= 1
    return d.span.line, d.span.column, d.message


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return rc, err


# ---------------------------------------------------------------------------------------------
# gpspec: deep nesting (lark VisitError, RecursionError)


@pytest.mark.parametrize("body", [
    "invariant i: " + "not " * 5000 + "b",
    "invariant i: " + " + ".join(["x"] * 5000) + " >= 0",
    "invariant i: " + " and ".join(["b"] * 3000),
    "invariant i: " + "if b then " * 2000 + "true" + " else false" * 2000,
    "invariant i: " + "-" * 3000 + "x <= 3",
    "action a { " + "if b { " * 500 + "x = 1 " + "} " * 500 + "}",
    "var a: " + "[0..1] -> " * 2000 + "bool = false",
])
def test_deep_nesting_is_refused_with_a_location(body):
    line, col, msg = spec_error(HEAD + body + "\n")
    assert line == 5 and "nested too deeply" in msg and str(MAX_NESTING) in msg


def test_nesting_within_the_limit_still_verifies(tmp_path, capsys):
    deep = " + ".join(["x"] * (MAX_NESTING - 20))
    p = tmp_path / "ok.gpspec"
    p.write_text(HEAD + "action a { x = (x + 1) % 4 }\ninvariant i: " + deep + " >= 0\n"
                 + "action c { " + "if b { " * 40 + "x = 1 " + "} " * 40 + "}\n")
    for engine in ("explicit", "bmc"):
        rc, _ = cli(["verify", str(p), "--engine", engine, "--depth", "3"], capsys)
        assert rc in (0, 3)


def test_a_spec_too_long_is_refused_before_parsing():
    line, col, msg = spec_error("model m\n" + "var b: bool = false\n" * 20000)
    assert (line, col) == (6555, 5) and "spec too long" in msg  # character 131073


def test_parentheses_alone_do_not_nest_the_tree():
    # 5,000: fifty times MAX_NESTING and five times Python's recursion limit (20,000 took 1.3 s of CPU)
    load_source(HEAD + "invariant i: " + "(" * 5000 + "x" + ")" * 5000 + " >= 0\n", "f.gpspec")


# ---------------------------------------------------------------------------------------------
# gpspec: huge numbers and sizes (ValueError, OverflowError, MemoryError, time blow-ups)


def test_huge_integer_literal():
    line, col, msg = spec_error("model m\nconst M = " + "9" * 5000 + "\n")
    assert (line, col) == (2, 11) and "integer literal too large" in msg and "5000 digits" in msg


def test_power_chain_overflows_at_its_operator():
    line, col, msg = spec_error("model m\nconst N = 1000000\nconst M = " + "*".join(["N"] * 20) + "\n")
    assert line == 3 and "constant expression too large" in msg


@pytest.mark.parametrize("decl,what", [
    ("var a: [0..1000000000] -> bool = false", "an array index"),
    ("action t(p: 0..1000000000) { x = 1 }", "a parameter"),
    ("invariant i: all k in 0..1000000000: k >= 0", "a binder"),
    ("action t { for k in 0..1000000000 { x = 1 } }", "a binder"),
])
def test_domains_are_bounded(decl, what):
    line, _, msg = spec_error(HEAD + decl + "\n")
    assert line == 5 and "domain too large" in msg and "1000000001 values" in msg and what in msg
    assert str(MAX_DOMAIN) in msg


@pytest.mark.parametrize("decl", [
    "invariant i: all j in 0..4000: all k in 0..4000: j + k >= 0",
    "action t { for j in 0..4000 { for k in 0..4000 { x = 1 } } }",
    "invariant i: all j in 0..4000: (count k in 0..4000: k > j) >= 0",
])
def test_nested_loops_and_folds_are_bounded(decl):
    line, _, msg = spec_error(HEAD + decl + "\n")
    assert line == 5 and "loops nested too wide" in msg and "16008001 iterations" in msg


def test_slots_are_bounded():
    line, _, msg = spec_error(HEAD + "var a: [0..1000] -> [0..1000] -> 0..3 = 0\n")
    assert line == 5 and "array too large" in msg and "1002001 slots" in msg and str(MAX_SLOTS) in msg


def test_initial_states_are_bounded():
    line, col, msg = spec_error(HEAD + "var y: 0..1000000000 = any\n")
    assert (line, col) == (5, 24) and "too many initial states" in msg


def test_action_instances_are_bounded():
    line, _, msg = spec_error(HEAD + "action t(p: 0..4000, q: 0..4000) { x = 1 }\n")
    assert line == 5 and "16008001 instances" in msg


def test_a_wide_range_is_fine_as_a_variable_type(tmp_path, capsys):
    p = tmp_path / "w.gpspec"
    p.write_text("model w\nvar x: 0..1000000000000 = 0\naction a { require x < 5\n x = x + 1 }\nallow deadlock\n")
    assert cli(["verify", str(p)], capsys)[0] == 0


def test_constant_override_too_large(tmp_path, capsys):
    p = tmp_path / "c.gpspec"
    p.write_text(HEAD)
    rc, err = cli(["check", str(p), "--const", "N=" + "9" * 30], capsys)
    assert rc == 2 and "2^62" in err


# ---------------------------------------------------------------------------------------------
# gpspec: line endings and encodings


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_positions_are_the_same_for_every_line_ending(eol, tmp_path, capsys):
    p = tmp_path / "e.gpspec"
    p.write_bytes(("model m\nvar x: 0..3 = 0\n# note\naction a {\n  x = x + @ 1\n}\n").replace("\n", eol).encode())
    rc, err = cli(["check", str(p)], capsys)
    assert rc == 2 and f"{p}:5:11: error: unexpected character '@'" in err
    assert "      x = x + @ 1\n              ^" in err


def test_non_utf8_spec_is_located(tmp_path, capsys):
    p = tmp_path / "u.gpspec"
    p.write_bytes(b"model m\nvar x: 0..3 = 0\n# caf\xe9\n")
    rc, err = cli(["check", str(p)], capsys)
    assert rc == 2 and f"{p}:3:6: error: not UTF-8 text" in err


# ---------------------------------------------------------------------------------------------
# gpcheck traces: corrupted gzip (zlib.error), header constants (MemoryError), deep states


def write_trace(path, lines: list[object], gz: bool = False) -> str:
    data = "\n".join(json.dumps(x) for x in lines).encode() + b"\n"
    if gz:
        data = gzip.compress(data, mtime=0)
    path.write_bytes(data)
    return str(path)


def counter_trace(n: int = 2000) -> list[object]:
    return [{"gpcheck_trace": 1, "model": None, "constants": {}}] + [{"action": "inc"} for _ in range(n)]


@pytest.fixture
def counter(tmp_path):
    p = tmp_path / "counter.gpspec"
    p.write_text("model counter\nconst N = 3000\nvar x: 0..N = 0\naction inc { require x < N\n x = x + 1 }\n"
                 "allow deadlock\n")
    return str(p)


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_corrupt_gzip_trace_is_located_and_writes_nothing(damage, tmp_path, counter, capsys):
    good = gzip.compress(b"\n".join(json.dumps(x).encode() for x in counter_trace()) + b"\n", mtime=0)
    bad = bytearray(good)
    if damage == "flip":
        bad[len(bad) // 2] ^= 0xFF
    else:
        del bad[len(bad) // 2:]
    p = tmp_path / "t.jsonl.gz"
    p.write_bytes(bytes(bad))
    commands = [["replay", str(p), "--model", counter],
                ["replay", str(p), "--model", counter, "--perfetto", str(tmp_path / "o.json"),
                 "--itf", str(tmp_path / "o.itf.json")],
                ["export", str(p), "--model", counter, "--perfetto", str(tmp_path / "o.json")],
                ["export", str(p), "--model", counter, "--itf", str(tmp_path / "o.itf.json")]]
    for argv in commands:
        rc, err = cli(argv, capsys)
        assert rc == 2 and re.search(rf"{re.escape(str(p))}:\d+: (cannot read trace|invalid JSON)", err), err
    assert sorted(os.listdir(tmp_path)) == ["counter.gpspec", "t.jsonl.gz"]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("gz", [False, True])
def test_trace_lines_do_not_depend_on_line_endings(eol, gz, tmp_path, counter, capsys):
    lines = [json.dumps(x).encode() for x in counter_trace(3)] + [b"", b'{"action": "inc", "t": "x"}']
    data = eol.join(lines) + eol
    p = tmp_path / ("t.jsonl.gz" if gz else "t.jsonl")
    p.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    rc, err = cli(["replay", str(p), "--model", counter], capsys)
    assert rc == 2 and f"{p}:6: \"t\" must be a number" in err, err


def test_huge_header_constant_is_refused_at_the_header(tmp_path, counter, capsys):
    p = write_trace(tmp_path / "t.jsonl", [{"gpcheck_trace": 1, "model": None, "constants": {"N": 10**9}},
                                           {"action": "inc"}])
    rc, err = cli(["replay", p, "--model", str(tmp_path / "arr.gpspec")], capsys)
    assert rc == 2  # no such model: a usage error
    (tmp_path / "arr.gpspec").write_text("model arr\nconst N = 3\nvar a: [0..N] -> bool = false\n"
                                         "action inc { a[0] = true }\nallow deadlock\n")
    rc, err = cli(["replay", p, "--model", str(tmp_path / "arr.gpspec")], capsys)
    assert rc == 2 and f"{p}:1: the trace's constants (N=1000000000)" in err and "domain too large" in err
    q = write_trace(tmp_path / "q.jsonl", [{"gpcheck_trace": 1, "constants": {"N": 2**63}}, {"action": "inc"}])
    rc, err = cli(["replay", q, "--model", counter], capsys)
    assert rc == 2 and f"{q}:1: constant N is too large" in err


def test_deeply_nested_state_is_located(tmp_path, counter, capsys):
    deep = {"action": "inc", "state": {"x": 1}}
    text = json.dumps(deep).replace('{"x": 1}', '{"x": ' + "[" * 5000 + "1" + "]" * 5000 + "}")
    p = tmp_path / "t.jsonl"
    p.write_text(json.dumps(counter_trace(0)[0]) + "\n" + text + "\n")
    rc, err = cli(["replay", str(p), "--model", counter], capsys)
    assert rc == 2 and f"{p}:2: invalid JSON" in err
    p.write_text(json.dumps(counter_trace(0)[0]) + "\n" + text.replace("5000", "x")[:0]
                 + json.dumps({"action": "inc", "state": {"x": [[[[[[1]]]]]]}}) + "\n")
    rc, err = cli(["replay", str(p), "--model", counter], capsys)
    assert rc == 2 and f"{p}:2:" in err


# ---------------------------------------------------------------------------------------------
# ITF: malformed #meta and values (TypeError)


def itf_file(tmp_path, states: list[dict], meta: object = None) -> str:
    obj: dict[str, object] = {"vars": ["x"], "states": states}
    if meta is not None:
        obj["#meta"] = meta
    p = tmp_path / "f.itf.json"
    p.write_text(json.dumps(obj))
    return str(p)


@pytest.mark.parametrize("state,needle", [
    ({"#meta": {"action": "inc", "args": {"k": {"#map": "x"}}}, "x": {"#bigint": "1"}}, "malformed #map"),
    ({"#meta": {"action": "inc", "args": {"k": {"#bigint": 5}}}, "x": {"#bigint": "1"}}, "malformed #bigint"),
    ({"#meta": {"action": "inc", "args": {"k": {"#tup": 3}}}, "x": {"#bigint": "1"}}, "malformed #tup"),
    ({"x": {"#bigint": "9" * 5000}}, "out of range"),
    ({"#meta": {"action": "inc", "args": {"k": [1, 2]}}, "x": {"#bigint": "1"}}, "an argument must be"),
    ({"#meta": {"action": "inc", "args": {"k": {"a": 1}}}, "x": {"#bigint": "1"}}, "an argument must be"),
    ({"#meta": {"action": "inc", "args": {"k": json.loads("[" * 500 + "]" * 500)}}, "x": {"#bigint": "1"}},
     "nested too deeply"),
])
def test_malformed_itf_values_are_located(state, needle, tmp_path, counter, capsys):
    p = itf_file(tmp_path, [{"x": {"#bigint": "0"}}, state], meta={"constants": "x"})
    rc, err = cli(["replay", p, "--model", counter], capsys)
    assert rc == 2 and f"{p}: states[1]" in err and needle in err, err


def test_itf_json_errors_have_line_and_column(tmp_path, counter, capsys):
    p = tmp_path / "f.itf.json"
    p.write_text('{"vars": ["x"],\n "states": [' + "[" * 3000 + "]" * 3000 + "]}")
    rc, err = cli(["replay", str(p), "--model", counter], capsys)
    assert rc == 2 and f"{p}:2:" in err and "nested too deeply" in err


# ---------------------------------------------------------------------------------------------
# import: deep JSON (RecursionError), types (TypeError, IndexError, AttributeError, ValueError,
# OverflowError), gzip, format detection


def import_(path, capsys, *extra: str) -> tuple[int, str]:
    out = os.path.join(os.path.dirname(path), "out.jsonl")
    rc, err = cli(["import", str(path), "--out", out, *extra], capsys)
    if rc != 0:
        assert not os.path.exists(out)
    return rc, err


@pytest.mark.parametrize("fmt", [None, "chrome", "kineto", "cupti", "record"])
def test_deeply_nested_json_import_is_located(fmt, tmp_path, capsys):
    p = tmp_path / "in.json"
    p.write_text('{"traceEvents":\n' + "[" * 100_000 + "]" * 100_000 + "}")
    rc, err = import_(p, capsys, *(["--format", fmt] if fmt else []))
    assert rc == 2 and f"{p}:2:" in err and "nested too deeply" in err


@pytest.mark.parametrize("fmt,doc,needle", [
    ("chrome", [{"ph": "X", "name": "k", "pid": [1], "tid": {"a": 1}, "ts": 1, "dur": 1},
                {"ph": "s", "id": [3], "ts": 1}], None),
    ("chrome", [{"ph": "X", "name": "k", "pid": 1, "tid": 1, "ts": 1e308, "dur": 1e308}], "traceEvents[0]"),
    ("chrome", [{"ph": "X", "name": "k", "pid": 1, "tid": 1, "ts": "nan", "dur": 1}], "traceEvents[0] field ts"),
    # a grid whose block count exceeds 64 bits is nonsense metadata, dropped (found by the seed-11 fuzz run:
    # the writer refused it naming the output instead of the input)
    ("kineto", {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 1, "ts": 1, "dur": 1,
                                 "args": {"stream": 1, "correlation": 1, "grid": [4, 2] * 40}}]}, None),
    ("cupti", [{"kind": "stream", "stream_id": 1, "priority": 0, "context_id": {"a": 1}},
               {"kind": "kernel", "start": 1, "end": 2, "stream_id": 1, "correlation_id": 1, "context_id": [1]}],
     None),
    ("cupti", [{"kind": "kernel", "start": 1, "end": 2 ** 64, "stream_id": 1, "correlation_id": 1}], "record 0"),
    ("record", {"gpcheck_record": 1, "clock": {"base_ns": 0}, "device": {}, "streams": [], "launches": [3],
                "blocks": {"columns": [], "rows": []}}, "blocks.columns lacks"),
    ("record", {"gpcheck_record": 1, "clock": {"base_ns": 0}, "device": {}, "streams": [],
                "launches": [3], "blocks": {"columns": ["launch", "t_entry", "t_exit", "sm_entry", "sm_exit",
                                                        "status", "max_gap_ns"], "rows": [[0] * 7]}},
     "recording.launches[0]: expected an object"),
    ("record", {"gpcheck_record": 1, "parts": [{"clock": []}]}, "parts[0]: field 'clock'"),
    ("record", {"gpcheck_record": 1, "clock": {"base_ns": 0}, "device": {}, "streams": [], "launches": [],
                "blocks": {"columns": ["launch", "t_entry", "t_exit", "sm_entry", "sm_exit", "status", "max_gap_ns"],
                           "rows": []},
                "host_events": [{"t": 1, "action": "preempt", "meta": {"a": json.loads("[" * 300 + "]" * 300)}}]},
     "recording.host_events[0]: metadata nested more than 64 levels deep"),
    ("record", {"gpcheck_record": 1, "clock": {"base_ns": 0}, "device": {"a": json.loads("[" * 300 + "]" * 300)},
                "streams": [], "launches": [], "blocks": {"columns": ["launch", "t_entry", "t_exit", "sm_entry",
                                                                      "sm_exit", "status", "max_gap_ns"], "rows": []}},
     "top-level device: nested more than 64 levels deep"),
])
def test_odd_json_import_values(fmt, doc, needle, tmp_path, capsys):
    p = tmp_path / "in.json"
    p.write_text(json.dumps(doc))
    rc, err = import_(p, capsys, "--format", fmt)
    if needle is None:
        assert rc == 0, err
    else:
        assert rc == 2 and f"{p}: " in err and needle in err, err


def test_nan_timestamps_are_read_and_refused_with_their_place(tmp_path, capsys):
    p = tmp_path / "in.json"
    p.write_text('[{"ph": "X", "name": "k", "pid": 1, "tid": 1, "ts": NaN, "dur": 1}]')
    rc, err = import_(p, capsys, "--format", "chrome")
    assert rc == 2 and "traceEvents[0] field ts: expected a time in microseconds" in err


def test_corrupt_gzip_json_import_names_the_line(tmp_path, capsys):
    doc = "[\n" + ",\n".join(json.dumps({"ph": "X", "name": "k", "pid": 1, "tid": 1, "ts": i, "dur": 1})
                             for i in range(5000)) + "\n]"
    z = bytearray(gzip.compress(doc.encode(), mtime=0))
    z[len(z) // 2] ^= 0xFF
    p = tmp_path / "in.json"
    p.write_bytes(bytes(z))
    rc, err = import_(p, capsys, "--format", "chrome")
    assert rc == 2 and re.search(rf"{re.escape(str(p))}:\d+: truncated or corrupt gzip", err), err
    rc, err = import_(p, capsys)  # detection sees the same error
    assert rc == 2 and f"{p}:" in err and "gzip" in err


def test_unrecognised_input_is_located(tmp_path, capsys):
    p = tmp_path / "in.bin"
    p.write_bytes(b"\x00\x01garbage")
    rc, err = import_(p, capsys)
    assert rc == 2 and f"{p}:1: unrecognised input format" in err


def nsys_db(path, **values) -> str:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    con.execute("INSERT INTO StringIds VALUES (3, 'cudaLaunchKernel')")
    con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, streamId INTEGER, "
                "correlationId INTEGER, globalPid INTEGER, gridX INTEGER)")
    row = {"start": 1000, "end": 2000, "streamId": 7, "correlationId": 1, "globalPid": 4242 << 24, "gridX": 2}
    row.update(values.get("kernel", {}))
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?,?,?)", list(row.values()))
    con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, correlationId INTEGER, nameId INTEGER)")
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?)", values.get("runtime", (500, 1, 3)))
    con.commit()
    con.close()
    return str(path)


@pytest.mark.parametrize("values,needle", [
    ({"runtime": (500, 1, "z")}, "table CUPTI_ACTIVITY_KIND_RUNTIME row 1 column nameId: expected an integer"),
    ({"kernel": {"start": 1e300}}, "table CUPTI_ACTIVITY_KIND_KERNEL row 1 column start: an integer out of range"),
    ({"kernel": {"globalPid": "p"}}, "row 1 column globalPid: expected an integer"),
    ({"kernel": {"gridX": 2**62}}, None),
    ({"kernel": {"streamId": b"\xff"}}, "column streamId"),
])
def test_nsys_values_of_the_wrong_type(values, needle, tmp_path, capsys):
    p = nsys_db(tmp_path / "in.sqlite", **values)
    rc, err = import_(p, capsys)
    if needle is None:
        assert rc == 0, err
    else:
        assert rc == 2 and needle in err, err


def test_corrupt_sqlite_pages_are_located(tmp_path, capsys):
    p = nsys_db(tmp_path / "in.sqlite")
    data = bytearray(open(p, "rb").read())
    for i in range(200, len(data), 97):
        data[i] ^= 0x5A
    open(p, "wb").write(bytes(data))
    rc, err = import_(p, capsys, "--format", "nsys")
    assert rc in (0, 2) and (rc == 0 or f"{p}: table " in err or f"{p}: byte 0" in err), err


def test_undecodable_sqlite_text_is_located_or_tolerated(tmp_path, capsys):
    p = nsys_db(tmp_path / "in.sqlite")
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE zzqqzz (a INTEGER)")
    con.execute("INSERT INTO StringIds VALUES (9, 'launchQQQ')")
    con.commit()
    con.close()
    data = open(p, "rb").read()
    open(p, "wb").write(data.replace(b"launchQQQ", b"launch\xbb\xbbQ"))  # a string that is not UTF-8
    assert import_(p, capsys)[0] == 0
    os.remove(tmp_path / "out.jsonl")
    # a malformed schema whose name is not UTF-8: SQLite's own message cannot be decoded
    open(p, "wb").write(data.replace(b"zzqqzz (a", b"zzqqzz ,a").replace(b"zzqqzz", b"zz\xbb\xbbzz"))
    rc, err = import_(p, capsys)
    assert rc == 2 and f"{p}: table sqlite_master (the schema)" in err, err


HEADER = "Kernel_Name,Start_Timestamp,End_Timestamp,Queue_Id\n"


@pytest.mark.parametrize("row,needle", [
    ("k,inf,2,1", ":2 column Start_Timestamp: expected a timestamp"),
    ("k,1,1e400,1", ":2 column End_Timestamp: expected a timestamp"),
    ("k,1," + "9" * 5000 + ",1", ":2 column End_Timestamp: expected a timestamp"),
    ("k,1,2," + "9" * 40, ":2 column Queue_Id"),
    ("k,1,2,1,5", ":2: 5 fields, the header has 4"),
    ("k,1,2,1\x00", ":2 column Queue_Id: expected an integer"),
])
def test_rocprof_cells(row, needle, tmp_path, capsys):
    p = tmp_path / "in.csv"
    p.write_text(HEADER + row + "\n")
    rc, err = import_(p, capsys, "--format", "rocprof")
    assert rc == 2 and needle in err, err


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_rocprof_lines_do_not_depend_on_line_endings(eol, tmp_path, capsys):
    p = tmp_path / "in.csv"
    p.write_bytes((HEADER + "k,1,2,1\n\nk,1,x,1\n").replace("\n", eol).encode())
    rc, err = import_(p, capsys, "--format", "rocprof")
    assert rc == 2 and f"{p}:4 column End_Timestamp" in err, err


def test_rocprof_bad_utf8_and_gzip_name_the_line(tmp_path, capsys):
    rows = "".join(f"k{i},{i},{i + 1},1\n" for i in range(20000))
    p = tmp_path / "in.csv"
    p.write_bytes((HEADER + rows).encode() + b"k\xff,1,2,1\n")
    rc, err = import_(p, capsys, "--format", "rocprof")
    assert rc == 2 and f"{p}:20002: not UTF-8 text" in err, err
    z = bytearray(gzip.compress((HEADER + rows).encode(), mtime=0))
    del z[len(z) // 2:]
    p.write_bytes(bytes(z))
    rc, err = import_(p, capsys, "--format", "rocprof")
    assert rc == 2 and re.search(rf"{re.escape(str(p))}:\d+: truncated or corrupt gzip", err), err


def test_rocprof_import_memory_does_not_grow_with_the_row_width(tmp_path):
    """Rows are read one at a time: two CSVs with the same rows, one whose rows carry a wide
    unused column (5 MB more), are imported with peaks that differ by far less than that (reading
    a file whole took several times its size). Both peaks are measured here, so what the events
    themselves take cancels out; a peak compared with the file size alone failed on noise (10.15
    MB against a bound of 10.03)."""
    import gc
    import tracemalloc

    from gpcheck.traces.importers import import_trace

    rows = 250  # each traced allocation is slow: few rows, wide ones (the same 5 MB grown)

    def write(name: str, width: int) -> Path:
        p = tmp_path / name
        with open(p, "w") as f:
            f.write("Kernel_Name,Start_Timestamp,End_Timestamp,Queue_Id,Notes\n")
            for i in range(rows):
                f.write(f"k,{i * 10},{i * 10 + 5},1,{'x' * width}\n")
        return p

    narrow, wide = write("narrow.csv", 1), write("wide.csv", 20_000)
    grown = os.path.getsize(wide) - os.path.getsize(narrow)
    import_trace(str(narrow), "rocprof")  # the importer's modules loaded before measuring: rows, not imports
    peaks = []
    for p in (narrow, wide):
        gc.collect()  # garbage of the run before is not counted in either peak
        tracemalloc.start()
        try:
            _, events = import_trace(str(p), "rocprof")
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert len(events) == 3 * rows
    # streaming: the wide peak was 0.1 to 0.7 MB above the narrow one at 1,000, 2,000 and 4,000 rows
    # of 5,000 characters, 1.1 MB at 250 of 20,000 (it does not grow with the file); read whole it
    # would be at least `grown` (5 MB) above
    assert peaks[1] - peaks[0] < grown / 2, (peaks, grown)


# ---------------------------------------------------------------------------------------------
# The last-resort guard


def test_an_unexpected_exception_is_an_internal_error_not_a_traceback(monkeypatch, capsys):
    import gpcheck.checker.cli.commands.check as check_cmd

    def boom(args):  # type: ignore[no-untyped-def]
        raise ZeroDivisionError("x")

    monkeypatch.setattr(check_cmd, "run", boom)
    rc = main(["check", "anything"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("gpcheck: internal error: ZeroDivisionError: x")

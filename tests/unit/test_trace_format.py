"""traces/format.py: header/event validation, streaming, gzip, atomic writes, line numbers."""

from __future__ import annotations

import gzip
import os

import pytest

from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import Event, TraceHeader, TraceWriter, loads_trace, open_trace, read_trace, write_trace


def _events() -> list[Event]:
    return [
        Event("launch", {}, {"wptr": 1, "waves_run": [0, 0, 0, 0]}, 5),
        Event("preempt", {"q": 0}, None, None, {"pid": 3}),
        Event("resume", {"q": "Waiting", "b": True}, {"q.Waiting.rptr": 2}),
    ]


@pytest.mark.parametrize("name", ["t.jsonl", "t.jsonl.gz"])
def test_round_trip(tmp_path, name):
    p = str(tmp_path / name)
    h = TraceHeader("ring", {"N": 4}, init={"wptr": 0}, extra={"seed": 7})
    assert write_trace(p, h, _events()) == 3
    h2, evs = read_trace(p)
    assert h2 == h
    assert [(e.action, e.args, e.state, e.t, e.meta) for e in evs] == [
        (e.action, e.args, e.state, e.t, e.meta) for e in _events()
    ]
    assert [e.line for e in evs] == [2, 3, 4]
    assert os.listdir(tmp_path) == [name]  # no temporary file left


def test_gzip_is_deterministic(tmp_path):
    a, b = str(tmp_path / "a.gz"), str(tmp_path / "b.gz")
    write_trace(a, TraceHeader(), _events())
    write_trace(b, TraceHeader(), _events())
    assert open(a, "rb").read() == open(b, "rb").read()
    assert gzip.decompress(open(a, "rb").read()).startswith(b'{"gpcheck_trace":1')


def test_writer_is_atomic(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_text("old\n")
    with pytest.raises(RuntimeError):
        with TraceWriter(str(p), TraceHeader()) as w:
            w.write("a")
            raise RuntimeError("boom")
    assert p.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["t.jsonl"]


def test_unencodable_value_is_trace_error(tmp_path):
    p = tmp_path / "t.jsonl"
    with pytest.raises(TraceError, match="cannot encode"):
        with TraceWriter(str(p), TraceHeader()) as w:
            w.write("a", {"x": object()})
    assert not p.exists()


def test_blank_lines_keep_line_numbers():
    _, evs = loads_trace('{"gpcheck_trace": 1}\n\n{"action": "a"}\n  \n{"action": "b"}\n')
    assert [(e.action, e.line, e.args) for e in evs] == [("a", 3, {}), ("b", 5, {})]


@pytest.mark.parametrize(
    "text, match",
    [
        ("", r"f:1: empty trace"),
        ('{"action": "a"}\n', r"f:1: not a gpcheck trace"),
        ('{"gpcheck_trace": 2}\n', r"f:1: unsupported trace format version 2"),
        ('{"gpcheck_trace": 1, "constants": {"N": "4"}}\n', r"f:1: \"constants\""),
        ('{"gpcheck_trace": 1, "model": 3}\n', r"f:1: \"model\""),
        ('{"gpcheck_trace": 1}\n{"action": "a"}\n{"action": ""}\n', r"f:3: an event needs \"action\""),
        ('{"gpcheck_trace": 1}\n[1]\n', r"f:2: an event must be a JSON object"),
        ('{"gpcheck_trace": 1}\n{"action": "a", "arg": {}}\n', r"f:2: unknown event key\(s\) 'arg'"),
        ('{"gpcheck_trace": 1}\n{"action": "a", "args": {"i": 1.5}}\n', r"f:2: argument 'i'"),
        ('{"gpcheck_trace": 1}\n{"action": "a", "state": {"x": null}}\n', r"f:2: \"state\" value at 'x'"),
        ('{"gpcheck_trace": 1}\n{"action": "a", "state": {"x": {}}}\n', r"f:2: \"state\" has an empty object"),
        ('{"gpcheck_trace": 1}\n{"action": "a", "t": "now"}\n', r"f:2: \"t\" must be a number"),
        ('{"gpcheck_trace": 1}\n{"action": "a", "meta": 1}\n', r"f:2: \"meta\" must be an object"),
        ('{"gpcheck_trace": 1}\n{"action": "a"\n', r"f:2: invalid JSON"),
    ],
)
def test_errors_name_file_and_line(text, match):
    with pytest.raises(TraceError, match=match):
        loads_trace(text, "f")


def test_missing_file():
    with pytest.raises(TraceError, match="nope.jsonl: cannot open trace"):
        open_trace("nope.jsonl")


def test_corrupt_gzip(tmp_path):
    p = tmp_path / "t.gz"
    p.write_bytes(b"not gzip at all")
    with pytest.raises(TraceError, match="cannot read trace"):
        open_trace(str(p))

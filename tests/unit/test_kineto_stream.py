"""The streamed Kineto import (traces/importers/jsonstream.py, kineto_stream.py; issue 31 item 4):
`gpcheck import` writes the same bytes, prints the same lines and raises the same errors as the
whole-document path (detect_format + import_trace + TraceWriter, still in the code for every other
input), in memory that does not hold the trace. tests/bench/bench_import_kineto.py measures it."""

from __future__ import annotations

import gzip
import io
import json
import os
import sys
import tracemalloc

import orjson
import pytest

from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import TraceWriter
from gpcheck.traces.importers import detect_format, import_trace
from gpcheck.traces.importers.jsonload import load_json
from gpcheck.traces.importers.jsonstream import NotStreamable, TraceEventStream
from gpcheck.traces.importers.kineto_stream import Fallback, import_kineto_to

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import kineto_synth  # noqa: E402

RAW = os.path.join(os.path.dirname(__file__), "..", "..", "traces", "corpus", "real", "raw")


def whole_document(path: str, out: str, prios: dict[str, int] | None = None, fmt: str = "auto") -> None:
    """What `gpcheck import` did before the streamed path (and still does for other input)."""
    fmt = detect_format(path) if fmt == "auto" else fmt
    header, events = import_trace(path, fmt, prios)
    with TraceWriter(out, header) as w:
        for ev in events:
            w.write_event(ev)


def cli(args: list[str], capsys) -> tuple[int, str, str]:
    from gpcheck.checker.cli.command import main

    rc = main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


def same_as_whole_document(tmp_path, src: str, prios: dict[str, int] | None = None, fmt: str = "auto",
                           streamed: bool = True) -> bytes:
    """Import `src` both ways; assert equal bytes; assert whether the streamed path took it."""
    new, old = str(tmp_path / "new.jsonl"), str(tmp_path / "old.jsonl")
    if streamed:
        import_kineto_to(src, new, prios, detect=fmt == "auto")
    else:
        with pytest.raises(Fallback):
            import_kineto_to(src, new, prios, detect=fmt == "auto")
    argv = ["import", src, "--out", new, "--format", fmt]
    for k, v in (prios or {}).items():
        argv += ["--stream-priority", f"{k}={v}"]
    from gpcheck.checker.cli.command import main

    assert main(argv) == 0
    whole_document(src, old, prios, fmt)
    data = open(new, "rb").read()
    assert data == open(old, "rb").read()
    return data


@pytest.mark.parametrize("name,prios", [("kineto_priority", None), ("kineto_priority", {"14": -5})])
def test_committed_kineto_traces_import_to_the_same_bytes(tmp_path, capsys, name, prios):
    src = os.path.join(RAW, f"{name}.json.gz")
    same_as_whole_document(tmp_path, src, prios)
    capsys.readouterr()
    # and the command prints the same report and warnings either way
    argv = ["import", src, "--out", str(tmp_path / "a.jsonl")] + \
        [f"--stream-priority={k}={v}" for k, v in (prios or {}).items()]
    rc, out, err = cli(argv, capsys)
    import gpcheck.checker.cli.commands.import_ as imp

    real = imp._streamed_kineto
    imp._streamed_kineto = lambda *a: None  # the whole-document path
    try:
        rc2, out2, err2 = cli(argv, capsys)
    finally:
        imp._streamed_kineto = real
    assert (rc, out, err) == (rc2, out2, err2)


# the realistic-size recording (2.3 s of CPU: three imports of 19,491 events) is slow; in the default
# run test_synthetic_trace_with_gzip_and_both_formats streams 500 kernels (ten 64 KiB chunks, gzip,
# both formats, stream ids and a kernel-name pattern) and the kineto_priority recording above
@pytest.mark.parametrize("name,prios", [
    pytest.param("kineto_train_infer_priority", {"kernel:*softmax*": -5}, marks=pytest.mark.slow),
    pytest.param("kineto_train_infer_equal", {"14": 0}, marks=pytest.mark.long),
    pytest.param("kineto_train_infer_priority", None, marks=pytest.mark.long)])
def test_committed_training_traces_import_to_the_same_bytes(tmp_path, name, prios):
    data = same_as_whole_document(tmp_path, os.path.join(RAW, f"{name}.json.gz"), prios)
    assert data.count(b'"action":"start"') > 6000


def test_synthetic_trace_with_gzip_and_both_formats(tmp_path):
    p = tmp_path / "t.json"
    with open(p, "w") as f:
        kineto_synth.write(f, 500, seed=5)  # 646 KB: ten of the stream's 64 KiB chunks, the gzip one too
    same_as_whole_document(tmp_path, str(p))
    same_as_whole_document(tmp_path, str(p), fmt="kineto")
    gz = tmp_path / "t.json.gz"
    gz.write_bytes(gzip.compress(p.read_bytes()))
    same_as_whole_document(tmp_path, str(gz), {"13": -2, "14": 0})
    # a kernel-name pattern, and an id beside it (the id wins on its stream)
    same_as_whole_document(tmp_path, str(gz), {"kernel:*Gelu*": -5, "13": 0})


def write(tmp_path, doc, raw: bytes | None = None, name: str = "k.json") -> str:
    p = tmp_path / name
    p.write_bytes(raw if raw is not None else json.dumps(doc, indent=1).encode())
    return str(p)


def kernel(corr, ts, dur=5.0, stream=7, **args):
    return {"ph": "X", "cat": "kernel", "name": f"k{corr}", "pid": 0, "tid": stream, "ts": ts, "dur": dur,
            "args": {"device": 0, "context": 1, "stream": stream, "correlation": corr, "grid": [2, 1, 1],
                     "block": [64, 1, 1], **args}}


def launch(corr, ts, pid=11, name="cudaLaunchKernel"):
    return {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": pid, "tid": 3, "ts": ts, "dur": 1.5,
            "args": {"correlation": corr}}


def test_unusual_but_valid_input_streams_to_the_same_bytes(tmp_path):
    events = [
        launch(1, 10.0), kernel(1, 20.0), launch(1, 11.0),              # the first launch call counts
        launch(2, 12.0, pid=True), kernel(2, 20.0, stream="7"),          # a bool pid; stream "7" = stream 7
        kernel(3, 21.0, queued=1_000_000_000_019_000),                    # launch from CUPTI's queued time
        kernel(4, 22.5, grid=[-1, 2, 1], block=[True, 1, 1]),            # dimensions dropped
        {"ph": "B", "cat": "kernel", "name": "be", "pid": 0, "tid": 9, "ts": 30.0,
         "args": {"stream": 9, "correlation": 5}},
        {"ph": "X", "cat": "overhead", "name": "x", "pid": -1, "tid": 0, "ts": 31.0, "dur": 2},
        {"ph": "E", "pid": 0, "tid": 9, "ts": 40.0, "args": {"device": 0}},   # B/E: closes late, merged args
        {"ph": "B", "cat": "kernel", "name": "never ends", "pid": 0, "tid": 8, "ts": 50,
         "args": {"stream": 8, "correlation": 6}},
        kernel(7, 60.0, stream=4, priority=4294967291),                   # CUPTI's uint32 -5
        kernel(8, 61.0, stream=4, priority=4294967291),
        {"ph": "X", "cat": "kernel", "name": "n\u00e9\"},{\"\\", "pid": 0, "tid": 7, "ts": 70, "dur": 1,
         "args": {"stream": 7, "correlation": 9, "nested": [{"a": 1}, {"b": [1, 2]}]}},  # '},{' inside
        {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7 "}},
        {"ph": "s", "id": 1, "pid": 11, "tid": 3, "ts": 10.0, "cat": "ac2g", "name": "ac2g"},
    ]
    doc = {"schemaVersion": 1, "traceEvents": events, "baseTimeNanoseconds": 1_000_000_000_000_000_000,
           "deviceProperties": [{"name": "GPU"}], "traceName": "x"}  # the base after the events
    same_as_whole_document(tmp_path, write(tmp_path, doc))
    big = dict(doc, traceEvents=events + [kernel(100 + i, 100.0 + i, stream=7, pad="x" * 70_000) for i in range(3)])
    same_as_whole_document(tmp_path, write(tmp_path, big, name="big.json"))  # events longer than a buffer
    same_as_whole_document(tmp_path, write(tmp_path, doc, raw=orjson.dumps(doc), name="compact.json"))
    # a bare array of events (no header): detected as Kineto by its kernel slices
    same_as_whole_document(tmp_path, write(tmp_path, events, name="bare.json"))


@pytest.mark.parametrize("case", ["nan", "bom", "recording", "plain_chrome", "two_trace_events", "big_int",
                                  "trailing"])
def test_input_the_stream_does_not_follow_goes_the_whole_document_way(tmp_path, case):
    ev = [launch(1, 10.0), kernel(1, 20.0)]
    doc = {"schemaVersion": 1, "traceEvents": ev}
    raw = {
        "nan": json.dumps(dict(doc, extra=float("nan"))).encode(),
        "bom": b"\xef\xbb\xbf" + json.dumps(doc).encode(),
        "recording": json.dumps(dict(doc, gpcheck_record=1)).encode(),
        "plain_chrome": json.dumps({"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}).encode(),
        "two_trace_events": json.dumps(doc)[:-1].encode() + b', "traceEvents": []}',
        "big_int": json.dumps(dict(doc, traceEvents=[kernel(1 << 70, 20.0)])).encode(),
        "trailing": json.dumps(doc).encode() + b" x",
    }[case]
    p = write(tmp_path, None, raw=raw)
    with pytest.raises(Fallback):
        import_kineto_to(p, str(tmp_path / "o.jsonl"), detect=True)
    # the command still answers exactly as the whole-document path does
    from gpcheck.checker.cli.command import main

    try:
        whole_document(p, str(tmp_path / "old.jsonl"))
        expected: object = open(tmp_path / "old.jsonl", "rb").read()
    except TraceError as e:
        expected = str(e)
    rc = main(["import", p, "--out", str(tmp_path / "new.jsonl")])
    if isinstance(expected, bytes):
        assert rc == 0 and open(tmp_path / "new.jsonl", "rb").read() == expected
    else:
        assert rc == 2 and not (tmp_path / "new.jsonl").exists()


def test_errors_read_as_before(tmp_path, capsys):
    bad = {"schemaVersion": 1, "traceEvents": [kernel(1, 20.0), {"ph": "E", "pid": 5, "tid": 5, "ts": 3}]}
    p = write(tmp_path, bad)
    with pytest.raises(TraceError) as old:
        whole_document(p, str(tmp_path / "old.jsonl"))
    rc, out, err = cli(["import", p, "--out", str(tmp_path / "new.jsonl")], capsys)
    assert rc == 2 and str(old.value) in err and "E\" event with no open \"B\"" in err
    truncated = write(tmp_path, None, raw=json.dumps(bad).encode()[:-30], name="trunc.json")
    rc, out, err = cli(["import", truncated, "--out", str(tmp_path / "new.jsonl")], capsys)
    assert rc == 2 and f"{truncated}:1:" in err and "truncated JSON" in err


def test_event_stream_matches_a_whole_load(tmp_path):
    doc = {"a": [1, {"b": "},{"}], "traceEvents": [{"x": i, "s": "}, {"} for i in range(5000)] + [[1], "s", 2],
           "z": {"k": 1.5}}
    p = write(tmp_path, doc)
    with TraceEventStream(p) as s:
        evs = [e for _, e in s]
        assert evs == doc["traceEvents"] and s.top == {"a": doc["a"], "z": doc["z"]} and s.saw_events
    with TraceEventStream(p) as s:
        n = 0
        for i, batch in s.batches():
            assert i == n
            n += len(batch)
        assert n == len(doc["traceEvents"])
    for raw in (b'{"traceEvents": [1, 2', b'{"a": NaN, "traceEvents": []}', b'[1, 2] 3', b'{"traceEvents": [1,, 2]}'):
        p = write(tmp_path, None, raw=raw, name="bad.json")
        with pytest.raises(NotStreamable), TraceEventStream(p) as s:
            list(s)


def peak(fn, *args) -> int:
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.long  # about 10 s alone, a minute on a busy machine; the same code runs in every test above
def test_memory_does_not_hold_the_trace(tmp_path):
    """tracemalloc's peak of the streamed import grows by a few hundred bytes per kernel (its sort
    keys; both sizes fill the output buffer), and is a small fraction of the whole-document path's
    (the benchmark measures peak RSS at 10^5 and 10^6 kernels)."""
    peaks, src = {}, {}
    for n in (4000, 8000):
        src[n] = str(tmp_path / f"t{n}.json")
        with open(src[n], "w") as f:
            kineto_synth.write(f, n)
        peaks[n] = peak(import_kineto_to, src[n], str(tmp_path / "new.jsonl"))
    assert peaks[8000] < peaks[4000] + 4000 * 300, peaks
    import_kineto_to(src[4000], str(tmp_path / "new.jsonl"))
    old = peak(whole_document, src[4000], str(tmp_path / "old.jsonl"))
    assert open(tmp_path / "new.jsonl", "rb").read() == open(tmp_path / "old.jsonl", "rb").read()
    assert peaks[4000] * 4 < old, (peaks, old)


def test_synthetic_generator_is_valid_kineto(tmp_path):
    buf = io.StringIO()
    kineto_synth.write(buf, 50)
    doc = json.loads(buf.getvalue())
    assert sum(1 for e in doc["traceEvents"] if e.get("cat") == "kernel") == 50
    p = write(tmp_path, None, raw=buf.getvalue().encode())
    assert detect_format(p) == "kineto" and load_json(p) == doc


def k(corr, ts, dur=1.0, stream=7, **args):
    return {"ph": "X", "cat": "kernel", "name": f"k{corr % 3}", "pid": 0, "tid": stream, "ts": ts, "dur": dur,
            "args": {"stream": stream, "correlation": corr, **args}}


EDGE = {
    "empty": [],
    "no_kernels": [launch(3, 1.0)],
    "integer_and_string_times": [k(1, 5, 2), k(2, "6.5", 2)],
    "many_streams": [k(i, float(i), 3.0, stream=i % 100) for i in range(1000)],
    "zero_durations": [k(1, 5.0, 0.0), launch(1, 5.0, name="cuLaunchKernel")],
    "two_priorities_in_a_stream": [k(1, 5.0, priority=0), k(2, 6.0, priority=-3)],
    "end_before_start": [k(1, 5.0, -2.0)],
}


@pytest.mark.parametrize("case", sorted(EDGE))
def test_edge_cases_same_bytes_or_same_error(tmp_path, case):
    p = write(tmp_path, {"schemaVersion": 1, "traceEvents": EDGE[case]})
    try:
        whole_document(p, str(tmp_path / "old.jsonl"))
    except TraceError:
        with pytest.raises(Fallback):  # the command then reports the whole-document path's error
            import_kineto_to(p, str(tmp_path / "new.jsonl"), detect=True)
        return
    import_kineto_to(p, str(tmp_path / "new.jsonl"), detect=True)
    assert open(tmp_path / "new.jsonl", "rb").read() == open(tmp_path / "old.jsonl", "rb").read()


def test_a_damaged_gzip_stream_is_an_input_error_not_an_internal_one(tmp_path, capsys):
    # zlib.error is no OSError: the stream took it for a bug (found by the hostile-input slice)
    p = tmp_path / "t.json"
    with open(p, "w") as f:
        kineto_synth.write(f, 1500, seed=5)
    data = bytearray(gzip.compress(p.read_bytes()))
    data[100] ^= 0xFF  # zlib: "invalid distance too far back"
    gz = tmp_path / "bad.json.gz"
    gz.write_bytes(bytes(data))
    rc, out, err = cli(["import", str(gz), "--out", str(tmp_path / "o.jsonl"), "--format", "kineto"], capsys)
    assert rc == 2, err
    assert "internal error" not in err and str(gz) in err
    assert not (tmp_path / "o.jsonl").exists()

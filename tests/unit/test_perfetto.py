"""traces/perfetto.py: exports of counterexamples and traces pass a schema check of the Chrome
trace-event format, and carry the tracks the heuristics promise; the schema check itself
rejects malformed traces."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest

from gpcheck.checker.api.model_api import verify
from gpcheck.gpmodel import compile_model
from gpcheck.gpmodel.simulate import simulate
from gpcheck.spec import bundled_models, load_spec
from gpcheck.traces.emit import events_of, header_for
from gpcheck.traces.format import Event, TraceHeader
from gpcheck.traces.perfetto import export_counterexample, export_events, validate_chrome_trace

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT.parent / "shared" / "spec-examples"


def _load(p: Path) -> dict:  # type: ignore[type-arg]
    obj = orjson.loads(p.read_bytes())
    assert validate_chrome_trace(obj) == []
    return obj  # type: ignore[no-any-return]


def test_counterexample_export(tmp_path) -> None:
    if not (EXAMPLES / "rewind.gpspec").exists():
        pytest.skip("no examples")
    model = load_spec(EXAMPLES / "rewind.gpspec")
    cx = verify(model).result("no_reexecution").counterexample
    assert cx is not None
    export_counterexample(cx, model, str(tmp_path / "cx.json"))
    obj = _load(tmp_path / "cx.json")
    evs = obj["traceEvents"]
    threads = {e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"task", "actions"} <= threads
    instants = [e for e in evs if e["ph"] == "i"]
    assert [e["name"] for e in instants] == [s.action for s in cx.steps[1:]]
    assert {e["name"]: e["s"] for e in instants}["preempt"] == "p"  # drawn across every track
    assert {e["name"]: e["s"] for e in instants}["fetch"] == "t"
    counters = {e["name"] for e in evs if e["ph"] == "C"}
    assert {"next", "fetched", "head", "waves_run.0"} <= counters
    slices = [(e["name"], e["ts"], e["dur"]) for e in evs if e["ph"] == "X"]
    assert ("Waiting", 4.0, 1.0) in slices  # task preempted at step 4, resumed at step 5


@pytest.mark.parametrize("name", sorted(bundled_models()))
def test_bundled_model_behaviours_pass_the_schema(tmp_path, name: str) -> None:
    model = load_spec(name)
    cm = compile_model(model)
    beh = list(simulate(cm, 80, random.Random(7)))
    for observe in ("full", "changed"):
        h = header_for(cm, beh[0][1], observe=observe)
        export_events(h, events_of(cm, beh, observe=observe), str(tmp_path / "t.json"), model)
        obj = _load(tmp_path / "t.json")
        assert sum(1 for e in obj["traceEvents"] if e["ph"] == "i") == len(beh) - 1


def test_trace_without_model_and_with_timestamps(tmp_path) -> None:
    h = TraceHeader("q", {}, {"q": [{"busy": False, "rptr": 0}, {"busy": False, "rptr": 0}], "mode": "Run"})
    evs = [
        Event("launch", {"q": 1}, {"q.1.busy": True}, t=5_000),
        Event("preempt", {"q": 1}, {"mode": "Saved", "q": [{"busy": False, "rptr": 0}, {"busy": False, "rptr": 1}]}, t=9_000),
        Event("resume", {"q": 1}, {"mode": "Run"}, t=12_500),
    ]
    n = export_events(h, evs, str(tmp_path / "t.json"))
    assert n == 3
    obj = _load(tmp_path / "t.json")
    evs_ = obj["traceEvents"]
    threads = {e["args"]["name"]: e["tid"] for e in evs_ if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"q=1", "mode", "q.1.busy", "q.0.busy"} <= set(threads)
    busy = [e for e in evs_ if e["ph"] == "X" and e["tid"] == threads["q.1.busy"]]
    # relative µs: the first event one step (1 µs) after the initial state; busy from t=5000 to 9000 ns
    assert [(e["ts"], e["dur"]) for e in busy] == [(1.0, 4.0)]
    assert [e["args"]["value"] for e in evs_ if e["ph"] == "C" and e["name"] == "q.1.rptr"] == [0, 1]
    assert [e["ts"] for e in evs_ if e["ph"] == "i"] == [1.0, 5.0, 8.5]


def test_export_is_atomic_on_error(tmp_path) -> None:
    target = tmp_path / "t.json"
    target.write_text("old")
    model = load_spec("cwsr")
    with pytest.raises(Exception):
        export_events(TraceHeader(), [Event("a", {}, {"nope": 1})], str(target), model)
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


@pytest.mark.parametrize(
    "obj, problem",
    [
        ({"events": []}, "traceEvents"),
        (3, "JSON array"),
        ([{"ph": "Q", "name": "x", "pid": 1, "tid": 1, "ts": 0}], "unknown phase"),
        ([{"ph": "X", "name": "x", "pid": 1, "tid": 1, "ts": 0}], "non-negative \"dur\""),
        ([{"ph": "X", "name": "x", "pid": 1, "tid": 1, "ts": -1, "dur": 1}], "\"ts\""),
        ([{"ph": "C", "name": "c", "pid": 1, "ts": 0, "args": {"v": "high"}}], "numeric values"),
        ([{"ph": "i", "name": "x", "pid": 1, "tid": 1, "ts": 0, "s": "q"}], "scope"),
        ([{"ph": "i", "pid": 1, "tid": 1, "ts": 0}], "\"name\""),
        ([{"ph": "i", "name": "x", "tid": 1, "ts": 0}], "missing \"pid\""),
        ([{"ph": "M", "name": "thread_title", "pid": 1, "args": {"name": "t"}}], "unknown metadata"),
        ([{"ph": "E", "pid": 1, "tid": 1, "ts": 0}], "without a matching begin"),
        ([{"ph": "B", "name": "x", "pid": 1, "tid": 1, "ts": 0}], "never ended"),
        ([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 5},
          {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 3, "dur": 5}], "without nesting"),
    ],
)
def test_schema_check_rejects(obj, problem) -> None:  # type: ignore[no-untyped-def]
    problems = validate_chrome_trace(obj)
    assert any(problem in p for p in problems), problems


def test_schema_check_accepts_nesting_and_both_forms() -> None:
    evs = [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
           {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 2, "dur": 3},
           {"ph": "B", "name": "c", "pid": 1, "tid": 2, "ts": 0}, {"ph": "E", "pid": 1, "tid": 2, "ts": 1}]
    assert validate_chrome_trace(evs) == []
    assert validate_chrome_trace({"traceEvents": evs, "displayTimeUnit": "ns"}) == []


def test_reconstructed_behaviour_export(tmp_path) -> None:
    """With a model, a conforming trace is shown as the behaviour replay reconstructs: hidden
    internal steps appear (flagged), at the time of the event they precede, and slots the trace
    never observed get tracks."""
    from gpcheck.traces.perfetto import export_trace
    from gpcheck.checker.engines.replay.search import Replayer, memory_source

    if not (EXAMPLES / "ring.gpspec").exists():
        pytest.skip("no examples")
    model = load_spec(EXAMPLES / "ring.gpspec")
    cm = compile_model(model)
    beh = next(b for b in (list(simulate(cm, 40, random.Random(seed))) for seed in range(50))
               # an internal step with a logged one after it
               if any(cm.instances[i].action.internal and any(not cm.instances[j].action.internal for j, _ in b[k + 1:])
                      for k, (i, _) in enumerate(b[1:], 1)))
    h = header_for(cm, beh[0][1], observe="changed", internal=False)
    evs = [e._replace(t=1_000_000 + 5_000 * i) for i, e in enumerate(events_of(cm, beh, observe="changed", internal=False))]
    src = memory_source(h, evs)
    n, rebuilt = export_trace(str(tmp_path / "r.json"), h, src, model, Replayer(cm), "r.jsonl")
    assert rebuilt and n > len(evs)
    obj = _load(tmp_path / "r.json")
    inst = [e for e in obj["traceEvents"] if e["ph"] == "i"]
    logged = [e for e in inst if not e.get("args", {}).get("hidden")]
    assert [e["ts"] for e in logged] == [1.0 + 5.0 * i for i in range(len(evs))]  # relative µs
    assert {e["name"] for e in inst if e.get("args", {}).get("hidden")} <= {"fetch", "wave", "retire"}
    assert "busy" in {e["args"]["name"] for e in obj["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    # not a behaviour: the events as logged
    bad = evs[:2] + [Event("resume", {}, None, 99_000_000)]
    n, rebuilt = export_trace(str(tmp_path / "b.json"), h, memory_source(h, bad), model, Replayer(cm), "b.jsonl")
    assert not rebuilt and n == 3
    _load(tmp_path / "b.json")


def _kernel(corr: int | None, stream: int, t0: int, t1: int | None, name: str) -> list[Event]:
    a = {"stream": stream, "priority": 0}
    m = {"name": name, "grid": 132, "grid_dims": [2, 66, 1], "block_dims": [384, 1, 1], "stream_id": 13 + stream}
    if corr is not None:
        m["corr"] = corr
    evs = [Event("launch", a, None, t0 - 5, m), Event("start", a, None, t0, m)]
    return evs + ([Event("end", a, None, t1, m)] if t1 is not None else [])


def test_observation_trace_export_shows_the_kernels(tmp_path) -> None:
    """Kernel names, correlation ids and grid sizes reach the export: one slice per kernel on its
    stream's kernel track (issue 37), an overlapping kernel on a second lane, a kernel that never
    ends closed at the end and flagged; the file stays a valid Chrome trace."""
    evs = (_kernel(7, 0, 100, 200, "void gemm<1>(int)") + _kernel(8, 0, 150, 300, "overlapping")
           + _kernel(9, 1, 120, None, "never_ends") + _kernel(None, 1, 400, 500, "no_corr"))
    evs = [e._replace(line=i + 2) for i, e in enumerate(sorted(evs, key=lambda e: e.t))]
    export_events(TraceHeader("nvidia_streams"), evs, str(tmp_path / "k.json"))
    text = (tmp_path / "k.json").read_text()
    assert "void gemm<1>(int)" in text
    obj = _load(tmp_path / "k.json")
    tracks = {e["tid"]: e["args"]["name"] for e in obj["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    ks = {e["name"]: e for e in obj["traceEvents"] if e["ph"] == "X"}
    assert set(ks) == {"void gemm<1>(int)", "overlapping", "never_ends", "no_corr"}
    g = ks["void gemm<1>(int)"]
    assert g["args"]["corr"] == 7 and g["args"]["grid"] == 132 and g["args"]["grid_dims"] == [2, 66, 1]
    assert g["dur"] == pytest.approx(0.1) and tracks[g["tid"]] == "kernels stream=0"
    assert tracks[ks["overlapping"]["tid"]] == "kernels stream=0 #2"
    assert ks["never_ends"]["args"]["unfinished"] is True and tracks[ks["never_ends"]["tid"]] == "kernels stream=1"
    assert ks["no_corr"]["dur"] == pytest.approx(0.1)
    starts = [e for e in obj["traceEvents"] if e["ph"] == "i" and e["name"].startswith("start")]
    assert starts[0]["args"]["name"] == "void gemm<1>(int)" and starts[0]["args"]["corr"] == 7


def test_real_trace_export_keeps_kernel_names(tmp_path) -> None:
    """The Kineto recording of traces/corpus/real, replayed and exported: its kernels' names are in
    the file (grep finds them), one slice per kernel, with correlation ids."""
    from gpcheck.checker.cli.command import main
    from gpcheck.traces.format import read_trace

    trace = ROOT / "traces" / "corpus" / "real" / "kineto_priority.jsonl.gz"
    header, events = read_trace(str(trace))
    names = {e.meta["name"] for e in events if e.action == "start"}
    out = tmp_path / "k.json"
    assert main(["replay", str(trace), "--perfetto", str(out), "--no-progress"]) == 0
    text = out.read_text()
    assert all(n in text for n in names)
    obj = _load(out)
    slices = [e for e in obj["traceEvents"] if e["ph"] == "X" and "corr" in e.get("args", {})]
    assert len(slices) == sum(1 for e in events if e.action == "start") and {e["name"] for e in slices} == names

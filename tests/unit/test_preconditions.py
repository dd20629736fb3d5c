"""Issue 37: no vacuous `ok`. Each observation property (traces/observe.py, traces/latency.py) on a
small trace built here that lacks one of its preconditions (traces/preconditions.py) answers
`unknown`, with the reason and what would supply it, in text and JSON, and exit 3; the same
trace with the precondition met decides (`ok`, or a finding). The importer's `source.missing`,
its warning, `--stream-priority` by stream id and by kernel-name pattern, and replay's repeat of
it."""

from __future__ import annotations

import json
import os

import pytest

from gpcheck.checker.cli.command import main
from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import Event, TraceHeader, read_trace, write_trace
from gpcheck.traces.importers import import_trace
from gpcheck.traces.importers.common import override_priorities
from gpcheck.traces.observe import ObserveOptions, observe_events
from gpcheck.traces.preconditions import PRECONDITIONS, entry

REAL = os.path.join(os.path.dirname(__file__), "..", "..", "traces", "corpus", "real")
ALL = {"missing": []}  # a source that recorded everything (NOTE(source-missing))


def k(corr, stream, launch, start, end, prio=0, **meta):  # type: ignore[no-untyped-def]
    m = {"corr": corr, "name": meta.pop("name", f"k{corr}"), **meta}
    a = {"stream": stream} if prio is None else {"stream": stream, "priority": prio}
    evs = [Event("launch", a, None, launch, dict(m, launch_from=meta.get("launch_from", "api")))]
    evs.append(Event("start", a, None, start, m))
    if end is not None:
        evs.append(Event("end", a, None, end, m))
    return evs


def check(events, source=None, props=None):  # type: ignore[no-untyped-def]
    h = TraceHeader("nvidia_streams", {"S": 2, "P": 6, "Q": 4, "SLOTS": 2},
                    extra={} if source is None else {"source": source})
    evs = sorted(events, key=lambda e: e.t if e.t is not None else 0)
    evs = [e._replace(line=i + 2) for i, e in enumerate(evs)]
    r = observe_events(h, evs, "t.jsonl", props, ObserveOptions())
    return {p.name: p for p in r.results}, r


def lacking(field, fmt="kineto"):  # type: ignore[no-untyped-def]
    return {"format": fmt, "missing": [entry(field, fmt, f"the source ({fmt}) lacks {field}")]}


# two streams: low (level 0) kernel 1 runs 0..100; high (level 5) kernel 2 launched at 10 waits for
# low kernel 3, started at 20 while it was queued: one inversion window 20..100 (once 1 ended)
INVERSION = k(1, 0, 0, 0, 100) + k(3, 0, 1, 100, 200) + k(2, 1, 10, 200, 250, prio=5)


def test_every_property_names_its_preconditions():
    from gpcheck.traces.observe import PROPERTIES

    assert set(PRECONDITIONS) == set(PROPERTIES)


def test_priority_not_recorded_is_unknown_not_ok():
    # the importer put every stream at level 0: one level, but nothing was recorded
    res, r = check(k(1, 0, 0, 10, 20) + k(2, 1, 5, 12, 30), lacking("stream_priority"))
    for name in ("priority_inversion", "blocking"):
        p = res[name]
        assert p.status == "unknown" and "lacks stream_priority" in p.summary
        assert "--stream-priority" in p.to_json()["remedy"] and p.to_json()["missing"][0]["field"] == "stream_priority"
    assert r.exit_code == 3
    # events with no args.priority at all, no header: the same
    res, _ = check(k(1, 0, 0, 10, 20, prio=None) + k(2, 1, 5, 12, 30, prio=None), ALL | {"missing": None})
    assert res["priority_inversion"].status == "unknown" and "no args.priority" in res["priority_inversion"].summary


def test_one_recorded_priority_level_decides_no_inversion():
    res, r = check(k(1, 0, 0, 10, 20) + k(2, 1, 5, 12, 30), ALL)
    assert res["priority_inversion"].status == "ok" and "no inversion possible" in res["priority_inversion"].summary
    assert res["blocking"].status == "ok" and r.exit_code == 0


def test_priority_inversion_found_with_priorities_and_launch_times():
    res, _ = check(INVERSION, ALL)
    assert res["priority_inversion"].status == "info" and res["priority_inversion"].count == 1
    w = res["priority_inversion"].findings[0]
    assert (w["start"], w["end"]) == (100, 200)


def test_no_launch_times_is_unknown_for_queueing_properties():
    no_launch = [e for e in INVERSION if e.action != "launch"]
    placed = []  # what an importer without launch records writes: the launch at the start
    for e in no_launch:
        if e.action == "start":
            placed.append(Event("launch", e.args, None, e.t, dict(e.meta, launch_from="kernel")))
        placed.append(e)
    res, r = check(placed, lacking("launch_time"))
    for name in ("priority_inversion", "launch_delay", "blocking", "stream_order"):
        assert res[name].status == "unknown", name
        assert "lacks launch_time" in res[name].summary
    assert "the launch order is not known" in res["stream_order"].summary
    assert r.exit_code == 3
    # without a header saying so, the events show it (every launch placed at its start)
    res, _ = check(placed, {"format": "kineto"})
    assert res["priority_inversion"].status == "unknown" and res["launch_delay"].status == "unknown"
    # an overlap in a stream is still found without launch times: violated, not unknown
    res, _ = check(placed + k(9, 0, 150, 150, 160, launch_from="kernel"), lacking("launch_time"))
    assert res["stream_order"].status == "violated"


def test_some_kernels_without_launch_time_are_named_not_judged():
    evs = INVERSION + k(4, 1, 300, 300, 310, prio=5, launch_from="kernel")
    res, _ = check(evs, ALL)
    assert res["priority_inversion"].status == "info"
    assert "1 of 2 higher-priority kernels have no launch time and were not judged" in res["priority_inversion"].summary
    only_unlaunched = [e for e in evs if e.meta["corr"] != 2]
    res, _ = check(only_unlaunched, ALL)
    assert res["priority_inversion"].status == "unknown" and "none of the 1 higher-priority" in res["priority_inversion"].summary
    assert res["blocking"].status == "unknown"


def test_made_up_correlation_ids_leave_exactly_once_undecided():
    evs = [e._replace(meta=dict(e.meta, corr_synthetic=True)) for e in k(1, 0, 0, 10, 20) + k(2, 0, 1, 20, 30)]
    res, _ = check(evs, {"format": "chrome"})
    assert res["exactly_once"].status == "unknown" and "correlation id" in res["exactly_once"].summary
    res, _ = check(evs, ALL)
    assert res["exactly_once"].status == "ok"
    # a kernel that never completes is still a violation
    res, _ = check(k(1, 0, 0, 10, None), lacking("correlation_id", "chrome"))
    assert res["exactly_once"].status == "violated"


def test_time_slicing_needs_stamps_or_switch_records():
    evs = k(1, 0, 0, 10, 20) + k(2, 1, 5, 12, 30)
    res, _ = check(evs, lacking("switch_evidence"))
    ts = res["timeslice"]
    assert ts.status == "unknown" and "nsys --gpuctxsw=true" in ts.to_json()["remedy"]
    res, _ = check(evs, {"format": "kineto"})  # inferred: no gap, ctx_switch or per-block stamp
    assert res["timeslice"].status == "unknown"
    for extra in ([Event("ctx_switch", {}, None, 15, {"contextId": 1})], []):
        res, _ = check(evs + extra, {"format": "record"} if not extra else {"format": "nsys"})
        assert res["timeslice"].status in ("ok", "info")  # a ctx_switch record, or the recorder's stamps
    # kernels of two processes overlapping: evidence found even without stamps (info, not unknown)
    res, _ = check(k(1, 0, 0, 0, 1_000_000, pid=1) + k(2, 1, 0, 100, 900_000, pid=2), lacking("switch_evidence"))
    assert res["timeslice"].status == "info"
    # the recorder's per-block largest timer jump shows a switch-out without gap logs
    res, _ = check(k(1, 0, 0, 0, 5_000_000, max_gap_ns=2_000_000), {"format": "record", "missing": []})
    assert [f["kind"] for f in res["timeslice"].findings] == ["timer_jump"]


def test_untimed_events_are_unknown_with_a_remedy():
    evs = [e._replace(t=None) for e in k(1, 0, 0, 10, 20)]
    res, r = check(evs, ALL)
    for name in ("priority_inversion", "timeslice", "launch_delay", "blocking"):
        assert res[name].status == "unknown" and res[name].missing[0]["field"] == "timestamps"
    assert r.exit_code == 3


def test_text_and_json_say_what_would_decide(tmp_path, capsys):
    f = str(tmp_path / "t.jsonl")
    write_trace(f, TraceHeader("nvidia_streams", {"S": 2, "P": 1, "Q": 2, "SLOTS": 2},
                               extra={"source": lacking("stream_priority") | {"missing": lacking("stream_priority")["missing"]
                                                                                          + [entry("switch_evidence", "kineto", "no stamps")]}}),
                k(1, 0, 0, 10, 20) + k(2, 1, 5, 12, 30))
    assert main(["check", f]) == 3
    out = capsys.readouterr().out
    assert "priority_inversion  unknown" in out and "what would decide the unknown properties:" in out
    assert "priority_inversion: pass --stream-priority STREAM=PRIORITY" in out
    assert main(["check", f, "--json"]) == 3
    doc = json.loads(capsys.readouterr().out)
    r = {p["property"]: p for p in doc["results"]}
    assert r["priority_inversion"]["status"] == "unknown" and "--stream-priority" in r["priority_inversion"]["remedy"]
    assert [m["field"] for m in doc["source_missing"]] == ["stream_priority", "switch_evidence"]
    assert doc["exit_code"] == 3


# --------------------------------------------------------------------------------------------- import


def test_kineto_import_warns_and_records_what_is_missing(tmp_path, capsys):
    raw = os.path.join(REAL, "raw", "kineto_priority.json.gz")
    out = str(tmp_path / "k.jsonl.gz")
    assert main(["import", raw, "--out", out]) == 0
    err = capsys.readouterr().err
    assert "records no stream priorities" in err and "--stream-priority" in err
    assert "stream 14: 5 kernels (work x5)" in err  # the streams, so that the flag can name one
    header, _ = read_trace(out)
    assert [m["field"] for m in header.extra["source"]["missing"]] == ["stream_priority", "switch_evidence"]
    assert main(["check", out, "--property", "priority_inversion", "--property", "blocking"]) == 3
    assert "records no stream priorities" in capsys.readouterr().out
    # the flag supplies them: no longer missing, and the windows are found
    assert main(["import", raw, "--out", out, "--stream-priority", "14=-5", "--json"]) == 0
    assert [m["field"] for m in json.loads(capsys.readouterr().out)["missing"]] == ["switch_evidence"]
    assert main(["check", out, "--property", "priority_inversion", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["count"] == 3


@pytest.mark.long
def test_stream_priority_by_kernel_pattern():
    """`kernel:*softmax*` names the inference stream of the train/infer recording by a kernel only it
    ran: the same events as naming its Kineto stream id 14."""
    raw = os.path.join(REAL, "raw", "kineto_train_infer_priority.json.gz")
    by_id = import_trace(raw, "kineto", {"14": -5})
    header, events = import_trace(raw, "kineto", {"kernel:*softmax*": -5})
    assert events == by_id[1]
    rows = {r["stream_id"]: r for r in header.extra["source"]["streams"]}
    assert rows[14]["cuda_priority"] == -5 and rows[14]["priority_from"] == "--stream-priority kernel:*softmax*"
    assert "cuda_priority" not in rows[13]
    assert [m["field"] for m in header.extra["source"]["missing"]] == ["switch_evidence"]


def test_stream_priority_errors_and_precedence():
    raw = os.path.join(REAL, "raw", "kineto_priority.json.gz")
    by_id = import_trace(raw, "kineto", {"14": -5})
    assert import_trace(raw, "kineto", {"stream:14": -5})[1] == by_id[1]
    with pytest.raises(TraceError, match="no stream kernel:nothing"):
        import_trace(raw, "kineto", {"kernel:nothing*": -5})
    with pytest.raises(TraceError, match="different priorities"):  # both match stream 13's `work`
        import_trace(raw, "kineto", {"kernel:work": -5, "kernel:w*": -3})
    # a pattern names every stream that ran a matching kernel (here both of `work`'s, not 7's `stamp`)
    header, _ = import_trace(raw, "kineto", {"kernel:wor?": -5})
    assert {r["stream_id"]: r.get("cuda_priority") for r in header.extra["source"]["streams"]} == {7: None, 13: -5, 14: -5}
    # a stream named by id wins over a pattern that matches it too
    header, _ = import_trace(raw, "kineto", {"14": -2, "kernel:work": -5})
    got = {r["stream_id"]: r.get("cuda_priority") for r in header.extra["source"]["streams"]}
    assert got == {7: None, 13: -5, 14: -2}


def test_override_drops_only_the_priority_entry():
    h = TraceHeader("nvidia_streams", {"P": 1}, extra={"source": {"streams": [{"stream": 0, "stream_id": 7, "priority": 0}],
                                                                  **lacking("stream_priority")}})
    h2, _ = override_priorities(h, k(1, 0, 0, 1, 2), {"7": -1})
    assert h2.extra["source"]["missing"] == [] and h2.constants["P"] == 2


@pytest.mark.long
def test_train_infer_recording_without_and_with_the_flag(tmp_path):
    """Acceptance: the PyTorch train/infer recording imported without --stream-priority leaves the
    priority checks unknown (exit 3); with 14=-5 the 549 inversion windows are found."""
    from gpcheck.traces.observe import observe

    raw = os.path.join(REAL, "raw", "kineto_train_infer_priority.json.gz")
    out = str(tmp_path / "k.jsonl.gz")
    for flag, want in (([], None), (["--stream-priority", "14=-5"], 549)):
        assert main(["import", raw, "--out", out, *flag]) == 0
        r = observe(out)
        st = {p.name: p for p in r.results}
        if want is None:
            assert st["priority_inversion"].status == st["blocking"].status == "unknown" and r.exit_code == 3
            assert "records no stream priorities" in st["priority_inversion"].summary
        else:
            assert st["priority_inversion"].status == "info" and st["priority_inversion"].count == want


def test_replay_repeats_the_source_and_leaves_priority_properties_unknown(tmp_path, capsys):
    raw = os.path.join(REAL, "raw", "kineto_priority.json.gz")
    out = str(tmp_path / "k.jsonl.gz")
    assert main(["import", raw, "--out", out]) == 0
    capsys.readouterr()
    assert main(["replay", out, "--no-progress", "--json"]) == 3
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "conforms"
    r = {x["property"]: x for x in doc["results"]}
    assert r["blocks_by_priority"]["verdict"] == "unknown" and "reads prio" in r["blocks_by_priority"]["reason"]
    assert r["slots_conserved"]["verdict"] == "holds_to_bound"
    assert any("records no stream priorities" in w for w in doc["warnings"])


def test_a_malformed_source_missing_is_read_safely(tmp_path, capsys):
    bad = {"missing": [{"field": "stream_priority", "reason": 5, "needed_by": 3, "remedy": ["x"]}, "junk", {"no": 1}]}
    res, r = check(k(1, 0, 0, 10, 20) + k(2, 1, 5, 12, 30), bad)
    p = res["priority_inversion"]
    assert p.status == "unknown" and "stream priorities" in p.summary and "--stream-priority" in p.to_json()["remedy"]
    assert [m["field"] for m in r.missing] == ["stream_priority"]

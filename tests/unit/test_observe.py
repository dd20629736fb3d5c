"""traces/observe.py: each observation property on small hand-built traces (holding and violated),
and the `gpcheck check TRACE` entry point (exit codes, JSON, bad input)."""

from __future__ import annotations

import json

import pytest

from gpcheck.spec.errors import TraceError, UsageError
from gpcheck.traces.format import Event, TraceHeader, write_trace
from gpcheck.traces.observe import ObserveOptions, observe, observe_events, render_text

H = TraceHeader("nvidia_streams", {"S": 2, "P": 6, "Q": 4, "SLOTS": 2})


def k(corr, stream, launch, start, end, prio=0, **meta):
    """The three events of one kernel (end None: never completes)."""
    m = {"corr": corr, "name": meta.pop("name", f"k{corr}"), **meta}
    a = {"stream": stream, "priority": prio}
    evs = [Event("launch", a, None, launch, m), Event("start", a, None, start, m)]
    if end is not None:
        evs.append(Event("end", a, None, end, m))
    return evs


def run(events, props=None, **opts):
    evs = sorted(events, key=lambda e: e.t if e.t is not None else 0)
    evs = [Event(e.action, e.args, e.state, e.t, e.meta, i + 2) for i, e in enumerate(evs)]
    r = observe_events(H, evs, "t.jsonl", props, ObserveOptions(**opts))
    return {p.name: p for p in r.results}, r


def test_clean_trace_holds_everything():
    res, r = run(k(1, 0, 0, 10, 20) + k(2, 0, 1, 20, 30) + k(3, 1, 2, 5, 15))
    # one recorded priority level decides "no inversion possible"; nothing in the trace could show a
    # kernel switched out (no gap, ctx_switch or per-block stamp), so time slicing is undecided
    assert {n: p.status for n, p in res.items()} == {"exactly_once": "ok", "stream_order": "ok",
                                                     "priority_inversion": "ok", "timeslice": "unknown",
                                                     "launch_delay": "ok", "blocking": "ok"}
    assert r.exit_code == 3 and r.kernels == 3 and r.streams == 2
    assert res["timeslice"].missing[0]["field"] == "switch_evidence"
    assert "exactly_once" in render_text(r)


def test_missing_and_duplicate_completion():
    a = {"stream": 0, "priority": 0}
    evs = k(1, 0, 0, 10, None) + k(2, 0, 1, 20, 30) + [Event("end", a, None, 31, {"corr": 2, "name": "k2"})]
    res, r = run(evs, ["exactly_once"])
    ex = res["exactly_once"]
    assert ex.status == "violated" and r.exit_code == 1
    kinds = {f["kind"] for f in ex.findings}
    assert kinds == {"missing_completion", "duplicate_completion"}
    dup = next(f for f in ex.findings if f["kind"] == "duplicate_completion")
    assert "completed 2 times" in dup["message"] and dup["line"] is not None


def test_completion_of_unlogged_launch_and_duplicate_start():
    a = {"stream": 0, "priority": 0}
    m = {"corr": 9, "name": "x"}
    evs = [Event("start", a, None, 5, m), Event("start", a, None, 6, m), Event("end", a, None, 7, m)]
    res, _ = run(evs, ["exactly_once"])
    assert {f["kind"] for f in res["exactly_once"].findings} == {"unlogged_launch", "duplicate_start"}


def test_logical_reexecution_and_loss():
    # be:k4 completed fully twice (relaunch after the rewind); be:k5 killed and never relaunched
    evs = (k(1, 0, 0, 10, 20, kernel="be:k4", grid=8, work=8) + k(2, 0, 1, 20, 30, kernel="be:k5", grid=8, work=3)
           + k(3, 0, 2, 30, 40, kernel="be:k4", grid=8, work=8) + k(4, 0, 3, 40, 50, kernel="be:k6", grid=8, work=0)
           + k(5, 0, 4, 50, 60, kernel="be:k6", grid=8, work=8))
    res, _ = run(evs, ["exactly_once"])
    f = {x["kind"]: x for x in res["exactly_once"].findings}
    assert set(f) == {"re_execution", "loss"}
    assert f["re_execution"]["kernel"] == "be:k4" and f["re_execution"]["work"] == 16 and f["re_execution"]["launches"] == [1, 3]
    assert f["loss"]["kernel"] == "be:k5"
    assert "ran twice" in res["exactly_once"].summary


def test_logical_kernel_without_work_counts_completions():
    evs = k(1, 0, 0, 10, 20, kernel="a", grid=4) + k(2, 0, 1, 20, 30, kernel="a", grid=4)
    res, _ = run(evs, ["exactly_once"])
    assert [x["kind"] for x in res["exactly_once"].findings] == ["re_execution"]


def test_stream_order_overlap_and_out_of_order():
    res, _ = run(k(1, 0, 0, 10, 20) + k(2, 0, 1, 15, 30), ["stream_order"])
    f = res["stream_order"].findings
    assert res["stream_order"].status == "violated" and f[0]["kind"] == "overlap" and f[0]["overlap_ns"] == 5
    res, _ = run(k(1, 0, 0, 30, 40) + k(2, 0, 1, 10, 20), ["stream_order"])
    assert [x["kind"] for x in res["stream_order"].findings] == ["out_of_order"]
    res, _ = run(k(1, 0, 0, 10, 20) + k(2, 0, 1, 18, 30), ["stream_order"], overlap_tolerance_ns=1)
    assert res["stream_order"].status == "violated"
    res, _ = run(k(1, 0, 0, 10, 20) + k(2, 0, 1, 18, 30), ["stream_order"], overlap_tolerance_ns=2)
    assert res["stream_order"].status == "ok"


def test_start_before_launch():
    a = {"stream": 0}
    m = {"corr": 1}
    evs = [Event("start", a, None, 5, m), Event("launch", a, None, 6, m), Event("end", a, None, 7, m)]
    res, _ = run(evs, ["stream_order"])
    assert [x["kind"] for x in res["stream_order"].findings] == ["start_before_launch"]


def test_priority_inversion_windows():
    # stream 1 (priority 5): h1 launched at 100 while h0 runs until 200; low kernel l2 starts at 190,
    # so h1 (eligible at 200) waits until l2's wave frees slots at 300: window [200, 300]
    evs = (k(1, 0, 0, 0, 190, prio=0, name="l") + k(2, 0, 1, 190, 400, prio=0, name="l")
           + k(10, 1, 50, 60, 200, prio=5, name="h") + k(11, 1, 100, 300, 350, prio=5, name="h"))
    res, _ = run(evs, ["priority_inversion"])
    pi = res["priority_inversion"]
    assert pi.status == "info" and pi.count == 1
    w = pi.findings[0]
    assert (w["start"], w["end"], w["duration_ns"], w["queued_ns"]) == (200, 300, 100, 200)
    assert pi.worst == w
    res, r = run(evs, ["priority_inversion"], max_inversion_ns=50)
    assert res["priority_inversion"].status == "violated" and r.exit_code == 1
    res, _ = run(evs, ["priority_inversion"], max_inversion_ns=100)
    assert res["priority_inversion"].status == "info"


def test_no_inversion_when_lower_started_before_launch_or_equal_priority():
    evs = k(1, 0, 0, 0, 100, prio=0) + k(2, 1, 10, 100, 150, prio=5)
    res, _ = run(evs, ["priority_inversion"])
    assert res["priority_inversion"].status == "ok"
    evs = k(1, 0, 0, 20, 100, prio=3) + k(2, 1, 10, 100, 150, prio=3)
    res, _ = run(evs, ["priority_inversion"])
    assert "fewer than two" in res["priority_inversion"].summary


def gaps(corr, pid, starts, length, blocks=2):
    return [Event("gap", {}, None, s + b, {"corr": corr, "pid": pid, "block": b, "length_ns": length})
            for s in starts for b in range(blocks)]


def test_timeslice_gaps_overlap_and_stretch():
    ms = 1_000_000
    evs = (k(1, 0, 0, 0, 30 * ms, pid=1, name="A") + k(1, 1, 0, 1 * ms, 31 * ms, pid=2, name="B")
           + gaps(1, 1, [2 * ms, 6 * ms, 10 * ms], int(2.4 * ms)))
    res, _ = run(evs, ["timeslice"])
    ts = res["timeslice"]
    kinds = [f["kind"] for f in ts.findings]
    assert kinds == ["switched_out", "cross_context_overlap"] and ts.status == "info"
    so = ts.findings[0]
    assert so["periods"] == 3 and so["max_ns"] == int(2.4 * ms) + 1 and so["median_slice_ns"] == int(1.6 * ms) - 1
    assert ts.findings[1]["overlap_ns"] == 29 * ms
    res, r = run(evs, ["timeslice"], max_gap_ns=2 * ms)
    assert res["timeslice"].status == "violated" and r.exit_code == 1
    # small gaps (warp-scheduling noise) are ignored; stretched kernels are reported
    evs = (k(1, 0, 0, 0, ms) + k(2, 0, 0, ms, 2 * ms) + k(3, 0, 0, 2 * ms, 3 * ms) + k(4, 0, 0, 3 * ms, 6 * ms)
           + gaps(1, None, [100], 150_000))
    for e in evs:
        e.meta["name"] = "same"
    res, _ = run(evs, ["timeslice"])
    assert [f["kind"] for f in res["timeslice"].findings] == ["stretched"]
    assert res["timeslice"].findings[0]["excess_ns"] == 2 * ms


def test_context_switch_records():
    evs = k(1, 0, 0, 10, 20) + [Event("ctx_switch", {}, None, 12, {"contextId": 3}),
                                 Event("ctx_switch", {}, None, 15, {"contextId": 3})]
    res, _ = run(evs, ["timeslice"])
    assert res["timeslice"].findings[0]["count"] == 2


def test_fifo_matching_without_correlation_ids():
    a = {"stream": 0}
    evs = [Event("launch", a, None, 0), Event("launch", a, None, 1), Event("start", a, None, 2),
           Event("end", a, None, 3), Event("start", a, None, 4)]
    res, _ = run(evs, ["exactly_once"])
    assert [f["kind"] for f in res["exactly_once"].findings] == ["missing_completion"]


def test_untimed_trace():
    a = {"stream": 0, "priority": 0}
    evs = [Event("launch", a, None, None, {"corr": 1}), Event("start", a, None, None, {"corr": 1}),
           Event("end", a, None, None, {"corr": 1})]
    r = observe_events(H, evs, "t")
    st = {p.name: p.status for p in r.results}
    assert st == {"exactly_once": "ok", "stream_order": "ok", "priority_inversion": "unknown", "timeslice": "unknown",
                  "launch_delay": "unknown", "blocking": "unknown"}


def test_bad_input():
    with pytest.raises(TraceError, match="needs args.stream"):
        observe_events(H, [Event("start", {}, None, 1, {}, 7)], "t.jsonl")
    with pytest.raises(TraceError, match=r"t.jsonl:3: a 'gap' event needs"):
        observe_events(H, [Event("gap", {}, None, 1, {}, 3)], "t.jsonl")
    with pytest.raises(UsageError, match="unknown observation property"):
        observe_events(H, [], "t", ["fairness"])


def test_check_command(tmp_path, capsys):
    from gpcheck.checker.cli.commands.observe_cmd import run_observation_check

    good = str(tmp_path / "good.jsonl")
    # `source.missing: []`: the trace states its source recorded everything (NOTE(source-missing))
    write_trace(good, TraceHeader(H.model, H.constants, extra={"source": {"missing": []}}), k(1, 0, 0, 10, 20))
    assert observe(good).exit_code == 0
    assert run_observation_check(good, None, False) == 0
    assert "exactly_once" in capsys.readouterr().out
    bad = str(tmp_path / "bad.jsonl.gz")
    write_trace(bad, H, k(1, 0, 0, 10, None))
    assert run_observation_check(bad, ["exactly_once"], True) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["exit_code"] == 1 and [r["property"] for r in out["results"]] == ["exactly_once"]
    assert out["results"][0]["findings"][0]["kind"] == "missing_completion"
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"gpcheck_trace": 1}\n{"action": "start", "args": {"stream": 0}\n')
    assert run_observation_check(str(broken), None, False) == 2
    assert "broken.jsonl:2" in capsys.readouterr().err
    assert run_observation_check(good, ["nope"], False) == 2

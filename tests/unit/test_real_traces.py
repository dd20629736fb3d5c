"""The real traces in traces/corpus/real/ (recorded on an H200, see its README): they import to
exactly the committed observation traces, the checks find what the README says, the rewind
recordings are flagged by exactly-once exactly when the device's own execution counters say a
kernel ran twice, and the priority traces replay against the bundled model nvidia_streams."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from gpcheck.traces.format import Event, TraceWriter, read_trace, write_trace
from gpcheck.traces.importers import import_trace
from gpcheck.traces.observe import observe

REAL = os.path.join(os.path.dirname(__file__), "..", "..", "traces", "corpus", "real")
TRACES = ["priority_high_vs_low", "priority_equal", "kineto_priority", "rewind_mid_reef", "rewind_mid_port",
          "rewind_after_finish", "timeslice_two_processes", "cupti_probe_records"]
LARGE = ["kineto_train_infer_priority", "kineto_train_infer_equal", "timeslice_many_kernels"]
# issue 31's mechanism recordings (H100; README "Mechanism recordings"); tests in test_real_mechanisms.py
MECHANISMS = ["rewind_early_reef", "rewind_cap3_reef", "rewind_cap3_port", "rewind_two_rt_reef", "rewind_two_rt_port",
              "timeslice_three_processes", "timeslice_unequal_lengths", "timeslice_three_mixed",
              "blp_hip_long_lc", "blp_hip_short_lc", "blp_hip_two_lc", "blp_cuda_one_lc", "blp_cuda_two_lc_apart",
              "blp_cuda_handover_race", "xsched_l1_w1", "xsched_l1_w4", "xsched_l1_w8", "xsched_l1_w8_rt_priority"]
OVERRIDES = {"kineto_priority": {"14": -5}, "kineto_train_infer_priority": {"14": -5},
             "kineto_train_infer_equal": {"14": 0}}


def path(name: str, raw: bool = False) -> str:
    return os.path.join(REAL, "raw", f"{name}.json.gz") if raw else os.path.join(REAL, f"{name}.jsonl.gz")


# Slow (0.4 to 2.5 s of CPU each): the two realistic-size Kineto recordings (19,491 events each;
# kineto_priority, the same importer, stays, and test_kineto_stream.py's
# test_synthetic_trace_with_gzip_and_both_formats streams 500 kernels through it in ten chunks),
# timeslice_many_kernels (the four other time-slice recordings stay) and four of the six blp
# recordings (blp_cuda_one_lc and blp_hip_two_lc, one of each runtime, stay)
SLOW_IMPORTS = {"kineto_train_infer_priority", "kineto_train_infer_equal", "timeslice_many_kernels",
                "blp_cuda_handover_race", "blp_cuda_two_lc_apart", "blp_hip_short_lc", "blp_hip_long_lc"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_IMPORTS else n
                                  for n in TRACES + LARGE + MECHANISMS])
def test_raw_imports_to_the_committed_trace(tmp_path, name):
    header, events = import_trace(path(name, raw=True), "auto", OVERRIDES.get(name))
    out = str(tmp_path / f"{name}.jsonl.gz")
    with TraceWriter(out, header) as w:
        for e in events:
            w.write_event(e)
    assert open(out, "rb").read() == open(path(name), "rb").read()


def statuses(name: str) -> dict[str, str]:
    return {r.name: r.status for r in observe(path(name)).results}


def test_priority_traces():
    r = observe(path("priority_high_vs_low"))
    st = {p.name: p for p in r.results}
    assert st["exactly_once"].status == "ok" and st["stream_order"].status == "ok"
    pi = st["priority_inversion"]
    assert pi.count == 3 and all(990_000 < w["duration_ns"] < 1_010_000 for w in pi.findings)
    assert statuses("priority_equal") == {"exactly_once": "ok", "stream_order": "ok", "priority_inversion": "ok",
                                          "timeslice": "ok", "launch_delay": "ok", "blocking": "ok"}


def test_kineto_agrees_with_the_in_kernel_record_of_the_same_run():
    rec = [w["duration_ns"] for w in {p.name: p for p in observe(path("priority_high_vs_low")).results}
           ["priority_inversion"].findings]
    kin = {p.name: p for p in observe(path("kineto_priority")).results}
    assert kin["exactly_once"].status == "ok" and kin["stream_order"].status == "ok"
    got = [w["duration_ns"] for w in kin["priority_inversion"].findings]
    assert len(got) == len(rec) == 3
    assert all(abs(a - b) < 5_000 for a, b in zip(got, rec))  # CUPTI vs %globaltimer: within 5 us


@pytest.mark.parametrize("name", ["rewind_mid_reef", "rewind_mid_port", "rewind_after_finish"])
def test_rewind_flagged_exactly_when_the_device_counters_say_a_kernel_ran_twice(name):
    header, _ = read_trace(path(name))
    c = header.extra["source"]["counters"]
    ran_twice = {f"be:k{k}" for k, done in enumerate(c["completed"]) if done > c["grid"]}
    lost = {f"be:k{k}" for k, done in enumerate(c["completed"]) if done < c["grid"]}
    ex = {p.name: p for p in observe(path(name), ["exactly_once"]).results}["exactly_once"]
    flagged = {f["kernel"] for f in ex.findings if f["kind"] == "re_execution"}
    assert flagged == ran_twice
    assert {f["kernel"] for f in ex.findings if f["kind"] == "loss"} == lost
    assert (ex.status == "violated") == bool(ran_twice or lost)
    # and what the recordings showed on the H200 (README): the port and the R1 scenario re-execute
    assert ran_twice == {"mid_port": {"be:k4", "be:k5", "be:k6"}, "after_finish": {"be:k9", "be:k10", "be:k11"},
                         "mid_reef": set()}[name.removeprefix("rewind_")]


def test_rewind_preempt_event_matches_the_formula():
    header, events = read_trace(path("rewind_mid_reef"))
    p = next(e for e in events if e.action == "preempt").meta
    assert p["kernel_offset_after"] == max(p["launch_offset"] - p["temp"] - p["cap"], p["kernel_offset_before"]) == 4
    relaunched = [e.meta["kernel"] for e in events if e.action == "launch" and e.t > next(
        x.t for x in events if x.action == "resume")]
    assert relaunched == [f"be:k{k}" for k in range(4, 12)]


def test_timeslice_trace():
    ts = {p.name: p for p in observe(path("timeslice_two_processes")).results}["timeslice"]
    kinds = [f["kind"] for f in ts.findings]
    assert kinds.count("switched_out") == 2 and "cross_context_overlap" in kinds
    for f in ts.findings:
        if f["kind"] == "switched_out":
            assert f["periods"] >= 5 and 2_000_000 < f["max_ns"] < 3_000_000
            assert 1_800_000 < f["median_slice_ns"] < 2_400_000


def test_cupti_probe_trace():
    # CUPTI activity records carry no per-block stamps or context switches: time slicing is undecided
    assert statuses("cupti_probe_records") == {"exactly_once": "ok", "stream_order": "ok",
                                               "priority_inversion": "ok", "timeslice": "unknown",
                                               "launch_delay": "ok", "blocking": "info"}
    # no lower kernel started while it was queued, but the running one held the GPU until its
    # first wave ended: blocking by running work, ~7 ms (launched 3 ms into a 10 ms wave)
    b = {p.name: p for p in observe(path("cupti_probe_records")).results}["blocking"]
    assert b.count == 1 and 6_500_000 < b.worst["blocking_ns"] < 7_500_000
    header, events = read_trace(path("cupti_probe_records"))
    assert [s["cuda_priority"] for s in header.extra["source"]["streams"]] == [0, 0, -5]


@pytest.mark.parametrize("name", ["priority_high_vs_low", "kineto_priority", "cupti_probe_records"])
def test_imported_traces_replay_against_nvidia_streams(name, capsys):
    from gpcheck.checker.cli.command import main

    assert main(["replay", path(name), "--max-hidden", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out.get("conforms", out.get("verdict") == "conforms")


def test_a_trace_with_a_lost_completion_does_not_replay(tmp_path, capsys):
    from gpcheck.checker.cli.command import main

    header, events = read_trace(path("priority_equal"))
    first_end = next(i for i, e in enumerate(events) if e.action == "end" and e.args["stream"] == 1)
    lost = events.pop(first_end)
    bad = str(tmp_path / "bad.jsonl")
    write_trace(bad, header, events)
    st = {p.name: p for p in observe(bad).results}
    assert st["exactly_once"].status == "violated" and st["stream_order"].status == "violated"
    assert st["exactly_once"].findings[0]["kind"] == "missing_completion"
    assert st["exactly_once"].findings[0]["kernel"].startswith(lost.meta["name"])
    # the model sees the stream's next kernel start while the previous one never ended
    assert main(["replay", bad, "--max-hidden", "4"]) == 1
    assert "diverges at" in capsys.readouterr().out


def test_training_with_inference_traces():
    """The realistic-size Kineto recordings (README): thousands of kernels, two streams; at CUDA
    priority -5 the inference kernels are sometimes passed by training kernels that started while
    they were queued (at equal priority no inversion is defined: the slow test below)."""
    r = {p.name: p for p in observe(path("kineto_train_infer_priority")).results}
    assert r["exactly_once"].status == "ok" and r["stream_order"].status == "ok"
    assert r["priority_inversion"].count > 100
    assert all(w["duration_ns"] < 1_000_000 for w in r["priority_inversion"].findings)
    header, events = read_trace(path("kineto_train_infer_priority"))
    assert sum(1 for e in events if e.action == "launch") == 6497
    assert [s.get("cuda_priority") for s in header.extra["source"]["streams"]] == [None, -5]


# slow (0.5 s of CPU, the whole equal-priority recording observed); fast: test_priority_traces
# (priority_equal: one level, no inversion possible) and test_cupti_probe_trace (activity records:
# time slicing undecided)
@pytest.mark.slow
def test_training_with_inference_at_equal_priority():
    # imported with --stream-priority 14=0: priorities given, one level: no inversion possible (ok);
    # Kineto records no per-block stamps or context switches: time slicing undecided
    assert statuses("kineto_train_infer_equal") == {"exactly_once": "ok", "stream_order": "ok",
                                                    "priority_inversion": "ok", "timeslice": "unknown",
                                                    "launch_delay": "ok", "blocking": "ok"}


def test_timeslice_many_kernels_trace():
    ts = {p.name: p for p in observe(path("timeslice_many_kernels")).results}
    assert ts["exactly_once"].status == "ok" and ts["stream_order"].status == "ok"
    out = [f for f in ts["timeslice"].findings if f["kind"] == "switched_out"]
    assert len(out) > 20 and all(2_000_000 < f["max_ns"] < 3_000_000 for f in out)
    st = ts["timeslice"].stats  # the slices each process ran for between its switched-out periods
    assert all(1_800_000 < s["running_slices"]["median_ns"] < 2_400_000 for s in st["streams"])
    assert 2_000_000 < st["switched_out"]["median_ns"] < 3_000_000


def test_large_recordings_are_gzip_and_bounded():
    for name in LARGE:
        for p in (path(name), path(name, raw=True)):
            assert open(p, "rb").read(2) == b"\x1f\x8b" and os.path.getsize(p) < 600_000


def test_raw_recordings_are_small_and_gzip():
    for name in TRACES:
        for p in (path(name), path(name, raw=True)):
            assert open(p, "rb").read(2) == b"\x1f\x8b" and os.path.getsize(p) < 200_000
    with gzip.open(path("rewind_mid_port", raw=True)) as f:
        assert json.load(f)["device"]["name"] == "NVIDIA H200"

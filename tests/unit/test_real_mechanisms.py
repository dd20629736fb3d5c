"""Issue 31's recordings of the preemption mechanisms themselves (traces/corpus/real/README.md,
"Mechanism recordings", NVIDIA H100): what each run did on the device, checked from the committed
observation traces against the device's own counters and the host's event log. These are the
ground truth that replaying them against reef_rewind, nvidia_tsg, blp and xsched must explain.
(test_real_traces.py checks that each raw file imports to exactly the committed trace.)"""

from __future__ import annotations

import bisect
import os

import pytest

from gpcheck.traces.format import Event, read_trace
from gpcheck.traces.observe import observe

REAL = os.path.join(os.path.dirname(__file__), "..", "..", "traces", "corpus", "real")


def load(name: str) -> tuple[dict, list[Event]]:
    header, events = read_trace(os.path.join(REAL, f"{name}.jsonl.gz"))
    return header.extra["source"], events


def results(name: str) -> dict:
    return {p.name: p for p in observe(os.path.join(REAL, f"{name}.jsonl.gz")).results}


def host(events: list[Event], action: str) -> list[Event]:
    return [e for e in events if e.action == action]


def first(events: list[Event], action: str, kernel: str) -> Event:
    return next(e for e in events if e.action == action and e.meta and e.meta.get("kernel") == kernel)


# ------------------------------------------------------------------ REEF-style rewind (reef_rewind)

RAN_TWICE = {"rewind_early_reef": set(), "rewind_cap3_reef": set(), "rewind_cap3_port": {4, 5, 6, 7},
             "rewind_two_rt_reef": {2}, "rewind_two_rt_port": {3, 4, 5, 6}}


@pytest.mark.parametrize("name", sorted(RAN_TWICE))
def test_rewind_reexecution_is_what_the_device_counted(name):
    src, events = load(name)
    c = src["counters"]
    ran_twice = {k for k, done in enumerate(c["completed"]) if done > c["grid"]}
    assert ran_twice == RAN_TWICE[name]
    assert all(done >= c["grid"] for done in c["completed"])  # nothing lost
    ex = results(name)["exactly_once"]
    assert {f["kernel"] for f in ex.findings if f["kind"] == "re_execution"} == {f"be:k{k}" for k in ran_twice}
    assert (ex.status == "violated") == bool(ran_twice)
    # every preemption rewound by GPreempt's formula, and the resume relaunched exactly kernel_offset..N-1
    pre, res = host(events, "preempt"), host(events, "resume")
    assert len(pre) == len(res) == len(src["params"].get("rt_arrivals_ns", [0]))
    for p, r in zip(pre, res):
        m = p.meta
        assert m["kernel_offset_after"] == max(m["launch_offset"] - m["temp"] - m["cap"], m["kernel_offset_before"])
        assert r.meta["kernel_offset"] == m["kernel_offset_after"]
        nxt = next((q.t for q in pre if q.t > r.t), float("inf"))
        relaunched = [e.meta["kernel"] for e in events if e.action == "launch" and r.t < e.t < nxt
                      and e.meta["kernel"].startswith("be:")]
        assert relaunched[: src["params"]["n"] - m["kernel_offset_after"]] == \
            [f"be:k{k}" for k in range(m["kernel_offset_after"], src["params"]["n"])][: len(relaunched)]


def test_rewind_with_honouring_kernels_still_reruns_a_kernel_that_had_finished():
    """rewind_two_rt_reef: the first RT arrival rewound to k2 (launch_offset 11 - temp 7 - CAP 2),
    assuming k2 and k3 in flight; but the worker held k4, waiting for a slot, so only k3 was: k2
    had already completed on the GPU, and the flag cannot stop a kernel that has ended."""
    src, events = load("rewind_two_rt_reef")
    p = host(events, "preempt")[0]
    assert (p.meta["kernel_offset_after"], p.meta["held_by_worker"], p.meta["cap"]) == (2, 4, 2)
    k2_end = first(events, "end", "be:k2")
    assert k2_end.t < p.t  # k2's first launch ended before the preemption
    assert results("rewind_two_rt_reef")["exactly_once"].findings[0]["kernel"] == "be:k2"


# ------------------------------------------------------------------ time slicing (nvidia_tsg)

@pytest.mark.parametrize("name,procs", [("timeslice_three_processes", 3), ("timeslice_unequal_lengths", 2),
                                        ("timeslice_three_mixed", 3)])
def test_timeslice_between_processes(name, procs):
    src, events = load(name)
    assert len({s["pid"] for s in src["streams"]}) == procs
    r = results(name)
    assert r["exactly_once"].status == "ok" and r["stream_order"].status == "ok"
    ts = r["timeslice"]
    out = [f for f in ts.findings if f["kind"] == "switched_out"]
    assert out and {f["kernel"].split(" ")[0] for f in out} <= {"A", "B", "C"}
    gaps = [e.meta["length_ns"] for e in host(events, "gap")]
    assert gaps and all(g > 20_000 for g in gaps)
    # a process waits while the others each run one ~2.06 ms slice: ~2.5 ms with two, ~4.75 ms with three
    longest = max(f["max_ns"] for f in out)
    assert (4_500_000 < longest < 5_000_000) if procs == 3 else (2_300_000 < longest < 2_700_000)
    slices = [f["median_slice_ns"] for f in out if f["periods"] >= 2]
    assert slices and all(1_900_000 < s < 2_200_000 for s in slices)


# ------------------------------------------------------------------ block-level preemption (blp)

BLP = ["blp_hip_long_lc", "blp_hip_short_lc", "blp_hip_two_lc", "blp_cuda_one_lc", "blp_cuda_two_lc_apart",
       "blp_cuda_handover_race"]
STALE = {"blp_hip_short_lc": {18}, "blp_cuda_handover_race": {24}}


@pytest.mark.parametrize("name", BLP)
def test_blp_logical_blocks(name):
    src, events = load(name)
    c, lb = src["counters"], src["params"]["logical_blocks"]
    lblocks = host(events, "lblock")
    # the device ran every logical block exactly once (claims beyond lb are exhausted checks)
    assert c["done"] == [lb] * c["n"] and len(lblocks) == lb * c["n"]
    assert {(e.meta["kernel"], e.meta["lblock"]) for e in lblocks} == {(k, i) for k in range(c["n"]) for i in range(lb)}
    # every kernel's blocks finally found its claim counter exhausted (a relaunch of an already done
    # kernel adds such claims: the counters are never reset)
    assert all(x >= lb + src["params"]["persistent_blocks"] for x in c["executed"])
    assert results(name)["exactly_once"].status == "ok"
    # `stale` (the device read its predecessor's done counter below lb) agrees with the timestamps
    ends: dict[int, list[int]] = {}
    for e in lblocks:
        ends.setdefault(e.meta["kernel"], []).append(e.meta["t_end"])
    for v in ends.values():
        v.sort()
    for e in lblocks:
        k = e.meta["kernel"]
        by_time = k > 0 and bisect.bisect_right(ends[k - 1], e.t) < lb
        assert e.meta["stale"] == by_time
    assert {e.meta["kernel"] for e in lblocks if e.meta["stale"]} == STALE.get(name, set())


def test_blp_hip_race_flag_cleared_before_the_stream_drained():
    """HIP client: resume_be clears the flag before it synchronises the BE stream; with a 20 us LC the
    flag was clear again while k18 was still queued behind the stopped k7 (k8..k17 had returned on the
    flag without work), so k18 ran all its logical blocks before k8..k17 (stale), and the relaunch
    from the stop index ran k8..k17 after it."""
    src, events = load("blp_hip_short_lc")
    done = host(events, "lc_done")[0]  # the clear was written after this (its own event is logged after the write)
    clear = host(events, "flag_clear")[0]
    stop = host(events, "stop_read")[0]
    assert stop.meta["stop"] == 7 and done.t < clear.t < stop.t
    stale = [e for e in host(events, "lblock") if e.meta["stale"]]
    assert done.t < min(e.t for e in stale) < stop.t
    lbl = host(events, "lblock")
    first_of = {k: min(e.t for e in lbl if e.meta["kernel"] == k) for k in range(8, 18)}
    assert all(t > max(e.meta["t_end"] for e in stale) for t in first_of.values())  # k8..k17 ran after k18
    # the long-LC control: the stream had drained (every queued kernel returned on the flag) before the clear
    _, ctrl = load("blp_hip_long_lc")
    assert not any(e.meta["stale"] for e in host(ctrl, "lblock"))


def test_blp_cuda_handover_race_overwrites_the_second_lc_flag():
    """CUDA client, two LC tasks: LC1 arrived inside LC0's (widened) window between its fetch_sub and
    its flag clear, set the flag, and LC0's late clear overwrote it: the BE kernels relaunched meanwhile
    ran on (k24 onwards, out of order) and LC1 waited for the BE stream to drain."""
    src, events = load("blp_cuda_handover_race")
    arrive1 = next(e for e in host(events, "lc_arrive") if e.meta["lc"] == 1)
    set1 = next(e for e in host(events, "flag_set") if e.meta["by"] == "lc:1")
    clear0 = next(e for e in host(events, "flag_clear") if e.meta["by"] == "lc:0")
    run1 = next(e for e in host(events, "lc_run") if e.meta["lc"] == 1)
    assert arrive1.t < set1.t < clear0.t < run1.t
    ran_unflagged = [e for e in host(events, "lblock") if clear0.t < e.t < run1.t]
    assert len(ran_unflagged) > 1000  # BE work done while LC1 waited with its flag overwritten
    # the control run: LC0 had cleared the flag before LC1 arrived, and no BE block ran while LC1 waited
    _, ctrl = load("blp_cuda_two_lc_apart")
    c0 = next(e for e in host(ctrl, "flag_clear") if e.meta["by"] == "lc:0")
    a1 = next(e for e in host(ctrl, "lc_arrive") if e.meta["lc"] == 1)
    s1 = next(e for e in host(ctrl, "flag_set") if e.meta["by"] == "lc:1")
    r1 = next(e for e in host(ctrl, "lc_run") if e.meta["lc"] == 1)
    assert c0.t < a1.t
    assert not any(s1.t + 100_000 < e.t < r1.t for e in host(ctrl, "lblock"))  # a block started before the flag ends


# ------------------------------------------------------------------ XSched level 1 (xsched)

@pytest.mark.parametrize("name,window", [("xsched_l1_w1", 1), ("xsched_l1_w4", 4), ("xsched_l1_w8", 8),
                                         ("xsched_l1_w8_rt_priority", 8)])
def test_xsched_window(name, window):
    src, events = load(name)
    assert src["params"]["window"] == window
    assert all(e.meta["in_flight"] <= window for e in host(events, "suspend"))
    assert max(e.meta["in_flight"] for e in host(events, "suspend")) >= window - 1
    # the worker never had more than `window` BE kernels launched and not ended
    live = peak = 0
    for e in events:
        if e.meta and str(e.meta.get("kernel", "")).startswith("be:"):
            live += {"launch": 1, "end": -1}.get(e.action, 0)
            peak = max(peak, live)
    assert peak <= window
    # no BE command launched between a suspend and its resume
    for s, r in zip(host(events, "suspend"), host(events, "resume")):
        assert not any(e.action == "launch" and e.meta["kernel"].startswith("be:") and s.t < e.t < r.t for e in events)
    # measured: the RT command waited for the running BE command only (one T = 0.5 ms), not for the W in flight
    for a in host(events, "rt_arrive"):
        start = first(events, "start", f"rt:{a.meta['rt']}")
        assert 0 < start.t - a.t < 600_000
    assert results(name)["exactly_once"].status == "ok"

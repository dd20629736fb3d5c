"""Re-timed library models (docs/timed.md, "Re-timed models"): the durations overlap and hardware
steps are urgent, so the latencies no longer contain what sequential cost added up."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpcheck.checker import verify
from gpcheck.checker.core.verdict import Verdict

ROOT = Path(__file__).resolve().parents[2]
BLP = "blp"  # spec/models/blp.gpspec, timed (it was docs/timed/blp_timed.gpspec)


def _span(r):
    return r.detail["min"], r.detail["max"]


def test_blp_drain_is_urgent_so_the_latency_is_the_block_in_flight():
    """Sequential cost: rt_preempt_latency 0..20,600 us (the LC task's own 20 ms run inside it);
    timed: 0..51 us, the logical block in flight when the daemon sets the flag (50..51 us, fitted on
    the H100 recordings, issue 31; 0..100 with the old parameter block)."""
    r = verify(BLP)
    assert _span(r.result("rt_preempt_latency")) == (0, 51)
    assert _span(r.result("be_resume_delay")) == (435, 491)  # the LC run (fitted), then the resume at once
    for name in ("no_reexecution", "no_loss", "preemption_effective", "bounded_inversion", "no_starvation", "deadlock"):
        assert r.result(name).verdict is Verdict.PROVED, name
    # the HIP skip needs BE blocks still draining when the flag is cleared: unreachable with an LC
    # run longer than a logical block, reached when the LC task ends within one
    assert r.result("no_skip").verdict is Verdict.PROVED
    assert verify(BLP, consts={"LC_MIN_US": 0, "LC_EXEC_US": 50}, properties=["no_skip"]).result("no_skip").verdict is Verdict.VIOLATED


def test_blp_cuda_hand_over_race_stays_with_two_lc_tasks():
    r = verify(BLP, consts={"PLATFORM": 1, "MAXLC": 2},
               properties=["preemption_effective", "no_skip", "rt_preempt_latency"])
    assert r.result("preemption_effective").verdict is Verdict.VIOLATED
    assert r.result("no_skip").verdict is Verdict.VIOLATED
    assert _span(r.result("rt_preempt_latency")) == (0, 255)  # five logical blocks of 50..51 us (0..500 at 100 us)


CWSR = "cwsr"  # re-timed in spec/models itself (was docs/timed/cwsr_timed.gpspec)


def test_cwsr_queues_save_in_parallel_and_the_save_grows_with_the_saved_waves():
    """Sequential cost (bundled cwsr): rt_preempt_latency Q x 5 us. Timed: the saves overlap, each
    SAVE_US per saved wave; a queue with nothing live only writes its HQD back (0)."""
    small = {"N": 1, "L": 1}
    r = verify(CWSR, consts={**small, "Q": 2}, assumption_use=False,
               properties=["rt_preempt_latency", "no_reexecution", "no_starvation"])
    assert _span(r.result("rt_preempt_latency")) == (0, 5)  # 5 us for two queues, not 10
    assert r.result("no_reexecution").verdict is Verdict.PROVED
    assert r.result("no_starvation").verdict is Verdict.PROVED  # liveness in the timed semantics
    two_waves = verify(CWSR, consts={**small, "Q": 1, "W": 2}, assumption_use=False, properties=["rt_preempt_latency"])
    assert _span(two_waves.result("rt_preempt_latency")) == (0, 10)  # two waves' contexts: 2 x SAVE_US


KFD_SCHED = "kfd_sched"  # re-timed in spec/models itself (was docs/timed/kfd_sched_timed.gpspec)


def test_kfd_sched_timed_keeps_the_safety_findings():
    """kfd_sched on the timed cwsr (urgent trap, parallel saves), at 1 us ticks (docs/timed.md, "The
    AMD models": the zone engine's exact graph grows with the tick's size): the seeds' doorbell read
    misses HP, the real rptr finds it and the HWS unmap disturbs HP, as in the bundled model."""
    r = verify(KFD_SCHED, consts={"TICK_US": 1}, assumption_use=False, properties=["hp_detected", "bounded_inversion"])
    assert r.result("hp_detected").verdict is Verdict.VIOLATED
    assert r.result("bounded_inversion").verdict is Verdict.PROVED
    r = verify(KFD_SCHED, consts={"TICK_US": 1, "RPTR_READ": 1}, assumption_use=False,
               properties=["hp_undisturbed", "bounded_inversion", "no_reexecution"])
    assert r.result("hp_undisturbed").verdict is Verdict.VIOLATED
    assert r.result("bounded_inversion").verdict is Verdict.PROVED
    assert r.result("no_reexecution").verdict is Verdict.PROVED


@pytest.mark.slow
def test_kfd_sched_timed_trap_is_urgent_so_the_preemption_is_the_save():
    """The sequential kfd_sched's rt_preempt_latency held an LP wave's 2.5 ms ticks before its save
    trap (issue 29: 5,010 us); with the trap urgent it is the parallel save of one wave per queue."""
    r = verify(KFD_SCHED, consts={"TICK_US": 1, "RPTR_READ": 1}, assumption_use=False, properties=["rt_preempt_latency"])
    assert _span(r.result("rt_preempt_latency")) == (0, 5)

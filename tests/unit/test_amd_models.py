"""The AMD mechanisms the field compares against (issue 32, item 4): each bundled model's headline
finding, checked by the timed engine (docs/timed.md) at the constants that show it.

mes_sched: every KFD queue is in MES's NORMAL band, so an RT queue waits a whole 10 ms process quantum;
a hung queue escalates to a whole-GPU reset unless MES can reset single queues (GC 12.1).
hws_oversub: the chained runlist time-slices processes by quantum, whatever the queue priority.
kfd_evict: the eviction fence comes after the CWSR save; the restore waits 100 ms; HWS disturbs
every process."""

from __future__ import annotations

import functools

import pytest

from gpcheck.checker import Report, Result, Verdict, verify

P, V = Verdict.PROVED, Verdict.VIOLATED


@functools.lru_cache(maxsize=None)
def _run(model: str, consts: tuple[tuple[str, int], ...], props: tuple[str, ...]) -> Report:
    return verify(model, consts=dict(consts), properties=list(props))


def res(model: str, prop: str, **consts: int) -> Result:
    return _run(model, tuple(sorted(consts.items())), (prop,)).result(prop)


def span(r: Result) -> tuple[int | None, int | None]:
    return r.detail.get("min"), r.detail.get("max")


def test_mes_rt_queue_waits_a_process_quantum_because_kfd_uses_the_normal_band() -> None:
    r = res("mes_sched", "rt_preempt_latency")
    assert r.verdict is P and span(r) == (0, 10_005)            # PROC_QUANTUM_US + SAVE_US


@pytest.mark.slow
def test_mes_rt_queue_wait_follows_the_band_and_the_quantum() -> None:
    r = res("mes_sched", "rt_preempt_latency", RT_LEVEL=4)       # a REALTIME gang: band preemption
    assert r.verdict is P and span(r) == (0, 5)
    r = res("mes_sched", "rt_preempt_latency", PROC_QUANTUM_US=20_000)
    assert span(r) == (0, 20_005)                                # the quantum is the bound, not the priority


def test_mes_hung_queue_resets_the_gpu_unless_mes_resets_single_queues() -> None:
    assert res("mes_sched", "innocent_survives").verdict is P    # faults off
    r = res("mes_sched", "innocent_survives", HANG=1)            # 7.2.13 on GFX11
    assert r.verdict is V and r.counterexample is not None
    acts = [s.action for s in r.counterexample.steps if s.action]
    assert acts[-3:] == ["remove_timeout", "suspend_timeout", "gpu_reset"], acts
    r = res("mes_sched", "innocent_survives", HANG=1, MES_RESET=0)   # 6.12.117: reset at the first timeout
    assert r.verdict is V and [s.action for s in r.counterexample.steps if s.action][-2:] == ["remove_timeout", "gpu_reset"]
    assert res("mes_sched", "innocent_survives", HANG=1, MES_RESET=2).verdict is P   # GC 12.1 detect-and-reset
    assert res("mes_sched", "queue_reset_only", HANG=1, MES_RESET=2).verdict is Verdict.REACHED
    assert res("mes_sched", "reset_reported", HANG=1).verdict is P


def test_mes_eviction_waits_for_the_timeouts_and_a_hang_goes_unnoticed_until_then() -> None:
    assert span(res("mes_sched", "evict_latency")) == (0, 10)
    assert span(res("mes_sched", "evict_latency", HANG=1)) == (0, 4_200_010)             # REMOVE + SUSPEND
    assert span(res("mes_sched", "evict_latency", HANG=1, MES_RESET=0)) == (0, 2_100_010)
    r = res("mes_sched", "rt_preempt_latency", HANG=1)           # a hung gang keeps the slot
    assert r.verdict is V and r.detail.get("max") is None


def test_hws_chained_runlist_time_slices_whatever_the_priority() -> None:
    r = res("hws_oversub", "rt_preempt_latency")
    assert r.verdict is P and span(r) == (10_005, 10_005)       # (P - M) x (QUANTUM + SAVE)
    assert span(res("hws_oversub", "rt_preempt_latency", P=4)) == (20_010, 20_010)
    assert res("hws_oversub", "chained").verdict is Verdict.REACHED
    assert res("hws_oversub", "chained", P=2).verdict is Verdict.UNREACHABLE   # not oversubscribed
    assert res("hws_oversub", "rt_preempt_latency", P=2).vacuous


def test_kfd_eviction_saves_in_flight_work_before_the_move_and_disturbs_others_under_hws() -> None:
    for prop in ("no_access_during_move", "no_reexecution", "no_loss"):
        assert res("kfd_evict", prop).verdict is P, prop
    assert res("kfd_evict", "move_while_saved").verdict is Verdict.REACHED
    r = res("kfd_evict", "others_undisturbed")
    assert r.verdict is V and [s.action for s in r.counterexample.steps if s.action] == ["memory_pressure", "evict_worker"]
    assert res("kfd_evict", "others_undisturbed", MES=1).verdict is P
    # save + 100 ms + restore; each failed restore_process_bos adds the 100 ms retry and its own run
    r = res("kfd_evict", "be_resume_delay")
    assert span(r) == (101_005, 202_005)
    assert r.counterexample is not None and "restore_failed" in [s.action for s in r.counterexample.steps]
    assert span(res("kfd_evict", "be_resume_delay", FAILS=0)) == (101_005, 101_005)
    assert span(res("kfd_evict", "be_resume_delay", FAILS=2)) == (101_005, 303_005)
    assert span(res("kfd_evict", "evict_latency")) == (5, 9_005)             # 10 ms less the restore
    assert span(res("kfd_evict", "evict_latency", RESTORE_BO_US=12_000)) == (5, 5)   # no protection left

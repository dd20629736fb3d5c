"""The model library's known verdicts (issue 4): every expectation at the default constants, and
at least one non-default setting of every parameter, each with the verdict it is known to have.

Verdicts are established by the explicit engine: a complete exploration without a constraint
is a proof for that instance (NOTE(honest-verdicts) in checker/core/verdict.py)."""

from __future__ import annotations

import functools
from typing import Mapping

import pytest

from gpcheck.checker import Report, Result, Verdict, verify
from gpcheck.checker.regression.library import SHARED, expectation_met, render_matrix, verify_library
from gpcheck.spec import load_spec
from tests.bundled import finished_report, run_folder, shared_verify

MINE = ("reef_rewind", "gpreempt_timeslice", "cwsr", "kfd_sched", "kfd_monitor", "xsched", "reef_flag_race", "gp_hip_suspend", "nvidia_tsg", "nv_query_group", "blp",
        "rt_latency", "nvidia_preempt", "nvidia_mps", "nvidia_partition", "collective_gang", "intel_guc",
        "mes_sched", "hws_oversub", "kfd_evict")
P, V = Verdict.PROVED, Verdict.VIOLATED


@functools.lru_cache(maxsize=None)
def _run(model: str, consts: tuple[tuple[str, int], ...], props: tuple[str, ...] | None) -> Report:
    # verdicts only: which assumptions a proof used is tested in test_assumptions.py and
    # test_proof_cores.py (here it would repeat each search once per declared assumption)
    return verify(model, consts=dict(consts), properties=props, max_states=500_000, assumption_use=False)


def run(model: str, props: tuple[str, ...] | None = None, **consts: int) -> Report:
    """Verify `props` (default: all) of one instance; cached per instance and property set."""
    return _run(model, tuple(sorted(consts.items())), props)


def res(model: str, prop: str, **consts: int) -> Result:
    return run(model, (prop,), **consts).result(prop)


def actions(r: Result) -> list[str]:
    assert r.counterexample is not None
    return [s.action for s in r.counterexample.steps if s.action is not None]


# ------------------------------------------------------------------ defaults and expectations


@pytest.mark.parametrize("model", MINE)
def test_every_expectation_holds_at_defaults(model: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    m = load_spec(model)
    if model == "cwsr":  # the verdicts only: the library run's report if another test made it already,
        # else a run without its proofs' assumptions (finding them adds 20 s of CPU, 40 s on a cold cache)
        shared = finished_report(model, run_folder(tmp_path_factory))
        rep = shared if shared is not None else run(model)
    else:  # the run the library run, the docs and the plugin's expectations share (tests/bundled.py)
        from gpcheck.checker.api import model_api

        with shared_verify(run_folder(tmp_path_factory)):
            rep = model_api.verify(model)
    assert rep.states is not None and rep.states <= 50_000, "keep the library small at defaults"
    for e in m.expectations:
        r = rep.result(e.property)
        assert expectation_met(e.verdict, r.verdict), (e.property, e.verdict, r.verdict, r.reason)
    for r in rep.results:
        if r.property in ("deadlock", "range"):  # no deadlock check where the model allows deadlock
            assert r.verdict.holds, r


@pytest.mark.parametrize("model", MINE)
def test_every_property_has_an_expectation_and_every_constant_a_doc(model: str) -> None:
    m = load_spec(model)
    assert {e.property for e in m.expectations} == set(m.property_names())
    assert all(c.doc for c in m.constants), [c.name for c in m.constants if not c.doc]
    assert m.doc, "the comment block after the model line cites the code"


def test_the_shared_vocabulary_is_used_where_meaningful() -> None:
    for model in ("reef_rewind", "nvidia_tsg"):
        assert set(SHARED) <= set(load_spec(model).property_names()), model
    # the CUDA timeslice path has no host-side ring handling: ring_integrity would repeat ring_kept
    assert set(SHARED) - {"ring_integrity"} <= set(load_spec("gpreempt_timeslice").property_names())
    # cwsr is a preemption mechanism without a priority policy: no inversion to bound
    assert set(SHARED) - {"bounded_inversion"} <= set(load_spec("cwsr").property_names())
    for model in ("kfd_sched", "kfd_monitor", "blp"):
        names = set(load_spec(model).property_names())
        assert {"no_reexecution", "no_loss", "bounded_inversion", "no_starvation"} <= names


# ------------------------------------------------------------------ acceptance (issue 4)


def test_cwsr_exactly_once_is_proved() -> None:
    # defaults (Q=2), the former single-queue default, unbounded preemptions, and many waves
    for consts in ({}, {"Q": 1, "N": 3, "W": 2}, {"MAXP": 0}, {"Q": 1, "N": 3, "MAXP": 3, "W": 3, "L": 2}):
        rep = run("cwsr", ("no_reexecution", "no_loss"), **consts)  # one search proves both
        assert rep.result("no_reexecution").verdict is P and rep.result("no_loss").verdict is P, consts


# mode 1 at the defaults (the escalation test below reuses its search), mode 2 on one queue (the
# same lost wave and reset, 262 states instead of 12,740)
_TIMEOUT_PROPS = ("no_loss", "loss_reported", "no_reexecution")  # one search decides all three


@pytest.mark.parametrize("mode, consts", [pytest.param(1, {}, id="1"), pytest.param(2, {"Q": 1}, id="2-Q=1")])
def test_cwsr_preemption_timeout_loses_work_with_the_reset_in_the_counterexample(mode: int, consts: dict[str, int]) -> None:
    rep = run("cwsr", _TIMEOUT_PROPS, PREEMPT_TIMEOUT=mode, **consts)
    r = rep.result("no_loss")
    assert r.verdict is V and "timeout_reset" in actions(r)
    assert r.counterexample is not None and r.counterexample.steps[-1].state["notified"] is True
    assert rep.result("loss_reported").verdict is P and rep.result("no_reexecution").verdict is P


def test_reef_rewind_reexecutes_with_a_shortest_counterexample() -> None:
    r = res("reef_rewind", "no_reexecution")
    assert r.verdict is V and r.counterexample is not None
    # BFS: no shorter behaviour re-runs a kernel. Timed (26 steps under sequential cost): the packet
    # processor's and the dispatch's urgent steps come at once, so the behaviour takes them all
    assert r.counterexample.length == 44
    steps = actions(r)
    # the preemption's steps appear in the code's order, then the relaunch pass
    order = [steps.index(a) for a in ("flag_write", "clear", "offset", "reset", "flag_sync", "rt_start")]
    assert order == sorted(order) and steps.count("reset") == 3
    assert "relaunch" in steps[steps.index("rt_done"):]


def test_reef_rewind_loss_scenarios() -> None:
    # default parameters (raw kernels, completion read index, no nop): no loss, proved
    assert res("reef_rewind", "no_loss").verdict is P
    # launch-time read index: the running kernel is outside the window the formula covers
    r = res("reef_rewind", "no_loss", READ_AT_LAUNCH=1)
    assert r.verdict is V and "reset" in actions(r)
    # a nop dropped from the host queue is not counted in temp: the restart index is one too late
    r = res("reef_rewind", "no_loss", NOP=3)
    assert r.verdict is V and "reset" in actions(r)
    assert res("reef_rewind", "no_loss", N=5, NOP=3).verdict is V
    # a nop at a position that is never dropped while a window kernel runs is harmless (N=4)
    assert res("reef_rewind", "no_loss", NOP=2).verdict is P
    # flag-honouring kernels: the flag lands before the clear, a kernel exits at entry below the offset
    r = res("reef_rewind", "no_loss", FLAG_HONOURED=1)
    assert r.verdict is V and "flag_land" in actions(r)
    assert actions(r).index("flag_land") < actions(r).index("clear")


# ------------------------------------------------------------------ reef_rewind parameters


# reef_rewind with two resident blocks: one search for what two tests assert of it
_TWO_BLOCKS = ("no_reexecution", "no_loss", "no_stale_input", "reexec_idempotent_only")


def test_reef_rewind_parameters() -> None:
    assert res("reef_rewind", "bounded_inversion", INV_BOUND=8).verdict is V  # the bound 9 is tight
    rep = run("reef_rewind", ("no_reexecution", "no_loss"), CAP=1)  # one search decides both
    assert rep.result("no_reexecution").verdict is V and rep.result("no_loss").verdict is P
    assert res("reef_rewind", "no_loss", N=5).verdict is P
    rep = run("reef_rewind", _TWO_BLOCKS, B=2)
    assert rep.result("no_reexecution").verdict is V and rep.result("no_loss").verdict is P
    # two RT tasks (at N=2: the bound is N's whatever; N=4 took 22 s of CPU, N=3 3 s, N=2 0.6 s)
    rep = run("reef_rewind", ("no_reexecution", "no_loss", "bounded_inversion"), MAXRT=2, N=2)
    assert rep.result("no_reexecution").verdict is V and rep.result("no_loss").verdict is P
    assert rep.result("bounded_inversion").verdict is P
    # RT tasks that keep coming starve the BE task (strict priority), shown as a lasso. Timed, liveness
    # needs the exact zone graph (no inclusion): at N=2 it passes 300,000 zones, so one kernel and
    # durations of 1-2 us (the lasso needs only RT tasks that keep coming, not their lengths)
    r = res("reef_rewind", "no_starvation", MAXRT=0, N=1, CAP=1, RT_EXEC_US=2, BLOCK_US=2, CLEAR_US=1, RESET_US=1)
    assert r.verdict is V and r.counterexample is not None and r.counterexample.loop is not None
    # timed: the CAP+1 resets kill every BE dispatch in flight (the packet processor launches the next
    # window dispatch at once, the following reset kills it), so no BE block runs beside the RT task,
    # flag or no flag (sequential cost let a dispatch wait in the window across the resets: violated)
    assert res("reef_rewind", "preemption_effective").verdict is P
    assert res("reef_rewind", "preemption_effective", FLAG_HONOURED=1).verdict is P


# ------------------------------------------------------------------ the other models' parameters


@pytest.mark.slow  # timed cwsr: 59 s of CPU on the loaded machine; fast: test_cwsr_exactly_once_is_proved, test_timed_models.py
def test_cwsr_parameters() -> None:
    assert res("cwsr", "no_starvation", MAXP=0).verdict is V  # endless preemptions
    assert res("cwsr", "no_starvation", MAXP=4).verdict is P
    for consts in ({"N": 3}, {"Q": 1, "W": 2}, {"L": 1}, {"Q": 2, "N": 1, "W": 2, "L": 2}):
        rep = run("cwsr", **consts)
        assert all(r.verdict is P for r in rep.results if r.kind != "cover"), (consts, rep.results)
    r = res("cwsr", "no_loss", Q=2, N=1, L=2, PREEMPT_TIMEOUT=2)
    assert r.verdict is V


def test_kfd_monitor_parameters() -> None:
    assert res("kfd_monitor", "no_starvation", TIMESLICE=1).verdict is P
    assert res("kfd_monitor", "bounded_inversion", INV_BOUND=4).verdict is V  # T_mon bounds it, tightly
    assert res("kfd_monitor", "bounded_inversion", TIMESLICE=1).verdict is P
    assert res("kfd_monitor", "bounded_inversion", T_MON=10, INV_BOUND=10).verdict is P
    assert res("kfd_monitor", "bounded_inversion", T_MON=10).verdict is V
    assert res("kfd_monitor", "no_starvation", TIMESLICE=1, TS=2).verdict is P
    for consts in ({"RT_WORK": 1}, {"HP_CAP": 4}, {"LP_WORK": 6}):
        assert res("kfd_monitor", "no_loss", **consts).verdict is P
        assert res("kfd_monitor", "no_starvation", **consts).verdict is V


@pytest.mark.slow  # timed kfd_sched: 66 s of CPU on the loaded machine; fast: test_timed_models.py's kfd_sched findings
def test_kfd_sched_on_cwsr() -> None:
    # the seeds' monitor reads rptr as readl(queue->doorbell_ptr), the last wptr rung: no queue ever
    # looks active, so a wake-up with HP and LP both busy does nothing (the default) ...
    r = res("kfd_sched", "hp_detected")
    assert r.verdict is V and actions(r)[-1] == "monitor" and r.counterexample is not None
    last = r.counterexample.steps[-1].state
    assert last["rptr"][1] < last["wptr"][1] and last["in_rl"][0] is True
    assert res("kfd_sched", "hp_undisturbed").verdict is P       # it never preempts, so never disturbs
    # (bounded_inversion still holds: with finite LP work HP waits at most for all of it, which at these
    # sizes is no more than the repaired monitor allows)
    R = {"RPTR_READ": 1}  # the monitor repaired to read the real rptr: the design's other flaws
    assert res("kfd_sched", "hp_detected", **R).verdict is P
    # HWS: the monitor's preemption of LP is cwsr's unmap-all, so an active HP queue is unmapped too
    r = res("kfd_sched", "hp_undisturbed", **R)
    assert r.verdict is V and "monitor" in actions(r)
    # MES removes only the LP queue
    assert res("kfd_sched", "hp_undisturbed", MES=1, **R).verdict is P
    # cwsr's timeouts: a queue that does not save is reset; under HWS that can be the HP queue
    for t in (1, 2):
        r = res("kfd_sched", "hp_survives", PREEMPT_TIMEOUT=t, **R)
        assert r.verdict is V and actions(r)[-1] in ("timeout_reset", "reset_escalate"), t
        assert res("kfd_sched", "no_loss", PREEMPT_TIMEOUT=t, **R).verdict is V
        assert res("kfd_sched", "loss_reported", PREEMPT_TIMEOUT=t, **R).verdict is P
    # MES: a per-queue timeout hits only LP, unless the per-queue reset fails and escalates to a GPU
    # reset (kfd_device_queue_manager.c L2327-2333, cwsr's ESCALATE, on by default)
    assert res("kfd_sched", "hp_survives", MES=1, PREEMPT_TIMEOUT=1, ESCALATE=0, **R).verdict is P
    r = res("kfd_sched", "hp_survives", MES=1, PREEMPT_TIMEOUT=1, **R)
    assert r.verdict is V and actions(r)[-1] == "reset_escalate"
    # a reset HP queue looks active forever (wptr != rptr): the monitor never maps LP again
    r = res("kfd_sched", "no_starvation", PREEMPT_TIMEOUT=1, **R)
    assert r.verdict is V and r.counterexample is not None and r.counterexample.loop is not None
    last = r.counterexample.steps[-1].state
    assert last["loc"][1] == "Dead" and last["in_rl"][0] is False
    assert res("kfd_sched", "hp_survives", MES=1, PREEMPT_TIMEOUT=2, **R).verdict is V  # GPU reset
    # the inversion bound is tight at the defaults (T_MON=2: 4 ticks); with more LP work (N=3) and
    # T_MON=3 it is 2*T_MON: the monitor samples LP's ring empty between two dispatches
    assert res("kfd_sched", "bounded_inversion", INV_BOUND=3, **R).verdict is V
    assert res("kfd_sched", "bounded_inversion", T_MON=3, N=3, INV_BOUND=6, **R).verdict is P
    r = res("kfd_sched", "bounded_inversion", T_MON=3, N=3, INV_BOUND=5, **R)
    assert r.verdict is V and actions(r).count("monitor") == 2


def test_gpreempt_timeslice_parameters() -> None:
    """Timed (issue 29): the switch measured between processes (180..260 us) outlasts the hint's
    100 us lead (SWITCH_TIME), and the inference has no deadline after the hint (usleep, then the
    input copy), so a late one finds BE resident: an inference waits up to BE's slice and two
    switches, with or without the hint."""
    r = res("gpreempt_timeslice", "bounded_inversion")
    assert r.verdict is V and _span(r) == (0, 521)
    assert res("gpreempt_timeslice", "bounded_inversion", HINT=0, INV_BOUND_US=521).verdict is P  # 2 x 260 + 1, tight
    r = res("gpreempt_timeslice", "bounded_inversion", HINT=0, INV_BOUND_US=520)
    assert r.verdict is V and "lc_hint" not in actions(r)
    # BE's timeslice on an unused TSG: BE keeps the engine until its 4 units are done
    assert _span(res("gpreempt_timeslice", "bounded_inversion", WRONG_TSG=2)) == (0, 524)
    assert _span(res("gpreempt_timeslice", "bounded_inversion", TS_BE=2)) == (0, 522)
    # the switch the hint does not hide: at most 99 us, the wait is a late inference's only
    assert _span(res("gpreempt_timeslice", "bounded_inversion", SWITCH_MIN_US=99, SWITCH_MAX_US=99)) == (0, 199)
    # the spin kernels hold the engine until the inference: BE waits up to the LC TSG's 1 s slice
    assert _span(res("gpreempt_timeslice", "be_resume_delay")) == (282, 1_000_520)
    assert _span(res("gpreempt_timeslice", "be_resume_delay", HINT=0)) == (182, 524)
    # endless LC load with a short LC slice: BE still finishes (its slice comes round)
    assert res("gpreempt_timeslice", "no_starvation", MAXLC=0, TS_LC=5).verdict is P


def test_nvidia_tsg_parameters() -> None:
    assert res("nvidia_tsg", "switch_latency", PMODE=1).verdict is V
    assert res("nvidia_tsg", "switch_latency", PMODE=1, SW_BOUND=2).verdict is P  # one block length
    assert res("nvidia_tsg", "switch_latency", PMODE=0).verdict is V
    assert res("nvidia_tsg", "bounded_inversion", INV_BOUND=1).verdict is V  # stream priority: no eviction
    for consts in ({"PMODE": 0}, {"PMODE": 1}, {"DISABLE": 2}, {"S": 3}, {"TS": 1}, {"NB": 1}, {"BLEN": 1}):
        props = ("no_reexecution", "no_loss", "ring_integrity", "no_starvation")
        rep = run("nvidia_tsg", props, **consts)
        for prop in props:
            assert rep.result(prop).verdict is P, (consts, prop)


def test_nv_query_group_parameters() -> None:
    assert res("nv_query_group", "control_authorised", BYPASS=0).verdict is P
    assert res("nv_query_group", "no_silent_misdirection", TWO_CTX=1).verdict is V
    assert res("nv_query_group", "query_isolation", TID_REUSE=1).verdict is V
    assert res("nv_query_group", "query_isolation", TWO_CTX=1).verdict is P
    r = res("nv_query_group", "query_finds_own", AMPERE=0)
    assert r.verdict is V and r.counterexample is not None and r.counterexample.steps[-1].state["g_os"] == 2
    assert res("nv_query_group", "no_silent_misdirection", CH=4).verdict is P


def test_blp_parameters() -> None:
    rep = run("blp", ("preemption_effective", "bounded_inversion", "no_reexecution", "no_loss"), PLATFORM=1, MAXLC=2)
    assert rep.result("preemption_effective").verdict is V  # the flag hand-over race
    assert rep.result("bounded_inversion").verdict is V  # LC2 waits for the whole BE task
    assert rep.result("no_reexecution").verdict is P and rep.result("no_loss").verdict is P
    assert res("blp", "preemption_effective", PLATFORM=1).verdict is P  # one LC: no hand-over
    assert res("blp", "no_skip", PLATFORM=1).verdict is V
    assert res("blp", "bounded_inversion", MAXLC=2).verdict is V  # the daemon blocks in resume's sync
    # timed (docs/timed.md): the HIP skip needs BE blocks still draining when the flag is cleared, so
    # the 20 ms LC run makes it unreachable; an LC task shorter than a logical block reaches it
    for consts in ({"P": 2}, {"N": 2}, {"LB": 1}):
        rep = run("blp", ("no_skip", "no_loss"), **consts)
        assert rep.result("no_skip").verdict is P and rep.result("no_loss").verdict is P
        rep = run("blp", ("no_skip", "no_loss"), LC_MIN_US=0, LC_EXEC_US=50, **consts)
        assert rep.result("no_skip").verdict is V and rep.result("no_loss").verdict is P


def _span(r) -> tuple:
    return r.detail["min"], r.detail["max"]


def test_rt_latency_parameters() -> None:
    # the seeds' AMD column (the defaults), timed (issue 29): the request arrives at any time, so the
    # worst wait is the detector's whole period (the sequential-cost model's integer phase made it
    # 1 us short: 5004 and 25004)
    rep = run("rt_latency")
    assert _span(rep.result("rt_completion")) == (20005, 25005)
    assert _span(rep.result("rt_preempt_latency")) == (5, 5005)
    assert _span(rep.result("be_resume_delay")) == (25005, 25005)  # the resume waits for the next wake-up
    assert res("rt_latency", "rt_completion", LAT_MAX=25004).verdict is V
    # RT work ending exactly at a wake-up: the seeds' 20.01 ms BE delay is the best case; the wake-up
    # at that instant may come first and miss it (a race at one instant), so the worst is a period more
    assert _span(run("rt_latency", EXEC_US=19995).result("be_resume_delay")) == (20005, 25005)
    seeds_gpreempt = dict(DETECT_US=1000, DETECT_COST_US=100, PREEMPT_US=300, RESUME_US=8, LAT_MAX=21400)
    rep = run("rt_latency", **seeds_gpreempt)
    assert all(r.verdict is P for r in rep.results) and _span(rep.result("rt_completion")) == (20400, 21400)


def test_kfd_monitor_latencies(tmp_path_factory: pytest.TempPathFactory) -> None:
    # w15 timed the monitor's policy model (then called kfd_sched; kfd_sched is now the monitor on cwsr)
    from gpcheck.checker.api import model_api

    with shared_verify(run_folder(tmp_path_factory)):  # the defaults: the library run's report (tests/bundled.py)
        rep = model_api.verify("kfd_monitor")
    assert _span(rep.result("rt_preempt_latency")) == (0, 5000)  # one monitor period
    r = rep.result("be_resume_delay")  # strict priority: RT requests can keep LP unmapped forever
    assert r.verdict is V and r.detail["max"] is None and r.detail["min"] == 5000 and r.counterexample.loop is not None
    assert _span(run("kfd_monitor", TIMESLICE=1).result("be_resume_delay")) == (5000, 5000)


def test_a_timed_models_assumption_rerun_freezes_what_the_result_does_not_read(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """NOTE(timed-assumption-use) on kfd_monitor: without copy_save the relaxed model has millions
    of states, most of them lp_ops's 3^8 values, which rt_preempt_latency never reads; with lp_ops
    frozen (NOTE(irrelevant-vars)) the run without copy_save proves it: copy_save is not used
    (it was `copy_save?`, undecided past the 20,000-zone cap). The cap itself:
    tests/unit/test_timed_assumptions.py."""
    from gpcheck.checker.api import model_api

    with shared_verify(run_folder(tmp_path_factory)):  # the library run's (tests/bundled.py)
        rep = model_api.verify("kfd_monitor")
    for name in ("rt_preempt_latency", "bounded_inversion", "deadlock", "range"):
        r = rep.result(name)
        assert r.verdict is P and r.assumptions == () and "assumptions_undecided" not in r.detail, name
    assert rep.result("no_loss").assumptions == rep.result("no_reexecution").assumptions == ("copy_save",)


@pytest.mark.slow  # the timed kfd_sched at RPTR_READ=1 with 2.5 ms ticks: several seconds of CPU each
def test_kfd_sched_latencies_come_from_cwsr_with_its_ticks_timed() -> None:
    """kfd_sched (the monitor on the timed cwsr) keeps cwsr's latency properties: an unmap of both
    queues saves them in parallel (5 us per live wave, 0 with none), the trap is urgent (no tick runs
    before it: the sequential model's max was 5,010 us); the LP queue's resume waits for a monitor
    wake-up that finds HP idle (T_MON ticks = 5 ms)."""
    rep = run("kfd_sched", RPTR_READ=1)
    assert _span(rep.result("rt_preempt_latency")) == (0, 5)
    assert _span(rep.result("be_resume_delay")) == (5, 20015)
    # the seeds' doorbell read never preempts: no latency is ever measured (reported vacuous)
    r = run("kfd_sched").result("rt_preempt_latency")
    assert r.detail.get("max") is None and r.vacuous is not None


def test_xsched_latencies_by_level() -> None:
    """xsched timed with its fitted commands (500..501 us, 250 us blocks at B = 2), the 32 us interrupt
    and the RT kernel's start 0..1 us after the BE blocks left (issue 31's fit)."""
    assert _span(run("xsched", LEVEL=1).result("rt_preempt_latency")) == (0, 1005)   # TH commands finish
    assert _span(run("xsched", LEVEL=2).result("rt_preempt_latency")) == (0, 251)    # the running block
    assert _span(run("xsched").result("rt_preempt_latency")) == (0, 33)              # the code: every kernel interrupted
    # the paper's level 3 (hand labels, a non-idempotent kernel left to finish)
    assert _span(run("xsched", LABEL=5, RESTORE=0).result("rt_preempt_latency")) == (0, 502)
    # the code with a kernel not marked killable: its resident block runs on, the guardian aborts the next
    assert _span(run("xsched", LABEL=5).result("rt_preempt_latency")) == (0, 251)


# ------------------------------------------------------------------ the library run


# The library run (verify_library with each proof's assumptions, and its matrix) on a few models
# in the default run; every model's expectations at the defaults are test_every_expectation_holds_at_defaults's,
# and docs/getting-started.md's `gpcheck verify` runs the whole library through the same code.
LIBRARY_SAMPLE = ("reef_rewind", "kfd_monitor", "blp")  # not cwsr: its assumptions take 9 s of CPU to find


def _library_meets_every_expectation(models: tuple[str, ...]) -> None:
    rep = verify_library(models=list(models))
    assert [r.name for r in rep.rows] == list(models)
    assert rep.ok and rep.exit_code == 0, [(c.model, c.property, c.text()) for c in rep.surprises]
    text = render_matrix(rep)
    assert "all expectations met" in text and "reef_rewind" in text and "violated (44)" in text
    row = next(r for r in rep.to_json()["models"] if r["model"] == "kfd_monitor")
    cell = next(c for c in row["results"] if c["property"] == "no_loss")
    assert cell["verdict"] == "proved" and cell["engine"] == "timed" and cell["met"] is True


def test_verify_library_meets_every_expectation_on_a_sample(tmp_path_factory: pytest.TempPathFactory) -> None:
    with shared_verify(run_folder(tmp_path_factory)):  # the same runs as test_library_with_plugin.py's, once per run
        _library_meets_every_expectation(LIBRARY_SAMPLE)
    # the JSON form on one property (the whole of kfd_monitor again would repeat its assumption runs)
    data = verify_library(models=["kfd_monitor"], properties=["no_starvation"], json=True)
    assert data["ok"] and [m["model"] for m in data["models"]] == ["kfd_monitor"]
    cell = next(c for c in data["models"][0]["results"] if c["property"] == "no_starvation")
    assert cell["verdict"] == "violated" and cell["met"] is True


@pytest.mark.slow  # every model, each proof's assumptions found (about 20 s of CPU); fast: the test above and test_every_expectation_holds_at_defaults
def test_verify_library_meets_every_expectation() -> None:
    _library_meets_every_expectation(MINE)


def test_verify_library_reports_a_surprise() -> None:
    rep = verify_library(models=["kfd_monitor"], properties=["no_starvation"])
    assert rep.ok
    # the same property under a fault switch would be a surprise: emulate by editing the expectation
    cell = rep.rows[0].cells[0]
    from dataclasses import replace

    bad = replace(cell, expected="holds")
    assert bad.surprise and not cell.surprise


def test_xsched_levels_and_their_hazards() -> None:
    # worst-case inversion in blocks: level 1 drains TH in-flight commands, level 2 one block, level 3
    # nothing (the code marks every kernel killable); the paper's level 3 (LABEL=5, RESTORE=0) waits for
    # the kernel labelled non-idempotent (k1: B blocks)
    for level, bound, extra in ((1, 4, {}), (2, 1, {}), (3, 2, {"LABEL": 5, "RESTORE": 0})):
        assert res("xsched", "bounded_inversion", LEVEL=level, INV_BOUND=bound, **extra).verdict is P, level
        assert res("xsched", "bounded_inversion", LEVEL=level, INV_BOUND=bound - 1, **extra).verdict is V, level
    assert res("xsched", "bounded_inversion", INV_BOUND=0).verdict is P
    # the code (RESTORE=1, per-block restore flags, inject.cu:43-83,124-140): no block runs to its end
    # twice at any level, and level 2 re-runs nothing at all
    for level in (1, 2, 3):
        assert res("xsched", "no_reexecution", LEVEL=level).verdict is P, level
    assert res("xsched", "reexec_idempotent_only", LEVEL=2).verdict is P
    # the paper's whole relaunch (RESTORE=0) re-runs k1's finished block at level 2 (not idempotent)
    r = res("xsched", "reexec_idempotent_only", LEVEL=2, RESTORE=0)
    assert r.verdict is V and r.counterexample is not None and r.counterexample.steps[-1].state["began"][1] == 3
    assert res("xsched", "no_reexecution", LEVEL=2, RESTORE=0).verdict is V
    assert res("xsched", "reexec_idempotent_only", LEVEL=2, RESTORE=0, IDEMPOTENT=7).verdict is P
    # the code's level 3 marks every kernel killable (level3/cuda_queue.cpp:54-55): k1 (not idempotent) is
    # interrupted mid-block and that block starts again on resume, by default
    r = res("xsched", "reexec_idempotent_only")
    assert r.verdict is V and "rt_arrive" in actions(r) and r.counterexample is not None
    assert r.counterexample.steps[-1].state["began"][1] == 3
    # marking only the idempotent kernels killable closes it, with the code's restore or the paper's
    assert res("xsched", "reexec_idempotent_only", LABEL=5).verdict is P
    assert res("xsched", "reexec_idempotent_only", LABEL=5, RESTORE=0).verdict is P
    r = res("xsched", "reexec_idempotent_only", LABEL=7, RESTORE=0)
    assert r.verdict is V and "rt_arrive" in actions(r)
    for level in (1, 2, 3):
        assert res("xsched", "no_stale_input", LEVEL=level).verdict is P
        assert res("xsched", "no_loss", LEVEL=level).verdict is P
        assert res("xsched", "no_loss", LEVEL=level, RESTORE=0).verdict is P


def test_reef_flag_race() -> None:
    # REEF issue #2: resetting before the flag is known visible lets a queued kernel start unflagged
    r = res("reef_flag_race", "preemption_effective")
    assert r.verdict is V
    acts = actions(r)
    last_reset = max(i for i, a in enumerate(acts) if a == "reset")
    assert "start_next" in acts[last_reset:] and acts[-1] == "rt_start"
    assert res("reef_flag_race", "preemption_effective", ORDER=0).verdict is P      # the naive order is safe
    assert res("reef_flag_race", "preemption_effective", RESETS=1).verdict is V
    # REEF's CAP+1 = 3 resets (scheduler.cpp:332) are the default; repeating alone does not close it
    assert load_spec("reef_flag_race").const_values["RESETS"] == 3
    assert res("reef_flag_race", "preemption_effective", RESETS=2).verdict is V
    # it closes when every dispatch beats the next ioctl, with REEF's count (a reset per kernel that can
    # start), not with the issue title's CAP
    assert res("reef_flag_race", "preemption_effective", FAST_DISPATCH=1).verdict is P
    assert res("reef_flag_race", "preemption_effective", FAST_DISPATCH=1, RESETS=2).verdict is V


def test_reef_rewind_several_queues_and_resident_blocks() -> None:
    # two BE queues: the preemption clears and rewinds each (two steps per queue), so the RT task's
    # wait grows by 2 per extra queue: 2 * Q + CAP + 5 scheduler steps (the bound the model's INV_BOUND
    # comment states; 10 here, 9 at the defaults)
    # the invariants asserted here only (the liveness and latency properties cost a search of their own)
    rep = run("reef_rewind", ("bounded_inversion", "no_loss", "no_reexecution", "no_stale_input"),
              Q=2, N=2, CAP=1, INV_BOUND=10)
    assert rep.result("bounded_inversion").verdict is P
    assert rep.result("no_loss").verdict is P
    assert rep.result("no_reexecution").verdict is V and rep.result("no_stale_input").verdict is V
    # the bound 10 is tight: one kernel a queue already waits 10 steps (N=2 costs ten times the search)
    assert res("reef_rewind", "bounded_inversion", Q=2, N=1, CAP=1, INV_BOUND=9).verdict is V
    # two resident blocks: one reset kills both; still no loss, and re-execution / stale input remain
    rep = run("reef_rewind", _TWO_BLOCKS, B=2)  # test_reef_rewind_parameters' search
    assert rep.result("no_loss").verdict is P and rep.result("no_stale_input").verdict is V
    r = rep.result("reexec_idempotent_only")
    assert r.verdict is V and r.counterexample is not None
    assert any(v > 2 for v in r.counterexample.steps[-1].state["began"][0])
    # every kernel is idempotent: re-running is then harmless (no_reexecution still counts it)
    assert res("reef_rewind", "reexec_idempotent_only", IDEMPOTENT=15).verdict is P


def test_gp_hip_suspend_races() -> None:
    # the code gives the daemon no head start (preprocess_time 0 or 25 us, config/micro-5.3/A1.json,
    # A2.json): the LC kernels launch before the daemon suspends, with the fix too, in 5 steps
    for consts in ({}, {"REGISTER_FIRST": 1}):
        r = res("gp_hip_suspend", "preemption_effective", **consts)
        assert r.verdict is V and r.counterexample is not None and r.counterexample.length == 5, consts
        assert "lc_infer" in actions(r) and "daemon_suspend" not in actions(r)
    # under the old assumption (the daemon acted before the inference, DAEMON_FIRST=1) the race is
    # check-then-act: BE j passes the lc_cnt check, the daemon suspends the list without j, j launches
    r = res("gp_hip_suspend", "preemption_effective", DAEMON_FIRST=1)
    assert r.verdict is V and actions(r).index("be_check") < actions(r).index("daemon_suspend") < actions(r).index("be_launch")
    assert res("gp_hip_suspend", "preemption_effective", DAEMON_FIRST=1, REGISTER_FIRST=1).verdict is P
    # two LC requests between two daemon polls keep the old list suspended: the fix does not cover it
    r = res("gp_hip_suspend", "preemption_effective", J=3, MAXLC=2, REGISTER_FIRST=1, DAEMON_FIRST=1)
    assert r.verdict is V and actions(r).count("lc_preprocess") == 2 and "daemon_resume" not in actions(r)
    for consts in ({}, {"REGISTER_FIRST": 1}, {"DAEMON_FIRST": 1}):
        assert res("gp_hip_suspend", "no_reexecution", **consts).verdict is P
        assert res("gp_hip_suspend", "no_loss", **consts).verdict is P


def test_cwsr_rptr_moves_only_on_the_hqd_and_a_failed_queue_reset_escalates() -> None:
    """Only the CP moves rptr, from the queue's HQD (kfd_mqd_manager_v9.c L258-259): `retire` is never
    enabled while a queue is Unmapped, though such states with a finished dispatch are reachable; and a
    per-queue reset that fails resets the GPU (kfd_device_queue_manager.c L2327-2333)."""
    from gpcheck.checker.engines.explicit import explicit
    from gpcheck.gpmodel import compile_model

    cm = compile_model(load_spec("cwsr", {"N": 1, "L": 1}))
    res_ = explicit.search(cm, set())
    assert res_.complete
    retire = {i: cm.instances[i].args for i in cm.instance_ids("retire")}
    waiting = 0
    for s in res_.parent:
        d = cm.layout.decode(s)
        for iid, _ in cm.enabled_steps(s):
            if iid in retire:
                q = retire[iid][0]
                assert d["loc"][q] in ("Mapped", "Preempting", "Restoring"), d
        waiting += sum(1 for q in range(2) if d["loc"][q] == "Unmapped" and d["rptr"][q] < d["cp_wptr"][q]
                       and all(w == "Done" for w in d["ws"][q]))
    assert waiting > 0  # the guard is not vacuous: a finished dispatch waits for the remap
    r = run("cwsr", _TIMEOUT_PROPS, PREEMPT_TIMEOUT=1).result("no_loss")
    assert r.verdict is V
    # escalation: a queue whose work had all retired (no live wave, nothing to time out) dies with the
    # GPU when the other queue's reset fails; only with ESCALATE=1
    def finished_queue_dies(**consts: int) -> bool:
        c = compile_model(load_spec("cwsr", {"PREEMPT_TIMEOUT": 1, "N": 1, "L": 1, **consts}))
        sr = explicit.search(c, set())
        return any(d["loc"][q] == "Dead" and d["rptr"][q] == 1
                   for d in map(c.layout.decode, sr.parent) for q in range(2))
    assert finished_queue_dies() and not finished_queue_dies(ESCALATE=0)

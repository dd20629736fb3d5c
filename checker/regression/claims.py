"""The seeds' comparison (seed 002 part 4, tables 4.1 and 4.2) checked row by row against the
model library.

Each row names the seeds' claim and the checks that decide it: model properties at stated
constants (checked live), numbers the models compute now, and code readings with the file and line
they rest on. The outcome (confirmed, refuted, confirmed only under stated parameters, confirmed
only in the best case, not decided by a model) is derived from those checks by one stated rule,
NOTE(claims-rule) in checker/regression/claims_rule.py; it is not written by hand.

NOTE(claims-evidence): the text of a row argues an outcome and quotes verdicts; neither is trusted.
A row whose derived outcome differs from the one its text argues, or whose quoted verdicts come out
otherwise, is reported as `evidence changed` and makes `gpcheck verify-claims` exit non-zero.
Latency rows are computed, not stated: the AMD column's constants go into the timed rt_latency model
and the best and worst cases are its latency properties' least and greatest measurements
(checker/engines/timed/latency.py); GPreempt's figures come from reef_rewind, which follows the code (a busy-polling
scheduler, CAP+1 resets), not from the seeds' 1 ms poll that row 4.1.6 refutes."""

from __future__ import annotations

from typing import Any, Callable

from gpcheck.checker.engines.explicit import explicit
from gpcheck.checker.api.model_api import verify
from gpcheck.checker.regression.claims_rule import RULE, Code, Evidence, Measure, Outcome, Row, settle
from gpcheck.checker.core.verdict import Verdict
from gpcheck.gpmodel import compile_model
from gpcheck.spec import load_spec

__all__ = ["RULE", "Code", "Evidence", "Measure", "Outcome", "Row", "check_claims", "kernel_offset"]


def _label(action: str | None, args: dict[str, Any]) -> str:
    return f"{action}({', '.join(f'{k}={v}' for k, v in args.items())})" if args else str(action)


class Context:
    """Caches model runs shared by several rows."""

    def __init__(self, engine: str = "explicit"):
        self.engine = engine
        self._reports: dict[tuple[str, tuple[tuple[str, int], ...], str], Any] = {}
        self._states: dict[tuple[str, tuple[tuple[str, int], ...]], list[dict[str, Any]]] = {}

    def check(self, model: str, prop: str, want: str, role: str = "detail", **consts: int) -> Evidence:
        """`model.prop` at `consts`, with the verdict the claim predicts (or the text quotes) and the
        check's role (NOTE(claims-rule))."""
        key = (model, tuple(sorted(consts.items())), prop)
        if key not in self._reports:
            self._reports[key] = verify(model, consts=consts, properties=[prop], engine=self.engine)
        r = self._reports[key].result(prop)
        cex = r.counterexample
        lat = r.kind == "latency"
        return Evidence(model, prop, key[1], want, r.verdict, r.engine,
                        cex.length if cex else None, bool(cex and cex.loop is not None),
                        r.detail.get("min") if lat else None, r.detail.get("max") if lat else None, lat,
                        tuple(_label(st.action, st.args) for st in cex.steps[1:]) if cex else (), role,
                        tuple(r.assumptions or ()))

    def result(self, model: str, prop: str, **consts: int) -> Any:
        """The Result of one property at the given constants (the same cached run as `check`)."""
        self.check(model, prop, "holds", **consts)
        return self._reports[(model, tuple(sorted(consts.items())), prop)].result(prop)

    def states(self, model: str, **consts: int) -> list[dict[str, Any]]:
        """Every reachable state of an instance, decoded (complete exploration)."""
        key = (model, tuple(sorted(consts.items())))
        if key not in self._states:
            cm = compile_model(load_spec(model, consts))
            if cm.model.has_time:  # a timed model's reachable states are its zone graph's discrete states
                from gpcheck.checker.engines.timed import zones

                tres = zones.search(zones.ZoneGraph(cm), set())
                assert tres.complete, f"{model} {consts}: exploration incomplete"
                self._states[key] = [cm.layout.decode(s) for s in dict.fromkeys(n.s for n in tres.nodes)]
            else:
                res = explicit.search(cm, set())
                assert res.complete, f"{model} {consts}: exploration incomplete"
                self._states[key] = [cm.layout.decode(s) for s in res.parent]
        return self._states[key]

    def value_range(self, model: str, fn: Callable[[dict[str, Any]], int | None], **consts: int) -> tuple[int, int]:
        vals = [v for v in (fn(s) for s in self.states(model, **consts)) if v is not None]
        return min(vals), max(vals)


# ------------------------------------------------------------------ the seeds' numbers (part 4.2)

# GPreempt column: from reef_rewind (the code's busy poll and CAP+1 resets, timed with the seeds'
# per-step costs), not from the seeds' 1 ms poll and 0.1 ms ioctl, which row 4.1.6 refutes.
# AMD column: KFD monitor T_mon = 5 ms (table 4.1), detection counted as 0, CWSR 0.1 + 5 us each way.
SEEDS_AMD = dict(DETECT_US=5000, DETECT_COST_US=0, PREEMPT_US=5, EXEC_US=20000, RESUME_US=5)
_BOUNDS = dict(LAT_MAX=10**6)


def _latency(ctx: Context, consts: dict[str, int]) -> dict[str, int]:
    """Best and worst RT latency and BE delay (us): the least and greatest measurements of the
    timed rt_latency model's latency properties (checker/engines/timed/latency.py), computed now."""
    c = {**consts, **_BOUNDS}
    out: dict[str, int] = {}
    for prop, key in (("rt_completion", "latency"), ("rt_preempt_latency", "wait"), ("be_resume_delay", "be_delay")):
        r = ctx.result("rt_latency", prop, **c)
        assert r.verdict is Verdict.PROVED, (prop, r.verdict, r.reason)
        out[f"{key}_best_us"], out[f"{key}_worst_us"] = r.detail["min"], r.detail["max"]
    # detection = the wait before the preemption starts: rt_preempt_latency less the preemption
    out["detection_best_us"] = out["wait_best_us"] - consts["PREEMPT_US"]
    out["detection_worst_us"] = out["wait_worst_us"] - consts["PREEMPT_US"]
    return out


def kernel_offset(launch_offset: int, temp: int, cap: int, kernel_offset_before: int) -> int:
    """reef_scheduler.cpp:331-334, the formula reef_rewind's `offset` step implements."""
    return max(launch_offset - temp - cap, kernel_offset_before)


def _span(ctx: Context, model: str, prop: str, **consts: int) -> dict[str, int | None]:
    """A latency property's least and greatest measurement (us), computed now (NOTE(latency))."""
    r = ctx.result(model, prop, **consts)
    return {"min_us": r.detail.get("min"), "max_us": r.detail.get("max")}



def _reef_gp(ctx: Context) -> dict[str, int]:
    """GPreempt's numbers from reef_rewind (us): the RT task's wait to launch, its detection (that
    wait less preempt_reset's own steps: a clear per queue and CAP+1 resets; the asynchronous flag
    write overlaps them), its
    latency (the wait plus the RT kernels' time) and the BE task's resume delay, computed now."""
    c = load_spec("reef_rewind").const_values
    rt, be = _span(ctx, "reef_rewind", "rt_preempt_latency"), _span(ctx, "reef_rewind", "be_resume_delay")
    assert rt["min_us"] is not None and rt["max_us"] is not None and be["min_us"] is not None and be["max_us"] is not None
    reset = c["Q"] * c["CLEAR_US"] + (c["CAP"] + 1) * c["RESET_US"]
    return {"wait_best_us": rt["min_us"], "wait_worst_us": rt["max_us"],
            "detection_best_us": rt["min_us"] - reset, "detection_worst_us": rt["max_us"] - reset,
            "latency_best_us": rt["min_us"] + c["RT_EXEC_US"], "latency_worst_us": rt["max_us"] + c["RT_EXEC_US"],
            "be_delay_best_us": be["min_us"], "be_delay_worst_us": be["max_us"]}


def table_41(ctx: Context) -> list[Row]:
    """Table 4.1, core mechanisms."""
    C, R, U, N = Outcome.CONFIRMED, Outcome.REFUTED, Outcome.UNDER, Outcome.NOT_DECIDED
    ev = ctx.check
    kfd_rt = _span(ctx, "kfd_monitor", "rt_preempt_latency")
    reef_rt = _span(ctx, "reef_rewind", "rt_preempt_latency")
    cwsr_rt = _span(ctx, "cwsr", "rt_preempt_latency")
    cwsr_rt_timeout = _span(ctx, "cwsr", "rt_preempt_latency", PREEMPT_TIMEOUT=1)
    nv_rt = _span(ctx, "nvidia_preempt", "rt_preempt_latency")
    nv_rt0 = _span(ctx, "nvidia_preempt", "rt_preempt_latency", REALTIME=0)
    inv = load_spec("reef_rewind").const_values["INV_BOUND"]
    rows = [
        Row("4.1.1", "GPreempt", "priority levels", "2 levels, through timeslices", C,
            "set_priority maps 0 to a 1 s timeslice and every other value to 1 us: two effective levels; the "
            "1 us BE slice bounds how long an LC request waits: BE's slice and two TSG switches, 521 us at the "
            "switch measured between processes on an H200 (gpreempt_timeslice without the hint; tight at 520).",
            [ev("gpreempt_timeslice", "bounded_inversion", "holds", "claim", HINT=0, INV_BOUND_US=521),
             ev("gpreempt_timeslice", "bounded_inversion", "violated", HINT=0, INV_BOUND_US=520)],
            code=[Code("GPreempt src/gpreempt.cpp:61-72", "agrees", "priority 0 -> 1,000,000 us, else 1 us")]),
        Row("4.1.1", "AMD", "priority levels", "16 levels, in hardware", U,
            "KFD queue priority 0..15 exists but maps to 3 pipe priorities and is only an arbitration weight "
            "(amd_cwsr.md 2.2): while both queues are mapped the LP queue may take every tick; only the proposed "
            "monitor's unmap bounds that, by T_mon (kfd_monitor: bound T_MON holds, T_MON-1 fails). Across "
            "processes the 16 levels do not exist: under MES every KFD queue is in the NORMAL band (the priority "
            "only orders gangs inside a process), so an RT queue waits a 10 ms process quantum on an "
            "oversubscribed pipe (mes_sched.rt_preempt_latency, max 10,005 us); HWS's chained runlist "
            "time-slices processes by quantum whatever the priority (hws_oversub).",
            [ev("kfd_monitor", "bounded_inversion", "holds"), ev("kfd_monitor", "bounded_inversion", "violated", INV_BOUND=4),
             ev("mes_sched", "rt_preempt_latency", "proved"), ev("hws_oversub", "rt_preempt_latency", "proved")],
            code=[Code("linux-6.12 amdkfd/kfd_priv.h:L452-455", "narrows", "16 values, 3 pipe priorities, a weight"),
                  Code("linux-6.12.117 amdkfd/kfd_device_queue_manager.c:L218-220", "narrows",
                       "MES: inprocess_gang_priority = priority, gang_global_priority_level = NORMAL for every queue")]),
        Row("4.1.2", "GPreempt", "priority granularity", "timeslice length", C,
            "the only knob is NVA06C_CTRL_CMD_SET_TIMESLICE on the TSG.", [],
            code=[Code("GPreempt src/gpreempt.cpp:52-72", "agrees", "NvRmModifyTS, set_priority")]),
        Row("4.1.2", "AMD", "priority granularity", "hardware priority register", U,
            "cp_hqd_queue_priority / cp_hqd_pipe_priority exist but are weights, not preemption triggers; see 4.1.1.", [],
            code=[Code("linux-6.12 amdkfd/kfd_mqd_manager_v9.c:L106-110", "narrows", "weights, not triggers")]),
        Row("4.1.3", "GPreempt", "changing a priority", "rebuild the context", U,
            "a task's priority class is its context: GPreempt creates one context per class once at setup and a "
            "task moves class only by moving to the other context (a context switch, as the seeds say); the class's "
            "own level is a timeslice that NVA06C_CTRL_CMD_SET_TIMESLICE can change on the TSG at any time, "
            "without a rebuild.", [],
            code=[Code("GPreempt src/hip-clients/gpreemptclient.cpp:159-199", "agrees", "one context per class, built once"),
                  Code("GPreempt src/gpreempt.cpp:52-72", "narrows", "the timeslice is set on a live TSG")]),
        Row("4.1.3", "AMD", "changing a priority", "dynamic ioctl", U,
            "AMDKFD_IOC_UPDATE_QUEUE changes it at run time, but in HWS mode update_queue runs execute_queues_cpsch, "
            "which unmaps every dynamic queue of every process (amd_cwsr.md 3.1); cwsr models that unmap (all "
            "queues at once) and proves it exact (a save is a copy in the model).",
            [ev("cwsr", "no_loss", "proved", Q=2, N=1, L=2)],
            code=[Code("linux-6.12 amdkfd/kfd_device_queue_manager.c:L2368-2382", "narrows", "unmap-all on update")]),
        Row("4.1.4", "both", "submission", "pushbuffer / doorbell + MMIO, ~100 ns, same path", U,
            "true of the AMD path and of GPreempt on NVIDIA (a ring and a doorbell, untouched by preemption: cwsr "
            "and gpreempt_timeslice keep the ring); not of REEF's BE launches, which go through a host-side task "
            "queue (cleared on preemption: reef_rewind.ring_kept fails) and a CAP = 2 deep device window before "
            "reaching the AQL ring (DOMAIN.md mechanism 1). The ~100 ns is not modelled.",
            [ev("cwsr", "ring_kept", "holds", "claim"), ev("gpreempt_timeslice", "ring_kept", "holds", "claim"),
             ev("reef_rewind", "ring_kept", "holds", "scope")]),
        Row("4.1.6", "GPreempt", "monitoring", "user-space polling + ioctl, every 1 ms", R,
            f"the REEF scheduler busy-polls a host-side task queue with no sleep and no ioctl (checks at :277, "
            f":293, :298, :501); the CUDA path has no monitor at all (hardware timeslices; the hint daemon polls "
            f"an atomic). reef_rewind: an RT task waits at most 2Q + CAP + 5 scheduler steps ({inv} at Q=1, "
            f"CAP=2; tight) whatever N is (the relaunch loop checks after every launch).",
            [ev("reef_rewind", "bounded_inversion", "holds"),
             ev("reef_rewind", "bounded_inversion", "violated", INV_BOUND=inv - 1),
             ev("reef_rewind", "bounded_inversion", "holds", N=5),
             ev("reef_rewind", "bounded_inversion", "holds", Q=2, N=2, CAP=1, INV_BOUND=2 * 2 + 1 + 5),
             ev("reef_rewind", "bounded_inversion", "violated", Q=2, N=2, CAP=1, INV_BOUND=2 * 2 + 1 + 4)],
            code=[Code("GPreempt src/reef-client/reef_scheduler.cpp:252-258", "disagrees", "loop_body in a loop, no sleep, no ioctl")]),
        Row("4.1.6", "AMD", "monitoring", "kernel space + MMIO", R,
            "the seeds' monitor reads rptr as readl(queue->doorbell_ptr) and wptr from properties.write_ptr; the "
            "doorbell carries the wptr the host rang, and the rptr is the CP's shadow in user memory (read_ptr, "
            "'updates automatically by the H/W'), not an MMIO register: as written the monitor sees no queue "
            "active and never preempts (kfd_sched.hp_detected, violated at its first wake-up with both queues "
            "busy); read from the real rptr it would (proved with RPTR_READ=1).",
            [ev("kfd_sched", "hp_detected", "holds", "claim"), ev("kfd_sched", "hp_detected", "proved", RPTR_READ=1)],
            code=[Code("seed 002 part 5.2 item 2 (line 2432: readl(queue->doorbell_ptr))", "disagrees", "the doorbell is not the rptr"),
                  Code("linux-6.12 amdkfd/kfd_priv.h:L478-487", "disagrees", "read_ptr: user memory written by the CP")]),
        Row("4.1.7", "AMD", "monitoring interval", "5 ms", C,
            f"a design parameter of the proposed monitor; kfd_monitor shows it is exactly the inversion bound, and "
            f"its timed rt_preempt_latency is {kfd_rt['min_us']}..{kfd_rt['max_us']} us: up to one period "
            f"(see 4.2.7: the seeds then count 0 ms for detection).",
            [ev("kfd_monitor", "bounded_inversion", "holds", "claim", T_MON=6, INV_BOUND=6),
             ev("kfd_monitor", "bounded_inversion", "violated", T_MON=6, INV_BOUND=5),
             ev("kfd_monitor", "rt_preempt_latency", "proved")], numbers=kfd_rt),
        Row("4.1.8", "GPreempt", "monitoring overhead", "high (ioctl)", U,
            "high, but not for the stated reason: detection issues no ioctl; the scheduler thread busy-polls a "
            "host queue without sleeping, a CPU core spinning at 100 %.", [],
            code=[Code("GPreempt src/reef-client/reef_scheduler.cpp:252-258", "narrows", "a spinning core, no ioctl")]),
        Row("4.1.8", "AMD", "monitoring overhead", "low (zero)", N,
            "a kernel thread waking every T_mon to read two words per queue: plausible, but the monitor is a design "
            "without code and no model costs it.", [],
            code=[Code("seed 002 part 5.2 item 2 (lines 2430-2438)", "undecided", "a design, no implementation")]),
        Row("4.1.9", "GPreempt", "preemption trigger", "user space + ioctl, 1-10 us", U,
            f"REEF: one async flag write, a host-queue clear (no ioctl), then CAP+1 = 3 wave-reset ioctls and a "
            f"sync; the CUDA path has no trigger (hardware timeslice). With the seeds' per-step times (4.2.3) the "
            f"timed reef_rewind takes {reef_rt['min_us']}..{reef_rt['max_us']} us from an RT arrival to its "
            f"launch: the three 100 us resets dominate, not the 1-10 us ioctl.",
            [ev("reef_rewind", "rt_preempt_latency", "proved")], numbers=reef_rt,
            code=[Code("GPreempt src/reef-client/reef_scheduler.cpp:316-357", "narrows", "three ioctls and a clear, not one ioctl")]),
        Row("4.1.9", "AMD", "preemption trigger", "kernel function, < 1 us", R,
            "6.12 has no kfd_queue_preempt_single; preempting one queue in HWS mode unmaps all dynamic queues "
            "through the HIQ and waits for a fence (up to queue_preemption_timeout_ms = 9000 ms, then a reset): "
            "cwsr preempts every queue at once and, with the timeout fault, loses work; kfd_sched (the monitor on "
            "cwsr, repaired to read the real rptr) unmaps an active HP queue whenever it preempts LP, and a timeout "
            "can then reset the HP queue; "
            f"timed with the seeds' 5 us save, an unmap takes {cwsr_rt['min_us']}..{cwsr_rt['max_us']} us, and "
            f"{cwsr_rt_timeout['min_us']}..{cwsr_rt_timeout['max_us']} us when a queue will not preempt "
            f"(KFD_UNMAP_LATENCY_MS, or a failed per-queue reset escalating to a GPU reset). Under MES a queue is "
            f"removed alone (REMOVE_QUEUE), but a queue that does not answer in 2.1 s escalates: SUSPEND of all "
            f"gangs, then a whole-GPU reset that resets every process's queues unless MES can reset single queues "
            f"(GC 12.1, Linux 7.2: mes_sched.innocent_survives, HANG=1).",
            [ev("kfd_sched", "hp_undisturbed", "holds", "claim", RPTR_READ=1),
             ev("mes_sched", "innocent_survives", "violated", HANG=1), ev("mes_sched", "innocent_survives", "proved", HANG=1, MES_RESET=2),
             ev("cwsr", "no_loss", "violated", PREEMPT_TIMEOUT=1),
             ev("kfd_sched", "hp_survives", "violated", PREEMPT_TIMEOUT=1, RPTR_READ=1), ev("cwsr", "rt_preempt_latency", "proved"),
             ev("cwsr", "rt_preempt_latency", "proved", PREEMPT_TIMEOUT=1)],
            numbers={"faults_off": cwsr_rt, "preempt_timeout": cwsr_rt_timeout},
            code=[Code("linux-6.12 amdkfd/kfd_device_queue_manager.c:L2368-2382", "disagrees", "execute_queues_cpsch: unmap every dynamic queue")]),
        Row("4.1.10", "GPreempt", "preemption mechanism", "software cooperation + ring-buffer clear", U,
            "true of the REEF baseline on HIP only (reef_rewind), where this repo's kernels ignore the flag: the "
            "CAP+1 wave resets alone stop the BE task (timed: they kill every BE dispatch in flight before the RT "
            "launch, so no BE block runs beside it); GPreempt on NVIDIA is a hardware TSG timeslice that saves "
            "state (gpreempt_timeslice).",
            [ev("reef_rewind", "preemption_effective", "holds"), ev("gpreempt_timeslice", "no_loss", "holds")],
            code=[Code("GPreempt src/reef-client/reef_scheduler.cpp:316-357", "agrees", "flag, clear, resets"),
                  Code("GPreempt src/gpreempt.cpp:52-72", "narrows", "the CUDA path is a TSG timeslice")]),
        Row("4.1.10", "AMD", "preemption mechanism", "hardware wave-level CWSR", C,
            "unmap with SAVE: each live wave's PC and registers go to the save area and come back on restore "
            "(in the model a save is a copy).",
            [ev("cwsr", "resume_exact", "holds", "claim")],
            code=[Code("linux-6.12 amdkfd/cwsr_trap_handler_gfx9.asm:L346-917", "agrees", "L_SAVE, L_RESTORE")]),
        Row("4.1.11", "GPreempt", "preemption precision", "thread-block boundary", R,
            "REEF kills waves at any point and saves nothing; NVIDIA's timeslice switch pauses blocks mid-kernel "
            "(CILP, measured on an H200): nvidia_tsg switches with no drain under PMODE=2, a block length with "
            "thread-block preemption. The thread-block boundary is what the driver itself imposes on every other "
            "client once one TSG is made realtime (MAKE_REALTIME sets their compute mode to CTA: "
            "nvidia_preempt.others_mode_kept violated).",
            [ev("nvidia_tsg", "switch_latency", "violated", "claim"), ev("nvidia_tsg", "switch_latency", "violated", PMODE=1),
             ev("nvidia_preempt", "others_mode_kept", "violated")]),
        Row("4.1.11", "AMD", "preemption precision", "instruction level", C,
            "restore returns to the saved PC (in the model a save is a copy; the exactness is the trap handler's).",
            [ev("cwsr", "resume_exact", "holds", "claim"), ev("cwsr", "no_reexecution", "proved", "claim")],
            code=[Code("linux-6.12 amdkfd/cwsr_trap_handler_gfx9.asm:L917", "agrees", "s_rfe_b64 to the saved PC")]),
        Row("4.1.12", "both", "preemption latency", "10-100 us vs 1-10 us", N,
            f"no model carries measured preemption times: fed the seeds' own per-step times, the timed models give "
            f"REEF {reef_rt['min_us']}..{reef_rt['max_us']} us (above the seeds' 10-100 us: three resets) and CWSR "
            f"{cwsr_rt['min_us']}..{cwsr_rt['max_us']} us; the code's only AMD bound is the 9000 ms fence "
            f"timeout before a reset (4.1.9). NVIDIA's own explicit path (nvidia_preempt, timed with the 0.2 ms "
            f"switch measured on an H200) takes {nv_rt['min_us']}..{nv_rt['max_us']} us with MAKE_REALTIME and "
            f"RESTART_RUNLIST (a CTA drain), {nv_rt0['min_us']}..{nv_rt0['max_us']} us with PREEMPT on its own TSG "
            f"(another process's slice may come first).",
            [ev("reef_rewind", "rt_preempt_latency", "proved"), ev("cwsr", "rt_preempt_latency", "proved"),
             ev("nvidia_preempt", "rt_preempt_latency", "proved"), ev("nvidia_preempt", "rt_preempt_latency", "proved", REALTIME=0)],
            numbers={"reef_rewind": reef_rt, "cwsr": cwsr_rt, "nvidia_preempt": nv_rt, "nvidia_preempt_no_realtime": nv_rt0}),
        Row("4.1.13", "GPreempt", "ring buffer", "cleared, wptr = rptr", U,
            "true of REEF's software host queue (the clear drops it, then the relaunch rewinds to kernel_offset: "
            "reef_rewind.ring_kept fails at the clear); the AQL ring is never rewritten (clearHSAQueue is "
            "commented out) and GPreempt on NVIDIA never touches its pushbuffer.",
            [ev("reef_rewind", "ring_kept", "violated", "claim"), ev("reef_rewind", "ring_integrity", "holds"),
             ev("gpreempt_timeslice", "ring_kept", "violated", "scope")]),
        Row("4.1.13", "AMD", "ring buffer", "unchanged", C,
            "rptr and wptr live in user memory and are never rewritten; rptr never moves back.",
            [ev("cwsr", "ring_kept", "holds", "claim"), ev("cwsr", "ring_integrity", "holds", "claim")]),
        Row("4.1.14", "GPreempt", "state saved", "kernel_offset (approximate)", U,
            "only for the REEF path: there the offset formula re-runs kernels, and loses one under a launch-time "
            "read index, a dropped nop, or flag-honouring kernels. GPreempt on NVIDIA saves the context in "
            "hardware (gpreempt_timeslice: nothing re-runs, nothing is lost).",
            [ev("reef_rewind", "no_reexecution", "violated", "claim"), ev("gpreempt_timeslice", "no_reexecution", "violated", "scope"),
             ev("gpreempt_timeslice", "no_loss", "holds"), ev("reef_rewind", "no_loss", "violated", READ_AT_LAUNCH=1),
             ev("reef_rewind", "no_loss", "violated", NOP=3), ev("reef_rewind", "no_loss", "violated", FLAG_HONOURED=1)]),
        Row("4.1.14", "AMD", "state saved", "PC + registers (exact)", C,
            "exact in the model, where a save is a copy; of the hardware as far as the trap handler is (4.1.11).",
            [ev("cwsr", "no_loss", "proved", "claim"), ev("cwsr", "resume_exact", "holds", "claim")]),
        Row("4.1.15", "GPreempt", "resume", "resubmit kernels", U,
            "REEF relaunches kernel_offset..N-1 one by one (and returns early when another RT task waits); "
            "GPreempt on NVIDIA resubmits nothing (the TSG context is restored).",
            [ev("reef_rewind", "no_reexecution", "violated", "claim"), ev("gpreempt_timeslice", "no_reexecution", "violated", "scope")]),
        Row("4.1.15", "AMD", "resume", "restore wave state", C, "", [ev("cwsr", "resume_exact", "holds", "claim")]),
        Row("4.1.16", "GPreempt", "resume latency", "N x 100 ns, N = remaining kernels", U,
            "N is the remaining kernels plus the CAP+1 = 3 kernels the formula re-runs (see 4.2.4); the ~100 ns "
            "per launch is the seeds' figure.", [ev("reef_rewind", "no_reexecution", "violated")],
            code=[Code("GPreempt src/reef-client/reef_scheduler.cpp:331-334", "narrows", "kernel_offset = launch_offset - temp - cap")]),
        Row("4.1.16", "AMD", "resume latency", "1-10 us, fixed", Outcome.BEST_CASE,
            "the restore itself is the seeds' constant, but the proposed monitor issues it only at a wake-up that "
            "finds the HP queue idle: in the timed kfd_monitor (1 ms ticks, T_mon = 5 ms, 2 ms RT requests) the LP "
            "queue is off the GPU at least one monitor period and, under strict priority, without bound (RT "
            "requests at every wake-up); the timeslice option bounds it to one period.",
            [ev("kfd_monitor", "be_resume_delay", "proved", "worst"), ev("kfd_monitor", "be_resume_delay", "proved", TIMESLICE=1)]),
        Row("4.1.17", "GPreempt", "re-execution", "possible", U,
            "confirmed for the REEF path (shortest counterexample below); refuted for GPreempt on NVIDIA, whose "
            "hardware context switch never re-runs work.",
            [ev("reef_rewind", "no_reexecution", "violated", "claim"), ev("gpreempt_timeslice", "no_reexecution", "violated", "scope")]),
        Row("4.1.17", "AMD", "re-execution", "never", C,
            "proved with the faults off (a save is a copy in the model); with a preemption timeout nothing re-runs "
            "either, but work is lost (reported to the process as memory lost). A memory eviction saves in-flight "
            "waves before the buffer moves and resumes them 100 ms later (kfd_evict).",
            [ev("cwsr", "no_reexecution", "proved", "claim"), ev("kfd_evict", "no_reexecution", "proved", "claim"), ev("cwsr", "no_reexecution", "holds", "scope", PREEMPT_TIMEOUT=1),
             ev("cwsr", "no_loss", "violated", PREEMPT_TIMEOUT=1), ev("cwsr", "loss_reported", "holds", PREEMPT_TIMEOUT=1)]),
        Row("4.1.18", "GPreempt", "application change", "needs preempt_flag", U,
            "REEF's design does instrument its BE kernels (the flag-checking mod.be.cubin is built), so the claim "
            "holds of REEF; this port loads the raw kernels, which ignore the flag, and flag-honouring kernels "
            "would even add a loss (the flag lands before the host-queue clear). GPreempt on NVIDIA only adds spin "
            "kernels.",
            [ev("reef_rewind", "no_loss", "holds"), ev("reef_rewind", "no_loss", "holds", "scope", FLAG_HONOURED=1)],
            code=[Code("GPreempt model/makefile:20,28-32", "agrees", "mod.be.cubin is built"),
                  Code("GPreempt src/reef-client/hybrid_executor.cpp:41-53", "narrows", "the raw kernels are loaded")]),
        Row("4.1.18", "AMD", "application change", "none", C, "CWSR is transparent to kernels.",
            [ev("cwsr", "no_loss", "proved", "claim")]),
        Row("4.1.19", "GPreempt", "kernel requirement", "idempotent or stateless", U,
            "only for the REEF path, which re-runs up to CAP+1 kernels per preemption (see 4.2.5); GPreempt on "
            "NVIDIA never re-runs a kernel (hardware context switch).",
            [ev("reef_rewind", "no_reexecution", "violated", "claim"), ev("gpreempt_timeslice", "no_reexecution", "violated", "scope")]),
        Row("4.1.19", "AMD", "kernel requirement", "any kernel", C, "exactly-once, proved (faults off; a save is a copy).",
            [ev("cwsr", "no_reexecution", "proved", "claim"), ev("cwsr", "no_loss", "proved", "claim")]),
        Row("4.1.20", "GPreempt", "deployment", "closed-source driver patch", R,
            "patch/driver.patch applies to NVIDIA's open GPU kernel modules; its real cost is that it drops the "
            "RM control security check for every process.",
            [ev("nv_query_group", "control_authorised", "violated"),
             ev("nv_query_group", "control_authorised", "holds", BYPASS=0)],
            code=[Code("GPreempt patch/driver.patch:35,44-49", "disagrees", "a patch to the open kernel modules")]),
        Row("4.1.20", "AMD", "deployment", "open KFD modification", N,
            "the proposed scheduler is a design; no code exists to check.", [],
            code=[Code("seed 002 part 5 (lines 2368-2386)", "undecided", "a design, no code")]),
    ]
    return [settle(r) for r in rows]


def table_42(ctx: Context) -> list[Row]:
    """Table 4.2, the timeline (100 kernels, preemption at k25, 20 ms inference)."""
    gp, amd = _reef_gp(ctx), _latency(ctx, SEEDS_AMD)
    amd_end = _latency(ctx, dict(SEEDS_AMD, EXEC_US=19995))  # the RT work ends exactly at a monitor wake-up
    reef = _span(ctx, "reef_rewind", "rt_preempt_latency")
    kfd = _span(ctx, "kfd_monitor", "rt_preempt_latency")
    cwsr_rt, cwsr_be = _span(ctx, "cwsr", "rt_preempt_latency"), _span(ctx, "cwsr", "be_resume_delay")
    ms = lambda us: f"{us / 1000:g} ms"  # noqa: E731
    R_ = kernel_offset(99, 75, 2, 0)
    relaunched = 100 - R_
    # kernels of one BE task run more than once (runs is per BE queue since reef_rewind has Q queues)
    reexec = ctx.value_range("reef_rewind", lambda s: max(sum(1 for r in row if r > 1) for row in s["runs"]))
    reexec2 = ctx.value_range("reef_rewind", lambda s: max(sum(1 for r in row if r > 1) for row in s["runs"]), MAXRT=2)
    ev = ctx.check
    reef_src = "reef_rewind.rt_preempt_latency"
    rows = [
        Row("4.2.1", "GPreempt", "detection", "5.1 ms", Outcome.REFUTED,
            f"5.1 ms is the time of detection after a request at 5 ms: a 0.1 ms delay. The scheduler busy-polls, "
            f"so in reef_rewind the preemption starts {gp['detection_best_us']}..{gp['detection_worst_us']} us "
            f"after the arrival (the RT wait less preempt_reset's own steps).",
            [ev("reef_rewind", "rt_preempt_latency", "proved")], numbers=gp,
            measures=[Measure("detection delay (us)", 100, 100, gp["detection_best_us"], gp["detection_worst_us"], reef_src)]),
        Row("4.2.2", "GPreempt", "RT latency", "5.1 + 0.3 + 20 = 25.4 ms", Outcome.REFUTED,
            f"the 25.4 ms adds the arrival time (20.4 ms after it); reef_rewind with the seeds' per-step costs: "
            f"{ms(gp['latency_best_us'])}..{ms(gp['latency_worst_us'])} (the RT task's launch after "
            f"{gp['wait_best_us']} us, then its 20 ms).",
            [ev("reef_rewind", "rt_preempt_latency", "proved")], numbers=gp,
            measures=[Measure("RT latency (us)", 20400, 20400, gp["latency_best_us"], gp["latency_worst_us"],
                              reef_src + " + RT_EXEC_US")]),
        Row("4.2.3", "GPreempt", "preemption", "~300 us (flag 1 us + clear 10 us + reset 100 us)", Outcome.UNDER,
            f"the parts as stated add up to 111 us; the code issues the reset CAP+1 = 3 times, and with those parts "
            f"the timed reef_rewind takes {reef['max_us']} us from the RT arrival to its launch "
            f"({reef['min_us']}..{reef['max_us']}): about the seeds' 300 us, for the code's reason, with the seeds' costs.",
            [ev("reef_rewind", "rt_preempt_latency", "proved")], numbers=reef,
            code=[Code("GPreempt src/reef-client/reef_scheduler.cpp:343-344", "narrows", "CAP+1 resets, not one")]),
        Row("4.2.4", "GPreempt", "resume", "75 kernels x 100 ns + 1 us = 8.5 us", Outcome.REFUTED,
            f"the formula (reef_rewind's offset step) restarts at max(99 - 75 - 2, 0) = {R_}: {relaunched} kernels "
            f"are relaunched, {relaunched * 0.1:g} us + 1 us = {relaunched * 0.1 + 1:g} us (the seeds' part 1.4 "
            f"itself says {relaunched}); reef_rewind re-executes at most CAP+1 kernels per preemption.",
            [ev("reef_rewind", "rewind_bounded", "holds")], numbers={"kernel_offset": R_, "relaunched": relaunched},
            code=[Code("GPreempt src/reef-client/reef_scheduler.cpp:331-334", "disagrees", f"kernel_offset = {R_}, {relaunched} relaunched")]),
        Row("4.2.5", "GPreempt", "re-execution", "2-3 kernels may run twice", Outcome.UNDER,
            f"per preemption: CAP+1 = 3 kernels that already left the host queue are relaunched; in reef_rewind "
            f"(N=4, CAP=2, one RT arrival) up to {reexec[1]} kernels run twice; with two RT arrivals (MAXRT=2) up "
            f"to {reexec2[1]} of the 4 kernels do, so a task preempted repeatedly re-runs more than 2-3.",
            [ev("reef_rewind", "no_reexecution", "violated", "claim"), ev("reef_rewind", "no_reexecution", "violated", MAXRT=2)],
            numbers={"reexecuted_min": reexec[0], "reexecuted_max": reexec[1], "reexecuted_max_two_arrivals": reexec2[1]},
            measures=[Measure("kernels run twice, one preemption", 2, 3, reexec[1], reexec[1], "reef_rewind states"),
                      Measure("kernels run twice, two preemptions", 2, 3, reexec2[1], reexec2[1], "reef_rewind states, MAXRT=2",
                              role="scope")]),
        Row("4.2.6", "GPreempt", "BE delay", "+20.3 ms", Outcome.BEST_CASE,
            f"reef_rewind.be_resume_delay with the seeds' per-step costs is {ms(gp['be_delay_best_us'])}.."
            f"{ms(gp['be_delay_worst_us'])}: the seeds' figure is the least (the CAP+1 resets and the RT task's "
            f"20 ms); the RT launch and the poll that relaunches add up to 1 us each, and the timed GPU side "
            f"leaves no BE block beside the RT task. The up to 3 re-executed kernels run after the resume, "
            f"outside this delay.",
            [ev("reef_rewind", "be_resume_delay", "proved")], numbers=gp,
            measures=[Measure("BE delay (us)", 20300, 20300, gp["be_delay_best_us"], gp["be_delay_worst_us"],
                              "reef_rewind.be_resume_delay")],
            code=[Code("spec/models/reef_rewind.gpspec:55-66", "narrows", "re-executed kernels after the resume")]),
        Row("4.2.7", "AMD", "detection", "0 ms", Outcome.BEST_CASE,
            f"the monitor wakes every T_mon = 5 ms: detection takes {ms(amd['detection_best_us'])}.."
            f"{ms(amd['detection_worst_us'])} (rt_latency); in the timed kfd_monitor the LP queue leaves the GPU "
            f"{kfd['min_us']}..{kfd['max_us']} us after an RT request.",
            [ev("rt_latency", "rt_preempt_latency", "proved", **SEEDS_AMD, **_BOUNDS),
             ev("kfd_monitor", "rt_preempt_latency", "proved")], numbers={**amd, "kfd_monitor": kfd},
            measures=[Measure("detection delay (us)", 0, 0, amd["detection_best_us"], amd["detection_worst_us"],
                              "rt_latency.rt_preempt_latency - PREEMPT_US")]),
        Row("4.2.8", "AMD", "preemption", "~5 us (0.1 us call + 5 us CWSR)", Outcome.NOT_DECIDED,
            f"the seeds' constant, which cwsr takes as its SAVE_US per saved wave; timed, the queues save in "
            f"parallel: an unmap of its two queues takes {cwsr_rt['min_us']}..{cwsr_rt['max_us']} us (0 when no wave "
            f"is live: the HQD write-back only), not 2 x 5 us; in HWS mode the unmap covers every dynamic queue and "
            f"waits for a fence (4.1.9).",
            [ev("cwsr", "rt_preempt_latency", "proved")], numbers={"cwsr": cwsr_rt},
            code=[Code("spec/models/cwsr.gpspec (SAVE_US = 5, from seed 002 4.2.8)", "undecided", "the seeds' constant")]),
        Row("4.2.9", "AMD", "RT latency", "0 + 0.005 + 20 = 20.005 ms", Outcome.BEST_CASE,
            f"computed: {ms(amd['latency_best_us'])} best, {ms(amd['latency_worst_us'])} worst (T_mon).",
            [ev("rt_latency", "rt_completion", "proved", LAT_MAX=amd["latency_worst_us"], **SEEDS_AMD),
             ev("rt_latency", "rt_completion", "violated", LAT_MAX=amd["latency_worst_us"] - 1, **SEEDS_AMD)],
            numbers=amd,
            measures=[Measure("RT latency (us)", 20005, 20005, amd["latency_best_us"], amd["latency_worst_us"],
                              "rt_latency.rt_completion")]),
        Row("4.2.10", "AMD", "resume", "~5 us, no re-execution", Outcome.UNDER,
            f"no re-execution: proved with the faults off (a save is a copy); a preemption timeout loses work "
            f"instead; the 5 us is the seeds' constant (RESTORE_US). Timed, an unmap until every queue runs again "
            f"takes {cwsr_be['min_us']}..{cwsr_be['max_us']} us in cwsr (the parallel save, the restore, and a "
            f"second preemption during the restore).",
            [ev("cwsr", "no_reexecution", "proved", "claim"), ev("cwsr", "no_loss", "holds", "scope", PREEMPT_TIMEOUT=1),
             ev("cwsr", "be_resume_delay", "proved")], numbers={"cwsr_be_resume": cwsr_be}),
        Row("4.2.11", "AMD", "BE delay", "+20.01 ms", Outcome.BEST_CASE,
            f"the monitor resumes the LP queue only at its first wake-up that finds the HP queue idle: with the "
            f"seeds' constants (20 ms inference after a 5 us preemption at a wake-up) the BE delay is "
            f"{ms(amd['be_delay_best_us'])}..{ms(amd['be_delay_worst_us'])} (rt_latency.be_resume_delay); the "
            f"seeds' ~20.01 ms only when the RT work ends exactly at a wake-up that sees it ({ms(amd_end['be_delay_best_us'])} "
            f"with 19.995 ms of RT work; {ms(amd_end['be_delay_worst_us'])} when that wake-up comes first). In the timed kfd_monitor the LP queue stays off the GPU at least one "
            f"monitor period, and without bound under strict priority.",
            [ev("rt_latency", "be_resume_delay", "proved", **SEEDS_AMD, **_BOUNDS),
             ev("rt_latency", "be_resume_delay", "proved", **dict(SEEDS_AMD, EXEC_US=19995), **_BOUNDS),
             ev("kfd_monitor", "be_resume_delay", "violated")],
            numbers={"seeds": amd, "rt_work_ends_at_a_wake_up": amd_end},
            measures=[Measure("BE delay (us), RT work of 19.995 or 20 ms", 20005, 20010,
                              min(amd["be_delay_best_us"], amd_end["be_delay_best_us"]),
                              max(amd["be_delay_worst_us"], amd_end["be_delay_worst_us"]), "rt_latency.be_resume_delay")]),
        Row("4.2.12", "both", "conclusion", "AMD's RT latency is 5.4 ms lower", Outcome.REFUTED,
            f"GPreempt (reef_rewind, the code's busy poll) takes {ms(gp['latency_best_us'])}..{ms(gp['latency_worst_us'])} "
            f"and AMD (the seeds' constants) {ms(amd['latency_best_us'])}..{ms(amd['latency_worst_us'])}: AMD is at most "
            f"{ms(gp['latency_worst_us'] - amd['latency_best_us'])} faster and can be "
            f"{ms(amd['latency_worst_us'] - gp['latency_best_us'])} slower (its 5 ms monitor period).",
            [ev("reef_rewind", "rt_preempt_latency", "proved"),
             ev("rt_latency", "rt_completion", "proved", LAT_MAX=amd["latency_worst_us"], **SEEDS_AMD)],
            numbers={"gpreempt": gp, "amd": amd},
            measures=[Measure("GPreempt RT latency less AMD's (us)", 5400, 5400,
                              gp["latency_best_us"] - amd["latency_worst_us"], gp["latency_worst_us"] - amd["latency_best_us"],
                              "reef_rewind, rt_latency")]),
        Row("4.2.13", "both", "conclusion", "AMD's BE delay is 0.3 ms lower", Outcome.REFUTED,
            f"GPreempt's BE delay (reef_rewind) is {ms(gp['be_delay_best_us'])}..{ms(gp['be_delay_worst_us'])} and "
            f"AMD's, with the wake-up that resumes the BE work, {ms(amd['be_delay_best_us'])}.."
            f"{ms(amd['be_delay_worst_us'])}: AMD's is {ms(amd['be_delay_best_us'] - gp['be_delay_worst_us'])} to "
            f"{ms(amd['be_delay_worst_us'] - gp['be_delay_best_us'])} higher (its 5 ms monitor period), before "
            f"GPreempt's re-executed kernels; AMD is lower only when its RT work ends at a wake-up "
            f"({ms(amd_end['be_delay_best_us'])}).",
            [ev("reef_rewind", "be_resume_delay", "proved"),
             ev("rt_latency", "be_resume_delay", "proved", **SEEDS_AMD, **_BOUNDS)],
            numbers={"gpreempt": gp, "amd": amd},
            measures=[Measure("GPreempt BE delay less AMD's (us)", 300, 300,
                              gp["be_delay_best_us"] - amd["be_delay_worst_us"], gp["be_delay_worst_us"] - amd["be_delay_best_us"],
                              "reef_rewind, rt_latency")]),
        Row("4.2.14", "both", "conclusion", "reliability: AMD never re-executes", Outcome.UNDER,
            "confirmed with the faults off (a save is a copy); a preemption timeout loses work instead.",
            [ev("cwsr", "no_reexecution", "proved", "claim"), ev("reef_rewind", "no_reexecution", "violated"),
             ev("cwsr", "no_loss", "holds", "scope", PREEMPT_TIMEOUT=1)]),
    ]
    return [settle(r) for r in rows]


def check_claims(engine: str = "explicit") -> list[Row]:
    """Every row of tables 4.1 and 4.2 with its outcome, derived from its live evidence, measurements
    and code readings (NOTE(claims-rule))."""
    ctx = Context(engine)
    return table_41(ctx) + table_42(ctx)

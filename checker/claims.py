"""The seeds' comparison (seed 002 part 4, tables 4.1 and 4.2) checked row by row against the
model library.

Each row names the seeds' claim, the model properties that decide it (checked live, at the stated
constants), and an outcome: confirmed, refuted, confirmed only under stated parameters, confirmed
only in the best case, or not decided by a model (timing constants the models take from the seeds,
or facts that only code reading settles; those rows cite the code instead).

NOTE(claims-evidence): the outcome text of a row is an analysis; the verdicts it rests on are not
trusted but recomputed every run. A row whose evidence comes out different from what the analysis
needs is reported as `evidence changed` and makes `gpcheck claims` exit non-zero. Latency rows are
computed, not stated: the seeds' own constants go into the timed rt_latency model and the best and
worst cases are its latency properties' least and greatest measurements (checker/latency.py), each
with the instance and the witness behaviour; kfd_monitor's timed latencies answer the AMD resume rows."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable

from gpcheck.checker import explicit
from gpcheck.checker.api import verify
from gpcheck.checker.verdict import Verdict
from gpcheck.gpmodel import compile_model
from gpcheck.spec import load_spec


class Outcome(enum.Enum):
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    UNDER = "confirmed only under stated parameters"
    BEST_CASE = "confirmed only in the best case"
    NOT_DECIDED = "not decided by a model"
    CHANGED = "evidence changed"


@dataclass(frozen=True)
class Evidence:
    """One live check: a model property at stated constants, with the verdict the analysis needs."""

    model: str
    prop: str
    consts: tuple[tuple[str, int], ...]
    want: str  # "holds", "proved" or "violated"
    verdict: Verdict | None = None
    engine: str = ""
    cex_length: int | None = None
    lasso: bool = False
    low: int | None = None  # a latency property's least and greatest measurement (NOTE(latency))
    high: int | None = None
    latency: bool = False
    witness: tuple[str, ...] = ()  # the counterexample (a latency's greatest-measurement behaviour), as action labels

    @property
    def ok(self) -> bool:
        if self.verdict is None:
            return False
        return self.verdict.holds if self.want == "holds" else self.verdict.value == self.want

    def text(self) -> str:
        c = " ".join(f"{k}={v}" for k, v in self.consts)
        v = "?" if self.verdict is None else self.verdict.value
        if self.latency and self.verdict is not None and self.verdict is not Verdict.UNKNOWN:
            v += f" [min {self.low}, max {'unbounded' if self.high is None else self.high}]"
        if self.cex_length is not None:
            what = "-step witness" if self.latency and self.verdict is not Verdict.VIOLATED else " steps"
            v += f" ({self.cex_length}{what}{', lasso' if self.lasso else ''})"
        return f"{self.model}.{self.prop}{f' [{c}]' if c else ''}: {v}, {self.engine}"

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "property": self.prop, "constants": dict(self.consts), "needs": self.want,
                "verdict": self.verdict.value if self.verdict else None, "engine": self.engine,
                "counterexample_length": self.cex_length, "ok": self.ok,
                "witness": list(self.witness), **({"min": self.low, "max": self.high} if self.latency else {})}


@dataclass
class Row:
    ident: str  # "4.1.13"
    side: str  # "GPreempt" or "AMD"
    topic: str
    claim: str  # the seeds' words (translated)
    outcome: Outcome
    why: str
    evidence: list[Evidence] = field(default_factory=list)
    numbers: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"row": self.ident, "side": self.side, "topic": self.topic, "claim": self.claim,
                "outcome": self.outcome.value, "why": self.why, "evidence": [e.to_json() for e in self.evidence],
                "numbers": self.numbers}


def _label(action: str | None, args: dict[str, Any]) -> str:
    return f"{action}({', '.join(f'{k}={v}' for k, v in args.items())})" if args else str(action)


class Context:
    """Caches model runs shared by several rows."""

    def __init__(self, engine: str = "explicit"):
        self.engine = engine
        self._reports: dict[tuple[str, tuple[tuple[str, int], ...], str], Any] = {}
        self._states: dict[tuple[str, tuple[tuple[str, int], ...]], list[dict[str, Any]]] = {}

    def check(self, model: str, prop: str, want: str, **consts: int) -> Evidence:
        key = (model, tuple(sorted(consts.items())), prop)
        if key not in self._reports:
            self._reports[key] = verify(model, consts=consts, properties=[prop], engine=self.engine)
        r = self._reports[key].result(prop)
        cex = r.counterexample
        lat = r.kind == "latency"
        return Evidence(model, prop, key[1], want, r.verdict, r.engine,
                        cex.length if cex else None, bool(cex and cex.loop is not None),
                        r.detail.get("min") if lat else None, r.detail.get("max") if lat else None, lat,
                        tuple(_label(st.action, st.args) for st in cex.steps[1:]) if cex else ())

    def result(self, model: str, prop: str, **consts: int) -> Any:
        """The Result of one property at the given constants (the same cached run as `check`)."""
        self.check(model, prop, "holds", **consts)
        return self._reports[(model, tuple(sorted(consts.items())), prop)].result(prop)

    def states(self, model: str, **consts: int) -> list[dict[str, Any]]:
        """Every reachable state of an instance, decoded (complete exploration)."""
        key = (model, tuple(sorted(consts.items())))
        if key not in self._states:
            cm = compile_model(load_spec(model, consts))
            res = explicit.search(cm, set())
            assert res.complete, f"{model} {consts}: exploration incomplete"
            self._states[key] = [cm.layout.decode(s) for s in res.parent]
        return self._states[key]

    def value_range(self, model: str, fn: Callable[[dict[str, Any]], int | None], **consts: int) -> tuple[int, int]:
        vals = [v for v in (fn(s) for s in self.states(model, **consts)) if v is not None]
        return min(vals), max(vals)


# ------------------------------------------------------------------ the seeds' numbers (part 4.2)

# GPreempt column: detection by polling (table 4.1: 1 ms interval; 4.2: 0.1 ms ioctl delay),
# preemption 0.3 ms, inference 20 ms, resume 8.5 us (rounded up: the model counts integer us).
SEEDS_GPREEMPT = dict(DETECT_US=1000, DETECT_COST_US=100, PREEMPT_US=300, EXEC_US=20000, RESUME_US=9)
# AMD column: KFD monitor T_mon = 5 ms (table 4.1), detection counted as 0, CWSR 0.1 + 5 us each way.
SEEDS_AMD = dict(DETECT_US=5000, DETECT_COST_US=0, PREEMPT_US=5, EXEC_US=20000, RESUME_US=5)
_BOUNDS = dict(LAT_MAX=10**6)


def _latency(ctx: Context, consts: dict[str, int]) -> dict[str, int]:
    """Best and worst RT latency and BE delay (us): the least and greatest measurements of the
    timed rt_latency model's latency properties (checker/latency.py), computed now."""
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


def _settle(row: Row) -> Row:
    """NOTE(claims-evidence)."""
    bad = [e for e in row.evidence if not e.ok]
    if bad:
        row.why = "the analysis needs " + "; ".join(f"{e.model}.{e.prop} {e.want}" for e in bad) + ". " + row.why
        row.outcome = Outcome.CHANGED
    return row


def _span(ctx: Context, model: str, prop: str, **consts: int) -> dict[str, int | None]:
    """A latency property's least and greatest measurement (us), computed now (NOTE(latency))."""
    r = ctx.result(model, prop, **consts)
    return {"min_us": r.detail.get("min"), "max_us": r.detail.get("max")}


def table_41(ctx: Context) -> list[Row]:
    """Table 4.1, core mechanisms."""
    C, R, U, N = Outcome.CONFIRMED, Outcome.REFUTED, Outcome.UNDER, Outcome.NOT_DECIDED
    ev = ctx.check
    kfd_rt = _span(ctx, "kfd_monitor", "rt_preempt_latency")
    reef_rt = _span(ctx, "reef_rewind", "rt_preempt_latency")
    cwsr_rt = _span(ctx, "cwsr", "rt_preempt_latency")
    cwsr_rt_timeout = _span(ctx, "cwsr", "rt_preempt_latency", PREEMPT_TIMEOUT=1)
    rows = [
        Row("4.1.1", "GPreempt", "priority levels", "2 levels, through timeslices", C,
            "set_priority maps 0 to a 1 s timeslice and every other value to 1 us (gpreempt.cpp:61-72): two "
            "effective levels; the 1 us BE slice bounds how long an LC request waits.",
            [ev("gpreempt_timeslice", "bounded_inversion", "holds")]),
        Row("4.1.1", "AMD", "priority levels", "16 levels, in hardware", U,
            "KFD queue priority 0..15 exists (kfd_priv.h:L452-455) but maps to 3 pipe priorities and is only an "
            "arbitration weight (amd_cwsr.md 2.2): while both queues are mapped the LP queue may take every tick; "
            "only the proposed monitor's unmap bounds that, by T_mon (kfd_monitor: bound T_MON holds, T_MON-1 fails).",
            [ev("kfd_monitor", "bounded_inversion", "holds"), ev("kfd_monitor", "bounded_inversion", "violated", INV_BOUND=4)]),
        Row("4.1.2", "GPreempt", "priority granularity", "timeslice length", C,
            "the only knob is NVA06C_CTRL_CMD_SET_TIMESLICE on the TSG (gpreempt.cpp:52-72); code reading.", []),
        Row("4.1.2", "AMD", "priority granularity", "hardware priority register", U,
            "cp_hqd_queue_priority / cp_hqd_pipe_priority exist (kfd_mqd_manager_v9.c:L106-110) but are weights, "
            "not preemption triggers; code reading, see 4.1.1.", []),
        Row("4.1.3", "GPreempt", "changing a priority", "rebuild the context", R,
            "the timeslice control can be issued on a TSG at any time; GPreempt creates one context per priority "
            "class once at setup (gpreemptclient.cpp:159-199) and never changes it; code reading.", []),
        Row("4.1.3", "AMD", "changing a priority", "dynamic ioctl", U,
            "AMDKFD_IOC_UPDATE_QUEUE changes it at run time, but in HWS mode update_queue runs execute_queues_cpsch, "
            "which unmaps every dynamic queue of every process (amd_cwsr.md 3.1); cwsr models that unmap (all "
            "queues at once) and proves it exact.",
            [ev("cwsr", "no_loss", "proved", Q=2, N=1, L=2)]),
        Row("4.1.4", "both", "submission", "pushbuffer / doorbell + MMIO, ~100 ns, same path", U,
            "true of the AMD path and of GPreempt on NVIDIA (a ring and a doorbell, untouched by preemption: cwsr "
            "and gpreempt_timeslice keep the ring); not of REEF's BE launches, which go through a host-side task "
            "queue (cleared on preemption: reef_rewind.ring_kept fails) and a CAP = 2 deep device window before "
            "reaching the AQL ring (DOMAIN.md mechanism 1). The ~100 ns is not modelled.",
            [ev("cwsr", "ring_kept", "holds"), ev("gpreempt_timeslice", "ring_kept", "holds"),
             ev("reef_rewind", "ring_kept", "violated")]),
        Row("4.1.6", "GPreempt", "monitoring", "user-space polling + ioctl, every 1 ms", R,
            "the REEF scheduler busy-polls a host-side task queue with no sleep and no ioctl "
            "(reef_scheduler.cpp:252-258, checks at :277,:293,:298,:501); the CUDA path has no monitor at all "
            "(hardware timeslices; the hint daemon polls an atomic). reef_rewind: an RT task waits at most 9 "
            "scheduler steps whatever N is (the relaunch loop checks after every launch).",
            [ev("reef_rewind", "bounded_inversion", "holds"), ev("reef_rewind", "bounded_inversion", "violated", INV_BOUND=8),
             ev("reef_rewind", "bounded_inversion", "holds", N=5)]),
        Row("4.1.7", "AMD", "monitoring interval", "5 ms", C,
            f"a design parameter of the proposed monitor; kfd_monitor shows it is exactly the inversion bound, and "
            f"its timed rt_preempt_latency is {kfd_rt['min_us']}..{kfd_rt['max_us']} us: up to one period "
            f"(see 4.2.7: the seeds then count 0 ms for detection).",
            [ev("kfd_monitor", "bounded_inversion", "holds", T_MON=6, INV_BOUND=6),
             ev("kfd_monitor", "bounded_inversion", "violated", T_MON=6, INV_BOUND=5),
             ev("kfd_monitor", "rt_preempt_latency", "proved")], numbers=kfd_rt),
        Row("4.1.8", "GPreempt", "monitoring overhead", "high (ioctl)", R,
            "detection issues no ioctl (busy polling of a host queue): its cost is a spinning CPU core; code "
            "reading (reef_scheduler.cpp:252-258).", []),
        Row("4.1.8", "AMD", "monitoring overhead", "low (zero)", N,
            "a kernel thread waking every T_mon to read rptr/wptr: plausible, not costed by any model.", []),
        Row("4.1.9", "GPreempt", "preemption trigger", "user space + ioctl, 1-10 us", U,
            f"REEF: one async flag write, a host-queue clear (no ioctl), then CAP+1 = 3 wave-reset ioctls and a "
            f"sync (reef_scheduler.cpp:316-357); the CUDA path has no trigger (hardware timeslice). With the seeds' "
            f"per-step times (4.2.3) the timed reef_rewind takes {reef_rt['min_us']}..{reef_rt['max_us']} us from "
            f"an RT arrival to its launch: the three 100 us resets dominate, not the 1-10 us ioctl.",
            [ev("reef_rewind", "rt_preempt_latency", "proved")], numbers=reef_rt),
        Row("4.1.9", "AMD", "preemption trigger", "kernel function, < 1 us", R,
            "6.12 has no kfd_queue_preempt_single; preempting one queue in HWS mode unmaps all dynamic queues "
            "through the HIQ and waits for a fence (up to queue_preemption_timeout_ms = 9000 ms, then a reset): "
            "cwsr preempts every queue at once and, with the timeout fault, loses work; kfd_sched (the monitor on "
            "cwsr) unmaps an active HP queue whenever it preempts LP, and a timeout can then reset the HP queue; "
            f"timed with the seeds' 5 us save, an unmap takes {cwsr_rt['min_us']}..{cwsr_rt['max_us']} us, and "
            f"{cwsr_rt_timeout['min_us']}..{cwsr_rt_timeout['max_us']} us when a queue will not preempt "
            f"(KFD_UNMAP_LATENCY_MS).",
            [ev("cwsr", "no_loss", "violated", PREEMPT_TIMEOUT=1), ev("kfd_sched", "hp_undisturbed", "violated"),
             ev("kfd_sched", "hp_survives", "violated", PREEMPT_TIMEOUT=1), ev("cwsr", "rt_preempt_latency", "proved"),
             ev("cwsr", "rt_preempt_latency", "proved", PREEMPT_TIMEOUT=1)],
            numbers={"faults_off": cwsr_rt, "preempt_timeout": cwsr_rt_timeout}),
        Row("4.1.10", "GPreempt", "preemption mechanism", "software cooperation + ring-buffer clear", U,
            "true of the REEF baseline on HIP only (reef_rewind), where this repo's kernels ignore the flag so BE "
            "blocks keep running during the RT task; GPreempt on NVIDIA is a hardware TSG timeslice that saves "
            "state (gpreempt_timeslice).",
            [ev("reef_rewind", "preemption_effective", "violated"), ev("gpreempt_timeslice", "no_loss", "holds")]),
        Row("4.1.10", "AMD", "preemption mechanism", "hardware wave-level CWSR", C,
            "unmap with SAVE: each live wave's PC and registers go to the save area and come back on restore.",
            [ev("cwsr", "resume_exact", "holds")]),
        Row("4.1.11", "GPreempt", "preemption precision", "thread-block boundary", R,
            "REEF kills waves at any point and saves nothing; NVIDIA's timeslice switch pauses blocks mid-kernel "
            "(CILP, measured on an H200): nvidia_tsg switches with no drain under PMODE=2, a block length with "
            "thread-block preemption.",
            [ev("nvidia_tsg", "switch_latency", "holds"), ev("nvidia_tsg", "switch_latency", "violated", PMODE=1)]),
        Row("4.1.11", "AMD", "preemption precision", "instruction level", C,
            "restore returns to the saved PC (cwsr_trap_handler_gfx9.asm L917).",
            [ev("cwsr", "resume_exact", "holds"), ev("cwsr", "no_reexecution", "proved")]),
        Row("4.1.12", "both", "preemption latency", "10-100 us vs 1-10 us", N,
            f"no model carries measured preemption times: fed the seeds' own per-step times, the timed models give "
            f"REEF {reef_rt['min_us']}..{reef_rt['max_us']} us (above the seeds' 10-100 us: three resets) and CWSR "
            f"{cwsr_rt['min_us']}..{cwsr_rt['max_us']} us; the code's only AMD bound is the 9000 ms fence "
            f"timeout before a reset (4.1.9).",
            [ev("reef_rewind", "rt_preempt_latency", "proved"), ev("cwsr", "rt_preempt_latency", "proved")],
            numbers={"reef_rewind": reef_rt, "cwsr": cwsr_rt}),
        Row("4.1.13", "GPreempt", "ring buffer", "cleared, wptr = rptr", U,
            "true of REEF's software host queue (the clear drops it, then the relaunch rewinds to kernel_offset: "
            "reef_rewind.ring_kept fails at the clear); the AQL ring is never rewritten (clearHSAQueue is "
            "commented out) and GPreempt on NVIDIA never touches its pushbuffer.",
            [ev("reef_rewind", "ring_kept", "violated"), ev("reef_rewind", "ring_integrity", "holds"),
             ev("gpreempt_timeslice", "ring_kept", "holds")]),
        Row("4.1.13", "AMD", "ring buffer", "unchanged", C,
            "rptr and wptr live in user memory and are never rewritten; rptr never moves back.",
            [ev("cwsr", "ring_kept", "holds"), ev("cwsr", "ring_integrity", "holds")]),
        Row("4.1.14", "GPreempt", "state saved", "kernel_offset (approximate)", U,
            "only for the REEF path: there the offset formula re-runs kernels, and loses one under a launch-time "
            "read index, a dropped nop, or flag-honouring kernels. GPreempt on NVIDIA saves the context in "
            "hardware (gpreempt_timeslice: nothing re-runs, nothing is lost).",
            [ev("reef_rewind", "no_reexecution", "violated"), ev("gpreempt_timeslice", "no_reexecution", "holds"),
             ev("gpreempt_timeslice", "no_loss", "holds"), ev("reef_rewind", "no_loss", "violated", READ_AT_LAUNCH=1),
             ev("reef_rewind", "no_loss", "violated", NOP=3), ev("reef_rewind", "no_loss", "violated", FLAG_HONOURED=1)]),
        Row("4.1.14", "AMD", "state saved", "PC + registers (exact)", C, "",
            [ev("cwsr", "no_loss", "proved"), ev("cwsr", "resume_exact", "holds")]),
        Row("4.1.15", "GPreempt", "resume", "resubmit kernels", U,
            "REEF relaunches kernel_offset..N-1 one by one (and returns early when another RT task waits); "
            "GPreempt on NVIDIA resubmits nothing (the TSG context is restored).",
            [ev("reef_rewind", "no_reexecution", "violated"), ev("gpreempt_timeslice", "no_reexecution", "holds")]),
        Row("4.1.15", "AMD", "resume", "restore wave state", C, "", [ev("cwsr", "resume_exact", "holds")]),
        Row("4.1.16", "GPreempt", "resume latency", "N x 100 ns, N = remaining kernels", U,
            "N is the remaining kernels plus the CAP+1 = 3 kernels the formula re-runs (see 4.2.4); the ~100 ns "
            "per launch is the seeds' figure.", [ev("reef_rewind", "no_reexecution", "violated")]),
        Row("4.1.16", "AMD", "resume latency", "1-10 us, fixed", Outcome.BEST_CASE,
            "the restore itself is the seeds' constant, but the proposed monitor issues it only at a wake-up that "
            "finds the HP queue idle: in the timed kfd_monitor (1 ms ticks, T_mon = 5 ms, 2 ms RT requests) the LP "
            "queue is off the GPU at least one monitor period and, under strict priority, without bound (RT "
            "requests at every wake-up); the timeslice option bounds it to one period.",
            [ev("kfd_monitor", "be_resume_delay", "violated"), ev("kfd_monitor", "be_resume_delay", "proved", TIMESLICE=1)]),
        Row("4.1.17", "GPreempt", "re-execution", "possible", U,
            "confirmed for the REEF path (shortest counterexample below); refuted for GPreempt on NVIDIA, whose "
            "hardware context switch never re-runs work.",
            [ev("reef_rewind", "no_reexecution", "violated"), ev("gpreempt_timeslice", "no_reexecution", "holds")]),
        Row("4.1.17", "AMD", "re-execution", "never", C,
            "proved with the faults off; with a preemption timeout nothing re-runs either, but work is lost "
            "(reported to the process as memory lost).",
            [ev("cwsr", "no_reexecution", "proved"), ev("cwsr", "no_reexecution", "holds", PREEMPT_TIMEOUT=1),
             ev("cwsr", "no_loss", "violated", PREEMPT_TIMEOUT=1), ev("cwsr", "loss_reported", "holds", PREEMPT_TIMEOUT=1)]),
        Row("4.1.18", "GPreempt", "application change", "needs preempt_flag", R,
            "this repo loads the raw kernels, which ignore the flag (hybrid_executor.cpp:41-53); flag-honouring "
            "kernels would even add a loss (the flag lands before the host-queue clear). GPreempt on NVIDIA only "
            "adds spin kernels.",
            [ev("reef_rewind", "no_loss", "holds"), ev("reef_rewind", "no_loss", "violated", FLAG_HONOURED=1)]),
        Row("4.1.18", "AMD", "application change", "none", C, "CWSR is transparent to kernels.",
            [ev("cwsr", "no_loss", "proved")]),
        Row("4.1.19", "GPreempt", "kernel requirement", "idempotent or stateless", U,
            "only for the REEF path, which re-runs up to CAP+1 kernels per preemption (see 4.2.5); GPreempt on "
            "NVIDIA never re-runs a kernel (hardware context switch).",
            [ev("reef_rewind", "no_reexecution", "violated"), ev("gpreempt_timeslice", "no_reexecution", "holds")]),
        Row("4.1.19", "AMD", "kernel requirement", "any kernel", C, "exactly-once, proved (faults off).",
            [ev("cwsr", "no_reexecution", "proved"), ev("cwsr", "no_loss", "proved")]),
        Row("4.1.20", "GPreempt", "deployment", "closed-source driver patch", R,
            "patch/driver.patch applies to NVIDIA's open GPU kernel modules; its real cost is that it drops the "
            "RM control security check for every process.",
            [ev("nv_query_group", "control_authorised", "violated"),
             ev("nv_query_group", "control_authorised", "holds", BYPASS=0)]),
        Row("4.1.20", "AMD", "deployment", "open KFD modification", N,
            "the proposed scheduler is a design; no code exists to check.", []),
    ]
    return [_settle(r) for r in rows]


def table_42(ctx: Context) -> list[Row]:
    """Table 4.2, the timeline (100 kernels, preemption at k25, 20 ms inference)."""
    gp, amd = _latency(ctx, SEEDS_GPREEMPT), _latency(ctx, SEEDS_AMD)
    amd_end = _latency(ctx, dict(SEEDS_AMD, EXEC_US=19995))  # the RT work ends exactly at a monitor wake-up
    reef = _span(ctx, "reef_rewind", "rt_preempt_latency")
    kfd = _span(ctx, "kfd_monitor", "rt_preempt_latency")
    ms = lambda us: f"{us / 1000:g} ms"  # noqa: E731
    R_ = kernel_offset(99, 75, 2, 0)
    relaunched = 100 - R_
    # kernels of one BE task run more than once (runs is per BE queue since reef_rewind has Q queues)
    reexec = ctx.value_range("reef_rewind", lambda s: max(sum(1 for r in row if r > 1) for row in s["runs"]))
    reexec2 = ctx.value_range("reef_rewind", lambda s: max(sum(1 for r in row if r > 1) for row in s["runs"]), MAXRT=2)
    ev = ctx.check
    rows = [
        Row("4.2.1", "GPreempt", "detection", "5.1 ms", Outcome.REFUTED,
            f"5.1 ms is the time of detection, not its delay: the request arrived at 5 ms. With the seeds' own "
            f"1 ms poll and 0.1 ms ioctl it is {ms(gp['detection_best_us'])}..{ms(gp['detection_worst_us'])}.",
            [], numbers=gp),
        Row("4.2.2", "GPreempt", "RT latency", "5.1 + 0.3 + 20 = 25.4 ms", Outcome.REFUTED,
            f"computed with the seeds' constants: {ms(gp['latency_best_us'])} best, {ms(gp['latency_worst_us'])} "
            f"worst; the 25.4 ms adds the arrival time.", [ev("rt_latency", "rt_completion", "proved",
            LAT_MAX=gp["latency_worst_us"], **SEEDS_GPREEMPT),
            ev("rt_latency", "rt_completion", "violated", LAT_MAX=gp["latency_worst_us"] - 1, **SEEDS_GPREEMPT)],
            numbers=gp),
        Row("4.2.3", "GPreempt", "preemption", "~300 us (flag 1 us + clear 10 us + reset 100 us)", Outcome.UNDER,
            f"the parts as stated add up to 111 us; the code issues the reset CAP+1 = 3 times (reef_scheduler.cpp:"
            f"343-344), and with those parts the timed reef_rewind takes {reef['max_us']} us from the RT arrival "
            f"to its launch ({reef['min_us']}..{reef['max_us']}): about the seeds' 300 us, for the code's reason.",
            [ev("reef_rewind", "rt_preempt_latency", "proved")], numbers=reef),
        Row("4.2.4", "GPreempt", "resume", "75 kernels x 100 ns + 1 us = 8.5 us", Outcome.REFUTED,
            f"the formula (reef_rewind's offset step) restarts at max(99 - 75 - 2, 0) = {R_}: {relaunched} kernels "
            f"are relaunched, {relaunched * 0.1:g} us + 1 us = {relaunched * 0.1 + 1:g} us (the seeds' part 1.4 "
            f"itself says {relaunched}).", [], numbers={"kernel_offset": R_, "relaunched": relaunched}),
        Row("4.2.5", "GPreempt", "re-execution", "2-3 kernels may run twice", Outcome.UNDER,
            f"per preemption: CAP+1 = 3 kernels that already left the host queue are relaunched; in reef_rewind "
            f"(N=4, CAP=2, one RT arrival) up to {reexec[1]} kernels run twice; with two RT arrivals (MAXRT=2) up "
            f"to {reexec2[1]} of the 4 kernels do, so a task preempted repeatedly re-runs more than 2-3.",
            [ev("reef_rewind", "no_reexecution", "violated"), ev("reef_rewind", "no_reexecution", "violated", MAXRT=2)],
            numbers={"reexecuted_min": reexec[0], "reexecuted_max": reexec[1], "reexecuted_max_two_arrivals": reexec2[1]}),
        Row("4.2.6", "GPreempt", "BE delay", "+20.3 ms", Outcome.UNDER,
            f"preemption + inference + the wait for the next 1 ms poll + resume = {ms(gp['be_delay_best_us'])}.."
            f"{ms(gp['be_delay_worst_us'])} (rt_latency.be_resume_delay with the seeds' constants), if the "
            f"re-executed kernels cost nothing (they do: up to 3 kernels run again).",
            [ev("rt_latency", "be_resume_delay", "proved", **SEEDS_GPREEMPT, **_BOUNDS)], numbers=gp),
        Row("4.2.7", "AMD", "detection", "0 ms", Outcome.BEST_CASE,
            f"the monitor wakes every T_mon = 5 ms: detection takes {ms(amd['detection_best_us'])}.."
            f"{ms(amd['detection_worst_us'])} (rt_latency); in the timed kfd_monitor the LP queue leaves the GPU "
            f"{kfd['min_us']}..{kfd['max_us']} us after an RT request.",
            [ev("rt_latency", "rt_preempt_latency", "proved", **SEEDS_AMD, **_BOUNDS),
             ev("kfd_monitor", "rt_preempt_latency", "proved")], numbers={**amd, "kfd_monitor": kfd}),
        Row("4.2.8", "AMD", "preemption", "~5 us (0.1 us call + 5 us CWSR)", Outcome.NOT_DECIDED,
            "the seeds' constant; in HWS mode the unmap covers every dynamic queue and waits for a fence (4.1.9).", []),
        Row("4.2.9", "AMD", "RT latency", "0 + 0.005 + 20 = 20.005 ms", Outcome.BEST_CASE,
            f"computed: {ms(amd['latency_best_us'])} best, {ms(amd['latency_worst_us'])} worst (T_mon).",
            [ev("rt_latency", "rt_completion", "proved", LAT_MAX=amd["latency_worst_us"], **SEEDS_AMD),
             ev("rt_latency", "rt_completion", "violated", LAT_MAX=amd["latency_worst_us"] - 1, **SEEDS_AMD)],
            numbers=amd),
        Row("4.2.10", "AMD", "resume", "~5 us, no re-execution", Outcome.UNDER,
            "no re-execution: proved with the faults off; the 5 us is the seeds' constant.",
            [ev("cwsr", "no_reexecution", "proved")]),
        Row("4.2.11", "AMD", "BE delay", "+20.01 ms", Outcome.BEST_CASE,
            f"the monitor resumes the LP queue only at its first wake-up that finds the HP queue idle: with the "
            f"seeds' constants (20 ms inference after a 5 us preemption at a wake-up) the BE delay is "
            f"{ms(amd['be_delay_best_us'])}..{ms(amd['be_delay_worst_us'])} (rt_latency.be_resume_delay); the "
            f"seeds' 20.01 ms only when the RT work ends exactly at a wake-up ({ms(amd_end['be_delay_best_us'])} "
            f"with 19.995 ms of RT work). In the timed kfd_monitor the LP queue stays off the GPU at least one "
            f"monitor period, and without bound under strict priority.",
            [ev("rt_latency", "be_resume_delay", "proved", **SEEDS_AMD, **_BOUNDS),
             ev("rt_latency", "be_resume_delay", "proved", **dict(SEEDS_AMD, EXEC_US=19995), **_BOUNDS),
             ev("kfd_monitor", "be_resume_delay", "violated")],
            numbers={"seeds": amd, "rt_work_ends_at_a_wake_up": amd_end}),
        Row("4.2.12", "both", "conclusion", "AMD's RT latency is 5.4 ms lower", Outcome.REFUTED,
            f"with the seeds' own constants GPreempt takes {ms(gp['latency_best_us'])}..{ms(gp['latency_worst_us'])} "
            f"and AMD {ms(amd['latency_best_us'])}..{ms(amd['latency_worst_us'])}: AMD is at most "
            f"{ms(gp['latency_worst_us'] - amd['latency_best_us'])} faster and can be "
            f"{ms(amd['latency_worst_us'] - gp['latency_best_us'])} slower (its 5 ms monitor period).", [],
            numbers={"gpreempt": gp, "amd": amd}),
        Row("4.2.13", "both", "conclusion", "AMD's BE delay is 0.3 ms lower", Outcome.REFUTED,
            f"with the seeds' constants and the wake-up that resumes the BE work, GPreempt's BE delay is "
            f"{ms(gp['be_delay_best_us'])}..{ms(gp['be_delay_worst_us'])} and AMD's "
            f"{ms(amd['be_delay_best_us'])}..{ms(amd['be_delay_worst_us'])}: AMD's is "
            f"{ms(amd['be_delay_best_us'] - gp['be_delay_worst_us'])} higher (its 5 ms monitor period against a "
            f"1 ms poll), before GPreempt's re-executed kernels; AMD is lower only when its RT work ends at a "
            f"wake-up ({ms(amd_end['be_delay_best_us'])}).",
            [ev("rt_latency", "be_resume_delay", "proved", **SEEDS_GPREEMPT, **_BOUNDS),
             ev("rt_latency", "be_resume_delay", "proved", **SEEDS_AMD, **_BOUNDS)],
            numbers={"gpreempt": gp, "amd": amd}),
        Row("4.2.14", "both", "conclusion", "reliability: AMD never re-executes", Outcome.UNDER,
            "confirmed with the faults off; a preemption timeout loses work instead.",
            [ev("cwsr", "no_reexecution", "proved"), ev("reef_rewind", "no_reexecution", "violated"),
             ev("cwsr", "no_loss", "violated", PREEMPT_TIMEOUT=1)]),
    ]
    return [_settle(r) for r in rows]


def check_claims(engine: str = "explicit") -> list[Row]:
    """Every row of tables 4.1 and 4.2 with its outcome and live evidence."""
    ctx = Context(engine)
    return table_41(ctx) + table_42(ctx)

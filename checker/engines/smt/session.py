"""One Z3 solver with push/pop frames, a deadline, a seed and three-valued answers.

Engines never call `Solver.check` themselves: `Session.check` turns Z3's answer into `Sat`
(with the model), `Unsat` or `Unknown(reason)`, and charges every check against one overall
deadline so that an engine's `timeout` bounds its whole run."""

from __future__ import annotations

import gc
import math
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Union

import z3

from gpcheck.checker.core import budget

DEFAULT_SEED = 0

# a stopped budget (SIGINT, SIGTERM, --max-memory, the command's --timeout) interrupts the
# running Z3 call at once instead of waiting for it (checker/core/budget.py). Z3's own Ctrl-C handler
# is off: it would take SIGINT from Python during a call, cancel that one call only, and the
# engine would go on with the next
z3.set_param("ctrl_c", False)
budget.on_stop(lambda: z3.main_ctx().interrupt())


# NOTE(stale-interrupt): `Context.interrupt` stays pending on Z3's context until some call
# consumes it, and the call it cancels may answer wrongly: a QF_FD (bit-vector) check canceled
# that way answered `unsat` to every question of a BMC run, which reported a property false in
# the initial state as holding ("every behaviour ends within 0 steps"). The watchdog interrupts
# every tick while a budget is stopped, so (1) leaving a budget consumes a pending interrupt
# with an empty check, before any later command in the same process (found by the in-process
# differential run, tests/quality/differential.py --cli: a timed-out run poisoned the next), and
# (2) no answer of a check that ran while the budget was stopped is trusted (`trusted`).
def _consume_pending_interrupt() -> None:
    z3.Solver().check()


budget.on_leave(_consume_pending_interrupt)


def trusted(r: z3.CheckSatResult) -> z3.CheckSatResult:
    """Z3's answer, or `unknown` when the budget stopped: once interrupted, Z3 may cancel a
    check into a wrong answer (NOTE(stale-interrupt))."""
    return z3.unknown if budget.stopped() else r


@dataclass(frozen=True)
class Sat:
    model: z3.ModelRef


@dataclass(frozen=True)
class Unsat:
    pass


@dataclass(frozen=True)
class Unknown:
    reason: str


Answer = Union[Sat, Unsat, Unknown]


# NOTE(step-limits): what an engine *proves* never depends on the clock. Internal caps (a
# Houdini's share, one Spacer part, the for-all filters) are Z3 resource limits (`rlimit`):
# Z3 counts deterministic steps in one counter per context, so the same queries in the same
# order stop at the same step on any machine under any load, and the same command gives the
# same verdicts and the same printed invariants. A `Deadline` carries such a step budget
# beside the wall clock; only the user's `timeout` (and the command's budget: signals,
# --max-memory) stays a wall-clock stop, answered `unknown` with reason `timeout`. Z3's seeds
# are fixed too (DEFAULT_SEED). The budgets were sized from the old seconds at rates measured on
# the 2-core development machine (2026-11-24): about 8 M steps per second of Z3's own time, and
# per CPU second of a whole phase (Python's share included) about 2 M for pdr's Houdini
# (reef_rewind: 11.7 M steps, 6.6 s) and 3 to 4 M for --for-all's fixed-size Houdini and cores
# (reef_rewind's second round: 72.8 M steps, 17.2 s). Figures to size budgets by, never read.
# Within one process a later run may still print other (equally valid) lemmas than an earlier
# one: Z3 numbers terms in creation order, and its unsat cores follow that numbering.


_PROBES: dict[int, z3.Solver] = {}  # per live context (id): one idle solver whose statistics read its counter


def steps_used() -> int:
    """Z3's resource counter of the current context (`z3.main_ctx()`, a `fresh_context` inside
    one): deterministic, only ever grows. (Read through one idle solver per context: making a
    solver per reading costs 35x more and counts a step.)"""
    ctx = z3.main_ctx()
    probe = _PROBES.get(id(ctx))
    if probe is None:
        probe = _PROBES[id(ctx)] = z3.Solver(ctx=ctx)
    return int(probe.statistics().get_key_value("rlimit count"))


# NOTE(fresh-context): Z3 numbers terms in the order a context creates them (and reuses the
# numbers of freed ones), and its search and unsat cores follow that numbering; so a run in a
# context that earlier runs used can take other paths than the same run in a fresh process: a
# second for-all run in one process printed other lemmas, and once a consecution check came out
# `unknown` (incomplete quantifiers) that a fresh process proves. `fresh_context` makes every
# term and solver of a run (everything that asks `z3.main_ctx()`: the default of every z3
# constructor) belong to a new context, so a run in-process is the run of a fresh process.
# Nothing made inside may be used after it, nor anything made before it inside it (module-level
# z3 objects: none; terms.true()/false() look theirs up per context). One thread at a time: the
# main context is process-wide (as Z3's contexts are not thread-safe anyway). The budget's
# interrupt goes to `z3.main_ctx()` when it fires, so it reaches the run's context.
@contextmanager
def fresh_context() -> Iterator[z3.Context]:
    """A block in which `z3.main_ctx()` is a new Z3 context (NOTE(fresh-context))."""
    ctx = z3.Context()
    saved = z3.z3._main_ctx  # z3's own module global behind main_ctx()
    z3.z3._main_ctx = ctx
    assert z3.main_ctx() is ctx
    try:
        yield ctx
    finally:
        z3.z3._main_ctx = saved
        _PROBES.pop(id(ctx), None)


# NOTE(fresh-context), continued: a fresh context is not enough. Z3 reuses the numbers of freed
# terms, and a Python z3 object frees its term when it is collected: by reference counting,
# at a point the run's own code fixes, or, inside a reference cycle, by Python's cyclic garbage
# collector, whose passes come after some number of allocations counted over the whole
# process. So whatever ran before (even an allocation of plain Python objects) moved the
# collections, the frees and the numbering. (streams' slots_conserved printing 3 lemmas or 6,
# first put down to this, came from a name that followed a memory address: NOTE(term-names).)
# `no_automatic_gc` switches the cyclic collector off for a run: what cycles hold is given back
# after it (reef_rewind --for-all N: 306 MiB peak against 302 MiB with the collector on). Full
# collections at fixed points of the run instead were tried: 15 % less CPU on cwsr, but runs in
# one process no longer all matched fresh ones (streams' no_eviction: 5 lemmas or 3; why was
# not found: such a collection also frees what earlier runs left), and blp's no_loss came out
# unknown. Cost of the collector off: cwsr --for-all Q,N,W,L took 22 to 24 s of CPU against 17
# to 19.5 s before (every property proved either way, no_loss with 13 lemmas against 11;
# 2026-11-24, load 4 to 6).
# Between machines one difference remains: *when* Python frees an object depends on the
# interpreter (3.12 inlines comprehensions and drops some temporaries earlier than 3.11), so the
# numbers Z3 reuses, `simplify`'s argument order and then the printed lemmas differ between the
# device machine (3.12) and the development machine (3.11), verdicts the same (blp no_loss 16
# lemmas against 14; its queries differ from the 69th on, by the order of a disjunction). Keeping
# every term of the run's context alive until it ends (`AstRef.__del__` a no-op for it) was
# tried on 2026-11-24: blp's 262 queries then matched text for text on both machines at +2 MiB,
# but the other numbering left reef_rewind --for-all N's no_loss unknown in the full run (its
# refinement drew other cores), so it was not kept. (The float-tie half of the difference is
# gone: NOTE(exact-sign) in checker/engines/param/refs.py.)
@contextmanager
def no_automatic_gc() -> Iterator[None]:
    """A block without automatic cyclic garbage collection (NOTE(fresh-context)); the
    collector's state is restored on leaving. Process-wide, as the collector is."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# NOTE(term-names): a run's Z3 queries are a function of its inputs, the names of its constants
# included: Z3's search follows the names (they enter the hashes Z3 keeps its terms by), so a
# name that follows a memory address changes what a run finds. A ghost counter named
# `s.ghost<id() of its Fold node>` (checker/engines/param/encode.py) made fresh processes of
# `verify nvidia_streams --for-all S,SLOTS,Q` print slots_conserved with 3, 6 or 7 lemmas and
# no_eviction with 3 or 4 (2026-11-24): the queries' SMT text differed only in that name, and
# Z3's step counts from there on. The address differs between processes by address-space
# randomisation and, with that off (`setarch -R`), still by the allocation history, which the
# budget's watchdog and the progress meter's threads change at times the scheduler picks (four
# runs, four addresses; two addresses without those threads): so the variation looked like a
# dependence on load. Fresh names are counters reset per run
# (param/encode.reset_names) or positions; never id(), the hash() of a str (PYTHONHASHSEED), or
# the order of a set of objects. tests/unit/test_forall_determinism.py compares every query of
# two runs (tests/querylog.py), in one process with the IR at other addresses, and in two.


# NOTE(wall-clock-cut): the wall clock only ever cuts a run short, to `unknown` (reason
# `timeout`): it never chooses what is printed. A check cut by the clock answers `unknown`, and
# the code around it may fall back on something valid but different (for-all's and pdr's
# closing of an unsat core keeps the whole lemma set when a check gives no answer, meant for a
# step limit): so a proof that finishes after the clock ran out (`Deadline.out_of_time`) is
# reported `unknown` (param/prove.py `_prove`, smt/pdr.py `_by_lemmas`) and one that finished
# before depended on no clock. Step limits (NOTE(step-limits)) are deterministic and may
# choose.


class Deadline:
    """Wall-clock budget shared by every check of one engine run (None = unlimited), never
    beyond the command's budget (checker/core/budget.py): a stopped budget has no time left. With
    `steps` it is also a deterministic budget of Z3 steps (NOTE(step-limits)), counted from
    its creation and never beyond its `parent`'s."""

    def __init__(self, timeout: float | None, *, steps: int | None = None, parent: "Deadline | None" = None) -> None:
        self.end = None if timeout is None else time.monotonic() + timeout
        if parent is not None and parent.end is not None:
            self.end = parent.end if self.end is None else min(self.end, parent.end)
        self.steps_end = None if steps is None else steps_used() + steps
        if parent is not None and parent.steps_end is not None:
            self.steps_end = parent.steps_end if self.steps_end is None else min(self.steps_end, parent.steps_end)

    def limited(self, steps: int) -> "Deadline":
        """This deadline, with at most `steps` more Z3 steps (NOTE(step-limits))."""
        return Deadline(None, steps=steps, parent=self)

    def remaining(self) -> float | None:
        outer = budget.remaining()
        own = None if self.end is None else max(0.0, self.end - time.monotonic())
        return own if outer is None else outer if own is None else min(own, outer)

    def steps_left(self) -> int | None:
        """Z3 steps left (None: no step budget)."""
        return None if self.steps_end is None else max(0, self.steps_end - steps_used())

    @property
    def out_of_steps(self) -> bool:
        left = self.steps_left()
        return left is not None and left <= 0

    @property
    def out_of_time(self) -> bool:
        """The wall clock (the user's limit, the command's budget) ran out: from then on what a
        run finds may depend on the timing, so it reports `unknown` (NOTE(wall-clock-cut))."""
        r = self.remaining()
        return r is not None and r <= 0.0

    @property
    def expired(self) -> bool:
        return self.out_of_time or self.out_of_steps

    def ms(self) -> int | None:
        """Remaining milliseconds for a Z3 `timeout` parameter (at least 1), rounded up: a
        check Z3 cuts for time ends after `out_of_time` holds, never before."""
        r = self.remaining()
        return None if r is None else max(1, math.ceil(r * 1000))

    def apply(self, solver: "z3.Solver | z3.Fixedpoint") -> None:
        """Set the solver's `timeout` (wall) and `rlimit` (steps; 0: none) for its next check."""
        ms = self.ms()
        if ms is not None:
            solver.set("timeout", ms)
        left = self.steps_left()
        solver.set("rlimit", 0 if left is None else max(1, left))

    def trusted(self, r: z3.CheckSatResult) -> z3.CheckSatResult:
        """Z3's answer, or `unknown` when the budget stopped (NOTE(stale-interrupt)) or the step
        budget ran out during the check: a canceled check's answer is not an answer."""
        return z3.unknown if self.out_of_steps else trusted(r)

    def why(self) -> str:
        """`timeout` once the wall clock (the user's limit) ran out, else `step limit`."""
        r = self.remaining()
        if r is not None and r <= 0.0:
            return "timeout"
        return "step limit" if self.out_of_steps else "timeout"


class Session:
    """A solver plus the frame discipline, deadline and seed of one engine run."""

    def __init__(self, deadline: Deadline, *, seed: int = DEFAULT_SEED, logic: str | None = None) -> None:
        self.solver = z3.SolverFor(logic) if logic else z3.Solver()
        self.solver.set("random_seed", seed)
        self.deadline = deadline
        self.checks = 0

    def add(self, *formulas: z3.BoolRef) -> None:
        for f in formulas:
            if not z3.is_true(f):
                self.solver.add(f)

    @contextmanager
    def frame(self) -> Iterator["Session"]:
        """Assertions added inside the `with` block are retracted at its end."""
        self.solver.push()
        try:
            yield self
        finally:
            self.solver.pop()

    def check(self, *assumptions: z3.BoolRef) -> Answer:
        if self.deadline.expired:
            return Unknown(self.deadline.why())
        self.deadline.apply(self.solver)
        self.checks += 1
        r = self.solver.check(*assumptions)
        if budget.stopped():  # NOTE(stale-interrupt): a canceled check's answer is not an answer
            return Unknown(budget.stopped() or "interrupted")
        if r == z3.sat:
            return Sat(self.solver.model())
        if r == z3.unsat:
            return Unsat()
        reason = self.solver.reason_unknown() or "unknown"
        if self.deadline.expired or reason in ("timeout", "canceled"):
            reason = self.deadline.why()
        return Unknown(f"z3: {reason}")

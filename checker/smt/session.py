"""One Z3 solver with push/pop frames, a deadline, a seed and three-valued answers.

Engines never call `Solver.check` themselves: `Session.check` turns Z3's answer into `Sat`
(with the model), `Unsat` or `Unknown(reason)`, and charges every check against one overall
deadline so that an engine's `timeout` bounds its whole run."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Union

import z3

from gpcheck.checker import budget

DEFAULT_SEED = 0

# a stopped budget (SIGINT, SIGTERM, --max-memory, the command's --timeout) interrupts the
# running Z3 call at once instead of waiting for it (checker/budget.py). Z3's own Ctrl-C handler
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


class Deadline:
    """Wall-clock budget shared by every check of one engine run (None = unlimited), never
    beyond the command's budget (checker/budget.py): a stopped budget has no time left."""

    def __init__(self, timeout: float | None) -> None:
        self.end = None if timeout is None else time.monotonic() + timeout

    def remaining(self) -> float | None:
        outer = budget.remaining()
        own = None if self.end is None else max(0.0, self.end - time.monotonic())
        return own if outer is None else outer if own is None else min(own, outer)

    @property
    def expired(self) -> bool:
        r = self.remaining()
        return r is not None and r <= 0.0

    def ms(self) -> int | None:
        """Remaining milliseconds for a Z3 `timeout` parameter (at least 1)."""
        r = self.remaining()
        return None if r is None else max(1, int(r * 1000))


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
            return Unknown("timeout")
        ms = self.deadline.ms()
        if ms is not None:
            self.solver.set("timeout", ms)
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
            reason = "timeout"
        return Unknown(f"z3: {reason}")

"""Bounded model checking: one incremental solver unrolled depth by depth.

At depth k the solver holds I(s_0) ∧ T(s_0,s_1) ∧ ... ∧ T(s_{k-1},s_k) (each T under an
activation literal, see `Unroller`); each open property's `bad` at position k is checked in a
frame, so the first counterexample found is a shortest one. If no path of length k exists at all, every behaviour ends within k-1 steps and the
properties checked so far are proved (held to bound only inside a `constraint`)."""

from __future__ import annotations

import functools
import time
from typing import Callable

import z3

from gpcheck.spec import ir
from gpcheck.checker.core import budget
from gpcheck.checker.core import progress as meter
from gpcheck.checker.engines.smt.decode import (
    RawPath,
    format_args,
    read_instance,
    read_path,
    to_counterexample,
)
from gpcheck.checker.engines.smt.encode import BV_LOGIC, Encoder, State, bv_encoder
from gpcheck.checker.engines.smt.props import ERROR_TAG, SafetyProp, action_error, bad
from gpcheck.checker.engines.smt.session import Answer, Deadline, Sat, Session, Unknown, Unsat
from gpcheck.checker.core.verdict import Result, Verdict

ENGINE = "bmc"
UNROLL_TAG = "unroll."  # symbols of the transitions' activation literals


def _stop_is_unknown(fn: Callable[..., Answer]) -> Callable[..., Answer]:
    """A question whose encoding (unrolling one more step, a property's formula) was cut
    short by the budget or the time limit (`budget.poll`, NOTE(time-limit)) is answered
    `Unknown` with the stop's reason, as a Z3 timeout is: the engine goes on to report."""

    @functools.wraps(fn)
    def answer(*args: object) -> Answer:
        try:
            return fn(*args)
        except budget.Stop as stop:
            return Unknown(stop.text)

    return answer


class Unroller:
    """A path from the initial states, extended one transition at a time in one solver.

    Each transition T(s_j, s_{j+1}) is asserted under its own activation literal, and a
    question about position k assumes only the first k of them: a state at depth k is checked
    whether or not the path goes on beyond it, however deep the same solver was unrolled
    before (for another property, or by another engine's question). With the transitions
    asserted outright, a violation in a state with no long continuation would be invisible
    once the unrolling was deeper than its depth.

    `reusable=False` asserts the transitions outright (Z3 solves such unrollings about twice as
    fast, measured on ring.gpspec N=6: bmc 4.4 s against 8.5 s, lasso 14-20 s against 35-42 s)
    for a caller that only ever asks about the deepest position; asking about a shallower
    one is then an error, never a silently wrong answer."""

    def __init__(self, enc: Encoder, deadline: Deadline, *, seed: int = 0, reusable: bool = True) -> None:
        self.enc = enc
        self.reusable = reusable
        self.sess = Session(deadline, seed=seed, logic=BV_LOGIC if enc.num.width else None)
        s0 = enc.state(0)
        self.path: list[State] = [s0]
        self.active: list[z3.BoolRef] = []  # active[j] switches T(s_j, s_{j+1}) on
        self.sess.add(enc.in_range(s0), enc.init(s0))

    @property
    def depth(self) -> int:
        return len(self.path) - 1

    def extend_to(self, k: int) -> None:
        while self.depth < k:
            budget.poll()  # NOTE(time-limit)
            j = self.depth
            nxt = self.enc.state(j + 1)
            if self.reusable:
                on = z3.Bool(f"{UNROLL_TAG}T@{j}")
                self.sess.add(self.enc.in_range(nxt), z3.Implies(on, self.enc.trans(self.path[j], nxt, j)))
                self.active.append(on)
            else:
                self.sess.add(self.enc.in_range(nxt), self.enc.trans(self.path[j], nxt, j))
            self.path.append(nxt)

    def assumptions(self, k: int) -> list[z3.BoolRef]:
        """The activation literals of a path of exactly the first k transitions."""
        self.extend_to(k)
        if not self.reusable:
            assert k == self.depth, "a one-way unrolling cannot answer for a shallower position"
            return []
        return self.active[:k]

    @_stop_is_unknown
    def check_at(self, k: int, *formulas: z3.BoolRef) -> Answer:
        """Is there a path s_0 .. s_k from an initial state on which `formulas` hold?"""
        on = self.assumptions(k)
        with self.sess.frame():
            self.sess.add(*formulas)
            return self.sess.check(*on)

    @_stop_is_unknown
    def check_bad(self, p: SafetyProp, k: int) -> Answer:
        """Is `p` violated at position k of some path from the initial states?"""
        self.extend_to(k)
        if k < p.first:
            return Unsat()
        return self.check_at(k, bad(self.enc, p, self.path[: k + 1], k))

    @_stop_is_unknown
    def has_path(self, k: int) -> Answer:
        return self.sess.check(*self.assumptions(k))

    def violation(self, p: SafetyProp, k: int, ans: Sat, engine: str) -> Result:
        """The Result of a `Sat` answer of `check_bad(p, k)`, with its decoded counterexample."""
        m = ans.model
        raw = read_path(m, self.enc, self.path[: k + 1])
        by_action = p.kind == "range" and z3.is_true(m.eval(action_error(self.enc, self.path, k), model_completion=True))
        return violation_result(self.enc, p, raw, m, k, engine, by_action=by_action)


def violation_result(enc: Encoder, p: SafetyProp, raw: RawPath, m: object, k: int, engine: str,
                     *, by_action: bool = False) -> Result:
    """`by_action`: a `range` violation by the `err.`-tagged instance of step k, named in
    `detail` (otherwise a predicate failed to evaluate, and the selector means nothing)."""
    model = enc.model
    detail: dict[str, object] = {}
    if by_action:
        assert isinstance(m, z3.ModelRef)
        inst = read_instance(m, enc, k, ERROR_TAG)
        detail["error"] = {"action": model.actions[inst[0]].name, "args": format_args(model, inst)}
    return Result(
        p.name,
        p.kind,
        Verdict.VIOLATED,
        engine,
        bound=k,
        counterexample=to_counterexample(model, raw),
        detail=detail,
    )


def proved_result(model: ir.Model, p: SafetyProp, engine: str, why: str, **detail: object) -> Result:
    """PROVED, or HOLDS_TO_BOUND when `constraint`s cut the state space (NOTE(honest-verdicts))."""
    if model.constraints:
        names = ", ".join(c.name for c in model.constraints)
        return Result(p.name, p.kind, Verdict.HOLDS_TO_BOUND, engine, reason=f"{why}, inside constraint {names}",
                      detail={k: v for k, v in detail.items() if v not in (None, "true")})
    return Result(p.name, p.kind, Verdict.PROVED, engine, reason=why,
                  detail={k: v for k, v in detail.items() if v not in (None, "true")})


def unknown_result(p: SafetyProp, engine: str, reason: str, bound: int | None) -> Result:
    return Result(p.name, p.kind, Verdict.UNKNOWN, engine, bound=bound, reason=reason)


class _Stamped(dict[str, Result]):
    """Results by property name; each one stored gets `detail["seconds"]`, the time since
    `start` at which it was decided."""

    def __init__(self, start: float) -> None:
        super().__init__()
        self.start = start

    def __setitem__(self, name: str, r: Result) -> None:
        r.detail.setdefault("seconds", round(time.monotonic() - self.start, 4))
        super().__setitem__(name, r)


def run_bmc(
    model: ir.Model,
    props: list[SafetyProp],
    *,
    depth: int,
    deadline: Deadline,
    enc: Encoder | None = None,
    engine: str = ENGINE,
) -> list[Result]:
    """Check every property on all paths of at most `depth` transitions."""
    start = time.monotonic()
    enc = enc or bv_encoder(model)
    un = Unroller(enc, deadline, reusable=False)  # every property is checked at depth k before k + 1
    results = _Stamped(start)
    open_props = list(props)
    meter.begin(engine)
    for k in range(depth + 1):
        still: list[SafetyProp] = []
        meter.note(bound=k)  # checker/core/progress.py
        for p in open_props:
            ans = un.check_bad(p, k)
            if isinstance(ans, Sat):
                results[p.name] = un.violation(p, k, ans, engine)
            elif isinstance(ans, Unknown):
                results[p.name] = unknown_result(p, engine, f"{ans.reason} at depth {k}", k - 1 if k else None)
            else:
                still.append(p)
        open_props = still
        if not open_props:
            break
        if k < depth:
            ans = un.has_path(k + 1)
            if isinstance(ans, Unsat):
                for p in open_props:
                    results[p.name] = proved_result(model, p, engine, f"every behaviour ends within {k} steps",
                                                    bound=k)
                open_props = []
                break
            if isinstance(ans, Unknown):
                for p in open_props:
                    results[p.name] = unknown_result(p, engine, f"{ans.reason} at depth {k + 1}", k)
                open_props = []
                break
    for p in open_props:
        results[p.name] = Result(p.name, p.kind, Verdict.HOLDS_TO_BOUND, engine, bound=depth)
    return [results[p.name] for p in props]

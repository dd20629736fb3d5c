"""The untimed abstraction of a timed spec (NOTE(timed) in spec/ir.py, docs/timed.md "Engines
without clocks"): every `time` dropped, so each action is `0..` and nothing is urgent.

Its behaviours include every behaviour of the timed spec (a timing only removes interleavings), so
an invariant, transition property or deadlock-freedom that an untimed engine proves there holds
in the timed semantics, and one that holds up to bound K there holds up to bound K in it. The
deadlock notions agree: in both, a deadlock is a reachable discrete state where no instance is
enabled and no terminal predicate holds (in the timed semantics an enabled instance can always
fire, at its deadline or once its lower bound has passed, so no other state stops every action).
`range` carries over only when no time bound can fail to evaluate (the abstraction never
evaluates them): when no bound reads the state and every instance's bounds evaluate.

A violation found there is a discrete path; path.py decides whether some timing admits it:
then it is `violated` with a time stamp on each step, else `unknown`, saying that the zone
engine decides it. Liveness and latencies mean something else without time (fairness is not a
deadline): `unknown`, saying so."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from gpcheck.spec import ir
from gpcheck.gpmodel import CompiledModel, ModelError, compile_model
from gpcheck.checker.core.verdict import Result, Verdict
from gpcheck.checker.engines.timed import untimed  # noqa: F401 (the abstraction these engines check; callers use timed_abstraction.untimed)

PROVED_NOTE = "proved for every timing (untimed abstraction)"
BOUNDED_NOTE = "holds for every timing up to the bound (untimed abstraction)"
TIMED_NOTE = "confirmed with a timing (checker/engines/timed/path.py)"
SAFETY_KINDS = ("invariant", "transition", "deadlock", "range")


def state_safety_names(model: ir.Model) -> set[str]:
    """The invariants, transition properties and deadlock of `model`: what a complete search of
    the untimed abstraction proves for every timing (`range` only when no time bound can fail,
    bounds_may_fail)."""
    return {p.name for p in model.invariants} | {p.name for p in model.transitions} | {"deadlock"}


def bounds_may_fail(cm: CompiledModel) -> str | None:
    """Why a time bound may fail to evaluate in some reachable state (the abstraction's `range`
    then says nothing about it), or None when none can: no bound reads the state, and every
    instance's bounds evaluate, with 0 <= L <= U."""
    from gpcheck.checker.engines.timed.bounds import compile_bounds, timed_instances

    for a in cm.model.actions:
        t = a.time
        if t is None:
            continue
        exprs = [t.lower] + ([] if t.upper is None else [t.upper])
        if any(isinstance(e, ir.VarRef) for x in exprs for e in ir.walk_expr(x)):
            return f"the time bounds of '{a.name}' depend on the state"
    bounds = compile_bounds(cm)
    states = cm.initial_states()
    s = states[0] if states else tuple(0 for _ in range(cm.layout.size))
    for iid in timed_instances(cm):
        try:
            bounds(iid, s)
        except ModelError as e:
            return e.message
    return None


def lift(model: ir.Model, results: list[Result], engine: str,
         cm_for: Callable[[Result], CompiledModel] | None = None) -> list[Result]:
    """The untimed abstraction's results read as the timed spec `model`'s (module docstring).
    `cm_for(result)` gives the compiled timed model a result's counterexample belongs to (by
    default `model`'s, compiled once: --for-all passes the instance's)."""
    cache: list[CompiledModel] = []

    def cm(r: Result | None = None) -> CompiledModel:
        if cm_for is not None and r is not None:
            return cm_for(r)
        if not cache:
            cache.append(compile_model(model))
        return cache[0]

    range_why: list[str | None] = []
    out = []
    for r in results:
        if r.kind not in SAFETY_KINDS:
            out.append(_not_timed(r, engine))
        elif r.verdict is Verdict.VIOLATED:
            out.append(confirm(cm(r), r))
        elif r.verdict in (Verdict.PROVED, Verdict.HOLDS_TO_BOUND):
            if r.kind == "range":
                if not range_why:
                    range_why.append(bounds_may_fail(cm()))
                if range_why[0] is not None:
                    out.append(replace(r, verdict=Verdict.UNKNOWN, bound=None, counterexample=None,
                                       reason=f"the untimed abstraction does not evaluate the time bounds, and "
                                              f"{range_why[0]}: the zone engine decides range (--engine explicit)"))
                    continue
            note = PROVED_NOTE if r.verdict is Verdict.PROVED else BOUNDED_NOTE
            out.append(replace(r, detail=dict(r.detail, time=note)))
        else:
            out.append(r)
    return out


def confirm(cm: CompiledModel, r: Result) -> Result:
    """A violation of the untimed abstraction: `violated` with time stamps when a timing admits
    its counterexample, else `unknown` with the reason."""
    from gpcheck.checker.engines.timed.path import timed_counterexample

    assert r.counterexample is not None
    cex, why = timed_counterexample(cm, r.counterexample)
    if cex is not None:
        return replace(r, counterexample=cex, detail=dict(r.detail, time=TIMED_NOTE))
    return replace(r, verdict=Verdict.UNKNOWN, counterexample=None,
                   reason=f"the counterexample of the untimed abstraction needs a timing the model forbids ({why}); "
                          f"the zone engine decides it (--engine explicit)",
                   detail={k: v for k, v in r.detail.items() if k not in ("error", "kind", "location")})


def _not_timed(r: Result, engine: str) -> Result:
    """A liveness or latency result of an engine without clocks: `unknown`, saying why."""
    why = (f"{engine} does not handle time for {r.kind} properties: this spec is timed (`time`/`urgent`), and "
           f"without its deadlines fairness is not promptness and durations do not overlap; the zone engine "
           f"(--engine explicit or auto) decides it")
    detail = {"not_checked": True} if r.detail.get("not_checked") else {}
    return Result(r.property, r.kind, Verdict.UNKNOWN, engine, reason=why, detail=detail)

"""NOTE(refinement) in spec/refines.py: does this model refine the model its `refines` names?

The explicit engine's check, over the concrete model's reachable states (checker/engines/explicit/explicit.py's
BFS, so the same limits, constraints and modelling errors apply): the image of every initial
state (the mapping evaluated in it) must be an initial state of the abstract model M, and the
image of every step s -> t must be a step of M from the image of s (some enabled instance of one
of M's actions reaches it) or a stutter (the images are equal). M is compiled like any model
(gpmodel, from its IR); the mapping's slot expressions are compiled in the concrete model.

The verdict is `proved` when the search covered every reachable state (a finite model: the
check is exhaustive), the explicit engine's usual `holds_to_bound` / `unknown` otherwise, and
`violated` with the concrete behaviour up to the first step (in BFS order: a shortest one) that
has no matching step of M; `detail` then holds the abstract state before and after that step.
No induction is attempted (a Z3 check of the mapping on arbitrary states would need the
concrete model's inductive invariant); the result names its engine: explicit.
"""

from __future__ import annotations

from typing import Any

from gpcheck.checker.engines.explicit import explicit
from gpcheck.checker.core.verdict import Counterexample, Result, Verdict
from gpcheck.gpmodel import CompiledModel, ModelError, State, compile_model
from gpcheck.spec import ir
from gpcheck.spec.refines import Refinement

PROPERTY = "refines"  # the property's name (a reserved word: no declared property has it)
KIND = "refinement"


class _NoImage(Exception):
    """A state has no abstract image: the mapping fails to evaluate, or leaves M's types."""


class Mapping:
    """The refinement mapping compiled: concrete state -> abstract state (a slot tuple of M)."""

    def __init__(self, cm: CompiledModel, ref: Refinement) -> None:
        self.ref = ref
        self.fns = [(path, cm.value(x), st, x.type) for path, x, st in ref.slots]

    def image(self, s: State) -> State:
        out: list[int] = []
        for path, fn, st, ct in self.fns:
            try:
                v = fn(s)
            except ModelError as e:
                raise _NoImage(f"the mapping of {path} fails to evaluate: {e}") from None
            if isinstance(st, ir.EnumType):
                assert isinstance(ct, ir.EnumType)
                member = ct.members[v]
                if member not in st.members:
                    raise _NoImage(f"{path} maps to {member}, which is not a member of {st.name}")
                v = st.members.index(member)
            elif not ir.scalar_in_range(st, v):
                raise _NoImage(f"{path} maps to {v}, outside its type {st} in {self.ref.module}")
            out.append(v)
        return tuple(out)


def run(model: ir.Model, limits: explicit.Limits = explicit.Limits()) -> Result:
    """The refinement result of `model` (a timed model's is unknown: only the zone engine knows
    its time, and a refinement of timed models is not defined here)."""
    if model.has_time:
        return Result(PROPERTY, KIND, Verdict.UNKNOWN, explicit.ENGINE,
                      reason="refinement is checked on untimed models only (this spec is timed)")
    from gpcheck.checker.core import budget

    with budget.cooperative():
        return check(compile_model(model), limits)


def check(cm: CompiledModel, limits: explicit.Limits = explicit.Limits()) -> Result:
    """The refinement result of `cm`'s model (which must have a `refines` declaration)."""
    ref = cm.model.refinement
    assert isinstance(ref, Refinement)
    am = compile_model(ref.abstract)
    alpha = Mapping(cm, ref)
    res = explicit.search(cm, set(), limits)
    initial = set(am.initial_states())
    nexts: dict[State, set[State]] = {}

    def fail(path: list[State], why: str, before: State | None, after: State | None, iid: int | None) -> Result:
        iids: list[int | None] = [None] * len(path)
        if iid is not None:
            iids[-1] = iid
        cx = Counterexample(explicit.make_steps(cm, path, iids))
        detail: dict[str, Any] = {"abstract_model": ref.abstract.name, "step": len(path) - 1}
        if before is not None:
            detail["abstract_before"] = am.layout.decode(before)
        if after is not None:
            detail["abstract_after"] = am.layout.decode(after)
        return Result(PROPERTY, KIND, Verdict.VIOLATED, explicit.ENGINE, reason=why, counterexample=cx, detail=detail)

    for s, parent in res.parent.items():
        try:
            a = alpha.image(s)
        except _NoImage as e:
            return fail(explicit.path_to(res.parent, s), str(e), None, None, None)
        if parent is None and a not in initial:
            return fail([s], f"the initial state maps to {_show(am, a)}, which is not an initial state of "
                             f"{ref.abstract.name}", None, a, None)
        if not cm.in_constraints(s):
            continue  # not expanded by the search either
        succ = nexts.get(a)
        if succ is None:
            succ = nexts[a] = {t for _, t in am.enabled_steps(a)}
        for iid, t in cm.enabled_steps(s):
            try:
                b = alpha.image(t)
            except _NoImage as e:
                return fail(explicit.path_to(res.parent, s) + [t], str(e), a, None, iid)
            if b != a and b not in succ:
                inst = cm.instances[iid]
                return fail(explicit.path_to(res.parent, s) + [t],
                            f"the step {inst.action.name}{_args(inst.arg_dict())} maps {_show(am, a)} to "
                            f"{_show(am, b)}: no step of {ref.abstract.name} does that, and it is not a stutter",
                            a, b, iid)
    if res.fault is not None:
        return Result(PROPERTY, KIND, Verdict.UNKNOWN, explicit.ENGINE, bound=res.depth,
                      reason=f"the search stopped at a modelling error (see range): {res.fault}")
    out = explicit._holding_verdict(cm.model, res)(PROPERTY, KIND)
    out.detail["abstract_model"] = ref.abstract.name
    out.detail["states"] = len(res.parent)
    return out


def _args(args: dict[str, Any]) -> str:
    return "(" + ", ".join(f"{k}={v}" for k, v in args.items()) + ")" if args else ""


def _show(am: CompiledModel, a: State) -> str:
    from gpcheck.spec.show import show_state

    return show_state(am.layout.decode(a))


__all__ = ["run", "check", "Mapping", "PROPERTY", "KIND"]

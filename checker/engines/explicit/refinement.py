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
The Z3 check by induction, relative to the concrete model's proved invariants, is the second
engine (checker/engines/smt/refine.py, NOTE(refinement-induction)); this result names its engine: explicit.
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
        return _violation(cm, am, path, iids, why, before, after)

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


def _violation(cm: CompiledModel, am: CompiledModel, path: list[State], iids: list[int | None], why: str,
               before: State | None, after: State | None) -> Result:
    """The `violated` result of a concrete behaviour `path` whose last step (or state) fails."""
    ref = cm.model.refinement
    assert isinstance(ref, Refinement)
    cx = Counterexample(explicit.make_steps(cm, path, iids))
    detail: dict[str, Any] = {"abstract_model": ref.abstract.name, "step": len(path) - 1}
    if before is not None:
        detail["abstract_before"] = am.layout.decode(before)
    if after is not None:
        detail["abstract_after"] = am.layout.decode(after)
    return Result(PROPERTY, KIND, Verdict.VIOLATED, explicit.ENGINE, reason=why, counterexample=cx, detail=detail)


def confirm(cm: CompiledModel, path: list[State], iids: list[int]) -> Result | None:
    """The `violated` result of a behaviour of `cm` (states `path`, `iids[k]` taking path[k] to
    path[k + 1]) when its last state or step breaks the refinement, as `check` reports it;
    None when it does not. Another engine's counterexample (checker/engines/smt/refine.py) is
    judged here, by the compiled models, before it is reported."""
    ref = cm.model.refinement
    assert isinstance(ref, Refinement)
    am = compile_model(ref.abstract)
    alpha = Mapping(cm, ref)
    full: list[int | None] = [None, *iids]
    s = path[-1]
    try:
        b = alpha.image(s)
    except _NoImage as e:
        return _violation(cm, am, path, full, str(e), None, None)
    if len(path) == 1:
        if b in set(am.initial_states()):
            return None
        return _violation(cm, am, path, full, f"the initial state maps to {_show(am, b)}, which is not an initial "
                                               f"state of {ref.abstract.name}", None, b)
    try:
        a = alpha.image(path[-2])
    except _NoImage:
        return None  # the state before fails first: not this path's last step
    succ = {t for _, t in am.enabled_steps(a)}
    if b == a or b in succ:
        return None
    inst = cm.instances[iids[-1]]
    return _violation(cm, am, path, full,
                      f"the step {inst.action.name}{_args(inst.arg_dict())} maps {_show(am, a)} to {_show(am, b)}: "
                      f"no step of {ref.abstract.name} does that, and it is not a stutter", a, b)


def _args(args: dict[str, Any]) -> str:
    return "(" + ", ".join(f"{k}={v}" for k, v in args.items()) + ")" if args else ""


def _show(am: CompiledModel, a: State) -> str:
    from gpcheck.spec.show import show_state

    return show_state(am.layout.decode(a))


__all__ = ["run", "check", "confirm", "Mapping", "PROPERTY", "KIND"]

"""Counterexamples of a symmetry-reduced search as concrete behaviours (NOTE(symmetry)).

The reduced BFS stores one canonical state per orbit, and a canonical state's BFS child is the
canonical form of one of its successors, not a successor itself. Because every permutation is
an automorphism of the model (the type checker ensures it), a concrete state in the orbit of
a canonical state has a successor in the orbit of each canonical child: walking the canonical
path from its (initial) first state and taking, at each step, the first instance whose
successor lies in the next orbit gives a behaviour the interpreter replays step by step. The
last step (a transition property violated, a predicate failing on a step, an action failing)
is found the same way, among the instances with the same outcome."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from gpcheck.gpmodel import CompiledModel, ModelError, State
from gpcheck.gpmodel.symmetry import Symmetry
from gpcheck.checker.core.verdict import Counterexample

if TYPE_CHECKING:
    from gpcheck.checker.core.verdict import Result, Step
    from gpcheck.gpmodel.instance_symmetry import InstanceSymmetry


def concrete_path(cm: CompiledModel, sym: Symmetry, chain: list[State], last: tuple[int, State] | None,
                  accept: Callable[[State, State], bool] | None) -> tuple[list[State], list[int | None]]:
    """Concrete states and instance ids through the orbits of `chain` (canonical states, the
    first an initial state), then, with `last` = (instance, successor) of the chain's end, one
    more step into the orbit of that successor on which `accept(state, next)` holds."""
    canon = sym.canonical
    states: list[State] = [chain[0]]
    iids: list[int | None] = [None]
    for c in chain[1:]:
        iid, t = _step_into(cm, states[-1], lambda u, c=c: canon(u) == c)  # type: ignore[misc]
        states.append(t)
        iids.append(iid)
    if last is not None:
        target = canon(last[1])
        cur = states[-1]
        ok = accept or (lambda a, b: True)
        iid, t = _step_into(cm, cur, lambda u: canon(u) == target and ok(cur, u))
        states.append(t)
        iids.append(iid)
    return states, iids


def _step_into(cm: CompiledModel, s: State, want: Callable[[State], bool]) -> tuple[int, State]:
    try:
        steps = cm.successors(s)  # the states of a path were expanded without a modelling error
    except ModelError:
        steps = cm.enabled_steps(s)
    for iid, t in steps:
        if want(t):
            return iid, t
    raise AssertionError("symmetry: no step of a concrete state reaches the next orbit (the model is "
                         "not symmetric; spec/symmetry.py should have rejected it)")


def concrete_fault(cm: CompiledModel, cex: Counterexample, err: ModelError) -> ModelError:
    """The modelling error of an action instance in the counterexample's last (concrete) state
    that corresponds to `err` (found in the canonical state): the same kind at the same place."""
    last = cm.layout.encode(cex.steps[-1].state)
    for iid in range(len(cm.instances)):
        try:
            cm.step(iid, last)
        except ModelError as e:
            if e.site.kind == err.site.kind and e.site.span == err.site.span:
                return e
    raise AssertionError("symmetry: the concrete state does not fail as its canonical state does")


def instance_images(cm: CompiledModel, sym: "InstanceSymmetry", results: list["Result"]) -> list["Result"]:
    """NOTE(instance-symmetry) in gpmodel/instance_symmetry.py: the copies of one instance
    property (`a.p`, `b.p`, ...) are violated together, since a reduced search checks them on one
    state of each orbit; each gets a behaviour that violates it: a copy's counterexample (whose
    last step, found through the orbits, may violate any copy) with the copy it violates
    exchanged for this one, replayed step by step first."""
    from dataclasses import replace

    from gpcheck.checker.core.verdict import Step, Verdict
    from gpcheck.gpmodel import truth
    from gpcheck.gpmodel.instance_symmetry import renamed

    by_name = {r.property: r for r in results}
    preds = {inv.name: (lambda st, fn=fn: truth(fn, st[-1])) for inv, fn in cm.invariants}
    preds.update({tp.name: (lambda st, fn=fn: len(st) > 1 and truth(fn, st[-2], st[-1])) for tp, fn in cm.transitions})
    out = []
    for r in results:
        inst = r.property.split(".", 1)[0] if "." in r.property else None
        group = next((g for g in sym.groups if inst in g), None)
        if group is None or r.property not in preds:
            out.append(r)
            continue
        copies = {i: renamed(r.property, inst, i) for i in group}  # type: ignore[arg-type]
        found = None
        for src in (by_name.get(c) for c in copies.values()):
            if src is None or src.verdict is not Verdict.VIOLATED or src.counterexample is None:
                continue
            states = [cm.layout.encode(st.state) for st in src.counterexample.steps]
            hit = next((i for i, c in copies.items() if c in preds and not preds[c](states)), None)
            if hit is None:
                continue
            moved = [sym.swap_state(hit, inst, x) for x in states] if hit != inst else states  # type: ignore[arg-type]
            steps = [Step(None if st.action is None else sym.swap_action(hit, inst, st.action), st.args,  # type: ignore[arg-type]
                          cm.layout.decode(x)) for st, x in zip(src.counterexample.steps, moved)]
            if not preds[r.property](moved) and _replays(cm, moved, steps):
                found = replace(src, property=r.property, kind=r.kind, counterexample=Counterexample(tuple(steps)))
                break
        if found is None and r.verdict is Verdict.VIOLATED:  # never a behaviour that violates another copy
            found = replace(r, verdict=Verdict.UNKNOWN, counterexample=None,
                            reason="violated up to symmetry, but no renamed counterexample replayed: run with "
                                   "--symmetry off for one")
        out.append(found if found is not None else r)
    return out
def _replays(cm: CompiledModel, states: list[State], steps: list["Step"]) -> bool:
    if states[0] not in set(cm.initial_states()):
        return False
    for k in range(1, len(states)):
        iid = cm.find_instance(steps[k].action, steps[k].args)
        if iid is None:
            return False
        try:
            if cm.step(iid, states[k - 1]) != states[k]:
                return False
        except ModelError:
            return False
    return True

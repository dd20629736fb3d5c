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

from typing import Callable

from gpcheck.gpmodel import CompiledModel, ModelError, State
from gpcheck.gpmodel.symmetry import Symmetry
from gpcheck.checker.core.verdict import Counterexample


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

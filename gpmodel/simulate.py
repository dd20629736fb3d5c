"""Seeded random behaviours of a compiled model (`gpcheck simulate`).

Why: simulated traces feed the replay tests and the trace corpus, and give users example
traces of their own models. Determinism is the contract: the behaviour depends only on the
model, the step count and the `random.Random` passed in (the command line builds it from
`--seed`); no other source of randomness is used, and every choice is taken from lists whose
order gpmodel fixes (initial slot domains, `successors` order)."""

from __future__ import annotations

import random
from typing import Iterator

from gpcheck.spec import ir
from gpcheck.gpmodel.model import CompiledModel, State


def random_initial(cm: CompiledModel, rng: random.Random) -> State:
    """A uniformly random initial state: each `any` slot drawn from its type's domain (one of
    the initial states inside the state assumptions when the model has any, NOTE(assumptions))."""
    if cm.model.initial_assumptions:
        states = cm.initial_states()
        if not states:
            raise ValueError("no initial state lies inside the model's state assumptions")
        # one state: no draw, so an assumption that pins a ghost fact (xsched's idempotent_mask)
        # leaves the model's random behaviours as they were
        return states[rng.randrange(len(states))] if len(states) > 1 else states[0]
    out: list[int] = []
    for v in cm.model.vars:
        for (_, st), init in zip(ir.leaf_paths(v.type), v.init):
            if init is not None:
                out.append(init)
            elif isinstance(st, ir.IntType):
                assert st.lo is not None and st.hi is not None
                out.append(rng.randint(st.lo, st.hi))
            else:
                out.append(rng.randrange(len(ir.domain_values(st))))
    return tuple(out)


def simulate(cm: CompiledModel, steps: int, rng: random.Random) -> Iterator[tuple[int | None, State]]:
    """One random behaviour: `(None, initial state)`, then up to `steps` pairs
    `(instance id, next state)`, each step uniform over the enabled instances. The behaviour
    ends early in a state where no instance is enabled (a deadlock or terminal state).
    Raises gpmodel.ModelError when a step hits a modelling error."""
    s = random_initial(cm, rng)
    yield None, s
    for _ in range(steps):
        succ = cm.successors(s)
        if not succ:
            return
        iid, s = succ[rng.randrange(len(succ))]
        yield iid, s

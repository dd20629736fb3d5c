"""Seeded random behaviours of a timed spec in integer time (`gpcheck simulate` on a timed spec;
NOTE(timed) in spec/ir.py, docs/timed.md "Simulation").

Integer time is exact here (digitization, docs/timed.md): every timing constraint is closed with
integer constants, so every behaviour of the dense-time semantics has an integer-time behaviour
through the same steps, and integer delays lose nothing. Each step of a behaviour:

* every enabled instance has a timer (time since it became enabled, or last fired and stayed
  enabled) and the bounds (L, U) frozen then (bounds.py; an untimed instance is 0..);
* time may pass by at most D = min(U - timer) over the enabled instances with a deadline (0 while
  an urgent one is enabled);
* an instance can fire after a delay d <= D once timer + d >= L: one of those is drawn uniformly,
  then d uniformly between its earliest time and D (with no deadline anywhere, up to its earliest
  time plus the largest bound in force, or plus 1 if every bound is 0..);
* the timers advance by d, the instance fires; an instance newly enabled, or the one that fired
  and is still enabled, starts at 0 with its bounds evaluated in the new state.

Such a choice always exists while an instance is enabled (the one with the nearest deadline can
fire at it, since L <= U), so a behaviour ends only where no instance is enabled, as untimed.
Deterministic: the only randomness is the `random.Random` passed in, drawn from lists in
gpmodel's fixed order."""

from __future__ import annotations

import random
from typing import Iterator, NamedTuple

from gpcheck.gpmodel import CompiledModel, State
from gpcheck.gpmodel.simulate import random_initial
from gpcheck.checker.engines.timed.bounds import compile_bounds


class TimedStep(NamedTuple):
    """One step of a timed behaviour: the instance (None first), the state after it, its time
    stamp, and for an instance with bounds the time its timer started (else None)."""

    iid: int | None
    state: State
    time: int
    since: int | None


def simulate_timed(cm: CompiledModel, steps: int, rng: random.Random) -> Iterator[TimedStep]:
    """One random integer-time behaviour of up to `steps` steps (module docstring). Raises
    gpmodel.ModelError on a modelling error (a bound that fails to evaluate included)."""
    bounds = compile_bounds(cm)
    timed = {iid for iid, inst in enumerate(cm.instances) if inst.action.time is not None}
    s = random_initial(cm, rng)
    now = 0
    yield TimedStep(None, s, 0, None)
    succ = cm.successors(s)
    # instance -> (time its timer started, L, U)
    running = {i: (0, *bounds(i, s)) for i, _ in succ}
    for _ in range(steps):
        if not succ:
            return
        deadline = min((r + hi for r, _, hi in running.values() if hi is not None), default=None)
        ready = []  # (instance, next state, earliest time it can fire)
        for i, t in succ:
            r, lo, _ = running[i]
            at = max(now, r + lo)
            if deadline is None or at <= deadline:
                ready.append((i, t, at))
        i, t, at = ready[rng.randrange(len(ready))]
        if deadline is None:
            spread = max([b for _, lo, hi in running.values() for b in (lo, hi) if b is not None], default=0)
            latest = at + max(1, spread)
        else:
            latest = deadline
        now = rng.randint(at, latest)
        started = running[i][0]
        yield TimedStep(i, t, now, started if i in timed else None)
        prev = running
        succ = cm.successors(t)
        running = {}
        for j, _ in succ:
            running[j] = prev[j] if j in prev and j != i else (now, *bounds(j, t))

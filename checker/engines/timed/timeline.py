"""Concrete time stamps for a discrete path of a timed spec (NOTE(timed) in spec/ir.py).

The zone graph says that a path can be taken; the times come from the path itself: with t_k
the time of step k (t_0 = 0 for the initial state), the path's timing constraints are
difference constraints over the t_k: t_{k-1} <= t_k; a timed instance firing at step k has run
since step r (where it became enabled, or last fired) for at least its L: t_k - t_r >= L; every
instance enabled in the state before step k with a deadline U: t_k - t_r <= U. Such a system is
feasible iff its constraint graph has no negative cycle, and then the earliest times
(t_v = -dist(v -> 0)) are integers: every constant is one, so every answer here is too. The
extreme of t_j - t_i along the path is a shortest path as well (dist(i -> j) for the greatest).
This is exact and independent of the zones and their extrapolation."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Sequence

from gpcheck.gpmodel import CompiledModel, State
from gpcheck.checker.engines.timed.bounds import BoundsFn, timed_instances
from gpcheck.checker.engines.explicit.explicit import make_steps
from gpcheck.checker.core.verdict import Step


class NotABehaviour(Exception):
    """The path is not one of the model's (a step that does not follow, or no timing fits)."""


@dataclass
class Constraints:
    """t_v - t_u <= c for each (u, v, c) in `edges`, over the steps 0..n."""

    n: int
    edges: list[tuple[int, int, int]] = field(default_factory=list)
    started: list[int | None] = field(default_factory=list)  # step k of a timed instance: where its timer started

    def add(self, u: int, v: int, c: int) -> None:
        self.edges.append((u, v, c))

    def _dist(self, src: int, reverse: bool) -> list[float]:
        adj: list[list[tuple[int, int]]] = [[] for _ in range(self.n + 1)]
        for u, v, c in self.edges:
            if reverse:
                adj[v].append((u, c))
            else:
                adj[u].append((v, c))
        inf = float("inf")
        dist = [inf] * (self.n + 1)
        dist[src] = 0
        count = [0] * (self.n + 1)
        work = deque([src])
        queued = [False] * (self.n + 1)
        queued[src] = True
        while work:  # SPFA: Bellman-Ford with a queue
            u = work.popleft()
            queued[u] = False
            for v, c in adj[u]:
                if dist[u] + c < dist[v]:
                    dist[v] = dist[u] + c
                    if not queued[v]:
                        count[v] += 1
                        if count[v] > self.n + 1:
                            raise NotABehaviour("no timing satisfies the path's time bounds")
                        queued[v] = True
                        work.append(v)
        return dist

    def earliest(self) -> list[int]:
        """The earliest times that satisfy every constraint (NotABehaviour when none does)."""
        back = self._dist(0, reverse=True)  # back[v] = dist(v -> 0)
        out = [int(-b) for b in back]
        for u, v, c in self.edges:
            if out[v] - out[u] > c:
                raise NotABehaviour("no timing satisfies the path's time bounds")
        return out

    def greatest(self, i: int, j: int) -> int | None:
        """The greatest t_j - t_i over every timing (None: unbounded)."""
        d = self._dist(i, reverse=False)[j]
        return None if d == float("inf") else int(d)

    def least(self, i: int, j: int) -> int:
        """The least t_j - t_i over every timing."""
        return int(-self._dist(j, reverse=False)[i])


def path_constraints(cm: CompiledModel, bounds: BoundsFn, states: Sequence[State],
                     iids: Sequence[int | None]) -> Constraints:
    """The timing constraints of the path s_0 -iids[1]-> s_1 ... (NotABehaviour when a step does
    not follow from its state); a bound that fails to evaluate raises its BoundError."""
    timed = set(timed_instances(cm))
    con = Constraints(len(states) - 1)
    con.started = [None] * len(states)
    running: dict[int, tuple[int, int, int | None]] = {}  # instance -> (step its timer started, L, U)
    enabled = {i for i, _ in cm.successors(states[0])}
    for i in sorted(enabled & timed):
        running[i] = (0, *bounds(i, states[0]))
    for k in range(1, len(states)):
        a = iids[k]
        if a is None or a not in enabled or cm.step(a, states[k - 1]) != states[k]:
            raise NotABehaviour(f"step {k} does not follow from the state before it")
        con.add(k, k - 1, 0)
        for i, (r, lo, hi) in running.items():
            if hi is not None:
                con.add(r, k, hi)
            if i == a:
                con.started[k] = r
                if lo:
                    con.add(k, r, -lo)
        if k == len(states) - 1:
            break  # what is enabled after the last step does not constrain the path (and may fail to evaluate)
        now = {i for i, _ in cm.successors(states[k])}
        for i in sorted(now & timed):
            if i == a or i not in enabled:
                running[i] = (k, *bounds(i, states[k]))
        for i in [i for i in running if i not in now]:
            del running[i]
        enabled = now
    return con


def stamp(cm: CompiledModel, bounds: BoundsFn, states: Sequence[State], iids: Sequence[int | None],
          pin: tuple[int, int, int, str] | None = None) -> tuple[list[int], list[int | None]]:
    """The earliest times of the path's steps, with `pin` = (i, j, c, "max"|"min") among the
    timings where t_j - t_i is at least (max) or at most (min) c; and for each step of a timed
    instance the time its timer started (None for the others)."""
    con = path_constraints(cm, bounds, states, iids)
    if pin is not None:
        i, j, c, how = pin
        if how == "max":
            con.add(j, i, -c)
        else:
            con.add(i, j, c)
    times = con.earliest()
    return times, [None if r is None else times[r] for r in con.started]


def timed_steps(cm: CompiledModel, bounds: object, states: list[State], iids: list[int | None],
                pin: tuple[int, int, int, str] | None = None) -> tuple[Step, ...]:
    """The decoded steps of a discrete path, each with the earliest time it can happen at
    (under `pin`: see timeline.stamp)."""
    times, since = stamp(cm, bounds, states, iids, pin)  # type: ignore[arg-type]
    steps = make_steps(cm, states, iids)
    return tuple(Step(st.action, st.args, st.state, t, r) for st, t, r in zip(steps, times, since))

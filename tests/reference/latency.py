"""Latency properties by brute force over the reference semantics (NOTE(latency) in spec/ir.py,
written from its text, not from checker/engines/latency/latency.py): value iteration over walks of at most k
steps instead of graph algorithms, k growing until the values settle (a value still growing
after |states| + 1 rounds means a positive-cost cycle), and fair traps by the reference's own
fairness test (explore._fair_component, TLA+'s reading of "enabled")."""

from __future__ import annotations

import math
from dataclasses import dataclass

import networkx as nx

from tests.reference import explore as ref_explore
from tests.reference.semantics import Evaluator, Model, holds


@dataclass(frozen=True)
class LatencyOutcome:
    starts: int  # reachable starts (initial P-states and P-states entered from non-P states)
    min: int | None  # None: no start reaches Q
    max: int | None  # None: unbounded (or no start)

    def verdict(self, within: int | None, constrained: bool) -> str:
        if self.starts and self.max is None:
            return "violated"
        if within is not None and self.max is not None and self.max > within:
            return "violated"
        return "holds_to_bound" if constrained else "proved"


def latencies(m: Model, ex: ref_explore.Exploration) -> dict[str, LatencyOutcome]:
    """Every latency property's outcome on the explored (complete, unconstrained) state space."""
    inst = m.instances()

    def cost(i: int, s: tuple) -> int:
        a, args = inst[i]
        if a.cost is None:
            return 0
        env = {name: v for (name, _), v in zip(a.params, args)}
        return int(Evaluator(m, s, None).eval(a.cost, env))

    out = {}
    for name, pe, qe, _within in m.latencies:
        P = {s: holds(m, pe, s) for s in ex.states}
        Q = {s: holds(m, qe, s) for s in ex.states}
        starts = {s for s in ex.states if ex.parent[s] is None and P[s]}
        starts |= {t for s in ex.states for _, t in ex.edges.get(s, []) if not P[s] and P[t]}
        region, todo = set(), [s for s in starts if not Q[s]]
        while todo:
            s = todo.pop()
            if s in region:
                continue
            region.add(s)
            todo += [t for _, t in ex.edges.get(s, []) if not Q[t]]
        sub = nx.DiGraph()
        sub.add_nodes_from(region)
        sub.add_edges_from((s, t) for s in region for _, t in ex.edges.get(s, []) if t in region)
        trap = any(ref_explore._fair_component(m, ex, inst, comp) for comp in nx.strongly_connected_components(sub))
        hi = {s: (0 if Q[s] else -math.inf) for s in ex.states}
        lo = {s: (0 if Q[s] else math.inf) for s in ex.states}
        grows = False
        for _ in range(len(ex.states) + 2):
            nhi = {s: 0 if Q[s] else max([cost(i, s) + hi[t] for i, t in ex.edges.get(s, [])], default=-math.inf)
                   for s in ex.states}
            nlo = {s: 0 if Q[s] else min([cost(i, s) + lo[t] for i, t in ex.edges.get(s, [])], default=math.inf)
                   for s in ex.states}
            grows = any(nhi[s] != hi[s] for s in region)
            hi, lo = nhi, nlo
        best_lo = min((lo[s] for s in starts), default=math.inf)
        mn = None if best_lo == math.inf else int(best_lo)
        if not starts:
            out[name] = LatencyOutcome(0, None, None)
        elif trap or grows:
            out[name] = LatencyOutcome(len(starts), mn, None)
        else:
            out[name] = LatencyOutcome(len(starts), mn, int(max(hi[s] for s in starts)))
    return out

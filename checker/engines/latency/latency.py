"""Latency properties (NOTE(latency) in spec/ir.py), exact on the explored state graph.

For `latency NAME: from P to Q [within B]`:

* the *starts* are the initial P-states and the targets of the edges from a non-P state into a
  P-state; the *region* is the expanded non-Q states reachable from a start without passing
  a Q-state;
* the greatest measurement is unbounded when the region holds a state where no fair instance
  is enabled (a behaviour may stutter there forever, a deadlock included), a fair strongly
  connected component (checker/engines/explicit/liveness.py's test), or a cycle with a positive cost; the
  counterexample is that behaviour, a lasso;
* otherwise every cycle of the region costs 0 and fairness forces a behaviour out of it, so
  the strongly connected components of the region form a DAG and the greatest measurement
  is a longest path in it, ending with the first step into a Q-state; the counterexample is
  the behaviour realising it (the BFS prefix to a start, then the longest path), and
  `detail["start"]` the index of the step where its measurement starts;
* the least measurement is a shortest path (Dijkstra, costs are non-negative) from any start
  to a Q-state; its behaviour is kept in `detail["min_counterexample"]`.

A state outside a `constraint` is not expanded: a path into it ends there (its cost so far
counts) and the verdict is at most `holds_to_bound`. Costs, P and Q are evaluated by the
interpreter (gpmodel); a cost or predicate that fails to evaluate, or a negative cost, makes
the result `unknown` with the message and its location."""

from __future__ import annotations

import heapq
from collections import deque
from typing import Callable, Sequence

from gpcheck.spec import ir
from gpcheck.gpmodel import CompiledModel, ModelError
from gpcheck.gpmodel.cost import compile_costs
from gpcheck.checker.core import budget
from gpcheck.checker.engines.explicit import liveness
from gpcheck.checker.engines.explicit.explicit import Search, make_steps
from gpcheck.checker.core.verdict import Counterexample, Result, Verdict

ENGINE = "explicit"
KIND = "latency"


CostOf = Callable[[int, int], int]  # (state index, instance) -> the cost of that edge


class _Unknown(Exception):
    """The latency cannot be computed (a predicate or a cost fails to evaluate)."""


def latency_results(cm: CompiledModel, res: Search, g: liveness.Graph | None, props: Sequence[ir.Latency]) -> list[Result]:
    """One Result per latency property after a search (`g` the explored graph, built from the
    search when None)."""
    if not props:
        return []
    if not res.complete:
        return [Result(p.name, KIND, Verdict.UNKNOWN, ENGINE, bound=res.depth,
                       reason=res.stop_reason or "incomplete search",
                       detail=_numbers(p, None, None)) for p in props]
    try:
        if g is None:
            outside = {s for s in res.parent if not cm.in_constraints(s)} if res.pruned else set()
            g = liveness.build_graph(cm, res.parent, outside.__contains__)
        cost = compile_costs(cm)
        out = []
        for p in props:
            out.append(_one(cm, g, res, p, cost))
        return out
    except budget.Stop as stop:
        return [Result(p.name, KIND, Verdict.UNKNOWN, ENGINE, reason=stop.text, detail=_numbers(p, None, None))
                for p in props]


def _numbers(p: ir.Latency, lo: int | None, hi: int | None, **extra: object) -> dict[str, object]:
    out: dict[str, object] = {"min": lo, "max": hi, "within": p.within}
    out.update(extra)
    return out


def _one(cm: CompiledModel, g: liveness.Graph, res: Search, p: ir.Latency,
         cost: Callable[[int, tuple[int, ...]], int]) -> Result:
    try:
        return _compute(cm, g, res, p, cost)
    except _Unknown as why:
        return Result(p.name, KIND, Verdict.UNKNOWN, ENGINE, reason=str(why), detail=_numbers(p, None, None))


def _truths(cm: CompiledModel, g: liveness.Graph, e: ir.Expr, what: str) -> list[bool]:
    fn = cm.predicate(e)
    out = []
    for i, s in enumerate(g.states):
        if not i & 0xFFF:
            budget.check()
        try:
            out.append(bool(fn(s)))
        except ModelError as err:
            raise _Unknown(f"{what} fails to evaluate in a reachable state: {err}") from None
    return out


def _compute(cm: CompiledModel, g: liveness.Graph, res: Search, p: ir.Latency,
             cost_of: Callable[[int, tuple[int, ...]], int]) -> Result:
    n = len(g.states)
    P = _truths(cm, g, p.p, f"{p.name}'s 'from' predicate")
    Q = _truths(cm, g, p.q, f"{p.name}'s 'to' predicate")
    fair = {iid for iid, inst in enumerate(cm.instances) if inst.action.fair}

    # starts, each with the step that enters it (None: an initial P-state)
    entered: dict[int, tuple[int, int] | None] = {i: None for i in g.initial if P[i]}
    for i in range(n):
        if g.expanded[i] and not P[i]:
            for iid, j in g.edges[i]:
                if P[j] and j not in entered:
                    entered[j] = (i, iid)
    starts = sorted(entered)
    if not starts:
        return _verdict(cm, g, res, p, None, None, None, detail={"starts": 0})

    def inside(i: int) -> bool:
        return g.expanded[i] and not Q[i]

    # the region: non-Q expanded states reachable from a start without passing a Q-state
    region: set[int] = set()
    work = deque(i for i in starts if inside(i))
    region.update(work)
    while work:
        i = work.popleft()
        for _, j in g.edges[i]:
            if inside(j) and j not in region:
                region.add(j)
                work.append(j)

    costs: dict[tuple[int, int], int] = {}  # (state, instance) -> cost, on every edge leaving the region

    def cost(i: int, iid: int) -> int:
        key = (i, iid)
        if key not in costs:
            try:
                costs[key] = cost_of(iid, g.states[i])
            except ModelError as err:
                raise _Unknown(f"{err.message} ({err.site.span}) in a reachable state") from None
        return costs[key]

    for k, i in enumerate(sorted(region)):
        if not k & 0xFFF:
            budget.check()
        for iid, _ in g.edges[i]:
            cost(i, iid)

    lo, lo_path = _shortest(g, starts, region, Q, cost)
    extra: dict[str, object] = {"starts": len(starts)}
    if lo_path is not None:
        lo_cex, lo_start = _behaviour(cm, g, entered, lo_path)
        extra["min_counterexample"] = lo_cex.to_json()
        extra["min_start"] = lo_start

    # unbounded: a stutter state, a fair SCC or a positive-cost cycle in the region
    enabled = _EnabledView(g)
    comps = [set(c) for c in _sccs(g, region)]  # sinks first: a reverse topological order of the condensation
    comp_of = {i: k for k, comp in enumerate(comps) for i in comp}
    trap: dict[int, tuple[str, frozenset[int] | None]] = {}  # state -> why it makes the max unbounded
    for i in region:
        if not any(iid in fair for iid, _ in g.edges[i]):
            trap[i] = ("stutter", None)
    for comp in comps:
        if len(comp) == 1:
            (only,) = comp
            if not any(j == only for _, j in g.edges[only]):
                continue
        frozen = frozenset(comp)
        if any(j in comp and cost(i, iid) > 0 for i in comp for iid, j in g.edges[i]):
            for i in comp:
                trap.setdefault(i, ("positive", frozen))
        elif liveness._fair_scc(comp, g, enabled, fair):  # type: ignore[arg-type]
            for i in comp:
                trap.setdefault(i, ("fair", frozen))
    if trap:
        (cex, start), why = _unbounded_witness(cm, g, entered, starts, region, trap, enabled, fair, cost)
        return _verdict(cm, g, res, p, lo, None, cex, detail={**extra, "unbounded": why, "start": start})

    # longest path over the condensation (every cycle left costs 0), successors first
    longest: dict[int, int] = {}
    best: dict[int, tuple[int, int, int]] = {}  # component -> (state, instance, target) of its longest exit
    for k in range(len(comps)):
        top = -1
        for i in comps[k]:
            for iid, j in g.edges[i]:
                if j in region and comp_of[j] == k:
                    continue  # costs 0 (no positive cycle)
                v = cost(i, iid) + (longest[comp_of[j]] if j in region else 0)
                if v > top:
                    top, best[k] = v, (i, iid, j)
        assert top >= 0, "an unfair component has an exit"
        longest[k] = top
    hi, first = -1, starts[0]
    for s in starts:
        v = longest[comp_of[s]] if s in region else 0
        if v > hi:
            hi, first = v, s
    path = [(None, first)]
    cur = first
    while cur in region:
        i, iid, j = best[comp_of[cur]]
        if i != cur:
            leg = liveness._path_within(g, cur, lambda x, i=i: x == i, lambda x: x in comps[comp_of[cur]])
            assert leg is not None
            path += leg[1:]
        path.append((iid, j))
        cur = j
    cex, start = _behaviour(cm, g, entered, path)
    return _verdict(cm, g, res, p, lo, hi, cex, detail={**extra, "start": start})


class _EnabledView:
    """enabled[i]: the instances enabled in state i (what liveness._fair_scc reads), on demand."""

    def __init__(self, g: liveness.Graph):
        self.g = g

    def __getitem__(self, i: int) -> set[int]:
        return {iid for iid, _ in self.g.edges[i]}


def _sccs(g: liveness.Graph, region: set[int]) -> list[list[int]]:
    """The strongly connected components of the region's subgraph (iterative Tarjan), in the
    order Tarjan completes them: every component after all the components it reaches."""
    return liveness.sccs(g, region.__contains__, sorted(region))


def _shortest(g: liveness.Graph, starts: list[int], region: set[int], Q: list[bool],
              cost: Callable[[int, int], int]) -> tuple[int | None, list[tuple[int | None, int]] | None]:
    """The least measurement (Dijkstra from every start to the first Q-state) and its path
    as (instance, state) pairs, or (None, None) when no start reaches Q."""
    dist: dict[int, int] = {}
    prev: dict[int, tuple[int, int]] = {}
    heap = [(0, s) for s in starts]
    heapq.heapify(heap)
    for s in starts:
        dist[s] = 0
    while heap:
        d, i = heapq.heappop(heap)
        if d > dist[i]:
            continue
        if Q[i]:
            return d, _path_to(prev, i)
        if i not in region:
            continue  # outside a constraint: not expanded
        for iid, j in g.edges[i]:
            nd = d + cost(i, iid)
            if j not in dist or nd < dist[j]:
                dist[j] = nd
                prev[j] = (i, iid)
                heapq.heappush(heap, (nd, j))
    return None, None


def _unbounded_witness(cm: CompiledModel, g: liveness.Graph, entered: dict[int, tuple[int, int] | None],
                       starts: list[int], region: set[int], trap: dict[int, tuple[str, frozenset[int] | None]],
                       enabled: _EnabledView, fair: set[int],
                       cost: Callable[[int, int], int]) -> tuple[tuple[Counterexample, int], str]:
    """The lasso of a behaviour whose measurement is unbounded: the BFS prefix to a start, the
    shortest path inside the region to a trap state, then its loop."""
    prev: dict[int, tuple[int, int]] = {}
    seen = set(s for s in starts if s in region)
    work = deque(sorted(seen))
    hit = None
    while work:
        i = work.popleft()
        if i in trap:
            hit = i
            break
        for iid, j in g.edges[i]:
            if j in region and j not in seen:
                seen.add(j)
                prev[j] = (i, iid)
                work.append(j)
    assert hit is not None
    kind, comp = trap[hit]
    return _lasso(cm, g, entered, _path_to(prev, hit), hit, kind, comp, enabled, fair, cost)


def _lasso(cm: CompiledModel, g: liveness.Graph, entered: dict[int, tuple[int, int] | None],
           path: list[tuple[int | None, int]], hit: int, kind: str, comp: frozenset[int] | None,
           enabled: _EnabledView, fair: set[int], cost: CostOf) -> tuple[tuple[Counterexample, int], str]:
    """The unbounded behaviour through `path` (from a start to the trap state `hit`, of
    `kind` "stutter", "fair" or "positive", in component `comp`) and its loop, with the reason.
    Shared with the compiled core's path (checker/engines/latency/fast_latency.py)."""
    cycle: list[tuple[int, int]] = []
    if kind == "stutter":
        why = "a behaviour can stay forever in a state before Q where no fair action is enabled"
    elif kind == "fair":
        assert comp is not None
        cycle = liveness._fair_cycle(g, hit, comp, enabled, fair)  # type: ignore[arg-type]
        why = "a fair behaviour can cycle forever before Q"
    else:
        assert comp is not None
        u, iid, v = next((i, iid, j) for i in sorted(comp) for iid, j in g.edges[i] if j in comp and cost(i, iid) > 0)
        to_u = liveness._path_within(g, hit, lambda x: x == u, comp.__contains__)
        back = liveness._path_within(g, v, lambda x: x == hit, comp.__contains__)
        assert to_u is not None and back is not None
        cycle = [(a, b) for a, b in to_u[1:]] + [(iid, v)] + [(a, b) for a, b in back[1:]]  # type: ignore[misc]
        why = "a cycle with a positive cost can be taken any number of times before Q"
    cex = _behaviour(cm, g, entered, path + cycle[:-1] if cycle else path, loop_from_end=len(cycle) - 1 if cycle else 0)
    return cex, why


def _behaviour(cm: CompiledModel, g: liveness.Graph, entered: dict[int, tuple[int, int] | None],
               path: list[tuple[int | None, int]], loop_from_end: int | None = None) -> tuple[Counterexample, int]:
    """The BFS prefix to the start `path[0]` (entering it from a non-P state where it is not
    initial), then `path`; and the index of the start among its steps (where the measurement
    begins). `loop_from_end`: the behaviour is a lasso whose loop begins that many steps
    before the end (0: it stutters in the last state)."""
    start = path[0][1]
    how = entered[start]
    if how is None:
        prefix = liveness._bfs_prefix(g, start)
    else:
        i, iid = how
        prefix = liveness._bfs_prefix(g, i) + [(iid, start)]
    seq = prefix + path[1:]
    states = [g.states[i] for _, i in seq]
    iids: list[int | None] = [iid for iid, _ in seq]
    loop = None if loop_from_end is None else len(seq) - 1 - loop_from_end
    return Counterexample(make_steps(cm, states, iids), loop=loop), len(prefix) - 1


def _verdict(cm: CompiledModel, g: liveness.Graph, res: Search, p: ir.Latency, lo: int | None, hi: int | None,
             cex: Counterexample | None, detail: dict[str, object]) -> Result:
    """proved / violated / holds_to_bound from the least and greatest measurement."""
    numbers = _numbers(p, lo, hi, **detail)
    unbounded = "unbounded" in detail
    holds = not unbounded and (p.within is None or hi is None or hi <= p.within)
    if not holds:
        assert cex is not None
        return Result(p.name, KIND, Verdict.VIOLATED, ENGINE, counterexample=cex, detail=numbers)
    if res.pruned:
        names = ", ".join(c.name for c in cm.model.constraints)
        return Result(p.name, KIND, Verdict.HOLDS_TO_BOUND, ENGINE, bound=res.depth,
                      reason=f"explored only inside constraint {names}", counterexample=cex, detail=numbers)
    return Result(p.name, KIND, Verdict.PROVED, ENGINE, counterexample=cex, detail=numbers)


def _path_to(prev: dict[int, tuple[int, int]], k: int) -> list[tuple[int | None, int]]:
    """The path a search's `prev` links (state -> (predecessor, instance)) lead back from `k`:
    (instance into each state, state), the first with instance None."""
    path: list[tuple[int | None, int]] = []
    while k in prev:
        pk, iid = prev[k]
        path.append((iid, k))
        k = pk
    path.append((None, k))
    path.reverse()
    return path

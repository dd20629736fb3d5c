"""Liveness under per-instance weak fairness, on the explored state graph.

A liveness property fails iff some fair behaviour eventually stays in ¬q forever (after a
p-state for `leads_to`, from the start for `eventually`, anywhere for `always eventually`).
Staying in ¬q forever means ending in either
  * a strongly connected component C of the ¬q subgraph that is *fair*: every fair instance
    enabled in all states of C is taken on some edge inside C (an instance disabled somewhere
    in C is not continuously enabled on a cycle through all of C), or
  * a ¬q state where no fair instance is enabled (stuttering there forever is allowed, as in
    TLA+; this covers deadlocks).
Fairness only shrinks when C shrinks, so maximal SCCs suffice. The counterexample is a lasso:
BFS prefix, a path inside ¬q, then a cycle through C that discharges every fairness obligation.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterable, Protocol, Sequence

from gpcheck.spec import ir
from gpcheck.gpmodel import CompiledModel, State, truth
from gpcheck.checker.core import budget
from gpcheck.checker.core.verdict import Counterexample, Result, Verdict

ENGINE = "explicit"


@dataclass
class Graph:
    """The explored state graph: states in BFS order, and per state its (instance, target) edges."""

    states: list[State]
    index: dict[State, int]
    edges: list[list[tuple[int, int]]]
    expanded: list[bool]
    parent: list[int]  # BFS parent index, -1 for initial states
    initial: list[int]


def build_graph(cm: CompiledModel, parent: dict[State, State | None], unexpanded: Callable[[State], bool]) -> Graph:
    states = list(parent)
    index = {s: i for i, s in enumerate(states)}
    edges: list[list[tuple[int, int]]] = []
    expanded = []
    for s in states:
        if not len(edges) & 0xFFF:
            budget.check()  # raises budget.Stop after a signal or past --max-memory
        if unexpanded(s):
            edges.append([])
            expanded.append(False)
            continue
        edges.append([(iid, index[t]) for iid, t in cm.successors(s)])
        expanded.append(True)
    par = [index[p] if p is not None else -1 for p in parent.values()]
    initial = [i for i, p in enumerate(par) if p == -1]
    return Graph(states, index, edges, expanded, par, initial)


@dataclass(frozen=True)
class Lasso:
    states: list[int]  # state indexes, the first one initial
    iids: list[int | None]  # instance leading into each state (None for the first)
    loop: int  # the last state steps back to states[loop] (== last index: stutter)


def check(cm: CompiledModel, g: Graph, prop: ir.Liveness) -> Lasso | None:
    """A fair lasso violating `prop`, or None when every fair behaviour satisfies it."""
    import networkx as nx  # here, not at the top: 0.14 s and 10 MB that a run without liveness on this path skips

    q = cm.predicate(prop.q)
    n = len(g.states)
    notq = [g.expanded[i] and not truth(q, g.states[i]) for i in range(n)]  # NOTE(predicate-errors)
    fair = {iid for iid, inst in enumerate(cm.instances) if inst.action.fair}
    enabled = [{iid for iid, _ in g.edges[i]} for i in range(n)]

    sub = nx.DiGraph()
    sub.add_nodes_from(i for i in range(n) if notq[i])
    for i in range(n):
        if not i & 0xFFF:
            budget.check()
        if notq[i]:
            for iid, j in g.edges[i]:
                if notq[j]:
                    sub.add_edge(i, j)

    accepting: dict[int, frozenset[int] | None] = {}  # node -> its fair SCC (None: stutter)
    for i in sub.nodes:
        if not (enabled[i] & fair):
            accepting[i] = None
    for members in sccs(g, notq.__getitem__, sorted(sub.nodes)):
        comp = set(members)
        if len(comp) == 1:
            (only,) = comp
            if not sub.has_edge(only, only):
                continue
        if _fair_scc(comp, g, enabled, fair):
            frozen = frozenset(comp)
            for i in comp:
                accepting.setdefault(i, frozen)
    if not accepting:
        return None

    starts = lasso_starts(prop, cm, accepting, sub.predecessors, g.initial, g.states.__getitem__)
    if not starts:
        return None
    start = min(starts)  # states are in BFS order: the nearest start
    return lasso_from(g, start, accepting, notq, enabled, fair)


def lasso_starts(prop: ir.Liveness, cm: CompiledModel, accepting: Iterable[int],
                 preds: Callable[[int], Iterable[int]], initial: Iterable[int],
                 state: Callable[[int], State]) -> list[int]:
    """Where a lasso violating `prop` may start, in node order: the not-q nodes from which an
    accepting node is reachable inside not-q (backwards through `preds`, the not-q predecessors),
    the initial ones for `eventually`, those satisfying p for `p leads_to q`. Shared by this
    module and the zone graph's liveness (checker/engines/timed/liveness.py)."""
    can_reach = set(accepting)
    work = deque(can_reach)
    steps = 0
    while work:
        steps += 1
        if not steps & 0xFFF:
            budget.check()
        j = work.popleft()
        for i in preds(j):
            if i not in can_reach:
                can_reach.add(i)
                work.append(i)
    if prop.kind is ir.LivenessKind.EVENTUALLY:
        return [i for i in initial if i in can_reach]
    if prop.kind is ir.LivenessKind.ALWAYS_EVENTUALLY:
        return sorted(can_reach)
    assert prop.p is not None
    p = cm.predicate(prop.p)
    return [i for i in sorted(can_reach) if truth(p, state(i))]


class AcceptingMap(Protocol):
    """Accepting notq states: `i in m`; `m[i]` is i's fair SCC, or None where i may stutter."""

    def __contains__(self, i: object) -> bool: ...
    def __getitem__(self, i: int) -> frozenset[int] | None: ...


class GraphLike(Protocol):
    """What the lasso construction reads of a graph: per state its (instance, target) edges
    and its BFS parent (-1 for an initial state)."""

    @property
    def edges(self) -> Sequence[list[tuple[int, int]]]: ...
    @property
    def parent(self) -> Sequence[int]: ...


def lasso_from(g: GraphLike, start: int, accepting: AcceptingMap, notq: Sequence[bool | int],
               enabled: Sequence[set[int]], fair: set[int]) -> Lasso:
    """The counterexample lasso: BFS prefix to `start`, a shortest path inside notq to an
    accepting state, then (for a fair SCC) a cycle through it discharging every obligation.
    Shared by the Python and the compiled engine (checker/engines/explicit/fast_explicit.py)."""
    prefix = _bfs_prefix(g, start)
    path = _path_within(g, start, lambda i: i in accepting, lambda j: bool(notq[j]))
    assert path is not None
    anchor = path[-1][1]
    comp = accepting[anchor]
    states = [i for _, i in prefix] + [i for _, i in path[1:]]
    iids: list[int | None] = [iid for iid, _ in prefix] + [iid for iid, _ in path[1:]]
    loop_at = len(states) - 1
    if comp is None:
        return Lasso(states, iids, loop_at)
    cycle = _fair_cycle(g, anchor, comp, enabled, fair)
    states += [i for _, i in cycle[:-1]]
    iids += [iid for iid, _ in cycle[:-1]]
    # the last edge of the cycle returns to the anchor, at index loop_at
    return Lasso(states, iids, loop_at)


def sccs(g: GraphLike, inside: Callable[[int], bool], roots: Sequence[int]) -> list[list[int]]:
    """The strongly connected components of the subgraph of the states `inside` accepts
    (iterative Tarjan, from `roots` in order: each state inside), in the order Tarjan completes
    them: every component after all the components it reaches. Polls the budget as it goes
    (`budget.check` raises `Stop`): one component can hold the whole graph, so polling between
    components is not enough for a partial report within budget.GRACE."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in roots:
        if root in index:
            continue
        work = [(root, iter(g.edges[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            if not counter & 0xFFF:
                budget.check()
            v, it = work[-1]
            pushed = False
            for _, w in it:
                if not inside(w):
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(g.edges[w])))
                    pushed = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if pushed:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def _fair_scc(comp: set[int], g: Graph, enabled: list[set[int]], fair: set[int]) -> bool:
    always = set(fair)
    for i in comp:
        always &= enabled[i]
        if not always:
            return True
    taken = {iid for i in comp for iid, j in g.edges[i] if j in comp}
    return always <= taken


def _bfs_prefix(g: GraphLike, target: int) -> list[tuple[int | None, int]]:
    chain = [target]
    while g.parent[chain[-1]] != -1:
        chain.append(g.parent[chain[-1]])
    chain.reverse()
    out: list[tuple[int | None, int]] = [(None, chain[0])]
    for a, b in zip(chain, chain[1:]):
        iid = next(iid for iid, j in g.edges[a] if j == b)
        out.append((iid, b))
    return out


def _path_within(
    g: GraphLike, src: int, goal: Callable[[int], bool], allowed: Callable[[int], bool], first_edge: bool = False
) -> list[tuple[int | None, int]] | None:
    """Shortest path src → a goal node through allowed nodes, as (instance, node) pairs.
    With `first_edge`, the path has at least one edge (src itself does not count as a goal)."""
    if goal(src) and not first_edge:
        return [(None, src)]
    prev: dict[int, tuple[int, int]] = {}
    seen = {src}
    work = deque([src])
    while work:
        if not len(seen) & 0xFFF:
            budget.check()
        i = work.popleft()
        for iid, j in g.edges[i]:
            if not allowed(j):
                continue
            if goal(j):
                out = [(iid, j)]
                k = i
                while k != src:
                    pk, piid = prev[k]
                    out.append((piid, k))
                    k = pk
                out.append((None, src))
                out.reverse()
                return out
            if j not in seen:
                seen.add(j)
                prev[j] = (i, iid)
                work.append(j)
    return None


def _fair_cycle(g: GraphLike, anchor: int, comp: frozenset[int], enabled: Sequence[set[int]],
                fair: set[int]) -> list[tuple[int, int]]:
    """A cycle anchor → ... → anchor inside comp that takes every fair instance enabled
    throughout comp and visits, for every other fair instance, a state where it is disabled."""
    inside = comp.__contains__
    always = set(fair)
    for i in comp:
        always &= enabled[i]
    out: list[tuple[int, int]] = []
    cur = anchor
    for f in sorted(fair):
        if f in always:
            src = next(i for i in sorted(comp) if any(iid == f and j in comp for iid, j in g.edges[i]))
            leg = _path_within(g, cur, lambda i, src=src: i == src, inside)
            assert leg is not None
            out += [(iid, i) for iid, i in leg[1:]]  # type: ignore[misc]
            dst = next(j for iid, j in g.edges[src] if iid == f and j in comp)
            out.append((f, dst))
            cur = dst
        elif not any(f not in enabled[i] for _, i in [(None, cur)] + out):  # type: ignore[list-item]
            leg = _path_within(g, cur, lambda i, f=f: f not in enabled[i], inside)
            assert leg is not None
            out += [(iid, i) for iid, i in leg[1:]]  # type: ignore[misc]
            cur = leg[-1][1]
    back = _path_within(g, cur, lambda i: i == anchor, inside, first_edge=not out and cur == anchor)
    assert back is not None
    out += [(iid, i) for iid, i in back[1:]]  # type: ignore[misc]
    return out


class _SearchOutcome(Protocol):
    complete: bool
    pruned: bool
    depth: int
    stop_reason: str | None


def verdicts(model: ir.Model, res: _SearchOutcome, props: list[ir.Liveness],
             find: Callable[[ir.Liveness], Counterexample | None]) -> list[Result]:
    """One Result per liveness property after a search: unknown if it was incomplete, else
    violated with the lasso `find` gives, proved, or holding inside the constraints; unknown
    with the stop's reason for a property whose `find` the budget stopped (`budget.Stop`: a
    signal, --timeout, --max-memory), the verdicts found before it kept."""
    out = []
    for p in props:
        if not res.complete:
            out.append(Result(p.name, "liveness", Verdict.UNKNOWN, ENGINE, bound=res.depth,
                              reason=res.stop_reason or "incomplete search"))
            continue
        try:
            cex = find(p)
        except budget.Stop as stop:
            out.append(Result(p.name, "liveness", Verdict.UNKNOWN, ENGINE, reason=stop.text))
            continue
        if cex is not None:
            out.append(Result(p.name, "liveness", Verdict.VIOLATED, ENGINE, counterexample=cex))
        elif res.pruned:
            names = ", ".join(c.name for c in model.constraints)
            out.append(Result(p.name, "liveness", Verdict.HOLDS_TO_BOUND, ENGINE, bound=res.depth,
                              reason=f"explored only inside constraint {names}"))
        else:
            out.append(Result(p.name, "liveness", Verdict.PROVED, ENGINE))
    return out

"""Liveness in the timed semantics (NOTE(timed) in spec/ir.py; docs/timed.md).

A liveness property is violated iff some *time-divergent*, weakly fair behaviour stays in not-Q
forever (after a P-state for `leads_to`, from the start for `eventually`, anywhere for `always
eventually`), exactly as checker/engines/explicit/liveness.py decides it for untimed specs, with time divergence
in place of stuttering: a behaviour may stay in a state only while time passes there, and time
cannot pass beyond an enabled instance's deadline.

NOTE(sojourn-clock): time divergence is detected without a clock that fragments the zones. With
integer bounds and closed constraints, integer time is exact (the digitization argument,
docs/timed.md), and there a behaviour is time-divergent iff infinitely many of its sojourns (the
time spent in a state between two steps) last at least one unit. One more clock `t` is reset at
every step (a node's zone keeps `t` as the time since arrival, so it stands for the arrival zone)
and extrapolated with constant 1; a *tick edge* leads from such a FRESH node to its SLOW copy: the
valuations with t >= 1 (a sojourn of at least one unit), `t` then freed. A SLOW node has a tick
self-loop iff no enabled instance has a deadline there (the sojourn may last forever); its steps
lead to FRESH nodes. So `t` never relates to a clock beyond one sojourn, and no constant
multiplies the zones (the tick clock it replaces, reset only by ticks, kept every difference with
a periodic clock up to its constant: kfd_monitor_timed passed 50,000 zones at a 1 ms quantum in
microseconds, 2,408 now at any quantum). Zones are compared by equality (no inclusion), so a cycle
of the graph is a real one (Extra_M is a finite time-abstract simulation: its cycles lift to
infinite runs, Tripakis 2009).

An accepting component is a strongly connected component of the not-Q subgraph that contains a
tick edge and is fair in checker/engines/explicit/liveness.py's sense (every fair instance enabled in
all its states is taken inside it). The witness is a lasso whose loop starts at a tick edge's
source (at least one time unit passes in its first state) and discharges every fairness
obligation; its discrete steps carry their time stamps (checker/engines/timed/timeline.py)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Sequence

from gpcheck.spec import ir
from gpcheck.gpmodel import CompiledModel, State, truth
from gpcheck.checker.core import budget
from gpcheck.checker.engines.explicit.explicit import Limits
from gpcheck.checker.engines.explicit.liveness import _fair_cycle, _fair_scc, _path_within, _bfs_prefix, lasso_starts, sccs
from gpcheck.checker.engines.timed import dbm
from gpcheck.checker.engines.timed.zones import Node, ZoneGraph

TICK_EDGE = -1  # the label of a tick edge (no instance has it)
FRESH, SLOW = 0, 1  # a node's mode: sojourn clock running since arrival / a sojourn of >= 1 seen
# The exact zone graph (no inclusion) can be far larger than the safety search's; past this many
# zones (unless --max-states says otherwise) liveness is `unknown`, saying so, rather than slow.
DEFAULT_MAX_ZONES = 50_000


class TooLarge(Exception):
    """The exact zone graph passed --max-states."""


@dataclass
class TimedGraph:
    """The exact zone graph with tick edges, in checker/engines/explicit/liveness.py's GraphLike shape."""

    nodes: list[Node] = field(default_factory=list)
    edges: list[list[tuple[int, int]]] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    initial: list[int] = field(default_factory=list)
    enabled: list[set[int]] = field(default_factory=list)


def build(cm: CompiledModel, limits: Limits = Limits()) -> TimedGraph:
    """Every symbolic state of the zone graph with the sojourn clock, and its edges (module
    docstring, NOTE(sojourn-clock))."""
    g = ZoneGraph(cm, extra=1)
    fresh_m, slow_m = [1], [-1]
    out = TimedGraph()
    index: dict[tuple[State, tuple, int, tuple[int, ...]], int] = {}  # type: ignore[type-arg]
    work: deque[int] = deque()

    def get(node: Node) -> int:
        key = (node.s, node.bounds, node.mode, node.zone)
        j = index.get(key)
        if j is None:
            j = index[key] = len(out.nodes)
            out.nodes.append(node)
            out.edges.append([])
            out.parent.append(node.parent)
            out.enabled.append(set())
            work.append(j)
            if j & 0xFF == 0:
                budget.check()
            cap = limits.max_states if limits.max_states is not None else DEFAULT_MAX_ZONES
            if j > cap:
                raise TooLarge(f"the zone graph that liveness needs passed {cap:,} zones (--max-states "
                               f"raises the limit)")
        return j

    for s in cm.initial_states():
        node = g.initial(s, (0,), fresh_m)
        if node is not None:
            node.mode = FRESH
            out.initial.append(get(node))
    while work:
        i = work.popleft()
        node = out.nodes[i]
        steps = g.enabled(node.s)
        out.enabled[i] = {iid for iid, _ in steps}
        if node.mode == FRESH:
            z = _slow(g, node)
            if z is not None:
                out.edges[i].append((TICK_EDGE, get(Node(node.s, node.bounds, z, i, None, SLOW))))
        elif g.delays(node.s) and not any(b is not None and b[1] is not None for b in node.bounds):
            out.edges[i].append((TICK_EDGE, i))  # no deadline: the sojourn may last forever
        for iid, t in steps:
            nxt = g.post(node, iid, t, extra_reset=(0,), extra_m=fresh_m)
            if nxt is not None:
                out.edges[i].append((iid, get(Node(t, nxt[0], nxt[1], i, iid, FRESH))))
    return out


def _slow(g: ZoneGraph, node: Node) -> tuple[int, ...] | None:
    """The valuations of a FRESH node's zone after a sojourn of at least one time unit in its
    state (sojourn clock >= 1), the sojourn clock then forgotten; None when time cannot pass 1."""
    n = g.dim(node.bounds)
    d = list(node.zone)
    c = g.extra_position(node.bounds, 0)
    if not dbm.constrain(d, n, 0, c, dbm.le(-1)):
        return None
    return g._settle(d, n, node.bounds, [-1], g.delays(node.s))


def check(cm: CompiledModel, tg: TimedGraph, prop: ir.Liveness) -> tuple[list[State], list[int | None], int] | None:
    """A time-divergent fair lasso violating `prop` as discrete (states, instances, loop index),
    or None when there is none."""
    q = cm.predicate(prop.q)
    n = len(tg.nodes)
    notq = [not truth(q, tg.nodes[i].s) for i in range(n)]
    fair = {iid for iid, inst in enumerate(cm.instances) if inst.action.fair}
    accepting: dict[int, frozenset[int]] = {}
    for members in sccs(tg, notq.__getitem__, [i for i in range(n) if notq[i]]):
        comp = set(members)
        ticks = [(u, j) for u in comp for iid, j in tg.edges[u] if iid == TICK_EDGE and j in comp]
        if ticks and _fair_scc(comp, tg, tg.enabled, fair):  # type: ignore[arg-type]
            frozen = frozenset(comp)
            for i in comp:
                accepting[i] = frozen
    if not accepting:
        return None
    preds: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        if notq[i]:
            for _, j in tg.edges[i]:
                if notq[j]:
                    preds[j].append(i)
    starts = lasso_starts(prop, cm, accepting, preds.__getitem__, tg.initial, lambda i: tg.nodes[i].s)
    if not starts:
        return None
    return _lasso(tg, min(starts), accepting, notq, fair)


def _lasso(tg: TimedGraph, start: int, accepting: dict[int, frozenset[int]], notq: Sequence[bool],
           fair: set[int]) -> tuple[list[State], list[int | None], int]:
    """BFS prefix, a path inside not-Q to an accepting node, then a cycle through a tick edge
    that discharges every fairness obligation; tick edges dropped (they keep the state)."""
    prefix = _bfs_prefix(tg, start)
    path = _path_within(tg, start, lambda i: i in accepting, lambda j: bool(notq[j]))
    assert path is not None
    comp = accepting[path[-1][1]]
    inside = comp.__contains__
    u, v = next((u, j) for u in sorted(comp) for iid, j in tg.edges[u] if iid == TICK_EDGE and j in comp)
    # the loop starts where its time unit passes (in u's state, before the loop's first step), so
    # that pinning the loop's duration to >= 1 pins a sojourn the listed steps contain
    to_tick = _path_within(tg, path[-1][1], lambda i: i == u, inside)
    assert to_tick is not None
    path += to_tick[1:]
    anchor = u
    back = _path_within(tg, v, lambda i: i == anchor, inside)
    assert back is not None
    cycle: list[tuple[int | None, int]] = [(TICK_EDGE, v)] + back[1:]
    cycle += _fair_cycle(tg, anchor, comp, tg.enabled, fair)  # type: ignore[arg-type]
    walk = prefix + path[1:]
    loop_node = len(walk) - 1
    walk += cycle[:-1] if cycle and cycle[-1][1] == anchor else cycle
    states: list[State] = []
    iids: list[int | None] = []
    loop = 0
    for pos, (iid, k) in enumerate(walk):
        if pos == 0 or iid != TICK_EDGE:
            states.append(tg.nodes[k].s)
            iids.append(None if pos == 0 else iid)
        if pos == loop_node:
            loop = len(states) - 1
    while len(states) - 1 > loop and states[-1] == states[loop]:
        states.pop()  # its step back to the loop state is the lasso's return
        iids.pop()
    return states, iids, loop

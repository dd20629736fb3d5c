"""Exact latencies in the timed semantics (NOTE(timed) in spec/ir.py; docs/timed.md).

`latency NAME: from P to Q [within B]`: a *measurement* starts at time 0 in an initial P-state and
at every step from a non-P state into a P-state, and ends at the first later step into a Q-state
(0 when the P-state is a Q-state); its value is the time elapsed. The property reports the least
(inf) and greatest (sup) measurement over every behaviour. Measurements overlap when P is entered
again before Q: the least is then always the latest one, the greatest the earliest one; so two
searches of the zone graph with one more clock z, reset where a measurement starts:

* *latest* (for the min): z is reset at every entry into P; the min is the least lower bound of z
  over the zones where an instance fires into a Q-state;
* *earliest* (for the max): z is reset only when no measurement runs; the max is the greatest
  upper bound of z there.

z is extrapolated with a constant K (start: the model's largest bound, at least 1): the
extrapolated zone lies in the region closure of the exact one, and regions tell z's values apart
up to K, so a bound of z that is <= K is exact (a larger one may come from extrapolated
differences); otherwise K doubles and the search runs again. Zones have integer constants and closed guards and invariants, so a bound is attained at
an integer point: the min and max are integers, attained (the digitization argument).

The max is unbounded (null) iff a time-divergent behaviour avoids Q forever after a start; that is
decided first, with the sojourn clock of checker/engines/timed/liveness.py (NOTE(sojourn-clock)):
a tick edge (a sojourn of at least one unit) in every measuring state, and a cycle of the measuring
part of the zone graph through a tick (zones compared by equality, not inclusion, so that the
cycle is a real one); the constants do not multiply its zones. Its witness is the
lasso. Fairness is not considered: a `fair` action with no deadline may be postponed for any
finite time, so the supremum is the same.

Each witness is a discrete path of the zone graph; its times are the earliest that satisfy the
path's timing constraints with the measurement pinned to the answer (checker/engines/timed/timeline.py)."""

from __future__ import annotations

from collections import defaultdict, deque
from types import SimpleNamespace
from typing import Callable, Sequence

from gpcheck.spec import ir
from gpcheck.gpmodel import CompiledModel, ModelError, State
from gpcheck.checker.core import budget
from gpcheck.checker.engines.explicit.explicit import Limits
from gpcheck.checker.engines.explicit.liveness import sccs
from gpcheck.checker.engines.timed import dbm
from gpcheck.checker.engines.timed.timeline import NotABehaviour
from gpcheck.checker.engines.timed.zones import Node, Passed, SafetySearch, ZoneGraph, node_path
from gpcheck.checker.core.verdict import Counterexample, Result, Verdict

ENGINE = "timed"
KIND = "latency"
Z, TICK = 0, 1  # the measuring clocks, after the instance clocks
IDLE, MEASURING, SLOW = 0, 1, 2  # SLOW: measuring, a sojourn of >= 1 seen (divergent() only)
MAX_K = 1 << 40  # past this the max is reported unknown rather than searched for further


class _Unknown(Exception):
    pass


def latency_results(cm: CompiledModel, res: SafetySearch, props: Sequence[ir.Latency], limits: Limits) -> list[Result]:
    """One Result per latency property, after the safety search `res` (which must have completed)."""
    out = []
    for p in props:
        if res.fault is not None:
            out.append(_unknown(p, f"a modelling error stops the search: {res.fault[0].message}"))
        elif not res.complete:
            out.append(_unknown(p, res.stop_reason or "incomplete search"))
        elif res.pruned:
            out.append(_unknown(p, "the zone graph was explored only inside a constraint"))
        else:
            try:
                out.append(_one(cm, p, limits))
            except _Unknown as why:
                out.append(_unknown(p, str(why)))
            except budget.Stop as stop:
                out.append(_unknown(p, stop.text))
    return out


def _unknown(p: ir.Latency, why: str) -> Result:
    return Result(p.name, KIND, Verdict.UNKNOWN, ENGINE, reason=why, detail={"min": None, "max": None, "within": p.within})


class _Measure:
    """The zone graph with the measuring clocks, for one property."""

    def __init__(self, cm: CompiledModel, p: ir.Latency, limits: Limits):
        self.cm = cm
        self.g = ZoneGraph(cm, extra=2)
        self.limits = limits
        pf, qf = cm.predicate(p.p), cm.predicate(p.q)
        self._p: dict[State, bool] = {}
        self._q: dict[State, bool] = {}
        self.P = lambda s: self._memo(self._p, pf, s, "from")
        self.Q = lambda s: self._memo(self._q, qf, s, "to")
        self.kmax = 1
        for a in cm.model.actions:
            for e in (a.time.lower, a.time.upper) if a.time is not None else ():
                if isinstance(e, ir.Lit):
                    self.kmax = max(self.kmax, e.value)

    def _memo(self, cache: dict[State, bool], fn: Callable[[State], bool], s: State, which: str) -> bool:
        v = cache.get(s)
        if v is None:
            err = self.cm.predicate_error(s)
            try:
                v = cache[s] = bool(fn(s))
            except ModelError as e:
                raise _Unknown(f"the '{which}' predicate fails to evaluate in a reachable state: {e}") from None
            del err
        return v

    def _limit(self, count: int) -> None:
        if count & 0xFF == 0:
            budget.check()
        if self.limits.max_states is not None and count > self.limits.max_states:
            raise _Unknown(f"state limit reached ({self.limits.max_states} zones) while measuring")

    def explore(self, policy: str, k: int) -> tuple[list[Node], list[tuple[int, int, int, bool, int | None]], bool]:
        """BFS of the product with clock z (extrapolated at k): the nodes, every measurement
        that ends (node, iid, z's lower bound, whether it is strict, z's upper bound or None),
        and whether any measurement starts. Measurements of 0 (P and Q at once) are (node, iid
        or -1 for an initial state, 0, False, 0)."""
        g = self.g
        m_meas, m_idle = [k, -1], [-1, -1]
        nodes: list[Node] = []
        ends: list[tuple[int, int, int, bool, int | None]] = []
        started = False
        passed = Passed()
        work: deque[int] = deque()

        def push(node: Node) -> None:
            if passed.add(node.s, node.bounds, node.mode, node.zone, len(nodes)):
                nodes.append(node)
                work.append(len(nodes) - 1)
                self._limit(len(nodes))

        for s in self.cm.initial_states():
            measuring = self.P(s) and not self.Q(s)
            if self.P(s):
                started = True
            node = g.initial(s, (Z,) if measuring else (), m_meas if measuring else m_idle)
            if node is None:
                continue
            node.mode = MEASURING if measuring else IDLE
            if self.P(s) and self.Q(s):
                ends.append((len(nodes), -1, 0, False, 0))  # a measurement of 0 in the initial state
            push(node)
        while work:
            i = work.popleft()
            if i in passed.covered:
                continue
            node = nodes[i]
            s = node.s
            for iid, t in g.enabled(s):
                d = g.fired(node, iid)
                if d is None:
                    continue  # its lower bound cannot be met here
                enters = self.P(t) and not self.P(s)
                q = self.Q(t)
                if node.mode == MEASURING and q:
                    n = g.dim(node.bounds)
                    zc = g.extra_position(node.bounds, Z)
                    lo, strict = -dbm.value(d[zc]), dbm.is_strict(d[zc])
                    ends.append((i, iid, lo, strict, dbm.upper(d, n, zc)))
                if enters:
                    started = True
                    if q:  # a measurement that ends at once
                        ends.append((i, iid, 0, False, 0))
                restart = enters and not q and (node.mode == IDLE or policy == "latest")
                mode = MEASURING if (not q and (node.mode == MEASURING or enters)) else IDLE
                nxt = g.post(node, iid, t, extra_reset=(Z,) if restart else (),
                             extra_free=(Z,) if mode == IDLE else (), extra_m=m_meas if mode == MEASURING else m_idle,
                             fired=d)
                if nxt is None:
                    continue
                push(Node(t, nxt[0], nxt[1], i, iid, mode))
        return nodes, ends, started

    def divergent(self) -> tuple[list[State], list[int | None], int] | None:
        """A time-divergent behaviour that avoids Q forever after a start, as a discrete lasso
        (states, instances, loop index), or None (module docstring)."""
        g = self.g
        # NOTE(sojourn-clock) in checker/engines/timed/liveness.py: TICK restarts at every step, a
        # tick edge (TICK >= 1, then TICK forgotten) leads to the SLOW copy of the node, which has
        # a tick self-loop only where no deadline bounds the sojourn; TICK's constant is 1 and its
        # differences never outlive a sojourn, so no constant multiplies the zones.
        m_meas, m_idle = [-1, 1], [-1, -1]
        nodes: list[Node] = []
        index: dict[tuple[State, tuple, int, tuple[int, ...]], int] = {}  # type: ignore[type-arg]
        succ: dict[int, list[tuple[int, int | None]]] = {}  # measuring node -> (measuring node, instance; None: tick)
        work: deque[int] = deque()

        def get(node: Node) -> int:
            key = (node.s, node.bounds, node.mode, node.zone)
            j = index.get(key)
            if j is None:
                j = index[key] = len(nodes)
                nodes.append(node)
                work.append(j)
                self._limit(len(nodes))
            return j

        for s in self.cm.initial_states():
            measuring = self.P(s) and not self.Q(s)
            node = g.initial(s, (TICK,) if measuring else (), m_meas if measuring else m_idle)
            if node is not None:
                node.mode = MEASURING if measuring else IDLE
                get(node)
        while work:
            i = work.popleft()
            node = nodes[i]
            s = node.s
            if node.mode == MEASURING:
                z = _sojourn(g, node)
                succ.setdefault(i, [])
                if z is not None:
                    succ[i].append((get(Node(s, node.bounds, z, i, None, SLOW)), None))
            elif node.mode == SLOW:
                succ.setdefault(i, [])
                if g.delays(s) and not any(b is not None and b[1] is not None for b in node.bounds):
                    succ[i].append((i, None))  # no deadline: the sojourn may last forever
            for iid, t in g.enabled(s):
                enters = self.P(t) and not self.P(s)
                q = self.Q(t)
                was = node.mode != IDLE
                mode = MEASURING if (not q and (was or enters)) else IDLE
                nxt = g.post(node, iid, t, extra_reset=(TICK,) if mode == MEASURING else (),
                             extra_free=(TICK,) if mode == IDLE else (), extra_m=m_meas if mode == MEASURING else m_idle)
                if nxt is None:
                    continue
                j = get(Node(t, nxt[0], nxt[1], i, iid, mode))
                if was and mode == MEASURING:
                    succ[i].append((j, iid))
        return _tick_cycle(nodes, succ)


def _sojourn(g: ZoneGraph, node: Node) -> tuple[int, ...] | None:
    """A measuring node's zone after a sojourn of at least one time unit (TICK >= 1), TICK then
    forgotten; None when time cannot pass 1 there."""
    n = g.dim(node.bounds)
    d = list(node.zone)
    if not dbm.constrain(d, n, 0, g.extra_position(node.bounds, TICK), dbm.le(-1)):
        return None
    return g._settle(d, n, node.bounds, [-1, -1], g.delays(node.s))


def _tick_cycle(nodes: list[Node], succ: dict[int, list[tuple[int, int | None]]]) -> tuple[list[State], list[int | None], int] | None:
    """A reachable cycle of the measuring subgraph through a tick edge (Tarjan's SCCs, then a
    path inside the SCC from the tick's target back to its source), as a discrete lasso: the
    states, the instance into each, and the index the loop returns to."""
    comp = _sccs(succ)
    for u in sorted(succ):
        for v, iid in succ[u]:
            if iid is None and comp.get(u) is not None and comp.get(u) == comp.get(v):
                states, iids = _discrete(nodes, _root_path(nodes, u))
                loop = len(states) - 1
                for a, b, e in _path_within(succ, comp, v, u):
                    if e is not None:
                        states.append(nodes[b].s)
                        iids.append(e)
                return states, iids, loop
    return None


def _discrete(nodes: list[Node], path: list[int]) -> tuple[list[State], list[int | None]]:
    """The discrete steps of a node path (ticks, which keep the state, left out)."""
    states, iids = [nodes[path[0]].s], [None]
    for k in path[1:]:
        if nodes[k].iid is not None:
            states.append(nodes[k].s)
            iids.append(nodes[k].iid)
    return states, iids  # type: ignore[return-value]


def _root_path(nodes: list[Node], k: int) -> list[int]:
    out = []
    while k >= 0:
        out.append(k)
        k = nodes[k].parent
    out.reverse()
    return out


def _path_within(succ: dict[int, list[tuple[int, int | None]]], comp: dict[int, int], a: int,
                 b: int) -> list[tuple[int, int, int | None]]:
    """The edges (from, to, instance or None for a tick) of a path a ... b inside one SCC (BFS)."""
    if a == b:
        return []
    prev: dict[int, tuple[int, int | None]] = {a: (a, None)}
    work = deque([a])
    while work:
        u = work.popleft()
        for v, e in succ.get(u, ()):
            if v not in prev and comp.get(v) == comp[a]:
                prev[v] = (u, e)
                if v == b:
                    out = []
                    while v != a:
                        pu, pe = prev[v]
                        out.append((pu, v, pe))
                        v = pu
                    return out[::-1]
                work.append(v)
    raise AssertionError("no path inside a strongly connected component")


def _sccs(succ: dict[int, list[tuple[int, int | None]]]) -> dict[int, int]:
    """Node -> component id (a member of its component), by the liveness pass's Tarjan
    (checker/engines/explicit/liveness.py `sccs`) over the measuring subgraph's edges."""
    edges: defaultdict[int, list[tuple[int, int]]] = defaultdict(list)
    for v, outs in succ.items():
        edges[v] = [(-1 if iid is None else iid, w) for w, iid in outs]
    comp: dict[int, int] = {}
    for members in sccs(SimpleNamespace(edges=edges, parent=()), lambda _w: True, list(succ)):
        for w in members:
            comp[w] = members[-1]
    return comp


def _start_index(m: _Measure, states: list[State], policy: str) -> int:
    """Where the measurement that ends with (or, for a lasso prefix, runs at) the path's last
    state started: the mode logic of `_Measure.explore` replayed along the path."""
    start, measuring = -1, False
    last = len(states) - 1
    for k, s in enumerate(states):
        q = m.Q(s)
        enters = m.P(s) and (k == 0 or not m.P(states[k - 1]))
        if k == last:
            if measuring and q:
                return k if enters and policy == "latest" else start
            if enters and (q or not measuring or policy == "latest"):
                return k
            return start
        if enters and not q and (not measuring or policy == "latest"):
            start = k
        measuring = (measuring or enters) and not q
    return start


def _witness(m: _Measure, nodes: list[Node], end: tuple[int, int, int, bool, int | None], value: int,
             policy: str, how: str) -> tuple[Counterexample, int]:
    """The behaviour of a measurement `end` with the value pinned, and its start step."""
    from gpcheck.checker.engines.timed.timeline import timed_steps

    i, iid, *_ = end
    states, iids = node_path(nodes, i)
    if iid >= 0:
        states.append(m.g.enabled(nodes[i].s)[[x for x, _ in m.g.enabled(nodes[i].s)].index(iid)][1])
        iids.append(iid)
    start = _start_index(m, states, policy)
    steps = timed_steps(m.cm, m.g.bounds_fn, states, iids, (start, len(states) - 1, value, how))
    return Counterexample(steps), start


def _one(cm: CompiledModel, p: ir.Latency, limits: Limits) -> Result:
    from gpcheck.checker.engines.timed.timeline import timed_steps

    m = _Measure(cm, p, limits)
    detail: dict[str, object] = {"min": None, "max": None, "within": p.within}
    k = m.kmax
    while True:  # the min: an answer below the extrapolation constant is exact
        nodes, ends, started = m.explore("latest", k)
        if not started:
            detail["starts"] = 0
            return Result(p.name, KIND, Verdict.PROVED, ENGINE, detail=detail)
        exact = [e for e in ends if e[2] < k or (e[2] == k and not e[3])]
        if exact or not ends:
            break
        k *= 2
        if k > MAX_K:
            raise _Unknown(f"the least latency exceeds {MAX_K}")
    detail["zones"] = len(nodes)
    try:
        if exact:
            lo = min(e[2] for e in exact)
            cex, start = _witness(m, nodes, next(e for e in exact if e[2] == lo), lo, "latest", "min")
            detail.update({"min": lo, "min_counterexample": cex.to_json(), "min_start": start})
        lasso = m.divergent()
        if lasso is not None:
            states, iids, loop = lasso
            pin = (loop, len(states) - 1, 1, "max") if loop < len(states) - 1 else None
            steps = timed_steps(cm, m.g.bounds_fn, states, iids, pin)
            cex = Counterexample(steps, loop=loop)
            detail["unbounded"] = "a time-divergent behaviour avoids the 'to' predicate forever"
            detail["start"] = _start_index(m, states[:loop + 1], "earliest")
            return Result(p.name, KIND, Verdict.VIOLATED, ENGINE, counterexample=cex, detail=detail)
        k = m.kmax
        while True:  # the max: bounded now; an answer up to the extrapolation constant is exact
            nodes, ends, _ = m.explore("earliest", k)
            if all(e[4] is not None and e[4] <= k for e in ends):
                break  # above k an upper bound may come from extrapolated differences: not exact
            k *= 2
            if k > MAX_K:
                raise _Unknown(f"the greatest latency exceeds {MAX_K}")
        if not ends:
            raise _Unknown("no measurement ends, and no behaviour lets time diverge after a start (Zeno behaviours only)")
        hi = max(e[4] for e in ends)  # type: ignore[type-var]
        cex, start = _witness(m, nodes, next(e for e in ends if e[4] == hi), hi, "earliest", "max")  # type: ignore[arg-type]
    except NotABehaviour as why:
        raise _Unknown(f"internal error: a latency witness does not replay ({why})") from None
    except ModelError as err:
        raise _Unknown(f"a modelling error: {err}") from None
    detail.update({"max": hi, "start": start})
    if p.within is not None and hi > p.within:  # type: ignore[operator]
        return Result(p.name, KIND, Verdict.VIOLATED, ENGINE, counterexample=cex, detail=detail)
    return Result(p.name, KIND, Verdict.PROVED, ENGINE, counterexample=cex, detail=detail)

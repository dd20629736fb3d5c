"""A deliberately plain discrete-time interpreter of timed specs (NOTE(timed) in spec/ir.py), written
from the language's text, not from checker/engines/timed/: the oracle the zone engine is differential-tested
against (tests/quality/timed_differential.py).

Time is integer and passes in explicit ticks of 1. A configuration is (state, timers): for each
action instance, None while it is disabled, else (elapsed, L, U) with L and U evaluated when it
became enabled (or last fired and stayed enabled). Moves:
- fire an enabled instance whose elapsed >= L (its timer restarts if it stays enabled, a newly
  enabled one starts at 0, a disabled one is dropped, the others keep theirs);
- tick: allowed when every enabled instance with a deadline has elapsed + 1 <= U; every timer
  advances by 1 (elapsed past L with no deadline is kept at L: it can no longer matter).
Small bounds keep this finite and small. With every timing constraint closed (<=, >=), integer
time reaches the same states and gives the same least and greatest delays as dense time
(Henzinger, Manna, Pnueli, "What good are digital clocks?", 1992), so the answers must agree
with the zone engine's exactly.

Latency (`from P to Q`): a measurement starts at an initial P-state or at a step from a non-P
into a P-state and ends at the first later step into a Q-state (0 when the state is both). The
least is a 0-1 BFS over configurations (ticks cost 1) from each start to a step into Q through
non-Q states; the greatest is unbounded iff a tick lies on a cycle of the configurations
reachable from a start through non-Q states (time diverges away from Q), else a longest path
in the DAG of those configurations' strongly connected components (whose cycles take no time)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Mapping

import networkx as nx

from gpcheck.spec import syntax as S
from gpcheck.spec.parser import parse_spec
from tests.reference.semantics import Evaluator, Model, ModellingError, State, from_json, holds, load, step

Timer = tuple[int, int, int | None] | None
Config = tuple[State, tuple[Timer, ...]]
TICK = -1  # the move that lets one time unit pass


@dataclass
class TimedModel:
    m: Model
    timing: dict[str, Any]  # action name -> S.Timing or None
    instances: list

    def bounds(self, i: int, s: State) -> tuple[int, int | None]:
        a, args = self.instances[i]
        t = self.timing.get(a.name)
        if t is None:
            return 0, None
        env = {name: v for (name, _), v in zip(a.params, args)}
        ev = Evaluator(self.m, s, None)
        lo = ev.eval(t.lower, env)
        hi = None if t.upper is None else ev.eval(t.upper, env)
        if lo < 0 or (hi is not None and hi < lo):
            raise ModellingError(f"bad time bounds {lo}..{hi}")
        return lo, hi

    def enabled(self, s: State) -> dict[int, State]:
        out = {}
        for i, (a, args) in enumerate(self.instances):
            t = step(self.m, a, args, s)
            if t is not None:
                out[i] = t
        return out

    def initial(self) -> list[Config]:
        out = []
        for s in self.m.initial_states():
            en = self.enabled(s)
            out.append((s, tuple((0, *self.bounds(i, s)) if i in en else None for i in range(len(self.instances)))))
        return out

    def moves(self, c: Config) -> list[tuple[int, Config]]:
        """(instance or TICK, next configuration)."""
        s, timers = c
        out = []
        en = self.enabled(s)
        for i, t in en.items():
            tm = timers[i]
            assert tm is not None
            if tm[0] < tm[1]:
                continue
            en_t = self.enabled(t)
            new = []
            for k in range(len(self.instances)):
                if k not in en_t:
                    new.append(None)
                elif k == i or timers[k] is None:
                    new.append((0, *self.bounds(k, t)))
                else:
                    new.append(timers[k])
            out.append((i, (t, tuple(new))))
        if all(tm is None or tm[2] is None or tm[0] + 1 <= tm[2] for tm in timers):
            new = []
            for tm in timers:
                if tm is None:
                    new.append(None)
                else:
                    e, lo, hi = tm
                    new.append((min(e + 1, lo) if hi is None else e + 1, lo, hi))
            out.append((TICK, (s, tuple(new))))
        return out


def load_timed(text: str, consts: Mapping[str, int] | None = None) -> TimedModel:
    m = load(text, consts)
    spec = parse_spec(text, "ref.gpspec")
    timing = {d.name: d.timing for d in spec.decls if isinstance(d, S.ActionDecl)}
    return TimedModel(m, timing, m.instances())


@dataclass
class TimedOutcome:
    configs: int
    invariants: dict[str, bool]  # name -> holds
    deadlock: bool  # a reachable deadlock (not allowed, not terminal)
    latencies: dict[str, tuple[int, int | None, int | None]]  # name -> (starts, min, max); max None: unbounded
    liveness: dict[str, bool] = field(default_factory=dict)  # name -> violated


def explore(tm: TimedModel, max_configs: int = 200_000) -> TimedOutcome:
    """Every reachable configuration (BFS), then the properties."""
    m = tm.m
    seen: dict[Config, None] = {}
    work = deque()
    for c in tm.initial():
        if c not in seen:
            seen[c] = None
            work.append(c)
    edges: dict[Config, list[tuple[int, Config]]] = {}
    while work:
        c = work.popleft()
        edges[c] = tm.moves(c)
        for _, d in edges[c]:
            if d not in seen:
                if len(seen) >= max_configs:
                    raise RuntimeError("too many configurations for the reference")
                seen[d] = None
                work.append(d)
    states = {c[0] for c in seen}
    invs = {name: all(holds(m, e, s) for s in states) for name, e in m.invariants}
    dead = False
    if not m.allow_deadlock:
        for s in states:
            if not tm.enabled(s) and not any(holds(m, e, s) for e in m.terminals):
                dead = True
    lats = {name: _latency(tm, seen, edges, p, q) for name, p, q, _ in m.latencies}
    live = {name: _liveness(tm, seen, edges, kind, p, q) for name, kind, p, q in m.liveness}
    return TimedOutcome(len(seen), invs, dead, lats, live)


def _liveness(tm: TimedModel, seen: dict, edges: dict, kind: str, p: Any, q: Any) -> bool:
    """Whether a time-divergent, weakly fair behaviour violates the property: a strongly connected
    set of not-q configurations that holds a tick (a time unit passes on its loop) and where every
    fair instance is disabled somewhere or taken inside, reachable through not-q configurations
    from a start (an initial configuration for `eventually`, any for `always eventually`, a
    p-configuration for `leads_to`)."""
    m = tm.m
    bad = {c for c in seen if not holds(m, q, c[0])}
    graph = nx.DiGraph()
    graph.add_nodes_from(bad)
    labels: dict[tuple, set[int]] = {}
    for c in bad:
        for i, d in edges[c]:
            if d in bad:
                graph.add_edge(c, d)
                labels.setdefault((c, d), set()).add(i)
    fair = [i for i, (a, _) in enumerate(tm.instances) if a.fair]
    accepting: set = set()
    for comp in nx.strongly_connected_components(graph):
        inside = [labels[(c, d)] for c in comp for _, d in edges[c] if (c, d) in labels and d in comp]
        taken = set().union(*inside) if inside else set()
        if TICK not in taken:
            continue  # no loop, or only loops that take no time (Zeno)
        if all(i in taken or any(c[1][i] is None for c in comp) for i in fair):
            accepting |= comp
    if kind == "eventually":
        starts = [c for c in tm.initial() if c in bad]
    elif kind == "always eventually":
        starts = list(bad)
    else:
        starts = [c for c in bad if holds(m, p, c[0])]
    reach = set(starts)
    work = deque(starts)
    while work:
        c = work.popleft()
        if c in accepting:
            return True
        for d in graph.successors(c):
            if d not in reach:
                reach.add(d)
                work.append(d)
    return False


def _latency(tm: TimedModel, seen: dict, edges: dict, p: Any, q: Any) -> tuple[int, int | None, int | None]:
    m = tm.m
    P = {s: holds(m, p, s) for s in {c[0] for c in seen}}
    Q = {s: holds(m, q, s) for s in P}
    starts: set[Config] = set()
    zero = False
    for c in tm.initial():
        if P[c[0]]:
            (starts.add(c) if not Q[c[0]] else None)
            zero = zero or Q[c[0]]
    for c, outs in edges.items():
        for i, d in outs:
            if i != TICK and P[d[0]] and not P[c[0]]:
                if Q[d[0]]:
                    zero = True
                else:
                    starts.add(d)
    count = len(starts) + (1 if zero else 0)
    if not count:
        return 0, None, None
    # the region: non-Q configurations reachable from a start through non-Q configurations
    region: set[Config] = set(starts)
    work = deque(starts)
    while work:
        c = work.popleft()
        for _, d in edges[c]:
            if not Q[d[0]] and d not in region:
                region.add(d)
                work.append(d)
    # least: 0-1 BFS
    dist = {c: 0 for c in starts}
    dq = deque(starts)
    best = 0 if zero else None
    while dq:
        c = dq.popleft()
        for i, d in edges[c]:
            w = 1 if i == TICK else 0
            if Q[d[0]]:
                if best is None or dist[c] < best:
                    best = dist[c]
                continue
            if d not in dist or dist[c] + w < dist[d]:
                dist[d] = dist[c] + w
                (dq.append if w else dq.appendleft)(d)
    # greatest
    g = nx.DiGraph()
    g.add_nodes_from(region)
    for c in region:
        for i, d in edges[c]:
            if d in region:
                w = 1 if i == TICK else 0
                if g.has_edge(c, d):
                    g[c][d]["w"] = max(g[c][d]["w"], w)
                else:
                    g.add_edge(c, d, w=w)
    for comp in nx.strongly_connected_components(g):
        if any(g[c][d]["w"] for c in comp for d in g.successors(c) if d in comp):
            return count, best, None
    cond = nx.condensation(g)
    member = cond.graph["mapping"]
    longest: dict[int, int | None] = {}  # component -> the longest time to a step into Q, None: none
    for comp in reversed(list(nx.topological_sort(cond))):
        val = None
        for c in cond.nodes[comp]["members"]:
            for i, d in edges[c]:
                w = 1 if i == TICK else 0
                if Q[d[0]]:
                    val = max(val if val is not None else 0, 0)
                elif d in region and member[d] != comp:  # edges inside a component take no time
                    sub = longest[member[d]]
                    if sub is not None:
                        val = max(val if val is not None else 0, w + sub)
        longest[comp] = val
    hi = max((longest[member[c]] for c in starts if longest[member[c]] is not None), default=None)
    if zero:
        hi = max(hi or 0, 0)
    if hi is None:
        return count, best, -1  # every behaviour from a start is stuck away from Q without time passing
    return count, best, hi


def replay_timed(tm: TimedModel, cex: Mapping[str, Any]) -> tuple[list[State], list[int]] | str:
    """Replay a timed counterexample (JSON steps with `time`) in discrete time: between steps the
    time difference passes in ticks, each allowed; each step is an enabled instance whose timer
    has reached L, giving the state shown. The states and times, or why it is not a behaviour."""
    steps = cex["steps"]
    m = tm.m
    try:
        states = [from_json(m, st["state"]) for st in steps]
    except (KeyError, ValueError, TypeError) as err:
        return f"malformed state: {err}"
    times = [st.get("time") for st in steps]
    if any(t is None for t in times) or times[0] != 0:
        return "a step without a time stamp (or step 0 not at 0)"
    c = next((c for c in tm.initial() if c[0] == states[0]), None)
    if c is None:
        return "step 0 is not an initial state"
    for n in range(1, len(steps)):
        gap = times[n] - times[n - 1]
        if gap < 0:
            return f"step {n} goes back in time"
        for _ in range(gap):
            nxt = [d for i, d in tm.moves(c) if i == TICK]
            if not nxt:
                return f"time cannot pass before step {n} (a deadline)"
            c = nxt[0]
        want = steps[n]
        match = [d for i, d in tm.moves(c) if i != TICK and tm.instances[i][0].name == want["action"]
                 and {p: v for (p, _), v in zip(tm.instances[i][0].params, tm.instances[i][1])} == (want.get("args") or {})
                 and d[0] == states[n]]
        if not match:
            return f"step {n} ({want['action']} at {times[n]}) cannot fire then or gives another state"
        c = match[0]
    return states, times  # type: ignore[return-value]

"""The reference's own exhaustive search: reachable states, shortest violations, deadlocks,
modelling errors and weak-fairness liveness, over `tests.reference.semantics`.

What is checked where (the README's semantics, stated once here):
- every reached state (inside a constraint or not) has every invariant, terminal, constraint and
  liveness predicate evaluated in full; one that fails to evaluate is a `range` violation, and
  counts as false for its own property (an invariant is violated there, a constraint or a
  terminal predicate does not hold, p or q of a liveness property does not hold);
- only states inside every constraint are expanded; there each action instance is run (an
  instance that hits a modelling error is a `range` violation in that state), and each
  transition property is evaluated on each step (false: a violation; failing to evaluate: a
  `range` violation and a violation of the property, one step later);
- a state inside the constraints where no instance is enabled is a deadlock unless `allow
  deadlock` or a terminal predicate holds there. An instance that hits a modelling error is
  enabled (every `require` on its executed path held: the README's definition), so a state
  where one does is not a deadlock (it is a `range` violation).
- a liveness property is decided only when no fair instance hits a modelling error in a
  reachable state (weak fairness of an instance that is enabled but cannot be taken is left
  open by the description); otherwise its outcome is None.
Lengths are in steps: a violation found in a state at BFS depth d has length d.

Liveness (weak fairness per action instance, stuttering allowed): a property is violated iff some
reachable fair strongly connected set of "bad" states exists, as `_fair_component` defines."""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field

import networkx as nx

from tests.reference.semantics import Model, ModellingError, State, holds, step


@dataclass
class Outcome:
    """What the reference says about one property: `violated` and, if so, the length of a
    shortest counterexample (None for liveness, whose lassos are not measured)."""

    violated: bool
    shortest: int | None = None
    lasso_within: int | None = None  # liveness: a violating lasso exists with at most this last index


@dataclass
class Exploration:
    states: list[State]
    depth: dict[State, int]
    parent: dict[State, tuple[State, int] | None]  # (predecessor, instance number)
    edges: dict[State, list[tuple[int, State]]]  # (instance number, successor), inside constraints only
    errors: dict[State, list[int]]  # instances that hit a modelling error there
    outside: set[State]  # reached states outside some constraint (not expanded)
    outcomes: dict[str, Outcome | None] = field(default_factory=dict)  # None: left undecided
    constrained: bool = False  # some reached state lies outside a constraint

    @property
    def diameter(self) -> int:
        return max(self.depth.values(), default=0)


def explore(m: Model, max_states: int = 50_000) -> Exploration:
    """BFS over every reachable state; raises RuntimeError past `max_states`."""
    instances = m.instances()
    inits = m.initial_states()
    ex = Exploration([], {}, {}, {}, {}, set())
    queue: deque[State] = deque()
    for s in inits:
        if s not in ex.depth:
            ex.depth[s], ex.parent[s] = 0, None
            ex.states.append(s)
            queue.append(s)
    shortest: dict[str, int] = {}

    def found(name: str, length: int) -> None:
        if name not in shortest or length < shortest[name]:
            shortest[name] = length

    while queue:
        s = queue.popleft()
        d = ex.depth[s]
        for name, e in m.invariants:
            try:
                if not holds(m, e, s):
                    found(name, d)
            except ModellingError:
                found("range", d)
                found(name, d)
        for e in m.terminals + [p for _, _, p, q in m.liveness if p is not None] + [q for *_, q in m.liveness]:
            try:
                holds(m, e, s)
            except ModellingError:
                found("range", d)
        inside = True
        for _, e in m.constraints:
            try:
                inside = holds(m, e, s) and inside
            except ModellingError:
                found("range", d)
                inside = False
        if not inside:
            ex.outside.add(s)
            continue
        ex.edges[s], ex.errors[s] = [], []
        for i, (a, args) in enumerate(instances):
            try:
                t = step(m, a, args, s)
            except ModellingError:
                ex.errors[s].append(i)
                found("range", d)
                continue
            if t is None:
                continue
            ex.edges[s].append((i, t))
            for name, e in m.transitions:
                try:
                    if not holds(m, e, s, t):
                        found(name, d + 1)
                except ModellingError:
                    found("range", d + 1)
                    found(name, d + 1)
            if t not in ex.depth:
                if len(ex.depth) >= max_states:
                    raise RuntimeError(f"more than {max_states} states")
                ex.depth[t], ex.parent[t] = d + 1, (s, i)
                ex.states.append(t)
                queue.append(t)
        if not ex.edges[s] and not ex.errors[s] and not m.allow_deadlock and not _terminal(m, s):
            found("deadlock", d)
    ex.constrained = bool(ex.outside)
    for name in [n for n, _ in m.invariants] + [n for n, _ in m.transitions] + ["deadlock", "range"]:
        ex.outcomes[name] = Outcome(name in shortest, shortest.get(name))
    fair_errors = any(instances[i][0].fair for errs in ex.errors.values() for i in errs)
    for name, kind, p, q in m.liveness:
        ex.outcomes[name] = None if fair_errors else _liveness(m, ex, instances, kind, p, q)
    return ex


def _terminal(m: Model, s: State) -> bool:
    return any(_truth(m, e, s) for e in m.terminals)


def _truth(m: Model, e: object, s: State) -> bool:
    """A predicate's value, false where it fails to evaluate (that is reported as `range`)."""
    try:
        return holds(m, e, s)
    except ModellingError:
        return False


# --------------------------------------------------------------------------- liveness
def changing_successor(m: Model, instances: list, i: int, s: State) -> State | None:
    """The successor of instance `i` in `s` if it is enabled and changes the state (the
    TLA+ reading of "enabled" for weak fairness); None otherwise."""
    a, args = instances[i]
    try:
        t = step(m, a, args, s)
    except ModellingError:
        return None
    return t if t is not None and t != s else None


def _liveness(m: Model, ex: Exploration, instances: list, kind: str, p: object, q: object) -> Outcome:
    """Whether a fair behaviour violates the property: some strongly connected set of states
    where `q` is false (entered as the kind requires) is fair. A violation comes with
    `lasso_within`, an upper bound on the last index of a shortest violating lasso."""
    bad = {s for s in ex.states if not _truth(m, q, s)}
    if kind == "eventually":  # from an initial state, through not-q states only
        starts = {s: 0 for s in ex.states if ex.parent[s] is None and s in bad}
    elif kind == "always eventually":  # any reachable not-q state, by a shortest path
        starts = {s: ex.depth[s] for s in bad}
    else:  # p leads_to q: from a reachable p-and-not-q state, staying in not-q
        starts = {s: ex.depth[s] for s in bad if _truth(m, p, s)}
    dist = _distances_within(ex, starts, bad)
    graph = nx.DiGraph()
    graph.add_nodes_from(dist)
    for s in dist:
        for _, t in ex.edges.get(s, []):
            if t in dist:
                graph.add_edge(s, t)
    n_fair = sum(1 for a, _ in instances if a.fair)
    bounds = []
    for comp in nx.strongly_connected_components(graph):
        if _fair_component(m, ex, instances, comp):
            prefix = min(dist[s] for s in comp)
            if len(comp) == 1:
                # a single fair state stutters; an engine that reads "enabled" as "its requires
                # hold" (not TLA+'s "enabled and changing the state") takes each fair instance
                # that steps back to the same state once instead: the same verdict, a longer loop
                (s,) = comp
                bounds.append(prefix + sum(1 for i, t in ex.edges.get(s, []) if t == s and instances[i][0].fair))
            else:
                # a loop through one waypoint per fair instance (a state disabling it or a step
                # taking it), each within |comp| steps
                bounds.append(prefix + (n_fair + 1) * len(comp) + n_fair)
    return Outcome(bool(bounds), None, min(bounds) if bounds else None)


def _distances_within(ex: Exploration, starts: dict[State, int], region: set[State]) -> dict[State, int]:
    """Shortest distances inside `region` from sources with initial costs (unit steps)."""
    dist = dict(starts)
    heap = [(d, i, s) for i, (s, d) in enumerate(starts.items())]
    heapq.heapify(heap)
    counter = len(heap)
    while heap:
        d, _, s = heapq.heappop(heap)
        if d > dist[s]:
            continue
        for _, t in ex.edges.get(s, []):
            if t in region and d + 1 < dist.get(t, d + 2):
                dist[t] = d + 1
                counter += 1
                heapq.heappush(heap, (d + 1, counter, t))
    return dist


def _fair_component(m: Model, ex: Exploration, instances: list, comp: set[State]) -> bool:
    """A strongly connected set (with stuttering every single state is one) carries a fair
    behaviour iff every fair instance is, somewhere in it, disabled or taken to a different
    state inside it: walk every edge of the set forever."""
    for i, (a, _) in enumerate(instances):
        if not a.fair:
            continue
        ok = False
        for s in comp:
            t = changing_successor(m, instances, i, s)
            if t is None or t in comp:
                ok = True
                break
        if not ok:
            return False
    return True

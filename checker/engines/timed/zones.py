"""The zone graph of a timed spec and its safety search (NOTE(timed) in spec/ir.py).

A symbolic state is (discrete state, the frozen bounds of each enabled timed instance, zone).
Each timed action instance has a clock, reset when the instance becomes enabled and when it
fires (and stays enabled), freed while it is disabled or has bounds 0.. (such a clock is never
compared with anything). The zone of a symbolic state is *delay-closed*: every valuation reachable
by letting time pass in that discrete state, cut by the invariants x_i <= U_i of the enabled
instances with a deadline. A step of instance a intersects the zone with x_a >= L_a, applies the
step, resets/frees clocks, lets time pass, applies the new invariants and extrapolates with
Extra_M, each clock's constant being the larger of its own frozen bounds (the only constants it
is compared with until its next reset): so a bound of 10^7 costs no more than a bound of 10, and
the zone graph is finite. Symbolic states of one discrete state and bounds are kept in a list and
a new zone included in a stored one is dropped (inclusion checking).

Callers may add measuring clocks (`extra` > 0, after the instance clocks) that the graph only
resets or frees on request and extrapolates with the constants they pass (checker/engines/timed/latency.py).

Safety (`search`): an invariant, transition property, deadlock or modelling error is violated
iff a symbolic state (or step) of the zone graph shows it: Extra_M preserves reachability of
discrete states and steps exactly, in dense time as in integer time (docs/timed.md). A deadlock
is a reachable discrete state with no enabled instance and no terminal predicate: no timelock
can occur besides (every enabled instance can fire at its deadline, since L <= U)."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Sequence

from gpcheck.gpmodel import CompiledModel, ModelError, State, truth
from gpcheck.checker.core import budget
from gpcheck.checker.engines.explicit.explicit import Limits
from gpcheck.checker.engines.timed import dbm
from gpcheck.checker.engines.timed.bounds import Bounds, compile_bounds, timed_instances

FrozenBounds = tuple["Bounds | None", ...]  # per timed instance; None: disabled


@dataclass
class Node:
    """A symbolic state, with the step that first reached it (parent -1: initial)."""

    s: State
    bounds: FrozenBounds
    zone: tuple[int, ...]
    parent: int
    iid: int | None
    mode: int = 0  # a measuring search's phase (checker/engines/timed/latency.py); 0 in the safety search


def _active(b: Bounds | None) -> bool:
    return b is not None and (b[0] > 0 or b[1] is not None)


class ZoneGraph:
    """The successor relation of the zone graph (module docstring)."""

    def __init__(self, cm: CompiledModel, extra: int = 0):
        self.cm = cm
        self.timed = timed_instances(cm)
        self.clock_of = {iid: 1 + k for k, iid in enumerate(self.timed)}
        self.extra = extra
        self.n = 1 + len(self.timed) + extra
        self.bounds_fn = compile_bounds(cm)
        self._enabled: dict[State, list[tuple[int, State]]] = {}

    def enabled(self, s: State) -> list[tuple[int, State]]:
        """The instances enabled in `s` with their next states (raises ModelError)."""
        out = self._enabled.get(s)
        if out is None:
            out = self._enabled[s] = self.cm.successors(s)
        return out

    def _settle(self, d: list[int], bounds: FrozenBounds, extra_m: Sequence[int]) -> tuple[int, ...] | None:
        """Let time pass, apply the invariants, extrapolate."""
        n = self.n
        dbm.up(d, n)
        m = [0]
        for k, b in enumerate(bounds):
            if not _active(b):
                m.append(-1)
                continue
            assert b is not None
            lo, hi = b
            m.append(lo if hi is None else max(lo, hi))
            if hi is not None and not dbm.constrain(d, n, 1 + k, 0, dbm.le(hi)):
                return None
        m.extend(extra_m)
        dbm.extrapolate(d, n, m)
        for c in range(1, n):
            if m[c] < 0:  # compared with nothing: freed, so that equal zones are equal tuples
                dbm.free(d, n, c)
        return tuple(d)

    def initial(self, s: State, extra_reset: Sequence[int] = (), extra_m: Sequence[int] = ()) -> Node | None:
        """The initial symbolic state of `s` (all clocks 0, then time passes)."""
        n = self.n
        ids = {i for i, _ in self.enabled(s)}
        bounds = tuple(self.bounds_fn(i, s) if i in ids else None for i in self.timed)
        d = dbm.zero(n)
        for k, b in enumerate(bounds):
            if not _active(b):
                dbm.free(d, n, 1 + k)
        for x in range(self.extra):
            if x not in extra_reset:
                dbm.free(d, n, 1 + len(self.timed) + x)
        z = self._settle(d, bounds, extra_m or [-1] * self.extra)
        return None if z is None else Node(s, bounds, z, -1, None)

    def post(self, node: Node, iid: int, t: State, extra_reset: Sequence[int] = (),
             extra_free: Sequence[int] = (), extra_m: Sequence[int] = (),
             guard: tuple[int, int] | None = None) -> tuple[FrozenBounds, tuple[int, ...]] | None:
        """The symbolic successor by instance `iid` (enabled in node.s, stepping to `t`), or None
        when its lower bound cannot be met in the zone. `guard` = (extra clock, c): also require
        that measuring clock >= c (a tick). Raises ModelError (a step from `t` or a bound fails)."""
        n = self.n
        d = list(node.zone)
        c = self.clock_of.get(iid)
        if c is not None:
            b = node.bounds[c - 1]
            assert b is not None
            if b[0] and not dbm.constrain(d, n, 0, c, dbm.le(-b[0])):
                return None
        if guard is not None:
            x, lo = guard
            if not dbm.constrain(d, n, 0, 1 + len(self.timed) + x, dbm.le(-lo)):
                return None
        ids = {i for i, _ in self.enabled(t)}
        new: list[Bounds | None] = []
        for k, i in enumerate(self.timed):
            old = node.bounds[k]
            if i not in ids:
                new.append(None)
                dbm.free(d, n, 1 + k)
                continue
            if i == iid or old is None:
                b = self.bounds_fn(i, t)
                new.append(b)
                if _active(b):
                    dbm.reset(d, n, 1 + k)
                else:
                    dbm.free(d, n, 1 + k)
            else:
                new.append(old)
                if not _active(old):
                    dbm.free(d, n, 1 + k)
        base = 1 + len(self.timed)
        for x in extra_reset:
            dbm.reset(d, n, base + x)
        for x in extra_free:
            dbm.free(d, n, base + x)
        bounds = tuple(new)
        z = self._settle(d, bounds, extra_m or [-1] * self.extra)
        return None if z is None else (bounds, z)

    def fire_zone(self, node: Node, iid: int) -> list[int] | None:
        """The valuations of node's zone where `iid` can fire (its lower bound met), or None."""
        d = list(node.zone)
        c = self.clock_of.get(iid)
        if c is not None:
            b = node.bounds[c - 1]
            assert b is not None
            if b[0] and not dbm.constrain(d, self.n, 0, c, dbm.le(-b[0])):
                return None
        return d

    def tick(self, node: Node, x: int, extra_m: Sequence[int], unit: int = 1) -> tuple[int, ...] | None:
        """Measuring clock x >= unit, then reset it and let time pass: `unit` time went by in
        node.s (Tripakis's construction for time-divergent cycles)."""
        n = self.n
        d = list(node.zone)
        c = 1 + len(self.timed) + x
        if not dbm.constrain(d, n, 0, c, dbm.le(-unit)):
            return None
        dbm.reset(d, n, c)
        return self._settle(d, node.bounds, extra_m)


class Passed:
    """The symbolic states found, by (discrete state, bounds, mode), with inclusion checking."""

    def __init__(self) -> None:
        self.zones: dict[tuple[State, FrozenBounds, int], list[tuple[tuple[int, ...], int]]] = {}
        self.count = 0
        self.covered: set[int] = set()  # nodes whose zone a later one includes: not expanded

    def add(self, s: State, bounds: FrozenBounds, mode: int, zone: tuple[int, ...], index: int) -> bool:
        """Store the zone unless a stored one includes it; False when it was included. Stored
        zones that the new one includes are dropped (and their nodes marked covered)."""
        key = (s, bounds, mode)
        stored = self.zones.setdefault(key, [])
        for z, _ in stored:
            if dbm.includes(z, zone):
                return False
        kept = []
        for z, k in stored:
            if dbm.includes(zone, z):
                self.covered.add(k)
            else:
                kept.append((z, k))
        kept.append((zone, index))
        self.zones[key] = kept
        self.count += 1
        return True

    def discrete(self) -> int:
        return len({k[0] for k in self.zones})


@dataclass
class SafetySearch:
    """What the safety search established (NOTE(honest-verdicts) as explicit.Search)."""

    nodes: list[Node]
    complete: bool = False
    pruned: bool = False
    stop_reason: str | None = None
    depth: int = 0
    discrete: int = 0  # distinct discrete states reached
    fired: dict[int, int] = field(default_factory=dict)
    invariant_cex: dict[int, int] = field(default_factory=dict)  # invariant -> node
    transition_cex: dict[int, tuple[int, int, State]] = field(default_factory=dict)  # -> (node, iid, t)
    deadlock: int | None = None
    fault: tuple[ModelError, int, tuple[int, State] | None] | None = None  # error, node, step from it


def search(g: ZoneGraph, wanted: set[str], limits: Limits = Limits()) -> SafetySearch:
    """BFS over the zone graph: every safety property, deadlock and modelling error (the first
    stops the search, as in the explicit engine)."""
    cm = g.cm
    model = cm.model
    out = SafetySearch([])
    passed = Passed()
    seen_states: set[State] = set()
    depth_of: list[int] = []
    work: deque[int] = deque()
    started = time.monotonic()

    def push(node: Node, depth: int) -> None:
        if passed.add(node.s, node.bounds, node.mode, node.zone, len(out.nodes)):
            out.nodes.append(node)
            depth_of.append(depth)
            work.append(len(out.nodes) - 1)

    for s in cm.initial_states():
        try:
            node = g.initial(s)
        except ModelError as e:
            out.nodes.append(Node(s, (), (), -1, None))
            out.fault = (e, 0, None)
            return out
        if node is not None:
            push(node, 0)
    while work:
        k = work.popleft()
        if len(out.nodes) & 0xFF == 0:
            why = budget.stopped()
            if why is None and limits.timeout is not None and time.monotonic() - started > limits.timeout:
                why = f"timeout after {limits.timeout:g} s"
            if why is not None:
                out.stop_reason = why
                return _finish(out, passed, depth_of)
        if limits.max_states is not None and len(out.nodes) > limits.max_states:
            out.stop_reason = f"state limit reached ({limits.max_states} zones)"
            return _finish(out, passed, depth_of)
        if k in passed.covered:
            continue  # a larger zone of the same state is queued: its successors include these
        node = out.nodes[k]
        s = node.s
        if s not in seen_states:
            seen_states.add(s)
            err = cm.predicate_error(s)
            if err is not None and "range" in wanted:
                out.fault = (err, k, None)
                return _finish(out, passed, depth_of)
            for i, (inv, fn) in enumerate(cm.invariants):
                if i not in out.invariant_cex and not truth(fn, s):
                    out.invariant_cex[i] = k
            if not cm.in_constraints(s):
                out.pruned = True
                continue
        elif not cm.in_constraints(s):
            continue
        try:
            steps = g.enabled(s)
        except ModelError as e:
            out.fault = (e, k, None)
            return _finish(out, passed, depth_of)
        if not steps:
            if out.deadlock is None and not model.allow_deadlock and not cm.is_terminal(s):
                out.deadlock = k
            continue
        for iid, t in steps:
            try:
                nxt = g.post(node, iid, t)
            except ModelError as e:
                out.fault = (e, k, (iid, t))
                return _finish(out, passed, depth_of)
            if nxt is None:
                continue
            out.fired[iid] = out.fired.get(iid, 0) + 1
            for i, (tp, fn) in enumerate(cm.transitions):
                if i not in out.transition_cex and not truth(fn, s, t):
                    out.transition_cex[i] = (k, iid, t)
            push(Node(t, nxt[0], nxt[1], k, iid), depth_of[k] + 1)
    out.complete = True
    return _finish(out, passed, depth_of)


def _finish(out: SafetySearch, passed: Passed, depth_of: list[int]) -> SafetySearch:
    out.discrete = passed.discrete()
    out.depth = max(depth_of, default=0)
    return out


def node_path(nodes: Sequence[Node], k: int) -> tuple[list[State], list[int | None]]:
    """The discrete path to node k: its states and the instance into each (None first)."""
    states: list[State] = []
    iids: list[int | None] = []
    while k >= 0:
        states.append(nodes[k].s)
        iids.append(nodes[k].iid)
        k = nodes[k].parent
    states.reverse()
    iids.reverse()
    return states, iids

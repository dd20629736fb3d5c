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
from operator import itemgetter
from typing import Sequence

from gpcheck.gpmodel import CompiledModel, ModelError, State, truth
from gpcheck.checker.core import budget
from gpcheck.checker.engines.explicit.explicit import Limits
from gpcheck.checker.engines.timed import dbm
from gpcheck.checker.engines.timed.bounds import Bounds, compile_bounds, timed_instances

FrozenBounds = tuple["Bounds | None", ...]  # per timed instance; None: disabled
SETTLE_MEMO = 1 << 17  # settled zones remembered (NOTE(settle-memo)); the memo restarts when full


@dataclass
class Node:
    """A symbolic state, with the step that first reached it (parent -1: initial)."""

    s: State
    bounds: FrozenBounds
    zone: tuple[int, ...]
    parent: int
    iid: int | None
    mode: int = 0  # a measuring search's phase (checker/engines/timed/latency.py); 0 in the safety search


def _static_zero(t: object) -> bool:
    """A `time` clause that is 0..0 whatever the state: `urgent`, or `time 0` with a literal."""
    from gpcheck.spec import ir

    if t is None:
        return False
    if getattr(t, "urgent", False):
        return True
    lo, hi = t.lower, t.upper  # type: ignore[attr-defined]
    return isinstance(lo, ir.Lit) and lo.value == 0 and isinstance(hi, ir.Lit) and hi.value == 0


def _active(b: Bounds | None) -> bool:
    return b is not None and (b[0] > 0 or b[1] is not None)


class ZoneGraph:
    """The successor relation of the zone graph (module docstring)."""

    def __init__(self, cm: CompiledModel, extra: int = 0):
        self.cm = cm
        # NOTE(urgent-clockless): an instance of an action that is `urgent` (or `time 0`) needs no
        # clock: while one is enabled no time passes at all, so its clock would always read 0. Its
        # states are settled without the time-passing step instead; the DBMs lose a dimension.
        self.urgent = frozenset(iid for iid in timed_instances(cm) if _static_zero(cm.instances[iid].action.time))
        self.timed = [iid for iid in timed_instances(cm) if iid not in self.urgent]
        self.clock_of = {iid: 1 + k for k, iid in enumerate(self.timed)}
        self.extra = extra
        self.bounds_fn = compile_bounds(cm)
        self._enabled: dict[State, list[tuple[int, State]]] = {}
        self._delays: dict[State, bool] = {}
        self._layouts: dict[FrozenBounds, tuple[int, dict[int, int]]] = {}
        self._settled: dict[object, tuple[int, ...] | None] = {}
        # NOTE(step-plans): what a step does to the clocks is read from tables made once: per
        # target state its enabled timed instances, per DBM layout the gather of the successor's
        # entries, per bounds the extrapolation constants and invariants, per (bounds, instance)
        # its lower bound's constraint
        self._fires: dict[tuple[FrozenBounds, int], tuple[int, int | None, int]] = {}
        self._targets: dict[State, tuple[list[tuple[int, int]], bool, dict[int, Bounds]]] = {}
        self._gathers: dict[tuple[int, tuple[int, ...]], itemgetter] = {}  # type: ignore[type-arg]
        self._invariants: dict[FrozenBounds, tuple[list[int], list[tuple[int, int]]]] = {}

    def enabled(self, s: State) -> list[tuple[int, State]]:
        """The instances enabled in `s` with their next states (raises ModelError)."""
        out = self._enabled.get(s)
        if out is None:
            out = self._enabled[s] = self.cm.successors(s)
        return out

    def delays(self, s: State) -> bool:
        """Whether time may pass in `s`: no urgent instance is enabled there (NOTE(urgent-clockless))."""
        v = self._delays.get(s)
        if v is None:
            v = self._delays[s] = not self.urgent or all(i not in self.urgent for i, _ in self.enabled(s))
        return v

    def _layout(self, bounds: FrozenBounds) -> tuple[int, dict[int, int]]:
        """(DBM dimension, timed index -> DBM row) of the symbolic states with these bounds."""
        out = self._layouts.get(bounds)
        if out is None:
            rows: dict[int, int] = {}
            for k, b in enumerate(bounds):
                if _active(b):
                    rows[k] = 1 + len(rows)
            out = self._layouts[bounds] = (1 + len(rows) + self.extra, rows)
        return out

    def dim(self, bounds: FrozenBounds) -> int:
        """The DBM dimension of a symbolic state with these bounds (NOTE(compact-zones))."""
        return self._layout(bounds)[0]

    def position(self, bounds: FrozenBounds, iid: int) -> int | None:
        """The DBM row of instance iid's clock under these bounds, None when it has none."""
        k = self.clock_of.get(iid)
        return None if k is None else self._layout(bounds)[1].get(k - 1)

    def extra_position(self, bounds: FrozenBounds, x: int) -> int:
        """The DBM row of measuring clock x under these bounds."""
        return self.dim(bounds) - self.extra + x

    def _settle(self, d: list[int], n: int, bounds: FrozenBounds, extra_m: Sequence[int],
                delay: bool = True) -> tuple[int, ...] | None:
        """Let time pass (unless an urgent instance is enabled), apply the invariants, extrapolate.
        Memoized (NOTE(settle-memo)): different predecessors often project to the same DBM, and
        the closure inside the extrapolation is the engine's costliest operation."""
        key = (tuple(d), bounds, tuple(extra_m), delay)
        memo = self._settled
        z = memo.get(key, memo)
        if z is not memo:
            return z  # type: ignore[return-value]
        if len(memo) >= SETTLE_MEMO:
            memo.clear()  # bounded memory: start afresh
        z = memo[key] = self._settle_new(d, n, bounds, extra_m, delay)
        return z

    def _settle_new(self, d: list[int], n: int, bounds: FrozenBounds, extra_m: Sequence[int],
                    delay: bool) -> tuple[int, ...] | None:
        if delay:
            dbm.up(d, n)
        inv = self._invariants.get(bounds)
        if inv is None:
            inv = self._invariants[bounds] = self._invariant_plan(bounds)
        m0, deadlines = inv
        for c, raw in deadlines:
            if not dbm.constrain(d, n, c, 0, raw):
                return None
        m = m0 + list(extra_m)
        dbm.extrapolate(d, n, m)
        for c in range(n - self.extra, n):
            if m[c] < 0:  # compared with nothing: freed, so that equal zones are equal tuples
                dbm.free(d, n, c)
        return tuple(d)

    @staticmethod
    def _invariant_plan(bounds: FrozenBounds) -> tuple[list[int], list[tuple[int, int]]]:
        """Each active clock's extrapolation constant (the reference clock's 0 first), and the
        invariants x_c <= U of those with a deadline, in clock order."""
        m = [0]
        deadlines: list[tuple[int, int]] = []
        for b in bounds:
            if not _active(b):
                continue
            assert b is not None
            lo, hi = b
            m.append(lo if hi is None else max(lo, hi))
            if hi is not None:
                deadlines.append((len(m) - 1, dbm.le(hi)))
        return m, deadlines

    def initial(self, s: State, extra_reset: Sequence[int] = (), extra_m: Sequence[int] = ()) -> Node | None:
        """The initial symbolic state of `s` (all clocks 0, then time passes)."""
        ids = {i for i, _ in self.enabled(s)}
        bounds = tuple(self.bounds_fn(i, s) if i in ids else None for i in self.timed)
        n = self.dim(bounds)
        d = dbm.zero(n)
        for x in range(self.extra):
            if x not in extra_reset:
                dbm.free(d, n, n - self.extra + x)
        z = self._settle(d, n, bounds, extra_m or [-1] * self.extra, self.delays(s))
        return None if z is None else Node(s, bounds, z, -1, None)

    def post(self, node: Node, iid: int, t: State, extra_reset: Sequence[int] = (),
             extra_free: Sequence[int] = (), extra_m: Sequence[int] = (),
             guard: tuple[int, int] | None = None,
             fired: Sequence[int] | None = None) -> tuple[FrozenBounds, tuple[int, ...]] | None:
        """The symbolic successor by instance `iid` (enabled in node.s, stepping to `t`), or None
        when its lower bound cannot be met in the zone. `guard` = (extra clock, c): also require
        that measuring clock >= c (a tick). `fired`: fired(node, iid) where the caller has it
        already (not None; not changed). Raises ModelError (a step from `t` or a bound fails).

        NOTE(compact-zones): a zone has rows only for the clocks of the instances active under its
        bounds (enabled, with a lower bound above 0 or a deadline), in instance order, then the
        measuring clocks. The successor's DBM is built by projection: a kept clock copies its row
        and column, a reset clock copies the reference clock's (x := 0), a freed one is dropped;
        projections and resets of a canonical DBM are canonical."""
        d = self.fired(node, iid) if fired is None else fired
        if d is None:
            return None
        if guard is not None:
            n = self.dim(node.bounds)
            x, lo = guard
            d = list(d)
            if not dbm.constrain(d, n, 0, n - self.extra + x, dbm.le(-lo)):
                return None
        old_bounds = node.bounds
        n, rows_old = self._layout(old_bounds)
        base_old = n - self.extra
        enabled_timed, delay, fresh = self._target(t)
        new: list[Bounds | None] = [None] * len(self.timed)
        src: list[int] = [0]  # the old row each new row copies (0: the reference clock, a reset)
        for k, i in enabled_timed:
            old = old_bounds[k]
            if i == iid or old is None:
                b = fresh.get(i)
                if b is None:
                    b = fresh[i] = self.bounds_fn(i, t)
                new[k] = b
                if b[0] > 0 or b[1] is not None:  # _active
                    src.append(0)
            else:
                new[k] = old
                if k in rows_old:
                    src.append(rows_old[k])
        freed: list[int] = []
        for x in range(self.extra):
            if x in extra_reset:
                src.append(0)
            else:
                src.append(base_old + x)
                if x in extra_free:
                    freed.append(len(src) - 1)
        n2 = len(src)
        bounds = tuple(new)
        if n2 == 1:  # no clock at all: the zone is the point 0 (time passing changes nothing)
            return bounds, (dbm.LE_ZERO,)
        key = (n, tuple(src))
        gather = self._gathers.get(key)
        if gather is None:
            gather = self._gathers[key] = itemgetter(*[r * n + c for r in src for c in src])
        e = list(gather(d))
        for i in range(0, n2 * n2, n2 + 1):
            e[i] = dbm.LE_ZERO
        for c in freed:
            dbm.free(e, n2, c)
        z = self._settle(e, n2, bounds, extra_m or [-1] * self.extra, delay)
        return None if z is None else (bounds, z)

    def _target(self, t: State) -> tuple[list[tuple[int, int]], bool, dict[int, Bounds]]:
        """NOTE(step-plans): the timed instances enabled in `t` as (timed index, instance), whether
        time passes there, and the bounds of those instances in `t` found so far (each evaluated
        when a step first needs it, so that a bound that fails fails where it did)."""
        got = self._targets.get(t)
        if got is None:
            ids = {i for i, _ in self.enabled(t)}
            got = self._targets[t] = ([(k, i) for k, i in enumerate(self.timed) if i in ids], self.delays(t), {})
        return got

    def fired(self, node: Node, iid: int) -> Sequence[int] | None:
        """fire_zone's valuations, to read only: node.zone itself where the lower bound cuts nothing."""
        key = (node.bounds, iid)
        f = self._fires.get(key)
        if f is None:
            n = self.dim(node.bounds)
            c = self.position(node.bounds, iid)
            raw = 0
            if c is not None:
                b = node.bounds[self.clock_of[iid] - 1]
                assert b is not None
                raw = dbm.le(-b[0]) if b[0] else 0
            f = self._fires[key] = (n, c if raw else None, raw)
        n, c, raw = f
        zone = node.zone
        if c is None or raw >= zone[c]:
            return zone
        d = list(zone)
        return d if dbm.constrain(d, n, 0, c, raw) else None

    def fire_zone(self, node: Node, iid: int) -> list[int] | None:
        """The valuations of node's zone where `iid` can fire (its lower bound met), or None."""
        d = self.fired(node, iid)
        return None if d is None else list(d)


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
        stored = self.zones.get(key)
        if stored is None:
            self.zones[key] = [(zone, index)]
            self.count += 1
            return True
        includes = dbm.includes
        for z, _ in stored:
            if includes(z, zone):
                return False
        kept = []
        for z, k in stored:
            if includes(zone, z):
                self.covered.add(k)
            else:
                kept.append((z, k))
        if len(kept) < len(stored):
            stored[:] = kept
        stored.append((zone, index))
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


def search(g: ZoneGraph, wanted: set[str], limits: Limits = Limits(), early: bool = False) -> SafetySearch:
    """BFS over the zone graph: every safety property, deadlock and modelling error (the first
    stops the search, as in the explicit engine). `early`: stop (incomplete) as soon as every
    wanted invariant and transition property is violated and, if wanted, a deadlock found: for
    a caller that only asks whether they are (checker/api/timed_assumptions.py)."""
    cm = g.cm
    model = cm.model
    goal = (sum(1 for inv, _ in cm.invariants if inv.name in wanted)
            + sum(1 for tp, _ in cm.transitions if tp.name in wanted)
            + int("deadlock" in wanted and not model.allow_deadlock))

    def reached() -> bool:
        return early and (sum(1 for i in out.invariant_cex if cm.invariants[i][0].name in wanted)
                          + sum(1 for i in out.transition_cex if cm.transitions[i][0].name in wanted)
                          + int(out.deadlock is not None and "deadlock" in wanted)) >= goal
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
        if reached():
            out.stop_reason = "every property asked for is violated"
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

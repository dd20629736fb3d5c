"""The compiled explicit engine: the breadth-first search of checker/explicit.py over bit-packed
states in flat numpy arrays, with the successor function and predicates compiled by numba
(gpmodel/jit.py, kernels in gpmodel/jit_kernels.py, storage in NOTE(packed-bfs)).

It explores the same states in the same order as the Python engine, so state counts, verdicts
and (shortest, BFS) counterexamples are the same; it hands back an `explicit.Search` whose
`parent` holds only the states on counterexample paths, so that `explicit.safety_results`
turns it into Results exactly as for the Python engine. A modelling error is detected in
compiled code and then reproduced by the Python functions on the same state, which give the
error's message and location (see gpmodel/jit.py's docstring).

Every wanted invariant, every constraint and every terminal predicate is evaluated in full in
every discovered state, and every wanted transition property on every edge, so that a modelling
error in any of them is reported even after a property was violated. Models with a predicate
that can fail to evaluate run on the Python engine only (`api.compiled_unsupported`: it alone
implements NOTE(predicate-errors) in full)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import ModuleType
from typing import Callable

import numpy as np

from gpmodel import CompiledModel, ModelError, State
from gpmodel.jit import load_model_module, module_source
from gpmodel.jit_kernels import (
    CTL_CUR, CTL_DEADLOCK, CTL_DEPTH, CTL_EVENT_STATE, CTL_N, CTL_PRUNED, CTL_SIZE, DONE, FAULT_EXPAND,
    FAULT_STATE, FAULT_TERMINAL, FAULT_TRANS, GROW, LIMIT, MAX_LOAD_PERCENT, RUNNING,
)
from gpmodel.packed import PackedLayout
from checker import liveness
from checker import budget
from checker.explicit import Limits, Search, make_steps
from checker.verdict import Counterexample, Result

INITIAL_CAPACITY = 1 << 16  # states; the arrays double when full
BUDGET = 1 << 16  # expansions between checks of the clock and progress reports


@dataclass
class PackedGraph:
    """What a compiled search stored: packed keys in BFS order and parent indexes."""

    packed: PackedLayout
    module: ModuleType
    states: np.ndarray  # (capacity, words) int64; rows 0..n-1 used
    parent: np.ndarray  # int32, -1 for initial states
    flags: np.ndarray  # uint8, 1 = inside the constraints (expanded)
    table: np.ndarray  # int64 hash set of state indexes (gpmodel/jit_kernels.find_or_insert)
    n: int

    def state(self, i: int) -> State:
        return self.packed.unpack(tuple(int(x) for x in self.states[i]))

    def path(self, i: int) -> list[int]:
        out = [i]
        while self.parent[out[-1]] >= 0:
            out.append(int(self.parent[out[-1]]))
        out.reverse()
        return out


def search(cm: CompiledModel, wanted: set[str], limits: Limits = Limits(),
           packed: PackedLayout | None = None) -> tuple[Search, PackedGraph]:
    """Breadth-first search of every reachable state; the same `Search` as explicit.search
    (with `parent` restricted to counterexample paths) and the stored graph."""
    model = cm.model
    packed = packed or PackedLayout(cm.layout.slot_types)
    with budget.uncooperative():  # compiling has nothing partial to report: a stop ends it
        mod = load_model_module(module_source(cm, packed))
    words = packed.words
    ninst = max(1, len(cm.instances))
    nslots = max(1, model.slot_total)
    want_inv = np.array([inv.name in wanted for inv in model.invariants] or [False], dtype=np.uint8)
    want_tr = np.array([tp.name in wanted for tp in model.transitions] or [False], dtype=np.uint8)
    inv_first = np.full(len(model.invariants), -1, dtype=np.int64)
    inv_bad = np.zeros(len(model.invariants), dtype=np.uint8)
    tr_first = np.full((len(model.transitions), 3), -1, dtype=np.int64)
    tr_bad = np.zeros(len(model.transitions), dtype=np.uint8)
    check_deadlock = "deadlock" in wanted and not model.allow_deadlock
    fired = np.zeros(ninst, dtype=np.int64)
    s = np.zeros(nslots, dtype=np.int64)
    t = np.zeros(nslots, dtype=np.int64)
    w = np.zeros(nslots, dtype=np.int64)
    out = np.zeros((ninst, words), dtype=np.int64)
    iids = np.zeros(ninst, dtype=np.int64)
    err = np.zeros(1, dtype=np.int64)
    ctl = np.zeros(CTL_SIZE, dtype=np.int64)
    ctl[CTL_DEADLOCK] = -1

    init_keys = np.array([packed.pack(x) for x in cm.initial_states()], dtype=np.int64).reshape(-1, words)
    cap = INITIAL_CAPACITY
    while cap < 2 * (len(init_keys) + ninst):
        cap *= 2
    g = PackedGraph(packed, mod, np.zeros((cap, words), dtype=np.int64), np.empty(cap, dtype=np.int32),
                    np.zeros(cap, dtype=np.uint8), np.zeros(2 * cap, dtype=np.int64), 0)
    res = Search({}, complete=False, pruned=False, depth=0, stop_reason=None, fired=[0] * len(cm.instances))

    start = time.monotonic()
    max_states = -1 if limits.max_states is None else limits.max_states
    status = RUNNING
    while status == RUNNING or status == GROW:
        if status == GROW:
            _grow(g, int(ctl[CTL_N]), int(ctl[CTL_N]) + ninst)
        status = mod.expand(init_keys, g.states, g.parent, g.table, g.flags, ctl, fired, want_inv, inv_first, inv_bad,
                            want_tr, tr_first, tr_bad, check_deadlock, max_states, BUDGET, s, t, w, out, iids, err)
        elapsed = time.monotonic() - start
        if limits.progress is not None:
            limits.progress(int(ctl[CTL_N]), int(ctl[CTL_DEPTH]), int(ctl[CTL_N] - ctl[CTL_CUR]), elapsed)
        if status == RUNNING and limits.timeout is not None and elapsed > limits.timeout:
            res.stop_reason = f"timeout after {limits.timeout:g} s (every state to depth {int(ctl[CTL_DEPTH])} checked)"
            break
        if status == RUNNING and budget.stopped():  # SIGINT/SIGTERM, --max-memory (checker/budget.py)
            res.stop_reason = f"{budget.stopped()} (every state to depth {int(ctl[CTL_DEPTH])} checked)"
            break
    g.n = int(ctl[CTL_N])
    res.depth = int(ctl[CTL_DEPTH])
    res.pruned = bool(ctl[CTL_PRUNED])
    res.fired = [int(x) for x in fired[: len(cm.instances)]]
    if status == DONE:
        res.complete = True
    elif status == LIMIT:
        res.stop_reason = f"state limit {limits.max_states} reached (every state to depth {res.depth} checked)"
    elif status in (FAULT_EXPAND, FAULT_STATE, FAULT_TERMINAL, FAULT_TRANS):
        i = int(ctl[CTL_EVENT_STATE])
        res.fault = _python_fault(cm, wanted, status, g.state(i))
        res.stop_reason = "the search stopped at a modelling error (see the range result)"  # as explicit.py
        _keep_path(res, g, i)
    if limits.progress is not None and res.complete:
        limits.progress(g.n, res.depth, 0, time.monotonic() - start)

    for k, i in enumerate(inv_first):
        if i >= 0:
            res.invariant_cex[k] = _keep_path(res, g, int(i))
    for k, (si, iid, ti) in enumerate(tr_first):
        if si >= 0:
            res.transition_cex[k] = (_keep_path(res, g, int(si)), int(iid), g.state(int(ti)))
    if ctl[CTL_DEADLOCK] >= 0:
        res.deadlock = _keep_path(res, g, int(ctl[CTL_DEADLOCK]))
    return res, g


def _grow(g: PackedGraph, used: int, need: int) -> None:
    """Double the state arrays and/or the hash table (rehashing the `used` stored states)
    until `need` states fit."""
    if need > g.states.shape[0]:
        cap = 2 * g.states.shape[0]
        while cap < need:
            cap *= 2
        states = np.zeros((cap, g.states.shape[1]), dtype=np.int64)
        states[:used] = g.states[:used]
        parent = np.empty(cap, dtype=np.int32)  # written for every stored state
        parent[:used] = g.parent[:used]
        flags = np.zeros(cap, dtype=np.uint8)
        flags[:used] = g.flags[:used]
        g.states, g.parent, g.flags = states, parent, flags
    if need * 100 > g.table.shape[0] * MAX_LOAD_PERCENT:
        size = 2 * g.table.shape[0]
        while need * 100 > size * MAX_LOAD_PERCENT:
            size *= 2
        g.table = np.empty(0, dtype=np.int64)  # let the old table go before the new one is made
        g.table = np.zeros(size, dtype=np.int64)
        g.module.rehash(g.states, used, g.table)


def _keep_path(res: Search, g: PackedGraph, i: int) -> State:
    """Record the BFS path to state i in `res.parent` (state -> parent state); its last state."""
    prev: State | None = None
    for k in g.path(i):
        st = g.state(k)
        res.parent.setdefault(st, prev)
        prev = st
    assert prev is not None
    return prev


def _python_fault(cm: CompiledModel, wanted: set[str], status: int, s: State) -> ModelError:
    """The modelling error the compiled code flagged in state s, as the Python functions
    report it (they evaluate in the same order)."""
    checks: list[Callable[[], object]] = []
    if status == FAULT_EXPAND:
        checks.append(lambda: cm.successors(s))
    elif status == FAULT_STATE:
        checks += [lambda fn=fn: fn(s) for inv, fn in cm.invariants if inv.name in wanted]  # type: ignore[misc]
        checks += [lambda e=c.expr: cm.predicate(e)(s) for c in cm.model.constraints]  # type: ignore[misc]
        checks += [lambda e=e: cm.predicate(e)(s) for e in cm.model.terminals]  # type: ignore[misc]
    elif status == FAULT_TERMINAL:
        checks += [lambda e=e: cm.predicate(e)(s) for e in cm.model.terminals]  # type: ignore[misc]
    else:
        for _, nxt in cm.successors(s):
            checks += [lambda fn=fn, nxt=nxt: fn(s, nxt)  # type: ignore[misc]
                       for tp, fn in cm.transitions if tp.name in wanted]
    for check in checks:
        try:
            check()
        except ModelError as e:
            return e
    raise AssertionError("the compiled engine flagged a modelling error that the Python functions do not raise")


# ---------------------------------------------------------------------------- liveness
class _CsrGraph:
    """The explored graph as CSR arrays, read through the interface of checker/liveness.py."""

    def __init__(self, g: PackedGraph, offsets: np.ndarray, targets: np.ndarray, iids: np.ndarray):
        self.offsets, self.targets, self.iids = offsets, targets, iids
        self.parent = g.parent
        self.edges = self  # edges[i]: [(instance, target)] of state i

    def __getitem__(self, i: int) -> list[tuple[int, int]]:
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        return [(int(x), int(y)) for x, y in zip(self.iids[a:b], self.targets[a:b])]

    def __len__(self) -> int:
        return len(self.offsets) - 1


class _Enabled:
    """enabled[i]: the instances enabled in state i."""

    def __init__(self, graph: _CsrGraph):
        self.graph = graph

    def __getitem__(self, i: int) -> set[int]:
        return {iid for iid, _ in self.graph[i]}

    def __len__(self) -> int:
        return len(self.graph)


class _Accepting:
    """i in m: state i is accepting; m[i]: its fair SCC, None where it may stutter."""

    def __init__(self, accept: np.ndarray, comp: np.ndarray):
        self.accept, self.comp = accept, comp
        self._sccs: dict[int, frozenset[int]] = {}

    def __contains__(self, i: object) -> bool:
        return bool(self.accept[i])  # type: ignore[index]

    def __getitem__(self, i: int) -> frozenset[int] | None:
        if self.accept[i] == 1:
            return None
        c = int(self.comp[i])
        if c not in self._sccs:
            self._sccs[c] = frozenset(int(x) for x in np.flatnonzero(self.comp == c))
        return self._sccs[c]


def liveness_results(cm: CompiledModel, res: Search, g: PackedGraph, wanted: set[str]) -> list[Result]:
    """Liveness on the compact graph (checker/liveness.py explains the method): SCCs, fairness
    and reachability in compiled code over CSR edge arrays; only the counterexample lasso is
    built in Python, through the same code as the Python engine's."""
    props = [p for p in cm.model.liveness if p.name in wanted]
    if not props or not res.complete:
        return liveness.verdicts(cm.model, res, props, lambda p: None)
    mod, n = g.module, g.n
    edges = int(sum(res.fired))
    offsets = np.zeros(n + 1, dtype=np.int64)
    targets = np.zeros(max(1, edges), dtype=np.int32)
    edge_iids = np.zeros(max(1, edges), dtype=np.int32)
    ninst = max(1, len(cm.instances))
    out = np.zeros((ninst, g.packed.words), dtype=np.int64)
    scratch = np.zeros(max(1, cm.model.slot_total), dtype=np.int64)
    err = np.zeros(1, dtype=np.int64)
    if mod.build_edges(g.states, g.table, g.flags, n, offsets, targets, edge_iids, scratch.copy(), scratch.copy(), out,
                       np.zeros(ninst, dtype=np.int64), err) != edges:
        raise AssertionError("the compiled engine's edge count differs from its search")
    graph = _CsrGraph(g, offsets, targets, edge_iids)
    fair = np.array([inst.action.fair for inst in cm.instances] or [False], dtype=np.uint8)
    fair_set = {i for i, inst in enumerate(cm.instances) if inst.action.fair}
    notq = np.zeros(n, dtype=np.uint8)
    accept = np.zeros(n, dtype=np.uint8)
    comp = np.zeros(n, dtype=np.int32)
    reach = np.zeros(n, dtype=np.uint8)
    is_initial = g.parent[:n] < 0

    def find(p: liveness.ir.Liveness) -> Counterexample | None:
        which = cm.model.liveness.index(p)
        bad = mod.live_marks(g.states, g.flags, n, which, notq, scratch, err)
        if bad >= 0:
            cm.predicate(p.q)(g.state(bad))  # raises the modelling error, as the Python engine does
            raise AssertionError("the compiled engine flagged a modelling error that Python does not raise")
        mod.fair_sccs(n, offsets, targets, edge_iids, notq, fair, accept, comp, np.zeros(5 * n, dtype=np.int32))
        if not accept.any():
            return None
        mod.can_reach_accepting(n, offsets, targets, notq, accept, reach,
                                np.zeros(2 * n + 1 + len(targets), dtype=np.int32))
        if p.kind is liveness.ir.LivenessKind.EVENTUALLY:
            starts = np.flatnonzero(reach.astype(bool) & is_initial)
            start = int(starts[0]) if len(starts) else -1
        elif p.kind is liveness.ir.LivenessKind.ALWAYS_EVENTUALLY:
            starts = np.flatnonzero(reach)
            start = int(starts[0]) if len(starts) else -1
        else:
            start, bad = mod.leads_to_start(g.states, n, which, reach, scratch, err)
            if bad >= 0:
                assert p.p is not None
                cm.predicate(p.p)(g.state(int(bad)))
                raise AssertionError("the compiled engine flagged a modelling error that Python does not raise")
        if start < 0:
            return None
        lasso = liveness.lasso_from(graph, int(start), _Accepting(accept, comp), notq, _Enabled(graph), fair_set)
        states = [g.state(i) for i in lasso.states]
        return Counterexample(make_steps(cm, states, lasso.iids), loop=lasso.loop)

    return liveness.verdicts(cm.model, res, props, find)


# ---------------------------------------------------------------------------- latency
def latency_graph(cm: CompiledModel, res: Search, g: PackedGraph) -> liveness.Graph:
    """The explored graph in the form checker/latency.py reads (states decoded, edges as lists),
    built from the compact graph's CSR edges (NOTE(latency): latencies are computed in Python)."""
    mod, n = g.module, g.n
    edges = int(sum(res.fired))
    offsets = np.zeros(n + 1, dtype=np.int64)
    targets = np.zeros(max(1, edges), dtype=np.int32)
    edge_iids = np.zeros(max(1, edges), dtype=np.int32)
    ninst = max(1, len(cm.instances))
    out = np.zeros((ninst, g.packed.words), dtype=np.int64)
    scratch = np.zeros(max(1, cm.model.slot_total), dtype=np.int64)
    err = np.zeros(1, dtype=np.int64)
    if mod.build_edges(g.states, g.table, g.flags, n, offsets, targets, edge_iids, scratch.copy(), scratch.copy(), out,
                       np.zeros(ninst, dtype=np.int64), err) != edges:
        raise AssertionError("the compiled engine's edge count differs from its search")
    csr = _CsrGraph(g, offsets, targets, edge_iids)
    states = [g.state(i) for i in range(n)]
    parent = [int(x) for x in g.parent[:n]]
    return liveness.Graph(states, {}, [csr[i] for i in range(n)], [bool(g.flags[i]) for i in range(n)], parent,
                          [i for i, p in enumerate(parent) if p < 0])

"""Latency properties on the compiled core's compact graph (NOTE(latency) in spec/ir.py).

checker/engines/latency/latency.py defines the method and stays the reference (the Python core's path); this
module computes the same numbers, verdicts and behaviours over the CSR edge arrays that the
compiled core builds for liveness (checker/engines/explicit/fast_explicit.py's `_csr_graph`), with flat numpy
arrays per state and per edge and the graph passes (region, Tarjan, Dijkstra, traps, longest
paths) in compiled kernels (gpmodel/jit_latency.py), instead of Python objects per state and
edge. Python evaluates what has messages to give: P and Q in every state (decoded a chunk at a
time), the costs of the region's edges (only the instances whose action has a `cost`), and the
behaviours, which latency.py's own functions build from a view of the graph.

Every choice is made in the same order as latency.py's (see gpmodel/jit_latency.py); where
latency.py iterates a Python set (a component's states, for the longest exit), the set is
built from the same states in the same order, so that its iteration order, and so the witness,
is the same. tests/unit/test_fast_latency.py compares the two paths.

NOTE(latency-64-bit): the kernels add costs in int64; the language's integers are unbounded
(a cost of 2^62 on two steps is 2^63). Costs are evaluated exactly (Python integers) before any
kernel runs, and every sum a kernel forms is a sum of distinct edges of the region (Dijkstra's
paths are simple; the longest path takes one exit edge per component of the condensation), so
when the region's costs add up to at most INT64_MAX nothing can wrap. Past that, the property
is computed by the reference, checker/engines/latency/latency.py, on the same graph with Python integers: the
same exact numbers, verdict and behaviour, more slowly."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from gpcheck.spec import ir
from gpcheck.gpmodel import CompiledModel, ModelError, State
from gpcheck.gpmodel import jit_latency
from gpcheck.gpmodel.cost import compile_costs, cost_source
from gpcheck.gpmodel.jit import load_module
from gpcheck.gpmodel.vector_pred import column_predicate, column_value
from gpcheck.checker.core import budget
from gpcheck.checker.engines.latency import latency
from gpcheck.checker.engines.explicit import liveness
from gpcheck.checker.engines.explicit.explicit import Search
from gpcheck.checker.engines.explicit.fast_explicit import PackedGraph, _CsrGraph, _chunks, _csr_graph
from gpcheck.checker.core.verdict import Result, Verdict

KIND, ENGINE = latency.KIND, latency.ENGINE


class _States:
    """states[i]: state i decoded from its packed key (on demand: a behaviour needs a few)."""

    def __init__(self, g: PackedGraph):
        self.g = g

    def __getitem__(self, i: int) -> State:
        return self.g.state(i)

    def __len__(self) -> int:
        return self.g.n


class _View:
    """The compact graph read through what latency.py's behaviour functions use of a
    liveness.Graph: states, edges, parent."""

    def __init__(self, g: PackedGraph, csr: _CsrGraph):
        self.states = _States(g)
        self.edges = csr
        self.parent = g.parent


def latency_results(cm: CompiledModel, res: Search, g: PackedGraph, props: Sequence[ir.Latency]) -> list[Result]:
    """One Result per latency property after a complete compiled search (latency.py's
    latency_results, on the compact graph). Raises fast_explicit.MissedState after a
    fingerprint collision and budget.Stop as latency.py's callers expect."""
    if not props:
        return []
    assert res.complete
    try:
        csr = _csr_graph(cm, res, g)
        kern = load_module(jit_latency.SOURCE)
        cost_of = compile_costs(cm)
        out = []
        for p in props:
            try:
                try:
                    out.append(_compute(cm, g, csr, kern, res, p, cost_of))
                except _Past64Bits:  # NOTE(latency-64-bit): the reference's exact integers, on this graph
                    out.append(latency._compute(cm, _ExactView(g, csr), res, p, cost_of))  # type: ignore[arg-type]
            except latency._Unknown as why:
                out.append(Result(p.name, KIND, Verdict.UNKNOWN, ENGINE, reason=str(why),
                                  detail=latency._numbers(p, None, None)))
        return out
    except budget.Stop as stop:
        return [Result(p.name, KIND, Verdict.UNKNOWN, ENGINE, reason=stop.text, detail=latency._numbers(p, None, None))
                for p in props]


INT64_MAX = (1 << 63) - 1


class _Past64Bits(Exception):
    """NOTE(latency-64-bit): the region's costs add up past INT64_MAX, so a sum in the kernels
    could wrap; the property is computed by the reference (checker/engines/latency/latency.py) instead."""


class _ExactView:
    """The compact graph read as the liveness.Graph that latency.py's `_compute` walks (states,
    edges, expanded, parent, initial), for its exact Python-integer sums (NOTE(latency-64-bit))."""

    def __init__(self, g: PackedGraph, csr: _CsrGraph):
        self.states = _AllStates(g)
        self.edges = csr
        self.parent = g.parent
        self.expanded = g.flags[:g.n].astype(np.bool_).tolist()
        self.initial = np.flatnonzero(g.parent[:g.n] < 0).tolist()


class _AllStates(_States):
    """_States that also iterate (latency._truths enumerates them), a chunk decoded at a time."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        for lo, hi in _chunks(self.g.n):
            yield from self.g.all_states(lo, hi)


def _truths(cm: CompiledModel, g: PackedGraph, e: ir.Expr, what: str) -> np.ndarray:
    """latency._truths as a bool array: the predicate in every state, the first failure (in
    state order) raised as latency._Unknown."""
    out = np.zeros(g.n, dtype=np.bool_)
    vec = column_predicate(cm.predicate_text(e), _ranges(g)) if g.via is None else None
    if vec is not None:  # no failure possible: every state at once, a column per slot (gpmodel/vector_pred.py)
        vfn, slots = vec
        for lo, hi in _chunks(g.n):
            cols = {}
            for k in slots:
                f = g.packed.fields[k]
                col = (g.states[lo:hi, f.word] >> f.shift) & f.mask
                cols[k] = col + f.lo if f.lo else col
            out[lo:hi] = vfn(cols, hi - lo)
        return out
    fn = cm.predicate(e)
    for lo, hi in _chunks(g.n):
        for k, s in enumerate(g.all_states(lo, hi)):
            try:
                if fn(s):
                    out[lo + k] = True
            except ModelError as err:
                raise latency._Unknown(f"{what} fails to evaluate in a reachable state: {err}") from None
    return out


def _costs(cm: CompiledModel, g: PackedGraph, csr: _CsrGraph, src: np.ndarray, region: np.ndarray,
           cost_of: latency.CostOf) -> np.ndarray:
    """The cost of every edge leaving a region state (0 elsewhere), evaluated in state order
    and successor order as latency.py does, so that the first failure is the same one.
    src[e]: the state edge e leaves."""
    costed = np.array([inst.action.cost is not None for inst in cm.instances] or [False], dtype=np.bool_)
    costs = np.zeros(max(1, len(csr.targets)), dtype=np.int64)
    todo = np.flatnonzero(region[src] & costed[csr.iids[:len(src)]])
    if not len(todo):
        return costs
    vals = _vector_costs(cm, g, csr, src, todo)
    if vals is not None:
        costs[todo] = vals
        return costs
    chunks = list(_chunks(g.n))
    bounds = np.searchsorted(src[todo], [lo for lo, _ in chunks] + [g.n])  # where _chunks cuts
    total = 0  # exact: NOTE(latency-64-bit)
    for c, (lo, hi) in enumerate(chunks):
        part = todo[bounds[c]:bounds[c + 1]]
        if not len(part):
            continue
        states = g.all_states(lo, hi)
        for e in part.tolist():
            i = int(src[e])
            try:
                v = cost_of(int(csr.iids[e]), states[i - lo])
            except ModelError as err:
                raise latency._Unknown(f"{err.message} ({err.site.span}) in a reachable state") from None
            total += v
            if total > INT64_MAX:
                raise _Past64Bits
            costs[e] = v
    return costs


def _vector_costs(cm: CompiledModel, g: PackedGraph, csr: _CsrGraph, src: np.ndarray,
                  todo: np.ndarray) -> np.ndarray | None:
    """The costs of edges `todo`, a slot column at a time (gpmodel/vector_pred.py), when every
    costed instance's cost is such an expression, none is negative and their sum stays within
    INT64_MAX; else None, and _costs evaluates edge by edge (the same numbers, and the first
    failure in its order)."""
    if g.via is not None:
        return None
    vals = np.zeros(len(todo), dtype=np.int64)
    edge_iids = csr.iids[todo]
    for iid in np.unique(edge_iids).tolist():
        text = cost_source(cm, int(iid))
        vec = column_value(text[0], _ranges(g), text[1]) if text is not None else None
        if vec is None:
            return None
        fn, slots = vec
        mine = np.flatnonzero(edge_iids == iid)
        for a in range(0, len(mine), CHUNK_EDGES):
            part = mine[a:a + CHUNK_EDGES]
            budget.check()
            rows = g.states[src[todo[part]]]
            cols = {}
            for k in slots:
                f = g.packed.fields[k]
                col = (rows[:, f.word] >> f.shift) & f.mask
                cols[k] = col + f.lo if f.lo else col
            vals[part] = fn(cols, len(part))
    if len(vals) and (int(vals.min()) < 0 or int(vals.max()) * len(vals) > INT64_MAX
                      and sum(vals.tolist()) > INT64_MAX):
        return None
    return vals


CHUNK_EDGES = 1 << 20


def _ranges(g: PackedGraph) -> dict[int, tuple[int, int]]:
    """Each slot's lowest and highest packed value."""
    return {k: (f.lo, f.lo + f.mask) for k, f in enumerate(g.packed.fields)}


def _compute(cm: CompiledModel, g: PackedGraph, csr: _CsrGraph, kern: object, res: Search, p: ir.Latency,
             cost_of: latency.CostOf) -> Result:
    n = g.n
    offsets, targets, iids = csr.offsets, csr.targets, csr.iids
    view = _View(g, csr)
    P = _truths(cm, g, p.p, f"{p.name}'s 'from' predicate")
    Q = _truths(cm, g, p.q, f"{p.name}'s 'to' predicate")
    flags = g.flags[:n].astype(np.bool_)

    # starts, each with the step that enters it (None: an initial P-state)
    src = np.repeat(np.arange(n, dtype=np.int32), np.diff(offsets))  # the state each edge leaves
    m = len(src)
    tg = targets[:m]
    into = flags[src] & ~P[src] & P[tg]
    firsts, at = np.unique(tg[into], return_index=True)
    edges_in = np.flatnonzero(into)[at]
    initial = np.flatnonzero((g.parent[:n] < 0) & P)
    entered: dict[int, tuple[int, int] | None] = {int(i): None for i in initial}
    for j, e in zip(firsts.tolist(), edges_in.tolist()):
        entered.setdefault(j, (int(src[e]), int(iids[e])))
    starts = sorted(entered)
    if not starts:
        return latency._verdict(cm, view, res, p, None, None, None, detail={"starts": 0})  # type: ignore[arg-type]
    starts_arr = np.array(starts, dtype=np.int64)

    budget.check()
    inside = (flags & ~Q).astype(np.uint8)
    region = np.zeros(n, dtype=np.uint8)
    kern.lat_region(offsets, targets, inside, starts_arr, region, np.zeros(n, dtype=np.int32))  # type: ignore[attr-defined]
    in_region = region.astype(np.bool_)
    costs = _costs(cm, g, csr, src, in_region, cost_of)

    def cost(i: int, iid: int) -> int:
        for e in range(int(offsets[i]), int(offsets[i + 1])):
            if int(iids[e]) == iid:
                return int(costs[e])
        raise AssertionError("an edge of the graph")

    budget.check()
    dist = np.full(n, -1, dtype=np.int64)
    prev = np.full(n, -1, dtype=np.int64)
    hit = int(kern.lat_shortest(offsets, targets, costs, starts_arr, region, Q.astype(np.uint8), dist, prev))  # type: ignore[attr-defined]
    lo = None
    extra: dict[str, object] = {"starts": len(starts)}
    if hit >= 0:
        lo = int(dist[hit])
        lo_cex, lo_start = latency._behaviour(cm, view, entered, _path_to(src, iids, prev, hit))  # type: ignore[arg-type]
        extra["min_counterexample"] = lo_cex.to_json()
        extra["min_start"] = lo_start

    budget.check()
    comp = np.full(n, -1, dtype=np.int32)  # per state: int32 as the CSR targets (memory: cwsr Q=2 has 1.45M states)
    members = np.zeros(n, dtype=np.int32)
    comp_start = np.zeros(n + 1, dtype=np.int32)
    ncomp = int(kern.lat_tarjan(offsets, targets, region, comp, members, comp_start,  # type: ignore[attr-defined]
                                np.full(n, -1, dtype=np.int32), np.zeros(n, dtype=np.int32), np.zeros(n, dtype=np.uint8),
                                np.zeros(n, dtype=np.int32), np.zeros(n, dtype=np.int32), np.zeros(n, dtype=np.int64)))
    fair = np.array([inst.action.fair for inst in cm.instances] or [False], dtype=np.uint8)
    trap = np.zeros(n, dtype=np.uint8)
    budget.check()
    traps = int(kern.lat_traps(offsets, targets, iids, costs, region, fair, comp, members, comp_start,  # type: ignore[attr-defined]
                               ncomp, trap, np.zeros(len(fair), dtype=np.int64), np.zeros(len(fair), dtype=np.uint8)))

    def states_of(k: int) -> list[int]:
        return [int(x) for x in members[comp_start[k]:comp_start[k + 1]]]

    if traps:
        cex, start, why = _unbounded(cm, view, kern, entered, starts_arr, src, region, trap, comp, states_of, cost)
        return latency._verdict(cm, view, res, p, lo, None, cex,  # type: ignore[arg-type]
                                detail={**extra, "unbounded": why, "start": start})

    budget.check()
    longest = np.zeros(max(1, ncomp), dtype=np.int64)
    bad = int(kern.lat_longest(offsets, targets, costs, region, comp, members, comp_start, ncomp, longest))  # type: ignore[attr-defined]
    assert bad < 0, "an unfair component has an exit"
    hi, first = -1, starts[0]
    for s in starts:
        v = int(longest[comp[s]]) if region[s] else 0
        if v > hi:
            hi, first = v, s
    path: list[tuple[int | None, int]] = [(None, first)]
    cur = first
    while region[cur]:
        k = int(comp[cur])
        here = set(states_of(k))  # latency.py's `comps[k]`, in the same order: the same first best
        top, best = -1, (-1, -1, -1)
        for i in here:
            for iid, j in csr[i]:
                if region[j] and comp[j] == k:
                    continue
                v = cost(i, iid) + (int(longest[comp[j]]) if region[j] else 0)
                if v > top:
                    top, best = v, (i, iid, j)
        i, iid, j = best
        if i != cur:
            leg = liveness._path_within(view, cur, lambda x, i=i: x == i, lambda x, k=k: bool(comp[x] == k))
            assert leg is not None
            path += leg[1:]
        path.append((iid, j))
        cur = j
    cex, start = latency._behaviour(cm, view, entered, path)  # type: ignore[arg-type]
    return latency._verdict(cm, view, res, p, lo, hi, cex, detail={**extra, "start": start})  # type: ignore[arg-type]


def _path_to(src: np.ndarray, iids: np.ndarray, prev: np.ndarray, k: int) -> list[tuple[int | None, int]]:
    """latency._path_to over prev edges (-1: no predecessor)."""
    path: list[tuple[int | None, int]] = []
    while prev[k] >= 0:
        e = int(prev[k])
        path.append((int(iids[e]), k))
        k = int(src[e])
    path.append((None, k))
    path.reverse()
    return path


def _unbounded(cm: CompiledModel, view: _View, kern: object, entered: dict[int, tuple[int, int] | None],
               starts: np.ndarray, src: np.ndarray, region: np.ndarray, trap: np.ndarray, comp: np.ndarray,
               states_of: object, cost: latency.CostOf) -> tuple[object, int, str]:
    """latency._unbounded_witness: the kernel finds the first trap state breadth first; the
    loop is built by latency.py's own code on that state's component."""
    n = len(region)
    prev = np.full(n, -1, dtype=np.int64)
    hit = int(kern.lat_to_trap(view.edges.offsets, view.edges.targets, starts, region, trap, prev,  # type: ignore[attr-defined]
                               np.zeros(n, dtype=np.uint8), np.zeros(n, dtype=np.int32)))
    assert hit >= 0
    path = _path_to(src, view.edges.iids, prev, hit)
    kind = int(trap[hit])
    frozen = None if kind == jit_latency.TRAP_STUTTER else frozenset(states_of(int(comp[hit])))  # type: ignore[operator]
    kinds = {jit_latency.TRAP_STUTTER: "stutter", jit_latency.TRAP_POSITIVE: "positive", jit_latency.TRAP_FAIR: "fair"}
    fair = {iid for iid, inst in enumerate(cm.instances) if inst.action.fair}
    (cex, start), why = latency._lasso(cm, view, entered, path, hit, kinds[kind], frozen,  # type: ignore[arg-type]
                                       latency._EnabledView(view), fair, cost)  # type: ignore[arg-type]
    return cex, start, why

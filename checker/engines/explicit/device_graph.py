"""`--device cuda`'s state graph for liveness (issue 35, item 2): the edge arrays
are built on the device from what its search stored, then handed to the compiled core's CSR
pass on the host (fast_explicit.liveness_results);
and transition properties checked on the device over the same edges (`check_transitions`).

NOTE(device-edges): after a complete device search the visited set's table holds `id + 1` for
every state. The edges are built in chunks of states with two launches: `expand` (the search's
kernel, deadlock checks off) writes each state's successors into the fixed candidate rows
`(state - lo) * NINST + j` (j: the successor's place in `succ`'s order), and `lookup` finds
each row's state number in the table. Compacting the used rows in row order (on the device)
gives each state's edges in successor order: the arrays fast_explicit._csr_graph builds on the
CPU, edge for edge, so the SCCs and lassos are the compiled core's. Only
the compacted edges travel to the host (8 bytes an edge), with the keys, parents and flags."""

from __future__ import annotations

import numpy as np

from gpcheck.gpmodel import CompiledModel
from gpcheck.gpmodel.cuda_kernels import EV_EXPAND, EV_FULL, EV_STATE, EVENTS, NO_EVENT
from gpcheck.gpmodel.jit import load_kernels, module_source
from gpcheck.checker.core import budget
from gpcheck.checker.core import progress as meter
from gpcheck.checker.engines.explicit.device_search import CHUNK_ROWS, HOST_CHUNK_ROWS, CudaBackend, DeviceGraph
from gpcheck.checker.engines.explicit.explicit import Search
from gpcheck.checker.engines.explicit.fast_explicit import PackedGraph, _CsrGraph


def device_edges(g: DeviceGraph, ninst: int, chunk_rows: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CSR arrays (offsets, targets, instances) of the device graph `g`, built on its
    backend (NOTE(device-edges)); the budget is checked between chunks."""
    be, xp, words, n = g.be, g.be.xp, g.words, g.n
    rows = chunk_rows or (CHUNK_ROWS if isinstance(be, CudaBackend) else HOST_CHUNK_ROWS)
    per_chunk = max(1, rows // ninst)
    rows = per_chunk * ninst
    cand = xp.zeros((rows, words), dtype=xp.int64)
    iid = xp.full(rows, -1, dtype=xp.int64)
    target = xp.zeros(rows, dtype=xp.int32)
    events = xp.full(EVENTS, NO_EVENT, dtype=xp.int64)
    events[EV_FULL] = 0
    counts = np.zeros(n, dtype=np.int64)
    tparts: list[np.ndarray] = []
    iparts: list[np.ndarray] = []
    for lo in range(0, n, per_chunk):
        budget.check()
        count = min(per_chunk, n - lo)
        used_rows = count * ninst
        be.launch("expand", count, g.keys, g.flags, lo, count, cand, iid, 0, events)
        be.launch("lookup", used_rows, g.keys, g.table, g.table.shape[0], cand, iid, used_rows, target, events)
        used = iid[:used_rows] >= 0
        counts[lo:lo + count] = be.get(used.reshape(count, ninst).sum(axis=1))
        tparts.append(be.get(target[:used_rows][used]))
        iparts.append(be.get(iid[:used_rows][used].astype(xp.int32)))
    ev = be.get(events)
    if ev[EV_FULL] or ev[EV_EXPAND] != NO_EVENT:
        raise AssertionError("the device's edges: a successor is missing from its table or fails to expand")
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    edges = int(offsets[-1])
    targets = np.zeros(max(1, edges), dtype=np.int32)
    iids = np.zeros(max(1, edges), dtype=np.int32)
    if edges:
        targets[:edges] = np.concatenate(tparts)
        iids[:edges] = np.concatenate(iparts)
    return offsets, targets, iids


def host_graph(cm: CompiledModel, res: Search, g: DeviceGraph, chunk_rows: int | None = None) -> PackedGraph:
    """The device's graph as the compiled core's PackedGraph (keys, parents, flags on the host,
    its CSR edges built on the device), for fast_explicit.liveness_results after a complete
    search."""
    assert res.complete
    meter.note(phase="the state graph's edges (device)")
    offsets, targets, iids = device_edges(g, max(1, len(cm.instances)), chunk_rows)
    if int(offsets[-1]) != int(sum(res.fired)):
        raise AssertionError("the device's edge count differs from its search")
    meter.note(phase="compiling the graph passes (numba)")
    with budget.uncooperative():
        mod = load_kernels(module_source(cm, g.packed))
    n, be = g.n, g.be
    states = np.zeros((max(1, n), g.words), dtype=np.int64)
    states[:n] = be.get(g.keys[:n])
    host = PackedGraph(g.packed, mod, states, be.get(g.parent[:n]).copy(), be.get(g.flags[:n]).copy(),
                       np.zeros(1, dtype=np.int64), n)
    host.csr = _CsrGraph(host, offsets, targets, iids)
    return host


def check_transitions(cm: CompiledModel, res: Search, g: DeviceGraph, wanted: set[str],
                      chunk_rows: int | None = None) -> None:
    """The wanted transition properties on every edge of a complete device search, on the
    device (the `trans` kernel over the candidate rows of `expand`): the first bad edge of each
    in the sequential core's order (source state, then successor order) goes into
    `res.transition_cex` as fast_explicit.search records it."""
    from gpcheck.checker.engines.explicit.fast_explicit import _keep_path  # noqa: PLC0415

    model = cm.model
    if not res.complete or not any(tp.name in wanted for tp in model.transitions):
        return
    be, xp, words, n = g.be, g.be.xp, g.words, g.n
    ninst = max(1, len(cm.instances))
    rows = chunk_rows or (CHUNK_ROWS if isinstance(be, CudaBackend) else HOST_CHUNK_ROWS)
    per_chunk = max(1, rows // ninst)
    rows = per_chunk * ninst
    cand = xp.zeros((rows, words), dtype=xp.int64)
    iid = xp.full(rows, -1, dtype=xp.int64)
    want = xp.asarray(np.array([tp.name in wanted for tp in model.transitions], dtype=np.uint8))
    tr_first = xp.full(len(model.transitions), NO_EVENT, dtype=xp.int64)
    events = xp.full(EVENTS, NO_EVENT, dtype=xp.int64)
    events[EV_FULL] = 0
    for lo in range(0, n, per_chunk):
        budget.check()
        count = min(per_chunk, n - lo)
        be.launch("expand", count, g.keys, g.flags, lo, count, cand, iid, 0, events)
        be.launch("trans", count * ninst, g.keys, lo, cand, iid, count * ninst, want, tr_first, events)
    ev = be.get(events)
    if ev[EV_STATE] != NO_EVENT or ev[EV_EXPAND] != NO_EVENT:
        raise AssertionError("a transition property failed to evaluate on the device (the model is refused for that)")
    target = xp.zeros(ninst, dtype=xp.int32)
    for k, row in enumerate(be.get(tr_first)):
        if row == NO_EVENT:
            continue
        i, j = divmod(int(row), ninst)  # the edge's source state and its place in succ's order
        be.launch("expand", 1, g.keys, g.flags, i, 1, cand, iid, 0, events)
        be.launch("lookup", ninst, g.keys, g.table, g.table.shape[0], cand, iid, ninst, target, events)
        src = _keep_path(res, g, i)  # type: ignore[arg-type]
        res.transition_cex[k] = (src, int(be.get(iid[j:j + 1])[0]), g.state(int(be.get(target[j:j + 1])[0])))

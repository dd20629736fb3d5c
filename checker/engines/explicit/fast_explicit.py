# over 600 lines: one job, the compiled core's search driver over packed storage; its kernels are gpmodel/jit_kernels.py
"""The compiled explicit engine: the breadth-first search of checker/engines/explicit/explicit.py over bit-packed
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

import os
import time
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from gpcheck.gpmodel import CompiledModel, ModelError, State
from gpcheck.gpmodel.jit import KernelModule, has_machine_code, load_kernels, module_source
from gpcheck.gpmodel.jit_kernels import (
    CTL_CUR, CTL_DEADLOCK, CTL_DEPTH, CTL_EVENT_STATE, CTL_LEVEL_END, CTL_N, CTL_NEXT_COUNT, CTL_PRUNED, CTL_SIZE,
    CTL_STARTED, DONE, FAULT_EXPAND,
    FAULT_STATE, FAULT_TERMINAL, FAULT_TRANS, GROW, LIMIT, MAX_LOAD_PERCENT, RUNNING,
)
from gpcheck.gpmodel.jit_fingerprint import CTL_BASE, CTL_FP_SIZE
from gpcheck.gpmodel.packed import PackedLayout
from gpcheck.checker.engines.explicit import liveness
from gpcheck.checker.core import budget
from gpcheck.checker.core import progress as meter
from gpcheck.checker.engines.explicit.explicit import ENGINE, Limits, Search, make_steps
from gpcheck.checker.core.verdict import Counterexample, Result, Verdict

INITIAL_CAPACITY = 1 << 16  # states; the arrays double when full
RESERVE_STATES = 1 << 24  # rows of the per-state arrays reserved up front (see _reserved_rows)
BUDGET = 1 << 16  # expansions between checks of the clock and progress reports


@dataclass
class PackedGraph:
    """What a compiled search stored: packed keys in BFS order and parent indexes."""

    packed: PackedLayout
    module: KernelModule
    states: np.ndarray  # (capacity, words) int64; rows 0..n-1 used
    parent: np.ndarray  # int32, -1 for initial states
    flags: np.ndarray  # uint8, 1 = inside the constraints (expanded)
    table: np.ndarray  # int64 hash set of state indexes (gpmodel/jit_kernels.find_or_insert)
    n: int
    # with fingerprints (NOTE(fingerprint-bfs)): `states` is the window of unexpanded states,
    # `table` holds fingerprints, via[i] is the instance that reached state i, `roots` the keys
    # of the initial states; a state is rebuilt by replaying instances with `cm`
    cm: CompiledModel | None = None
    via: np.ndarray | None = None
    roots: np.ndarray | None = None
    csr: "_CsrGraph | None" = None  # the edges, once _csr_graph built them (liveness, then latencies)

    def state(self, i: int) -> State:
        if self.via is None:  # exact keys: decoded where they are (not along the path to them)
            return self.packed.unpack(tuple(int(x) for x in self.states[i]))
        return self.path_states(i)[-1]

    def all_states(self, lo: int = 0, hi: int | None = None) -> list[State]:
        """States lo..hi-1 (default: all) decoded at once, one numpy column per slot (exact
        keys only)."""
        assert self.via is None
        hi = self.n if hi is None else hi
        cols = []
        for f in self.packed.fields:
            col = (self.states[lo:hi, f.word] >> f.shift) & f.mask
            cols.append((col + f.lo if f.lo else col).tolist())
        return list(zip(*cols)) if cols else [()] * (hi - lo)

    def path_states(self, i: int) -> list[State]:
        """The states on the BFS path from an initial state to state i."""
        if self.via is None:
            return [self.packed.unpack(tuple(int(x) for x in self.states[k])) for k in self.path(i)]
        assert self.cm is not None and self.roots is not None
        path = self.path(i)
        out = [self.packed.unpack(tuple(int(x) for x in self.roots[path[0]]))]
        for k in path[1:]:
            nxt = self.cm.step(int(self.via[k]), out[-1])
            assert isinstance(nxt, tuple), "a recorded step replays"
            out.append(nxt)
        return out

    def path(self, i: int) -> list[int]:
        out = [i]
        while self.parent[out[-1]] >= 0:
            out.append(int(self.parent[out[-1]]))
        out.reverse()
        return out


def search(cm: CompiledModel, wanted: set[str], limits: Limits = Limits(),
           packed: PackedLayout | None = None, workers: int | str = 1,
           fingerprint: bool = False) -> tuple[Search, PackedGraph]:
    """Breadth-first search of every reachable state; the same `Search` as explicit.search
    (with `parent` restricted to counterexample paths) and the stored graph. With `workers`
    > 1 each BFS level is expanded by that many threads and merged in order
    (NOTE(parallel-bfs) in gpmodel/jit_parallel.py): the same states, numbers and results;
    "auto": `auto_workers()` threads, on frontiers large enough to pay (see _parallel).
    With `fingerprint` the visited set keeps 64-bit fingerprints, not keys
    (NOTE(fingerprint-bfs) in gpmodel/jit_fingerprint.py): one worker."""
    auto = workers == "auto"
    workers = (1 if fingerprint else auto_workers()) if auto else int(workers)
    if fingerprint and workers > 1:
        raise ValueError("fingerprints run on one worker")
    model = cm.model
    packed = packed or PackedLayout(cm.layout.slot_types)
    meter.note(engine=ENGINE, phase="compiling the model (numba)")
    with budget.uncooperative():  # compiling has nothing partial to report: a stop ends it
        mod = load_kernels(module_source(cm, packed))
        if workers <= 1 and not fingerprint:  # kept native code (gpmodel/native.py), else numba's module
            mod.expand  # (retable, called only when the table grows, is resolved then)
        else:
            mod.numba_module()
    meter.note(phase="search (compiled core)")
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
    ctl = np.zeros(CTL_FP_SIZE if fingerprint else CTL_SIZE, dtype=np.int64)
    ctl[CTL_DEADLOCK] = -1

    init_keys = np.array([packed.pack(x) for x in cm.initial_states()], dtype=np.int64).reshape(-1, words)
    cap = INITIAL_CAPACITY
    while cap < 2 * (len(init_keys) + ninst):
        cap *= 2
    rows = _reserved_rows(cap, (0 if fingerprint else 8 * words) + 4 + 1 + (4 if fingerprint else 0))
    try:
        g = PackedGraph(packed, mod, np.zeros((cap if fingerprint else rows, words), dtype=np.int64),
                        np.empty(rows, dtype=np.int32), np.zeros(rows, dtype=np.uint8), np.zeros(2 * cap, dtype=np.int64),
                        0, via=np.empty(rows, dtype=np.int32) if fingerprint else None)
    except MemoryError:  # no overcommit (vm.overcommit_memory=2): start small and double
        rows = cap
        g = PackedGraph(packed, mod, np.zeros((cap, words), dtype=np.int64), np.empty(cap, dtype=np.int32),
                        np.zeros(cap, dtype=np.uint8), np.zeros(2 * cap, dtype=np.int64), 0,
                        via=np.empty(cap, dtype=np.int32) if fingerprint else None)
    if fingerprint:
        g.cm = cm
    res = Search({}, complete=False, pruned=False, depth=0, stop_reason=None, fired=[0] * len(cm.instances))

    start = time.monotonic()
    max_states = -1 if limits.max_states is None else limits.max_states
    step: _sequential | _parallel | _fingerprints
    if fingerprint:
        step = _fingerprints(mod, g, ninst)
    else:
        step = _sequential(mod, ninst) if workers <= 1 else _parallel(mod, cm, packed, workers, auto)
    status = RUNNING
    meter.begin("explicit", "compiled core")
    while status == RUNNING or status == GROW:
        if status == GROW:
            if fingerprint:
                _grow_fingerprints(g, ctl, step.room)
            else:
                _grow(g, int(ctl[CTL_N]), int(ctl[CTL_N]) + step.room)
        status = step(init_keys, g.states, g.parent, g.table, g.flags, ctl, fired, want_inv, inv_first, inv_bad,
                      want_tr, tr_first, tr_bad, check_deadlock, max_states, BUDGET, s, t, w, out, iids, err)
        if fingerprint and g.roots is None:
            _keep_roots(g, ctl)
        elapsed = time.monotonic() - start
        meter.note(states=int(ctl[CTL_N]), depth=int(ctl[CTL_DEPTH]), frontier=int(ctl[CTL_N] - ctl[CTL_CUR]))
        if limits.progress is not None:
            limits.progress(int(ctl[CTL_N]), int(ctl[CTL_DEPTH]), int(ctl[CTL_N] - ctl[CTL_CUR]), elapsed)
        if status == RUNNING and limits.timeout is not None and elapsed > limits.timeout:
            res.stop_reason = f"timeout after {limits.timeout:g} s (every state to depth {int(ctl[CTL_DEPTH])} checked)"
            break
        if status == RUNNING and budget.stopped():  # SIGINT/SIGTERM, --max-memory (checker/core/budget.py)
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
            src = _keep_path(res, g, int(si))
            nxt = g.state(int(ti)) if ti >= 0 else cm.step(int(iid), src)  # fingerprints: no target number
            assert isinstance(nxt, tuple)
            res.transition_cex[k] = (src, int(iid), nxt)
    if ctl[CTL_DEADLOCK] >= 0:
        res.deadlock = _keep_path(res, g, int(ctl[CTL_DEADLOCK]))
    return res, g


class _sequential:
    """One call of the sequential kernel `expand`; `room`: the states one call may add."""

    def __init__(self, mod: KernelModule, ninst: int):
        self.mod = mod
        self.room = ninst  # out: one row per instance

    def __call__(self, *args: object) -> int:
        return int(self.mod.expand(*args))


PARALLEL_ROWS = 1 << 18  # successor rows of one parallel chunk (chunk states x instances)
PARALLEL_CHUNK = 1 << 16  # at most this many states a chunk
PARALLEL_MIN = 512  # fewer unexpanded states than this: expanded by the sequential kernel (a
# launch on every thread costs more than it saves, and a deep, narrow search has one per level)
AUTO_MIN_CORES = 4  # --workers auto: fewer idle cores than this, one thread (measured: on 2 cores
# shared with other work, 2 threads were slower than one; on 16 idle cores, 16 were 4.2x faster)
AUTO_MAX_WORKERS = 16  # --workers auto: at most this many threads (the most measured)
AUTO_COLD_FRONTIER = 100_000  # --workers auto, parallel kernels not compiled yet: the frontier at
# which compiling them (seconds, once per model and constants) starts to pay


def auto_workers() -> int:
    """The threads `--workers auto` uses: the cores this process may run on, less the load
    average (cores busy with other work), at most AUTO_MAX_WORKERS; 1 when fewer than
    AUTO_MIN_CORES are left. A choice of speed only: every worker count gives the same
    states, numbers and results (NOTE(parallel-bfs))."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        busy = int(os.getloadavg()[0] + 0.5)
    except (AttributeError, OSError):
        busy = 0
    idle = min(cores, AUTO_MAX_WORKERS, max(1, cores - busy))
    return idle if idle >= AUTO_MIN_CORES else 1


class _parallel:
    """The chunk loop of the parallel search (NOTE(parallel-bfs) in gpmodel/jit_parallel.py):
    called as the sequential `expand`, with the same results. Frontiers smaller than
    `min_frontier` are expanded by the sequential kernel; the threads start with the first
    parallel chunk (so a small model never starts them)."""

    def __init__(self, mod: KernelModule, cm: CompiledModel, packed: PackedLayout, workers: int, auto: bool = False):
        self.mod = mod
        self.workers = workers
        self.threads = 0  # started at the first parallel chunk
        self.min_frontier = PARALLEL_MIN
        if auto and not has_machine_code(mod, "chunk_successors"):
            self.min_frontier = max(PARALLEL_MIN, AUTO_COLD_FRONTIER)
        ninst = max(1, len(cm.instances))
        self.chunk = max(1, min(PARALLEL_CHUNK, PARALLEL_ROWS // ninst))
        rows = self.room = self.chunk * ninst
        ninv, ntr = max(1, len(cm.model.invariants)), max(1, len(cm.model.transitions))
        self.pout = np.zeros((rows, packed.words), dtype=np.int64)
        self.poiids = np.zeros(rows, dtype=np.int64)
        self.found = np.zeros(rows, dtype=np.int64)
        self.hashes = np.zeros(rows, dtype=np.uint64)
        self.ebad = np.zeros((rows, ntr), dtype=np.uint8)
        self.ibad = np.zeros((rows, ninv), dtype=np.uint8)
        self.inside = np.zeros(rows, dtype=np.uint8)
        self.cnt = np.zeros(self.chunk, dtype=np.int64)
        self.dead = np.zeros(self.chunk, dtype=np.uint8)
        self.bad = np.zeros(self.chunk, dtype=np.uint8)
        local = 1
        while local < 2 * rows:
            local *= 2
        self.local = np.zeros(local, dtype=np.int64)  # merge_chunk's table of the chunk's new keys
        self.gen = 0  # its generation: one per chunk
        self.newrows = np.zeros(rows, dtype=np.int64)
        self.newtags = np.zeros(rows, dtype=np.int64)
        self.deferred = np.zeros(rows, dtype=np.uint8)

    def __call__(self, init_keys: np.ndarray, states: np.ndarray, parent: np.ndarray, table: np.ndarray,
                 flags: np.ndarray, ctl: np.ndarray, fired: np.ndarray, want_inv: np.ndarray, inv_first: np.ndarray,
                 inv_bad: np.ndarray, want_tr: np.ndarray, tr_first: np.ndarray, tr_bad: np.ndarray,
                 check_deadlock: bool, max_states: int, budget: int, *scratch: np.ndarray) -> int:
        mod = self.mod
        seq = (init_keys, states, parent, table, flags, ctl, fired, want_inv, inv_first, inv_bad, want_tr, tr_first,
               tr_bad, check_deadlock, max_states)
        if ctl[CTL_STARTED] == 0:  # the initial states, on one thread
            status = int(mod.expand(*seq, 0, *scratch))
            if status != RUNNING:
                return status
        cap = min(states.shape[0], (table.shape[0] * MAX_LOAD_PERCENT) // 100)
        done = 0
        while done < budget:
            n, cur = int(ctl[CTL_N]), int(ctl[CTL_CUR])
            if cur == ctl[CTL_LEVEL_END]:  # as in expand
                if ctl[CTL_NEXT_COUNT] == 0:
                    ctl[CTL_CUR] = ctl[CTL_LEVEL_END] = n
                    return DONE
                if cur > 0:
                    ctl[CTL_DEPTH] += 1
                ctl[CTL_LEVEL_END] = n
                ctl[CTL_NEXT_COUNT] = 0
            m = min(self.chunk, n - cur)  # stored states, possibly past the level's end
            if n - cur < self.min_frontier:
                status = int(mod.expand(*seq, m, *scratch))
                if status != RUNNING:
                    return status
                done += m
                continue
            if not self.threads:
                self.threads = int(mod.set_threads(self.workers))
            mod.chunk_successors(states, table, flags, cur, m, self.pout, self.poiids, self.cnt, self.found,
                                 self.hashes, self.ebad, self.ibad, self.inside, self.dead, self.bad, want_inv, want_tr,
                                 len(tr_bad), check_deadlock and ctl[CTL_DEADLOCK] < 0, 4 * self.threads)
            if self.bad[:m].any():  # a modelling error: the sequential kernel meets it in order
                return int(mod.expand(*seq, m, *scratch))
            rows = int(self.cnt[:m].sum())
            if n + rows > cap:
                return GROW
            self.gen += 1
            local = 1 << 10
            while local < 2 * rows:  # the chunk-private table: small enough to stay in cache
                local *= 2
            status = int(mod.merge_chunk(parent, flags, ctl, fired, inv_first, tr_first, len(tr_bad),
                                         len(inv_bad), check_deadlock, max_states, m, self.pout, self.poiids,
                                         self.cnt, self.found, self.hashes, self.ebad, self.ibad, self.inside,
                                         self.dead, self.local[:local], self.gen, self.newrows))
            mod.insert_new(states, table, self.pout, self.hashes, self.newrows, self.newtags,
                           int(ctl[CTL_N]) - n, n, self.threads, self.deferred)
            if status != RUNNING:
                return status
            done += m
        return RUNNING


class _fingerprints:
    """One call of `expand_fp` (gpmodel/jit_fingerprint.py), with `via` and the capacity."""

    def __init__(self, mod: KernelModule, g: PackedGraph, ninst: int):
        self.mod, self.g = mod, g
        self.room = ninst

    def __call__(self, init_keys: np.ndarray, win: np.ndarray, parent: np.ndarray, table: np.ndarray,
                 flags: np.ndarray, ctl: np.ndarray, fired: np.ndarray, *rest: object) -> int:
        before, after = rest[:9], rest[9:]  # want_inv .. budget | scratch
        return int(self.mod.expand_fp(init_keys, win, parent, self.g.via, table, flags, ctl, fired, *before,
                                      len(parent), *after))


def _keep_roots(g: PackedGraph, ctl: np.ndarray) -> None:
    """Fingerprints: keep the keys of the initial states (numbers 0.., parent -1) once they
    are all stored and before the window moves past them."""
    n = int(ctl[CTL_N])
    if n == 0 or ctl[CTL_STARTED] == 0:
        return
    assert ctl[CTL_BASE] == 0
    roots = int(np.argmax(g.parent[:n] >= 0)) if (g.parent[:n] >= 0).any() else n
    g.roots = g.states[:roots].copy()


def _grow_fingerprints(g: PackedGraph, ctl: np.ndarray, room: int) -> None:
    """Fingerprints: move the window to the first unexpanded state and widen it, grow the
    per-state arrays and the fingerprint table, so that `room` more states fit."""
    n, cur, base = int(ctl[CTL_N]), int(ctl[CTL_CUR]), int(ctl[CTL_BASE])
    if g.roots is None:
        _keep_roots(g, ctl)
    live = g.states[cur - base:n - base]
    rows = g.states.shape[0]
    while (n - cur) + room > rows // 2:
        rows *= 2
    if rows != g.states.shape[0]:
        win = np.zeros((rows, g.states.shape[1]), dtype=np.int64)
        win[:n - cur] = live
        g.states = win
    elif cur > base:
        g.states[:n - cur] = live.copy()
    ctl[CTL_BASE] = cur
    if n + room > g.parent.shape[0]:
        cap = 2 * g.parent.shape[0]
        while cap < n + room:
            cap *= 2
        for name, dtype in (("parent", np.int32), ("via", np.int32), ("flags", np.uint8)):
            old = getattr(g, name)
            new = np.zeros(cap, dtype=dtype)
            new[:n] = old[:n]
            setattr(g, name, new)
    if (n + room) * 100 > g.table.shape[0] * MAX_LOAD_PERCENT:
        size = 2 * g.table.shape[0]
        while (n + room) * 100 > size * MAX_LOAD_PERCENT:
            size *= 2
        table = np.zeros(size, dtype=np.int64)
        g.module.fp_rehash(g.table, table)
        g.table = table


def collision_probability(g: PackedGraph, generated: int) -> dict[str, float]:
    """TLC's two estimates of the probability that a fingerprint search missed a state because
    two distinct states had the same fingerprint: "calculated (optimistic)" n * (g - n) / 2**64
    for n distinct and g generated states, and "based on the actual fingerprints" 1 / (the
    smallest distance between two stored fingerprints). Sorts the fingerprint table in place
    (the search is over)."""
    n = g.n
    calculated = n * max(0, generated - n) / 2.0 ** 64
    gap = int(g.module.min_gap(g.table)) if n > 1 else 0
    actual = 1.0 / gap if gap > 0 else 0.0
    return {"calculated": calculated, "actual": actual}


def _reserved_rows(cap: int, row_bytes: int) -> int:
    """How many states the per-state arrays are made for at first: RESERVE_STATES (halved while
    they would take more than a quarter of the physical memory), at least `cap`. Their pages
    are filled in storing order and the kernel maps a page only when it is first written, so
    a reservation costs no memory; it saves the copies (old and new array at once) that
    doubling would make."""
    try:
        phys = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return cap
    rows = RESERVE_STATES
    while rows > cap and rows * row_bytes > phys // 4:
        rows //= 2
    return max(cap, rows)


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
        old, g.table = g.table, np.zeros(size, dtype=np.int64)
        g.module.retable(old, g.table)  # from the tags alone, in order (gpmodel/jit_kernels.retable)
        del old


def _keep_path(res: Search, g: PackedGraph, i: int) -> State:
    """Record the BFS path to state i in `res.parent` (state -> parent state); its last state."""
    prev: State | None = None
    for st in g.path_states(i):
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
    """The explored graph as CSR arrays, read through the interface of checker/engines/explicit/liveness.py."""

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


def _rebuild_exact(cm: CompiledModel, g: PackedGraph) -> None:
    """Fingerprints: rebuild every state's packed key (replaying `via` from the roots) and an
    exact table of them, for liveness, which needs the whole graph."""
    assert g.roots is not None
    words = g.packed.words
    states = np.zeros((max(1, g.n), words), dtype=np.int64)
    ninst = max(1, len(cm.instances))
    scratch = np.zeros(max(1, cm.model.slot_total), dtype=np.int64)
    g.module.rebuild_states(g.roots, g.parent, g.via, g.n, states, scratch, scratch.copy(),
                            np.zeros((ninst, words), dtype=np.int64), np.zeros(ninst, dtype=np.int64),
                            np.zeros(1, dtype=np.int64))
    size = 1 << 16
    while g.n * 100 > size * MAX_LOAD_PERCENT:
        size *= 2
    g.table = np.empty(0, dtype=np.int64)  # the fingerprints are no longer needed
    g.table = np.zeros(size, dtype=np.int64)
    g.module.rehash(states, g.n, g.table)
    g.states, g.via = states, None


def liveness_results(cm: CompiledModel, res: Search, g: PackedGraph, wanted: set[str]) -> list[Result]:
    """Liveness on the compact graph (checker/engines/explicit/liveness.py explains the method): SCCs, fairness
    and reachability in compiled code over CSR edge arrays; only the counterexample lasso is
    built in Python, through the same code as the Python engine's."""
    props = [p for p in cm.model.liveness if p.name in wanted]
    if not props or not res.complete:
        return liveness.verdicts(cm.model, res, props, lambda p: None)
    try:
        return _liveness_checks(cm, res, g, props)
    except MissedState as missed:
        return [Result(p.name, "liveness", Verdict.UNKNOWN, ENGINE, reason=str(missed)) for p in props]
    except budget.Stop as stop:  # a signal, --timeout or --max-memory: the safety results of the search stand
        return [Result(p.name, "liveness", Verdict.UNKNOWN, ENGINE, reason=stop.text) for p in props]


def _liveness_checks(cm: CompiledModel, res: Search, g: PackedGraph, props: list[liveness.ir.Liveness]) -> list[Result]:
    """The liveness verdicts of `liveness_results`; the budget is checked between compiled
    passes (each one runs to its end: the kernels do not poll), raising `Stop`."""
    budget.check()
    graph = _csr_graph(cm, res, g)
    mod, n = g.module, g.n
    offsets, targets, edge_iids = graph.offsets, graph.targets, graph.iids
    scratch = np.zeros(max(1, cm.model.slot_total), dtype=np.int64)
    err = np.zeros(1, dtype=np.int64)
    fair = np.array([inst.action.fair for inst in cm.instances] or [False], dtype=np.uint8)
    fair_set = {i for i, inst in enumerate(cm.instances) if inst.action.fair}
    notq = np.zeros(n, dtype=np.uint8)
    accept = np.zeros(n, dtype=np.uint8)
    comp = np.zeros(n, dtype=np.int32)
    reach = np.zeros(n, dtype=np.uint8)
    is_initial = g.parent[:n] < 0

    def find(p: liveness.ir.Liveness) -> Counterexample | None:
        budget.check()
        which = cm.model.liveness.index(p)
        bad = -1
        for lo, hi in _chunks(n):
            bad = mod.live_marks(g.states, g.flags, lo, hi, which, notq, scratch, err)
            if bad >= 0:
                break
        if bad >= 0:
            cm.predicate(p.q)(g.state(bad))  # raises the modelling error, as the Python engine does
            raise AssertionError("the compiled engine flagged a modelling error that Python does not raise")
        ctl, work = np.zeros(6, dtype=np.int64), np.zeros(5 * n, dtype=np.int32)
        onstack, count, taken = np.zeros(n, np.uint8), np.zeros(len(fair), np.int64), np.zeros(len(fair), np.uint8)
        while True:  # resumable, the budget checked between calls (see _chunks)
            budget.check()
            if mod.fair_sccs(n, offsets, targets, edge_iids, notq, fair, accept, comp, work, onstack, count, taken,
                             ctl, SCC_STEPS) >= 0:
                break
        if not accept.any():
            return None
        budget.check()
        mod.can_reach_accepting(n, offsets, targets, notq, accept, reach,
                                np.zeros(2 * n + 1 + len(targets), dtype=np.int32))
        if p.kind is liveness.ir.LivenessKind.EVENTUALLY:
            starts = np.flatnonzero(reach.astype(bool) & is_initial)
            start = int(starts[0]) if len(starts) else -1
        elif p.kind is liveness.ir.LivenessKind.ALWAYS_EVENTUALLY:
            starts = np.flatnonzero(reach)
            start = int(starts[0]) if len(starts) else -1
        else:
            start, bad = -1, -1
            for lo, hi in _chunks(n):
                first, bad = mod.leads_to_start(g.states, lo, hi, which, reach, scratch, err)
                if bad >= 0:
                    break
                if start < 0:
                    start = first
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
class MissedState(Exception):
    """The fingerprint search missed a state (a collision): the graph is not the model's."""


CHUNK_STATES = 1 << 16  # states per call of a graph kernel: the budget is checked between calls
SCC_STEPS = 1 << 20  # search steps per call of the SCC kernel, likewise


def _chunks(n: int) -> Iterator[tuple[int, int]]:
    """Consecutive state ranges covering 0..n-1 (one empty range when n is 0), the budget
    checked before each: a kernel holds the GIL and does not poll, and one pass over millions
    of states takes tens of seconds (cwsr at 6.5M states: 35 s to build the edges), during
    which neither a signal nor the watchdog could act (`budget.check` raises `Stop`)."""
    lo = 0
    while True:
        budget.check()
        hi = min(n, lo + CHUNK_STATES)
        yield lo, hi
        if hi >= n:
            return
        lo = hi


def _csr_graph(cm: CompiledModel, res: Search, g: PackedGraph) -> "_CsrGraph":
    """The explored graph's edges as CSR arrays, built in compiled code. With fingerprints the
    exact keys are rebuilt first; a successor that shared a fingerprint raises MissedState.
    Built once per search (kept in `g.csr`): liveness and latencies read the same arrays."""
    if g.csr is not None:
        return g.csr
    if g.via is not None:
        _rebuild_exact(cm, g)
    n = g.n
    edges = int(sum(res.fired))
    offsets = np.zeros(n + 1, dtype=np.int64)
    targets = np.zeros(max(1, edges), dtype=np.int32)
    edge_iids = np.zeros(max(1, edges), dtype=np.int32)
    ninst = max(1, len(cm.instances))
    out = np.zeros((ninst, g.packed.words), dtype=np.int64)
    scratch = np.zeros(max(1, cm.model.slot_total), dtype=np.int64)
    err = np.zeros(1, dtype=np.int64)
    s, w, iids = scratch.copy(), scratch.copy(), np.zeros(ninst, dtype=np.int64)
    built = 0
    for lo, hi in _chunks(n):
        built = g.module.build_edges(g.states, g.table, g.flags, lo, hi, offsets, targets, edge_iids, s, w, out,
                                     iids, err)
        if built < 0:
            break
    if built < 0 and g.via is not None:  # a successor is not stored: it shared a fingerprint
        raise MissedState("a fingerprint collision made the search miss a state; run without --fingerprint")
    if built != edges:
        raise AssertionError("the compiled engine's edge count differs from its search")
    g.csr = _CsrGraph(g, offsets, targets, edge_iids)
    return g.csr

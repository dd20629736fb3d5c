"""`--device cuda`: the compiled explicit core's breadth-first search with the successor function,
the visited set and the predicates on a GPU (NOTE(device-bfs) in gpmodel/cuda_kernels.py).

The C text comes from the typed IR through gpmodel/cuda_source.py; it runs on one of two
backends with the same driver below:
  * `CudaBackend`: nvcc through CuPy's RawModule, arrays in device memory;
  * `HostBackend`: the same text built by the host C compiler, each kernel a loop over its
    thread indexes, arrays in numpy. It runs in the default test run (no GPU there), so the
    generated C and the level algorithm are checked against the CPU cores on every machine.

Safety only: invariants, deadlock and `range` (modelling errors). The states are numbered as the
sequential core numbers them, so state counts, depth, verdicts and counterexamples are the
compiled core's. Transition properties and liveness are checked afterwards on the
edges (latencies: the zone engine, checker/api/untimed_latency.py), built on the device (checker/engines/explicit/device_graph.py). When the visited set outgrows the device's
memory (or `max_bytes`), the search stops and the properties it did not refute are `unknown
(device memory)`."""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from gpcheck.gpmodel import CompiledModel, State
from gpcheck.gpmodel.cuda_kernels import (
    EV_DEADLOCK, EV_EXPAND, EV_FULL, EV_STATE, EV_TERMINAL, EVENTS, NO_EVENT,
)
from gpcheck.gpmodel.cuda_source import Untranslatable, device_source
from gpcheck.gpmodel.jit import packed_layout
from gpcheck.gpmodel.int_range import fits_int64
from gpcheck.gpmodel.jit_kernels import FAULT_EXPAND, FAULT_STATE, FAULT_TERMINAL
from gpcheck.gpmodel.packed import PackedLayout
from gpcheck.checker.core import budget
from gpcheck.checker.core import progress as meter
from gpcheck.checker.engines.explicit.explicit import ENGINE, Limits, Search

DEVICE_MEMORY = "device memory"  # the word in a stop reason (the verdicts: unknown (device memory))
CHUNK_ROWS = 1 << 23  # candidate rows of one chunk (states x instances), bounds the scratch arrays
HOST_CHUNK_ROWS = 1 << 14  # the host build's (tests, small models)
START_STATES = 1 << 20  # the per-state arrays' first capacity; doubled (on the device) as needed
BLOCK = 256
TABLE_LOAD = 0.7  # the visited set's table is at most this full (linear probing)


class DeviceUnavailable(Exception):
    """No CUDA device (or no CuPy) here: `--device cuda` cannot run."""


def unsupported(cm: CompiledModel, wanted: set[str]) -> str | None:
    """Why the device core cannot check `wanted` on this model, or None."""
    model = cm.model
    if model.has_time:
        return "the spec is timed (only the zone engine decides it)"
    if packed_layout(cm) is None:
        return "a state variable has an unbounded type"
    if not fits_int64(model):
        return "an expression may compute integers beyond 64 bits"
    states, steps = cm.fallible(wanted)
    if states or steps:
        return "a property, constraint or terminal predicate can fail to evaluate (a dynamic index or a division)"
    return None


# ---------------------------------------------------------------------------- backends
class HostBackend:
    """The device C built by the host compiler (`cc`), arrays in numpy: the default test run's
    check of the generated code and of the level algorithm, and a way to read what a kernel
    does with a debugger."""

    xp = np

    def __init__(self, source: str):
        cc = shutil.which(os.environ.get("CC", "cc"))
        if cc is None:
            raise DeviceUnavailable("no host C compiler (cc) to build the device code with")
        digest = hashlib.sha256(source.encode()).hexdigest()[:24]
        self._dir = tempfile.TemporaryDirectory(prefix="gpcheck-dev-")
        src = Path(self._dir.name) / f"m{digest}.c"
        lib = src.with_suffix(".so")
        src.write_text(source)
        done = subprocess.run([cc, "-O1", "-shared", "-fPIC", "-w", "-o", str(lib), str(src)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"the host build of the device code failed:\n{done.stderr[-2000:]}")
        self._lib = ctypes.CDLL(str(lib))

    def launch(self, name: str, count: int, *args: Any) -> None:
        conv = [ctypes.c_void_p(a.ctypes.data) if isinstance(a, np.ndarray) else ctypes.c_longlong(int(a)) for a in args]
        getattr(self._lib, name)(*conv)

    @staticmethod
    def get(a: Any) -> np.ndarray:
        return np.asarray(a)

    @staticmethod
    def peak_bytes() -> int:
        return 0

    @staticmethod
    def release() -> None:
        """Nothing cached to give back (numpy)."""

    @staticmethod
    def free_bytes() -> int:
        return 1 << 62


class CudaBackend:
    """The device C built by nvcc (CuPy's RawModule), arrays in device memory."""

    def __init__(self, source: str):
        try:
            import cupy  # noqa: PLC0415 - only where a GPU search runs
        except ImportError as e:
            raise DeviceUnavailable("--device cuda needs CuPy (pip install cupy-cuda12x) and an NVIDIA GPU") from e
        try:
            if cupy.cuda.runtime.getDeviceCount() < 1:
                raise DeviceUnavailable("--device cuda: no CUDA device found")
        except cupy.cuda.runtime.CUDARuntimeError as e:
            raise DeviceUnavailable(f"--device cuda: no usable CUDA device ({e})") from e
        self.xp = cupy
        self._mod = cupy.RawModule(code=source, options=("-std=c++14",))
        self._peak = 0

    def launch(self, name: str, count: int, *args: Any) -> None:
        if count <= 0:
            return
        fn = self._mod.get_function(name)
        conv = tuple(a if isinstance(a, self.xp.ndarray) else np.int64(int(a)) for a in args)
        fn(((count + BLOCK - 1) // BLOCK,), (BLOCK,), conv)
        pool = self.xp.get_default_memory_pool()
        self._peak = max(self._peak, pool.total_bytes())

    def get(self, a: Any) -> np.ndarray:
        return self.xp.asnumpy(a)

    def peak_bytes(self) -> int:
        return self._peak

    def release(self) -> None:
        """Give CuPy's cached free blocks back to the device (after the arrays grew), so that
        the next, larger allocation finds the memory and the peak counts what is in use."""
        self.xp.get_default_memory_pool().free_all_blocks()

    def free_bytes(self) -> int:
        free, _ = self.xp.cuda.runtime.memGetInfo()
        return int(free + self.xp.get_default_memory_pool().free_bytes())


def make_backend(device: str, source: str) -> HostBackend | CudaBackend:
    """`cuda` (CuPy, a GPU) or `host` (the host C compiler)."""
    return CudaBackend(source) if device == "cuda" else HostBackend(source)


# ---------------------------------------------------------------------------- the search
class _OutOfMemory(Exception):
    pass


class DeviceGraph:
    """What the device search stored, read back lazily: keys, parents, flags (on the backend)."""

    def __init__(self, be: HostBackend | CudaBackend, packed: PackedLayout, words: int):
        self.be, self.packed, self.words = be, packed, words
        xp = be.xp
        self.cap = 0
        self.keys = xp.zeros((0, words), dtype=xp.int64)
        self.parent = xp.zeros(0, dtype=xp.int32)
        self.flags = xp.zeros(0, dtype=xp.uint8)
        self.table = xp.zeros(2, dtype=xp.int64)
        self.n = 0

    def state(self, i: int) -> State:
        return self.packed.unpack(tuple(int(x) for x in self.be.get(self.keys[i])))

    def path(self, i: int) -> list[int]:
        out = [i]
        while True:
            p = int(self.be.get(self.parent[out[-1]:out[-1] + 1])[0])
            if p < 0:
                break
            out.append(p)
        out.reverse()
        return out

    def path_states(self, i: int) -> list[State]:
        return [self.state(k) for k in self.path(i)]

    start_states = START_STATES

    def held_bytes(self) -> int:
        """The visited set's device memory now: keys, parents, flags and the table."""
        return self.cap * (self.words * 8 + 4 + 1) + int(self.table.shape[0]) * 8

    def grow(self, need: int, max_bytes: int | None, chunk_rows: int) -> None:
        """Per-state arrays for at least `need` states and a table at most TABLE_LOAD full (with
        a chunk's candidates in it too); the table is rebuilt from the keys on the device. The
        arrays double, or take what `max_bytes` leaves when doubling does not fit."""
        if need <= self.cap:
            return
        row_bytes = self.words * 8 + 4 + 1

        def total(cap: int) -> int:
            return cap * row_bytes + _table_size(cap, chunk_rows) * 8

        cap = max(self.start_states, self.cap)
        while cap < need:
            cap *= 2
        if max_bytes is not None and total(cap) > max_bytes:
            most = int((max_bytes - _table_size(0, chunk_rows) * 8) / (row_bytes + 8 / TABLE_LOAD))
            if most < need:
                raise _OutOfMemory(f"{need:,} states would need {total(need) / 2**30:.2f} GiB "
                                   f"(limit {max_bytes / 2**30:.2f} GiB)")
            cap = most
        size = _table_size(cap, chunk_rows)
        xp = self.be.xp
        old = [a[:self.n] for a in (self.keys, self.parent, self.flags)]
        held = self.cap * row_bytes + self.table.shape[0] * 8
        if max_bytes is not None and self.n and held + total(cap) > max_bytes:
            # old and new arrays together do not fit: through host memory (a few seconds per
            # 10^9 states), so that the arrays can grow into nearly all of the device
            old = [self.be.get(a).copy() for a in old]
            self.keys = self.parent = self.flags = self.table = None  # type: ignore[assignment]
            self.be.release()
        try:
            keys = xp.zeros((cap, self.words), dtype=xp.int64)
            parent = xp.zeros(cap, dtype=xp.int32)
            flags = xp.zeros(cap, dtype=xp.uint8)
            for new, part in zip((keys, parent, flags), old):
                new[:self.n] = xp.asarray(part)
        except (MemoryError, _cuda_oom()) as e:
            keys = parent = flags = None
            if self.keys is None:  # staged: the states found so far back where they were
                self.be.release()
                self.keys, self.parent, self.flags = (xp.asarray(part) for part in old)
                self.cap = self.n
            raise _OutOfMemory(f"{cap:,} states did not fit ({type(e).__name__})") from e
        del old
        self.keys, self.parent, self.flags = keys, parent, flags  # the old ones freed
        self.table = None  # type: ignore[assignment]
        self.be.release()
        try:
            table = xp.zeros(size, dtype=xp.int64)
        except (MemoryError, _cuda_oom()) as e:
            raise _OutOfMemory(f"a table of {size:,} entries did not fit ({type(e).__name__})") from e
        self.table, self.cap = table, cap
        self.be.launch("rehash", self.n, self.keys, self.n, self.table, size)


def _table_size(cap: int, chunk_rows: int) -> int:
    """Table entries for `cap` states and one chunk's candidates at most TABLE_LOAD full."""
    return int((cap + chunk_rows) / TABLE_LOAD) + 1


def _cuda_oom() -> type[BaseException]:
    try:
        import cupy  # noqa: PLC0415

        return cupy.cuda.memory.OutOfMemoryError  # type: ignore[no-any-return]
    except ImportError:
        return MemoryError


class _Chunk:
    """The scratch arrays of one chunk (candidate rows)."""

    def __init__(self, be: HostBackend | CudaBackend, rows: int, words: int):
        xp = be.xp
        self.cand = xp.zeros((rows, words), dtype=xp.int64)
        self.iid = xp.full(rows, -1, dtype=xp.int64)
        self.res = xp.zeros(rows, dtype=xp.int64)
        self.pos = xp.zeros(rows, dtype=xp.int64)
        self.minc = xp.zeros(rows, dtype=xp.int64)
        self.first = xp.zeros(rows, dtype=xp.int64)


def search_arrays(be: Any, cm: CompiledModel, packed: PackedLayout, wanted: set[str], device: str,
                  chunk_rows: int | None, max_bytes: int | None) -> tuple:
    """What a device search (this one and device_compact's) sets up before its first level:
    (words, ninst, per_chunk, rows, max_bytes, want_inv, inv_first, events, check_deadlock,
    fired): the chunk of candidate rows, the memory cap (default: 85% of the device's free
    memory less a chunk's arrays), the invariants asked for and their first violations, the
    event slots, the deadlock switch and the per-instance fire counts."""
    model, xp = cm.model, be.xp
    words, ninst = packed.words, max(1, len(cm.instances))
    chunk_rows = chunk_rows or (CHUNK_ROWS if device == "cuda" else HOST_CHUNK_ROWS)
    per_chunk = max(1, chunk_rows // ninst)
    rows = per_chunk * ninst
    if max_bytes is None and device == "cuda":
        max_bytes = int(be.free_bytes() * 0.85) - rows * (words * 8 + 40)
    ninv = max(1, len(model.invariants))
    want_inv = xp.asarray(np.array([inv.name in wanted for inv in model.invariants] or [False], dtype=np.uint8))
    inv_first = xp.full(ninv, NO_EVENT, dtype=xp.int64)
    events = xp.full(EVENTS, NO_EVENT, dtype=xp.int64)
    events[EV_FULL] = 0
    check_deadlock = int("deadlock" in wanted and not model.allow_deadlock)
    fired = np.zeros(ninst, dtype=np.int64)
    return words, ninst, per_chunk, rows, max_bytes, want_inv, inv_first, events, check_deadlock, fired


def search(cm: CompiledModel, wanted: set[str], limits: Limits = Limits(), device: str = "cuda",
           max_bytes: int | None = None, chunk_rows: int | None = None) -> tuple[Search, DeviceGraph]:
    """Breadth-first search on `device` ("cuda", or "host": the same C on the CPU); the same
    `Search` as fast_explicit.search (parents kept on counterexample paths only). `max_bytes`
    caps the per-state arrays and the table (default: what the device has free)."""
    why = unsupported(cm, wanted)
    if why is not None:
        raise Untranslatable(why)
    packed = packed_layout(cm)
    assert packed is not None
    meter.note(engine=ENGINE, phase="compiling the model (device code)")
    be = make_backend(device, device_source(cm, packed))
    meter.note(phase=f"search ({device})")
    xp = be.xp
    words, ninst, per_chunk, rows, max_bytes, want_inv, inv_first, events, check_deadlock, fired = \
        search_arrays(be, cm, packed, wanted, device, chunk_rows, max_bytes)
    g = DeviceGraph(be, packed, words)
    g.ninst = ninst  # type: ignore[attr-defined]
    if device != "cuda":
        g.start_states = 1 << 10  # the host build: tests, small models
    res = Search({}, complete=False, pruned=False, depth=0, stop_reason=None, fired=[0] * len(cm.instances))
    start = time.monotonic()
    try:
        chunk = _Chunk(be, max(rows, len(cm.initial_states())), words)
        init = list(dict.fromkeys(packed.pack(s) for s in cm.initial_states()))
        g.grow(len(init) + rows, max_bytes, rows)
        cut = None
        if init:
            chunk.cand[:len(init)] = xp.asarray(np.array(init, dtype=np.int64).reshape(-1, words))
            chunk.iid[:len(init)] = 0
            cut = _insert(be, g, chunk, len(init), 0, 1, want_inv, inv_first, events)
        level_lo, level_hi = 0, g.n
        while cut is None:
            if int(xp.count_nonzero(g.flags[level_lo:level_hi])) == 0:
                res.complete = True
                break
            if level_lo > 0:
                res.depth += 1
            for lo in range(level_lo, level_hi, per_chunk):
                count = min(per_chunk, level_hi - lo)
                g.grow(g.n + count * ninst, max_bytes, rows)
                chunk.iid[:] = -1
                be.launch("expand", count, g.keys, g.flags, lo, count, chunk.cand, chunk.iid, check_deadlock, events)
                used = chunk.iid[:count * ninst]
                fired += be.get(xp.bincount(used[used >= 0], minlength=ninst))[:ninst]
                cut = _insert(be, g, chunk, count * ninst, lo, 0, want_inv, inv_first, events)
                if cut is not None:
                    break
                _poll(res, g, limits, start)
                if res.stop_reason is not None:
                    cut = -1
                    break
            level_lo, level_hi = level_hi, g.n
    except _OutOfMemory as e:
        res.stop_reason = (f"{DEVICE_MEMORY}: the visited set holds {g.n:,} states and cannot grow ({e}); "
                           f"every state to depth {res.depth} checked")
        cut = None
    res.fired = [int(x) for x in fired[: len(cm.instances)]]
    res.pruned = bool(g.n and int(xp.count_nonzero(g.flags[:g.n] == 0)))
    _results(cm, wanted, res, g, be.get(inv_first), be.get(events), cut)
    g.peak_bytes = be.peak_bytes()  # type: ignore[attr-defined]
    g.seconds = time.monotonic() - start  # type: ignore[attr-defined]
    return res, g


def _insert(be: HostBackend | CudaBackend, g: DeviceGraph, chunk: _Chunk, count: int, lo: int, root: int,
            want_inv: Any, inv_first: Any, events: Any) -> int | None:
    """Insert a chunk's candidate rows 0..count-1 and number the new states (NOTE(device-bfs)).
    Returns None, or the number of states the sequential core had found when it met the
    first modelling error of this chunk (the search ends there)."""
    xp = be.xp
    chunk.minc[:count] = NO_EVENT
    chunk.first[:count] = 0
    be.launch("insert", count, g.keys, g.table, g.table.shape[0], chunk.cand, chunk.iid, count,
              chunk.res, chunk.pos, chunk.minc, events)
    be.launch("mark", count, chunk.res, chunk.minc, count, chunk.first)
    numbered = xp.cumsum(chunk.first[:count])
    new = int(numbered[-1]) if count else 0
    n = g.n
    be.launch("finalize", count, g.keys, g.parent, g.flags, g.table, chunk.cand, chunk.res, chunk.pos,
              chunk.minc, numbered, count, n, lo, root, want_inv, inv_first, events)
    g.n = n + new
    ev = be.get(events)
    if ev[EV_FULL]:
        raise AssertionError("the device table overflowed (it is sized for the chunk)")
    firsts = [int(ev[k]) for k in (EV_EXPAND, EV_TERMINAL, EV_STATE)]
    if all(x == NO_EVENT for x in firsts):
        return None
    # the sequential core stops at the first error in its order (_first_fault)
    return _first_fault(be, g, chunk, lo, n, ev)


def _first_fault(be: HostBackend | CudaBackend, g: DeviceGraph, chunk: _Chunk, lo: int, n: int, ev: np.ndarray) -> int:
    """Which modelling error the sequential core meets first in this chunk, recorded in
    `events` as the only one; returns the number of states found before it (cut)."""
    xp = be.xp
    numbered = be.get(xp.cumsum(chunk.first))
    ninst = g.ninst  # type: ignore[attr-defined]

    def found_before(i: int) -> int:  # states numbered before state i is expanded
        row = (i - lo) * ninst
        return n + (int(numbered[row - 1]) if row > 0 else 0)

    best: tuple[int, int, int] | None = None  # (states found before it, event, state)
    for k in (EV_EXPAND, EV_TERMINAL):
        if ev[k] != NO_EVENT:
            cand = (found_before(int(ev[k])), k, int(ev[k]))
            best = cand if best is None or cand < best else best
    if ev[EV_STATE] != NO_EVENT:
        i = int(ev[EV_STATE])
        cand = (i + 1, EV_STATE, i)
        if best is None or cand[0] <= best[0]:
            best = cand
    assert best is not None
    cut, k, i = best
    host = np.full(EVENTS, NO_EVENT, dtype=np.int64)
    host[EV_FULL] = 0
    host[k] = i
    if ev[EV_DEADLOCK] != NO_EVENT and found_before(int(ev[EV_DEADLOCK])) <= cut and (
            k == EV_STATE or int(ev[EV_DEADLOCK]) <= i):
        host[EV_DEADLOCK] = ev[EV_DEADLOCK]
    g.fault_event = host  # type: ignore[attr-defined]
    return cut


def _poll(res: Search, g: DeviceGraph, limits: Limits, start: float) -> None:
    """The clock, the state limit, signals: a stop reason, as the CPU cores word it."""
    elapsed = time.monotonic() - start
    meter.note(states=g.n, depth=res.depth)
    if limits.progress is not None:
        limits.progress(g.n, res.depth, 0, elapsed)
    if limits.timeout is not None and elapsed > limits.timeout:
        res.stop_reason = f"timeout after {limits.timeout:g} s (every state to depth {res.depth} checked)"
    elif limits.max_states is not None and g.n > limits.max_states:
        res.stop_reason = f"state limit {limits.max_states} reached (every state to depth {res.depth} checked)"
    elif budget.stopped():
        res.stop_reason = f"{budget.stopped()} (every state to depth {res.depth} checked)"


def _results(cm: CompiledModel, wanted: set[str], res: Search, g: DeviceGraph, inv_first: np.ndarray,
             events: np.ndarray, cut: int | None) -> None:
    """Counterexample paths (from the device's parents) into `res`, as fast_explicit does."""
    from gpcheck.checker.engines.explicit.fast_explicit import _keep_path, _python_fault  # noqa: PLC0415

    limit = g.n
    if cut is not None and cut >= 0:
        events = g.fault_event  # type: ignore[attr-defined]
        limit = cut
        for k, status in ((EV_EXPAND, FAULT_EXPAND), (EV_TERMINAL, FAULT_TERMINAL), (EV_STATE, FAULT_STATE)):
            if events[k] != NO_EVENT:
                i = int(events[k])
                res.fault = _python_fault(cm, wanted, status, g.state(i))
                res.stop_reason = "the search stopped at a modelling error (see the range result)"
                _keep_path(res, g, i)  # type: ignore[arg-type]
    for k, i in enumerate(inv_first[: len(cm.model.invariants)]):
        if i != NO_EVENT and i < limit:
            res.invariant_cex[k] = _keep_path(res, g, int(i))  # type: ignore[arg-type]
    if events[EV_DEADLOCK] != NO_EVENT:
        res.deadlock = _keep_path(res, g, int(events[EV_DEADLOCK]))  # type: ignore[arg-type]

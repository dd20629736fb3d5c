"""`--device cuda` with a compact visited set (issue 35, item 3): the device search of
device_search.py, level by level in the same order (the same states, numbers, depth, verdicts
and counterexamples), but the visited set keeps no keys.

NOTE(compact-table): the full search keeps every state's packed words, its parent, a flag and a
table slot holding its number (about 38-40 bytes a state at 3 words). Here:
  * the table's slots hold the states themselves, Cleary-compressed (gpmodel/cuda_compact.py):
    E 64-bit words a slot, log2(size) bits less than the packed state, at most LOAD_MAX full;
  * each state keeps 5 bytes: the candidate row that first reached it (`parent * NINST + j`,
    40 bits: its parent's number and its place in the parent's successor order);
  * packed words are kept for two levels only (the one expanded and the one found), with
    their constraint flags;
  * a counterexample's states are rebuilt from an initial state by taking successor j of each
    state on the path (`one_succ`, the same generated code), so they are the full search's.
The edges for liveness, latency and transition properties need every state's words and
number: those runs keep the full layout (device_search.py); this one answers safety only."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from gpcheck.gpmodel import CompiledModel, State
from gpcheck.gpmodel.cuda_compact import STREAM0, quotient_word, used_bits
from gpcheck.gpmodel.cuda_kernels import EV_DEADLOCK, EV_EXPAND, EV_FULL, EV_STATE, EV_TERMINAL, EVENTS, NO_EVENT
from gpcheck.gpmodel.cuda_source import Untranslatable, device_source
from gpcheck.gpmodel.jit import packed_layout
from gpcheck.gpmodel.packed import PackedLayout
from gpcheck.checker.core import progress as meter
from gpcheck.checker.engines.explicit import device_search as ds
from gpcheck.checker.engines.explicit.explicit import ENGINE, Limits, Search

LOAD = 0.85  # the table grows past this load (GROWTH times; at least to this load)
LOAD_MAX = 0.92  # at the memory limit it fills up to this
GROWTH = 1.25  # each growth: re-homing is cheap on the device, the slack is memory
MAX_WORDS = 8  # an entry's words at most (MAXE in the C)
PARENT_BYTES = 5  # the first row that reached a state, 40 bits
ROOT_ROW = (1 << 40) - 1
START_SLOTS = 1 << 22
HOST_START_SLOTS = 1 << 8  # the host build: tests grow the table several times


def entry_words(packed: PackedLayout, size: int) -> tuple[int, int]:
    """(E, R0) for a table of `size` slots: the entry's 64-bit words and the quotient's bits
    (NOTE(compact-table))."""
    used = used_bits(packed)
    q = quotient_word(packed)
    r0 = (((1 << used[q]) - 1) // size).bit_length()
    stream = r0 + sum(u for k, u in enumerate(used) if k != q)
    return 1 + max(0, -(-(stream - STREAM0) // 64)), r0


def compact_supported(packed: PackedLayout) -> bool:
    """Whether the entries fit the kernels' MAXE words even in the smallest table."""
    return entry_words(packed, HOST_START_SLOTS)[0] <= MAX_WORDS


class CompactGraph:
    """What the compact search stored: the table, each state's first row, the last levels' words.
    `state(i)` and `path_states(i)` rebuild states along the parent chain on the backend."""

    compact = True

    def __init__(self, be: ds.HostBackend | ds.CudaBackend, packed: PackedLayout, ninst: int,
                 init: list[tuple[int, ...]], start_slots: int, max_bytes: int | None, rows: int):
        self.be, self.packed, self.words, self.ninst, self.init = be, packed, packed.words, ninst, init
        self.max_bytes, self.rows = max_bytes, rows
        xp = be.xp
        self.n = 0
        self.size = start_slots
        self.E, self.R0 = entry_words(packed, self.size)
        self.table = xp.zeros((self.size, self.E), dtype=xp.int64)
        self.pcap = 0
        self.pr_lo = xp.zeros(0, dtype=xp.uint32)
        self.pr_hi = xp.zeros(0, dtype=xp.uint8)
        self.fbase, self.fcap = 0, 0
        self.fkeys = xp.zeros((0, self.words), dtype=xp.int64)
        self.fflags = xp.zeros(0, dtype=xp.uint8)
        self._keys: dict[int, tuple[int, ...]] = {}
        self._one = None

    # ------------------------------------------------------------------ memory
    def held_bytes(self) -> int:
        return self.size * self.E * 8 + self.pcap * PARENT_BYTES + self.fcap * (self.words * 8 + 1)

    def bytes_per_state(self) -> float:
        """What the visited set holds per state now (table, first rows, the two levels' words)."""
        return self.held_bytes() / max(1, self.n)

    def entry_bytes(self) -> int:
        """A table slot's bytes now (E words): a state takes that over the load, and 5 more."""
        return self.E * 8

    def _fits(self, extra: int) -> bool:
        return self.max_bytes is None or self.held_bytes() + extra <= self.max_bytes

    def ensure(self, states: int, frontier: int) -> None:
        """Room for `states` states in the table (at most LOAD full) and their first rows, and
        `frontier` rows of words; raises ds._OutOfMemory when the limit does not allow it."""
        if frontier > self.fcap:
            self._grow_frontier(frontier)
        if states > LOAD * self.size:
            self.grow_table(states)
        if states > self.pcap:
            self._grow_parents(states)

    def _alloc(self, make: Any, what: str) -> Any:
        try:
            return make()
        except (MemoryError, ds._cuda_oom()) as e:
            raise ds._OutOfMemory(f"{what} did not fit ({type(e).__name__})") from e

    def _grow_frontier(self, need: int) -> None:
        xp = self.be.xp
        cap = max(need, int(self.fcap * GROWTH), 1 << 10)
        per = self.words * 8 + 1
        if not self._fits(cap * per):  # the old arrays stay until the new ones hold their rows
            cap = need
            if not self._fits(cap * per):
                raise ds._OutOfMemory(f"two levels of {need:,} states do not fit beside the table")
        used = min(self.fcap, max(0, self.n - self.fbase))
        keys = self._alloc(lambda: xp.zeros((cap, self.words), dtype=xp.int64), f"{cap:,} frontier states")
        flags = self._alloc(lambda: xp.zeros(cap, dtype=xp.uint8), f"{cap:,} frontier flags")
        keys[:used] = self.fkeys[:used]
        flags[:used] = self.fflags[:used]
        self.fkeys, self.fflags, self.fcap = keys, flags, cap
        self.be.release()

    def _grow_parents(self, need: int) -> None:
        xp = self.be.xp
        cap = max(need, int(self.pcap * GROWTH))
        if not self._fits((cap - self.pcap) * PARENT_BYTES):
            cap = need
        old = (self.pr_lo[:self.n], self.pr_hi[:self.n])
        if not self._fits((cap - self.pcap) * PARENT_BYTES + self.pcap * PARENT_BYTES):
            old = tuple(self.be.get(a).copy() for a in old)  # type: ignore[assignment]
            self.pr_lo = self.pr_hi = None  # type: ignore[assignment]
            self.be.release()
            if not self._fits((cap - self.pcap) * PARENT_BYTES):
                raise ds._OutOfMemory(f"the parents of {cap:,} states do not fit")
        lo = self._alloc(lambda: xp.zeros(cap, dtype=xp.uint32), f"parents of {cap:,} states")
        hi = self._alloc(lambda: xp.zeros(cap, dtype=xp.uint8), f"parents of {cap:,} states")
        lo[:self.n] = xp.asarray(old[0])
        hi[:self.n] = xp.asarray(old[1])
        self.pr_lo, self.pr_hi, self.pcap = lo, hi, cap
        self.be.release()

    def grow_table(self, states: int) -> None:
        """A larger table (GROWTH times, or what the limit allows), every entry re-homed on the
        device from its home and quotient (`rehash_c`); through host memory when the old and
        the new table do not fit together."""
        xp = self.be.xp
        size = max(int(self.size * GROWTH), int(states / LOAD) + 1)
        if self.max_bytes is not None:
            others = self.held_bytes() - self.size * self.E * 8
            most = int((self.max_bytes - others) / (8 * entry_words(self.packed, size)[0] + LOAD_MAX * PARENT_BYTES))
            if most <= self.size and states <= LOAD_MAX * self.size:
                return  # the table stays, filled up to LOAD_MAX
            size = min(size, most)
            if states > LOAD_MAX * size:
                raise ds._OutOfMemory(f"{states:,} states need a table of {int(states / LOAD_MAX):,} slots "
                                      f"(the limit allows {max(0, most):,})")
        E, R0 = entry_words(self.packed, size)
        old, old_size, old_E, old_R0 = self.table, self.size, self.E, self.R0
        self.be.release()  # the pool's cached blocks (earlier levels' words) back first
        staged = not self._fits(size * E * 8)
        table = None
        if not staged:
            try:
                table = xp.zeros((size, E), dtype=xp.int64)
            except (MemoryError, ds._cuda_oom()):
                staged = True  # the accounting fitted, the device did not: through the host then
        if staged:  # the old table through host memory, re-homed in pieces
            old = self.be.get(old).copy()
            self.table = None  # type: ignore[assignment]
            self.be.release()
            table = self._alloc(lambda: xp.zeros((size, E), dtype=xp.int64), f"a table of {size:,} slots")
        events = xp.zeros(EVENTS, dtype=xp.int64)
        step = old_size if not staged else max(1, self.rows * 8)
        for base in range(0, old_size, step):
            part = old[base:base + step] if not staged else xp.asarray(old[base:base + step])
            self.be.launch("rehash_c", part.shape[0], part, base, part.shape[0], old_size, old_E, old_R0,
                           table, size, E, R0, events)
        if self.be.get(events)[EV_FULL]:
            raise ds._OutOfMemory("an entry lies farther than DMAX from its home (the table is too full)")
        del old
        self.table, self.size, self.E, self.R0 = table, size, E, R0
        self.be.release()

    def shift_frontier(self, base: int) -> None:
        """States from `base` on (the level just found) to the front of the level arrays, a
        piece at a time (a piece's copy is the only scratch)."""
        keep, off = self.n - base, base - self.fbase
        step = max(1, self.rows)
        for a in range(0, keep, step):
            b = min(keep, a + step)
            self.fkeys[a:b] = self.fkeys[off + a:off + b].copy()
            self.fflags[a:b] = self.fflags[off + a:off + b].copy()
        self.fbase = base

    # ------------------------------------------------------------------ paths
    def first_row(self, i: int) -> int:
        lo = int(self.be.get(self.pr_lo[i:i + 1])[0])
        hi = int(self.be.get(self.pr_hi[i:i + 1])[0])
        return (hi << 32) | lo

    def path(self, i: int) -> list[int]:
        out = [i]
        while True:
            row = self.first_row(out[-1])
            if row == ROOT_ROW:
                break
            out.append(row // self.ninst)
        out.reverse()
        return out

    def _successor(self, key: tuple[int, ...], j: int) -> tuple[int, ...]:
        xp = self.be.xp
        if self._one is None:
            self._one = (xp.zeros((1, self.words), dtype=xp.int64), xp.zeros((self.ninst, self.words), dtype=xp.int64),
                         xp.full(self.ninst, -1, dtype=xp.int64), xp.full(EVENTS, NO_EVENT, dtype=xp.int64))
        src, cand, iid, events = self._one
        src[0] = xp.asarray(np.array(key, dtype=np.int64))
        self.be.launch("one_succ", 1, src, cand, iid, events)
        return tuple(int(x) for x in self.be.get(cand[j]))

    def key(self, i: int) -> tuple[int, ...]:
        """State i's packed words, rebuilt along its path from an initial state."""
        if i in self._keys:
            return self._keys[i]
        path = self.path(i)
        key = self.init[path[0]]
        for child in path[1:]:
            if child in self._keys:
                key = self._keys[child]
                continue
            key = self._successor(key, self.first_row(child) % self.ninst)
            self._keys[child] = key
        self._keys[i] = key
        return key

    def state(self, i: int) -> State:
        return self.packed.unpack(self.key(i))

    def path_states(self, i: int) -> list[State]:
        return [self.state(k) for k in self.path(i)]


def search(cm: CompiledModel, wanted: set[str], limits: Limits = Limits(), device: str = "cuda",
           max_bytes: int | None = None, chunk_rows: int | None = None,
           start_slots: int | None = None) -> tuple[Search, CompactGraph]:
    """The device search of device_search.search with the compact visited set
    (NOTE(compact-table)): the same `Search`; safety properties only (no transition
    properties: their edges need the full layout). `start_slots`: the table's first size
    (tests: a small one grows several times)."""
    why = ds.unsupported(cm, wanted)
    if why is not None:
        raise Untranslatable(why)
    model = cm.model
    if any(tp.name in wanted for tp in model.transitions):
        raise ValueError("the compact device search checks no transition properties (device_search.search does)")
    packed = packed_layout(cm)
    assert packed is not None
    if not compact_supported(packed):
        raise Untranslatable(f"a state of {packed.words} words is too wide for the compact table")
    meter.note(engine=ENGINE, phase="compiling the model (device code)")
    be = ds.make_backend(device, device_source(cm, packed))
    meter.note(phase=f"search ({device}, compact)")
    xp = be.xp
    words, ninst, per_chunk, rows, max_bytes, want_inv, inv_first, events, check_deadlock, fired = \
        ds.search_arrays(be, cm, packed, wanted, device, chunk_rows, max_bytes)
    init = list(dict.fromkeys(packed.pack(s) for s in cm.initial_states()))
    res = Search({}, complete=False, pruned=False, depth=0, stop_reason=None, fired=[0] * len(cm.instances))
    start = time.monotonic()
    first = start_slots or (START_SLOTS if device == "cuda" else HOST_START_SLOTS)
    g = CompactGraph(be, packed, ninst, init, first, max_bytes, rows)
    run = _Run(be, g, want_inv, inv_first, events)
    pruned = 0
    cut: int | None = None
    level_lo = 0
    try:
        run.chunk = ds._Chunk(be, max(rows, len(init)), words)
        g.ensure(len(init) + rows, len(init) + rows)
        if init:
            run.chunk.cand[:len(init)] = xp.asarray(np.array(init, dtype=np.int64).reshape(-1, words))
            run.chunk.iid[:len(init)] = 0
            cut = run.insert(len(init), 0, 1)
        level_lo, level_hi = 0, g.n
        while cut is None:
            level = g.fflags[level_lo - g.fbase:level_hi - g.fbase]
            if int(xp.count_nonzero(level)) == 0:
                res.complete = True
                break
            if level_lo > 0:
                res.depth += 1
            for lo in range(level_lo, level_hi, per_chunk):
                count = min(per_chunk, level_hi - lo)
                g.ensure(g.n + count * ninst, g.n - g.fbase + count * ninst)
                run.chunk.iid[:] = -1
                be.launch("expand", count, g.fkeys, g.fflags, lo - g.fbase, count, run.chunk.cand, run.chunk.iid,
                          check_deadlock, events)
                used = run.chunk.iid[:count * ninst]
                fired += be.get(xp.bincount(used[used >= 0], minlength=ninst))[:ninst]
                cut = run.insert(count * ninst, lo, 0)
                if cut is not None:
                    break
                ds._poll(res, g, limits, start)  # type: ignore[arg-type]
                if res.stop_reason is not None:
                    cut = -1
                    break
            if cut is not None:
                break
            # the expanded level's words are not needed again: the next level moves to the front
            level = g.fflags[level_lo - g.fbase:level_hi - g.fbase]
            pruned += int(xp.count_nonzero(level == 0))
            g.shift_frontier(level_hi)
            level_lo, level_hi = level_hi, g.n
    except ds._OutOfMemory as e:
        res.stop_reason = (f"{ds.DEVICE_MEMORY}: the visited set holds {g.n:,} states and cannot grow ({e}); "
                           f"every state to depth {res.depth} checked")
        cut = None
    res.fired = [int(x) for x in fired[: len(cm.instances)]]
    tail = g.fflags[max(0, level_lo - g.fbase):g.n - g.fbase] if g.n > g.fbase else g.fflags[:0]
    res.pruned = bool(pruned or int(xp.count_nonzero(tail == 0)))
    host_events = be.get(events).copy()
    host_events[EV_DEADLOCK] = NO_EVENT if run.deadlock is None else run.deadlock
    ds._results(cm, wanted, res, g, be.get(inv_first), host_events, cut)  # type: ignore[arg-type]
    g.peak_bytes = be.peak_bytes()  # type: ignore[attr-defined]
    g.seconds = time.monotonic() - start  # type: ignore[attr-defined]
    return res, g


class _Run:
    """One chunk's insertion into the compact table (NOTE(device-bfs), NOTE(compact-table))."""

    def __init__(self, be: ds.HostBackend | ds.CudaBackend, g: CompactGraph, want_inv: Any, inv_first: Any,
                 events: Any):
        self.be, self.g, self.want_inv, self.inv_first, self.events = be, g, want_inv, inv_first, events
        self.chunk: ds._Chunk
        self.deadlock: int | None = None  # the first deadlock's state number

    def insert(self, count: int, lo: int, root: int) -> int | None:
        """Insert candidate rows 0..count-1 (states lo.. expanded them) and number the new
        states; None, or where the sequential core met this chunk's first modelling error."""
        be, g, c, xp = self.be, self.g, self.chunk, self.be.xp
        while True:
            c.minc[:count] = NO_EVENT
            c.first[:count] = 0
            be.launch("insert_c", count, c.cand, c.iid, count, g.table, g.size, g.E, g.R0, c.res, c.pos, c.minc,
                      self.events)
            if not int(be.get(self.events[EV_FULL:EV_FULL + 1])[0]):
                break
            # a probe ran past DMAX: take the chunk's claims back, grow, insert again
            be.launch("unclaim_c", count, g.table, g.E, c.res, c.pos, count)
            self.events[EV_FULL] = 0
            g.grow_table(int(g.size / LOAD) + 1)
        be.launch("mark", count, c.res, c.minc, count, c.first)
        numbered = xp.cumsum(c.first[:count])
        new = int(numbered[-1]) if count else 0
        n = g.n
        be.launch("finalize_c", count, g.fkeys, g.fflags, g.fbase, g.pr_lo, g.pr_hi, g.table, g.size, g.E, g.R0,
                  c.cand, c.res, c.pos, c.minc, numbered, count, n, lo, root, self.want_inv, self.inv_first,
                  self.events)
        g.n = n + new
        ev = be.get(self.events).copy()
        for k in (EV_EXPAND, EV_TERMINAL, EV_DEADLOCK):  # `expand` numbered them in the level's words
            if ev[k] != NO_EVENT and not root:
                ev[k] += g.fbase
        if ev[EV_DEADLOCK] != NO_EVENT:
            if self.deadlock is None:
                self.deadlock = int(ev[EV_DEADLOCK])
            self.events[EV_DEADLOCK] = NO_EVENT
        if all(ev[k] == NO_EVENT for k in (EV_EXPAND, EV_TERMINAL, EV_STATE)):
            return None
        ev[EV_DEADLOCK] = NO_EVENT if self.deadlock is None else self.deadlock
        return ds._first_fault(be, g, c, lo, n, ev)  # type: ignore[arg-type]

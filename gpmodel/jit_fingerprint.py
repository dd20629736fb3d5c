"""Kernels of the compiled explicit engine with 64-bit fingerprints instead of exact keys
(`--fingerprint`), as numba source appended to each model's generated module (gpmodel/jit.py).

NOTE(fingerprint-bfs): the visited set holds only each state's 64-bit fingerprint (the hash of
its packed key, 0 replaced by 1; 0 marks an empty slot) in an open-addressing table with linear
probing. Full packed keys are kept only for the states not yet expanded, in a window `win`
whose row 0 is state number ctl[CTL_BASE] (the caller moves the window forward as the search
advances). Every state keeps its BFS parent and the instance that reached it (`via`), so any
state is rebuilt from its initial state by replaying those instances: counterexamples are real
behaviours even if two states shared a fingerprint, which only makes the search miss states
(the probability is reported as TLC does, checker/engines/explicit/fast_explicit.py). States are numbered in
the same BFS order as with exact keys (NOTE(packed-bfs)), so without a collision everything
(counts, verdicts, counterexamples) is the same."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpcheck.gpmodel.jit_kernels import CONSTANTS, CTL_SIZE
from gpcheck.gpmodel.kernel_source import kernel_source

if TYPE_CHECKING:  # the kernels run only inside the generated modules, which import numpy as np
    import numpy as np

CTL_BASE = CTL_SIZE  # the state number of the window's row 0
CTL_FP_SIZE = CTL_SIZE + 1


def fingerprint(row):  # pragma: no cover - compiled
    """The 64-bit fingerprint of a packed key, never 0 (as int64 bits)."""
    h = hash_row(row)  # noqa: F821
    if h == np.uint64(0):
        h = np.uint64(1)
    return np.int64(h)


def fp_insert(table, fp):  # pragma: no cover - compiled
    """Insert fingerprint `fp`; whether it was new."""
    mask = table.shape[0] - 1
    pos = fp & mask
    while True:
        e = table[pos]
        if e == 0:
            table[pos] = fp
            return True
        if e == fp:
            return False
        pos = (pos + 1) & mask


def fp_rehash(old, table):  # pragma: no cover - compiled
    """Insert every fingerprint of table `old` into the empty `table`."""
    for k in range(old.shape[0]):
        if old[k] != 0:
            fp_insert(table, old[k])
    return 0


def expand_fp(init_keys, win, parent, via, table, flags, ctl, fired, want_inv, inv_first, inv_bad, want_tr, tr_first,
              tr_bad, check_deadlock, max_states, budget, cap, s, t, w, out, iids, err):  # pragma: no cover - compiled
    """`expand` of gpmodel/jit_kernels.py over fingerprints (NOTE(fingerprint-bfs)): the same
    order, counts, first violations and faults; tr_first[x, 2] is not set (the target is
    rebuilt from the source and the instance). GROW when the window, the per-state arrays
    (`cap` states) or the table are full."""
    base = ctl[CTL_BASE]
    if ctl[CTL_STARTED] == 0:  # noqa: F821
        ctl[CTL_STARTED] = 1  # noqa: F821
        for r in range(init_keys.shape[0]):
            n = ctl[CTL_N]  # noqa: F821
            if not fp_insert(table, fingerprint(init_keys[r])):
                continue
            for k in range(init_keys.shape[1]):
                win[n - base, k] = init_keys[r, k]
            parent[n] = -1
            via[n] = -1
            ctl[CTL_N] = n + 1  # noqa: F821
            unpack(win, n - base, s)  # noqa: F821
            inside = state_preds(s, want_inv, inv_bad, err)  # noqa: F821
            for x in range(inv_bad.shape[0]):
                if inv_bad[x] and inv_first[x] < 0:
                    inv_first[x] = n
                inv_bad[x] = 0
            if err[0]:
                ctl[CTL_EVENT_STATE] = n  # noqa: F821
                return FAULT_STATE  # noqa: F821
            if inside:
                flags[n] = 1
                ctl[CTL_NEXT_COUNT] += 1  # noqa: F821
            else:
                ctl[CTL_PRUNED] = 1  # noqa: F821
    n = ctl[CTL_N]  # noqa: F821
    cur = ctl[CTL_CUR]  # noqa: F821
    level_end = ctl[CTL_LEVEL_END]  # noqa: F821
    next_count = ctl[CTL_NEXT_COUNT]  # noqa: F821
    room = out.shape[0]
    cap = min(cap, (table.shape[0] * MAX_LOAD_PERCENT) // 100)  # noqa: F821
    rows = win.shape[0]
    has_trans = tr_bad.shape[0] > 0
    done = 0
    status = RUNNING  # noqa: F821
    while True:
        if cur == level_end:
            if next_count == 0:
                cur = n
                level_end = n
                status = DONE  # noqa: F821
                break
            if cur > 0:
                ctl[CTL_DEPTH] += 1  # noqa: F821
            level_end = n
            next_count = 0
        if done >= budget:
            break
        if n + room > cap or n - base + room > rows:
            status = GROW  # noqa: F821
            break
        if flags[cur] == 0:
            cur += 1
            continue
        key = win[cur - base]
        k = succ(key, s, w, out, iids, err)  # noqa: F821
        if k < 0:
            ctl[CTL_EVENT_STATE] = cur  # noqa: F821
            status = FAULT_EXPAND  # noqa: F821
            break
        if has_trans or (k == 0 and check_deadlock and ctl[CTL_DEADLOCK] < 0):  # noqa: F821
            unpack(win, cur - base, s)  # noqa: F821
        if k == 0 and check_deadlock and ctl[CTL_DEADLOCK] < 0:  # noqa: F821
            if not terminal(s, err):  # noqa: F821
                ctl[CTL_DEADLOCK] = cur  # noqa: F821
            if err[0]:
                ctl[CTL_EVENT_STATE] = cur  # noqa: F821
                status = FAULT_TERMINAL  # noqa: F821
                break
        for j in range(k):
            fired[iids[j]] += 1
            if has_trans:
                unpack(out, j, t)  # noqa: F821
                transitions(s, t, want_tr, tr_bad, err)  # noqa: F821
                if err[0]:
                    ctl[CTL_EVENT_STATE] = cur  # noqa: F821
                    status = FAULT_TRANS  # noqa: F821
                    break
            new = fp_insert(table, fingerprint(out[j]))
            if has_trans:
                for x in range(tr_bad.shape[0]):
                    if tr_bad[x] and tr_first[x, 0] < 0:
                        tr_first[x, 0] = cur
                        tr_first[x, 1] = iids[j]
                    tr_bad[x] = 0
            if not new:
                continue
            i = n
            for q in range(out.shape[1]):
                win[i - base, q] = out[j, q]
            parent[i] = cur
            via[i] = iids[j]
            n += 1
            unpack(out, j, t)  # noqa: F821
            inside = state_preds(t, want_inv, inv_bad, err)  # noqa: F821
            for x in range(inv_bad.shape[0]):
                if inv_bad[x] and inv_first[x] < 0:
                    inv_first[x] = i
                inv_bad[x] = 0
            if err[0]:
                ctl[CTL_EVENT_STATE] = i  # noqa: F821
                status = FAULT_STATE  # noqa: F821
                break
            if inside:
                flags[i] = 1
                next_count += 1
            else:
                ctl[CTL_PRUNED] = 1  # noqa: F821
        if status != RUNNING:  # noqa: F821
            break
        cur += 1
        done += 1
        if max_states >= 0 and n > max_states:
            status = LIMIT  # noqa: F821
            break
    ctl[CTL_N] = n  # noqa: F821
    ctl[CTL_CUR] = cur  # noqa: F821
    ctl[CTL_LEVEL_END] = level_end  # noqa: F821
    ctl[CTL_NEXT_COUNT] = next_count  # noqa: F821
    return status


def rebuild_states(succ, roots, parent, via, n, states, s, w, out, iids, err):  # pragma: no cover - compiled
    """The packed key of every state 0..n-1 into `states`, replaying from `roots` (the keys of
    the initial states, in their numbers) the instance `via[i]` from state parent[i] (< i)."""
    for i in range(n):
        if parent[i] < 0:
            for q in range(states.shape[1]):
                states[i, q] = roots[i, q]
            continue
        k = succ(states[parent[i]], s, w, out, iids, err)  # noqa: F821
        for j in range(k):
            if iids[j] == via[i]:
                for q in range(states.shape[1]):
                    states[i, q] = out[j, q]
                break
    return 0


def min_gap(table):  # pragma: no cover - compiled
    """Sort `table` (in place, as unsigned 64-bit numbers) and return the smallest distance
    between two of its nonzero entries (2**64 - 1 if fewer than two): TLC's measure of how
    close the fingerprints came to colliding."""
    u = table.view(np.uint64)
    u.sort()
    best = np.uint64(0xFFFFFFFFFFFFFFFF)
    prev = np.uint64(0)
    have = False
    for k in range(u.shape[0]):
        x = u[k]
        if x == np.uint64(0):
            continue
        if have and x - prev < best:
            best = x - prev
        prev = x
        have = True
    return best


def source() -> str:
    """The fingerprint search kernel as source for a model module (after the graph kernels and
    the shared ones, which hold the other fingerprint kernels: gpmodel/jit_shared.py)."""
    parts = [f"{name} = {value}" for name, value in CONSTANTS.items()]
    parts.append(f"CTL_BASE = {CTL_BASE}")
    parts.append("\n@njit(cache=True)\n" + kernel_source(expand_fp))
    return "\n".join(parts)

"""The parallel breadth-first search kernels of the compiled explicit engine (`--workers N`),
as numba source of the module shared by every model (gpmodel/jit_shared.py: the model's
functions are arguments of `chunk_successors`), beside the sequential kernels of
gpmodel/jit_kernels.py whose storage they share (NOTE(packed-bfs)).

NOTE(parallel-bfs): the stored states not yet expanded are cut into chunks of consecutive
states (a chunk may run past the end of a BFS level: those states are all stored). For one chunk,
`chunk_successors` runs on every worker thread (numba `prange` over blocks of the chunk) and
computes everything that reads only the state and the table as it was before the chunk: each
state's successors (written to fixed rows, `ninst` per state), the deadlock test, transition
properties on every edge, each successor's hash and its index if already stored, and for the
successors not yet stored their invariants, constraints and terminal predicates. Then
the chunk is merged on one thread, in the sequential order: the same
`fired` counts, the same numbers for the new states (so the same parents and BFS order), the
same first violations (`merge_chunk`). That pass reads the chunk's rows in order and touches
no large array at random: successors that were new before the chunk are told apart through a
small table private to the chunk. The new states are then stored and entered into the main
hash table on every thread (`insert_new`: each thread owns a range of slots). The result is therefore identical to
the sequential `expand`, state for state. A chunk in which any evaluation hits a modelling
error commits nothing: it is run again by the sequential `expand`, which stops at the very
error the sequential search meets. The loop over chunks is checker/engines/explicit/fast_explicit.py's `_parallel`."""

from __future__ import annotations

from typing import TYPE_CHECKING


if TYPE_CHECKING:  # the kernels run only inside the generated modules, which import numpy as np
    import numpy as np


def chunk_successors(succ, unpack_row, terminal, transitions, state_preds, states, table, flags, cur, m, out, oiids,
                     cnt, found, hashes, ebad, ibad, inside, dead, bad, want_inv, want_tr, ntr, check_deadlock, nblocks,
                     nslots):  # pragma: no cover - compiled
    """For the states cur..cur+m-1 (a = 0..m-1): cnt[a] successors in rows a*ninst.. of `out`
    (instances in `oiids`), dead[a] = 1 if it has none and is not terminal, bad[a] = 1 if an
    evaluation failed (then its other entries are not to be read); per successor row r:
    hashes[r], found[r] (its stored index, or -1 - the empty table slot where it would go), ebad[r, x] (transition property x fails on the
    edge); for a successor not stored yet ibad[r, x] (invariant x fails) and inside[r]."""
    ninst = oiids.shape[0] // cnt.shape[0]
    words = states.shape[1]
    per = (m + nblocks - 1) // nblocks
    for b in prange(nblocks):  # noqa: F821
        # every array a thread makes views of is its own: views of shared arrays would count
        # references on one shared cache line from every thread
        s = np.zeros(nslots, np.int64)
        t = np.zeros(nslots, np.int64)
        w = np.zeros(nslots, np.int64)
        key = np.zeros(words, np.int64)
        lout = np.zeros((ninst, words), np.int64)
        liids = np.zeros(ninst, np.int64)
        err = np.zeros(1, np.int64)
        tbad = np.zeros(max(1, ntr), np.uint8)
        vbad = np.zeros(ibad.shape[1], np.uint8)
        lo = b * per
        hi = min(m, lo + per)
        for a in range(lo, hi):
            cnt[a] = 0
            dead[a] = 0
            bad[a] = 0
        for a in range(lo, hi):
            i = cur + a
            if flags[i] == 0:
                continue
            for q in range(words):
                key[q] = states[i, q]
            k = succ(key, s, w, lout, liids, err)  # noqa: F821
            if k < 0:
                bad[a] = 1
                break
            cnt[a] = k
            if ntr > 0 or (k == 0 and check_deadlock):
                unpack_row(key, s)  # noqa: F821
            if k == 0 and check_deadlock:
                if not terminal(s, err):  # noqa: F821
                    dead[a] = 1
                if err[0]:
                    bad[a] = 1
                    break
            base = a * ninst
            for j in range(k):
                r = base + j
                row = lout[j]
                for q in range(words):
                    out[r, q] = row[q]
                oiids[r] = liids[j]
                if ntr > 0:
                    unpack_row(row, t)  # noqa: F821
                    transitions(s, t, want_tr, tbad, err)  # noqa: F821
                    for x in range(ntr):
                        ebad[r, x] = tbad[x]
                        tbad[x] = 0
                    if err[0]:
                        break
                h = hash_row(row)  # noqa: F821
                hashes[r] = h
                pos, x = probe(states, table, row, h)  # noqa: F821
                found[r] = x if x >= 0 else -1 - pos  # absent: where it would go
                if x < 0:  # maybe a new state: its predicates, as the merge may store it
                    unpack_row(row, t)  # noqa: F821
                    inside[r] = 1 if state_preds(t, want_inv, vbad, err) else 0  # noqa: F821
                    for y in range(vbad.shape[0]):
                        ibad[r, y] = vbad[y]
                        vbad[y] = 0
                    if err[0]:
                        break
            if err[0]:
                bad[a] = 1
                break
    return 0


def merge_chunk(parent, flags, ctl, fired, inv_first, tr_first, ntr, ninv, check_deadlock, max_states,
                m, pout, poiids, cnt, found, hashes, ebad, ibad, inside, dead, local, gen, newrows):  # pragma: no cover
    """Merge the chunk of the m states from ctl[CTL_CUR] on, which `chunk_successors` expanded,
    in the order of the sequential `expand` (same numbers, counts and first violations); the
    room for every successor is there. A successor not stored before the chunk (found[r] < 0)
    is looked up in `local`, a table private to this chunk (entries (gen << 32) | (r + 1) of
    the first row with that key: older generations count as empty, so it is never cleared): the
    first row with a new key is stored as state n (found[r] becomes n), the later ones get that
    number. Neither `states` nor the main table is written here: newrows[j] is the row of new
    state n0 + j, which `insert_new` stores and enters on every thread. RUNNING, DONE or LIMIT;
    ctl updated."""
    n = ctl[CTL_N]  # noqa: F821
    cur = ctl[CTL_CUR]  # noqa: F821
    level_end = ctl[CTL_LEVEL_END]  # noqa: F821
    next_count = ctl[CTL_NEXT_COUNT]  # noqa: F821
    n0 = n
    ninst = poiids.shape[0] // cnt.shape[0]
    words = pout.shape[1]
    lmask = local.shape[0] - 1
    status = RUNNING  # noqa: F821
    for a in range(m):
        if cur == level_end:  # a BFS level ends inside the chunk: as in expand
            if next_count == 0:
                cur = n
                level_end = n
                status = DONE  # noqa: F821
                break
            ctl[CTL_DEPTH] += 1  # noqa: F821
            level_end = n
            next_count = 0
        i = cur
        if flags[i] == 0:
            cur += 1
            continue
        k = cnt[a]
        if k == 0 and check_deadlock and ctl[CTL_DEADLOCK] < 0 and dead[a]:  # noqa: F821
            ctl[CTL_DEADLOCK] = i  # noqa: F821
        base = a * ninst
        for j in range(k):
            r = base + j
            fired[poiids[r]] += 1
            x = found[r]
            if x < 0:  # new before the chunk: the first row with this key in the chunk?
                h = hashes[r]
                pos = np.int64(h & np.uint64(lmask))
                while True:
                    e = local[pos]
                    if (e >> 32) != gen:  # empty in this chunk: r is the first
                        local[pos] = (gen << 32) | (r + 1)
                        x = n
                        found[r] = n
                        break
                    r0 = (e & 0xFFFFFFFF) - 1
                    if hashes[r0] == h:
                        same = True
                        for q in range(words):
                            if pout[r0, q] != pout[r, q]:
                                same = False
                                break
                        if same:
                            x = found[r0]
                            break
                    pos = (pos + 1) & lmask
            for y in range(ntr):
                if ebad[r, y] and tr_first[y, 0] < 0:
                    tr_first[y, 0] = i
                    tr_first[y, 1] = poiids[r]
                    tr_first[y, 2] = x
            if x != n:
                continue
            newrows[n - n0] = r
            parent[n] = i
            n += 1
            for y in range(ninv):
                if ibad[r, y] and inv_first[y] < 0:
                    inv_first[y] = x
            if inside[r]:
                flags[x] = 1
                next_count += 1
            else:
                ctl[CTL_PRUNED] = 1  # noqa: F821
        cur += 1
        if max_states >= 0 and n > max_states:
            status = LIMIT  # noqa: F821
            break
    ctl[CTL_N] = n  # noqa: F821
    ctl[CTL_CUR] = cur  # noqa: F821
    ctl[CTL_LEVEL_END] = level_end  # noqa: F821
    ctl[CTL_NEXT_COUNT] = next_count  # noqa: F821
    return status


def insert_new(states, table, pout, hashes, newrows, newtags, nnew, n0, nparts, deferred):  # pragma: no cover
    """Store the new states n0 .. n0+nnew-1 (state n0 + j is row newrows[j] of `pout`; no two
    with the same key, none in the table yet) and enter them into the main table, on every
    thread. First each thread copies a range of them into `states` (and their hash tags into
    `newtags`); then part p of the table owns the slots [p*per, (p+1)*per) and inserts, in
    order, the states whose probe starts there (`home`). A state whose probe would run past its
    part's last slot (into the next part's, or around the table's end) is deferred and
    inserted after all parts, on one thread. Linear probing stays valid (every slot between a
    key's home and its slot is full) and the layout is the same at any thread timing. Returns
    the number deferred."""
    words = pout.shape[1]
    each = (nnew + nparts - 1) // nparts
    for p in prange(nparts):  # noqa: F821
        for j in range(p * each, min(nnew, (p + 1) * each)):
            r = newrows[j]
            for q in range(words):
                states[n0 + j, q] = pout[r, q]
            newtags[j] = np.int64(hashes[r] >> np.uint64(32))
    size = table.shape[0]
    mask = size - 1
    per = (size + nparts - 1) // nparts
    for p in prange(nparts):  # noqa: F821
        lo = p * per
        hi = min(size, lo + per)
        for j in range(nnew):
            tag = newtags[j]
            pos = home(tag, size)  # noqa: F821
            if pos < lo or pos >= hi:
                continue
            deferred[j] = 0
            while pos < hi and table[pos] != 0:
                pos += 1
            if pos == hi:
                deferred[j] = 1
            else:
                table[pos] = ((n0 + j + 1) << 32) | tag
    late = 0
    for j in range(nnew):
        if deferred[j]:
            tag = newtags[j]
            pos = home(tag, size)  # noqa: F821
            while table[pos] != 0:
                pos = (pos + 1) & mask
            table[pos] = ((n0 + j + 1) << 32) | tag
            late += 1
    return late


def set_threads(n):  # pragma: no cover - runs in the generated module
    """Use n worker threads (at most numba's NUMBA_NUM_THREADS); the number in use."""
    import numba

    numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))
    return numba.get_num_threads()

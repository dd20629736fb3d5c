"""The breadth-first search kernels of the compiled explicit engine, as numba source.

These functions are not called here: their source goes into generated modules (gpmodel/jit.py)
and is compiled there by numba. GRAPH_KERNELS (hash set, SCCs, reachability) form one module
shared by every model; MODEL_KERNELS are appended to each model's module, where its `unpack`,
`succ`, `state_preds`, `transitions`, `terminal`, `live_q` and `live_p` are defined. Driven by
checker/engines/explicit/fast_explicit.py.

Storage (NOTE(packed-bfs)): `states[i]` is the packed key of state i; states are numbered in
discovery order, which is breadth-first order, so a BFS level is a contiguous index range and
no queue is needed. `parent[i]` is the index of i's BFS parent (-1 for an initial state).
`table` is an open-addressing hash set of state indexes (linear probing, at most MAX_LOAD
full; see find_or_insert). `flags[i]` is 1 when state i lies inside the constraints (is expanded).
`ctl` holds the search position between calls: see the CTL_* names."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpcheck.gpmodel.kernel_source import kernel_source

if TYPE_CHECKING:  # the kernels run only inside the generated modules, which import numpy as np
    import numpy as np

# ctl slots
CTL_N, CTL_CUR, CTL_LEVEL_END, CTL_DEPTH, CTL_PRUNED, CTL_DEADLOCK, CTL_NEXT_COUNT, CTL_EVENT_STATE, CTL_STARTED = range(9)
CTL_SIZE = 9
MAX_LOAD_PERCENT = 70

# what a call of `expand` ended with
RUNNING, DONE, GROW, FAULT_EXPAND, FAULT_STATE, FAULT_TRANS, FAULT_TERMINAL, LIMIT = range(8)


def hash_row(row):  # pragma: no cover - compiled
    h = np.uint64(0x9E3779B97F4A7C15)
    for i in range(row.shape[0]):
        x = h ^ np.uint64(row[i])
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        h = x ^ (x >> np.uint64(31))
    return h


def home(tag, size):  # pragma: no cover - compiled
    """The table slot where probing for a key whose hash has the high 32 bits `tag` starts:
    tag * size / 2**32, which keeps the table ordered by tag (the slot grows with the tag), so
    that `retable` can move entries into a larger table from their tags alone, in one pass."""
    return np.int64((np.uint64(tag) * np.uint64(size)) >> np.uint64(32))


def probe(states, table, row, h):  # pragma: no cover - compiled
    """(table position, state index) of key `row` with hash `h`: the index is -1 and the
    position the empty slot where it would go when the key is absent. A table entry is
    ((index + 1) << 32) | the hash's high 32 bits (its tag), 0 when empty, so most probes that
    miss are decided by that tag without reading `states`; probing starts at `home(tag)`."""
    mask = table.shape[0] - 1
    tag = np.int64(h >> np.uint64(32))
    pos = home(tag, table.shape[0])
    words = row.shape[0]
    while True:
        e = table[pos]
        if e == 0:
            return pos, -1
        if (e & 0xFFFFFFFF) == tag:
            i = (e >> 32) - 1
            same = True
            for k in range(words):
                if states[i, k] != row[k]:
                    same = False
                    break
            if same:
                return pos, i
        pos = (pos + 1) & mask


def find_or_insert(states, table, row, n):  # pragma: no cover - compiled
    """The index of the state with key `row`, inserting it as number `n` (returned) if new."""
    h = hash_row(row)
    pos, i = probe(states, table, row, h)
    if i >= 0:
        return i
    table[pos] = ((n + 1) << 32) | np.int64(h >> np.uint64(32))
    for k in range(row.shape[0]):
        states[n, k] = row[k]
    return n


def rehash(states, n, table):  # pragma: no cover - compiled
    """Fill an empty (all 0) table with states 0..n-1."""
    mask = table.shape[0] - 1
    for i in range(n):
        h = hash_row(states[i])
        tag = np.int64(h >> np.uint64(32))
        pos = home(tag, table.shape[0])
        while table[pos] != 0:
            pos = (pos + 1) & mask
        table[pos] = ((i + 1) << 32) | tag
    return 0


def retable(old, table):  # pragma: no cover - compiled
    """Move every entry of `old` into the empty (all 0), larger `table`. An entry's slot
    follows from its tag (`home`) and `old` is ordered by tag, so this reads `old` once in order
    and writes `table` nearly in order: no key is read and no hash computed again (rehashing
    from the keys reads them all and writes the table at random)."""
    mask = table.shape[0] - 1
    size = table.shape[0]
    for a in range(old.shape[0]):
        e = old[a]
        if e == 0:
            continue
        pos = home(e & 0xFFFFFFFF, size)
        while table[pos] != 0:
            pos = (pos + 1) & mask
        table[pos] = e
    return 0


def expand(init_keys, states, parent, table, flags, ctl, fired, want_inv, inv_first, inv_bad, want_tr, tr_first,
           tr_bad, check_deadlock, max_states, budget, s, t, w, out, iids, err):  # pragma: no cover - compiled
    """Expand states in BFS order until done, an event, `budget` expansions, or full arrays.
    The first call inserts the initial states (`init_keys`) and evaluates their predicates.
    CTL_NEXT_COUNT counts the expandable states of the level being built, [level_end, n)."""
    if ctl[CTL_STARTED] == 0:
        ctl[CTL_STARTED] = 1
        for r in range(init_keys.shape[0]):
            n = ctl[CTL_N]
            i = find_or_insert(states, table, init_keys[r], n)
            if i != n:
                continue
            parent[n] = -1
            ctl[CTL_N] = n + 1
            unpack(states, n, s)  # noqa: F821
            inside = state_preds(s, want_inv, inv_bad, err)  # noqa: F821
            for x in range(inv_bad.shape[0]):
                if inv_bad[x] and inv_first[x] < 0:
                    inv_first[x] = n
                inv_bad[x] = 0
            if err[0]:
                ctl[CTL_EVENT_STATE] = n
                return FAULT_STATE
            if inside:
                flags[n] = 1
                ctl[CTL_NEXT_COUNT] += 1
            else:
                ctl[CTL_PRUNED] = 1
    n = ctl[CTL_N]
    cur = ctl[CTL_CUR]
    level_end = ctl[CTL_LEVEL_END]
    next_count = ctl[CTL_NEXT_COUNT]
    room = out.shape[0]
    cap = min(states.shape[0], (table.shape[0] * MAX_LOAD_PERCENT) // 100)
    has_trans = tr_bad.shape[0] > 0
    done = 0
    status = RUNNING
    while True:
        if cur == level_end:  # a BFS level is finished (at cur == 0: the initial states begin)
            if next_count == 0:
                cur = n
                level_end = n
                status = DONE
                break
            if cur > 0:
                ctl[CTL_DEPTH] += 1
            level_end = n
            next_count = 0
        if done >= budget:
            break
        if n + room > cap:
            status = GROW
            break
        if flags[cur] == 0:
            cur += 1
            continue
        key = states[cur]
        k = succ(key, s, w, out, iids, err)  # noqa: F821
        if k < 0:
            ctl[CTL_EVENT_STATE] = cur
            status = FAULT_EXPAND
            break
        if has_trans or (k == 0 and check_deadlock and ctl[CTL_DEADLOCK] < 0):
            unpack(states, cur, s)  # noqa: F821
        if k == 0 and check_deadlock and ctl[CTL_DEADLOCK] < 0:
            if not terminal(s, err):  # noqa: F821
                ctl[CTL_DEADLOCK] = cur
            if err[0]:
                ctl[CTL_EVENT_STATE] = cur
                status = FAULT_TERMINAL
                break
        for j in range(k):  # the successors' table slots requested together: their cache misses overlap
            _prefetch(table, home(np.int64(hash_row(out[j]) >> np.uint64(32)), table.shape[0]))  # noqa: F821
        for j in range(k):
            fired[iids[j]] += 1
            if has_trans:
                unpack(out, j, t)  # noqa: F821
                transitions(s, t, want_tr, tr_bad, err)  # noqa: F821
                if err[0]:
                    ctl[CTL_EVENT_STATE] = cur
                    status = FAULT_TRANS
                    break
            i = find_or_insert(states, table, out[j], n)
            if has_trans:
                for x in range(tr_bad.shape[0]):
                    if tr_bad[x] and tr_first[x, 0] < 0:
                        tr_first[x, 0] = cur
                        tr_first[x, 1] = iids[j]
                        tr_first[x, 2] = i
                    tr_bad[x] = 0
            if i != n:
                continue
            parent[n] = cur
            n += 1
            unpack(states, i, t)  # noqa: F821
            inside = state_preds(t, want_inv, inv_bad, err)  # noqa: F821
            for x in range(inv_bad.shape[0]):
                if inv_bad[x] and inv_first[x] < 0:
                    inv_first[x] = i
                inv_bad[x] = 0
            if err[0]:
                ctl[CTL_EVENT_STATE] = i
                status = FAULT_STATE
                break
            if inside:
                flags[i] = 1
                next_count += 1
            else:
                ctl[CTL_PRUNED] = 1
        if status != RUNNING:
            break
        cur += 1
        done += 1
        if max_states >= 0 and n > max_states:
            status = LIMIT
            break
    ctl[CTL_N] = n
    ctl[CTL_CUR] = cur
    ctl[CTL_LEVEL_END] = level_end
    ctl[CTL_NEXT_COUNT] = next_count
    return status


def build_edges(states, table, flags, lo, hi, offsets, targets, edge_iids, s, w, out, iids, err):  # pragma: no cover
    """The explored graph in CSR form, states lo..hi-1 of it (called for consecutive ranges
    from 0, so that the caller can poll its budget between them): the edges of state i are
    offsets[i]..offsets[i+1]-1 (target state, instance), in successor order; unexpanded states
    have none. Returns offsets[hi], the number of edges so far, or -1 if a successor is missing
    from the table (an internal error)."""
    e = offsets[lo]
    for i in range(lo, hi):
        offsets[i] = e
        if flags[i] == 0:
            continue
        k = succ(states[i], s, w, out, iids, err)  # noqa: F821
        for j in range(k):
            pos, x = probe(states, table, out[j], hash_row(out[j]))
            if x < 0:
                return -1
            targets[e] = x
            edge_iids[e] = iids[j]
            e += 1
    offsets[hi] = e
    return e


def live_marks(unpack, live_q, states, flags, lo, hi, which, notq, s, err):  # pragma: no cover - compiled
    """notq[i] = state i (lo <= i < hi) is expanded and q of liveness property `which` fails
    there; the first state where q has a modelling error, or -1."""
    for i in range(lo, hi):
        notq[i] = 0
        if flags[i] == 0:
            continue
        unpack(states, i, s)  # noqa: F821
        q = live_q(s, which, err)  # noqa: F821
        if err[0]:
            return i
        if not q:
            notq[i] = 1
    return -1


def fair_sccs(n, offsets, targets, edge_iids, notq, fair, accept, comp, work, onstack, count, taken, ctl,
              steps):  # pragma: no cover - compiled
    """Maximal SCCs of the notq subgraph (iterative Tarjan). accept[i]: 1 when no fair
    instance is enabled in notq state i (it may stutter there), 2 when i lies in a fair SCC
    (one with a cycle in which every fair instance enabled in all its states is taken on an
    edge inside it), else 0; comp[i] numbers i's SCC. `work` is scratch (5 * n int64),
    `onstack` (n), `count` and `taken` (one per instance) zeros. Resumable, so that the caller
    can poll its budget: each call takes at most `steps` steps of the search, its position kept
    in `ctl` (6 int64, zeros before the first call); -1 while unfinished, then the number of
    SCCs."""
    index = work[0:n]
    low = work[n:2 * n]
    stack = work[2 * n:3 * n]
    call_node = work[3 * n:4 * n]
    call_edge = work[4 * n:5 * n]
    if ctl[5] == 0:
        for i in range(n):
            index[i] = -1
            accept[i] = 0
            comp[i] = -1
        ctl[1] = -1
        ctl[5] = 1
    root = ctl[0]
    depth = ctl[1]
    counter = ctl[2]
    sp = ctl[3]
    ncomp = ctl[4]
    left = steps
    while True:
        if depth < 0:  # the next root
            while root < n and (notq[root] == 0 or index[root] >= 0):
                root += 1
            if root >= n:
                break
            depth = 0
            call_node[0] = root
            call_edge[0] = offsets[root]
            index[root] = counter
            low[root] = counter
            counter += 1
            stack[sp] = root
            sp += 1
            onstack[root] = 1
        while depth >= 0:
            if left == 0:
                ctl[0] = root
                ctl[1] = depth
                ctl[2] = counter
                ctl[3] = sp
                ctl[4] = ncomp
                return -1
            left -= 1
            v = call_node[depth]
            e = call_edge[depth]
            if e < offsets[v + 1]:
                call_edge[depth] = e + 1
                x = targets[e]
                if notq[x] == 0:
                    continue
                if index[x] < 0:
                    index[x] = counter
                    low[x] = counter
                    counter += 1
                    stack[sp] = x
                    sp += 1
                    onstack[x] = 1
                    depth += 1
                    call_node[depth] = x
                    call_edge[depth] = offsets[x]
                elif onstack[x] and index[x] < low[v]:
                    low[v] = index[x]
                continue
            if low[v] == index[v]:  # v roots an SCC: stack[first:sp]
                first = sp - 1
                while stack[first] != v:
                    first -= 1
                for a in range(first, sp):
                    comp[stack[a]] = ncomp
                    onstack[stack[a]] = 0
                size = sp - first
                cyclic = size > 1
                for a in range(first, sp):
                    u = stack[a]
                    for f in range(offsets[u], offsets[u + 1]):
                        iid = edge_iids[f]
                        if fair[iid]:
                            count[iid] += 1
                            if comp[targets[f]] == ncomp:
                                taken[iid] = 1
                        if targets[f] == u:
                            cyclic = True
                ok = True
                for a in range(first, sp):
                    u = stack[a]
                    for f in range(offsets[u], offsets[u + 1]):
                        iid = edge_iids[f]
                        if fair[iid]:
                            if count[iid] == size and taken[iid] == 0:
                                ok = False
                for a in range(first, sp):
                    u = stack[a]
                    for f in range(offsets[u], offsets[u + 1]):
                        count[edge_iids[f]] = 0
                        taken[edge_iids[f]] = 0
                for a in range(first, sp):
                    u = stack[a]
                    stutter = True
                    for f in range(offsets[u], offsets[u + 1]):
                        if fair[edge_iids[f]]:
                            stutter = False
                    if stutter:
                        accept[u] = 1
                    elif cyclic and ok:
                        accept[u] = 2
                sp = first
                ncomp += 1
            depth -= 1
            if depth >= 0:
                p = call_node[depth]
                if low[v] < low[p]:
                    low[p] = low[v]
    ctl[0] = root
    ctl[1] = depth
    ctl[2] = counter
    ctl[3] = sp
    ctl[4] = ncomp
    return ncomp


def can_reach_accepting(n, offsets, targets, notq, accept, reach, work):  # pragma: no cover - compiled
    """reach[i] = 1 for the notq states from which an accepting state is reachable inside notq
    (backward search over the reversed notq subgraph, built in `work`: 2n + 1 + edges int64)."""
    m = offsets[n]
    rev_off = work[0:n + 1]
    rev = work[n + 1:n + 1 + m]
    queue = work[n + 1 + m:2 * n + 1 + m]
    for i in range(n + 1):
        rev_off[i] = 0
    for i in range(n):
        if notq[i]:
            for f in range(offsets[i], offsets[i + 1]):
                if notq[targets[f]]:
                    rev_off[targets[f] + 1] += 1
    for i in range(n):
        rev_off[i + 1] += rev_off[i]
    fill = np.zeros(n, np.int64)
    for i in range(n):
        if notq[i]:
            for f in range(offsets[i], offsets[i + 1]):
                x = targets[f]
                if notq[x]:
                    rev[rev_off[x] + fill[x]] = i
                    fill[x] += 1
    head = 0
    tail = 0
    for i in range(n):
        reach[i] = 0
        if accept[i]:
            reach[i] = 1
            queue[tail] = i
            tail += 1
    while head < tail:
        x = queue[head]
        head += 1
        for f in range(rev_off[x], rev_off[x + 1]):
            y = rev[f]
            if not reach[y]:
                reach[y] = 1
                queue[tail] = y
                tail += 1
    return tail


def leads_to_start(unpack, live_p, states, lo, hi, which, reach, s, err):  # pragma: no cover - compiled
    """The first state (in BFS order) of lo..hi-1 where p of `which` holds among those marked
    in `reach`, evaluating p in all of them as the Python engine does; (state or -1, -1), or
    (-1, the first state where p has a modelling error)."""
    start = -1
    for i in range(lo, hi):
        if reach[i]:
            unpack(states, i, s)  # noqa: F821
            p = live_p(s, which, err)  # noqa: F821
            if err[0]:
                return -1, i
            if p and start < 0:
                start = i
    return start, -1


GRAPH_KERNELS = (hash_row, home, probe, find_or_insert, rehash, retable, fair_sccs, can_reach_accepting)  # model-independent
MODEL_KERNELS = (expand, build_edges)  # in each model's module, the model's functions inlined (live_marks and
# leads_to_start, which take them as arguments, are compiled once: gpmodel/jit_shared.py, NOTE(shared-kernels))
CONSTANTS = {name: value for name, value in globals().items() if name.startswith(("CTL_", "MAX_LOAD", "RUNNING",
                                                                                   "DONE", "GROW", "FAULT_", "LIMIT"))}


def _source(fns: tuple[object, ...]) -> str:
    return "\n".join(["import numpy as np", "from numba import njit", ""]
                     + [f"{name} = {value}" for name, value in CONSTANTS.items()]
                     + ["\n@njit(cache=True)\n" + kernel_source(fn) for fn in fns])  # type: ignore[arg-type]


GRAPH_SOURCE = _source(GRAPH_KERNELS)  # one module shared by every model (compiled once)


def model_source(graph_module: str) -> str:
    """The kernels that call a model's functions, importing the shared ones from `graph_module`."""
    names = ", ".join(fn.__name__ for fn in GRAPH_KERNELS)
    return f"from {graph_module} import {names}\n" + _source(MODEL_KERNELS)

"""The graph kernels of latency properties on the compiled core, as numba source
(NOTE(latency) in spec/ir.py; the algorithm is checker/engines/latency/latency.py's, driven by
checker/engines/latency/fast_latency.py).

These functions are not called here: their source forms one generated module shared by every
model (gpmodel/jit.py's `load_module`, compiled once), apart from the model modules so that
adding it changed no model's cached machine code. They read the explored graph as CSR arrays
(gpmodel/jit_kernels.py's `build_edges`: the edges of state i are offsets[i]..offsets[i+1]-1,
in successor order) and one flat array per state or per edge, never an object per state.

Each kernel makes the same choices in the same order as its Python counterpart in
checker/engines/latency/latency.py and checker/engines/explicit/liveness.py (Tarjan from the same roots, edges in successor
order, Dijkstra popping the least (distance, state) pair), so that the numbers, components and
paths are the same, not merely equally good."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpcheck.gpmodel.kernel_source import kernel_source

if TYPE_CHECKING:  # the kernels run only inside the generated module, which imports numpy as np
    import numpy as np
    import heapq

# trap kinds: why a region state makes the greatest measurement unbounded
TRAP_NONE, TRAP_STUTTER, TRAP_POSITIVE, TRAP_FAIR = range(4)


def lat_region(offsets, targets, inside, starts, region, work):  # pragma: no cover - compiled
    """region[i] = 1 for the states `inside` reachable from a start that is inside, through
    inside states only (latency.py's region); returns its size."""
    top = 0
    for s in starts:
        if inside[s] and not region[s]:
            region[s] = 1
            work[top] = s
            top += 1
    size = top
    while top:
        top -= 1
        i = work[top]
        for e in range(offsets[i], offsets[i + 1]):
            j = targets[e]
            if inside[j] and not region[j]:
                region[j] = 1
                work[top] = j
                top += 1
                size += 1
    return size


def lat_tarjan(offsets, targets, region, comp, members, comp_start, index, low, onstack, stack, frame, pos):  # pragma: no cover
    """The strongly connected components of the region (liveness.sccs with latency.py's roots:
    the region's states in increasing order), numbered in the order Tarjan completes them;
    members[comp_start[k]:comp_start[k+1]] lists component k's states in the order they leave
    the stack. index must be filled with -1. Returns the number of components."""
    n = region.shape[0]
    counter = 0
    ncomp = 0
    nmem = 0
    sp = 0  # Tarjan's stack
    comp_start[0] = 0
    for root in range(n):
        if not region[root] or index[root] >= 0:
            continue
        fp = 0
        frame[0] = root
        pos[0] = offsets[root]
        index[root] = counter
        low[root] = counter
        counter += 1
        stack[sp] = root
        sp += 1
        onstack[root] = 1
        fp = 1
        while fp:
            v = frame[fp - 1]
            pushed = False
            while pos[fp - 1] < offsets[v + 1]:
                w = targets[pos[fp - 1]]
                pos[fp - 1] += 1
                if not region[w]:
                    continue
                if index[w] < 0:
                    index[w] = counter
                    low[w] = counter
                    counter += 1
                    stack[sp] = w
                    sp += 1
                    onstack[w] = 1
                    frame[fp] = w
                    pos[fp] = offsets[w]
                    fp += 1
                    pushed = True
                    break
                if onstack[w] and index[w] < low[v]:
                    low[v] = index[w]
            if pushed:
                continue
            fp -= 1
            if fp:
                u = frame[fp - 1]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:
                while True:
                    sp -= 1
                    w = stack[sp]
                    onstack[w] = 0
                    comp[w] = ncomp
                    members[nmem] = w
                    nmem += 1
                    if w == v:
                        break
                ncomp += 1
                comp_start[ncomp] = nmem
    return ncomp


def lat_shortest(offsets, targets, costs, starts, region, q, dist, prev):  # pragma: no cover - compiled
    """latency.py's `_shortest`: Dijkstra from every start (distance 0) to the first Q-state
    popped, expanding region states only; pops the least (distance, state) pair as Python's
    heapq does. dist must be filled with -1; prev[j] is the edge that last lowered dist[j].
    Returns that Q-state, or -1 when no start reaches Q."""
    heap = [(np.int64(0), np.int64(0))]
    heap.pop()
    for s in starts:
        dist[s] = 0
        heap.append((np.int64(0), np.int64(s)))
    heapq.heapify(heap)
    while len(heap):
        d, i = heapq.heappop(heap)
        if d > dist[i]:
            continue
        if q[i]:
            return i
        if not region[i]:
            continue
        for e in range(offsets[i], offsets[i + 1]):
            j = targets[e]
            nd = d + costs[e]
            if dist[j] < 0 or nd < dist[j]:
                dist[j] = nd
                prev[j] = e
                heapq.heappush(heap, (nd, np.int64(j)))
    return -1


def lat_traps(offsets, targets, edge_iids, costs, region, fair, comp, members, comp_start, ncomp, trap,
              count, taken):  # pragma: no cover - compiled
    """trap[i] for every region state (latency.py's `trap`): TRAP_STUTTER where no fair
    instance is enabled, else TRAP_POSITIVE in a cyclic component with an edge of positive
    cost inside it, TRAP_FAIR in a fair one (liveness._fair_scc), TRAP_NONE otherwise.
    count and taken: one zeroed slot per instance (scratch). Returns the number of traps."""
    traps = 0
    for k in range(ncomp):
        a = comp_start[k]
        b = comp_start[k + 1]
        for m in range(a, b):
            i = members[m]
            trap[i] = TRAP_NONE
            stutter = True
            for e in range(offsets[i], offsets[i + 1]):
                if fair[edge_iids[e]]:
                    stutter = False
                    break
            if stutter:
                trap[i] = TRAP_STUTTER
                traps += 1
        cyclic = b - a > 1
        if not cyclic:
            i = members[a]
            for e in range(offsets[i], offsets[i + 1]):
                if targets[e] == i:
                    cyclic = True
        if not cyclic:
            continue
        positive = False
        for m in range(a, b):
            i = members[m]
            for e in range(offsets[i], offsets[i + 1]):
                if comp[targets[e]] == k and region[targets[e]] and costs[e] > 0:
                    positive = True
        kind = TRAP_POSITIVE
        if not positive:
            # fair: some fair instance is disabled somewhere in the component, or every fair
            # instance enabled throughout it is taken inside it
            for m in range(a, b):
                i = members[m]
                for e in range(offsets[i], offsets[i + 1]):
                    x = edge_iids[e]
                    if count[x] >= 0 and count[x] == m - a:  # first edge of x in state i
                        count[x] += 1
                    if comp[targets[e]] == k and region[targets[e]]:
                        taken[x] = 1
            is_fair = True
            for x in range(fair.shape[0]):
                if fair[x] and count[x] == b - a and not taken[x]:
                    is_fair = False
            for x in range(fair.shape[0]):
                count[x] = 0
                taken[x] = 0
            if not is_fair:
                continue
            kind = TRAP_FAIR
        for m in range(a, b):
            i = members[m]
            if trap[i] == TRAP_NONE:
                trap[i] = kind
                traps += 1
    return traps


def lat_longest(offsets, targets, costs, region, comp, members, comp_start, ncomp, longest):  # pragma: no cover
    """latency.py's longest path over the condensation (no trap: every cycle costs 0):
    longest[k], the greatest cost from component k to the first step out of the region,
    components in completion order (successors first). Returns -1, or a component without an
    exit (which the caller treats as the broken invariant it is)."""
    for k in range(ncomp):
        top = np.int64(-1)
        for m in range(comp_start[k], comp_start[k + 1]):
            i = members[m]
            for e in range(offsets[i], offsets[i + 1]):
                j = targets[e]
                if region[j] and comp[j] == k:
                    continue
                v = costs[e]
                if region[j]:
                    v += longest[comp[j]]
                if v > top:
                    top = v
        if top < 0:
            return k
        longest[k] = top
    return -1


def lat_to_trap(offsets, targets, starts, region, trap, prev, seen, work):  # pragma: no cover - compiled
    """latency.py's `_unbounded_witness` search: breadth first from the starts in the region
    (in the order given), through region states, to the first trap state dequeued; prev[j] is
    the edge into j. Returns that state, or -1."""
    head = 0
    tail = 0
    for s in starts:
        if region[s] and not seen[s]:
            seen[s] = 1
            work[tail] = s
            tail += 1
    while head < tail:
        i = work[head]
        head += 1
        if trap[i]:
            return i
        for e in range(offsets[i], offsets[i + 1]):
            j = targets[e]
            if region[j] and not seen[j]:
                seen[j] = 1
                prev[j] = e
                work[tail] = j
                tail += 1
    return -1


KERNELS = (lat_region, lat_tarjan, lat_shortest, lat_traps, lat_longest, lat_to_trap)
CONSTANTS = {"TRAP_NONE": TRAP_NONE, "TRAP_STUTTER": TRAP_STUTTER, "TRAP_POSITIVE": TRAP_POSITIVE,
             "TRAP_FAIR": TRAP_FAIR}

SOURCE = "\n".join(["# generated by gpcheck (gpmodel/jit_latency.py): latency graph kernels",
                    "import heapq", "import numpy as np", "from numba import njit", ""]
                   + [f"{name} = {value}" for name, value in CONSTANTS.items()]
                   + ["\n@njit(cache=True)\n" + kernel_source(fn) for fn in KERNELS])  # type: ignore[arg-type]

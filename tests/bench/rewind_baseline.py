"""A plain hand-written Python BFS of rewind.gpspec (tuples and a dict): the baseline that
bench_explicit.py compares gpcheck's explicit engine with. Same state, same invariants
(no_reexecution, in_order), same deadlock check, parent pointers kept for counterexamples."""

from __future__ import annotations

import sys
from collections import deque


def main(N: int, B: int, CAP: int, MAXP: int) -> int:
    # state: (next, fetched, head, pc, koff, task, preempts, w0..w{N-1}); task 0=Executing 1=Waiting
    init = (0, 0, 0, 0, 0, 0, 0) + (0,) * N
    parent = {init: None}
    queue = deque([init])
    bad = None
    while queue:
        s = queue.popleft()
        nxt, fetched, head, pc, koff, task, preempts = s[:7]
        succs = []
        if task == 0 and nxt < N:
            succs.append((nxt + 1,) + s[1:])
        if fetched < nxt and fetched - head < CAP:
            succs.append(s[:1] + (fetched + 1,) + s[2:])
        if head < fetched and pc < B:
            w = list(s)
            w[7 + head] += 1
            w[3] = pc + 1
            succs.append(tuple(w))
        if head < fetched and pc == B:
            succs.append(s[:2] + (head + 1, 0) + s[4:])
        if task == 0 and preempts < MAXP:
            pending = nxt - fetched
            rewound = nxt - 1 - pending - CAP
            k = rewound if rewound > koff else koff
            succs.append((k, k, k, 0, k, 1, preempts + 1) + s[7:])
        if task == 1:
            succs.append(s[:5] + (0,) + s[6:])
        if not succs and head != N:
            bad = bad or ("deadlock", s)
        for t in succs:
            if t not in parent:
                parent[t] = s
                if any(x > B for x in t[7:]) or not (t[2] <= t[1] <= t[0]):
                    bad = bad or ("invariant", t)
                queue.append(t)
    print(len(parent), "violated" if bad else "holds")
    return 0


if __name__ == "__main__":
    sys.exit(main(*(int(a) for a in sys.argv[1:5])))

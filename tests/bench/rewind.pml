/* rewind.gpspec (../shared/spec-examples) by hand, for tests/bench/bench_compiled.py: one process, one d_step per
   action, so a state is the variables plus the loop's program counter, as in gpcheck. */
#ifndef N
#define N 12
#endif
#ifndef B
#define B 2
#endif
#ifndef CAP
#define CAP 2
#endif
#ifndef MAXP
#define MAXP 3
#endif
#define Executing 0
#define Waiting 1

byte next, fetched, head, pc, koff, task, preempts;
byte waves_run[N];
hidden int pending, rewound;
hidden byte k;
hidden byte bad;   /* a violated invariant; with assert, -c0 would print every one of millions */

#define CHECK \
    for (k : 0 .. N-1) { if :: waves_run[k] > B -> bad = 1 :: else -> skip fi }; \
    if :: !(head <= fetched && fetched <= next) -> bad = 1 :: else -> skip fi

active proctype rewind() {
    do
    :: d_step { task == Executing && next < N -> next++; CHECK }
    :: d_step { fetched < next && fetched - head < CAP -> fetched++; CHECK }
    :: d_step { head < fetched && pc < B -> waves_run[head]++; pc++; CHECK }
    :: d_step { head < fetched && pc == B -> head++; pc = 0; CHECK }
    :: d_step { task == Executing && preempts < MAXP ->
           pending = next - fetched;
           rewound = next - 1 - pending - CAP;
           if :: rewound > koff -> koff = rewound :: else -> skip fi;
           next = koff; fetched = koff; head = koff; pc = 0; task = Waiting; preempts++;
           CHECK }
    :: d_step { task == Waiting -> task = Executing; CHECK }
    :: d_step { timeout -> assert(head == N) }  /* a deadlock: blocked with head != N */
    od
}

"""The device search's kernels as C text (NOTE(device-bfs)): appended to a model's functions by
gpmodel/cuda_source.py and driven level by level by checker/engines/explicit/device_search.py.

NOTE(device-bfs): one breadth-first level is expanded in chunks of frontier states; a chunk is
five launches:
  * `expand`: one thread per state; its successors go to fixed candidate rows
    `(state - lo) * NINST + j` (j: the successor's place in `succ`'s order, -1 marks an unused
    row), so that a candidate's row number is its place in the sequential search's order;
    deadlocks and modelling errors are recorded with atomicMin (the first in that order);
  * `insert`: one thread per candidate, into the visited set, an open-addressing table of
    64-bit entries claimed with atomicCAS: `id + 1` for a numbered state (its key in `keys`),
    `-(row + 1)` for a candidate of this chunk that claimed the slot (its key in `cand`), 0 empty;
    each candidate learns the state it equals and atomicMin's its row into that owner's
    `minc` (the first row, in sequential order, that reached the state);
  * `mark` and a prefix sum over the rows (CuPy's or numpy's cumsum): new states are numbered in
    the order of their first row, which is the order the sequential core numbers them in;
  * `finalize`: one thread per new state: its key, parent (the state of its first row), table
    entry rewritten to `id + 1`, constraints, invariants (atomicMin of the first bad id).
So the device numbers every state as the compiled CPU core does: the same states, parents,
counterexamples, depth; only the work inside a chunk runs in parallel.

The same text builds with nvcc (CUDA kernels) and with the host C compiler, where a kernel is a
loop over its thread indexes and the atomics are plain reads and writes (one thread)."""

from __future__ import annotations

# event slots (device_search.py reads them after each chunk)
EV_EXPAND, EV_TERMINAL, EV_DEADLOCK, EV_STATE, EV_FULL = range(5)
EVENTS = 5
NO_EVENT = (1 << 63) - 1

PRELUDE = r"""
typedef long long i64;
typedef unsigned long long u64;
#ifdef __CUDACC__
#define DEV __device__ static
#define KERNEL extern "C" __global__ void
#define THREADS(t, count) i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; if (t < (count))
#define CAS64(p, c, v) ((i64)atomicCAS((u64*)(p), (u64)(c), (u64)(v)))
#define MIN64(p, v) atomicMin((i64*)(p), (i64)(v))
#define LOAD64(p) (*(volatile i64*)(p))
#define MULHI(a, b) __umul64hi((a), (b))
#else
#define DEV static
#define KERNEL void
#define THREADS(t, count) for (i64 t = 0; t < (count); t++)
static i64 CAS64(i64* p, i64 c, i64 v) { i64 o = *p; if (o == c) *p = v; return o; }
static void MIN64(i64* p, i64 v) { if (v < *p) *p = v; }
#define LOAD64(p) (*(p))
#define MULHI(a, b) ((u64)(((unsigned __int128)(a) * (b)) >> 64))
#endif

DEV i64 _fdiv(i64 a, i64 b) { i64 q = a / b; if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1; return q; }
DEV i64 _fmod(i64 a, i64 b) { i64 r = a % b; if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; }
DEV i64 _min2(i64 a, i64 b) { return a < b ? a : b; }
DEV i64 _max2(i64 a, i64 b) { return a > b ? a : b; }
DEV i64 _ix(i64* err, i64 i, i64 lo, i64 hi, i64 site) { if (lo <= i && i <= hi) return i - lo; err[0] = 1; return 0; }
DEV i64 _div(i64* err, i64 a, i64 b, i64 site) { if (b == 0) { err[0] = 1; return 0; } return _fdiv(a, b); }
DEV i64 _mod(i64* err, i64 a, i64 b, i64 site) { if (b == 0) { err[0] = 1; return 0; } return _fmod(a, b); }
DEV i64 _fail(i64* err, i64 site, i64 value) { err[0] = 1; return 0; }
"""

KERNELS = r"""
#define EV_EXPAND 0
#define EV_TERMINAL 1
#define EV_DEADLOCK 2
#define EV_STATE 3
#define EV_FULL 4

DEV u64 hash_row(const i64* row) {
    u64 h = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < W; i++) {
        u64 x = h ^ (u64)row[i];
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
        h = x ^ (x >> 31);
    }
    return h;
}

KERNEL expand(const i64* keys, const unsigned char* flags, i64 lo, i64 count, i64* cand, i64* cand_iid,
              i64 check_deadlock, i64* events) {
    THREADS(t, count) {
        i64 i = lo + t;
        i64* out = cand + t * NINST * W;
        i64* iids = cand_iid + t * NINST;
        i64 k = 0;
        if (flags[i]) {
            i64 s[NSLOTS];
            i64 w[NSLOTS];
            i64 err[1];
            err[0] = 0;
            k = succ(keys + i * W, s, w, out, iids, err);
            if (k < 0) {
                MIN64(&events[EV_EXPAND], i);
                k = 0;
            } else if (k == 0 && check_deadlock) {
                unpack_row(keys + i * W, s);
                if (!terminal(s, err)) MIN64(&events[EV_DEADLOCK], i);
                if (err[0]) MIN64(&events[EV_TERMINAL], i);
            }
        }
        for (i64 j = k; j < NINST; j++) iids[j] = -1;
    }
}

KERNEL insert(const i64* keys, i64* table, i64 size, const i64* cand, const i64* cand_iid, i64 count,
              i64* res, i64* pos, i64* minc, i64* events) {
    THREADS(t, count) {
        res[t] = 0;  /* not an owner (an unused row, or a state found before) */
        if (cand_iid[t] >= 0) {
            const i64* row = cand + t * W;
            i64 p = (i64)MULHI(hash_row(row), (u64)size);
            for (i64 probes = 0;; probes++) {
                if (probes >= size) { events[EV_FULL] = 1; res[t] = 0; break; }
                i64 e = LOAD64(&table[p]);
                if (e == 0) {
                    e = CAS64(&table[p], 0, -(t + 1));
                    if (e == 0) { res[t] = -(t + 1); pos[t] = p; MIN64(&minc[t], t); break; }
                }
                const i64* other = e > 0 ? keys + (e - 1) * W : cand + (-e - 1) * W;
                int same = 1;
                for (int k = 0; k < W; k++) if (other[k] != row[k]) { same = 0; break; }
                if (same) {
                    res[t] = e > 0 ? e - 1 : e;
                    if (e < 0) MIN64(&minc[-e - 1], t);
                    break;
                }
                p = p + 1 == size ? 0 : p + 1;
            }
        }
    }
}

KERNEL mark(const i64* res, const i64* minc, i64 count, i64* first) {
    THREADS(t, count) {
        if (res[t] == -(t + 1)) first[minc[t]] = 1;
    }
}

KERNEL finalize(i64* keys, int* parent, unsigned char* flags, i64* table, const i64* cand, const i64* res,
                const i64* pos, const i64* minc, const i64* numbered, i64 count, i64 n, i64 lo, i64 root,
                const unsigned char* want, i64* inv_first, i64* events) {
    THREADS(t, count) {
        if (res[t] == -(t + 1)) {
            i64 m = minc[t];
            i64 id = n + numbered[m] - 1;
            for (int k = 0; k < W; k++) keys[id * W + k] = cand[t * W + k];
            parent[id] = root ? -1 : (int)(lo + m / NINST);
            table[pos[t]] = id + 1;
            i64 s[NSLOTS];
            unsigned char bad[NINV];
            i64 err[1];
            err[0] = 0;
            for (int x = 0; x < NINV; x++) bad[x] = 0;
            unpack_row(keys + id * W, s);
            i64 inside = state_preds(s, want, bad, err);
            for (int x = 0; x < NINV; x++) if (bad[x]) MIN64(&inv_first[x], id);
            if (err[0]) MIN64(&events[EV_STATE], id);
            flags[id] = inside ? 1 : 0;
        }
    }
}

KERNEL lookup(const i64* keys, const i64* table, i64 size, const i64* cand, const i64* cand_iid, i64 count,
            int* target, i64* events) {
    /* the edges (NOTE(device-edges)): the state number of each candidate row, -1 for an unused
       row; a successor missing from the table (an internal error) sets EV_FULL */
    THREADS(t, count) {
        target[t] = -1;
        if (cand_iid[t] >= 0) {
            const i64* row = cand + t * W;
            i64 p = (i64)MULHI(hash_row(row), (u64)size);
            for (i64 probes = 0;; probes++) {
                i64 e = table[p];
                if (e <= 0 || probes >= size) { events[EV_FULL] = 1; break; }
                const i64* other = keys + (e - 1) * W;
                int same = 1;
                for (int k = 0; k < W; k++) if (other[k] != row[k]) { same = 0; break; }
                if (same) { target[t] = (int)(e - 1); break; }
                p = p + 1 == size ? 0 : p + 1;
            }
        }
    }
}

KERNEL trans(const i64* keys, i64 lo, const i64* cand, const i64* cand_iid, i64 count, const unsigned char* want,
           i64* tr_first, i64* events) {
    /* transition properties on a chunk's edges (NOTE(device-edges)): the first bad row of each,
       as `state * NINST + j` (the sequential core's order of edges); an error sets EV_STATE */
    THREADS(t, count) {
        if (cand_iid[t] >= 0) {
            i64 s[NSLOTS];
            i64 u[NSLOTS];
            unsigned char bad[NTR];
            i64 err[1];
            err[0] = 0;
            for (int x = 0; x < NTR; x++) bad[x] = 0;
            unpack_row(keys + (lo + t / NINST) * W, s);
            unpack_row(cand + t * W, u);
            transitions(s, u, want, bad, err);
            if (err[0]) MIN64(&events[EV_STATE], lo * NINST + t);
            for (int x = 0; x < NTR; x++) if (bad[x]) MIN64(&tr_first[x], lo * NINST + t);
        }
    }
}

KERNEL rehash(const i64* keys, i64 n, i64* table, i64 size) {
    THREADS(t, n) {
        i64 p = (i64)MULHI(hash_row(keys + t * W), (u64)size);
        while (CAS64(&table[p], 0, t + 1) != 0) p = p + 1 == size ? 0 : p + 1;
    }
}
"""

"""The device search's compact visited set (issue 35, item 3) as C text: Cleary's compact hashing
with linear probing, appended to a model's device source by gpmodel/cuda_source.py and driven by
checker/engines/explicit/device_compact.py.

NOTE(compact-table): a state's packed words x_0..x_{W-1} (word k uses its low u_k bits) are
mixed by a bijection of that domain (`mix`: per word an odd multiplier and a xor-shift, and
each word xor-ed with a hash of the others: every step is invertible, so two states never mix
to the same words). The word q with the most bits gives the home slot `x_q % size` and the
quotient `x_q / size`; a slot stores the quotient, the other mixed words and the slot's
distance from the home (at most DMAX), no more: (home, quotient) give x_q back, so an entry
names exactly one state, and a table of `size` slots needs log2(size) bits less a state than
the packed words (Cleary 1984; GPUexplore's compact hashing). Entries are E 64-bit words (E
from the bits left, NOTE(compact-table) in device_compact.py): word 0 holds the distance plus
one in bits 51..62 (so a finished entry is positive and not 0) and the first 51 bits of the
stream (quotient, then the other words); words 1..E-1 the rest of the stream. A probe that
would put an entry farther than DMAX from its home takes the chunk's claims back and grows the
table (at load 0.85 that is rare: linear probing's distances fall off exponentially).

While a chunk is inserted, a slot claimed by candidate row t holds -(t + 1) in word 0 (the
row's words are compared directly), as in the full table (NOTE(device-bfs)); `finalize_c`
writes the compact entry. Growing the table re-homes every entry from (home, quotient) alone
(`rehash_c`): the keys are not kept."""

from __future__ import annotations

from gpcheck.gpmodel.packed import PackedLayout

DIST_BITS = 12
STREAM0 = 63 - DIST_BITS  # bits of the stream in word 0 (bit 63 stays clear: a finished entry is positive)
DIST_SHIFT = STREAM0
DMAX = (1 << DIST_BITS) - 2  # the farthest an entry may sit from its home slot (past it: the table grows)

_ODD = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93)


def used_bits(packed: PackedLayout) -> list[int]:
    """Bits word k of the packed state uses (its slots are packed from bit 0 up)."""
    used = [1] * packed.words
    for f in packed.fields:
        used[f.word] = max(used[f.word], f.shift + f.width)
    return used


def quotient_word(packed: PackedLayout) -> int:
    """The mixed word the home slot and the quotient come from: the widest."""
    used = used_bits(packed)
    return used.index(max(used))


def _mix_source(packed: PackedLayout) -> str:
    """`mix`: the bijection of NOTE(compact-table), straight-line C for this layout."""
    used = used_bits(packed)
    w = packed.words
    lines = ["DEV void mix(const i64* row, u64* x) {"]
    lines += [f"    x[{k}] = (u64)row[{k}];" for k in range(w)]
    for rnd in range(2):
        for k in range(w):
            mask = (1 << used[k]) - 1
            odd = _ODD[(rnd + k) % len(_ODD)]
            lines.append(f"    x[{k}] = (x[{k}] * 0x{odd:X}ULL) & 0x{mask:X}ULL;")
            lines.append(f"    x[{k}] ^= x[{k}] >> {max(1, (used[k] + 1) // 2)};")
            others = [j for j in range(w) if j != k]
            if others:
                fold = " ^ ".join(f"(x[{j}] * 0x{_ODD[(j + 1) % len(_ODD)]:X}ULL)" for j in others)
                lines.append(f"    x[{k}] ^= splitmix({fold}) & 0x{mask:X}ULL;")
    lines.append("}")
    return "\n".join(lines)


def compact_source(packed: PackedLayout) -> str:
    """The compact table's C: `mix` for this layout and the kernels of NOTE(compact-table)."""
    used = used_bits(packed)
    q = quotient_word(packed)
    others = [k for k in range(packed.words) if k != q]
    put_others = "\n".join(f"        put_bits(e, s, x[{k}], {used[k]}); s += {used[k]};" for k in others)
    get_others = "\n".join(f"        put_bits(e, s, get_bits(oe, s_old, {used[k]}), {used[k]}); s += {used[k]}; "
                           f"s_old += {used[k]};" for k in others)
    head = (f"#define QWORD {q}\n#define STREAM0 {STREAM0}\n#define DIST_SHIFT {DIST_SHIFT}\n"
            f"#define DMAX {DMAX}\n")
    body = COMPACT_KERNELS.replace("/*PUT_OTHERS*/", put_others).replace("/*COPY_OTHERS*/", get_others)
    return head + SPLITMIX + _mix_source(packed) + body


SPLITMIX = r"""
DEV u64 splitmix(u64 z) {
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
"""

COMPACT_KERNELS = r"""
#define MAXE 8

/* the stream's bit s lives in word 0 (bits 0..STREAM0-1) or word 1 + (s - STREAM0) / 64 */
DEV void put_bits(u64* e, i64 s, u64 v, i64 n) {
    while (n > 0) {
        i64 word = s < STREAM0 ? 0 : 1 + (s - STREAM0) / 64;
        i64 bit = s < STREAM0 ? s : (s - STREAM0) % 64;
        i64 room = (s < STREAM0 ? STREAM0 : 64) - bit;
        i64 c = n < room ? n : room;
        u64 part = c == 64 ? v : (v & ((1ULL << c) - 1));
        e[word] |= part << bit;
        v = c == 64 ? 0 : v >> c;
        s += c;
        n -= c;
    }
}

DEV u64 get_bits(const u64* e, i64 s, i64 n) {
    u64 v = 0;
    i64 got = 0;
    while (got < n) {
        i64 word = s < STREAM0 ? 0 : 1 + (s - STREAM0) / 64;
        i64 bit = s < STREAM0 ? s : (s - STREAM0) % 64;
        i64 room = (s < STREAM0 ? STREAM0 : 64) - bit;
        i64 c = (n - got) < room ? (n - got) : room;
        u64 part = (e[word] >> bit) & (c == 64 ? ~0ULL : ((1ULL << c) - 1));
        v |= part << got;
        got += c;
        s += c;
    }
    return v;
}

/* a state's entry at distance 0 from its home, and its home slot */
DEV i64 encode(const i64* row, i64 size, i64 E, i64 R0, u64* e) {
    u64 x[W];
    mix(row, x);
    for (int k = 0; k < MAXE; k++) e[k] = 0;
    u64 quot = x[QWORD] / (u64)size;  /* one 64-bit division (emulated on the GPU), not two */
    i64 home = (i64)(x[QWORD] - quot * (u64)size);
    put_bits(e, 0, quot, R0);
    {
        i64 s = R0;
/*PUT_OTHERS*/
    }
    return home;
}

KERNEL insert_c(const i64* cand, const i64* cand_iid, i64 count, i64* table, i64 size, i64 E, i64 R0,
                i64* res, i64* pos, i64* minc, i64* events) {
    THREADS(t, count) {
        res[t] = 0;  /* not an owner (an unused row, or a state found before) */
        if (cand_iid[t] >= 0) {
            const i64* row = cand + t * W;
            u64 e[MAXE];
            i64 p = encode(row, size, E, R0, e);
            for (i64 d = 0;; d++) {
                if (d > DMAX) { events[EV_FULL] = 1; break; }
                i64* slot = table + p * E;
                i64 w0 = LOAD64(slot);
                if (w0 == 0) {
                    w0 = CAS64(slot, 0, -(t + 1));
                    if (w0 == 0) { res[t] = -(t + 1); pos[t] = p; MIN64(&minc[t], t); break; }
                }
                if (w0 < 0) {
                    const i64* other = cand + (-w0 - 1) * W;
                    int same = 1;
                    for (int k = 0; k < W; k++) if (other[k] != row[k]) { same = 0; break; }
                    if (same) { res[t] = w0; MIN64(&minc[-w0 - 1], t); break; }
                } else if ((u64)w0 == (e[0] | ((u64)(d + 1) << DIST_SHIFT))) {
                    int same = 1;
                    for (i64 k = 1; k < E; k++) if ((u64)slot[k] != e[k]) { same = 0; break; }
                    if (same) break;  /* found before: res[t] stays 0 */
                }
                p = p + 1 == size ? 0 : p + 1;
            }
        }
    }
}

KERNEL finalize_c(i64* fkeys, unsigned char* fflags, i64 fbase, unsigned int* pr_lo, unsigned char* pr_hi,
                  i64* table, i64 size, i64 E, i64 R0, const i64* cand, const i64* res, const i64* pos,
                  const i64* minc, const i64* numbered, i64 count, i64 n, i64 lo, i64 root,
                  const unsigned char* want, i64* inv_first, i64* events) {
    THREADS(t, count) {
        if (res[t] == -(t + 1)) {
            i64 m = minc[t];
            i64 id = n + numbered[m] - 1;
            const i64* row = cand + t * W;
            for (int k = 0; k < W; k++) fkeys[(id - fbase) * W + k] = row[k];
            /* the first row that reached it: its parent lo + m / NINST and successor m % NINST */
            u64 first = root ? 0xFFFFFFFFFFULL : (u64)(lo * NINST + m);
            pr_lo[id] = (unsigned int)(first & 0xFFFFFFFFULL);
            pr_hi[id] = (unsigned char)(first >> 32);
            u64 e[MAXE];
            i64 home = encode(row, size, E, R0, e);
            i64 d = pos[t] >= home ? pos[t] - home : pos[t] + size - home;
            i64* slot = table + pos[t] * E;
            for (i64 k = 1; k < E; k++) slot[k] = (i64)e[k];
            slot[0] = (i64)(e[0] | ((u64)(d + 1) << DIST_SHIFT));
            i64 s[NSLOTS];
            unsigned char bad[NINV];
            i64 err[1];
            err[0] = 0;
            for (int x = 0; x < NINV; x++) bad[x] = 0;
            unpack_row(row, s);
            i64 inside = state_preds(s, want, bad, err);
            for (int x = 0; x < NINV; x++) if (bad[x]) MIN64(&inv_first[x], id);
            if (err[0]) MIN64(&events[EV_STATE], id);
            fflags[id - fbase] = inside ? 1 : 0;
        }
    }
}

KERNEL unclaim_c(i64* table, i64 E, const i64* res, const i64* pos, i64 count) {
    /* a chunk's claims taken back (the table is grown and the chunk inserted again) */
    THREADS(t, count) {
        if (res[t] == -(t + 1)) table[pos[t] * E] = 0;
    }
}

KERNEL rehash_c(const i64* old, i64 base, i64 count, i64 size_old, i64 E_old, i64 R0_old,
                i64* table, i64 size, i64 E, i64 R0, i64* events) {
    /* old slots base..base+count-1 (old holds them from its row 0) into the new table: the
       state's x_q from its old home and quotient, the other words' bits copied */
    THREADS(t, count) {
        const u64* o = (const u64*)(old + t * E_old);
        i64 w0 = (i64)o[0];
        if (w0 > 0) {
            u64 oe[MAXE];
            for (i64 k = 0; k < MAXE; k++) oe[k] = k < E_old ? o[k] : 0;
            i64 d = (i64)((oe[0] >> DIST_SHIFT) & ((1ULL << (63 - DIST_SHIFT)) - 1)) - 1;
            oe[0] &= (1ULL << STREAM0) - 1;
            i64 p_old = base + t;
            i64 home_old = p_old >= d ? p_old - d : p_old + size_old - d;
            u64 xq = get_bits(oe, 0, R0_old) * (u64)size_old + (u64)home_old;
            u64 e[MAXE];
            for (int k = 0; k < MAXE; k++) e[k] = 0;
            u64 quot = xq / (u64)size;
            i64 p = (i64)(xq - quot * (u64)size);
            put_bits(e, 0, quot, R0);
            {
                i64 s = R0;
                i64 s_old = R0_old;
/*COPY_OTHERS*/
            }
            for (i64 dd = 0;; dd++) {
                if (dd > DMAX) { events[EV_FULL] = 1; break; }
                u64 mine = e[0] | ((u64)(dd + 1) << DIST_SHIFT);
                if (CAS64(&table[p * E], 0, (i64)mine) == 0) {
                    for (i64 k = 1; k < E; k++) table[p * E + k] = (i64)e[k];
                    break;
                }
                p = p + 1 == size ? 0 : p + 1;
            }
        }
    }
}

KERNEL one_succ(const i64* key, i64* cand, i64* cand_iid, i64* events) {
    /* the successors of one state (a counterexample's next state is row j of them) */
    THREADS(t, 1) {
        i64 s[NSLOTS];
        i64 w[NSLOTS];
        i64 err[1];
        err[0] = 0;
        i64 k = succ(key, s, w, cand, cand_iid, err);
        if (k < 0) { events[EV_EXPAND] = 0; k = 0; }
        for (i64 j = k; j < NINST; j++) cand_iid[j] = -1;
    }
}
"""

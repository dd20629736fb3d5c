"""Candidate invariants mined from sampled reachable states (the first half of Houdini).

An `Atom` is `cond implies body` over state slots: `cond` is zero, one or two equalities
`slot == value`; `body` is a linear bound `c1*x + c2*y <= k` (one or two int slots) or an
exclusion `x != v`. Every atom returned holds in every sampled state; which of them are
invariants is for Z3 to decide (checker/engines/smt/lemmas.py). The templates:

- ranges `lo <= x <= hi` tighter than the type, values never taken `x != v`;
- differences and sums of two int slots (`x - y <= k`, `x + y >= k`): counters that move
  together (`rptr <= wptr`, `ops[k][w] == pc[w]`);
- the same under one condition (`busy implies rptr >= 1`), pairwise exclusions
  (`loc == Dead implies ws != Live`), and under two conditions for equalities
  (`rptr == 1 and ws[0] == Live implies ops[1][0] - pc[0] == 0`).

Statistics over the sample are computed with numpy, column-wise, so mining costs a few
array passes per condition rather than one Python loop per candidate and state."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np
import z3

from gpcheck.spec import ir
from gpcheck.checker.core import budget
from gpcheck.checker.engines.smt.encode import Slot
from gpcheck.checker.engines.smt.session import Deadline
from gpcheck.checker.engines.smt.terms import mk_and, mk_not

SMALL_DOMAIN = 8  # a slot with at most this many sampled values can be a condition
MAX_PAIR_CONDITIONS = 4_000  # two-condition masks examined at most
_CELLS = 1 << 20  # AtomTable: state x atom cells evaluated per numpy pass


@dataclass(frozen=True)
class Atom:
    cond: tuple[tuple[int, int], ...]  # (slot, value) equalities
    kind: str  # "le": sum(c * x) <= k; "ne": x != k
    terms: tuple[tuple[int, int], ...]  # (coefficient, slot) for "le"; ((1, slot),) for "ne"
    k: int

    def slots(self) -> set[int]:
        return {i for i, _ in self.cond} | {i for _, i in self.terms}

    def holds(self, s: Sequence[int]) -> bool:
        for i, v in self.cond:
            if s[i] != v:
                return True
        if self.kind == "ne":
            return s[self.terms[0][1]] != self.k
        return sum(c * s[i] for c, i in self.terms) <= self.k

    def z3(self, st: Sequence[z3.ExprRef]) -> z3.BoolRef:
        budget.poll()  # NOTE(time-limit): tens of thousands of atoms are built at once
        conds = [_eq(st[i], v) for i, v in self.cond]
        if self.kind == "ne":
            body = mk_not(_eq(st[self.terms[0][1]], self.k))
        else:
            lhs = [st[i] if c == 1 else (-st[i] if c == -1 else c * st[i]) for c, i in self.terms]
            body = (lhs[0] if len(lhs) == 1 else z3.Sum(*lhs)) <= self.k  # type: ignore[operator]
        if not conds:
            return body
        return z3.Implies(mk_and(*conds), body)


def _eq(x: z3.ExprRef, v: int) -> z3.BoolRef:
    if z3.is_bool(x):
        return x if v else mk_not(x)  # type: ignore[return-value]
    return x == v  # type: ignore[return-value]


class AtomTable:
    """Many atoms evaluated at once over many states (numpy, column-wise): Houdini tests every
    active candidate against every state a counterexample to induction leads to, which one
    `Atom.holds` call per pair makes the bulk of its time. Atoms have at most two conditions
    and two terms (mine_atoms' templates; the for-all second round's have three terms:
    checker/engines/param/widen.py); `holds_all` agrees with `Atom.holds`."""

    def __init__(self, atoms: Sequence[Atom]) -> None:
        n = len(atoms)
        nc = max([2] + [len(a.cond) for a in atoms])
        nt = max([2] + [len(a.terms) for a in atoms])
        self.cs = np.zeros((nc, n), dtype=np.int64)  # condition slots (a missing one: slot 0 == itself)
        self.cv = np.zeros((nc, n), dtype=np.int64)
        self.con = np.zeros((nc, n), dtype=bool)  # condition present
        self.ts = np.zeros((nt, n), dtype=np.int64)
        self.tc = np.zeros((nt, n), dtype=np.int64)  # a missing term: coefficient 0
        self.k = np.zeros(n, dtype=np.int64)
        self.ne = np.zeros(n, dtype=bool)
        for j, a in enumerate(atoms):
            for m, (i, v) in enumerate(a.cond):
                self.cs[m, j], self.cv[m, j], self.con[m, j] = i, v, True
            for m, (c, i) in enumerate(a.terms):
                self.tc[m, j], self.ts[m, j] = c, i
            self.k[j] = a.k
            self.ne[j] = a.kind == "ne"

    def rows_satisfying(self, states: np.ndarray, which: np.ndarray) -> np.ndarray:
        """For each row of `states`, whether every atom of `which` holds in it."""
        out = np.ones(len(states), dtype=bool)
        for lo, truth in self._truth(states, which):
            out[lo:lo + len(truth)] = truth.all(axis=1)
        return out

    def holds_all(self, states: np.ndarray, which: np.ndarray) -> np.ndarray:
        """For the atoms `which` (indices), whether each holds in every row of `states`."""
        out = np.ones(len(which), dtype=bool)
        for _, truth in self._truth(states, which):
            out &= truth.all(axis=0)
        return out

    def _truth(self, states: np.ndarray, which: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
        """(first row, rows x atoms truth matrix) over `states` in chunks: bounded temporaries."""
        if len(states) == 0 or len(which) == 0:
            return
        cs, cv, con = self.cs[:, which], self.cv[:, which], self.con[:, which]
        ts, tc, k, ne = self.ts[:, which], self.tc[:, which], self.k[which], self.ne[which]
        rows = max(1, _CELLS // len(which))
        for lo in range(0, len(states), rows):
            st = states[lo:lo + rows]
            applies = np.ones((len(st), len(which)), dtype=bool)
            for m in range(len(cs)):
                applies &= ~con[m] | (st[:, cs[m]] == cv[m])
            lin = st[:, ts[0]] * tc[0]
            for m in range(1, len(ts)):
                lin += st[:, ts[m]] * tc[m]
            body = np.where(ne, st[:, ts[0]] != k, lin <= k)
            yield lo, ~applies | body


# ---------------------------------------------------------------------------------- sampling


def sample_states(cm: object, limit: int, deadline: Deadline) -> tuple[list[tuple[int, ...]], bool]:
    """Breadth-first reachable states (up to `limit`) and whether the search completed. A
    state whose expansion fails with a modelling error keeps the successors of its other
    instances; states outside the constraints are kept but not expanded."""
    from gpcheck.gpmodel import ModelError

    constrained = bool(cm.model.constraints)  # type: ignore[attr-defined]
    seen: dict[tuple[int, ...], None] = {}
    frontier = []
    for s in cm.initial_states():  # type: ignore[attr-defined]
        if s not in seen:
            seen[s] = None
            frontier.append(s)
    n_inst = len(cm.instances)  # type: ignore[attr-defined]
    tick = 0
    while frontier:
        nxt = []
        for s in frontier:
            tick += 1
            if tick & 0xF == 0 and deadline.expired:  # one expansion of a large model takes milliseconds
                return list(seen), False
            try:
                if constrained and not cm.in_constraints(s):  # type: ignore[attr-defined]
                    continue
                succ = [t for _, t in cm.successors(s)]  # type: ignore[attr-defined]
            except ModelError:
                succ = []
                for iid in range(n_inst):
                    try:
                        t = cm.step(iid, s)  # type: ignore[attr-defined]
                    except ModelError:
                        continue
                    if not isinstance(t, int):
                        succ.append(t)
            for t in succ:
                if t not in seen:
                    seen[t] = None
                    nxt.append(t)
                    if len(seen) >= limit:
                        return list(seen), False
        frontier = nxt
    return list(seen), True


# ---------------------------------------------------------------------------------- mining


def mine_atoms(slots: Sequence[Slot], states: Sequence[tuple[int, ...]], limit: int,
               max_conditions: int = 2, cond_ok: Callable[[int, int], bool] | None = None,
               vary: bool = False) -> list[Atom]:
    """Every template atom with at most `max_conditions` conditions that holds in all
    `states`, cheapest first, at most `limit`. `cond_ok(slot, value)` says which equalities
    may be conditions (all with a small domain when None): a caller that discards atoms
    under some conditions says so here, so the limit is not spent on them. With `vary`, an
    equality under conditions is kept only between slots that both vary under them (one
    constant there is already said by the conditional ranges and the types), and two
    conditions also give int ranges tighter than either condition alone gives."""
    if not states:
        return []
    arr = np.asarray(states, dtype=np.int64)
    nslots = arr.shape[1]
    ints = [i for i in range(nslots) if isinstance(slots[i].type, ir.IntType)]
    lo, hi = arr.min(axis=0), arr.max(axis=0)
    values = [np.unique(arr[:, i]) for i in range(nslots)]
    out: list[Atom] = []
    out += _unary(slots, (), lo, hi, values, None)
    out += _pairs(ints, (), arr, lo, hi, bounds=True)
    conds = [(i, int(v)) for i in range(nslots) if 1 < len(values[i]) <= SMALL_DOMAIN for v in values[i]
             if cond_ok is None or cond_ok(i, int(v))]
    masks = {c: arr[:, c[0]] == c[1] for c in conds}
    if max_conditions < 1:
        return out
    for c in conds:
        budget.poll()  # NOTE(time-limit)
        sub = arr[masks[c]]
        clo, chi = sub.min(axis=0), sub.max(axis=0)
        cvals = [np.unique(sub[:, i]) if len(values[i]) <= SMALL_DOMAIN else None for i in range(nslots)]
        out += _unary(slots, (c,), clo, chi, cvals, (lo, hi, values), skip=c[0])
        out += _pairs([i for i in ints if i != c[0]], (c,), sub, lo, hi, bounds=False, glob=arr, vary=vary)
        if len(out) > limit:
            return out[:limit]
    examined = 0
    if max_conditions < 2:
        return out
    for c1, c2 in itertools.combinations(conds, 2):
        budget.poll()  # NOTE(time-limit)
        if c1[0] == c2[0]:
            continue
        m = masks[c1] & masks[c2]
        if not m.any():
            continue
        examined += 1
        if examined > MAX_PAIR_CONDITIONS:
            break
        sub = arr[m]
        if vary:  # bounds tighter than under either condition alone
            g1, g2 = arr[masks[c1]], arr[masks[c2]]
            glo = np.maximum(g1.min(axis=0), g2.min(axis=0))
            ghi = np.minimum(g1.max(axis=0), g2.max(axis=0))
            slo, shi = sub.min(axis=0), sub.max(axis=0)
            for i in ints:
                if i in (c1[0], c2[0]):
                    continue
                if slo[i] > glo[i]:
                    out.append(Atom((c1, c2), "le", ((-1, i),), -int(slo[i])))
                if shi[i] < ghi[i]:
                    out.append(Atom((c1, c2), "le", ((1, i),), int(shi[i])))
        out += _pairs([i for i in ints if i not in (c1[0], c2[0])], (c1, c2), sub, lo, hi, bounds=False,
                      glob=arr[masks[c1]], glob2=arr[masks[c2]], vary=vary)
        if len(out) > limit:
            return out[:limit]
    return out


def _unary(slots: Sequence[Slot], cond: tuple[tuple[int, int], ...], lo: np.ndarray, hi: np.ndarray,
           values: Sequence[np.ndarray | None], glob: tuple[np.ndarray, np.ndarray, list[np.ndarray]] | None,
           skip: int = -1) -> list[Atom]:
    """Ranges and excluded values (under `cond`: only where tighter than without it)."""
    out: list[Atom] = []
    for i, sl in enumerate(slots):
        if i == skip:
            continue
        t = sl.type
        if isinstance(t, ir.IntType):
            glo = t.lo if glob is None else int(glob[0][i])
            ghi = t.hi if glob is None else int(glob[1][i])
            if glo is None or lo[i] > glo:
                out.append(Atom(cond, "le", ((-1, i),), -int(lo[i])))
            if ghi is None or hi[i] < ghi:
                out.append(Atom(cond, "le", ((1, i),), int(hi[i])))
        vals = values[i]
        if vals is None:
            continue
        if isinstance(t, ir.IntType):
            if hi[i] - lo[i] > 2 * SMALL_DOMAIN:
                continue  # gaps in a wide range are sampling artefacts, not invariants
            dom = range(int(lo[i]), int(hi[i]) + 1)
        else:
            dom = ir.domain_values(t)  # type: ignore[arg-type]
        seen = set(int(v) for v in vals)
        gseen = None if glob is None else set(int(v) for v in glob[2][i])
        for v in dom:
            if v not in seen and (gseen is None or v in gseen):
                out.append(Atom(cond, "ne", ((1, i),), v))
    return out


def _pairs(ints: Sequence[int], cond: tuple[tuple[int, int], ...], sub: np.ndarray, lo: np.ndarray,
           hi: np.ndarray, *, bounds: bool, glob: np.ndarray | None = None,
           glob2: np.ndarray | None = None, vary: bool = False) -> list[Atom]:
    """Differences and sums of two int slots: bounds tighter than the ranges imply (without a
    condition), or equalities not already holding without it (under one)."""
    out: list[Atom] = []
    if len(ints) < 2:
        return out
    if vary and not bounds:
        ints = [i for i in ints if sub[:, i].min() != sub[:, i].max()]
        if len(ints) < 2:
            return out
    cols = sub[:, ints]
    for a in range(len(ints) - 1):
        budget.poll()  # NOTE(time-limit): pairs of thousands of slots
        i = ints[a]
        rest = ints[a + 1:]
        d = cols[:, a:a + 1] - cols[:, a + 1:]
        dmin, dmax = d.min(axis=0), d.max(axis=0)
        if bounds:
            ssum = cols[:, a:a + 1] + cols[:, a + 1:]
            smin, smax = ssum.min(axis=0), ssum.max(axis=0)
        for b, j in enumerate(rest):
            if bounds:
                if dmin[b] > lo[i] - hi[j]:
                    out.append(Atom(cond, "le", ((-1, i), (1, j)), -int(dmin[b])))
                if dmax[b] < hi[i] - lo[j]:
                    out.append(Atom(cond, "le", ((1, i), (-1, j)), int(dmax[b])))
                if smin[b] > lo[i] + lo[j]:
                    out.append(Atom(cond, "le", ((-1, i), (-1, j)), -int(smin[b])))
                if smax[b] < hi[i] + hi[j]:
                    out.append(Atom(cond, "le", ((1, i), (1, j)), int(smax[b])))
            elif dmin[b] == dmax[b] and lo[i] != hi[i] and lo[j] != hi[j]:
                if _constant_diff(glob, i, j) or _constant_diff(glob2, i, j):
                    continue  # already equal under a weaker condition
                out.append(Atom(cond, "le", ((-1, i), (1, j)), -int(dmin[b])))
                out.append(Atom(cond, "le", ((1, i), (-1, j)), int(dmax[b])))
    return out


def _constant_diff(arr: np.ndarray | None, i: int, j: int) -> bool:
    if arr is None or len(arr) == 0:
        return False
    d = arr[:, i] - arr[:, j]
    return bool(d.min() == d.max())


# ---------------------------------------------------------------------------------- rendering


def render_atom(a: Atom, slots: Sequence[Slot]) -> str:
    """The atom in gpspec syntax (`busy implies rptr >= 1`)."""
    conds = [_render_eq(slots[i], v, True) for i, v in a.cond]
    if a.kind == "ne":
        body = _render_eq(slots[a.terms[0][1]], a.k, False)
    else:
        body = _render_linear(a.terms, a.k, slots)
    if not conds:
        return body
    lhs = " and ".join(conds)
    return f"({lhs} implies {body})"


def _render_eq(sl: Slot, v: int, positive: bool) -> str:
    t = sl.type
    if isinstance(t, ir.BoolType):
        return sl.name if bool(v) == positive else f"not {sl.name}"
    val = ir.format_scalar(t, v)
    return f"{sl.name} {'==' if positive else '!='} {val}"


def _render_linear(terms: tuple[tuple[int, int], ...], k: int, slots: Sequence[Slot]) -> str:
    """`x <= k`, `x >= k`, `x - y <= k` (the positive term first), `x + y >= k`."""
    if all(c < 0 for c, _ in terms):
        terms = tuple((-c, i) for c, i in terms)
        op, k = ">=", -k
    else:
        op = "<="
        terms = tuple(sorted(terms, key=lambda t: -t[0]))
    text = ""
    for n, (c, i) in enumerate(terms):
        name = slots[i].name
        if n == 0:
            text = name if c == 1 else f"{c} * {name}"
        else:
            text += f" + {name}" if c == 1 else (f" - {name}" if c == -1 else f" + {c} * {name}")
    if len(terms) == 2 and terms[1][0] == -terms[0][0] == -1 and k == 0:  # x - y <= 0: x <= y
        return f"{slots[terms[0][1]].name} {op} {slots[terms[1][1]].name}"
    return f"{text} {op} {k}"

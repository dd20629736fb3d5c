"""Richer candidate templates for the second `--for-all` round (checker/engines/param/prove.py).

The first round's templates (checker/engines/smt/mining.py through checker/engines/param/mine.py) give ranges,
two-counter sums and differences, and equalities of two counters under at most two
conditions. Some proofs need more, and these are tried only for the properties the first
round left unknown, so the proofs it finds stay as fast as they were:

- *order columns* `cmp(a, b)` in {-1, 0, 1} between two int columns whose ranges grow with
  the same constant, usable as conditions (`hq_r[x] < issued[x] implies ...`): a disjunction
  such as "either the relaunch has caught up with the kernels submitted before, or the rewind
  is at most CAP+1" is a conditional fact;
- *conditional difference bounds* `cond implies a - b <= k` under one or two conditions,
  where k is tighter than the bound without them (reef_rewind: `task[x] == Waiting implies
  issued[x] - koff[x] <= 3`);
- under a condition on an enum with more values than the first round takes as conditions
  (a scheduler's program counter, `sched == Relaunch`): the first round's templates, with one
  more condition (`sched == Poll and preempted implies task[x] != Executing`);
- *three-counter equalities* `a + b - c == k` under one or two conditions, where no two of
  the counters already have a constant sum or difference there (`sched == Offset implies
  temp + hq_r[x] - loff[x] == 1`).

Like every candidate, these only propose: Z3 decides with the sizes symbolic."""

from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np
import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.param.encode import PState
from gpcheck.checker.engines.param.mine import Column, View, _Slot
from gpcheck.checker.engines.smt.mining import SMALL_DOMAIN, Atom, mine_atoms

MAX_ORDER_COLUMNS = 40  # order columns per view
PER_VALUE = 200  # atoms of the first round's templates under one value of a wide enum
PHASE_VALUES = 16  # an enum column with at most this many observed values is a phase condition
MAX_CONDITION_PAIRS = 1_500  # two-condition masks examined per view
MAX_INDICES = 1  # views with more indices get no order columns (their column count is large already)


def order_columns(view: View) -> View:
    """The view with order columns between its growing int columns (see the module doc)."""
    if len(view.names) > MAX_INDICES:
        return view
    ints = [k for k, c in enumerate(view.columns)
            if c.kind in ("scalar", "elem") and isinstance(c.type, ir.IntType) and c.consts]
    extra: list[Column] = []
    for i, j in itertools.combinations(ints, 2):
        if not (view.columns[i].consts & view.columns[j].consts):
            continue
        extra.append(_order(view.columns[i], view.columns[j], (i, j)))
        if len(extra) >= MAX_ORDER_COLUMNS:
            break
    return View(view.domains, view.names, view.columns + extra, view.distinct)


def _order(a: Column, b: Column, pair: tuple[int, int]) -> Column:
    def term(s: PState, xs: Sequence[z3.ArithRef]) -> z3.ExprRef:
        x, y = a.term(s, xs), b.term(s, xs)
        return z3.If(x < y, -1, z3.If(x == y, 0, 1))  # type: ignore[operator]

    def value(d: dict, cs: dict[str, int], ix: tuple[int, ...]) -> int:
        x, y = a.value(d, cs, ix), b.value(d, cs, ix)
        return -1 if x < y else (0 if x == y else 1)

    def eq_text(v: int, positive: bool) -> str:
        op = {-1: "<", 0: "==", 1: ">"}[v] if positive else {-1: ">=", 0: "!=", 1: "<="}[v]
        return f"{a.name} {op} {b.name}"

    def concrete(cs: dict[str, int], ix: tuple[int, ...], slot) -> z3.ExprRef:  # type: ignore[no-untyped-def]
        x, y = a.concrete(cs, ix, slot), b.concrete(cs, ix, slot)  # type: ignore[misc]
        return z3.If(x < y, -1, z3.If(x == y, 0, 1))  # type: ignore[operator]

    return Column(f"cmp({a.name}, {b.name})", ir.IntType(-1, 1), "cmp", term, value, eq_text, concrete=concrete,
                  uses=a.uses | b.uses, pair=pair)


def wide_atoms(view: View, rows: np.ndarray, limit: int) -> list[Atom]:
    """Conditional difference bounds and three-counter equalities over the view's rows
    (see the module doc), at most `limit`: the equalities first, then the ranges under a wide
    enum's condition, then the bounds. Conditions come in this
    order: one phase condition (an enum or bool column equal to a value: `sched == Offset`), one
    order condition, two enum phase conditions (`sched == Offset and task[x] == Executing`). Under an order condition only difference bounds sharing a counter with it (`a < b
    implies b - c <= k`); the rest are mostly artefacts of the small sizes."""
    if len(rows) == 0 or len(view.names) > MAX_INDICES:
        return []
    cols = view.columns
    everywhere = frozenset(range(len(view.names)))
    body = [i for i, c in enumerate(cols) if c.kind in ("scalar", "elem", "const") and isinstance(c.type, ir.IntType)]
    nvals = [len(np.unique(rows[:, i])) for i in range(len(cols))]

    def conds_of(pick, most: int) -> list[tuple[int, int]]:  # type: ignore[no-untyped-def]
        return [(i, int(v)) for i, c in enumerate(cols) if pick(c) and 1 < nvals[i] <= most
                for v in np.unique(rows[:, i])]

    phase = conds_of(lambda c: c.kind in ("scalar", "elem") and isinstance(c.type, (ir.EnumType, ir.BoolType)),
                     PHASE_VALUES)  # a scheduler's program counter has more values than SMALL_DOMAIN
    order = conds_of(lambda c: c.pair is not None, SMALL_DOMAIN)
    masks = {c: rows[:, c[0]] == c[1] for c in phase + order}
    glo_d, ghi_d = _diff_bounds(rows, body)
    out: list[Atom] = []  # difference bounds
    eqs: list[Atom] = []  # equalities: few, and first in the answer
    unary: list[Atom] = []  # ranges and excluded values under a wide enum's condition: next

    def reads_all(a: Atom) -> bool:
        return frozenset().union(*[cols[i].uses for i in a.slots()]) == everywhere

    def under(cond: tuple[tuple[int, int], ...], sub: np.ndarray, ref: np.ndarray, triples: bool,
              shared: set[int] | None = None) -> None:
        if len(sub) == 0:
            return
        vary = [i for i in body if i not in {c for c, _ in cond} and sub[:, i].min() != sub[:, i].max()]
        big = any(nvals[c] > SMALL_DOMAIN for c, _ in cond)
        lo_d, hi_d = _diff_bounds(sub, vary)
        rlo_d, rhi_d = _diff_bounds(ref, vary)
        for (i, j), hi in hi_d.items():
            if cols[i].kind == "const" and cols[j].kind == "const":
                continue
            if big and lo_d[(i, j)] == hi and ghi_d.get((i, j)) != glo_d.get((i, j)) and i < j:
                for a in (Atom(cond, "le", ((1, i), (-1, j)), int(hi)), Atom(cond, "le", ((-1, i), (1, j)), -int(hi))):
                    if reads_all(a):
                        eqs.append(a)  # an equality the first round's conditions could not reach
                continue
            if hi < min(rhi_d[(i, j)], ghi_d.get((i, j), rhi_d[(i, j)])) and lo_d[(i, j)] != hi:
                if shared is not None and not ({i, j} & shared):
                    continue
                a = Atom(cond, "le", ((1, i), (-1, j)), int(hi))
                if reads_all(a):
                    out.append(a)
        if not triples:
            return
        # three-counter equalities: x + y - z constant here, no two of them constant already
        const2 = {p for p in hi_d if hi_d[p] == lo_d[p]}
        sums = {(i, j) for i, j in itertools.combinations(vary, 2)
                if (sub[:, i] + sub[:, j]).min() == (sub[:, i] + sub[:, j]).max()}
        for x, y, z in itertools.permutations(vary, 3):
            if x > y or any(cols[k].kind == "const" for k in (x, y)):
                continue
            if any(p in const2 or (p[1], p[0]) in const2 or p in sums or (p[1], p[0]) in sums
                   for p in ((x, y), (x, z), (y, z))):
                continue
            v = sub[:, x] + sub[:, y] - sub[:, z]
            if v.min() != v.max():
                continue
            k = int(v[0])
            for a in (Atom(cond, "le", ((1, x), (1, y), (-1, z)), k), Atom(cond, "le", ((-1, x), (-1, y), (1, z)), -k)):
                if reads_all(a):
                    eqs.append(a)

    for c in phase:
        under((c,), rows[masks[c]], rows, True)
        if nvals[c[0]] > SMALL_DOMAIN:  # the first round's templates under it, which it skipped
            sub = rows[masks[c]]
            slots = [_Slot(col.name, col.type) for col in cols]
            plain = [k for k, col in enumerate(cols) if col.pair is None]
            every = rows.tolist()
            for a in mine_atoms(slots, [tuple(r) for r in sub.tolist()], PER_VALUE, max_conditions=1,
                                cond_ok=lambda k, v: cols[k].kind in ("scalar", "elem") and not cols[k].consts,
                                vary=True):
                if not a.slots() <= set(plain) or any(cols[k].kind not in ("scalar", "elem") for _, k in a.terms):
                    continue
                b = Atom(((c,) + a.cond), a.kind, a.terms, a.k)
                if reads_all(b) and not all(a.holds(r) for r in every):
                    unary.append(b)
    for c in order:  # a bound on a difference that shares a counter with the order (`a < b implies b - c <= k`)
        under((c,), rows[masks[c]], rows, False, shared=set(cols[c[0]].pair or ()))
    examined = 0
    control = [c for c in phase if isinstance(cols[c[0]].type, ir.EnumType)]
    for c1, c2 in itertools.combinations(control, 2):
        if examined >= MAX_CONDITION_PAIRS:
            break
        if c1[0] == c2[0]:
            continue
        m = masks[c1] & masks[c2]
        if not m.any():
            continue
        examined += 1
        ref = rows[masks[c1]] if masks[c1].sum() <= masks[c2].sum() else rows[masks[c2]]
        under((c1, c2), rows[m], ref, True)
    return (eqs + unary + out)[:limit]


def _diff_bounds(rows: np.ndarray, ints: Sequence[int]) -> tuple[dict[tuple[int, int], int], dict[tuple[int, int], int]]:
    """min and max of rows[i] - rows[j] for every ordered pair of `ints`."""
    lo: dict[tuple[int, int], int] = {}
    hi: dict[tuple[int, int], int] = {}
    if len(rows) == 0:
        return lo, hi
    for i, j in itertools.permutations(ints, 2):
        d = rows[:, i] - rows[:, j]
        lo[(i, j)], hi[(i, j)] = int(d.min()), int(d.max())
    return lo, hi

"""Counted groups with one component whose value range is symbolic (NOTE(symbolic-values)).

The counter abstraction (checker/engines/param/counters.py) counts the rows of a *group* of row
components per value tuple. A component whose values span a range that grows with the
constants (`prog: [0..S-1] -> 0..BLEN`) has no fixed value set to count over. A group may
hold ONE such component x (values lo..hi, terms in the constants) beside its finite ones; for
each tuple h of the finite components the state then has

- `C_h : Int -> Int`, an SMT array: C_h(p) = the rows whose finite part is h and whose x is p,
- `M0_h = sum_p C_h(p)` (the rows with finite part h) and `M1_h = sum_p p * C_h(p)`, two
  exact ghost moments (a sum over an array is outside what Z3 can say about it).

NOTE(symbolic-values). Facts valid in every concrete state, added to the state's range
constraint (`in_range`; the quantified ones are instantiated at the query's ground points by
checker/engines/param/instantiate.py, under this group's own index key):
  `C_h(q) >= 0` and `C_h(q) <= M0_h` (a count of some of the rows of M0_h);
  `C_h(q) == 0` for q outside lo..hi (every row's x is in its range);
  `C_h(a) + C_h(b) <= M0_h` for a != b (disjoint sets of rows);
  `lo * M0_h <= M1_h <= hi * M0_h` (each of the M0_h rows adds a value in lo..hi), and
  `lo * (M0_h - C_h(a)) <= M1_h - a * C_h(a) <= hi * (M0_h - C_h(a))` at every a (the same
  for the rows whose x is not a: with all rows at one point, M1_h is that point times M0_h);
  `M1_h <= (hi - 1) * M0_h + C_h(hi)` (a row at hi adds one more than hi - 1), with its
  mirror at lo. Exact updates keep them true: each is a
  property of a multiset of values in lo..hi, which is what C_h and the moments describe.

A row computation (a loop's new values, an accumulation's index, guard and addend, a fold's
body, an error condition) is split into *pieces* per h (`pieces`): its comparisons of x are
rewritten to point tests (`x == t`; `x <= t` with t within NEAR of lo or hi becomes "x is not
one of the top/bottom points", valid because every row's x is in lo..hi); a point piece is
the rows with x == p (count C_h(p), zero when an earlier point is equal to p), where every
value is exact after substituting p; the complement piece is the other rows (count M0_h
minus the points'), where every point test is false, so every value must be free of x except
the new value of x itself, which may be x + a for an integer a (a shift: `tick`'s
`prog[i] + 1`). Its image is then `C'(q) = C_h(q - a)` where q - a is no point, and its
moments are `M1_h - sum_j p_j * C_h(p_j) + a * count`. Anything else (x multiplied, compared
with `<` far from its ends, a value that reads x other than as the shifted new value, two
symbolic components in one group) raises `Unsupported` naming it: `unknown`, never a wrong
answer."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import z3

from gpcheck.checker.engines.param.extract import Unsupported
from gpcheck.checker.engines.smt.terms import subterms

if TYPE_CHECKING:
    from gpcheck.checker.engines.param.counter_plan import CounterPlan

NEAR = 4  # `x <= t` with t this close to an end of x's range becomes point tests
MAX_POINTS = 12  # points one row computation tests
_COMPARE = {z3.Z3_OP_EQ: "==", z3.Z3_OP_DISTINCT: "!=", z3.Z3_OP_LE: "<=", z3.Z3_OP_LT: "<",
            z3.Z3_OP_GE: ">=", z3.Z3_OP_GT: ">"}
_serial = itertools.count()


def reset_names() -> None:
    """Number the lambdas' bound names from zero again (NOTE(term-names))."""
    global _serial
    _serial = itertools.count()


def m0(g: int, h: tuple[int, ...]) -> tuple:  # type: ignore[type-arg]
    """The key of M0_h in a state's counts (C_h's key is (g, h))."""
    return (g, h, "M0")


def m1(g: int, h: tuple[int, ...]) -> tuple:  # type: ignore[type-arg]
    """The key of M1_h."""
    return (g, h, "M1")


@dataclass
class Piece:
    """Rows of one finite tuple h whose values are known together (see the module doc)."""

    cond: z3.BoolRef  # x-free: these values hold when it does (a split of the shifted value)
    count: z3.ArithRef  # the piece's rows
    terms: list[z3.ExprRef | None]  # x-free values; None at the shifted term
    shift: int | None = None  # the shifted term is x + shift
    arr: z3.ExprRef | None = None  # C_h (a shifted piece): its rows at each value
    points: list[z3.ArithRef] = field(default_factory=list)  # values a shifted piece excludes
    xsum: z3.ArithRef | None = None  # the sum of x over the piece's rows (a complement)

    def total(self, i: int) -> z3.ArithRef:
        """The sum over the piece's rows of term i."""
        if self.terms[i] is None:
            assert self.shift is not None and self.xsum is not None
            return self.xsum + self.shift * self.count if self.shift else self.xsum  # type: ignore[return-value]
        t = self.terms[i]
        if z3.is_int_value(t):
            n = t.as_long()  # type: ignore[union-attr]
            return z3.IntVal(0) if n == 0 else (self.count if n == 1 else n * self.count)  # type: ignore[return-value]
        return t * self.count  # type: ignore[operator, return-value]

    def at(self, i: int, q: z3.ArithRef) -> z3.ArithRef:
        """The piece's rows whose term i is q."""
        if self.terms[i] is None:
            assert self.arr is not None and self.shift is not None
            src = q - self.shift if self.shift else q
            out = z3.Select(self.arr, src)
            if self.points:
                out = z3.If(z3.Or(*[src == p for p in self.points]), 0, out)
            return out  # type: ignore[return-value]
        return z3.If(q == self.terms[i], self.count, 0)  # type: ignore[return-value]


def has(e: z3.ExprRef, x: z3.ExprRef) -> bool:
    """`e` reads x."""
    xi = x.get_id()
    return any(s.get_id() == xi for s in subterms([e]))


def linear(e: z3.ExprRef, x: z3.ExprRef, name: str) -> tuple[int, z3.ArithRef]:
    """(c, r) with e == c * x + r, r free of x; Unsupported where x is not linear in e."""
    if e.eq(x):
        return 1, z3.IntVal(0)
    if not has(e, x):
        return 0, e  # type: ignore[return-value]
    if z3.is_add(e):
        c, r = 0, []
        for a in e.children():
            ca, ra = linear(a, x, name)
            c, r = c + ca, r + [ra]
        return c, z3.Sum(*r)  # type: ignore[return-value]
    if z3.is_sub(e):
        c0, r0 = linear(e.arg(0), x, name)
        for a in e.children()[1:]:
            ca, ra = linear(a, x, name)
            c0, r0 = c0 - ca, r0 - ra  # type: ignore[assignment]
        return c0, r0
    if z3.is_app_of(e, z3.Z3_OP_UMINUS):
        c, r = linear(e.arg(0), x, name)
        return -c, -r  # type: ignore[return-value]
    if z3.is_mul(e):
        k, rest = 1, []
        for a in e.children():
            if z3.is_int_value(a):
                k *= a.as_long()
            else:
                rest.append(a)
        if len(rest) == 1:
            c, r = linear(rest[0], x, name)
            return k * c, k * r  # type: ignore[return-value]
    raise Unsupported(f"{name} (a value of the counted rows whose range grows with the constants) used "
                      f"other than linearly: {_show(e)}")


def alts(e: z3.ExprRef, x: z3.ExprRef) -> list[tuple[z3.BoolRef, z3.ExprRef]]:
    """`e` as guarded alternatives (cond, term) with no if-then-else around x in the terms."""
    if not has(e, x):
        return [(z3.BoolVal(True), e)]
    if z3.is_app_of(e, z3.Z3_OP_ITE):
        c = e.arg(0)
        return ([(z3.And(c, a), t) for a, t in alts(e.arg(1), x)]  # type: ignore[misc]
                + [(z3.And(z3.Not(c), a), t) for a, t in alts(e.arg(2), x)])
    if z3.is_arith(e) and e.num_args() and any(z3.is_app_of(s, z3.Z3_OP_ITE) and has(s, x) for s in subterms([e])):
        combos = [alts(a, x) for a in e.children()]
        out = []
        for pick in itertools.product(*combos):
            out.append((z3.And(*[c for c, _ in pick]), e.decl()(*[t for _, t in pick])))
        return out  # type: ignore[return-value]
    return [(z3.BoolVal(True), e)]


class Tests:
    """The point tests of x in some terms, and their truth on the other rows (module doc)."""

    def __init__(self, x: z3.ArithRef, lo: z3.ArithRef, hi: z3.ArithRef, name: str) -> None:
        self.x, self.lo, self.hi, self.name = x, lo, hi, name
        self.points: list[z3.ArithRef] = []
        self._ids: set[int] = set()
        # id -> (term, its rest): the term is kept so that its id is not reused while this lives
        self._memo: dict[int, tuple[z3.ExprRef, z3.ExprRef]] = {}

    def _point(self, p: z3.ArithRef) -> None:
        p = z3.simplify(p)  # type: ignore[assignment]
        if p.get_id() not in self._ids:
            self._ids.add(p.get_id())
            self.points.append(p)
            if len(self.points) > MAX_POINTS:
                raise Unsupported(f"{self.name}: a row computation testing more than {MAX_POINTS} of its values")

    def _le(self, t: z3.ArithRef) -> bool:
        """`x <= t` on the rows outside the points (adding the points it needs)."""
        d = z3.simplify(t - self.hi)
        if z3.is_int_value(d) and d.as_long() >= 0:  # type: ignore[attr-defined]
            return True
        if z3.is_int_value(d) and d.as_long() >= -NEAR:  # type: ignore[attr-defined]
            for j in range(-d.as_long()):  # type: ignore[attr-defined]
                self._point(self.hi - j)  # type: ignore[arg-type]
            return True
        e = z3.simplify(t - self.lo)
        if z3.is_int_value(e) and e.as_long() < 0:  # type: ignore[attr-defined]
            return False
        if z3.is_int_value(e) and e.as_long() < NEAR:  # type: ignore[attr-defined]
            for j in range(e.as_long() + 1):  # type: ignore[attr-defined]
                self._point(self.lo + j)  # type: ignore[arg-type]
            return False
        raise Unsupported(f"{self.name} (a value of the counted rows whose range grows with the constants) "
                          f"compared by an order (<, <=, >, >=) with a bound not within {NEAR} of its range's "
                          "ends (only ==, != and such bounds are counted)")

    def _atom(self, op: int, lhs: z3.ArithRef, rhs: z3.ArithRef) -> z3.BoolRef:
        """The atom's truth outside the points, adding the points it tests."""
        c, r = linear(lhs - rhs, self.x, self.name)  # type: ignore[arg-type]
        if c == 0:
            return z3.simplify(z3.substitute(_cmp(op, lhs, rhs), (self.x, z3.IntVal(0))))  # type: ignore[return-value]
        if c not in (1, -1):
            raise Unsupported(f"{self.name} (a value of the counted rows whose range grows with the constants) "
                              f"multiplied by {abs(c)} in a comparison")
        t = z3.simplify(-r if c == 1 else r)  # x OP t (c = 1) or t OP x (c = -1)
        if c == -1:
            op = {z3.Z3_OP_LE: z3.Z3_OP_GE, z3.Z3_OP_LT: z3.Z3_OP_GT, z3.Z3_OP_GE: z3.Z3_OP_LE,
                  z3.Z3_OP_GT: z3.Z3_OP_LT}.get(op, op)
        if op in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT):
            self._point(t)  # type: ignore[arg-type]
            return z3.BoolVal(op == z3.Z3_OP_DISTINCT)
        if op == z3.Z3_OP_LE:
            return z3.BoolVal(self._le(t))  # type: ignore[arg-type]
        if op == z3.Z3_OP_LT:
            return z3.BoolVal(self._le(t - 1))  # type: ignore[arg-type]
        if op == z3.Z3_OP_GE:
            return z3.BoolVal(not self._le(t - 1))  # type: ignore[arg-type]
        return z3.BoolVal(not self._le(t))  # type: ignore[arg-type]

    def rest(self, e: z3.ExprRef) -> z3.ExprRef:
        """`e` on the rows whose x is none of the points: every comparison of x decided."""
        k = e.get_id()
        if k in self._memo:
            return self._memo[k][1]
        if not has(e, self.x):
            out = e
        elif z3.is_app(e) and e.decl().kind() in _COMPARE and e.num_args() == 2 and z3.is_arith(e.arg(0)):
            parts = []
            for (ca, a), (cb, b) in itertools.product(alts(e.arg(0), self.x), alts(e.arg(1), self.x)):
                truth = self._atom(e.decl().kind(), a, b)  # type: ignore[arg-type]
                parts.append(z3.And(self.rest(ca), self.rest(cb), truth))
            out = z3.simplify(z3.Or(*parts)) if len(parts) > 1 else z3.simplify(parts[0])
        elif z3.is_app(e) and e.num_args():
            out = e.decl()(*[self.rest(a) for a in e.children()])
        else:
            out = e
        self._memo[k] = (e, out)
        return out


def _cmp(op: int, a: z3.ArithRef, b: z3.ArithRef) -> z3.BoolRef:
    return {z3.Z3_OP_EQ: lambda: a == b, z3.Z3_OP_DISTINCT: lambda: a != b, z3.Z3_OP_LE: lambda: a <= b,
            z3.Z3_OP_LT: lambda: a < b, z3.Z3_OP_GE: lambda: a >= b, z3.Z3_OP_GT: lambda: a > b}[op]()  # type: ignore[return-value]


def _show(e: z3.ExprRef) -> str:
    s = str(e)
    return s if len(s) < 80 else s[:77] + "..."


def pieces(plan: "CounterPlan", counts: dict, g: int, h: tuple[int, ...], terms: Sequence[z3.ExprRef],  # type: ignore[type-arg]
           x: z3.ExprRef | None, shift_at: int | None = None) -> list[Piece]:
    """The rows of group g with finite part h as pieces (module doc): `terms` (read the rows'
    finite part as h and their symbolic component as x) with x-free values, the term at
    `shift_at` possibly x + a in the complement."""
    k = plan.sym[g]
    if k is None:
        return [Piece(z3.BoolVal(True), counts[(g, h)], list(terms))]
    assert x is not None, "a symbolic-valued group's pieces need the row's value x"
    arr, n0, n1 = counts[(g, h)], counts[m0(g, h)], counts[m1(g, h)]
    if not any(has(t, x) for t in terms):
        return [Piece(z3.BoolVal(True), n0, list(terms))]
    lo, hi = plan.comps[k].span  # type: ignore[misc]
    tests = Tests(x, lo, hi, plan.comps[k].text)  # type: ignore[arg-type]
    rest = [tests.rest(t) for t in terms]  # collects the points
    out: list[Piece] = []
    counted, xsum = [], []
    for j, p in enumerate(tests.points):
        same = [z3.simplify(p == b) for b in tests.points[:j]]
        same = [s for s in same if not z3.is_false(s)]
        cnt = z3.Select(arr, p) if not same else z3.If(z3.Or(*same), 0, z3.Select(arr, p))
        vals = [z3.simplify(z3.substitute(t, (x, p))) for t in terms]
        out.append(Piece(z3.BoolVal(True), cnt, vals))  # type: ignore[arg-type]
        counted.append(cnt)
        if not (z3.is_int_value(p) and p.as_long() == 0):  # type: ignore[attr-defined]
            xsum.append(p * cnt)
    left = z3.simplify(n0 - z3.Sum(*counted)) if counted else n0
    left_sum = n1 - z3.Sum(*xsum) if xsum else n1
    for i, t in enumerate(rest):
        if i != shift_at and has(t, x):
            raise Unsupported(f"{plan.comps[k].text} (a value of the counted rows whose range grows with the "
                              f"constants) read other than by comparisons: {_show(t)}")
    if shift_at is None or not has(rest[shift_at], x):
        out.append(Piece(z3.BoolVal(True), left, [z3.simplify(t) for t in rest], xsum=left_sum))  # type: ignore[arg-type]
        return out
    for cond, form in alts(rest[shift_at], x):
        cond = z3.simplify(cond)
        if z3.is_false(cond):
            continue
        c, r = linear(form, x, plan.comps[k].text)
        vals: list[z3.ExprRef | None] = [z3.simplify(t) for t in rest]
        r = z3.simplify(r)
        if c == 0:
            vals[shift_at] = r
            out.append(Piece(cond, left, vals, xsum=left_sum))  # type: ignore[arg-type]
        elif c == 1 and z3.is_int_value(r):
            vals[shift_at] = None
            out.append(Piece(cond, left, vals, r.as_long(), arr, list(tests.points), left_sum))  # type: ignore[arg-type, attr-defined]
        else:
            raise Unsupported(f"{plan.comps[k].text}: a new value of the counted rows that is neither fixed nor "
                              f"the old value plus a number: {_show(form)}")
    return out


# -- state -------------------------------------------------------------------------------------


def state(plan: "CounterPlan", g: int, tag: str) -> dict:  # type: ignore[type-arg]
    """C_h (an array), M0_h, M1_h per finite tuple h of symbolic-valued group g."""
    out: dict = {}  # type: ignore[type-arg]
    for h in plan.values[g]:
        out[(g, h)] = z3.Array(f"{tag}#A{g}{_label(h)}", z3.IntSort(), z3.IntSort())
        out[m0(g, h)] = z3.Int(f"{tag}#M0_{g}{_label(h)}")
        out[m1(g, h)] = z3.Int(f"{tag}#M1_{g}{_label(h)}")
    return out


def key(plan: "CounterPlan", g: int) -> str:
    """The index key of g's arrays for checker/engines/param/instantiate.py (its own, so that only
    points where some C_h is read instantiate the facts)."""
    return f"vals{g}.{plan.key}"


def in_range(plan: "CounterPlan", counts: dict, g: int) -> list[z3.BoolRef]:  # type: ignore[type-arg]
    """The facts of NOTE(symbolic-values) for group g (quantified ones over the group's key)."""
    k = plan.sym[g]
    assert k is not None
    lo, hi = plan.comps[k].span  # type: ignore[misc]
    out: list[z3.BoolRef] = []
    n = next(_serial)
    a = z3.Int(f"v!a{n}@{key(plan, g)}")
    b = z3.Int(f"v!b{n}@{key(plan, g)}")
    for h in plan.values[g]:
        arr, n0, n1 = counts[(g, h)], counts[m0(g, h)], counts[m1(g, h)]
        ca, cb = z3.Select(arr, a), z3.Select(arr, b)
        out.append(n0 >= 0)
        out.append(z3.ForAll([a], z3.And(ca >= 0, ca <= n0, z3.Implies(z3.Or(a < lo, a > hi), ca == 0))))
        out.append(z3.ForAll([a, b], z3.Implies(a != b, ca + cb <= n0)))
        rest, rsum = n0 - ca, n1 - a * ca  # the rows at other values than a, and their sum
        out.append(z3.ForAll([a], z3.And(lo * rest <= rsum, rsum <= hi * rest)))
        out.append(z3.And(lo * n0 <= n1, n1 <= hi * n0))
        top, bot = z3.Select(arr, hi), z3.Select(arr, lo)
        out.append(z3.And(n1 <= (hi - 1) * n0 + top, n1 >= (lo + 1) * n0 - bot))
    return out


def init(plan: "CounterPlan", counts: dict, g: int, start: tuple[int, ...], p0: int) -> list[z3.BoolRef]:  # type: ignore[type-arg]
    """Every row at (start, p0)."""
    size = plan.size()
    q = z3.Int(f"v!i{next(_serial)}")
    out: list[z3.BoolRef] = []
    for h in plan.values[g]:
        on = h == start
        out.append(counts[(g, h)] == z3.Lambda([q], z3.If(q == p0, size, 0) if on else z3.IntVal(0)))
        out.append(counts[m0(g, h)] == (size if on else 0))
        out.append(counts[m1(g, h)] == (p0 * size if on and p0 else 0))
    return out


def image(plan: "CounterPlan", g: int, w: tuple[int, ...], sources) -> tuple:  # type: ignore[no-untyped-def, type-arg]
    """C'_w, M0'_w, M1'_w of symbolic-valued group g from `sources(f)`, which calls
    f(hit, piece) for every piece that may land in g (hit: it lands at w) and combines the
    results by the cases (counters._by_cases)."""
    k = plan.sym[g]
    assert k is not None
    qi = len(plan.fin[g])  # the terms are the finite components' new values, then x's
    q = z3.Int(f"v!q{next(_serial)}")
    arr = sources(lambda hit, pc: z3.If(hit, pc.at(qi, q), 0))
    n0 = sources(lambda hit, pc: z3.If(hit, pc.count, 0))
    n1 = sources(lambda hit, pc: z3.If(hit, pc.total(qi), 0))
    return z3.Lambda([q], arr), n0, n1


def _label(h: tuple[int, ...]) -> str:
    return "_" + "_".join(str(v) for v in h)

"""Z3 values of gpspec expressions and smart constructors that fold trivial cases.

A scalar value is one Z3 term: a `BoolRef` for `bool`, an `ArithRef` (Int) for integers and
enums (the member's index, NOTE(slots)). An aggregate value (array or struct) is an `Agg`: its
type and the flat tuple of its slot terms, in `ir.leaf_paths` order, so a dynamic index is an
ite-chain over slot positions and an assignment rewrites slots one by one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Union

import z3
from z3 import z3types

from gpcheck.spec import ir


@dataclass(frozen=True)
class Agg:
    """An array or struct value: its type and its slot terms in layout order."""

    type: ir.Type
    slots: tuple[z3.ExprRef, ...]


Value = Union[z3.ExprRef, Agg]

# the literals true and false of the context last asked about (NOTE(fresh-context) in
# checker/engines/smt/session.py: a term of one context must never meet one of another, so there are no
# module-level TRUE/FALSE made at import in the process's first context)
_LITS: list[object] = [None, None, None]


def _lits(ctx: z3.Context | None) -> list[object]:
    if ctx is None:
        ctx = z3.main_ctx()
    if _LITS[0] is not ctx:
        _LITS[:] = [ctx, z3.BoolVal(True, ctx), z3.BoolVal(False, ctx)]
    return _LITS


def true(ctx: z3.Context | None = None) -> z3.BoolRef:
    """The literal true of `ctx` (None: the current context, `z3.main_ctx()`)."""
    return _lits(ctx)[1]  # type: ignore[return-value]


def false(ctx: z3.Context | None = None) -> z3.BoolRef:
    """The literal false of `ctx` (None: the current context, `z3.main_ctx()`)."""
    return _lits(ctx)[2]  # type: ignore[return-value]


def subterms(terms: Iterable[z3.ExprRef]) -> Iterator[z3.ExprRef]:
    """Each distinct subterm of `terms` once, depth first (terms are DAGs: a shared subterm is
    visited once; a quantifier's child is its body)."""
    seen: set[int] = set()
    todo = list(terms)
    while todo:
        e = todo.pop()
        i = e.get_id()
        if i in seen:
            continue
        seen.add(i)
        yield e
        todo.extend(e.children())


def is_true(e: z3.ExprRef) -> bool:
    """`e` is the literal true (one C call: terms are hash-consed)."""
    return e.eq(_lits(e.ctx)[1])


def is_false(e: z3.ExprRef) -> bool:
    return e.eq(_lits(e.ctx)[2])


def _nary(mk: object, out: list[z3.BoolRef]) -> z3.BoolRef:
    """And/Or through the C API: z3.And/z3.Or re-check every operand's sort in Python, which
    dominates when formulas are assembled by the thousand (PDR's clauses)."""
    ctx = out[0].ctx
    arr = (z3types.Ast * len(out))(*(a.as_ast() for a in out))
    return z3.BoolRef(mk(ctx.ref(), len(out), arr), ctx)  # type: ignore[operator]


def mk_and(*args: z3.BoolRef) -> z3.BoolRef:
    """Conjunction that drops `true` operands and collapses on a `false` one."""
    out: list[z3.BoolRef] = []
    for a in args:
        if is_false(a):
            return a
        if not is_true(a):
            out.append(a)
    if not out:
        return true(args[0].ctx if args else None)
    return out[0] if len(out) == 1 else _nary(z3.Z3_mk_and, out)


def mk_or(*args: z3.BoolRef) -> z3.BoolRef:
    """Disjunction that drops `false` operands and collapses on a `true` one."""
    out: list[z3.BoolRef] = []
    for a in args:
        if is_true(a):
            return a
        if not is_false(a):
            out.append(a)
    if not out:
        return false(args[0].ctx if args else None)
    return out[0] if len(out) == 1 else _nary(z3.Z3_mk_or, out)


def mk_not(a: z3.BoolRef) -> z3.BoolRef:
    if is_true(a):
        return false(a.ctx)
    if is_false(a):
        return true(a.ctx)
    if z3.is_not(a):
        return a.arg(0)  # type: ignore[return-value]
    return z3.Not(a)


def mk_ite(c: z3.BoolRef, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
    if is_true(c) or a.eq(b):
        return a
    if is_false(c):
        return b
    return z3.If(c, a, b)


def mk_eq(a: z3.ExprRef, b: z3.ExprRef) -> z3.BoolRef:
    if a.eq(b):
        return true(a.ctx)
    ka, kb = const_int(a), const_int(b)
    if ka is not None and kb is not None:
        return z3.BoolVal(ka == kb, a.ctx)
    if (is_true(a) or is_false(a)) and (is_true(b) or is_false(b)):
        return z3.BoolVal(is_true(a) == is_true(b))
    return a == b


def any_of(items: Iterable[z3.BoolRef]) -> z3.BoolRef:
    return mk_or(*items)


def all_of(items: Iterable[z3.BoolRef]) -> z3.BoolRef:
    return mk_and(*items)


def const_int(e: z3.ExprRef) -> int | None:
    """The value of an integer (Int or bit-vector) literal term, or None."""
    if z3.is_int_value(e):
        return int(e.as_long())  # type: ignore[attr-defined]
    if z3.is_bv_value(e):
        return int(e.as_signed_long())  # type: ignore[attr-defined]
    return None


@dataclass(frozen=True)
class Num:
    """How integers and enums are represented: Z3 Int (`width` None) or signed bit-vectors of
    one width at which no term of the model overflows (see `bounds.bv_width`)."""

    width: int | None = None

    @property
    def sort(self) -> z3.SortRef:
        return z3.IntSort() if self.width is None else z3.BitVecSort(self.width)

    def lit(self, v: int) -> z3.ExprRef:
        return z3.IntVal(v) if self.width is None else z3.BitVecVal(v, self.width)

    def div(self, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
        """Python floor division `a // b` (b != 0)."""
        bv = const_int(b)
        if self.width is None:
            if bv is not None and bv > 0:
                return a / b  # type: ignore[operator]
            # Z3's Int division is Euclidean: equal to floor division for b > 0
            return z3.If(b > 0, a / b, (-a) / (-b))  # type: ignore[operator]
        # bvsmod takes the divisor's sign like Python's %, so a - a % b is a multiple of b
        return (a - (a % b)) / b  # type: ignore[operator]

    def mod(self, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
        """Python `a % b` (b != 0): the result takes the sign of b."""
        bv = const_int(b)
        if self.width is None:
            if bv is not None and bv > 0:
                return a % b  # type: ignore[operator]
            return a - b * self.div(a, b)  # type: ignore[operator]
        return a % b  # type: ignore[operator]

    def sum(self, vals: list[z3.ExprRef]) -> z3.ExprRef:
        consts = [const_int(v) for v in vals]
        if all(c is not None for c in consts):
            return self.lit(sum(c for c in consts if c is not None))
        if self.width is None:
            return z3.Sum(*vals)  # type: ignore[arg-type]
        acc = vals[0]
        for v in vals[1:]:
            acc = acc + v  # type: ignore[operator]
        return acc


INT = Num(None)


def scalar_sort(t: ir.ScalarType, num: Num) -> z3.SortRef:
    return z3.BoolSort() if isinstance(t, ir.BoolType) else num.sort


def scalar_lit(t: ir.Type, v: int, num: Num) -> z3.ExprRef:
    """The Z3 literal of slot value `v` (NOTE(slots)) for scalar type `t`."""
    if isinstance(t, ir.BoolType):
        return z3.BoolVal(bool(v))
    return num.lit(v)


def domain_lits(t: ir.Type, num: Num) -> list[tuple[int, z3.ExprRef]]:
    """(slot value, literal) for every value of a finite scalar domain, in order."""
    assert isinstance(t, (ir.BoolType, ir.IntType, ir.EnumType)), t
    return [(v, scalar_lit(t, v, num)) for v in ir.domain_values(t)]


def in_type(t: ir.ScalarType, e: z3.ExprRef) -> z3.BoolRef:
    """The range constraint of a slot of type `t` (true for bools and unbounded ints)."""
    if isinstance(t, ir.BoolType):
        return true(e.ctx)
    v = const_int(e)
    if isinstance(t, ir.EnumType):
        if v is not None:
            return z3.BoolVal(0 <= v < len(t.members))
        return mk_and(e >= 0, e < len(t.members))  # type: ignore[operator]
    conds: list[z3.BoolRef] = []
    if t.lo is not None:
        conds.append(z3.BoolVal(v >= t.lo) if v is not None else e >= t.lo)  # type: ignore[operator]
    if t.hi is not None:
        conds.append(z3.BoolVal(v <= t.hi) if v is not None else e <= t.hi)  # type: ignore[operator]
    return mk_and(*conds)


def slot_value(e: z3.ExprRef, v: z3.ExprRef) -> int:
    """The slot value (NOTE(slots)) of a model's evaluation `v` of slot term `e`."""
    if z3.is_bool(e):
        return 1 if z3.is_true(v) else 0
    k = const_int(v)
    assert k is not None, v
    return k

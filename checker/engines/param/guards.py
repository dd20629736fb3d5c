"""The model's own guards as conditions of second-round candidates (predicate abstraction's seeds).

A view sees the array elements at its own indices, not an element at a fixed index such as
`launched[0]` (the high-priority stream). Facts like "while the high-priority kernel still
has blocks to hand out, a low-priority block in a slot has run at least `inv` ticks" are
conditioned on exactly such a comparison, and the model states it in a guard:
`let hi_waits = cur == 0 and hi_on and launched[0] < NB`. Every order comparison in an action
(`require`, `if`, `let`) that reads an array element at constant indices and no parameter or
local becomes a bool column, and `guarded_bounds` proposes difference bounds under it and one
value of an element column (`launched[0] < NB and slot[x] == 1 implies inv <= prog[x]`),
where they are tighter than under the guard alone, and than under the element's value alone
unless they join an element with a scalar (the samples may miss the larger sizes where only
the guarded bound holds); the element column is not one whose range grows with the sizes
(its values in the samples are theirs). Like every candidate these only
propose; Z3 decides."""

from __future__ import annotations

import itertools
import operator
import weakref
from typing import Callable, Sequence

import numpy as np
import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.param.encode import ParamEncoder, PState, _Exec
from gpcheck.checker.engines.param.mine import Column, View, _lo_of
from gpcheck.checker.engines.smt.mining import SMALL_DOMAIN, Atom

# a literal's value at some constants, per encoder (keys are ids of its model's nodes: mine.py's _LO_CACHE)
_LIT_CACHE: "weakref.WeakKeyDictionary[ParamEncoder, dict[tuple[int, tuple[tuple[str, int], ...]], int]]" = \
    weakref.WeakKeyDictionary()
MAX_GUARDS = 12  # guard columns per view
_CMP: dict[ir.BinOp, Callable[[int, int], bool]] = {
    ir.BinOp.LT: operator.lt, ir.BinOp.LE: operator.le, ir.BinOp.GT: operator.gt, ir.BinOp.GE: operator.ge}
_NEGATE = {ir.BinOp.LT: ir.BinOp.GE, ir.BinOp.GE: ir.BinOp.LT, ir.BinOp.LE: ir.BinOp.GT, ir.BinOp.GT: ir.BinOp.LE}
_ARITH: dict[ir.BinOp, Callable[[int, int], int]] = {
    ir.BinOp.ADD: operator.add, ir.BinOp.SUB: operator.sub, ir.BinOp.MUL: operator.mul}


def guard_columns(enc: ParamEncoder) -> list[Column]:
    """One bool column per distinct guard comparison described in the module doc."""
    seen: dict[str, Column] = {}
    probe = enc.state("guard.")
    for a in enc.model.actions:
        for st in ir.iter_stmts(a.body):
            roots = [st.cond] if isinstance(st, (ir.Require, ir.If)) else [st.value] if isinstance(st, ir.Let) else []
            for root in roots:
                for e in ir.walk_expr(root):
                    if isinstance(e, ir.Binary) and e.op in _CMP and _closed(e) and _reads_element(e):
                        _, err = _Exec(enc, probe, post=None, in_action=False).eval(e)
                        if not z3.is_false(z3.simplify(err)):
                            continue  # an index that may be out of range at some size
                        text = _text(enc, e)
                        negated = _text(enc, ir.Binary(_NEGATE[e.op], e.lhs, e.rhs, e.type))
                        if text not in seen and negated not in seen and len(seen) < MAX_GUARDS:
                            seen[text] = _column(enc, e, text)  # (either value of it is a condition)
    return list(seen.values())


def _closed(e: ir.Expr) -> bool:
    """Only variables, array elements at literal indices, literals and + - *."""
    match e:
        case ir.Lit():
            return True
        case ir.VarRef(primed=False):
            return ir.is_scalar(e.type)
        case ir.Index():
            base: ir.Expr = e
            while isinstance(base, ir.Index):
                if not isinstance(base.index, ir.Lit):
                    return False
                base = base.base
            return isinstance(base, ir.VarRef) and not base.primed and ir.is_scalar(e.type)
        case ir.Binary(op=op, lhs=l, rhs=r):
            return (op in _CMP or op in _ARITH) and _closed(l) and _closed(r)
    return False


def _reads_element(e: ir.Expr) -> bool:
    return any(isinstance(x, ir.Index) for x in ir.walk_expr(e))


def _text(enc: ParamEncoder, e: ir.Expr) -> str:
    from gpcheck.checker.engines.param.candidates import affine_text

    match e:
        case ir.Lit(value=v, type=t):
            if isinstance(t, ir.IntType):
                return affine_text(enc.pm.num(e, "value", v))
            shown = ir.format_scalar(t, v)
            return str(shown).lower() if isinstance(shown, bool) else str(shown)
        case ir.VarRef(var=vi):
            return enc.model.vars[vi].name
        case ir.Index(base=b, index=i):
            return f"{_text(enc, b)}[{_text(enc, i)}]"
        case ir.Binary(op=op, lhs=l, rhs=r):
            wrap = (lambda x, s: f"({s})" if isinstance(x, ir.Binary) else s)
            return f"{wrap(l, _text(enc, l))} {op.value} {wrap(r, _text(enc, r))}"
    raise AssertionError(e)


def _value(e: ir.Expr, dec: dict, model: ir.Model, consts: dict[str, int], enc: ParamEncoder) -> int:
    match e:
        case ir.Lit(value=v):
            key = (id(e), tuple(sorted(consts.items())))
            cache = _LIT_CACHE.setdefault(enc, {})
            hit = cache.get(key)
            if hit is None:
                num = enc.pm.num(e, "value", v)
                sub = [(enc.pm.consts[n], z3.IntVal(consts[n])) for n in enc.pm.names]
                hit = cache[key] = (v if z3.is_int_value(num) else
                                    z3.simplify(z3.substitute(num, *sub)).as_long())  # type: ignore[attr-defined]
            return hit
        case ir.VarRef(var=vi):
            return _num(dec[model.vars[vi].name], e.type)
        case ir.Index():
            idx: list[ir.Lit] = []
            base: ir.Expr = e
            while isinstance(base, ir.Index):
                idx.append(base.index)  # type: ignore[arg-type]
                base = base.base
            assert isinstance(base, ir.VarRef)
            a: object = dec[model.vars[base.var].name]
            t = base.type
            for lit in reversed(idx):
                assert isinstance(t, ir.ArrayType) and isinstance(t.index, ir.IntType)
                a = a[lit.value - _lo_of(t.index, consts, enc)]  # type: ignore[index, operator]
                t = t.elem
            return _num(a, e.type)
        case ir.Binary(op=op, lhs=l, rhs=r):
            x, y = _value(l, dec, model, consts, enc), _value(r, dec, model, consts, enc)
            return int(_CMP[op](x, y)) if op in _CMP else _ARITH[op](x, y)
    raise AssertionError(e)


def _num(v: object, t: ir.Type) -> int:
    if isinstance(t, ir.EnumType) and isinstance(v, str):
        return t.members.index(v)
    return int(v)  # type: ignore[call-overload]


def _column(enc: ParamEncoder, e: ir.Binary, text: str) -> Column:
    model = enc.model

    def term(s: PState, xs: Sequence[z3.ArithRef]) -> z3.ExprRef:
        v, _ = _Exec(enc, s, post=None, in_action=False).eval(e)
        return v  # type: ignore[return-value]

    def value(dec: dict, c: dict[str, int], ix: tuple[int, ...]) -> int:
        return _value(e, dec, model, c, enc)

    def concrete(c: dict[str, int], ix: tuple[int, ...], slot: Callable[[str], z3.ExprRef]) -> z3.ExprRef:
        return _concrete(e, c, slot)

    def _concrete(x: ir.Expr, c: dict[str, int], slot: Callable[[str], z3.ExprRef]) -> z3.ExprRef:
        match x:
            case ir.Lit():
                return z3.IntVal(_value(x, {}, model, c, enc)) if isinstance(x.type, ir.IntType) else \
                    (z3.BoolVal(bool(x.value)) if isinstance(x.type, ir.BoolType) else z3.IntVal(x.value))
            case ir.VarRef() | ir.Index():
                return slot(_text(enc, x))
            case ir.Binary(op=op, lhs=l, rhs=r):
                a, b = _concrete(l, c, slot), _concrete(r, c, slot)
                return _CMP[op](a, b) if op in _CMP else _ARITH[op](a, b)  # type: ignore[arg-type, return-value]
        raise AssertionError(x)

    def eq_text(v: int, positive: bool) -> str:
        return f"({text})" if bool(v) == positive else f"not ({text})"

    return Column(text, ir.BoolType(), "guard", term, value, eq_text, concrete=concrete)


def guarded_bounds(view: View, rows: np.ndarray, guards: Sequence[int], limit: int) -> list[Atom]:
    """`g and e == v implies a - b <= k` for a guard column g (holding), a value v of an
    element column e reading every index of the view, and int columns a, b, where k is below
    the bound under either condition alone (see the module doc)."""
    if len(rows) == 0 or not view.names:
        return []
    cols = view.columns
    everywhere = frozenset(range(len(view.names)))
    elems = [i for i, c in enumerate(cols) if c.kind == "elem" and c.uses == everywhere and not c.consts
             and 1 < len(np.unique(rows[:, i])) <= SMALL_DOMAIN]  # (a growing column's values are the sizes')
    ints = [i for i, c in enumerate(cols) if c.kind in ("scalar", "elem") and isinstance(c.type, ir.IntType)]
    out: list[Atom] = []
    for g in guards:
        for gv in (1,):  # the comparison as the model writes it
            gm = rows[:, g] == gv
            if not gm.any() or gm.all():
                continue
            for e in elems:
                for ev in np.unique(rows[:, e]):
                    em = rows[:, e] == ev
                    m = gm & em
                    if not m.any():
                        continue
                    sub, alone_e, alone_g = rows[m], rows[em], rows[gm]
                    vary = [i for i in ints if i != e and sub[:, i].min() != sub[:, i].max()]
                    for a, b in itertools.permutations(vary, 2):  # (a constant there: a range says it)
                        if cols[a].uses != everywhere and cols[b].uses != everywhere:
                            continue  # a fact about the element: one side reads it
                        hi = int((sub[:, a] - sub[:, b]).max())
                        if hi < (alone_g[:, a] - alone_g[:, b]).max() and (
                                hi < (alone_e[:, a] - alone_e[:, b]).max() or cols[a].uses != cols[b].uses):
                            atom = Atom(((g, gv), (e, int(ev))), "le", ((1, a), (-1, b)), hi)
                            out.append(atom)
                            if len(out) >= limit:
                                return out
    return out

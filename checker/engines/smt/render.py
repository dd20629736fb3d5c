"""Z3 formulas over slot terms, rendered in gpspec syntax for people.

Used for the inductive invariants Spacer finds: slot constants print as `waves_run[3]`,
`q[Waiting].rptr`; enum slots compared with a number print the member's name; negated
comparisons are flipped (`not (a <= b)` is `a > b`); `x + -1*y` prints as `x - y`. The top
level conjunction is split one conjunct per line."""

from __future__ import annotations

import z3

from gpcheck.spec import ir
from typing import Sequence

from gpcheck.checker.engines.smt.encode import Encoder, Slot, State

_CMP = {
    z3.Z3_OP_LE: "<=",
    z3.Z3_OP_LT: "<",
    z3.Z3_OP_GE: ">=",
    z3.Z3_OP_GT: ">",
    z3.Z3_OP_EQ: "==",
    z3.Z3_OP_DISTINCT: "!=",
}
_FLIP = {"<=": ">", "<": ">=", ">=": "<", ">": "<=", "==": "!=", "!=": "=="}

# binding strength: higher binds tighter
_P_IMPL, _P_OR, _P_AND, _P_NOT, _P_CMP, _P_ADD, _P_MUL, _P_ATOM = range(8)


class _Renderer:
    def __init__(self, terms: Sequence[z3.ExprRef], slots: Sequence[Slot]) -> None:
        # keyed by the constant's name: str() of a term runs Z3's pretty printer, far slower
        self.names: dict[str, tuple[str, ir.ScalarType]] = {
            t.decl().name(): (sl.name, sl.type) for sl, t in zip(slots, terms)
        }

    def enum_of(self, e: z3.ExprRef) -> ir.EnumType | None:
        if z3.is_const(e) and not z3.is_int_value(e):
            hit = self.names.get(e.decl().name())
            if hit is not None and isinstance(hit[1], ir.EnumType):
                return hit[1]
        return None

    def render(self, e: z3.ExprRef, ctx: int = 0) -> str:
        text, prec = self._r(e)
        return f"({text})" if prec < ctx else text

    def _r(self, e: z3.ExprRef) -> tuple[str, int]:
        if z3.is_true(e):
            return "true", _P_ATOM
        if z3.is_false(e):
            return "false", _P_ATOM
        if z3.is_int_value(e) or z3.is_bv_value(e):
            return str(e), _P_ATOM
        if z3.is_const(e):
            hit = self.names.get(e.decl().name())
            return (hit[0] if hit is not None else str(e)), _P_ATOM
        k = e.decl().kind()
        args = e.children()
        if k == z3.Z3_OP_AND:
            return " and ".join(self.render(a, _P_AND + 1) for a in args), _P_AND
        if k == z3.Z3_OP_OR:
            return " or ".join(self.render(a, _P_OR + 1) for a in args), _P_OR
        if k == z3.Z3_OP_IMPLIES:
            return f"{self.render(args[0], _P_IMPL + 1)} implies {self.render(args[1], _P_IMPL)}", _P_IMPL
        if k == z3.Z3_OP_NOT:
            inner = args[0]
            ik = inner.decl().kind() if z3.is_app(inner) else None
            if ik in _CMP and len(inner.children()) == 2:
                return self._cmp(_FLIP[_CMP[ik]], *inner.children())
            return f"not {self.render(inner, _P_NOT)}", _P_NOT
        if k in _CMP and len(args) == 2:
            if args[0].sort() == z3.BoolSort() and k == z3.Z3_OP_EQ:
                return f"{self.render(args[0], _P_CMP + 1)} == {self.render(args[1], _P_CMP + 1)}", _P_CMP
            return self._cmp(_CMP[k], *args)
        if k == z3.Z3_OP_ADD:
            out = self.render(args[0], _P_ADD)
            for a in args[1:]:
                neg = _negated(a)
                out += f" - {self.render(neg, _P_MUL)}" if neg is not None else f" + {self.render(a, _P_ADD + 1)}"
            return out, _P_ADD
        if k == z3.Z3_OP_SUB:
            return " - ".join([self.render(args[0], _P_ADD)] + [self.render(a, _P_ADD + 1) for a in args[1:]]), _P_ADD
        if k == z3.Z3_OP_MUL:
            if len(args) == 2 and z3.is_int_value(args[0]) and args[0].as_long() == -1:  # type: ignore[attr-defined]
                return f"-{self.render(args[1], _P_ATOM)}", _P_NOT
            return " * ".join(self.render(a, _P_MUL + 1) for a in args), _P_MUL
        if k == z3.Z3_OP_UMINUS:
            return f"-{self.render(args[0], _P_ATOM)}", _P_NOT
        if k in (z3.Z3_OP_IDIV, z3.Z3_OP_DIV):
            return f"{self.render(args[0], _P_MUL)} / {self.render(args[1], _P_MUL + 1)}", _P_MUL
        if k == z3.Z3_OP_MOD:
            return f"{self.render(args[0], _P_MUL)} % {self.render(args[1], _P_MUL + 1)}", _P_MUL
        if k == z3.Z3_OP_ITE:
            return (f"if {self.render(args[0])} then {self.render(args[1])} else {self.render(args[2], _P_IMPL)}",
                    _P_IMPL - 1)
        return str(e), _P_ATOM

    def _cmp(self, op: str, a: z3.ExprRef, b: z3.ExprRef) -> tuple[str, int]:
        # `x - y op k`: move y across when k is 0, so `rptr - wptr <= 0` reads `rptr <= wptr`
        kb = b.as_long() if z3.is_int_value(b) else None  # type: ignore[attr-defined]
        if kb is not None and op in ("<", ">"):  # integers: `x < 3` is `x <= 2`
            op, kb = ("<=", kb - 1) if op == "<" else (">=", kb + 1)
            b = z3.IntVal(kb)
        if kb == 0 and z3.is_app(a) and a.decl().kind() == z3.Z3_OP_ADD and len(a.children()) == 2:
            neg = _negated(a.children()[1])
            if neg is not None:
                return f"{self.render(a.children()[0], _P_ADD)} {op} {self.render(neg, _P_ADD)}", _P_CMP
        for x, y in ((a, b), (b, a)):
            et = self.enum_of(x)
            if et is not None and z3.is_int_value(y) and op in ("==", "!="):
                v = y.as_long()  # type: ignore[attr-defined]
                if 0 <= v < len(et.members):
                    return f"{self.render(x, _P_CMP + 1)} {op} {et.members[v]}", _P_CMP
        return f"{self.render(a, _P_ADD)} {op} {self.render(b, _P_ADD)}", _P_CMP


def _negated(e: z3.ExprRef) -> z3.ExprRef | None:
    """`y` when `e` is `-1 * y` (or a negative literal's absolute value), else None."""
    if z3.is_app(e) and e.decl().kind() == z3.Z3_OP_MUL:
        ch = e.children()
        if len(ch) == 2 and z3.is_int_value(ch[0]) and ch[0].as_long() < 0:  # type: ignore[attr-defined]
            c = -ch[0].as_long()  # type: ignore[attr-defined]
            return ch[1] if c == 1 else z3.IntVal(c) * ch[1]
    if z3.is_int_value(e) and e.as_long() < 0:  # type: ignore[attr-defined]
        return z3.IntVal(-e.as_long())  # type: ignore[attr-defined]
    return None


def render_expr(enc: Encoder, e: z3.ExprRef, s: State) -> str:
    """One formula over the slot terms `s`, in gpspec syntax."""
    return _Renderer(s, enc.slots).render(e)


def render_invariant(
    enc: Encoder, inv: z3.ExprRef, terms: Sequence[z3.ExprRef], slots: Sequence[Slot] | None = None
) -> str:
    """An invariant over a relation's arguments (de Bruijn variables 0..n-1 standing for
    `terms`, the slot terms of `slots`, all of them by default), one conjunct per line."""
    slots = enc.slots if slots is None else slots
    f = z3.substitute_vars(inv, *terms) if not z3.is_true(inv) else inv
    f = z3.simplify(f)
    r = _Renderer(terms, slots)
    parts = f.children() if z3.is_and(f) else [f]
    # conjuncts that only restate a slot's type (`pc >= 0`) say nothing
    bounds = {t.decl().name(): sl.type for sl, t in zip(slots, terms)}
    kept = [p for p in parts if not _type_bound(p, bounds)]
    return "\nand ".join(r.render(p, _P_AND + 1) for p in kept) if kept else "true"


def _type_bound(p: z3.ExprRef, types: dict[str, ir.ScalarType]) -> bool:
    """`p` compares one slot with a number in a way its type already guarantees."""
    neg = z3.is_not(p)
    e = p.arg(0) if neg else p
    if not (z3.is_app(e) and e.decl().kind() in _CMP and e.num_args() == 2):
        return False
    a, b = e.arg(0), e.arg(1)
    op = _CMP[e.decl().kind()]
    if z3.is_int_value(a) and z3.is_const(b):
        a, b, op = b, a, {"<=": ">=", "<": ">", ">=": "<=", ">": "<"}.get(op, op)
    if not (z3.is_const(a) and z3.is_int_value(b)):
        return False
    t = types.get(a.decl().name())
    if isinstance(t, ir.EnumType):
        lo, hi = 0, len(t.members) - 1
    elif isinstance(t, ir.IntType) and t.bounded:
        lo, hi = t.lo, t.hi  # type: ignore[assignment]
    else:
        return False
    if neg:
        op = _FLIP[op]
    k = b.as_long()  # type: ignore[attr-defined]
    return {"<=": hi <= k, "<": hi < k, ">=": lo >= k, ">": lo > k}.get(op, False)

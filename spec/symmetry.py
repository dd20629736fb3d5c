"""Symmetric types (NOTE(symmetry) in spec/ir.py): the check that a model keeps them symmetric,
and the slot geometry that the symmetry reduction permutes.

`check_symmetry` runs on the IR the type checker built (so it sees resolved types) and records
a located error for each construct that would tell two values of a symmetric type apart: the
permutations of the values would then not be automorphisms of the transition system, and a
reduced search could give a wrong verdict. `slot_roles` says, for every state slot, which
symmetric index positions it sits at and whether it holds a symmetric value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from gpcheck.spec import ir
from gpcheck.spec.errors import Diagnostics
from gpcheck.spec.span import Span


def sym_of(t: ir.Type) -> str | None:
    """The symmetric type a scalar value belongs to, or None."""
    return t.symmetric if isinstance(t, ir.IntType) else None


def _shape(t: ir.Type) -> object:
    """The type with its symmetric markers, for comparing aggregates (IntType equality ignores them)."""
    if isinstance(t, ir.ArrayType):
        return ("array", _shape(t.index), _shape(t.elem))
    if isinstance(t, ir.IntType):
        return ("sym", t.symmetric) if t.symmetric else "int"
    if isinstance(t, ir.StructType):
        return ("struct", t.name)  # a struct's fields are fixed by its one declaration
    return str(t)


def _describe(t: ir.Type) -> str:
    s = sym_of(t)
    if s is not None:
        return f"a value of the symmetric type {s}"
    if isinstance(t, ir.IntType):
        return "an integer"
    return f"a value of type {t}"


# ---------------------------------------------------------------------------------- the check
def check_symmetry(model: ir.Model, diags: Diagnostics) -> None:
    """Record a located error for each place the model breaks one of its symmetric types."""
    if not model.symmetric:
        return
    c = _Check(diags)
    for a in model.actions:
        c.block(a.body)
        if a.time is not None:  # a time bound that tells the values apart breaks the symmetry too
            c.expr(a.time.lower)
            if a.time.upper is not None and a.time.upper is not a.time.lower:
                c.expr(a.time.upper)
    for inv in model.invariants:
        c.expr(inv.expr)
    for tp in model.transitions:
        c.expr(tp.expr)
    for lv in model.liveness:
        if lv.p is not None:
            c.expr(lv.p)
        c.expr(lv.q)
    for lat in model.latencies:
        c.expr(lat.p)
        c.expr(lat.q)
    for t in model.terminals:
        c.expr(t)
    for k in model.constraints:
        c.expr(k.expr)
    _check_initial(model, diags)


class _Check:
    def __init__(self, diags: Diagnostics):
        self.d = diags

    def block(self, body: tuple[ir.Stmt, ...]) -> None:
        for s in body:
            self.stmt(s)

    def stmt(self, s: ir.Stmt) -> None:
        match s:
            case ir.Require(cond=c):
                self.expr(c)
            case ir.Let(value=v):
                self.expr(v)
            case ir.Assign(target=t, value=v, span=sp):
                self.expr(t)
                self.expr(v)
                if _shape(t.type) != _shape(v.type):
                    self.d.error(v.span or sp, f"cannot assign {_describe(v.type)} to a target holding "
                                               f"{_describe(t.type)}: symmetric values and integers do not mix")
            case ir.If(cond=c, then=a, else_=b):
                self.expr(c)
                self.block(a)
                self.block(b)
            case ir.For(binder=b, body=body, span=sp):
                self.block(body)
                if sym_of(b.type) is not None:
                    self._independent_loop(b, body, sp)

    def expr(self, e: ir.Expr) -> None:
        for x in ir.walk_expr(e):
            match x:
                case ir.Binary(op=op, lhs=l, rhs=r, span=sp) if op in ir.ARITH_OPS or op in ir.ORDER_OPS:
                    for side in (l, r):
                        s = sym_of(side.type)
                        if s is not None:
                            self.d.error(side.span or sp, f"'{op.value}' on a value of the symmetric type {s}: "
                                         f"its values are interchangeable, so only == and != apply to them")
                            break
                case ir.Binary(op=op, lhs=l, rhs=r, span=sp) if op in ir.EQUALITY_OPS:
                    if _shape(l.type) != _shape(r.type):
                        self.d.error(sp, f"'{op.value}' compares {_describe(l.type)} with {_describe(r.type)}: "
                                         f"a symmetric value equals only values of its own type (no literal or "
                                         f"integer singles one out)")
                case ir.Unary(op=ir.UnOp.NEG, operand=o, span=sp) if sym_of(o.type) is not None:
                    self.d.error(sp, f"'-' on a value of the symmetric type {sym_of(o.type)}")
                case ir.Index(base=b, index=i, span=sp):
                    it = b.type.index if isinstance(b.type, ir.ArrayType) else None
                    if it is not None and isinstance(it, ir.IntType) and _shape(it) != _shape(i.type):
                        want = f"a value of the symmetric type {it.symmetric}" if it.symmetric else "an integer"
                        self.d.error(i.span or sp, f"this array is indexed by {want}; the index is "
                                                   f"{_describe(i.type)}")
                case ir.Ite(then=t, else_=f, span=sp) if _shape(t.type) != _shape(f.type) and (
                        sym_of(t.type) or sym_of(f.type)):
                    self.d.error(sp, f"the branches of 'if' are {_describe(t.type)} and {_describe(f.type)}")
                case ir.Fold(kind=k, binder=b, body=body, span=sp):
                    if k in (ir.FoldKind.SUM, ir.FoldKind.MIN, ir.FoldKind.MAX) and sym_of(body.type):
                        self.d.error(body.span or sp, f"'{k.value}' of values of the symmetric type "
                                                      f"{sym_of(body.type)}: they are not numbers")
                    if k in (ir.FoldKind.ALL, ir.FoldKind.ANY) and sym_of(b.type) is not None:
                        bad = _may_fail(body)
                        if bad is not None:
                            self.d.error(bad.span or sp, f"'{k.value}' over the symmetric type {sym_of(b.type)} "
                                         f"stops at the first value that decides it, and this part of its body "
                                         f"may fail to evaluate (an index or a division): whether the fold fails "
                                         f"would depend on the order of the values")
                case _:
                    pass

    def _independent_loop(self, b: ir.Symbol, body: tuple[ir.Stmt, ...], sp: Span) -> None:
        """A `for` over a symmetric type must not depend on its iteration order: no `require`
        (which of a failing require and a modelling error comes first would), and every
        variable it writes is read and written only at the element its binder indexes."""
        accesses: dict[int, list[tuple[tuple[object, ...], Span, bool]]] = {}
        written: set[int] = set()
        for s in ir.iter_stmts(body):
            if isinstance(s, ir.Require):
                self.d.error(s.span, f"a 'require' inside a 'for' over the symmetric type {sym_of(b.type)}: "
                                     f"whether a failing require or a modelling error comes first would "
                                     f"depend on the iteration order (move the require out of the loop)")
            for e, is_write in _stmt_exprs(s):
                for var, path, where in _accesses(e):
                    accesses.setdefault(var, []).append((path, where, is_write))
                    if is_write:
                        written.add(var)
        for var in sorted(written):
            common: set[int] | None = None
            for path, where, _w in accesses[var]:
                here = {k for k, a in enumerate(path) if isinstance(a, ir.LocalRef) and a.sym.id == b.id}
                common = here if common is None else common & here
                if not common:
                    self.d.error(where, f"the 'for' over the symmetric type {sym_of(b.type)} writes this "
                                        f"variable, so each iteration may read and write it only at the element "
                                        f"its binder '{b.name}' indexes (the same index position everywhere); "
                                        f"otherwise the result would depend on the iteration order")
                    break


def _stmt_exprs(s: ir.Stmt) -> Iterator[tuple[ir.Expr, bool]]:
    """The expressions of one statement (not of nested blocks) and whether each is a write target."""
    match s:
        case ir.Require(cond=c):
            yield c, False
        case ir.Let(value=v):
            yield v, False
        case ir.Assign(target=t, value=v):
            yield t, True
            yield v, False
        case ir.If(cond=c):
            yield c, False
        case _:
            pass


def _accesses(e: ir.Expr, write: bool = False) -> Iterator[tuple[int, tuple[object, ...], Span]]:
    """Each variable access in `e` as (variable, accessor path, span): index expressions and
    field names from the variable outwards, longest chains only."""
    chain: list[object] = []
    x = e
    while isinstance(x, (ir.Index, ir.Field)):
        chain.append(x.index if isinstance(x, ir.Index) else x.name)
        x = x.base
    if isinstance(x, ir.VarRef):
        yield x.var, tuple(reversed(chain)), e.span
        for a in chain:
            if not isinstance(a, str):
                yield from _accesses(a)  # type: ignore[arg-type]
        return
    match e:
        case ir.Index(base=b, index=i):
            yield from _accesses(b)
            yield from _accesses(i)
        case ir.Field(base=b):
            yield from _accesses(b)
        case ir.Unary(operand=o):
            yield from _accesses(o)
        case ir.Binary(lhs=l, rhs=r):
            yield from _accesses(l)
            yield from _accesses(r)
        case ir.Ite(cond=c, then=t, else_=f):
            yield from _accesses(c)
            yield from _accesses(t)
            yield from _accesses(f)
        case ir.Fold(body=b):
            yield from _accesses(b)
        case _:
            pass


def _may_fail(e: ir.Expr) -> ir.Expr | None:
    """A sub-expression whose evaluation may raise a modelling error (conservative), or None."""
    for x in ir.walk_expr(e):
        if isinstance(x, ir.Index) and isinstance(x.base.type, ir.ArrayType):
            it = x.base.type.index
            if not isinstance(it, ir.IntType):
                continue  # enum and bool indexes are checked by type
            t = x.index.type
            if it.symmetric is not None and sym_of(t) == it.symmetric:
                continue
            if isinstance(x.index, ir.Lit) and ir.scalar_in_range(it, x.index.value):
                continue
            if isinstance(t, ir.IntType) and t.bounded and t.lo >= it.lo and t.hi <= it.hi:  # type: ignore[operator]
                continue
            return x
        if isinstance(x, ir.Binary) and x.op in (ir.BinOp.DIV, ir.BinOp.MOD):
            if not (isinstance(x.rhs, ir.Lit) and x.rhs.value != 0):
                return x
    return None


# ---------------------------------------------------------------------------------- geometry
@dataclass(frozen=True)
class SlotRole:
    """How a permutation of the symmetric types moves one slot: `levels` are the symmetric array
    levels on its path as (type name, index value, stride in slots); `value` names the symmetric
    type of the value it holds, or None."""

    levels: tuple[tuple[str, int, int], ...]
    value: str | None


def slot_roles(model: ir.Model) -> list[SlotRole]:
    """One SlotRole per state slot, in layout order (NOTE(slots))."""
    out: list[SlotRole] = []
    for v in model.vars:
        out.extend(_roles(v.type, ()))
    return out


def _roles(t: ir.Type, levels: tuple[tuple[str, int, int], ...]) -> list[SlotRole]:
    if isinstance(t, ir.ArrayType):
        stride = ir.slot_count(t.elem)
        s = sym_of(t.index)
        out: list[SlotRole] = []
        for v in ir.domain_values(t.index):
            out.extend(_roles(t.elem, levels + ((s, v, stride),) if s is not None else levels))
        return out
    if isinstance(t, ir.StructType):
        out = []
        for _, ft in t.fields:
            out.extend(_roles(ft, levels))
        return out
    return [SlotRole(levels, sym_of(t))]


def permute_slots(roles: list[SlotRole], perm: dict[str, dict[int, int]],
                  values: tuple[int | None, ...]) -> list[int | None]:
    """The slot values after applying `perm` (type name -> value -> value); None stays None."""
    out: list[int | None] = [None] * len(values)
    for j, (role, x) in enumerate(zip(roles, values)):
        dest = j + sum((perm[s][i] - i) * stride for s, i, stride in role.levels if s in perm)
        if x is not None and role.value in perm:
            x = perm[role.value][x]  # type: ignore[index]
        out[dest] = x
    return out


def generators(t: ir.IntType) -> list[dict[int, int]]:
    """A transposition and a cycle of the type's values: together they generate every permutation."""
    assert t.lo is not None and t.hi is not None
    vals = list(range(t.lo, t.hi + 1))
    if len(vals) < 2:
        return []
    swap = {v: v for v in vals}
    swap[vals[0]], swap[vals[1]] = vals[1], vals[0]
    cycle = {v: vals[(k + 1) % len(vals)] for k, v in enumerate(vals)}
    return [swap, cycle]


def _check_initial(model: ir.Model, diags: Diagnostics) -> None:
    """The set of initial states must be closed under the permutations (it is a product of
    per-slot choices, so checking the generators on the per-slot values decides it)."""
    roles = slot_roles(model)
    init: tuple[int | None, ...] = tuple(x for v in model.vars for x in v.init)
    offsets = model.var_offsets()
    for t in model.symmetric:
        for g in generators(t):
            moved = permute_slots(roles, {t.symmetric: g}, init)  # type: ignore[dict-item]
            if moved == list(init):
                continue
            bad = next(j for j in range(len(init)) if moved[j] != init[j])
            var = max((v for v in model.vars if offsets[v.index] <= bad), key=lambda v: offsets[v.index])
            diags.error(var.span, f"the initial value of '{var.name}' singles out values of the symmetric type "
                                  f"{t.symmetric}: give every element it indexes the same initial value, and a "
                                  f"slot holding a {t.symmetric} value the initial value 'any'")
            return

"""Interval analysis of a model: the largest magnitude any integer term can take.

The bit-vector encoding needs one width at which no expression of the model overflows, so
that two's-complement arithmetic equals the interpreter's unbounded Python ints. Every slot
and parameter is bounded, so every expression is too; this pass over the IR bounds each
sub-expression by interval arithmetic (sound, not tight) and returns the largest magnitude."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpcheck.spec import ir

Interval = tuple[int, int]


def _type_interval(t: ir.Type) -> Interval | None:
    if isinstance(t, ir.BoolType):
        return (0, 1)
    if isinstance(t, ir.EnumType):
        return (0, max(0, len(t.members) - 1))
    if isinstance(t, ir.IntType) and t.bounded:
        assert t.lo is not None and t.hi is not None
        return (t.lo, t.hi)
    if isinstance(t, (ir.ArrayType, ir.StructType)):
        ivs = [_type_interval(st) for _, st in ir.leaf_paths(t)]
        if isinstance(t, ir.ArrayType):
            ivs.append(_type_interval(t.index))
        known = [iv for iv in ivs if iv is not None]
        return (min(i[0] for i in known), max(i[1] for i in known)) if known else None
    return None


def _hull(*ivs: Interval) -> Interval:
    return (min(i[0] for i in ivs), max(i[1] for i in ivs))


def _mag(iv: Interval) -> int:
    return max(abs(iv[0]), abs(iv[1]))


@dataclass
class _Bounds:
    env: dict[int, Interval] = field(default_factory=dict)
    biggest: int = 1

    def note(self, iv: Interval) -> Interval:
        self.biggest = max(self.biggest, _mag(iv))
        return iv

    def expr(self, e: ir.Expr) -> Interval:
        return self.note(self._expr(e))

    def _expr(self, e: ir.Expr) -> Interval:
        match e:
            case ir.Lit(value=v):
                return (v, v)
            case ir.VarRef(type=t):
                iv = _type_interval(t)
                assert iv is not None, t
                return iv
            case ir.LocalRef(sym=sym):
                if sym.id in self.env:
                    return self.env[sym.id]
                iv = _type_interval(sym.type)
                assert iv is not None, sym
                return iv
            case ir.Index(base=b, index=i, type=t):
                bi = self.expr(b)
                self.expr(i)
                return _type_interval(t) or bi
            case ir.Field(base=b, type=t):
                bi = self.expr(b)
                return _type_interval(t) or bi
            case ir.Unary(op=op, operand=o):
                lo, hi = self.expr(o)
                return (0, 1) if op is ir.UnOp.NOT else (-hi, -lo)
            case ir.Binary(op=op, lhs=l, rhs=r):
                a, b = self.expr(l), self.expr(r)
                if op is ir.BinOp.ADD:
                    return (a[0] + b[0], a[1] + b[1])
                if op is ir.BinOp.SUB:
                    return (a[0] - b[1], a[1] - b[0])
                if op is ir.BinOp.MUL:
                    ps = [x * y for x in a for y in b]
                    return (min(ps), max(ps))
                if op is ir.BinOp.DIV:
                    m = _mag(a)
                    return (-m, m)
                if op is ir.BinOp.MOD:
                    m = _mag(b)
                    # the encoding computes a - b * (a // b) on the way
                    self.note((-(_mag(a) + m), _mag(a) + m))
                    return (-m, m)
                return (0, 1)
            case ir.Ite(cond=c, then=t, else_=f):
                self.expr(c)
                return _hull(self.expr(t), self.expr(f))
            case ir.Fold(kind=kind, binder=bs, body=body):
                dom = _type_interval(bs.type)
                assert dom is not None
                n = len(ir.domain_values(bs.type))  # type: ignore[arg-type]
                saved = self.env.pop(bs.id, None)
                bi = self.expr(body)
                if saved is not None:
                    self.env[bs.id] = saved
                if kind is ir.FoldKind.COUNT:
                    return (0, n)
                if kind is ir.FoldKind.SUM:
                    return (min(0, n * bi[0]), max(0, n * bi[1]))
                if kind in (ir.FoldKind.MIN, ir.FoldKind.MAX):
                    return bi
                return (0, 1)
        raise AssertionError(e)

    def stmts(self, body: tuple[ir.Stmt, ...]) -> None:
        for st in body:
            match st:
                case ir.Require(cond=c):
                    self.expr(c)
                case ir.Let(sym=sym, value=v):
                    self.env[sym.id] = self.expr(v)
                case ir.Assign(target=t, value=v):
                    self.expr(t)
                    self.expr(v)
                case ir.If(cond=c, then=th, else_=el):
                    self.expr(c)
                    self.stmts(th)
                    self.stmts(el)
                case ir.For(binder=b, lo=lo, hi=hi, body=inner):
                    self.env[b.id] = self.note((lo, hi))
                    self.stmts(inner)


def max_magnitude(model: ir.Model) -> int:
    """An upper bound on |v| for every integer value the encoding of `model` computes."""
    b = _Bounds()
    b.note((0, len(model.actions)))
    for v in model.vars:
        iv = _type_interval(v.type)
        if iv is not None:
            b.note(iv)
    for a in model.actions:
        for p in a.params:
            iv = _type_interval(p.type)
            if iv is not None:
                b.note(iv)
        b.stmts(a.body)
    exprs: list[ir.Expr] = [p.expr for p in model.invariants] + [p.expr for p in model.transitions]
    exprs += list(model.terminals) + [c.expr for c in model.constraints]
    for lv in model.liveness:
        exprs.append(lv.q)
        if lv.p is not None:
            exprs.append(lv.p)
    for e in exprs:
        b.expr(e)
    return b.biggest


def bv_width(model: ir.Model) -> int:
    """A two's-complement width holding twice the largest magnitude (sign bit plus margin)."""
    return (2 * max_magnitude(model) + 1).bit_length() + 1

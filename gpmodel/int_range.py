"""Whether every integer a model computes fits in 64 bits, by interval arithmetic over the IR.

The language computes over unbounded integers (NOTE(step-semantics) in spec/ir.py); the compiled
engine (gpmodel/jit.py) computes with 64-bit ones. It runs only on models where no expression,
at any state, can leave +-2**62 (a margin below int64's limits)."""

from __future__ import annotations

from gpcheck.spec import ir
from gpcheck.spec.ir import BinOp, FoldKind, UnOp

LIMIT = 1 << 62
Interval = tuple[int, int]


class _TooLarge(Exception):
    pass


def _check(iv: Interval) -> Interval:
    if max(abs(iv[0]), abs(iv[1])) >= LIMIT:
        raise _TooLarge
    return iv


def _type_range(t: ir.Type) -> Interval:
    if isinstance(t, (ir.BoolType, ir.EnumType)):
        dom = ir.domain_values(t)
        return dom.start, dom.stop - 1
    if isinstance(t, ir.IntType) and t.bounded:
        assert t.lo is not None and t.hi is not None
        return t.lo, t.hi
    if isinstance(t, ir.IntType):
        raise _TooLarge  # an unbounded value with nothing known about it
    return 0, 0  # an aggregate: compared slot by slot, its slots are checked where read


def _expr(e: ir.Expr, env: dict[int, Interval]) -> Interval:
    match e:
        case ir.Lit(value=v):
            return _check((int(v), int(v)))
        case ir.LocalRef(sym=sym):
            return env[sym.id] if sym.id in env else _type_range(sym.type)
        case ir.VarRef(type=t):
            return _type_range(t)
        case ir.Field(base=b, type=t):
            _expr(b, env)
            return _type_range(t)
        case ir.Index(base=b, index=i, type=t):
            _expr(b, env)
            _expr(i, env)
            return _type_range(t)
        case ir.Unary(op=UnOp.NEG, operand=o):
            lo, hi = _expr(o, env)
            return -hi, -lo
        case ir.Unary(operand=o):
            _expr(o, env)
            return 0, 1
        case ir.Binary(op=op, lhs=l, rhs=r):
            a, b = _expr(l, env), _expr(r, env)
            if op is BinOp.ADD:
                return _check((a[0] + b[0], a[1] + b[1]))
            if op is BinOp.SUB:
                return _check((a[0] - b[1], a[1] - b[0]))
            if op is BinOp.MUL:
                corners = [x * y for x in a for y in b]
                return _check((min(corners), max(corners)))
            if op is BinOp.DIV:
                m = max(abs(a[0]), abs(a[1]))
                return -m, m
            if op is BinOp.MOD:
                m = max(abs(b[0]), abs(b[1]))
                return -m, m
            return 0, 1
        case ir.Ite(cond=c, then=x, else_=y):
            _expr(c, env)
            p, q = _expr(x, env), _expr(y, env)
            return min(p[0], q[0]), max(p[1], q[1])
        case ir.Fold(kind=kind, binder=sym, body=body):
            dom = ir.domain_values(sym.type)  # type: ignore[arg-type]
            n = len(dom)
            inner = dict(env)
            inner[sym.id] = (dom.start, dom.stop - 1) if n else (0, 0)
            lo, hi = _expr(body, inner)
            if kind is FoldKind.SUM:
                return _check((min(0, n * lo), max(0, n * hi)))
            if kind is FoldKind.COUNT:
                return 0, n
            if kind in (FoldKind.MIN, FoldKind.MAX):
                return lo, hi
            return 0, 1
    raise AssertionError(e)


def _stmts(body: tuple[ir.Stmt, ...], env: dict[int, Interval]) -> None:
    for st in body:
        match st:
            case ir.Require(cond=c):
                _expr(c, env)
            case ir.Assign(target=t, value=v):
                _expr(t, env)
                _expr(v, env)
            case ir.If(cond=c, then=a, else_=b):
                _expr(c, env)
                _stmts(a, env)
                _stmts(b, env)
            case ir.For(binder=sym, lo=lo, hi=hi, body=fb):
                env[sym.id] = (lo, max(lo, hi))
                _stmts(fb, env)
            case ir.Let(sym=sym, value=v):
                env[sym.id] = _expr(v, env)


def fits_int64(model: ir.Model) -> bool:
    """Whether no expression of `model` (actions, properties, constraints, terminal
    predicates) can compute an integer outside +-2**62 in any state."""
    try:
        for a in model.actions:
            _stmts(a.body, {})
        exprs = [i.expr for i in model.invariants] + [t.expr for t in model.transitions]
        exprs += [c.expr for c in model.constraints] + list(model.terminals)
        exprs += [p.q for p in model.liveness] + [p.p for p in model.liveness if p.p is not None]
        for e in exprs:
            _expr(e, {})
    except _TooLarge:
        return False
    return True

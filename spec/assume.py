"""Lowering of model assumptions to guards (NOTE(assumptions) in spec/ir.py).

A state assumption `assume A: P` becomes `require P` at the end of every action's body that
assigns a variable P reads (there the variables hold the post-state; an action that assigns none
leaves P as true as it was, and gets no guard: a ghost fact such as xsched's `idempotent_mask`
costs no step anything), so no step leaves P; the initial states outside P are
dropped where initial states are made (`ir.Model.initial_assumptions`). A step assumption
`assume A: E` (E has primes) becomes `require E*` at the end of every body, where E* reads
`x'` as the variable's value there and `x` as a scalar `let` snapshot taken at the body's
start. `let` binds scalars only, so every unprimed scalar slot E reads is snapshotted: a
dynamic index into an unprimed array reads the snapshots through an if-chain over the index
domain (an index outside it falls through to the post-state, where it is the modelling error
it would have been), and `==`/`!=` of unprimed aggregates compare slot by slot.

Each added `Require` carries `assumption=A`, so an engine can tell it from the model's own
guards. Every backend then honours the assumption as it honours any guard.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from gpcheck.spec import ir

Fresh = Callable[[str, ir.Type], ir.Symbol]


def lower(actions: list[ir.Action], assumptions: list[ir.Assumption], fresh: Fresh) -> list[ir.Action]:
    """`actions` with the guards of every state and step assumption appended (in declaration order)."""
    lowered = [a for a in assumptions if a.kind in ("state", "step") and a.expr is not None]
    if not lowered:
        return actions
    out = []
    for act in actions:
        lets: list[ir.Stmt] = []
        tail: list[ir.Stmt] = []
        ordinal = act.require_count
        for a in lowered:
            assert a.expr is not None
            if a.kind == "state":
                if not _reads(a.expr) & _writes(act.body):
                    continue  # the step leaves every variable P reads as it was: P holds after it as before
                cond = a.expr
            else:
                snap = _Snapshots(fresh)
                cond = snap.rewrite(a.expr)
                lets += snap.lets
            tail.append(ir.Require(cond, ordinal, a.span, assumption=a.name))
            ordinal += 1
        out.append(replace(act, body=tuple(lets) + act.body + tuple(tail)))
    return out


def _reads(e: ir.Expr) -> set[int]:
    return {x.var for x in ir.walk_expr(e) if isinstance(x, ir.VarRef)}


def _writes(body: tuple[ir.Stmt, ...]) -> set[int]:
    """The variables an action body assigns (wholly or in part)."""
    out: set[int] = set()
    for st in ir.iter_stmts(body):
        if isinstance(st, ir.Assign) and (root := _root(st.target)) is not None:
            out.add(root.var)
    return out


def has_prime(e: ir.Expr) -> bool:
    return any(isinstance(x, ir.VarRef) and x.primed for x in ir.walk_expr(e))


class _Snapshots:
    """The rewriting of one step assumption for one action body, with the `let`s it needs."""

    def __init__(self, fresh: Fresh):
        self.fresh = fresh
        self.lets: list[ir.Stmt] = []
        self.syms: dict[tuple[int, tuple[ir.Accessor, ...]], ir.Symbol] = {}

    def rewrite(self, e: ir.Expr) -> ir.Expr:
        root = _root(e)
        if root is not None and not root.primed:
            if ir.is_scalar(e.type):
                return self._read(e)
            raise ValueError("an unprimed aggregate outside == / !=")  # the type checker rules it out
        match e:
            case ir.VarRef():
                return replace(e, primed=False)
            case ir.Index(base=b, index=i):
                return replace(e, base=self.rewrite(b), index=self.rewrite(i))
            case ir.Field(base=b):
                return replace(e, base=self.rewrite(b))
            case ir.Unary(operand=o):
                return replace(e, operand=self.rewrite(o))
            case ir.Binary(op=op, lhs=l, rhs=r) if op in ir.EQUALITY_OPS and not ir.is_scalar(l.type):
                parts = [ir.Binary(ir.BinOp.EQ, self.rewrite(_at(l, p)), self.rewrite(_at(r, p)), ir.BOOL, e.span)
                         for p, _ in ir.leaf_paths(l.type)]
                same: ir.Expr = parts[0]
                for x in parts[1:]:
                    same = ir.Binary(ir.BinOp.AND, same, x, ir.BOOL, e.span)
                return same if op is ir.BinOp.EQ else ir.Unary(ir.UnOp.NOT, same, ir.BOOL, e.span)
            case ir.Binary(lhs=l, rhs=r):
                return replace(e, lhs=self.rewrite(l), rhs=self.rewrite(r))
            case ir.Ite(cond=c, then=t, else_=f):
                return replace(e, cond=self.rewrite(c), then=self.rewrite(t), else_=self.rewrite(f))
            case ir.Fold(body=b):
                return replace(e, body=self.rewrite(b))
            case _:
                return e

    def _read(self, e: ir.Expr) -> ir.Expr:
        """A scalar read of the pre-state: its snapshot, or an if-chain over the snapshots."""
        chain: list[ir.Expr] = []
        x = e
        while not isinstance(x, ir.VarRef):
            chain.append(x)
            x = x.base  # type: ignore[union-attr]
        chain.reverse()
        var = x
        fallback = self._current(e)

        def build(t: ir.Type, k: int, prefix: tuple[ir.Accessor, ...]) -> ir.Expr:
            if k == len(chain):
                return ir.LocalRef(self._snapshot(var, prefix, t), e.span)
            step = chain[k]
            if isinstance(step, ir.Field):
                assert isinstance(t, ir.StructType)
                ft = t.field_type(step.name)
                assert ft is not None
                return build(ft, k + 1, prefix + (step.name,))
            assert isinstance(step, ir.Index) and isinstance(t, ir.ArrayType)
            idx = self.rewrite(step.index)
            if isinstance(idx, ir.Lit):
                return build(t.elem, k + 1, prefix + (idx.value,)) if idx.value in ir.domain_values(t.index) else fallback
            out = fallback
            for d in reversed(ir.domain_values(t.index)):
                lit = ir.Lit(d, t.index if not isinstance(t.index, ir.IntType) else ir.INT, e.span)
                out = ir.Ite(ir.Binary(ir.BinOp.EQ, idx, lit, ir.BOOL, e.span), build(t.elem, k + 1, prefix + (d,)),
                             out, e.type, e.span)
            return out

        return build(var.type, 0, ())

    def _current(self, e: ir.Expr) -> ir.Expr:
        """The same read of the current (post-)state, indexes rewritten."""
        match e:
            case ir.VarRef():
                return e
            case ir.Index(base=b, index=i):
                return replace(e, base=self._current(b), index=self.rewrite(i))
            case ir.Field(base=b):
                return replace(e, base=self._current(b))
        raise AssertionError(e)

    def _snapshot(self, var: ir.VarRef, path: tuple[ir.Accessor, ...], t: ir.Type) -> ir.Symbol:
        key = (var.var, path)
        if key not in self.syms:
            read = _at(ir.VarRef(var.var, var.type, False, var.span), path)
            sym = self.fresh("pre", t)
            self.syms[key] = sym
            self.lets.append(ir.Let(sym, read, var.span))
        return self.syms[key]


def _root(e: ir.Expr) -> ir.VarRef | None:
    """The variable an access path (VarRef, Index, Field) starts from, or None."""
    while isinstance(e, (ir.Index, ir.Field)):
        e = e.base
    return e if isinstance(e, ir.VarRef) else None


def _at(e: ir.Expr, path: tuple[ir.Accessor, ...]) -> ir.Expr:
    """The slot `path` of the aggregate expression `e` (an access path)."""
    t = e.type
    for acc in path:
        if isinstance(acc, str):
            assert isinstance(t, ir.StructType)
            ft = t.field_type(acc)
            assert ft is not None
            t = ft
            e = ir.Field(e, acc, t, e.span)
        else:
            assert isinstance(t, ir.ArrayType)
            lit = ir.Lit(acc, t.index if not isinstance(t.index, ir.IntType) else ir.INT, e.span)
            t = t.elem
            e = ir.Index(e, lit, t, e.span)
    return e

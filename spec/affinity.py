"""Which constants a constant expression depends on, and on which of them not affinely.

The type checker folds constant expressions (a derived `const D = N / 10`, a range bound
`0..N/2`, an initial value) to integers, so the IR of one instance no longer says how such an
integer depends on the constants. `--for-all` (checker/param/extract.py) recovers that
dependence by fitting affine functions through a few instances, which a form like `N / 10` or
`if N == 4 then 1 else 0` passes without being affine (it is constant at the fitted sizes).
This module answers the question on the syntax instead, so the for-all engine can refuse what is
not affine rather than guess (NOTE(nonaffine-constants) in spec/ir.py)."""

from __future__ import annotations

from typing import Mapping

from gpcheck.spec import syntax as S
from gpcheck.spec.ir import ARITH_OPS, EQUALITY_OPS, ORDER_OPS, BinOp

Deps = tuple[frozenset[str], frozenset[str]]  # (every constant it depends on, those not affinely)
NONE: Deps = (frozenset(), frozenset())


def affinity(e: S.Expr, consts: Mapping[str, Deps]) -> Deps:
    """The constants `e` depends on (through `consts`, each constant's own dependence; a
    constant's name counts itself), and those it depends on through a division, a modulo, a
    product of two constant terms or a condition. Conservative: both branches of an `if` count."""
    match e:
        case S.Name(name=n) if n in consts:
            deps, non = consts[n]
            return deps | {n}, non
        case S.Neg(operand=o):
            return affinity(o, consts)
        case S.BinE(op=op, lhs=lhs, rhs=rhs) if op in ARITH_OPS:
            (da, na), (db, nb) = affinity(lhs, consts), affinity(rhs, consts)
            deps, non = da | db, na | nb
            if op in (BinOp.DIV, BinOp.MOD) or (op is BinOp.MUL and da and db):
                non |= deps
            return deps, non
        case S.IteE(cond=c, then=t, else_=f):
            cd = _condition(c, consts)
            (dt, nt), (df, nf) = affinity(t, consts), affinity(f, consts)
            deps = cd | dt | df
            return deps, nt | nf | (deps if cd else frozenset())
        case _:
            return NONE


def _condition(e: S.Expr, consts: Mapping[str, Deps]) -> frozenset[str]:
    """The constants a constant condition reads (its value switches with them: none affinely)."""
    match e:
        case S.BinE(op=op, lhs=lhs, rhs=rhs) if op in ORDER_OPS or op in EQUALITY_OPS:
            return affinity(lhs, consts)[0] | affinity(rhs, consts)[0]
        case S.BinE(op=BinOp.AND | BinOp.OR, lhs=lhs, rhs=rhs):
            return _condition(lhs, consts) | _condition(rhs, consts)
        case S.Not(operand=o):
            return _condition(o, consts)
        case _:
            return frozenset()

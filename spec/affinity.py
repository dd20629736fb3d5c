"""Which constants a constant expression depends on, and for which choices of symbolic
constants it is not affine in them.

The type checker folds constant expressions (a derived `const D = N / 10`, a range bound
`0..N/2`, an initial value) to integers, so the IR of one instance no longer says how such an
integer depends on the constants. `--for-all` (checker/engines/param/extract.py) recovers that
dependence by fitting affine functions through a few instances, which a form like `N / 10` or
`if N == 4 then 1 else 0` passes without being affine (it is constant at the fitted sizes).
This module answers the question on the syntax instead, so the for-all engine can refuse what is
not affine rather than guess (NOTE(nonaffine-constants) in spec/ir.py).

Whether an expression is affine depends on which constants are symbolic: `NB * BLEN` is affine
in NB while BLEN stays fixed, and not when both are symbolic. So the answer is a set of
*clauses*, each a tuple of constant sets: the expression is not affine in the symbolic set S
when, for some clause, every one of its sets meets S (a product: two sets, both factors depend
on S; a division, a modulo or a condition: one set, the constants it reads; a product of a
product and a third factor: three sets, degree three). An engine that handles products of
symbolic constants (a fit with product terms of degree two) may accept the two-set clauses
where its fit is exact, never the one-set or three-set ones."""

from __future__ import annotations

from typing import Mapping

from gpcheck.spec import syntax as S
from gpcheck.spec.ir import ARITH_OPS, EQUALITY_OPS, ORDER_OPS, BinOp

Clause = tuple[frozenset[str], ...]  # every set meets the symbolic constants: not affine
# (the constants it names, the clauses it makes itself, the constants whose clauses it inherits)
Deps = tuple[frozenset[str], frozenset[Clause], frozenset[str]]
NONE: Deps = (frozenset(), frozenset(), frozenset())

# NOTE(direct-deps): a Deps holds the constants an expression *names* and the clauses it *makes*,
# not every constant behind those names nor every clause they carry: `const C2 = C1 + 1 ...
# const Cn = Cn-1 + 1` gave each constant the set of all before it (n^2/2 set entries: a 128 KiB
# spec of such a chain took 1 GB and 7 s to check, issue 36), `Ck = Ck-1 / 2 + 1` each constant
# every division before it. The constants and clauses behind a name are followed (`closure`,
# `clauses`) only where a clause is recorded in the IR (spec/typecheck.py `_note_nonaffine`) and
# where a product of two dependent factors needs its factors' two-set clauses (degree three), so
# the IR's clauses are the same as before.
#
# NOTE(clause-cap): a chain of products whose factors both depend on constants (`Ck = Ck-1 * C1`)
# makes degree-three clauses that grow with the chain (each product one per two-set clause behind
# its factors: n^3 work, a 1000-line chain took 43 s). Past CLAUSE_CAP clauses a product keeps one
# one-set clause, the constants it names (each standing for every constant behind it), and
# inherits nothing: every part of the clauses it replaces lies behind those names, so it holds
# whenever one of them holds, and the for-all engine refuses at least what it refused before,
# never accepts more. No bundled model comes near the cap.
CLAUSE_CAP = 64


def closure(part: frozenset[str], consts: Mapping[str, Deps]) -> frozenset[str]:
    """`part` with every constant its constants depend on, through `consts` (NOTE(direct-deps))."""
    seen = set(part)
    todo = list(part)
    while todo:
        deps = consts.get(todo.pop())
        for d in deps[0] if deps is not None else ():
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return frozenset(seen)


def clauses(deps: Deps, consts: Mapping[str, Deps]) -> frozenset[Clause]:
    """Every clause of an expression: its own and those of the constants it inherits from, in
    turn (NOTE(direct-deps))."""
    out = set(deps[1])
    seen = set(deps[2])
    todo = list(deps[2])
    while todo:
        d = consts.get(todo.pop())
        if d is None:
            continue
        out |= d[1]
        for m in d[2]:
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return frozenset(out)


def affinity(e: S.Expr, consts: Mapping[str, Deps]) -> Deps:
    """The constants `e` names (each stands for itself and, through `consts`, the constants it
    depends on), the clauses it makes under which it is not affine in the symbolic ones (a
    division, a modulo, a product of two terms that both depend on them, a condition on them),
    and the constants whose clauses it carries (NOTE(direct-deps); `clauses` gives them all).
    Conservative: both branches of an `if` count."""
    match e:
        case S.Name(name=n) if n in consts:
            return frozenset((n,)), frozenset(), frozenset((n,))
        case S.Neg(operand=o):
            return affinity(o, consts)
        case S.BinE(op=op, lhs=lhs, rhs=rhs) if op in ARITH_OPS:
            a, b = affinity(lhs, consts), affinity(rhs, consts)
            (da, oa, ia), (db, ob, ib) = a, b
            deps, own = da | db, oa | ob
            if op in (BinOp.DIV, BinOp.MOD) and deps:
                own |= {(deps,)}
            elif op is BinOp.MUL and da and db:
                # a product, and a product of a product (degree three: three sets)
                own |= {(da, db)} | {c + (db,) for c in clauses(a, consts) if len(c) == 2} \
                    | {c + (da,) for c in clauses(b, consts) if len(c) == 2}
                if len(own) > CLAUSE_CAP:
                    return deps, frozenset({(deps,)}), frozenset()
            return deps, own, ia | ib
        case S.IteE(cond=c, then=t, else_=f):
            cd = _condition(c, consts)
            (dt, ot, it), (df, of, if_) = affinity(t, consts), affinity(f, consts)
            return cd | dt | df, ot | of | ({(cd,)} if cd else frozenset()), it | if_
        case _:
            return NONE


def nonaffine_in(clause: Clause, symbolic: frozenset[str] | set[str]) -> bool:
    """Whether a clause holds for the symbolic constants `symbolic` (see the module docstring)."""
    return all(part & symbolic for part in clause)


def _condition(e: S.Expr, consts: Mapping[str, Deps]) -> frozenset[str]:
    """The constants a constant condition reads (its value switches with them)."""
    match e:
        case S.BinE(op=op, lhs=lhs, rhs=rhs) if op in ORDER_OPS or op in EQUALITY_OPS:
            return affinity(lhs, consts)[0] | affinity(rhs, consts)[0]
        case S.BinE(op=BinOp.AND | BinOp.OR, lhs=lhs, rhs=rhs):
            return _condition(lhs, consts) | _condition(rhs, consts)
        case S.Not(operand=o):
            return _condition(o, consts)
        case _:
            return frozenset()

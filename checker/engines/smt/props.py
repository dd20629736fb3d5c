"""The safety properties the SMT engines check, as `bad` formulas at a position of a path.

A property is violated at position `j` of a path `s_0 .. s_k` when: an invariant is false (or
fails to evaluate) in `s_j`; a transition property is false (or fails to evaluate) on the step
`s_{j-1} -> s_j` (`j >= 1`); some instance fails with a modelling error in `s_j`, or some
state predicate in `s_j`, or some transition property on the step into it (kind `range`,
NOTE(predicate-errors)); `s_j` is a deadlock (kind `deadlock`). `ok` is the negation, written without existential parameters so
that k-induction can assume it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.smt.encode import Bindings, Encoder, State, error_free
from gpcheck.checker.engines.smt.terms import false, mk_and, mk_not, mk_or, true

RANGE_PROPERTY = "range"
DEADLOCK_PROPERTY = "deadlock"
ERROR_TAG = "err."  # symbols of the failing instance in a range counterexample


@dataclass(frozen=True)
class SafetyProp:
    name: str
    kind: str  # invariant | transition | range | deadlock
    expr: ir.Expr | None = None

    @property
    def first(self) -> int:
        """The first path position at which the property can be violated."""
        return 1 if self.kind == "transition" else 0


def safety_properties(model: ir.Model, names: Sequence[str] | None) -> list[SafetyProp]:
    """The model's invariants and transition properties (all, or those named), followed, when
    no names are given, by the implicit `range` and `deadlock` checks."""
    props = [SafetyProp(p.name, "invariant", p.expr) for p in model.invariants]
    props += [SafetyProp(p.name, "transition", p.expr) for p in model.transitions]
    implicit = [SafetyProp(RANGE_PROPERTY, "range")]
    if not model.allow_deadlock:
        implicit.append(SafetyProp(DEADLOCK_PROPERTY, "deadlock"))
    if names is None:
        return props + implicit
    by_name = {p.name: p for p in props + implicit}
    return [by_name[n] for n in names if n in by_name]


def bad(enc: Encoder, p: SafetyProp, path: Sequence[State], j: int) -> z3.BoolRef:
    """`p` is violated at position `j` of `path` (range: by the instance named by the
    `err.`-tagged action selector and parameters of step `j`)."""
    if p.kind == "invariant":
        assert p.expr is not None
        return mk_not(enc.holds(p.expr, path[j]))
    if p.kind == "transition":
        assert p.expr is not None
        return mk_not(enc.holds(p.expr, path[j - 1], path[j])) if j >= 1 else false()
    if p.kind == "range":
        return mk_or(action_error(enc, path, j), predicate_errors(enc, path, j))
    if p.kind == "deadlock":
        return enc.deadlock(path[j])
    raise AssertionError(p.kind)


def action_error(enc: Encoder, path: Sequence[State], j: int) -> z3.BoolRef:
    """The instance named by the `err.`-tagged selector and parameters of step `j` fails with
    a modelling error in `path[j]`."""
    return enc.error(path[j], j, ERROR_TAG)


def predicate_errors(enc: Encoder, path: Sequence[State], j: int) -> z3.BoolRef:
    """Some state predicate fails to evaluate in `path[j]`, or some transition property on
    the step into it (NOTE(predicate-errors))."""
    errs = enc.property_errors(path[j])
    return mk_or(errs, enc.step_errors(path[j - 1], path[j])) if j >= 1 and enc.model.transitions else errs


def ok(enc: Encoder, p: SafetyProp, path: Sequence[State], j: int) -> z3.BoolRef:
    """`p` is not violated at position `j` (quantifier-free: instances are expanded)."""
    if p.kind == "range":
        return mk_and(error_free(enc, path[j]), mk_not(predicate_errors(enc, path, j)))
    if p.kind == "transition" and j == 0:
        return true()
    return mk_not(bad(enc, p, path, j))


def conjuncts(e: ir.Expr, bindings: Bindings = ()) -> list[tuple[ir.Expr, Bindings]]:
    """`e` split at `and` and at `all` folds (one conjunct per value of the binder), each
    with the binder values it needs. Every conjunct holding without evaluation error implies
    `e` holds without error (the converse can fail through short-circuits, so a conjunct that
    fails says nothing about `e`)."""
    match e:
        case ir.Binary(op=ir.BinOp.AND, lhs=lhs, rhs=rhs):
            return conjuncts(lhs, bindings) + conjuncts(rhs, bindings)
        case ir.Fold(kind=ir.FoldKind.ALL, binder=b, body=body):
            out: list[tuple[ir.Expr, Bindings]] = []
            for v in ir.domain_values(b.type):  # type: ignore[arg-type]
                out += conjuncts(body, bindings + ((b, v),))
            return out
    return [(e, bindings)]

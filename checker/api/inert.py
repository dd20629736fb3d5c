"""Assumptions about inert ghost facts: which proofs cannot depend on them, without a re-run.

NOTE(inert-assumption): a model may state a fact about the system it does not simulate as a
ghost variable with a nondeterministic initial value that no action reads or writes, pinned by
a state assumption (xsched's and reef_rewind's `idempotent_mask`: `var idem: [0..N-1] -> bool =
any` and `assume idempotent_mask: all k in 0..N-1: idem[k] == ...`). Such an assumption `A` is
*inert* when every variable it reads is never assigned and is read by nothing but `A` itself
and properties: no action (guard, update, cost or time bound), no other assumption, constraint
or terminal predicate. Then the model without `A` is the model with it beside every other value
of those variables: its reachable states are those of the model with `A` with the inert
variables changed to any initial value (the dynamics never see them), and every result that
reads none of them, `deadlock` included, is the same (provided the model with `A` has a
behaviour at all, which a result with a counterexample or a reached vacuity probe shows). `range`
is the same when no property that reads them can fail to evaluate (NOTE(predicate-errors)): an
index that is a constant or a quantified variable inside the array's index type, a division by
a non-zero constant. NOTE(assumption-use) (checker/api/assumptions.py) then skips re-running
those results without `A`: without the skip reef_rewind would search its 16 idempotence
assignments again (1,574 zones -> 95 s instead of 6 s).
"""

from __future__ import annotations

from typing import Iterable, Iterator

from gpcheck.spec import ir


def _vars(e: ir.Expr | None) -> set[int]:
    if e is None:
        return set()
    return {x.var for x in ir.walk_expr(e) if isinstance(x, ir.VarRef)}


def _root(target: ir.Expr) -> int | None:
    while isinstance(target, (ir.Index, ir.Field)):
        target = target.base
    return target.var if isinstance(target, ir.VarRef) else None


def _action_exprs(a: ir.Action, skip: str) -> Iterator[ir.Expr]:
    """Every expression an action evaluates, but the guards of the assumption `skip`."""
    for e in (a.time.lower if a.time else None, a.time.upper if a.time else None):
        if e is not None:
            yield e
    for s in ir.iter_stmts(a.body):
        if isinstance(s, ir.Require):
            if s.assumption != skip:
                yield s.cond
        elif isinstance(s, ir.Assign):
            yield s.target
            yield s.value
        elif isinstance(s, ir.If):
            yield s.cond
        elif isinstance(s, ir.Let):
            yield s.value


def inert_vars(model: ir.Model, name: str) -> set[int]:
    """The variables the state assumption `name` reads when it is inert (NOTE(inert-assumption)),
    else the empty set."""
    decl = next((a for a in model.assumptions if a.name == name), None)
    if decl is None or decl.kind != "state" or decl.expr is None:
        return set()
    ghost = _vars(decl.expr)
    if not ghost:
        return set()
    elsewhere: set[int] = set()
    for act in model.actions:
        for e in _action_exprs(act, name):
            elsewhere |= _vars(e)
        for s in ir.iter_stmts(act.body):
            if isinstance(s, ir.Assign) and _root(s.target) in ghost:
                return set()
    others: Iterable[ir.Expr | None] = [a.expr for a in model.assumptions if a.name != name]
    for e in list(others) + [c.expr for c in model.constraints] + list(model.terminals):
        elsewhere |= _vars(e)
    return set() if ghost & elsewhere else ghost


def property_exprs(model: ir.Model) -> dict[str, list[ir.Expr]]:
    """The expressions each property (covers and probes included: they are invariants here) reads."""
    out: dict[str, list[ir.Expr]] = {}
    for p in model.invariants:
        out[p.name] = [p.expr]
    for t in model.transitions:
        out[t.name] = [t.expr]
    for lv in model.liveness:
        out[lv.name] = [e for e in (lv.p, lv.q) if e is not None]
    for lat in model.latencies:
        out[lat.name] = [lat.p, lat.q]
    for c in model.covers:
        out[c.name] = [c.expr]
    return out


def _total(e: ir.Expr) -> bool:
    """`e` cannot fail to evaluate: every index a constant or a quantified variable inside the
    array's index type, every division or modulo by a non-zero constant."""
    for x in ir.walk_expr(e):
        if isinstance(x, ir.Index):
            t = x.base.type
            if not isinstance(t, ir.ArrayType) or not _inside(x.index, t.index):
                return False
        elif isinstance(x, ir.Binary) and x.op in (ir.BinOp.DIV, ir.BinOp.MOD):
            if not (isinstance(x.rhs, ir.Lit) and x.rhs.value != 0):
                return False
    return True


def _inside(index: ir.Expr, domain: ir.Type) -> bool:
    if isinstance(domain, (ir.EnumType, ir.BoolType)):
        return index.type == domain
    if not isinstance(domain, ir.IntType) or not domain.bounded:
        return False
    assert domain.lo is not None and domain.hi is not None
    if isinstance(index, ir.Lit):
        return domain.lo <= index.value <= domain.hi
    t = index.type
    if not (isinstance(index, ir.LocalRef) and isinstance(t, ir.IntType) and t.lo is not None and t.hi is not None):
        return False
    return domain.lo <= t.lo and t.hi <= domain.hi


def unaffected(model: ir.Model, name: str, props: set[str]) -> set[str]:
    """Those of `props` (result names) whose result cannot change when the inert assumption
    `name` is dropped (NOTE(inert-assumption)); empty when it is not inert."""
    ghost = inert_vars(model, name)
    if not ghost:
        return set()
    exprs = property_exprs(model)
    reading = {p for p, es in exprs.items() if any(_vars(e) & ghost for e in es)}
    out = {p for p in props if p in exprs and p not in reading}
    if "deadlock" in props:
        out.add("deadlock")
    if "range" in props and all(_total(e) for p in reading for e in exprs[p]):
        out.add("range")
    return out

"""The variables a set of results cannot depend on, frozen: a smaller model with the same
verdicts for them (NOTE(irrelevant-vars)).

NOTE(irrelevant-vars): a run without an assumption (NOTE(assumption-use)) can be far larger than
the run with it, mostly in variables that only the exactly-once properties read: without
copy_save, kfd_monitor's `lp_ops` (3^8 values) and gpreempt_timeslice's `be_ops` (3^4) take every
combination, and the zone engine passes its cap on properties that never look at them
(bounded_inversion, deadlock, no_starvation, ...). For a set of results, the *relevant*
variables are those read by the results' predicates, by every guard, `if` condition, `let`
value, time bound, assignment target's index, assumption, constraint and terminal predicate,
closed under "an assignment to a relevant variable reads these". The others (`D`) never
influence which steps are enabled, when, or what a relevant variable becomes. The slice keeps
every variable and action but *freezes* D: an assignment to a variable of D becomes a
self-assignment (`x[i] = x[i]`, which keeps the check of the index `i`, read from relevant
variables) or goes (a whole-variable write), and an initial value `any` of D becomes the type's
first value; the results that read D are left out. The projection onto the relevant variables is
then a bisimulation between the model and its slice that keeps every action instance, time bound,
modelling error and predicate of the kept results, so every verdict over them (invariants,
transition properties, liveness under the same fairness, latencies, deadlock, in the untimed and
the timed semantics) is the same. `range` is the same too, as long as what the slice no longer
evaluates cannot fail: each frozen assignment's value is checked to evaluate (its indexes inside
their arrays, no division but by a non-zero constant) to a value inside its variable's range (an
interval bound, narrowed through `if c then ...` on comparisons with a constant), and each left
out predicate cannot fail to evaluate (checker/api/inert.py `_total`). Where any of that cannot
be shown, there is no slice (`None`) and the caller runs the whole model.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator

from gpcheck.spec import ir
from gpcheck.checker.api.inert import _root, _total, _vars, property_exprs

BUILTIN = ("deadlock", "range")
WORTH_VALUES = 16  # split: the least value combinations of the frozen variables that make a slice worth running
Interval = tuple[int, int]


def _target_indexes(target: ir.Expr) -> Iterator[ir.Expr]:
    while isinstance(target, (ir.Index, ir.Field)):
        if isinstance(target, ir.Index):
            yield target.index
        target = target.base


def _control_exprs(model: ir.Model) -> Iterator[ir.Expr]:
    """Every expression that decides which steps exist, when, and where a write goes."""
    for act in model.actions:
        if act.time is not None:
            yield act.time.lower
            if act.time.upper is not None:
                yield act.time.upper
        for s in ir.iter_stmts(act.body):
            if isinstance(s, (ir.Require, ir.If)):
                yield s.cond
            elif isinstance(s, ir.Let):
                yield s.value
            elif isinstance(s, ir.Assign):
                yield from _target_indexes(s.target)
    for a in model.assumptions:
        if a.expr is not None:
            yield a.expr
    for c in model.constraints:
        yield c.expr
    yield from model.terminals


def relevant_vars(model: ir.Model, names: set[str]) -> set[int]:
    """The variables the results `names` may depend on (NOTE(irrelevant-vars))."""
    exprs = property_exprs(model)
    seen: set[int] = set()
    for e in _control_exprs(model):
        seen |= _vars(e)
    for n in names:
        for e in exprs.get(n, []):
            seen |= _vars(e)
    writes = [(s.target, s.value) for act in model.actions for s in ir.iter_stmts(act.body)
              if isinstance(s, ir.Assign)]
    grown = True
    while grown:
        grown = False
        for target, value in writes:
            if _root(target) in seen:
                more = _vars(value) - seen
                if more:
                    seen |= more
                    grown = True
    return seen


def slice_for(model: ir.Model, names: set[str]) -> tuple[ir.Model, list[str]] | None:
    """The model with the variables the results `names` cannot depend on frozen, and the names
    of those variables; None when none can be frozen, a result in `names` is not the model's,
    or the slice could not be shown to keep `range` (NOTE(irrelevant-vars))."""
    exprs = property_exprs(model)
    if any(n not in exprs and n not in BUILTIN for n in names):
        return None
    keep = relevant_vars(model, names)
    frozen = {v.index for v in model.vars} - keep
    if not frozen:
        return None
    dropped = {p for p, es in exprs.items() if any(_vars(e) & frozen for e in es)}
    if not all(_total(e) for p in dropped for e in exprs[p]):
        return None  # a left-out predicate could fail to evaluate: `range` might change
    actions = []
    for act in model.actions:
        body = _freeze(act.body, frozen)
        if body is None:
            return None
        actions.append(replace(act, body=body))
    vars_ = tuple(replace(v, init=tuple(_first(v.type, k) if x is None else x for k, x in enumerate(v.init)))
                  if v.index in frozen else v for v in model.vars)
    sliced = replace(
        model, vars=vars_, actions=tuple(actions),
        invariants=tuple(p for p in model.invariants if p.name not in dropped),
        transitions=tuple(p for p in model.transitions if p.name not in dropped),
        liveness=tuple(p for p in model.liveness if p.name not in dropped),
        latencies=tuple(p for p in model.latencies if p.name not in dropped),
        covers=tuple(c for c in model.covers if c.name not in dropped),
        expectations=tuple(x for x in model.expectations if x.property not in dropped))
    return sliced, [v.name for v in model.vars if v.index in frozen]


def _first(t: ir.Type, slot: int) -> int:
    """The first value of the scalar type of slot `slot` of a variable of type `t`."""
    leaves = ir.leaf_paths(t)
    leaf = leaves[slot % len(leaves)][1] if leaves else t
    if isinstance(leaf, ir.IntType) and leaf.lo is not None:
        return leaf.lo
    return 0


def _freeze(body: tuple[ir.Stmt, ...], frozen: set[int]) -> tuple[ir.Stmt, ...] | None:
    """`body` with each write to a frozen variable a self-assignment (or gone); None when such a
    write's value could fail to evaluate or leave its variable's range."""
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.Assign) and _root(s.target) in frozen:
            if not _safe_write(s.target, s.value):
                return None
            if isinstance(s.target, (ir.Index, ir.Field)):
                out.append(replace(s, value=s.target))
        elif isinstance(s, ir.If):
            then, else_ = _freeze(s.then, frozen), _freeze(s.else_, frozen)
            if then is None or else_ is None:
                return None
            out.append(replace(s, then=then, else_=else_))
        elif isinstance(s, ir.For):
            inner = _freeze(s.body, frozen)
            if inner is None:
                return None
            out.append(replace(s, body=inner))
        else:
            out.append(s)
    return tuple(out)


def _safe_write(target: ir.Expr, value: ir.Expr) -> bool:
    """The value evaluates without a modelling error to a value of the target's type."""
    t = target.type
    bases = {x for x in ir.walk_expr(target) if isinstance(x, ir.Index)}  # the write checks these itself
    for x in ir.walk_expr(value):
        if isinstance(x, ir.Index) and x not in bases:
            dom = x.base.type.index if isinstance(x.base.type, ir.ArrayType) else None
            if dom is None or not _within(_interval(x.index, {}), dom):
                return False
        elif isinstance(x, ir.Binary) and x.op in (ir.BinOp.DIV, ir.BinOp.MOD):
            if not (isinstance(x.rhs, ir.Lit) and x.rhs.value != 0):
                return False
    if isinstance(t, (ir.BoolType, ir.EnumType)):
        return value.type == t
    if isinstance(t, ir.IntType) and t.bounded:
        return _within(_interval(value, {}), t)
    return False


def _within(iv: Interval | None, t: ir.Type) -> bool:
    if iv is None:
        return False
    if isinstance(t, ir.IntType) and t.bounded:
        assert t.lo is not None and t.hi is not None
        return t.lo <= iv[0] and iv[1] <= t.hi
    if isinstance(t, ir.BoolType):
        return 0 <= iv[0] and iv[1] <= 1
    if isinstance(t, ir.EnumType):
        return 0 <= iv[0] and iv[1] < len(t.members)
    return False


def _interval(e: ir.Expr, env: dict[ir.Expr, Interval]) -> Interval | None:
    """Bounds of an integer expression's value (None: not known), `env` the bounds a
    surrounding `if` condition put on sub-expressions."""
    if e in env:
        return env[e]
    if isinstance(e, ir.Lit):
        return (e.value, e.value)
    if isinstance(e, ir.Binary) and e.op in (ir.BinOp.ADD, ir.BinOp.SUB, ir.BinOp.MUL):
        a, b = _interval(e.lhs, env), _interval(e.rhs, env)
        if a is None or b is None:
            return None
        if e.op is ir.BinOp.ADD:
            return (a[0] + b[0], a[1] + b[1])
        if e.op is ir.BinOp.SUB:
            return (a[0] - b[1], a[1] - b[0])
        ps = [x * y for x in a for y in b]
        return (min(ps), max(ps))
    if isinstance(e, ir.Ite):
        yes, no = _narrow(e.cond, env, True), _narrow(e.cond, env, False)
        a = None if yes is None else _interval(e.then, yes)
        b = None if no is None else _interval(e.else_, no)
        if yes is None:  # the condition cannot hold
            return b
        if no is None:
            return a
        if a is None or b is None:
            return None
        return (min(a[0], b[0]), max(a[1], b[1]))
    t = e.type
    if isinstance(t, ir.IntType) and t.bounded:
        assert t.lo is not None and t.hi is not None
        return (t.lo, t.hi)
    return None


_FLIP = {ir.BinOp.LT: ir.BinOp.GT, ir.BinOp.LE: ir.BinOp.GE, ir.BinOp.GT: ir.BinOp.LT,
         ir.BinOp.GE: ir.BinOp.LE, ir.BinOp.EQ: ir.BinOp.EQ, ir.BinOp.NE: ir.BinOp.NE}
_NEGATE = {ir.BinOp.LT: ir.BinOp.GE, ir.BinOp.LE: ir.BinOp.GT, ir.BinOp.GT: ir.BinOp.LE,
           ir.BinOp.GE: ir.BinOp.LT, ir.BinOp.EQ: ir.BinOp.NE, ir.BinOp.NE: ir.BinOp.EQ}


def _narrow(cond: ir.Expr, env: dict[ir.Expr, Interval], truth: bool) -> dict[ir.Expr, Interval] | None:
    """`env` with the bounds `cond == truth` puts on an expression it compares with a constant;
    None when that leaves it no value. Conditions of any other shape leave `env` as it is."""
    if not (isinstance(cond, ir.Binary) and cond.op in _FLIP):
        return env
    op, lhs, rhs = cond.op, cond.lhs, cond.rhs
    if isinstance(lhs, ir.Lit) and not isinstance(rhs, ir.Lit):
        op, lhs, rhs = _FLIP[op], rhs, lhs
    if not isinstance(rhs, ir.Lit):
        return env
    if not truth:
        op = _NEGATE[op]
    cur = _interval(lhs, env)
    if cur is None:
        return env
    lo, hi, c = cur[0], cur[1], rhs.value
    if op is ir.BinOp.LT:
        hi = min(hi, c - 1)
    elif op is ir.BinOp.LE:
        hi = min(hi, c)
    elif op is ir.BinOp.GT:
        lo = max(lo, c + 1)
    elif op is ir.BinOp.GE:
        lo = max(lo, c)
    elif op is ir.BinOp.EQ:
        lo, hi = max(lo, c), min(hi, c)
    if lo > hi:
        return None
    return {**env, lhs: (lo, hi)}


def split(model: ir.Model, names: set[str]) -> list[tuple[set[str], ir.Model, list[str]]]:
    """`names` in parts, each with the model to decide it on and the variables frozen there: the
    results one common slice keeps on it, when it freezes variables of at least WORTH_VALUES
    value combinations (a smaller one does not pay for compiling and searching a second model),
    the rest on `model` itself (NOTE(irrelevant-vars))."""
    narrow = {n for n in names if (got := slice_for(model, {n})) is not None and _values(model, got[1]) >= WORTH_VALUES}
    together = slice_for(model, narrow) if narrow else None
    if together is None or _values(model, together[1]) < WORTH_VALUES:
        return [(set(names), model, [])]
    rest = names - narrow
    return [(narrow, together[0], together[1])] + ([(rest, model, [])] if rest else [])


def _values(model: ir.Model, frozen: list[str]) -> int:
    """How many value combinations the variables `frozen` have."""
    out = 1
    for v in model.vars:
        if v.name in frozen:
            for _, t in ir.leaf_paths(v.type):
                out *= t.size() if isinstance(t, ir.IntType) and t.bounded else \
                    len(t.members) if isinstance(t, ir.EnumType) else 2
    return out

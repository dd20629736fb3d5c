"""The for-all encoder's symbolic states (NOTE: the method is checker/engines/param/encode.py's):
a state as terms per variable (`PState`, `Val`), ghost counters of folds (`Ghost`), fresh names
numbered per run (`reset_names`), and the helpers of reading and updating nested values that
the encoder (encode.py) and the execution of action bodies (execute.py) share."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.param.extract import Unsupported
from gpcheck.checker.engines.param.ranges import range_key

if TYPE_CHECKING:  # encode.py imports this module
    from gpcheck.checker.engines.param.encode import ParamEncoder


_fresh = itertools.count()
FINITE_FOLD = 64  # an all/any over a constant range of at most this many values is unrolled
Val = object  # z3.ExprRef | dict[str, Val]


def reset_names() -> None:
    """Number fresh names from zero again: at the start of a run in a fresh Z3 context, so that
    it names its terms as a fresh process does (names steer Z3's search; NOTE(fresh-context)); the
    counters' names too (checker/engines/param/counters.py)."""
    from gpcheck.checker.engines.param import counter_plan

    global _fresh
    _fresh = itertools.count()
    counter_plan.reset_names()


def _fresh_int(name: str) -> z3.ArithRef:
    return z3.Int(f"{name}!{next(_fresh)}")


def range_binder(name: str, lo: z3.ArithRef, hi: z3.ArithRef) -> z3.ArithRef:
    """A fresh variable for a binder over lo..hi; its name carries the range's key after `@`."""
    return z3.Int(f"{name}!{next(_fresh)}@{range_key(lo, hi)}")


@dataclass
class Ghost:
    """`sum`/`count` of f(arr[x]) for x in lo..hi, tracked as a state counter."""

    key: int  # id of the Fold node
    var: int
    lo: z3.ArithRef
    hi: z3.ArithRef
    binder: z3.ArithRef  # the template's bound index
    body: z3.ExprRef  # f as a term over Select(arr_template, binder)
    arr: z3.ExprRef  # the template array the body reads
    err: z3.BoolRef = field(default_factory=lambda: z3.BoolVal(False))  # f's evaluation error (over arr, binder)
    exact_init: bool = True  # False: f reads the binder itself, the initial value is only bounded (`init`)
    count: bool = False  # a count (each term 0 or 1), not a sum


@dataclass
class PState:
    vals: dict[int, Val]
    ghosts: dict[int, z3.ArithRef] = field(default_factory=dict)
    # counter abstraction (checker/engines/param/counters.py): rows per (group, value tuple); the
    # counted arrays then have no entry in `vals`
    counts: dict[tuple[int, tuple[int, ...]], z3.ArithRef] = field(default_factory=dict)


def _as_int(e: z3.ExprRef) -> z3.ArithRef:
    return z3.If(e, 1, 0) if z3.is_bool(e) else e  # type: ignore[return-value]


def _eq_val(a: Val, b: Val) -> z3.BoolRef:
    if isinstance(a, dict):
        return z3.And(*[_eq_val(a[k], b[k]) for k in a])  # type: ignore[index]
    return a == b  # type: ignore[return-value]


def _ite_val(c: z3.BoolRef, a: Val, b: Val) -> Val:
    if isinstance(a, dict):
        return {k: _ite_val(c, a[k], b[k]) for k in a}  # type: ignore[index]
    if a is b or (isinstance(a, z3.ExprRef) and a.eq(b)):  # type: ignore[arg-type]
        return a
    return z3.If(c, a, b)


def _counted_read(enc: ParamEncoder, e: ir.Expr) -> bool:
    var, _ = _index_chain(e)
    return var is not None and enc.counted(var)


def _lvalue_path(tgt: ir.Expr) -> tuple[int, list[ir.Expr]]:
    path: list[ir.Expr] = []
    while not isinstance(tgt, ir.VarRef):
        path.append(tgt)
        tgt = tgt.base  # type: ignore[union-attr]
    return tgt.var, list(reversed(path))


def _update(old: Val, steps: list[tuple[str, object]], val: z3.ExprRef) -> Val:
    if not steps:
        return val
    kind, key = steps[0]
    if kind == "f":
        out = dict(old)  # type: ignore[call-overload]
        out[key] = _update(old[key], steps[1:], val)  # type: ignore[index]
        return out
    return z3.Store(old, key, _update(z3.Select(old, key), steps[1:], val))  # type: ignore[arg-type]


def _index_chain(e: ir.Expr) -> tuple[int | None, list[ir.Expr]]:
    """The variable and index expressions of `v[i1][i2]...` (None for anything else)."""
    idx: list[ir.Expr] = []
    while isinstance(e, ir.Index):
        idx.append(e.index)
        e = e.base
    if isinstance(e, ir.VarRef):
        return e.var, list(reversed(idx))
    return None, []


def _loop_positions(st: ir.For, names: Sequence[str]) -> dict[int, int]:
    """For each array the loop writes, the index position that is the loop's binder; every
    write and read of it in the body must use the binder there (iterations independent)."""
    bid = st.binder.id

    def binder_at(idx: list[ir.Expr]) -> set[int]:
        return {k for k, x in enumerate(idx) if isinstance(x, ir.LocalRef) and x.sym.id == bid}

    writes: dict[int, set[int]] = {}
    exprs: list[ir.Expr] = []
    for s in ir.iter_stmts(st.body):
        if isinstance(s, ir.Assign):
            var, idx = _index_chain(s.target)
            if var is None:
                raise Unsupported("a for loop assigning a struct field")
            pos = binder_at(idx)
            if not pos:
                raise Unsupported(f"a for loop over a symbolic range writing {names[var]} other than at its binder "
                                  f"(an accumulation across iterations, `{names[var]}[...] = ...`, would need a "
                                  "count over the range)")
            writes[var] = writes.get(var, pos) & pos
            exprs += [x for x in idx] + [s.value]
        elif isinstance(s, (ir.If, ir.Require)):
            exprs.append(s.cond)
        elif isinstance(s, ir.Let):
            exprs.append(s.value)
    out: dict[int, int] = {}
    for var, pos in writes.items():
        if not pos:
            raise Unsupported("a for loop writing one array at different positions")
        out[var] = min(pos)
    for e in exprs:
        for x in _reads(e):
            var, idx = x
            if var in out and out[var] not in binder_at(idx):
                raise Unsupported("a for loop reading an array it writes other than at its binder")
    return out


def _reads(e: ir.Expr) -> list[tuple[int, list[ir.Expr]]]:
    """Every maximal `v[...]` chain (and bare `v`) read in `e`."""
    out: list[tuple[int, list[ir.Expr]]] = []

    def go(x: ir.Expr) -> None:
        var, idx = _index_chain(x)
        if var is not None:
            out.append((var, idx))
            for i in idx:
                go(i)
            return
        match x:
            case ir.Index(base=b, index=i):
                go(b)
                go(i)
            case ir.Field(base=b):
                go(b)
            case ir.Unary(operand=o):
                go(o)
            case ir.Binary(lhs=l, rhs=r):
                go(l)
                go(r)
            case ir.Ite(cond=c, then=t, else_=f):
                go(c)
                go(t)
                go(f)
            case ir.Fold(body=b):
                go(b)
            case _:
                pass

    go(e)
    return out


def _parallel(new: z3.ExprRef, old: z3.ExprRef, x: z3.ArithRef, lo: z3.ArithRef, hi: z3.ArithRef, pos: int,
              t: ir.Type) -> z3.ExprRef:
    """The array after all iterations: at an index tuple whose position `pos` is j in lo..hi,
    iteration j's value (`new` with x := j), elsewhere `old`."""
    depth = 0
    tt = t
    while isinstance(tt, ir.ArrayType):
        depth += 1
        tt = tt.elem
    idx = [_fresh_int("j") for _ in range(depth)]

    def sel(a: z3.ExprRef, upto: int) -> z3.ExprRef:
        for j in idx[:upto]:
            a = z3.Select(a, j)  # type: ignore[arg-type]
        return a

    j = idx[pos]
    new_j = z3.substitute(new, (x, j))
    body = z3.If(z3.And(lo <= j, j <= hi), sel(new_j, depth), sel(old, depth))
    for k in reversed(range(depth)):
        body = z3.Lambda([idx[k]], body)
    return body

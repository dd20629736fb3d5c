"""Columns for a second `--for-all` round: what other arrays hold *about* an index value.

A model often keeps per-item counters (`work[s]`, `done[s]`, `launched[s]` over streams s)
beside containers that refer to the items by value (`slot[i]`, the stream whose block sits in
slot i; `sv[c][i]`, the saved one). The accounting invariants join the two:
`launched[s] == done[s] + (count of slots holding s) + (count of saved blocks of s)`, and
`work[s] == BLEN * done[s] + (sum of prog over the slots holding s) + ...`. In a view over the
items' range (one index x) this module adds, for each *pointer* array `p` (int elements whose
range is the view's, or the view's and one "none" value above it; its own index range may
have the same bounds, as three slots and three streams do):

- `(count i in R: p[i] == x)` (nested ranges: a sum of counts), and
- `(sum i in R: if p[i] == x then q[i] else 0)` for every int array `q` with p's index chain,

and, in any view, the position columns `cmp(x, v)` for an int scalar `v` whose declared range
is the index's own (`cur: 0..1` against `sv: [0..1] -> ..`: "the resident TSG's save area is
empty" is `x == cur implies sv[x][y] == 3`). Only pointer arrays whose index ranges do not
depend on the symbolic constants get aggregate columns: their term is then the finite sum
itself, exact for every value of the constants (and gpspec's `count`/`sum` over a constant
range, as printed, is unrolled the same way by checker/param/encode.py). Like every column,
these only propose candidates; Z3 decides."""

from __future__ import annotations

import itertools
from typing import Callable, Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.param.encode import ParamEncoder, PState, range_key
from gpcheck.checker.param.mine import Column, Domain, View, _chain, _cmp_column, _consts_in, _lo_of
from gpcheck.checker.param.prove import affine_text

MAX_POINTER_COLUMNS = 24  # aggregate columns per view
_BINDERS = ("i", "j", "k", "m")


def enrich(enc: ParamEncoder, view: View) -> View:
    """`view` with the aggregate and scalar position columns described above (the same
    view when there are none)."""
    if any(_single(d) for d in view.domains):
        return view  # an index with one value (Q = 1 queue): its facts are the scalar view's
    extra = _positions(enc, view)
    if len(view.domains) == 1:
        extra += _aggregates(enc, view)
    if not extra:
        return view
    return View(view.domains, view.names, view.columns + extra, view.distinct)


def _single(d: Domain) -> bool:
    lo, hi = z3.simplify(d.lo), z3.simplify(d.hi)
    return z3.is_int_value(lo) and z3.is_int_value(hi) and hi.as_long() <= lo.as_long()  # type: ignore[attr-defined]


def _positions(enc: ParamEncoder, view: View) -> list[Column]:
    """`cmp(x, v)` for each int scalar `v` declared over exactly x's range."""
    by_name = {c.name: c for c in view.columns if c.kind == "scalar"}
    have = {c.name for c in view.columns}
    out: list[Column] = []
    for v in enc.model.vars:
        if not isinstance(v.type, ir.IntType) or v.name not in by_name or not v.type.bounded:
            continue
        lo, hi = enc.bounds(v.type)
        key = range_key(lo, hi)
        for k, (name, d) in enumerate(zip(view.names, view.domains)):
            col = _cmp_column(name, k, 0, by_name[v.name])
            if d.key == key and col.name not in have:
                out.append(col)
    return out


def _constant(enc: ParamEncoder, t: ir.Type) -> range | None:
    return enc.constant_range(t) if isinstance(t, ir.IntType) else None


def _points_into(enc: ParamEncoder, leaf: ir.IntType, view: View) -> bool:
    """`leaf`'s values are the view's index range, plus at most one more above it (a "none"
    value: `slot: [..] -> 0..3` over streams 0..2, 3 for free), for every size."""
    lo, hi = enc.bounds(leaf)
    d = view.domains[0]
    s = z3.Solver()
    s.set("timeout", 2000)
    s.add(*enc.facts, z3.Or(lo != d.lo, hi < d.hi, hi > d.hi + 1))
    return s.check() == z3.unsat


def _aggregates(enc: ParamEncoder, view: View) -> list[Column]:
    model = enc.model
    taken = {v.name for v in model.vars} | {c.name for c in model.constants} | set(view.names)
    binders = [b for b in (*_BINDERS, *(f"i{n}" for n in range(8))) if b not in taken]
    out: list[Column] = []
    for p in model.vars:
        doms, leaf = _chain(enc, p.type)
        if not doms or not isinstance(leaf, ir.IntType) or not leaf.bounded or _constant(enc, leaf) is None:
            continue  # (a value range that grows with the sizes holds counters, not pointers)
        if len(doms) > len(binders):
            continue
        ranges = _index_ranges(enc, p.type)
        if ranges is None or not _points_into(enc, leaf, view):
            continue
        out.append(_aggregate(enc, view, p, None, ranges, binders))
        for q in model.vars:
            qdoms, qleaf = _chain(enc, q.type)
            if q is p or not isinstance(qleaf, ir.IntType) or [x.key for x in qdoms] != [x.key for x in doms]:
                continue
            out.append(_aggregate(enc, view, p, q, ranges, binders))
    return out[:MAX_POINTER_COLUMNS]


def _index_ranges(enc: ParamEncoder, t: ir.Type) -> list[tuple[ir.IntType, range]] | None:
    """The index types of an array chain with their (constant) values, or None."""
    out: list[tuple[ir.IntType, range]] = []
    while isinstance(t, ir.ArrayType):
        r = _constant(enc, t.index)
        if r is None:
            return None
        out.append((t.index, r))  # type: ignore[arg-type]
        t = t.elem
    return out


def _aggregate(enc: ParamEncoder, view: View, p: ir.Var, q: ir.Var | None,
               ranges: list[tuple[ir.IntType, range]], binders: Sequence[str]) -> Column:
    """`(count i..: p[i..] == x)` (q None) or `(sum i..: if p[i..] == x then q[i..] else 0)`."""
    x = view.names[0]
    bs = binders[:len(ranges)]
    sub = "".join(f"[{b}]" for b in bs)
    text = (f"{p.name}{sub} == {x}" if q is None else f"if {p.name}{sub} == {x} then {q.name}{sub} else 0")
    for n, (b, (t, r)) in enumerate(reversed(list(zip(bs, ranges)))):
        kind = "count" if q is None and n == 0 else "sum"
        text = f"({kind} {b} in {_range_text(enc, t)}: {text})"
    tuples = list(itertools.product(*[r for _, r in ranges]))
    labels = [p.name + "".join(f"[{ir.format_scalar(t, i)}]" for (t, _), i in zip(ranges, ix)) for ix in tuples]
    qlabels = ([] if q is None else
               [q.name + "".join(f"[{ir.format_scalar(t, i)}]" for (t, _), i in zip(ranges, ix)) for ix in tuples])

    def term(s: PState, xs: Sequence[z3.ArithRef]) -> z3.ExprRef:
        parts = []
        for ix in tuples:
            a = _select(s.vals[p.index], ix)
            b = z3.IntVal(1) if q is None else _select(s.vals[q.index], ix)
            parts.append(z3.If(a == xs[0], b, 0))
        return z3.Sum(*parts) if parts else z3.IntVal(0)

    def value(dec: dict, c: dict[str, int], ix0: tuple[int, ...]) -> int:
        total = 0
        for ix in tuples:
            a = _elem(dec[p.name], p.type, ix, c, enc)
            if a == ix0[0]:
                total += 1 if q is None else _elem(dec[q.name], q.type, ix, c, enc)
        return total

    def concrete(c: dict[str, int], ix0: tuple[int, ...], slot: Callable[[str], z3.ExprRef]) -> z3.ExprRef:
        parts = [z3.If(slot(lp) == ix0[0], z3.IntVal(1) if q is None else slot(qlabels[n]), 0)
                 for n, lp in enumerate(labels)]
        return z3.Sum(*parts) if parts else z3.IntVal(0)

    grows: set[str] = set()
    if q is not None:
        _, qleaf = _chain(enc, q.type)
        lo, hi = enc.bounds(qleaf)
        grows |= _consts_in(hi, enc.pm.names)
    return Column(text, ir.IntType(None, None), "agg", term, value, concrete=concrete,
                  consts=frozenset(grows), uses=frozenset({0}))


def _range_text(enc: ParamEncoder, t: ir.IntType) -> str:
    if t.symmetric:
        return t.symmetric
    lo, hi = enc.bounds(t)
    return f"{affine_text(lo)}..{affine_text(hi)}"


def _select(a: z3.ExprRef, ix: tuple[int, ...]) -> z3.ExprRef:
    for i in ix:
        a = z3.Select(a, i)  # type: ignore[arg-type]
    return a


def _elem(a: object, t: ir.Type, ix: tuple[int, ...], c: dict[str, int], enc: ParamEncoder) -> int:
    for i in ix:
        assert isinstance(t, ir.ArrayType) and isinstance(a, list)
        a = a[i - _lo_of(t.index, c, enc)]
        t = t.elem
    assert isinstance(a, int)
    return a

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
range, as printed, is unrolled the same way by checker/engines/param/encode.py). Like every column,
these only propose candidates; Z3 decides."""

from __future__ import annotations

import itertools
from typing import Callable, Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.param.encode import ParamEncoder, PState, range_key
from gpcheck.checker.engines.param.mine import Column, Domain, View, _chain, _cmp_column, _consts_in, _lo_of
from gpcheck.checker.engines.param.candidates import affine_text

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
    out: list[Column] = _counted_aggregates(enc, view, binders)
    for p in model.vars:
        if enc.counted(p.index):
            continue  # counted rows: _counted_aggregates
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


def _counted_aggregates(enc: ParamEncoder, view: View, binders: Sequence[str]) -> list[Column]:
    """The aggregate columns of a pointer array over the range the counter abstraction counts
    (checker/engines/param/counters.py): `(count i in 0..S-1: p[i] == x)`, `(sum i ..: if p[i] == x
    then q[i] else 0)` for a companion q whose rows are counted jointly with p's (the same
    group), and `(count i ..: p[i] == x and q[i] == v)` for each value v of q; an array with
    other, fixed, index positions (`sv[c][i]`) is summed over them. Their terms are sums of
    counters, exact for every size."""
    plan = enc.counters
    if plan is None:
        return []
    out: list[Column] = []
    model = enc.model
    pointers = _pointers(enc, view.domains[0].key)
    for p in model.vars:
        if p.index not in plan.vars:
            continue
        pos, chain = plan.vars[p.index]
        doms, leaf = _chain(enc, p.type)
        if not isinstance(leaf, ir.IntType) or not _points_into(enc, leaf, view) or len(chain) > len(binders):
            continue
        if p.index not in pointers:
            continue  # its values never name an item of the view (an index into its arrays)
        pcomps = [k for k, c in enumerate(plan.comps) if c.var == p.index]
        out.append(_counted(enc, view, p, None, None, pcomps, binders))
        if len(pcomps) > 1:  # each save area on its own (`cur == 0 implies` none of x in sv[0])
            out += [_counted(enc, view, p, None, None, [k], binders) for k in pcomps]
        for q in model.vars:
            if q is p or q.index not in plan.vars or plan.vars[q.index][0] != pos:
                continue
            qdoms, qleaf = _chain(enc, q.type)
            if [d.key for d in qdoms] != [d.key for d in doms] or not isinstance(qleaf, ir.IntType):
                continue
            pairs = [(k, plan.index[(q.index, plan.comps[k].at)]) for k in pcomps]
            if not all(plan.joint(a, b) for a, b in pairs):
                continue  # counted apart: their joint values are not known
            out.append(_counted(enc, view, p, q, None, pairs, binders))
            for v in plan.comps[pairs[0][1]].values or ():  # none per value of a symbolic-valued one
                out.append(_counted(enc, view, p, q, v, pairs, binders))
    return out


def _counted(enc: ParamEncoder, view: View, p: ir.Var, q: ir.Var | None, value: int | None,
             comps: list, binders: Sequence[str]) -> Column:  # type: ignore[type-arg]
    """One column of `_counted_aggregates`: comps are p's components (q None) or (p, q) pairs."""
    plan = enc.counters
    assert plan is not None
    pos, chain = plan.vars[p.index]
    x = view.names[0]
    bs = list(binders[:len(chain)])
    single = len(comps) == 1 and len(chain) > 1  # one component: its fixed indices written out
    if single:
        at = list(plan.comps[comps[0] if q is None else comps[0][0]].at)
        bs = [bs[pos] if d == pos else str(at.pop(0)) for d in range(len(chain))]
    sub = "".join(f"[{b}]" for b in bs)
    if q is None:
        text, kind = f"{p.name}{sub} == {x}", "count"
    elif value is None:
        text, kind = f"if {p.name}{sub} == {x} then {q.name}{sub} else 0", "sum"
    else:
        text, kind = f"{p.name}{sub} == {x} and {q.name}{sub} == {value}", "count"
    order = [pos] + [k for k in reversed(range(len(chain))) if k != pos]  # innermost binder first
    for n, k in enumerate(sorted(range(len(chain)), reverse=True)):
        if single and k != pos:
            continue
        fold = kind if n == 0 or single else "sum"
        text = f"({fold} {bs[k]} in {_range_text(enc, chain[k])}: {text})"  # type: ignore[arg-type]
    del order

    def term(s: PState, xs: Sequence[z3.ExprRef]) -> z3.ExprRef:
        parts = []
        for c in comps:
            if q is None:
                parts.append(plan.comp_count(s.counts, c, lambda v: v == xs[0]))
            else:
                parts.append(plan.comp_sum(s.counts, c[0], lambda v: v == xs[0], c[1], value))
        return z3.Sum(*parts) if len(parts) > 1 else parts[0]

    def rows(dec: dict, cs: dict[str, int], k: int) -> list[int]:
        """Component k's values over the rows, in index order."""
        a: object = dec[model_vars[plan.comps[k].var].name]
        at = list(plan.comps[k].at)
        t: ir.Type = model_vars[plan.comps[k].var].type
        for depth in range(len(chain)):
            assert isinstance(t, ir.ArrayType) and isinstance(a, list)
            if depth == pos:
                rest = a
                break
            a = a[at.pop(0) - _lo_of(t.index, cs, enc)]
            t = t.elem
        out: list[int] = []
        for elem in rest:  # the counted position, then the fixed ones after it
            e, tt = elem, t.elem  # type: ignore[union-attr]
            for j in at:
                assert isinstance(tt, ir.ArrayType)
                e = e[j - _lo_of(tt.index, cs, enc)]
                tt = tt.elem
            out.append(int(e))
        return out

    model_vars = enc.model.vars

    def value_of(dec: dict, cs: dict[str, int], ix0: tuple[int, ...]) -> int:
        total = 0
        for c in comps:
            if q is None:
                total += sum(1 for v in rows(dec, cs, c) if v == ix0[0])
            else:
                for a, b in zip(rows(dec, cs, c[0]), rows(dec, cs, c[1])):
                    if a == ix0[0]:
                        total += (1 if b == value else 0) if value is not None else b
        return total

    def labels(cs: dict[str, int], k: int) -> list[str]:
        comp = plan.comps[k]
        lo = _lo_of(chain[pos], cs, enc)
        hi = lo + len_of(cs) - 1
        out = []
        for i in range(lo, hi + 1):
            at = list(comp.at)
            idx = [i if d == pos else at.pop(0) for d in range(len(chain))]
            out.append(model_vars[comp.var].name + "".join(f"[{v}]" for v in idx))
        return out

    sizes: dict[tuple[tuple[str, int], ...], int] = {}

    def len_of(cs: dict[str, int]) -> int:
        from gpcheck.checker.engines.param.mine import _eval

        key = tuple(sorted(cs.items()))
        if key not in sizes:
            sizes[key] = _eval(plan.hi, cs, enc) - _eval(plan.lo, cs, enc) + 1
        return sizes[key]

    def concrete(cs: dict[str, int], ix0: tuple[int, ...], slot: Callable[[str], z3.ExprRef]) -> z3.ExprRef:
        parts = []
        for c in comps:
            if q is None:
                parts += [z3.If(slot(lb) == ix0[0], 1, 0) for lb in labels(cs, c)]
            else:
                for la, lb in zip(labels(cs, c[0]), labels(cs, c[1])):
                    then = (z3.If(slot(lb) == value, 1, 0) if value is not None else slot(lb))
                    parts.append(z3.If(slot(la) == ix0[0], then, 0))
        return z3.Sum(*parts) if parts else z3.IntVal(0)

    grows = {n for n in _consts_in(plan.hi, enc.pm.names)}
    # a count at one value of q, or of one component, is a refinement of the aggregate: it
    # takes part in bounds and conditions ("aggv"), not in the linear equalities of
    # checker/engines/param/affine.py, which would only rediscover the sum over the values
    kind = "aggv" if value is not None or single else "agg"
    return Column(text, ir.IntType(None, None), kind, term, value_of, concrete=concrete,
                  consts=frozenset(grows), uses=frozenset({0}))


def _pointers(enc: ParamEncoder, key: str) -> set[int]:
    """The variables whose values name items of the index range `key`: those read in the
    index of an array over that range (`work[slot[i]]`), and, closed under copies, those a
    value is copied into or out of (`sv[cur][i] = slot[i]`, `slot[i] = sv[1 - cur][i]`). A
    counter such as `prog`, whose values merely happen to span the same range, is none."""
    model = enc.model
    exprs: list[ir.Expr] = [p.expr for p in (*model.invariants, *model.transitions)]
    copies: list[tuple[int, int]] = []
    for a in model.actions:
        for st in ir.iter_stmts(a.body):
            if isinstance(st, (ir.Require, ir.If)):
                exprs.append(st.cond)
            elif isinstance(st, ir.Let):
                exprs.append(st.value)
            elif isinstance(st, ir.Assign):
                exprs += [st.target, st.value]
                src, dst = _root(st.value), _root(st.target)
                if src is not None and dst is not None:
                    copies.append((src, dst))
    out: set[int] = set()
    for e in exprs:
        for x in ir.walk_expr(e):
            if isinstance(x, ir.Index) and isinstance(x.base.type, ir.ArrayType) and \
                    isinstance(x.base.type.index, ir.IntType) and x.base.type.index.bounded:
                if range_key(*enc.bounds(x.base.type.index)) != key:
                    continue
                out |= {y.var for y in ir.walk_expr(x.index) if isinstance(y, ir.VarRef)}
    grown = True
    while grown:
        grown = False
        for a, b in copies:
            if (a in out) != (b in out):
                out |= {a, b}
                grown = True
    return out


def _root(e: ir.Expr) -> int | None:
    """The variable of `v`, `v[..]` or `v.f` (a plain copy), else None."""
    while isinstance(e, (ir.Index, ir.Field)):
        e = e.base
    return e.var if isinstance(e, ir.VarRef) else None

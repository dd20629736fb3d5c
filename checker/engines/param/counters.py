"""Counter abstraction: arrays over a symbolic index range encoded by how many rows hold each value.

`--for-all S` over a model whose arrays are indexed by slots `0..S-1` (`slot`, `prog`, the save
areas `sv[c][i]`) and whose actions touch them only row by row cannot keep the arrays as SMT
arrays when a `for i in 0..S-1` loop accumulates into other arrays (`work[slot[i]] += 1`): the
sum over the rows is a count over the range, outside the array fragment. When every access
to the range R's arrays is

- (a) inside `for i in R` whose iteration reads and writes R's arrays only at index i, plus
  commutative accumulations into arrays over a fixed range (`x[e] = x[e] + c` with c fixed by
  the row's values and of one sign over the rows, or the saturating `x[e] = if x[e] <= K then
  x[e] + 1 else x[e]`; e may depend on row i), which the loop reads nowhere else,
- (b) through a parameter `i: R` of an action (one row chosen, one counter moves), or
- (c) in `all/any/count/sum i in R: P(row i)`,

the rows are interchangeable and the state is encoded exactly by counters: for a *group* G of
row components (`slot[i]`, `sv[0][i]`, ...: an R-indexed array at fixed other indices) and each
value h of G's tuple, C_G[h] = the number of rows i whose G-components equal h; the C_G are
non-negative and sum to |R|. A loop is a linear map on the counters (C'_G[w] = sum of C_H[h]
over the h whose image is w, H the group G's new value is computed from); an accumulation is
x'[s] = x[s] + sum over h of c(h) * C_H[h] [e(h) == s] (saturating: min(x + k, K + 1) from x <= K,
which is what K+1-capped increments of one give in any order); `all i: P` is "every h with
C_H[h] > 0 satisfies P". NOTE(counter-groups): groups start as single components and are
merged whenever some new value, guard, accumulation or error reads several of them jointly
(after splitting on the values of the finite scalars it reads, as `switch` reads `sv[cur][i]`),
so the counters per group are exact marginals of the rows: each group's next marginal is a
function of one group's marginal. Anything else raises `Unsupported` naming the construct.
A group may hold one component whose values span a range that grows with the constants
(`prog: 0..BLEN`): its counters are then an SMT array per tuple of the other components, with
exact moments (checker/engines/param/symvalue.py, NOTE(symbolic-values)); `values` and `fin` below
are over the finite components only.

The explicit engine never sees this: it is only the for-all encoder's view of the model
(checker/engines/param/encode.py calls the hooks below)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.param import symvalue
from gpcheck.checker.engines.param.extract import Unsupported
from gpcheck.checker.engines.smt.terms import subterms
from gpcheck.checker.engines.param import counter_plan
from gpcheck.checker.engines.param.counter_plan import (
    CounterPlan,
    MAX_CASES,
    Regroup,
    Row,
    _sum,
    element,
    read,
    settle,
    write,
)

if TYPE_CHECKING:
    from gpcheck.checker.engines.param.encode import ParamEncoder, PState, _Exec


def _and(cond: z3.BoolRef, *xs: z3.BoolRef) -> z3.BoolRef:
    """`cond and xs`, without cond where it is true: a group without a symbolic-valued
    component builds the very terms it built before pieces existed (Z3 numbers terms in the
    order they are made, and its search follows the numbers: NOTE(fresh-context))."""
    return z3.And(*xs) if z3.is_true(cond) else z3.And(cond, *xs)  # type: ignore[return-value]


# -- splitting a row computation into cases and groups ------------------------------------


def _deps(terms: Sequence[z3.ExprRef], row: Row) -> set[int]:
    """The row components that `terms` read."""
    return {row.ids[e.get_id()] for e in subterms(terms) if e.get_id() in row.ids}


def _case_consts(enc: "ParamEncoder", terms: Sequence[z3.ExprRef]) -> list[tuple[z3.ExprRef, list[z3.ExprRef]]]:
    """The state scalars with a small fixed domain that `terms` read, with their values."""
    out: dict[int, tuple[z3.ExprRef, list[z3.ExprRef]]] = {}
    for e in subterms(terms):
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            dom = enc.case_domain(e.decl().name())
            if dom is not None:
                out[e.get_id()] = (e, dom)
    return [out[i] for i in sorted(out)]


def split(ex: "_Exec", terms: Sequence[z3.ExprRef], row: Row, what: str, default: int = 0
          ) -> list[tuple[z3.BoolRef, int, list[list[z3.ExprRef]]]]:
    """`terms` over one row as cases (condition, group H, the terms at each value of H in
    plan.values[H] order): each case's terms read the components of H only."""
    return split_terms(ex.enc, terms, row, what, default)


def split_terms(enc: "ParamEncoder", terms: Sequence[z3.ExprRef], row: Row, what: str, default: int = 0
                ) -> list[tuple[z3.BoolRef, int, list[list[z3.ExprRef]]]]:
    """`split` without an execution (the encoder and a row)."""
    plan = enc.counters
    assert plan is not None
    terms = [z3.simplify(t) for t in terms]  # `If(0 == 0, sv[0][i], sv[1][i])` reads one component

    def one(cond: z3.BoolRef, ts: Sequence[z3.ExprRef]) -> tuple[z3.BoolRef, int, list[list[z3.ExprRef]]] | None:
        deps = _deps(ts, row)
        groups = {plan.group_of[k] for k in deps}
        if len(groups) > 1:
            return None
        g = groups.pop() if groups else default
        out = []
        for h in plan.values[g]:
            sub = [(row.vars[k], plan.value(k, v)) for k, v in zip(plan.fin[g], h)]
            out.append([z3.simplify(z3.substitute(t, *sub)) for t in ts])
        return cond, g, out

    whole = one(z3.BoolVal(True), terms)
    if whole is not None:
        return [whole]
    consts = _case_consts(enc, terms)
    combos = 1
    for _, dom in consts:
        combos *= len(dom)
    if not consts or combos > MAX_CASES:
        raise Regroup(_deps(terms, row), what)
    cases = []
    for vals in itertools.product(*[dom for _, dom in consts]):
        sub = [(c, v) for (c, _), v in zip(consts, vals)]
        ts = [z3.simplify(z3.substitute(t, *sub)) for t in terms]
        got = one(z3.And(*[c == v for c, v in sub]), ts)
        if got is None:
            raise Regroup(_deps(ts, row), what)
        cases.append(got)
    return cases


def _by_cases(cases: list[tuple[z3.BoolRef, int, list[list[z3.ExprRef]]]], f) -> z3.ExprRef:  # type: ignore[no-untyped-def]
    """If-chain over the cases of f(group, images); the last case is the default (the case
    scalars are within their domains in every state the encoder reasons about)."""
    out = f(cases[-1][1], cases[-1][2])
    for cond, g, imgs in reversed(cases[:-1]):
        out = z3.If(cond, f(g, imgs), out)
    return out


def _exists_row(ex: "_Exec", cases, row: Row, at: int = 0) -> z3.BoolRef:  # type: ignore[no-untyped-def]
    return exists_row(ex.enc, ex.counts, cases, row, at)


def pieces(plan: CounterPlan, counts: dict, g: int, h: tuple[int, ...], terms: Sequence[z3.ExprRef],  # type: ignore[type-arg]
           row: Row, shift_at: int | None = None) -> list[symvalue.Piece]:
    """The rows of group g with finite part h, as pieces whose `terms` are known (one piece,
    C[h], for a group without a symbolic-valued component: checker/engines/param/symvalue.py)."""
    k = plan.sym[g]
    return symvalue.pieces(plan, counts, g, h, terms, row.vars[k] if k is not None else None, shift_at)


def exists_row(enc: "ParamEncoder", counts: dict, cases, row: Row, at: int = 0) -> z3.BoolRef:  # type: ignore[no-untyped-def]
    """Some row (a value h with C[h] > 0) makes the `at`-th term of the cases true."""
    plan = enc.counters
    assert plan is not None

    def f(g: int, imgs: list[list[z3.ExprRef]]) -> z3.BoolRef:
        out = []
        for h, im in zip(plan.values[g], imgs):
            if z3.is_false(im[at]):
                continue
            for pc in pieces(plan, counts, g, h, [im[at]], row):
                if not z3.is_false(pc.terms[0]):  # type: ignore[arg-type]
                    out.append(_and(pc.cond, pc.count >= 1, pc.terms[0]))  # type: ignore[arg-type]
        return z3.Or(*out)

    return z3.simplify(_by_cases(cases, f))  # type: ignore[arg-type]


# -- candidates over the rows (a view indexed by the counted range) ---------------------------


def row_formula(enc: "ParamEncoder", domains: Sequence[object], distinct: bool, body_of, counts: dict,  # type: ignore[no-untyped-def]
                violation: bool) -> z3.BoolRef:
    """`all x.. in the view: body` for a view with one index over the counted range (the
    others fixed ranges): for every value of the fixed indices and every row value h with
    C[h] > 0 the body holds at h (with `violation`, the negation: some row breaks it).
    `body_of(xs)` builds the body with xs[rpos] a marker for the row."""
    plan = enc.counters
    assert plan is not None
    rpos = [p for p, d in enumerate(domains) if d.key == plan.key]  # type: ignore[attr-defined]
    if len(rpos) != 1 or distinct:
        raise Unsupported("a candidate over two rows of the counted range")
    fixed = []
    for p, d in enumerate(domains):
        if p == rpos[0]:
            fixed.append([None])
            continue
        lo, hi = z3.simplify(d.lo), z3.simplify(d.hi)  # type: ignore[attr-defined]
        if not (z3.is_int_value(lo) and z3.is_int_value(hi)):
            raise Unsupported("a candidate with a second symbolic index")
        fixed.append(list(range(lo.as_long(), hi.as_long() + 1)))  # type: ignore[attr-defined]
    parts = []
    for combo in itertools.product(*fixed):
        row = plan.new_row()
        marker = z3.Int(f"row!{next(counter_plan._serial)}")
        plan.markers[marker.get_id()] = row
        counter_plan.OWNERS[marker.get_id()] = plan
        try:
            xs = [marker if v is None else z3.IntVal(v) for v in combo]
            body = body_of(xs)
        finally:
            del plan.markers[marker.get_id()]
            del counter_plan.OWNERS[marker.get_id()]
        if _deps([body], Row({0: marker})):
            raise Unsupported("a candidate reading the row's index itself")
        cases = split_terms(enc, [z3.Not(body)], row, "a candidate over the rows")
        parts.append(exists_row(enc, counts, cases, row))
    broken = z3.Or(*parts)
    return broken if violation else z3.Not(broken)  # type: ignore[return-value]


# -- hooks of checker/engines/param/encode.py's _Exec ------------------------------------------------


def fold(ex: "_Exec", e: ir.Fold) -> tuple[z3.ExprRef, z3.BoolRef]:
    """`all/any/count/sum i in R: P(row i)` from the counters of the group P reads."""
    plan = ex.enc.counters
    assert plan is not None
    if e.kind not in (ir.FoldKind.ALL, ir.FoldKind.ANY, ir.FoldKind.COUNT, ir.FoldKind.SUM):
        raise Unsupported(f"{e.kind.value} over the counted range")
    if any(r.param and r.written() for r in ex.rows.values()):  # type: ignore[attr-defined]
        raise Unsupported(f"a {e.kind.value} over the counted range after the action wrote its chosen row "
                          "(the counters move only at the action's end)")
    row = plan.new_row()
    ex.rows[e.binder.id] = row
    try:
        v, err = ex.eval(e.body)
    finally:
        del ex.rows[e.binder.id]
    v = _as_int(v) if e.kind is ir.FoldKind.COUNT else v  # type: ignore[arg-type]
    cases = split(ex, [v, z3.simplify(err)], row, f"a {e.kind.value} over the counted range")  # type: ignore[list-item]

    def value(g: int, imgs: list[list[z3.ExprRef]]) -> z3.ExprRef:
        if plan.sym[g] is not None:  # type: ignore[union-attr]
            return _sym_fold(ex, e.kind, g, imgs, row)
        cs = [ex.counts[(g, h)] for h in plan.values[g]]  # type: ignore[union-attr]
        if e.kind is ir.FoldKind.ALL:
            return z3.And(*[z3.Or(c == 0, im[0]) for c, im in zip(cs, imgs) if not z3.is_true(im[0])])
        if e.kind is ir.FoldKind.ANY:
            return z3.Or(*[z3.And(c >= 1, im[0]) for c, im in zip(cs, imgs) if not z3.is_false(im[0])])
        parts = []
        for c, im in zip(cs, imgs):
            if not z3.is_int_value(im[0]):
                if e.kind is ir.FoldKind.COUNT:
                    parts.append(z3.If(im[0] == 1, c, 0))
                    continue
                raise Unsupported("a sum over the counted range of a term the row does not fix")
            if im[0].as_long():  # type: ignore[attr-defined]
                parts.append(im[0].as_long() * c)  # type: ignore[attr-defined]
        return _sum(parts)

    val = _by_cases(cases, value)
    err_all = _exists_row(ex, cases, row, 1)
    if not z3.is_false(err_all) and e.kind in (ir.FoldKind.ALL, ir.FoldKind.ANY) and not ex._never(err_all):
        raise Unsupported(f"an {e.kind.value} over the counted range whose body may fail to evaluate "
                          "(its evaluation order would matter)")
    if e.kind in (ir.FoldKind.ALL, ir.FoldKind.ANY):
        err_all = z3.BoolVal(False)
    return val, err_all


def _sym_fold(ex: "_Exec", kind: ir.FoldKind, g: int, imgs: list[list[z3.ExprRef]], row: Row) -> z3.ExprRef:
    """A fold's value over a symbolic-valued group, piece by piece (symvalue.py)."""
    plan = ex.enc.counters
    assert plan is not None
    parts = []
    for h, im in zip(plan.values[g], imgs):
        for pc in pieces(plan, ex.counts, g, h, [im[0]], row, shift_at=0 if kind is ir.FoldKind.SUM else None):
            v = pc.terms[0]
            if kind is ir.FoldKind.ALL:
                parts.append(z3.Or(pc.count == 0, z3.Not(pc.cond), v))
            elif kind is ir.FoldKind.ANY:
                parts.append(z3.And(pc.count >= 1, pc.cond, v))
            elif kind is ir.FoldKind.COUNT:
                parts.append(z3.If(z3.And(pc.cond, v == 1), pc.count, 0))  # type: ignore[operator]
            else:
                if v is not None and not z3.is_int_value(v):
                    raise Unsupported("a sum over the counted range of a term the row does not fix")
                parts.append(z3.If(pc.cond, pc.total(0), 0))
    if kind is ir.FoldKind.ALL:
        return z3.And(*parts)
    if kind is ir.FoldKind.ANY:
        return z3.Or(*parts)
    return _sum(parts)


def _as_int(e: z3.ExprRef) -> z3.ExprRef:
    return z3.If(e, 1, 0) if z3.is_bool(e) else e


@dataclass
class Accumulation:
    var: int
    index: z3.ExprRef
    add: z3.ExprRef
    cap: z3.ExprRef | None  # saturating `if x <= cap then x + 1 else x`
    guard: z3.BoolRef


def accumulation_form(tgt: ir.Expr, value: ir.Expr) -> tuple[ir.Expr, ir.Expr | None, ir.Expr | None] | None:
    """(addend, cap, cap') of `x[e] = x[e] + c` (c, None, None), `x[e] = c + x[e]`, or
    `x[e] = if x[e] <= K then x[e] + 1 else x[e]` (1, K, None) / `< K` (1, None, K), else None."""
    if isinstance(value, ir.Binary) and value.op is ir.BinOp.ADD:
        if value.lhs == tgt:
            return value.rhs, None, None
        if value.rhs == tgt:
            return value.lhs, None, None
        return None
    if isinstance(value, ir.Ite) and value.else_ == tgt and isinstance(value.cond, ir.Binary) \
            and value.cond.op in (ir.BinOp.LE, ir.BinOp.LT) and value.cond.lhs == tgt:
        th = value.then
        if isinstance(th, ir.Binary) and th.op is ir.BinOp.ADD and th.lhs == tgt and \
                isinstance(th.rhs, ir.Lit) and th.rhs.value == 1:
            k = value.cond.rhs
            return th.rhs, (k if value.cond.op is ir.BinOp.LE else None), (k if value.cond.op is ir.BinOp.LT else None)
    return None


def check_loop(enc: "ParamEncoder", st: ir.For) -> set[int]:
    """The arrays outside the counted ones that the loop accumulates into; each is read in the
    loop only inside its accumulations (else the order of the iterations would matter)."""
    plan = enc.counters
    assert plan is not None
    names = [v.name for v in enc.model.vars]
    accumulated: set[int] = set()
    allowed: set[int] = set()  # ids of the VarRef nodes inside accumulation patterns
    exprs: list[ir.Expr] = []
    for s in ir.iter_stmts(st.body):
        if isinstance(s, ir.Require):
            raise Unsupported("a require inside a for loop over a symbolic range")
        if isinstance(s, ir.Assign):
            root = s.target
            while isinstance(root, (ir.Index, ir.Field)):
                root = root.base
            assert isinstance(root, ir.VarRef)
            if root.var in plan.vars:
                exprs += [s.target, s.value]
                continue
            form = accumulation_form(s.target, s.value) if isinstance(s.target, ir.Index) else None
            if form is None or not isinstance(s.target.base, ir.VarRef):  # type: ignore[union-attr]
                raise Unsupported(f"a for loop over the counted range writing {names[root.var]} other than by an "
                                  f"accumulation (`{names[root.var]}[e] = {names[root.var]}[e] + c` or its "
                                  "saturating form)")
            accumulated.add(root.var)
            for x in ir.walk_expr(s.value):
                if isinstance(x, ir.Index) and x == s.target:
                    allowed.add(id(x.base))
            allowed.add(id(s.target.base))  # type: ignore[union-attr]
            exprs += [s.target, s.value]
        elif isinstance(s, (ir.If,)):
            exprs.append(s.cond)
        elif isinstance(s, ir.Let):
            exprs.append(s.value)
        elif isinstance(s, ir.For):
            raise Unsupported("a for loop nested in a loop over the counted range")
    for e in exprs:
        for x in ir.walk_expr(e):
            if isinstance(x, ir.Fold) and enc._counted_range(x.binder.type):
                raise Unsupported(f"a {x.kind.value} over the counted range inside a loop over it (an iteration "
                                  "would see the rows before it updated)")
            if isinstance(x, ir.VarRef) and x.var in accumulated and id(x) not in allowed:
                raise Unsupported(f"a for loop over the counted range reading {names[x.var]}, which it accumulates "
                                  "into, outside the accumulation")
    return accumulated


def accumulate(ex: "_Exec", tgt: ir.Index, value: ir.Expr, guard: z3.BoolRef) -> None:
    """Record `x[e] = x[e] + c` of one row (checked by check_loop); errors as the body's."""
    form = accumulation_form(tgt, value)
    assert form is not None and isinstance(tgt.base, ir.VarRef)
    add, cap, cap_lt = form
    iv, ierr = ex.eval(tgt.index)
    _, verr = ex.eval(value)
    lo, hi = ex.enc.bounds(tgt.base.type.index)  # type: ignore[union-attr]
    ex.fail_if(guard, z3.Or(ierr, verr, iv < lo, iv > hi))  # type: ignore[operator]
    c, cerr = ex.eval(add)
    k: z3.ExprRef | None = None
    if cap is not None:
        k, _ = ex.eval(cap)
    elif cap_lt is not None:
        kv, _ = ex.eval(cap_lt)
        k = kv - 1  # type: ignore[operator]
    # (not gated by the body's earlier errors: a row with an error fails the whole step, and
    # the gate would read the components those errors read)
    ex.accums.append(Accumulation(tgt.base.var, iv, c, k, guard))  # type: ignore[arg-type, union-attr]


def loop(ex: "_Exec", st: ir.For, guard: z3.BoolRef) -> None:
    """`for i in R { body }`: every row through the body at once (see the module doc)."""
    plan = ex.enc.counters
    assert plan is not None
    enc = ex.enc
    if any(r.param for r in ex.rows.values()):  # type: ignore[attr-defined]
        raise Unsupported("a for loop over the counted range in an action with a parameter over it")
    accumulated = check_loop(enc, st)
    row = plan.new_row()
    saved = (dict(ex.vals), ex.alive, ex.error, dict(ex.locals), ex.accums, ex.row_errors)
    ex.alive, ex.error, ex.accums, ex.row_errors = z3.BoolVal(True), z3.BoolVal(False), [], []
    ex.rows[st.binder.id] = row
    try:
        ex.block(st.body, guard)
    finally:
        del ex.rows[st.binder.id]
    # some row fails: the disjunction of every error condition, each met by some row (an
    # error condition gated by the ones before it adds no row a disjunction misses)
    errs, accums = [z3.simplify(e) for e in ex.row_errors], ex.accums
    changed = [vi for vi, v in ex.vals.items() if not _same(v, saved[0][vi])]
    if changed:
        raise Unsupported(f"a for loop over the counted range writing {enc.model.vars[changed[0]].name} "
                          "outside its rows")
    ex.vals, ex.alive, ex.error, ex.locals, ex.accums, ex.row_errors = saved  # type: ignore[assignment]
    fails = [_exists_row(ex, split(ex, [e], row, "an error in the loop"), row) for e in errs if not z3.is_false(e)]
    if fails:
        ex.fail_if(z3.BoolVal(True), z3.Or(*fails))
    # the rows' new values: one linear map per written group
    new_counts = dict(ex.counts)
    written = sorted({plan.group_of[k] for k in row.vars if not row.cur[k].eq(row.vars[k])})
    for g in written:
        fin, qk = plan.fin[g], plan.sym[g]
        nf = len(fin)
        terms = [row.cur[k] for k in fin] + ([row.cur[qk]] if qk is not None else [])
        cases = split(ex, terms, row, "a row's new value", default=g)
        for w in plan.values[g]:
            def sources(f, w: tuple[int, ...] = w) -> z3.ExprRef:  # type: ignore[no-untyped-def]
                """f(hit, piece) summed over the pieces that may land at w, by the cases."""
                def per_case(hg: int, imgs: list[list[z3.ExprRef]]) -> z3.ExprRef:
                    parts = []
                    for h, im in zip(plan.values[hg], imgs):
                        for pc in pieces(plan, ex.counts, hg, h, im, row, shift_at=nf if qk is not None else None):
                            hit = z3.simplify(_and(pc.cond, *[a == plan.value(k, b)  # type: ignore[operator]
                                                                for a, b, k in zip(pc.terms[:nf], w, fin)]))
                            if not z3.is_false(hit):
                                parts.append(f(hit, pc))
                    return _sum(parts)
                return _by_cases(cases, per_case)
            if qk is None:
                new_counts[(g, w)] = z3.If(guard, sources(lambda hit, pc: pc.count if z3.is_true(hit)
                                                          else z3.If(hit, pc.count, 0)), ex.counts[(g, w)])
                continue
            arr, n0, n1 = symvalue.image(plan, g, w, sources)
            for key, new in (((g, w), arr), (symvalue.m0(g, w), n0), (symvalue.m1(g, w), n1)):
                new_counts[key] = z3.If(guard, new, ex.counts[key])
    # accumulations into arrays over fixed ranges
    for vi in sorted(accumulated):
        _apply_accumulations(ex, vi, [a for a in accums if a.var == vi], row)
    ex.counts = new_counts


def _same(a: object, b: object) -> bool:
    if isinstance(a, dict):
        return all(_same(a[k], b[k]) for k in a)  # type: ignore[index]
    return a is b or a.eq(b)  # type: ignore[union-attr]


def _apply_accumulations(ex: "_Exec", vi: int, accs: list[Accumulation], row: Row) -> None:
    plan = ex.enc.counters
    assert plan is not None
    var = ex.enc.model.vars[vi]
    t = var.type
    assert isinstance(t, ir.ArrayType)
    if not accs:
        return
    if not ir.is_scalar(t.elem) or isinstance(t.elem, ir.BoolType):
        raise Unsupported(f"an accumulation into {var.name}, not a one-dimensional int array")
    rng = ex.enc.constant_range(t.index)
    if rng is None:
        raise Unsupported(f"an accumulation into {var.name}, an array over a symbolic range")
    saturating = [a for a in accs if a.cap is not None]
    if saturating and (len(accs) > 1):
        raise Unsupported(f"several accumulations into {var.name}, one of them saturating")
    cap = saturating[0].cap if saturating else None
    if cap is not None and _deps([cap], row):
        raise Unsupported(f"a saturating accumulation into {var.name} whose cap depends on the row")
    lo, hi = ex.enc.bounds(t.elem)  # type: ignore[arg-type]
    arr = ex.vals[vi]
    signs: set[int] = set()
    totals: dict[int, list[z3.ExprRef]] = {s: [] for s in rng}
    for a in accs:
        cases = split(ex, [a.guard, a.index, a.add], row, f"an accumulation into {var.name}")
        for s in rng:
            def amount(g: int, imgs: list[list[z3.ExprRef]], s: int = s) -> z3.ExprRef:
                parts = []
                for h, im in zip(plan.values[g], imgs):
                    for pc in pieces(plan, ex.counts, g, h, im, row):
                        gd, ix, c = pc.terms
                        hit = z3.simplify(_and(pc.cond, gd, ix == s))  # type: ignore[operator]
                        if z3.is_false(hit):
                            continue
                        if not z3.is_int_value(c):
                            raise Unsupported(f"an accumulation into {var.name} whose addend the row does not fix")
                        n = c.as_long()  # type: ignore[union-attr]
                        if n:
                            signs.add(1 if n > 0 else -1)
                            parts.append(z3.If(hit, n * pc.count, 0))
                return _sum(parts)
            totals[s].append(_by_cases(cases, amount))
    if len(signs) > 1:
        raise Unsupported(f"an accumulation into {var.name} with addends of both signs (the order of the rows "
                          "would decide a range error)")
    new = arr
    for s in rng:
        old = z3.Select(arr, s)  # type: ignore[arg-type]
        k = z3.simplify(_sum(totals[s]))  # type: ignore[arg-type]
        if z3.is_int_value(k) and k.as_long() == 0:  # type: ignore[attr-defined]
            continue
        if cap is None:
            nv = old + k
            ex.fail_if(z3.BoolVal(True), z3.Or(nv < lo, nv > hi))
        else:
            top = cap + 1  # type: ignore[operator]
            nv = z3.If(old <= cap, z3.If(old + k <= top, old + k, top), old)
            ex.fail_if(z3.BoolVal(True), z3.And(old <= cap, k >= 1, nv > hi))
        new = z3.Store(new, s, nv)  # type: ignore[arg-type]
    ex.vals[vi] = new


def choose(ex: "_Exec", sym: ir.Symbol, row: Row) -> z3.BoolRef:
    """An action's parameter `i: R` after its body: some row holds the value the body read
    (the constants of `row`), and that row moves to the value the body wrote. Returns the
    guard; updates the counters."""
    plan = ex.enc.counters
    assert plan is not None
    written = [k for k in row.vars if not row.cur[k].eq(row.vars[k])]
    deps = _deps([ex.alive, *[row.cur[k] for k in written]], row) | set(written)
    groups = {plan.group_of[k] for k in deps}
    if len(groups) > 1:
        raise Regroup(deps, f"action parameter {sym.name}")
    if not groups:
        return plan.size() >= 1  # some row to choose
    g = groups.pop()
    ks = plan.fin[g]
    u = [row.vars[k] for k in ks]
    new = [row.cur[k] for k in ks]

    def at(vals: Sequence[z3.ExprRef], h: tuple[int, ...]) -> z3.BoolRef:
        return z3.And(*[a == plan.value(k, b) for a, b, k in zip(vals, h, ks)])  # type: ignore[union-attr]

    qk = plan.sym[g]
    if qk is not None:  # the chosen row's value x is the parameter's row constant (symvalue.py)
        ux, nx = row.vars[qk], row.cur[qk]
        held = z3.Or(*[z3.And(at(u, h), z3.Select(ex.counts[(g, h)], ux) >= 1) for h in plan.values[g]])
        if written:
            for h in plan.values[g]:
                off, on = at(u, h), at(new, h)
                q = z3.Int(f"row!q{next(counter_plan._serial)}")
                ex.counts[(g, h)] = z3.Lambda([q], z3.Select(ex.counts[(g, h)], q) - z3.If(z3.And(off, q == ux), 1, 0)
                                              + z3.If(z3.And(on, q == nx), 1, 0))
                n0, n1 = symvalue.m0(g, h), symvalue.m1(g, h)
                ex.counts[n0] = ex.counts[n0] - z3.If(off, 1, 0) + z3.If(on, 1, 0)
                ex.counts[n1] = ex.counts[n1] - z3.If(off, ux, 0) + z3.If(on, nx, 0)
        return held
    held = z3.Or(*[z3.And(at(u, h), ex.counts[(g, h)] >= 1) for h in plan.values[g]])
    if written:
        for h in plan.values[g]:
            ex.counts[(g, h)] = ex.counts[(g, h)] - z3.If(at(u, h), 1, 0) + z3.If(at(new, h), 1, 0)
    return held

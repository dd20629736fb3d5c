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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.param import symvalue
from gpcheck.checker.engines.param.extract import Unsupported
from gpcheck.checker.engines.smt.terms import subterms

if TYPE_CHECKING:
    from gpcheck.checker.engines.param.encode import ParamEncoder, PState, _Exec

MAX_GROUP_VALUES = 400  # value tuples of one group (counters per group)
MAX_COMPONENT_VALUES = 32  # values of one row component
MAX_CASES = 64  # assignments of the finite scalars a row computation is split on
_serial = itertools.count()


def reset_names() -> None:
    """Number the counters' fresh names (`cc!n!k`, `row!n`) from zero again, as
    encode.reset_names does the encoder's (NOTE(fresh-context))."""
    global _serial
    _serial = itertools.count()
    symvalue.reset_names()


class Regroup(Unsupported):
    """Components read jointly: their groups must be merged (the encoder settles the groups
    before use; one escaping later is `unknown`, never a wrong answer)."""

    def __init__(self, comps: set[int], what: str) -> None:
        super().__init__(f"{what} reads several row components jointly that the counter groups keep apart")
        self.comps = comps


@dataclass
class Component:
    """One R-indexed array at fixed other indices (`sv[0][i]`), a column of the rows."""

    var: int
    at: tuple[int, ...]  # the indices at the array chain's positions other than R's
    values: tuple[int, ...] | None  # None: a range that grows with the constants (`span`)
    boolean: bool
    text: str  # `sv[0]` (R's position left out)
    span: tuple[z3.ArithRef, z3.ArithRef] | None = None  # (lo, hi) of a symbolic-valued component


@dataclass
class Row:
    """A symbolic row: one fresh constant per component, and its current (written) value."""

    vars: dict[int, z3.ExprRef]
    cur: dict[int, z3.ExprRef] = field(default_factory=dict)
    param: bool = False  # an action's parameter (one row chosen), not a loop's or fold's

    def written(self) -> bool:
        return any(not self.cur[k].eq(self.vars[k]) for k in self.vars)

    def __post_init__(self) -> None:
        self.cur = dict(self.vars)
        self.ids = {v.get_id(): k for k, v in self.vars.items()}


class CounterPlan:
    """The counted range, its components and their groups."""

    def __init__(self, enc: "ParamEncoder") -> None:
        self.enc = enc
        model = enc.model
        found: dict[str, list[tuple[ir.Var, int, list[ir.Type]]]] = {}
        for v in model.vars:
            chain: list[ir.Type] = []
            t = v.type
            while isinstance(t, ir.ArrayType):
                chain.append(t.index)
                t = t.elem
            for pos, it in enumerate(chain):
                if enc.constant_range(it) is None:
                    lo, hi = enc.bounds(it)
                    from gpcheck.checker.engines.param.encode import range_key
                    found.setdefault(range_key(lo, hi), []).append((v, pos, chain))
        if len(found) != 1:
            raise Unsupported("counter abstraction needs exactly one symbolic index range"
                              + (f" (found {len(found)})" if found else ""))
        self.key, uses = next(iter(found.items()))
        self.comps: list[Component] = []
        self.vars: dict[int, tuple[int, list[ir.Type]]] = {}  # var -> (R position, index chain)
        for v, pos, chain in uses:
            if v.index in self.vars:
                raise Unsupported(f"{v.name}: the counted range indexes it twice")
            self.lo, self.hi = enc.bounds(chain[pos])
            others = []
            for p, it in enumerate(chain):
                if p != pos:
                    r = enc.constant_range(it)
                    if r is None:
                        raise Unsupported(f"{v.name}: a counted array with a second symbolic index range")
                    others.append((p, it, r))
            leaf = v.type
            while isinstance(leaf, ir.ArrayType):
                leaf = leaf.elem
            span = None
            if isinstance(leaf, ir.BoolType):
                values: tuple[int, ...] | None = (0, 1)
            elif isinstance(leaf, ir.EnumType):
                values = tuple(range(len(leaf.members)))
            elif isinstance(leaf, ir.IntType) and leaf.bounded and enc.constant_range(leaf) is not None:
                values = tuple(enc.constant_range(leaf))  # type: ignore[arg-type]
            elif isinstance(leaf, ir.IntType) and leaf.bounded:
                values, span = None, enc.bounds(leaf)  # NOTE(symbolic-values): checker/engines/param/symvalue.py
            else:
                raise Unsupported(f"{v.name}: a counted array whose elements' range is not fixed "
                                  "(it grows with the constants)")
            if values is not None and len(values) > MAX_COMPONENT_VALUES:
                raise Unsupported(f"{v.name}: a counted array with {len(values)} element values")
            init = enc.pm.inits[v.index].get(())
            if init is None or not z3.is_int_value(z3.simplify(init)):
                raise Unsupported(f"{v.name}: a counted array without one fixed initial value")
            self.vars[v.index] = (pos, chain)
            for at in itertools.product(*[r for _, _, r in others]):
                text = v.name
                k = 0
                for p, it in enumerate(chain):
                    if p == pos:
                        continue
                    shown = ir.format_scalar(it, at[k])  # type: ignore[arg-type]
                    text += f"[{str(shown).lower() if isinstance(shown, bool) else shown}]"
                    k += 1
                self.comps.append(Component(v.index, tuple(at), values, isinstance(leaf, ir.BoolType), text, span))
        self.index = {(c.var, c.at): k for k, c in enumerate(self.comps)}
        self.init_value = [z3.simplify(enc.pm.inits[c.var][()]).as_long() for c in self.comps]  # type: ignore[union-attr]
        self.groups: list[list[int]] = [[k] for k in range(len(self.comps))]
        self.markers: dict[int, Row] = {}  # candidate row markers in use (row_formula)
        self._rebuild()

    # -- groups ---------------------------------------------------------------------------

    def _rebuild(self) -> None:
        self.group_of = {k: g for g, ks in enumerate(self.groups) for k in ks}
        self.values: list[list[tuple[int, ...]]] = []  # the tuples of the finite components (`fin`)
        self.fin: list[list[int]] = []  # a group's components with fixed values
        self.sym: list[int | None] = []  # its one symbolic-valued component (symvalue.py)
        for ks in self.groups:
            syms = [k for k in ks if self.comps[k].values is None]
            if len(syms) > 1:
                names = ", ".join(self.comps[k].text for k in syms)
                raise Unsupported(f"counter abstraction: the rows of {names}, each with a value range that grows "
                                  "with the constants, are read jointly")
            self.sym.append(syms[0] if syms else None)
            self.fin.append([k for k in ks if self.comps[k].values is not None])
            ks = self.fin[-1]
            n = 1
            for k in ks:
                n *= len(self.comps[k].values)  # type: ignore[arg-type]
            if n > MAX_GROUP_VALUES:
                names = ", ".join(self.comps[k].text for k in ks)
                raise Unsupported(f"counter abstraction: the rows of {names} (read jointly) take {n} values, "
                                  f"more than {MAX_GROUP_VALUES}")
            self.values.append(list(itertools.product(*[self.comps[k].values for k in ks])))  # type: ignore[misc]

    def merge(self, comps: set[int]) -> None:
        gs = sorted({self.group_of[k] for k in comps})
        merged = sorted(k for g in gs for k in self.groups[g])
        self.groups = [ks for g, ks in enumerate(self.groups) if g not in gs] + [merged]
        self.groups.sort(key=lambda ks: ks[0])
        self._rebuild()

    def symbolic_values(self) -> bool:
        """Some group holds a component whose value range grows with the constants (symvalue.py)."""
        return any(k is not None for k in self.sym)

    def describe(self) -> str:
        """The groups in words (`(slot, prog), (sv[0], sv_prog[0])`)."""
        return ", ".join("(" + ", ".join(self.comps[k].text for k in ks) + ")" for ks in self.groups)

    # -- state terms ----------------------------------------------------------------------

    def size(self) -> z3.ArithRef:
        return z3.If(self.hi >= self.lo, self.hi - self.lo + 1, 0)  # type: ignore[return-value]

    def state(self, tag: str) -> dict:  # type: ignore[type-arg]
        """(g, h) -> C[h] per group and finite tuple; for a symbolic-valued group C_h is an
        array and its moments are at symvalue.m0/m1 (g, h, "M0"/"M1")."""
        out: dict = {}  # type: ignore[type-arg]
        for g in range(len(self.groups)):
            if self.sym[g] is not None:
                out.update(symvalue.state(self, g, tag))
            else:
                out.update({(g, h): z3.Int(f"{tag}#C{g}{_label(h)}") for h in self.values[g]})
        return out

    def rows(self, counts: dict, g: int, h: tuple[int, ...]) -> z3.ArithRef:  # type: ignore[type-arg]
        """The rows of group g with finite part h."""
        return counts[symvalue.m0(g, h)] if self.sym[g] is not None else counts[(g, h)]

    def array_keys(self, counts: dict) -> dict[str, list[str]]:  # type: ignore[type-arg]
        """The symbolic-valued groups' arrays' names -> their index key (instantiate.py)."""
        return {counts[(g, h)].decl().name(): [symvalue.key(self, g)]
                for g in range(len(self.groups)) if self.sym[g] is not None for h in self.values[g]
                if z3.is_const(counts[(g, h)])}

    def in_range(self, counts: dict) -> z3.BoolRef:  # type: ignore[type-arg]
        conds = []  # (in the order they were made before symvalue.py: NOTE(fresh-context))
        for g in range(len(self.groups)):
            if self.sym[g] is not None:
                conds += symvalue.in_range(self, counts, g)
            else:
                conds += [counts[(g, h)] >= 0 for h in self.values[g]]
        for g in range(len(self.groups)):
            conds.append(z3.Sum(*[self.rows(counts, g, h) for h in self.values[g]]) == self.size())
        return z3.And(*conds)

    def init(self, counts: dict) -> z3.BoolRef:  # type: ignore[type-arg]
        conds = []
        for g, ks in enumerate(self.groups):
            start = tuple(self.init_value[k] for k in self.fin[g])
            k = self.sym[g]
            if k is not None:
                conds += symvalue.init(self, counts, g, start, self.init_value[k])
                continue
            conds += [counts[(g, h)] == (self.size() if h == start else 0) for h in self.values[g]]
        return z3.And(*conds)

    def value(self, k: int, v: int) -> z3.ExprRef:
        return z3.BoolVal(bool(v)) if self.comps[k].boolean else z3.IntVal(v)

    def new_row(self) -> Row:
        n = next(_serial)
        return Row({k: (z3.Bool(f"cc!{n}!{k}") if c.boolean else z3.Int(f"cc!{n}!{k}"))
                    for k, c in enumerate(self.comps)})

    def comp_count(self, counts: dict, k: int, pred) -> z3.ArithRef:  # type: ignore[no-untyped-def]
        """The rows whose component k's value v satisfies `pred(v)` (a z3 bool or a Python bool)."""
        g = self.group_of[k]
        if self.sym[g] == k:
            raise Unsupported(f"{self.comps[k].text}: a count of the rows by a value whose range grows with the constants")
        j = self.fin[g].index(k)
        return _sum([z3.If(pred(h[j]), self.rows(counts, g, h), 0) for h in self.values[g]])  # type: ignore[misc]

    def joint(self, k: int, q: int) -> bool:
        return self.group_of[k] == self.group_of[q]

    def comp_sum(self, counts: dict, k: int, pred, q: int, where=None) -> z3.ArithRef:  # type: ignore[no-untyped-def]
        """Sum of component q over the rows whose component k satisfies `pred` (same group);
        with `where` (a value of q), the count of those rows whose q is that value."""
        g = self.group_of[k]
        if self.sym[g] == k:
            raise Unsupported(f"{self.comps[k].text}: a count of the rows by a value whose range grows with the constants")
        jk = self.fin[g].index(k)
        if self.sym[g] == q:  # sum_p p * C_h(p) is M1_h; the rows at a value w, C_h(w)
            return _sum([z3.If(pred(h[jk]), counts[symvalue.m1(g, h)] if where is None
                               else z3.Select(counts[(g, h)], where), 0) for h in self.values[g]])  # type: ignore[misc]
        jq = self.fin[g].index(q)
        parts = []
        for h in self.values[g]:
            if where is not None:
                if h[jq] == where:
                    parts.append(z3.If(pred(h[jk]), self.rows(counts, g, h), 0))
            elif h[jq]:
                parts.append(z3.If(pred(h[jk]), h[jq] * self.rows(counts, g, h), 0))
        return _sum(parts)


def _and(cond: z3.BoolRef, *xs: z3.BoolRef) -> z3.BoolRef:
    """`cond and xs`, without cond where it is true: a group without a symbolic-valued
    component builds the very terms it built before pieces existed (Z3 numbers terms in the
    order they are made, and its search follows the numbers: NOTE(fresh-context))."""
    return z3.And(*xs) if z3.is_true(cond) else z3.And(cond, *xs)  # type: ignore[return-value]


def _label(h: tuple[int, ...]) -> str:
    return "_" + "_".join(str(v) for v in h)


def _sum(parts: Sequence[z3.ArithRef]) -> z3.ArithRef:
    parts = [p for p in parts if not (z3.is_int_value(p) and p.as_long() == 0)]  # type: ignore[attr-defined]
    return z3.Sum(*parts) if parts else z3.IntVal(0)  # type: ignore[return-value]


def settle(enc: "ParamEncoder") -> None:
    """Merge groups until every action, property and constraint encodes (NOTE(counter-groups))."""
    plan = enc.counters
    assert plan is not None
    for _ in range(len(plan.comps) + 1):
        try:
            s, t = enc.state("plan."), enc.state("plan'.")
            enc.steps(s)
            for p in enc.model.invariants:
                enc.holds(p.expr, s)
            for tp in enc.model.transitions:
                enc.holds(tp.expr, s, t)
            return
        except Regroup as r:
            plan.merge(r.comps)
    raise Unsupported("counter groups did not settle")


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


def element(enc: "ParamEncoder", var: int, idx: Sequence[z3.ExprRef]) -> z3.ExprRef:
    """A counted array's element in a candidate: the component of the row a marker
    (`row_formula`) stands for, at the fixed other indices."""
    plan = enc.counters
    assert plan is not None
    pos, chain = plan.vars[var]
    row = plan.markers.get(idx[pos].get_id()) if len(idx) == len(chain) else None
    if row is None:
        raise Unsupported(f"{enc.model.vars[var].name}: a counted array read other than at a row")
    at = []
    for p, e in enumerate(idx):
        if p != pos:
            e = z3.simplify(e)
            if not z3.is_int_value(e):
                raise Unsupported(f"{enc.model.vars[var].name}: a counted array at a symbolic fixed index")
            at.append(e.as_long())  # type: ignore[attr-defined]
    k = plan.index.get((var, tuple(at)))
    if k is None:
        raise Unsupported(f"{enc.model.vars[var].name}: an index out of range")
    return row.vars[k]


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
        marker = z3.Int(f"row!{next(_serial)}")
        plan.markers[marker.get_id()] = row
        try:
            xs = [marker if v is None else z3.IntVal(v) for v in combo]
            body = body_of(xs)
        finally:
            del plan.markers[marker.get_id()]
        if _deps([body], Row({0: marker})):
            raise Unsupported("a candidate reading the row's index itself")
        cases = split_terms(enc, [z3.Not(body)], row, "a candidate over the rows")
        parts.append(exists_row(enc, counts, cases, row))
    broken = z3.Or(*parts)
    return broken if violation else z3.Not(broken)  # type: ignore[return-value]


# -- hooks of checker/engines/param/encode.py's _Exec ------------------------------------------------


def row_binder(ex: "_Exec", e: ir.Expr) -> Row | None:
    if isinstance(e, ir.LocalRef):
        return ex.rows.get(e.sym.id)
    return None


def read(ex: "_Exec", var: int, idx: list[ir.Expr]) -> tuple[z3.ExprRef, z3.BoolRef]:
    """`v[..][i][..]` at a row binder i: the row's component, chosen by the other indices."""
    plan = ex.enc.counters
    assert plan is not None
    pos, chain = plan.vars[var]
    name = ex.enc.model.vars[var].name
    if len(idx) != len(chain):
        raise Unsupported(f"{name}: a counted array used other than element by element")
    row = row_binder(ex, idx[pos])
    if row is None:
        raise Unsupported(f"{name} read at an index other than a `for`/fold binder or action parameter "
                          "over the counted range")
    conds, err = _other_indices(ex, idx, pos, chain)
    ks = [k for k, c in enumerate(plan.comps) if c.var == var]
    out = row.cur[ks[-1]]
    for k in reversed(ks[:-1]):
        out = z3.If(z3.And(*[a == b for a, b in zip(conds, plan.comps[k].at)]), row.cur[k], out)
    return out, err


def _other_indices(ex: "_Exec", idx: list[ir.Expr], pos: int, chain: list[ir.Type]
                   ) -> tuple[list[z3.ArithRef], z3.BoolRef]:
    terms: list[z3.ArithRef] = []
    errs: list[z3.BoolRef] = []
    for p, (e, t) in enumerate(zip(idx, chain)):
        if p == pos:
            continue
        v, err = ex.eval(e)
        lo, hi = ex.enc.bounds(t)
        terms.append(v)  # type: ignore[arg-type]
        errs += [err, v < lo, v > hi]  # type: ignore[list-item, operator]
    return terms, z3.simplify(z3.Or(*errs)) if errs else z3.BoolVal(False)


def write(ex: "_Exec", var: int, idx: list[ir.Expr], val: z3.ExprRef, guard: z3.BoolRef) -> None:
    """`v[..][i][..] = val` at a row binder i."""
    plan = ex.enc.counters
    assert plan is not None
    pos, chain = plan.vars[var]
    name = ex.enc.model.vars[var].name
    row = row_binder(ex, idx[pos]) if len(idx) == len(chain) else None
    if row is None:
        raise Unsupported(f"{name} written at an index other than a `for` binder or action parameter "
                          "over the counted range")
    conds, err = _other_indices(ex, idx, pos, chain)
    ex.fail_if(guard, err)
    for k, c in enumerate(plan.comps):
        if c.var == var:
            hit = z3.And(guard, *[a == b for a, b in zip(conds, c.at)])
            row.cur[k] = z3.If(hit, val, row.cur[k])


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
                q = z3.Int(f"row!q{next(_serial)}")
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

"""The counter abstraction's plan (NOTE(counter-groups), the method: checker/engines/param/counters.py):
which row components of a symbolic index range are counted together (groups, merged as reads
demand), their counters per value tuple, and reading and writing one row through them.
counters.py encodes the actions, loops and folds over this plan."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.param import symvalue
from gpcheck.checker.engines.param.extract import Unsupported
from gpcheck.checker.engines.param.symvalue import _label


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
                    from gpcheck.checker.engines.param.ranges import range_key
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


OWNERS: dict[int, "CounterPlan"] = {}  # row markers in use (counters.row_formula): the plan that made each


def element(enc: "ParamEncoder", var: int, idx: Sequence[z3.ExprRef]) -> z3.ExprRef:
    """A counted array's element in a candidate: the component of the row a marker
    (`row_formula`) stands for, at the fixed other indices."""
    plan = enc.counters
    assert plan is not None
    pos, chain = plan.vars[var]
    # the plan whose row_formula made the marker: a candidate's columns were built on the encoder
    # that mined it, and a proof core re-encodes it on another (NOTE(for-all-core))
    owner = OWNERS.get(idx[pos].get_id()) if len(idx) == len(chain) else None
    row = owner.markers.get(idx[pos].get_id()) if owner is not None else None
    if owner is None or row is None:
        raise Unsupported(f"{enc.model.vars[var].name}: a counted array read other than at a row")
    at = []
    for p, e in enumerate(idx):
        if p != pos:
            e = z3.simplify(e)
            if not z3.is_int_value(e):
                raise Unsupported(f"{enc.model.vars[var].name}: a counted array at a symbolic fixed index")
            at.append(e.as_long())  # type: ignore[attr-defined]
    k = owner.index.get((var, tuple(at)))
    if k is None:
        raise Unsupported(f"{enc.model.vars[var].name}: an index out of range")
    return row.vars[k]


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

"""The parameterised model as Z3 formulas: symbolic constants, arrays as SMT arrays.

A state maps each variable to one term: a scalar (Int for ints and enums, Bool), an SMT
array for an array (nested arrays for `[..] -> [..] -> T`), a dict of field terms for a
struct. Index ranges and value ranges are the affine terms `extract.ParamModel` recovered, so
one formula covers every size. An action runs symbolically as in checker/engines/smt/encode.py
(NOTE(step-semantics): a failing `require` disables, a modelling error stops the step), with:

- `all`/`any` over a range as quantifiers; their evaluation error must be provably absent
  inside an action (in a property an error only makes the property harder to prove);
- a `for` loop over a symbolic range as a parallel update: iteration i may write and read
  the loop's arrays only at index i (checked on the IR), so the loop is one `lambda` array
  per variable it writes; loops with `require` or scalar writes are unsupported;
- `sum`/`count` over a range that does not depend on the symbolic constants (at most
  FINITE_FOLD values) as the sum of its instances, whatever its body reads (the second
  round's aggregate lemmas, `(count i in 0..1: slot[i] == x)` with the slots fixed);
- `sum`/`count` over an array `a` (reading only `a[x]`) as a ghost counter kept exact by
  every store into `a` (a `for` loop writing `a` is unsupported), so `free + sum(held) ==
  SLOTS` stays linear;
- `count` inside an action over an interval its body cuts out of the binder's range (a
  conjunction of `k >= a`, `k < b`, `k != c` and guards without k) in closed form
  (`_Exec._interval_count`).

Anything else outside this fragment raises `Unsupported` (the verdict is then `unknown`)."""

from __future__ import annotations

from typing import Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.param.extract import ParamModel, Unsupported
from gpcheck.checker.engines.param.ranges import range_key
from gpcheck.checker.engines.param import symstate
from gpcheck.checker.engines.param.symstate import (
    FINITE_FOLD,
    Ghost,
    PState,
    Val,
    _as_int,
    _eq_val,
    _fresh_int,
    range_binder,
    reset_names,
)
from gpcheck.checker.engines.param.execute import _Exec


class ParamEncoder:
    def __init__(self, pm: ParamModel, counters: bool = False,
                 relax: "dict[str, z3.BoolRef] | None" = None) -> None:
        """With `counters`, the arrays over the model's symbolic index range are encoded by
        counters per row value (checker/engines/param/counters.py), not as SMT arrays. `relax`
        (NOTE(assumptions)): an indicator literal per model assumption; each guard and
        initial-state filter of that assumption then holds only where its literal is true
        (a proof core, checker/engines/param/proofcore.py)."""
        from gpcheck.checker.engines.param.counter_plan import CounterPlan, settle

        self.relax = dict(relax or {})
        self.pm = pm
        self.model = pm.model
        self.ghosts: dict[int, Ghost] = {}
        self.facts = [pm.sizes_ok()]
        self._cases: dict[str, list[z3.ExprRef]] = {}  # state scalars with a small fixed domain
        self.counters: CounterPlan | None = None
        if counters:
            self.counters = CounterPlan(self)
        self._scan_ghosts()
        if counters:
            settle(self)

    def counted(self, vi: int) -> bool:
        """Variable `vi` is encoded by counters (no term in a state's `vals`)."""
        return self.counters is not None and vi in self.counters.vars

    def case_domain(self, name: str) -> list[z3.ExprRef] | None:
        """The values of the state scalar named `name` when its domain is small and fixed."""
        return self._cases.get(name)

    def probe(self, properties: Sequence[str]) -> None:
        """Encode every action and the named properties once: raises Unsupported if any is
        outside the fragment (so the caller can try the counter abstraction instead)."""
        s, t = self.state("probe."), self.state("probe'.")
        self.steps(s)
        for p in self.model.invariants:
            if p.name in properties:
                self.holds(p.expr, s)
        for tp in self.model.transitions:
            if tp.name in properties:
                self.holds(tp.expr, s, t)

    # -- types -------------------------------------------------------------------------------

    def bounds(self, t: ir.Type) -> tuple[z3.ArithRef, z3.ArithRef]:
        if isinstance(t, ir.IntType):
            if not t.bounded:
                raise Unsupported("an unbounded index")
            return self.pm.num(t, "lo", t.lo), self.pm.num(t, "hi", t.hi)  # type: ignore[arg-type]
        if isinstance(t, ir.EnumType):
            return z3.IntVal(0), z3.IntVal(len(t.members) - 1)
        raise Unsupported(f"index of type {t}")

    def sort(self, t: ir.Type) -> z3.SortRef:
        if isinstance(t, ir.BoolType):
            return z3.BoolSort()
        if isinstance(t, (ir.IntType, ir.EnumType)):
            return z3.IntSort()
        if isinstance(t, ir.ArrayType):
            if isinstance(t.elem, ir.StructType):
                raise Unsupported("an array of structs")
            self.bounds(t.index)
            return z3.ArraySort(z3.IntSort(), self.sort(t.elem))
        raise Unsupported(f"type {t}")

    def in_type(self, t: ir.Type, v: Val) -> z3.BoolRef:
        """`v` holds a value of type `t` (array elements inside the index range)."""
        if isinstance(t, ir.BoolType):
            return z3.BoolVal(True)
        if isinstance(t, ir.IntType):
            conds = []
            if t.lo is not None:
                conds.append(v >= self.pm.num(t, "lo", t.lo))  # type: ignore[operator]
            if t.hi is not None:
                conds.append(v <= self.pm.num(t, "hi", t.hi))  # type: ignore[operator]
            return z3.And(*conds) if conds else z3.BoolVal(True)
        if isinstance(t, ir.EnumType):
            return z3.And(v >= 0, v < len(t.members))  # type: ignore[operator]
        if isinstance(t, ir.ArrayType):
            lo, hi = self.bounds(t.index)
            i = range_binder("i", lo, hi)
            inner = self.in_type(t.elem, z3.Select(v, i))  # type: ignore[arg-type]
            if z3.is_true(inner):
                return z3.BoolVal(True)
            return z3.ForAll([i], z3.Implies(z3.And(lo <= i, i <= hi), inner))
        if isinstance(t, ir.StructType):
            return z3.And(*[self.in_type(ft, v[f]) for f, ft in t.fields])  # type: ignore[index]
        raise Unsupported(f"type {t}")

    # -- states ------------------------------------------------------------------------------

    def state(self, tag: str) -> PState:
        vals: dict[int, Val] = {}
        for v in self.model.vars:
            if self.counted(v.index):
                continue
            vals[v.index] = self._var_term(f"{tag}{v.name}", v.type)
            if self.counters is not None and ir.is_scalar(v.type):
                dom = self._small_domain(v.type)
                if dom is not None:
                    self._cases[f"{tag}{v.name}"] = dom
        # a ghost's Z3 name is its position, never its key (the Fold node's id(), a memory
        # address that differs between processes: NOTE(term-names) in checker/engines/smt/session.py)
        ghosts = {k: z3.Int(f"{tag}ghost{n}") for n, k in enumerate(self.ghosts)}
        counts = self.counters.state(tag) if self.counters is not None else {}
        return PState(vals, ghosts, counts)

    def _small_domain(self, t: ir.Type) -> list[z3.ExprRef] | None:
        if isinstance(t, ir.BoolType):
            return [z3.BoolVal(False), z3.BoolVal(True)]
        if isinstance(t, ir.EnumType):
            return [z3.IntVal(k) for k in range(len(t.members))]
        if isinstance(t, ir.IntType) and t.bounded:
            r = self.constant_range(t)
            if r is not None and len(r) <= 16:
                return [z3.IntVal(k) for k in r]
        return None

    def _var_term(self, name: str, t: ir.Type) -> Val:
        if isinstance(t, ir.StructType):
            return {f: self._var_term(f"{name}.{f}", ft) for f, ft in t.fields}
        return z3.Const(name, self.sort(t))

    def in_range(self, s: PState) -> z3.BoolRef:
        conds = [self.in_type(v.type, s.vals[v.index]) for v in self.model.vars if v.index in s.vals]
        if self.counters is not None:
            conds.append(self.counters.in_range(s.counts))
        return z3.And(*conds)

    def init(self, s: PState) -> z3.BoolRef:
        conds = []
        for v in self.model.vars:
            if v.index in s.vals:
                conds.append(self._init_of(v.type, s.vals[v.index], self.pm.inits[v.index], ()))
        if self.counters is not None:
            conds.append(self.counters.init(s.counts))
        for k, g in self.ghosts.items():
            var = self.model.vars[g.var]
            init = self._init_value(var)
            n = z3.If(g.hi >= g.lo, g.hi - g.lo + 1, 0)
            if not g.exact_init:  # a bound that contains the true start (`_ghost`)
                if g.count:
                    conds.append(z3.And(0 <= s.ghosts[k], s.ghosts[k] <= n))
                continue
            f_init = z3.simplify(_as_int(z3.substitute(g.body, (z3.Select(g.arr, g.binder), init))))
            conds.append(s.ghosts[k] == (0 if z3.is_int_value(f_init) and f_init.as_long() == 0 else n * f_init))
        # NOTE(assumptions): an initial state outside a state assumption does not exist
        for a in self.model.assumptions:
            if a.kind == "state" and a.expr is not None:
                h = self.holds(a.expr, s)
                conds.append(z3.Implies(self.relax[a.name], h) if a.name in self.relax else h)
        return z3.And(*conds)

    def _init_value(self, var: ir.Var) -> z3.ExprRef:
        init = self.pm.inits[var.index][()]
        if init is None:
            raise Unsupported(f"{var.name}: a ghost counter over an array with any initial value")
        t = var.type
        while isinstance(t, ir.ArrayType):
            t = t.elem
        return z3.BoolVal(bool(z3.simplify(init).as_long())) if isinstance(t, ir.BoolType) else init  # type: ignore[union-attr]

    def _init_of(self, t: ir.Type, term: Val, inits: dict[tuple[str, ...], z3.ArithRef | None],
                 path: tuple[str, ...]) -> z3.BoolRef:
        if isinstance(t, ir.StructType):
            return z3.And(*[self._init_of(ft, term[f], inits, path + (f,)) for f, ft in t.fields])  # type: ignore[index]
        init = inits[path]
        if init is None:
            return self.in_type(t, term)
        leaf = t
        while isinstance(leaf, ir.ArrayType):
            leaf = leaf.elem
        value: z3.ExprRef = (z3.BoolVal(bool(z3.simplify(init).as_long())) if isinstance(leaf, ir.BoolType)  # type: ignore[union-attr]
                             else init)
        return term == _const_array(t, value, self)  # type: ignore[operator]

    def equal(self, s: PState, t: PState) -> z3.BoolRef:
        conds = [_eq_val(s.vals[i], t.vals[i]) for i in s.vals]
        conds += [s.ghosts[k] == t.ghosts[k] for k in s.ghosts]
        conds += [s.counts[k] == t.counts[k] for k in s.counts]
        return z3.And(*conds)

    # -- properties ----------------------------------------------------------------------------

    def holds(self, e: ir.Expr, s: PState, t: PState | None = None) -> z3.BoolRef:
        """`e` holds in `s` (on `s -> t`); an evaluation error counts as false."""
        ex = _Exec(self, s, post=t, in_action=False)
        v, err = ex.eval(e)
        return z3.And(z3.Not(err), v)  # type: ignore[arg-type]

    def fails(self, e: ir.Expr, s: PState, t: PState | None = None) -> z3.BoolRef:
        """Evaluating `e` in `s` (on `s -> t`) fails with a modelling error: a `range`
        violation (NOTE(predicate-errors) in spec/ir.py)."""
        _, err = _Exec(self, s, post=t, in_action=False).eval(e)
        return err

    # -- actions -------------------------------------------------------------------------------

    def trans(self, s: PState, t: PState) -> z3.BoolRef:
        """Some enabled action instance takes s to t (s inside the constraints)."""
        return z3.Or(*[b for _, b in self.branches(s, t)])

    def branches(self, s: PState, t: PState) -> list[tuple[str, z3.BoolRef]]:
        """Per action: some enabled instance of it takes s to t (s inside the constraints)."""
        return [(name, z3.And(guard, self.equal(t, nxt))) for name, guard, nxt in self.steps(s)]

    def steps(self, s: PState, errors: list[tuple[str, z3.BoolRef]] | None = None,
              params: dict[str, list[z3.ExprRef]] | None = None) -> list[tuple[str, z3.BoolRef, PState]]:
        """Per action: (name, its guard, the next state as terms over `s` and the action's
        parameters). Checked one at a time, each action brings only its own index terms
        (checker/engines/param/induct.py), and the next state can be substituted into a goal instead
        of equated with a state (no equality between arrays and lambdas for Z3 to decide).
        The guard excludes an instance that fails with a modelling error; with `errors`, each
        action that can fail adds (name, some instance fails in `s`) there (`errors`); with
        `params`, each action's parameter constants (those its guard and error are over) go
        there by its name, None where a parameter is a counted row (checker/engines/param/beyond.py)."""
        cons = [self.holds(c.expr, s) for c in self.model.constraints]
        out: list[tuple[str, z3.BoolRef, PState]] = []
        for a in self.model.actions:
            ex = _Exec(self, s, post=None, in_action=True)
            dom = []
            if params is not None:
                params[a.name] = []
            for p in a.params:
                if isinstance(p.type, ir.BoolType):
                    x: z3.ExprRef = z3.Bool(f"{a.name}.{p.name}!{next(symstate._fresh)}")
                else:
                    x = _fresh_int(f"{a.name}.{p.name}")
                    lo, hi = self.bounds(p.type)
                    dom.append(z3.And(lo <= x, x <= hi))
                if params is not None and params[a.name] is not None:
                    params[a.name].append(x)  # type: ignore[union-attr]
                if self._counted_range(p.type):
                    if params is not None:
                        params[a.name] = None  # type: ignore[assignment]
                    if any(getattr(r, "param", False) for r in ex.rows.values()):
                        raise Unsupported(f"{a.name}: two parameters over the counted range (the same row or two)")
                    row = self.counters.new_row()  # type: ignore[union-attr]
                    row.param = True
                    ex.rows[p.id] = row
                    continue  # one row chosen: checker/engines/param/counters.py `choose`
                ex.locals[p.id] = x
            ex.ranges += dom  # what an error proof inside the body may assume
            ex.block(a.body, z3.BoolVal(True))
            rows = self._choose(ex, a)
            if errors is not None and not z3.is_false(z3.simplify(ex.error)):
                errors.append((a.name, z3.And(*cons, *dom, ex.error, *rows)))
            if z3.is_false(z3.simplify(ex.alive)):
                continue
            out.append((a.name, z3.And(*cons, *dom, ex.alive, *rows), PState(ex.vals, ex.ghosts, ex.counts)))
        return out

    def errors(self, s: PState) -> list[tuple[str, z3.BoolRef]]:
        """Per action that can fail: some instance of it fails with a modelling error in `s`
        (inside the constraints; every `require` before the error held: NOTE(step-semantics)).
        `steps` leaves such instances out; a for-all run's `range` result must show them
        unreachable (NOTE(for-all-errors) in checker/engines/param/errors.py)."""
        out: list[tuple[str, z3.BoolRef]] = []
        self.steps(s, out)
        return out

    def _counted_range(self, t: ir.Type) -> bool:
        """`t` is the index range the counter abstraction counts rows of."""
        if self.counters is None or not isinstance(t, ir.IntType) or not t.bounded:
            return False
        return range_key(*self.bounds(t)) == self.counters.key

    def _choose(self, ex: "_Exec", a: ir.Action) -> list[z3.BoolRef]:
        from gpcheck.checker.engines.param.counters import choose

        return [choose(ex, p, ex.rows.pop(p.id)) for p in a.params if p.id in ex.rows]

    def substitution(self, t: PState, nxt: PState) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
        """Pairs (t's term, nxt's term) for z3.substitute: t replaced by nxt."""
        pairs: list[tuple[z3.ExprRef, z3.ExprRef]] = []

        def go(a: Val, b: Val) -> None:
            if isinstance(a, dict):
                for k in a:
                    go(a[k], b[k])  # type: ignore[index]
            elif not a.eq(b):  # type: ignore[union-attr]
                pairs.append((a, b))  # type: ignore[arg-type]

        for i in t.vals:
            go(t.vals[i], nxt.vals[i])
        pairs += [(t.ghosts[k], nxt.ghosts[k]) for k in t.ghosts]
        pairs += [(t.counts[k], nxt.counts[k]) for k in t.counts if not t.counts[k].eq(nxt.counts[k])]
        return pairs

    # -- ghosts ---------------------------------------------------------------------------------

    def _scan_ghosts(self) -> None:
        exprs = [p.expr for p in self.model.invariants] + [p.expr for p in self.model.transitions]
        for e in exprs:
            for sub in ir.walk_expr(e):
                if isinstance(sub, ir.Fold) and sub.kind in (ir.FoldKind.SUM, ir.FoldKind.COUNT):
                    if self._counted_range(sub.binder.type):
                        continue  # a count over the counted rows: checker/engines/param/counters.py
                    if self.constant_range(sub.binder.type) is None:  # a constant range is unrolled
                        self.ghosts[id(sub)] = self._ghost(sub)

    def constant_range(self, t: ir.Type) -> range | None:
        """The values of index type `t` when they do not depend on the symbolic constants
        (and are at most FINITE_FOLD), else None."""
        lo, hi = self.bounds(t)
        slo, shi = z3.simplify(lo), z3.simplify(hi)
        if z3.is_int_value(slo) and z3.is_int_value(shi) and shi.as_long() - slo.as_long() < FINITE_FOLD:
            return range(slo.as_long(), shi.as_long() + 1)
        return None

    def _ghost(self, f: ir.Fold) -> Ghost:
        reads = [x for x in ir.walk_expr(f.body) if isinstance(x, ir.VarRef)]
        vars_read = {x.var for x in reads}
        if len(vars_read) != 1:
            raise Unsupported("a sum/count that reads other than one array")
        vi = vars_read.pop()
        var = self.model.vars[vi]
        if not isinstance(var.type, ir.ArrayType) or not ir.is_scalar(var.type.elem):
            raise Unsupported("a sum/count over other than a one-dimensional array")
        for x in ir.walk_expr(f.body):
            if isinstance(x, ir.Index) and isinstance(x.base, ir.VarRef):
                if not (isinstance(x.index, ir.LocalRef) and x.index.sym.id == f.binder.id):
                    raise Unsupported("a sum/count reading its array other than at the binder")
        if any(isinstance(x, ir.VarRef) and x.primed for x in reads):
            raise Unsupported("a sum/count over the next state")
        if any(isinstance(x, ir.LocalRef) and x.sym.id != f.binder.id for x in ir.walk_expr(f.body)):
            raise Unsupported("a sum/count whose body reads an outer binder (a ghost counter per value)")
        lo, hi = self.bounds(f.binder.type)
        x = _fresh_int(f.binder.name)
        arr = z3.Const(f"ghostarr!{next(symstate._fresh)}", self.sort(var.type))
        ex = _Exec(self, PState({vi: arr}), post=None, in_action=False)
        ex.locals[f.binder.id] = x
        v, err = ex.eval(f.body)
        body = z3.If(v, 1, 0) if f.kind is ir.FoldKind.COUNT else v  # type: ignore[arg-type]
        # the initial value is (hi - lo + 1) * f(init) (`init`) only when f reads the binder just to
        # index the array; `count k in 0..N-1: a[k] == 0 and k < 3` starts at min(N, 3), not N or 0
        # (it was proved `!= 3` for all N, false at N = 4): such a ghost starts anywhere in 0..n
        # (a count) or anywhere (a sum), which contains the true start; its updates stay exact
        from gpcheck.checker.engines.smt.terms import subterms

        elem = z3.Const(f"ghostelem!{next(symstate._fresh)}", z3.Select(arr, x).sort())  # type: ignore[arg-type]
        exact = not any(t.eq(x) for t in subterms([z3.substitute(body, (z3.Select(arr, x), elem))]))  # type: ignore[arg-type]
        return Ghost(id(f), vi, lo, hi, x, body, arr, z3.simplify(err), exact,  # type: ignore[arg-type]
                     f.kind is ir.FoldKind.COUNT)


def _const_array(t: ir.Type, value: z3.ExprRef, enc: ParamEncoder) -> z3.ExprRef:
    if isinstance(t, ir.ArrayType):
        return z3.K(z3.IntSort(), _const_array(t.elem, value, enc))
    return value



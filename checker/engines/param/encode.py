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

import itertools
from dataclasses import dataclass, field
from typing import Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.param.extract import ParamModel, Unsupported
from gpcheck.checker.engines.smt.session import trusted
from gpcheck.checker.engines.param.ranges import range_key

NEVER_STEPS = 16_000_000  # Z3 steps to show an error branch of the encoding impossible (about 2 s)

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


class ParamEncoder:
    def __init__(self, pm: ParamModel, counters: bool = False) -> None:
        """With `counters`, the arrays over the model's symbolic index range are encoded by
        counters per row value (checker/engines/param/counters.py), not as SMT arrays."""
        from gpcheck.checker.engines.param.counter_plan import CounterPlan, settle

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
        conds += [self.holds(e, s) for e in self.model.initial_assumptions]
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
                    x: z3.ExprRef = z3.Bool(f"{a.name}.{p.name}!{next(_fresh)}")
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
        arr = z3.Const(f"ghostarr!{next(_fresh)}", self.sort(var.type))
        ex = _Exec(self, PState({vi: arr}), post=None, in_action=False)
        ex.locals[f.binder.id] = x
        v, err = ex.eval(f.body)
        body = z3.If(v, 1, 0) if f.kind is ir.FoldKind.COUNT else v  # type: ignore[arg-type]
        # the initial value is (hi - lo + 1) * f(init) (`init`) only when f reads the binder just to
        # index the array; `count k in 0..N-1: a[k] == 0 and k < 3` starts at min(N, 3), not N or 0
        # (it was proved `!= 3` for all N, false at N = 4): such a ghost starts anywhere in 0..n
        # (a count) or anywhere (a sum), which contains the true start; its updates stay exact
        from gpcheck.checker.engines.smt.terms import subterms

        elem = z3.Const(f"ghostelem!{next(_fresh)}", z3.Select(arr, x).sort())  # type: ignore[arg-type]
        exact = not any(t.eq(x) for t in subterms([z3.substitute(body, (z3.Select(arr, x), elem))]))  # type: ignore[arg-type]
        return Ghost(id(f), vi, lo, hi, x, body, arr, z3.simplify(err), exact,  # type: ignore[arg-type]
                     f.kind is ir.FoldKind.COUNT)


def _as_int(e: z3.ExprRef) -> z3.ArithRef:
    return z3.If(e, 1, 0) if z3.is_bool(e) else e  # type: ignore[return-value]


def _const_array(t: ir.Type, value: z3.ExprRef, enc: ParamEncoder) -> z3.ExprRef:
    if isinstance(t, ir.ArrayType):
        return z3.K(z3.IntSort(), _const_array(t.elem, value, enc))
    return value


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


class _Exec:
    """Symbolic execution over a PState (see the module docstring)."""

    def __init__(self, enc: ParamEncoder, s: PState, post: PState | None, in_action: bool) -> None:
        self.enc = enc
        self.pm = enc.pm
        self.vals = dict(s.vals)
        self.ghosts = dict(s.ghosts)
        self.post = post
        self.in_action = in_action
        self.locals: dict[int, z3.ExprRef] = {}
        self.alive: z3.BoolRef = z3.BoolVal(True)
        self.error: z3.BoolRef = z3.BoolVal(False)
        self.ranges: list[z3.BoolRef] = []  # binder ranges in scope (for error proofs)
        self.counts = dict(s.counts)
        self.rows: dict[int, object] = {}  # counted-range binders in scope: symbol id -> counters.Row
        self.accums: list | None = None  # inside a loop over the counted range: its accumulations
        self.row_errors: list[z3.BoolRef] = []  # and the error conditions of its rows

    # -- statements ----------------------------------------------------------------------------

    def fail_if(self, guard: z3.BoolRef, err: z3.BoolRef) -> None:
        err = z3.simplify(err)
        if z3.is_false(err):
            return
        e = z3.And(self.alive, guard, err)
        if self.accums is not None:  # in a loop over counted rows: each error on its own (counters.loop)
            self.row_errors.append(z3.And(guard, err))
        self.error = z3.Or(self.error, e)
        self.alive = z3.And(self.alive, z3.Not(z3.And(guard, err)))

    def block(self, body: Sequence[ir.Stmt], guard: z3.BoolRef) -> None:
        for st in body:
            if z3.is_false(z3.simplify(self.alive)):
                return
            self.stmt(st, guard)

    def stmt(self, st: ir.Stmt, guard: z3.BoolRef) -> None:
        match st:
            case ir.Require(cond=c):
                v, err = self.eval(c)
                self.fail_if(guard, err)
                self.alive = z3.And(self.alive, z3.Implies(guard, v))  # type: ignore[arg-type]
            case ir.Let(sym=sym, value=e):
                v, err = self.eval(e)
                self.fail_if(guard, err)
                self.locals[sym.id] = v  # type: ignore[assignment]
            case ir.Assign(target=tgt, value=e):
                self.assign(tgt, e, guard)
            case ir.If(cond=c, then=th, else_=el):
                v, err = self.eval(c)
                self.fail_if(guard, err)
                saved = dict(self.locals)
                self.block(th, z3.And(guard, v))  # type: ignore[arg-type]
                self.locals = dict(saved)
                self.block(el, z3.And(guard, z3.Not(v)))  # type: ignore[arg-type]
                self.locals = saved
            case ir.For():
                self.loop(st, guard)
            case _:
                raise Unsupported(f"statement {type(st).__name__}")

    def loop(self, st: ir.For, guard: z3.BoolRef) -> None:
        symbolic = self.pm.symbolic(st, "lo") or self.pm.symbolic(st, "hi")
        if symbolic and self.enc._counted_range(st.binder.type):
            from gpcheck.checker.engines.param import counters

            counters.loop(self, st, guard)
            return
        saved = dict(self.locals)
        if not symbolic:
            for k in range(st.lo, st.hi + 1):
                self.locals[st.binder.id] = z3.IntVal(k)
                self.block(st.body, guard)
            self.locals = saved
            return
        if any(isinstance(x, ir.Require) for x in ir.iter_stmts(st.body)):
            raise Unsupported("a require inside a for loop over a symbolic range")
        lo, hi = self.pm.num(st, "lo", st.lo), self.pm.num(st, "hi", st.hi)
        x = _fresh_int(st.binder.name)
        rng = z3.And(lo <= x, x <= hi)
        positions = _loop_positions(st, [v.name for v in self.enc.model.vars])
        pre_vals, pre_alive, pre_error = dict(self.vals), self.alive, self.error
        self.alive, self.error = z3.BoolVal(True), z3.BoolVal(False)
        self.locals[st.binder.id] = x
        self.block(st.body, guard)
        post, err = self.vals, self.error
        self.vals, self.alive, self.error, self.locals = pre_vals, pre_alive, pre_error, saved
        errs = z3.Exists([x], z3.And(rng, err)) if not z3.is_false(z3.simplify(err)) else z3.BoolVal(False)
        self.fail_if(z3.BoolVal(True), errs)
        for vi, new in post.items():
            old = self.vals[vi]
            if isinstance(new, dict) or not isinstance(old, z3.ExprRef) or new.eq(old):  # type: ignore[union-attr]
                if isinstance(new, dict) and not all(new[k].eq(old[k]) for k in new):  # type: ignore[index, union-attr]
                    raise Unsupported("a for loop writing a struct")
                continue
            if vi not in positions:
                raise Unsupported("a for loop writing a scalar")
            if any(g.var == vi for g in self.enc.ghosts.values()):
                raise Unsupported("a for loop writing an array a sum/count reads")
            self.vals[vi] = _parallel(new, old, x, lo, hi, positions[vi], self.enc.model.vars[vi].type)

    def assign(self, tgt: ir.Expr, e: ir.Expr, guard: z3.BoolRef) -> None:
        root, _ = _lvalue_path(tgt)
        if self.accums is not None and not self.enc.counted(root):
            from gpcheck.checker.engines.param import counters

            counters.accumulate(self, tgt, e, guard)  # type: ignore[arg-type]
            return
        val, err = self.eval(e)
        self.fail_if(guard, err)
        if not ir.is_scalar(tgt.type):
            raise Unsupported("an aggregate assignment")
        self.fail_if(guard, z3.Not(self.enc.in_type(tgt.type, val)))
        root, path = _lvalue_path(tgt)
        if self.enc.counted(root):
            from gpcheck.checker.engines.param import counters

            var, idx = _index_chain(tgt)
            counters.write(self, root, idx, val, guard)
            return
        # indexes evaluated in the pre-assignment state
        steps: list[tuple[str, object]] = []
        for p in path:
            if isinstance(p, ir.Index):
                iv, ierr = self.eval(p.index)
                lo, hi = self.enc.bounds(p.base.type.index)  # type: ignore[union-attr]
                self.fail_if(guard, z3.Or(ierr, iv < lo, iv > hi))  # type: ignore[operator, arg-type]
                steps.append(("i", iv))
            else:
                steps.append(("f", p.name))  # type: ignore[union-attr]
        if z3.is_false(z3.simplify(self.alive)):
            return
        old_root = self.vals[root]
        new_root = _update(old_root, steps, val)
        for k, g in self.enc.ghosts.items():
            if g.var != root:
                continue
            if len(steps) != 1 or steps[0][0] != "i":
                raise Unsupported("a sum/count over an array written other than by one index")
            i = steps[0][1]
            old_elem = z3.Select(old_root, i)  # type: ignore[arg-type]
            f_new = _as_int(z3.substitute(g.body, (z3.Select(g.arr, g.binder), val), (g.binder, i)))  # type: ignore[arg-type]
            f_old = _as_int(z3.substitute(g.body, (z3.Select(g.arr, g.binder), old_elem), (g.binder, i)))  # type: ignore[arg-type]
            inside = z3.And(g.lo <= i, i <= g.hi)  # type: ignore[operator]
            self.ghosts[k] = z3.If(z3.And(guard, inside), self.ghosts[k] + f_new - f_old, self.ghosts[k])
        self.vals[root] = _ite_val(guard, new_root, old_root)

    # -- expressions -------------------------------------------------------------------------

    def eval(self, e: ir.Expr) -> tuple[Val, z3.BoolRef]:
        F = z3.BoolVal(False)
        match e:
            case ir.Lit(value=v, type=t):
                if isinstance(t, ir.BoolType):
                    return z3.BoolVal(bool(v)), F
                return self.pm.num(e, "value", v), F
            case ir.VarRef(var=vi, primed=primed) if self.enc.counted(vi):
                raise Unsupported(f"{self.enc.model.vars[vi].name}: a counted array used whole")
            case ir.VarRef(var=vi, primed=primed):
                if primed:
                    assert self.post is not None, "primed variable outside a transition property"
                    return self.post.vals[vi], F
                return self.vals[vi], F
            case ir.LocalRef(sym=sym):
                if sym.id in self.rows:
                    raise Unsupported(f"{sym.name}, an index over the counted range, used other than to index "
                                      "a counted array")
                return self.locals[sym.id], F
            case ir.Field(base=b, name=name):
                bv, err = self.eval(b)
                return bv[name], err  # type: ignore[index]
            case ir.Index() if self.enc.counters is not None and _counted_read(self.enc, e):
                from gpcheck.checker.engines.param import counters

                var, idx = _index_chain(e)
                if any(isinstance(x, ir.VarRef) and x.primed for x in ir.walk_expr(e)):
                    raise Unsupported("a counted array in the next state")
                return counters.read(self, var, idx)  # type: ignore[arg-type]
            case ir.Index(base=b, index=i):
                bv, berr = self.eval(b)
                iv, ierr = self.eval(i)
                lo, hi = self.enc.bounds(b.type.index)  # type: ignore[union-attr]
                if isinstance(iv, z3.BoolRef):
                    raise Unsupported("a bool-indexed array")
                return z3.Select(bv, iv), z3.Or(berr, ierr, iv < lo, iv > hi)  # type: ignore[arg-type, operator]
            case ir.Unary(op=op, operand=o):
                v, err = self.eval(o)
                return (z3.Not(v) if op is ir.UnOp.NOT else -v), err  # type: ignore[arg-type, operator]
            case ir.Binary():
                return self.binary(e)
            case ir.Ite(cond=c, then=th, else_=el):
                cv, cerr = self.eval(c)
                tv, terr = self.eval(th)
                fv, ferr = self.eval(el)
                return _ite_val(cv, tv, fv), z3.Or(cerr, z3.And(cv, terr), z3.And(z3.Not(cv), ferr))  # type: ignore[arg-type]
            case ir.Fold():
                return self.fold(e)
        raise Unsupported(f"expression {type(e).__name__}")

    def binary(self, e: ir.Binary) -> tuple[Val, z3.BoolRef]:
        op = e.op
        a, aerr = self.eval(e.lhs)
        b, berr = self.eval(e.rhs)
        if op is ir.BinOp.AND:
            return z3.And(a, b), z3.Or(aerr, z3.And(a, berr))  # type: ignore[arg-type]
        if op is ir.BinOp.OR:
            return z3.Or(a, b), z3.Or(aerr, z3.And(z3.Not(a), berr))  # type: ignore[arg-type]
        if op is ir.BinOp.IMPLIES:
            return z3.Implies(a, b), z3.Or(aerr, z3.And(a, berr))  # type: ignore[arg-type]
        err = z3.Or(aerr, berr)
        if op is ir.BinOp.EQ:
            return _eq_val(a, b), err
        if op is ir.BinOp.NE:
            return z3.Not(_eq_val(a, b)), err
        x, y = a, b
        match op:
            case ir.BinOp.ADD:
                return x + y, err  # type: ignore[operator]
            case ir.BinOp.SUB:
                return x - y, err  # type: ignore[operator]
            case ir.BinOp.MUL:
                return x * y, err  # type: ignore[operator]
            case ir.BinOp.DIV:
                return z3.If(y > 0, x / y, (-x) / (-y)), z3.Or(err, y == 0)  # type: ignore[operator]
            case ir.BinOp.MOD:
                q = z3.If(y > 0, x / y, (-x) / (-y))  # type: ignore[operator]
                return x - y * q, z3.Or(err, y == 0)  # type: ignore[operator]
            case ir.BinOp.LT:
                return x < y, err  # type: ignore[operator]
            case ir.BinOp.LE:
                return x <= y, err  # type: ignore[operator]
            case ir.BinOp.GT:
                return x > y, err  # type: ignore[operator]
            case ir.BinOp.GE:
                return x >= y, err  # type: ignore[operator]
        raise Unsupported(f"operator {op}")

    def fold(self, e: ir.Fold) -> tuple[Val, z3.BoolRef]:
        if self.enc._counted_range(e.binder.type) and self.enc.constant_range(e.binder.type) is None:
            from gpcheck.checker.engines.param import counters

            return counters.fold(self, e)
        if e.kind in (ir.FoldKind.SUM, ir.FoldKind.COUNT):
            values = self.enc.constant_range(e.binder.type)
            if values is not None:
                return self._finite_sum(e, values)
            if self.in_action and e.kind is ir.FoldKind.COUNT:
                return self._interval_count(e)
            if self.in_action or id(e) not in self.enc.ghosts:
                raise Unsupported("sum/count inside an action")
            return self.ghosts[id(e)], self._ghost_error(self.enc.ghosts[id(e)])
        if e.kind not in (ir.FoldKind.ALL, ir.FoldKind.ANY):
            raise Unsupported(f"{e.kind.value} over a symbolic range")
        lo, hi = self.enc.bounds(e.binder.type)
        slo, shi = z3.simplify(lo), z3.simplify(hi)
        if z3.is_int_value(slo) and z3.is_int_value(shi) and shi.as_long() - slo.as_long() < FINITE_FOLD:
            return self._finite_fold(e, range(slo.as_long(), shi.as_long() + 1))
        x = range_binder(e.binder.name, lo, hi)
        rng = z3.And(lo <= x, x <= hi)
        saved = self.locals.get(e.binder.id)
        self.locals[e.binder.id] = x
        self.ranges.append(rng)
        v, err = self.eval(e.body)
        self.ranges.pop()
        if saved is None:
            self.locals.pop(e.binder.id, None)
        else:
            self.locals[e.binder.id] = saved
        val = (z3.ForAll([x], z3.Implies(rng, v)) if e.kind is ir.FoldKind.ALL  # type: ignore[arg-type]
               else z3.Exists([x], z3.And(rng, v)))  # type: ignore[arg-type]
        err = z3.simplify(err)
        if z3.is_false(err):
            return val, err
        if self._never(z3.And(rng, err)):
            return val, z3.BoolVal(False)
        if self.in_action:
            raise Unsupported("an all/any inside an action whose body may fail")
        return val, z3.Exists([x], z3.And(rng, err))  # over-approximates: the property only gets harder

    def _interval_count(self, e: ir.Fold) -> tuple[Val, z3.BoolRef]:
        """`count k in lo..hi: C1 and C2 and ...` inside an action, in closed form: each
        conjunct compares the binder with a term that does not read it (`k >= a`, `k < b`,
        `k == c`, `k != d`) or does not mention the binder at all (a guard). The count is the
        length of the interval the bounds leave, minus the distinct excluded values inside
        it: exact for every size, so an action may set a counter from it (reef_rewind's
        `temp`). NOTE(interval-count): the explicit engine evaluates the body at k = lo
        first, so the first conjunct's evaluation error is the fold's error whenever the
        range is not empty; every other conjunct's error must imply it (checked for every
        size), or the fold is outside the fragment."""
        bid = e.binder.id
        conjuncts: list[ir.Expr] = []

        def split(x: ir.Expr) -> None:
            if isinstance(x, ir.Binary) and x.op is ir.BinOp.AND:
                split(x.lhs)
                split(x.rhs)
            else:
                conjuncts.append(x)

        def reads_binder(x: ir.Expr) -> bool:
            return any(isinstance(y, ir.LocalRef) and y.sym.id == bid for y in ir.walk_expr(x))

        def is_binder(x: ir.Expr) -> bool:
            return isinstance(x, ir.LocalRef) and x.sym.id == bid

        split(e.body)
        lo, hi = self.enc.bounds(e.binder.type)
        lowers: list[z3.ArithRef] = [lo]
        uppers: list[z3.ArithRef] = [hi]
        excluded: list[z3.ArithRef] = []
        guards: list[z3.BoolRef] = []
        errs: list[z3.BoolRef] = []
        flip = {ir.BinOp.LT: ir.BinOp.GT, ir.BinOp.LE: ir.BinOp.GE, ir.BinOp.GT: ir.BinOp.LT,
                ir.BinOp.GE: ir.BinOp.LE, ir.BinOp.EQ: ir.BinOp.EQ, ir.BinOp.NE: ir.BinOp.NE}
        for c in conjuncts:
            if not reads_binder(c):
                v, err = self.eval(c)
                guards.append(v)  # type: ignore[arg-type]
                errs.append(err)
                continue
            if not (isinstance(c, ir.Binary) and c.op in flip):
                raise Unsupported("a count inside an action whose body is not a conjunction of bounds on its binder")
            if is_binder(c.lhs) and not reads_binder(c.rhs):
                op, other = c.op, c.rhs
            elif is_binder(c.rhs) and not reads_binder(c.lhs):
                op, other = flip[c.op], c.lhs
            else:
                raise Unsupported("a count inside an action comparing its binder with a term that reads it")
            v, err = self.eval(other)
            errs.append(err)
            t: z3.ArithRef = v  # type: ignore[assignment]
            if op is ir.BinOp.GE:
                lowers.append(t)
            elif op is ir.BinOp.GT:
                lowers.append(t + 1)
            elif op is ir.BinOp.LE:
                uppers.append(t)
            elif op is ir.BinOp.LT:
                uppers.append(t - 1)
            elif op is ir.BinOp.EQ:
                lowers.append(t)
                uppers.append(t)
            else:
                excluded.append(t)
        first = z3.simplify(errs[0]) if errs else z3.BoolVal(False)
        for err in errs[1:]:
            if not z3.is_false(z3.simplify(err)) and not self._never(z3.And(err, z3.Not(first))):
                raise Unsupported("a count inside an action whose later conjuncts may fail to evaluate")
        low, up = lowers[0], uppers[0]
        for x in lowers[1:]:
            low = z3.If(x > low, x, low)
        for x in uppers[1:]:
            up = z3.If(x < up, x, up)
        n: z3.ArithRef = z3.If(up >= low, up - low + 1, 0)  # type: ignore[assignment]
        for i, d in enumerate(excluded):
            fresh = z3.And(low <= d, d <= up, *[d != x for x in excluded[:i]])
            n = n - z3.If(fresh, 1, 0)
        if guards:
            n = z3.If(z3.And(*guards), n, 0)  # type: ignore[assignment]
        return n, z3.And(lo <= hi, first)

    def _ghost_error(self, g: Ghost) -> z3.BoolRef:
        """The fold's evaluation error: its body fails at some binder value in the range (an
        index past the array's range: `count k in 0..M-1: a[k]` with `a: [0..N-1]` for M > N;
        the explicit engine evaluates the body at every value). Before, a ghost counter never
        failed, and such a property was proved for all M."""
        if z3.is_false(g.err):
            return g.err
        y = _fresh_int("ghosterr")
        inst = z3.substitute(g.err, (g.arr, self.vals[g.var]), (g.binder, y))  # type: ignore[arg-type]
        return z3.Exists([y], z3.And(g.lo <= y, y <= g.hi, inst))

    def _instances(self, e: ir.Fold, values: range) -> list[tuple[Val, z3.BoolRef]]:
        """The fold's body and its evaluation error at each of `values`, the binder bound to
        the value (the binder's local from outside, if any, is back afterwards): what
        `_finite_sum` and `_finite_fold` combine."""
        saved = self.locals.get(e.binder.id)
        out: list[tuple[Val, z3.BoolRef]] = []
        try:
            for k in values:
                self.locals[e.binder.id] = z3.IntVal(k)
                out.append(self.eval(e.body))
        finally:
            if saved is None:
                self.locals.pop(e.binder.id, None)
            else:
                self.locals[e.binder.id] = saved
        return out

    def _finite_sum(self, e: ir.Fold, values: range) -> tuple[Val, z3.BoolRef]:
        """`sum`/`count` over a range that does not depend on the symbolic constants: the
        sum of its instances, exact for every size (`--for-all NB` with the slots fixed);
        an instance's evaluation error is the fold's (every instance is evaluated)."""
        got = self._instances(e, values)
        terms = [_as_int(v) if e.kind is ir.FoldKind.COUNT else v for v, _ in got]  # type: ignore[arg-type]
        errs = [err for _, err in got]
        total = z3.Sum(*terms) if terms else z3.IntVal(0)
        return total, z3.simplify(z3.Or(*errs)) if errs else z3.BoolVal(False)

    def _finite_fold(self, e: ir.Fold, values: range) -> tuple[Val, z3.BoolRef]:
        """`all`/`any` over a range that does not depend on the symbolic constants: the
        conjunction / disjunction of its instances (no quantifier for Z3), with the
        evaluation order's errors (an error in an instance the result does not reach yet)."""
        vals: list[z3.BoolRef] = []
        errs: list[z3.BoolRef] = []
        for v, err in self._instances(e, values):
            # an instance's error counts only while the fold is still undecided before it
            undecided = z3.And(*vals) if e.kind is ir.FoldKind.ALL else z3.Not(z3.Or(*vals)) if vals else z3.BoolVal(True)
            errs.append(z3.And(undecided, err) if vals else err)
            vals.append(v)  # type: ignore[arg-type]
        val = z3.And(*vals) if e.kind is ir.FoldKind.ALL else z3.Or(*vals)
        return val, z3.simplify(z3.Or(*errs)) if errs else z3.BoolVal(False)

    def _never(self, f: z3.BoolRef) -> bool:
        """`f` is unsatisfiable for every size, with the binders in scope in range."""
        s = z3.Solver()
        s.set("rlimit", NEVER_STEPS)  # NOTE(step-limits): was 2 s, which made the encoding load-dependent
        s.add(*self.enc.facts, *self.ranges, f)
        return trusted(s.check()) == z3.unsat  # NOTE(stale-interrupt)


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

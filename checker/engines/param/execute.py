"""An action's body, a guard or a property run symbolically over a `PState` (`_Exec`): statements,
loops, assignments, expressions and folds as Z3 terms with the error branches they can take.
The encoder (encode.py) runs it for its transitions; counters.py's hooks take over the arrays
over a symbolic range."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.param.extract import Unsupported
from gpcheck.checker.engines.smt.session import trusted
from gpcheck.checker.engines.param.symstate import (
    FINITE_FOLD,
    Ghost,
    PState,
    Val,
    _as_int,
    _counted_read,
    _eq_val,
    _fresh_int,
    _index_chain,
    _ite_val,
    _loop_positions,
    _lvalue_path,
    _parallel,
    _update,
    range_binder,
)

if TYPE_CHECKING:  # encode.py imports this module
    from gpcheck.checker.engines.param.encode import ParamEncoder


NEVER_STEPS = 16_000_000  # Z3 steps to show an error branch of the encoding impossible (about 2 s)


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
                if st.assumption is not None and st.assumption in self.enc.relax:  # NOTE(assumptions)
                    v = z3.Or(z3.Not(self.enc.relax[st.assumption]), v)
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

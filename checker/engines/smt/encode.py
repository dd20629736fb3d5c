# over 600 lines: one job, the IR as Z3 terms, one case per expression and statement kind
"""The IR as Z3 formulas: state terms, initial predicate, action steps, transition relation.

State variables are unrolled into one Z3 constant per slot (NOTE(slots)) and per step, named
`SLOT@STEP` (e.g. `waves_run[3]@2`); bools are Bool, ints and enums are Int with range
constraints. Dynamic indexes read through ite-chains over the index domain and write by
rewriting each candidate slot under `index == value`. Action parameters are constants per
(action, parameter, step), existentially chosen by the solver. Statements are executed
symbolically in order (SSA: each assignment yields new slot terms), exactly following
NOTE(step-semantics): a `require` that fails stops the step (disabled), a modelling error
(out-of-range write, bad index, division by zero) stops it with an error, which counts only
when every `require` executed before it held. Short-circuit operators (`and`, `or`,
`implies`, `if-then-else`, `all`, `any`) do not evaluate (so cannot fail in) the operand they
skip, like the interpreter's Python.

The encoder keeps no solver state; engines combine its formulas in a `Session`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.core import budget
from gpcheck.checker.engines.smt.terms import (
    Agg,
    Value,
    all_of,
    const_int,
    domain_lits,
    false,
    INT,
    Num,
    in_type,
    is_false,
    mk_and,
    mk_eq,
    mk_ite,
    mk_not,
    mk_or,
    scalar_lit,
    scalar_sort,
    true,
)

State = tuple[z3.ExprRef, ...]
TEMPLATE = "tpl."  # tag of the symbols formulas are built over once (Encoder._instantiate)
Bindings = tuple[tuple[ir.Symbol, int], ...]  # values of free local symbols


class EncodingError(Exception):
    """An IR construct the encoding does not support (an internal limitation, not a user error)."""


@dataclass(frozen=True)
class Slot:
    """One scalar slot of the state: its variable, accessor path, type and display name."""

    var: int
    path: tuple[ir.Accessor, ...]
    type: ir.ScalarType
    name: str


@dataclass(frozen=True)
class StepEnc:
    """One action instance applied to one state: when it completes, when it fails with a
    modelling error, and the next-state slot terms (meaningful only when `enabled`)."""

    enabled: z3.BoolRef
    error: z3.BoolRef
    next: State
    errors: tuple[tuple[z3.BoolRef, str], ...] = ()  # (condition, what failed) for reports


def slot_name(var: ir.Var, path: tuple[ir.Accessor, ...], model_type: ir.Type) -> str:
    """Readable slot name: `waves_run[3]`, `q[Waiting].rptr`, `flag[true]`."""
    out, t = var.name, model_type
    for acc in path:
        if isinstance(t, ir.ArrayType):
            assert isinstance(acc, int)
            idx = ir.format_scalar(t.index, acc)  # type: ignore[arg-type]
            out += f"[{str(idx).lower() if isinstance(idx, bool) else idx}]"
            t = t.elem
        else:
            assert isinstance(t, ir.StructType) and isinstance(acc, str)
            out += f".{acc}"
            ft = t.field_type(acc)
            assert ft is not None
            t = ft
    return out


def build_slots(model: ir.Model) -> list[Slot]:
    out: list[Slot] = []
    for v in model.vars:
        for path, st in ir.leaf_paths(v.type):
            out.append(Slot(v.index, path, st, slot_name(v, path, v.type)))
    return out


class Encoder:
    """Builds Z3 formulas for one `ir.Model`; every term is keyed by (symbol, step)."""

    def __init__(self, model: ir.Model, num: Num = INT, ctx_prefix: str = "",
                 relax: "Mapping[str, z3.BoolRef] | None" = None) -> None:
        """`relax` (NOTE(assumptions)): an indicator literal per model assumption; each guard
        and initial-state filter of that assumption then holds only where its literal is true,
        so an unsat core over the literals names the assumptions a proof used."""
        self.model = model
        self.relax = dict(relax or {})
        self.num = num
        self.slots = build_slots(model)
        self.offsets = model.var_offsets()
        self.prefix = ctx_prefix
        self._states: dict[tuple[str, int], State] = {}
        self._params: dict[tuple[str, int, int], tuple[z3.ExprRef, ...]] = {}
        self._templates: dict[tuple[object, ...], z3.BoolRef] = {}

    # -- symbols ---------------------------------------------------------------------------

    def state(self, step: int, tag: str = "") -> State:
        """The slot constants of the state at `step` (`tag` separates independent copies)."""
        key = (tag, step)
        if key not in self._states:
            self._states[key] = tuple(
                z3.Const(f"{self.prefix}{tag}{s.name}@{step}", scalar_sort(s.type, self.num)) for s in self.slots
            )
        return self._states[key]

    def params(self, action: int, step: int, tag: str = "") -> tuple[z3.ExprRef, ...]:
        """The parameter constants of `action` chosen at `step`."""
        key = (tag, action, step)
        if key not in self._params:
            a = self.model.actions[action]
            self._params[key] = tuple(
                z3.Const(f"{self.prefix}{tag}{a.name}.{p.name}@{step}", scalar_sort(_scalar(p.type), self.num))
                for p in a.params
            )
        return self._params[key]

    def act(self, step: int, tag: str = "") -> z3.ExprRef:
        """Which action is taken at `step` (its index in `model.actions`)."""
        return z3.Const(f"{self.prefix}{tag}act@{step}", self.num.sort)

    # -- state predicates ------------------------------------------------------------------

    def in_range(self, s: State) -> z3.BoolRef:
        """Every slot holds a value of its type."""
        return all_of(in_type(sl.type, t) for sl, t in zip(self.slots, s))

    def init_slots(self, s: State) -> list[z3.BoolRef]:
        """The initial condition of each slot: its value, or its type's range for `any`."""
        conds: list[z3.BoolRef] = []
        i = 0
        for v in self.model.vars:
            for val in v.init:
                sl = self.slots[i]
                conds.append(in_type(sl.type, s[i]) if val is None else mk_eq(s[i], scalar_lit(sl.type, val, self.num)))
                i += 1
        # NOTE(assumptions): an initial state outside a state assumption does not exist
        for a in self.model.assumptions:
            if a.kind == "state" and a.expr is not None:
                h = self.holds(a.expr, s)
                conds.append(z3.Implies(self.relax[a.name], h) if a.name in self.relax else h)
        return conds

    def init(self, s: State) -> z3.BoolRef:
        """The initial-state predicate (every slot's initial condition)."""
        return all_of(self.init_slots(s))

    def predicate(
        self, e: ir.Expr, s: State, t: State | None = None, bindings: Bindings = ()
    ) -> tuple[z3.BoolRef, z3.BoolRef]:
        """A state (or, with `t`, transition) expression: (value, evaluation-error condition);
        `bindings` give values to free local symbols (a conjunct of a fold)."""
        ex = _Exec(self, list(s), post=t)
        for sym, val in bindings:
            ex.locals[sym.id] = scalar_lit(sym.type, val, self.num)
        v, err = ex.eval(e)
        assert isinstance(v, z3.BoolRef), e
        return v, err

    def holds(self, e: ir.Expr, s: State, t: State | None = None, bindings: Bindings = ()) -> z3.BoolRef:
        """`e` holds in `s` (on `s -> t`); an evaluation error makes it false."""

        def build(ts: State, tt: State) -> z3.BoolRef:
            v, err = self.predicate(e, ts, tt if t is not None else None, bindings)
            return mk_and(mk_not(err), v)

        return self._instantiate(("holds", id(e), bindings, t is not None), build, s, t)

    def terminal(self, s: State) -> z3.BoolRef:
        return self._instantiate(("terminal",), lambda ts, _: mk_or(*(self.holds(e, ts) for e in self.model.terminals)), s)

    def in_constraints(self, s: State) -> z3.BoolRef:
        """Inside every `constraint` (states outside are not expanded)."""
        return self._instantiate(
            ("constraints",), lambda ts, _: all_of(self.holds(c.expr, ts) for c in self.model.constraints), s)

    # -- templates: each formula is built once over template symbols, then substituted -------

    def _instantiate(
        self,
        key: tuple[object, ...],
        build: "Callable[[State, State], z3.BoolRef]",
        s: State,
        t: State | None = None,
        step: int | None = None,
        tag: str = "",
    ) -> z3.BoolRef:
        """`build(s, t)` for the step's symbols: built once over template symbols (the
        symbolic execution is the costly part) and instantiated by `z3.substitute`."""
        ts, tt = self.state(0, TEMPLATE), self.state(1, TEMPLATE)
        tpl = self._templates.get(key)
        if tpl is None:
            tpl = build(ts, tt)
            self._templates[key] = tpl
        pairs = [(a, b) for a, b in zip(ts, s) if not a.eq(b)]
        if t is not None:
            pairs += [(a, b) for a, b in zip(tt, t) if not a.eq(b)]
        if step is not None and (step, tag) != (0, TEMPLATE):
            pairs.append((self.act(0, TEMPLATE), self.act(step, tag)))
            for ai in range(len(self.model.actions)):
                pairs += list(zip(self.params(ai, 0, TEMPLATE), self.params(ai, step, tag)))
        return z3.substitute(tpl, *pairs) if pairs else tpl  # type: ignore[return-value]

    # -- actions ---------------------------------------------------------------------------

    def step(self, action: int, s: State, args: Sequence[z3.ExprRef]) -> StepEnc:
        """Symbolic execution of one action instance from state `s` (NOTE(step-semantics))."""
        a = self.model.actions[action]
        ex = _Exec(self, list(s))
        for p, v in zip(a.params, args):
            ex.locals[p.id] = v
        ex.block(a.body, true())
        return StepEnc(ex.alive, ex.error, tuple(ex.state), tuple(ex.errors))

    def param_domain(self, action: int, args: Sequence[z3.ExprRef]) -> z3.BoolRef:
        a = self.model.actions[action]
        return all_of(in_type(_scalar(p.type), v) for p, v in zip(a.params, args))

    def instances(self) -> list[tuple[int, tuple[int, ...]]]:
        """Every (action index, parameter slot values) instance, in gpmodel's order:
        actions in declaration order, parameters varying last-fastest."""
        import itertools

        out: list[tuple[int, tuple[int, ...]]] = []
        for ai, a in enumerate(self.model.actions):
            doms = [list(ir.domain_values(_scalar(p.type))) for p in a.params]  # type: ignore[arg-type]
            for combo in itertools.product(*doms):
                out.append((ai, tuple(combo)))
        return out

    def instance_args(self, action: int, values: Sequence[int]) -> tuple[z3.ExprRef, ...]:
        a = self.model.actions[action]
        return tuple(scalar_lit(p.type, v, self.num) for p, v in zip(a.params, values))

    def equal_states(self, s: State, t: Sequence[z3.ExprRef]) -> z3.BoolRef:
        return all_of(mk_eq(a, b) for a, b in zip(s, t))

    def trans(self, s: State, t: State, step: int, tag: str = "") -> z3.BoolRef:
        """T(s, t): some enabled action instance, chosen by `act@step` and its parameters,
        takes `s` to `t`; `s` must lie inside the constraints."""
        return self._instantiate(("trans",), lambda ts, tt: self._trans(ts, tt, 0, TEMPLATE), s, t, step, tag)

    def _trans(self, s: State, t: State, step: int, tag: str) -> z3.BoolRef:
        branches = []
        for ai in range(len(self.model.actions)):
            args = self.params(ai, step, tag)
            enc = self.step(ai, s, args)
            branches.append(
                mk_and(
                    self.act(step, tag) == self.num.lit(ai),
                    self.param_domain(ai, args),
                    enc.enabled,
                    self.equal_states(t, enc.next),
                )
            )
        return mk_and(self.in_constraints(s), mk_or(*branches))

    def error(self, s: State, step: int, tag: str = "") -> z3.BoolRef:
        """Some action instance, chosen by `act@step` and its parameters, fails with a
        modelling error in `s` (which lies inside the constraints)."""
        return self._instantiate(("error",), lambda ts, _: self._error(ts, 0, TEMPLATE), s, None, step, tag)

    def _error(self, s: State, step: int, tag: str) -> z3.BoolRef:
        branches = []
        for ai in range(len(self.model.actions)):
            args = self.params(ai, step, tag)
            enc = self.step(ai, s, args)
            branches.append(mk_and(self.act(step, tag) == self.num.lit(ai), self.param_domain(ai, args), enc.error))
        return mk_and(self.in_constraints(s), mk_or(*branches))

    def property_errors(self, s: State) -> z3.BoolRef:
        """Evaluating some state predicate in `s` fails with a modelling error: a `range`
        violation (NOTE(predicate-errors))."""
        return self._instantiate(
            ("property_errors",), lambda ts, _: mk_or(*(self.predicate(e, ts)[1] for _, e in self.model.state_predicates())), s)

    def step_errors(self, s: State, t: State) -> z3.BoolRef:
        """Evaluating some transition property on the step `s -> t` fails with a modelling
        error: a `range` violation (NOTE(predicate-errors))."""
        return self._instantiate(
            ("step_errors",), lambda ts, tt: mk_or(*(self.predicate(p.expr, ts, tt)[1] for p in self.model.transitions)),
            s, t)

    def deadlock(self, s: State) -> z3.BoolRef:
        """No instance is enabled, none fails, `s` is not terminal, and it is expanded (inside
        the constraints); false under `allow deadlock`."""
        if self.model.allow_deadlock:
            return false()
        return self._instantiate(("deadlock",), lambda ts, _: self._deadlock(ts), s)

    def _deadlock(self, s: State) -> z3.BoolRef:
        stuck = []
        for ai, vals in self.instances():
            enc = self.step(ai, s, self.instance_args(ai, vals))
            stuck.append(mk_not(mk_or(enc.enabled, enc.error)))
        return mk_and(self.in_constraints(s), mk_not(self.terminal(s)), *stuck)


def bv_encoder(model: ir.Model) -> Encoder:
    """The encoder BMC and k-induction use: signed bit-vectors wide enough for every term
    (`bounds.bv_width`), solved by Z3's incremental SAT-based QF_FD solver.

    Measured on ring.gpspec (N=4), checking `no_reexecution` at depth k in one incremental
    solver: Int + default solver 7.4 s at k=20 and 56 s at k=25; Int + QF_LIA 1.5 s at k=19;
    bit-vectors + default solver 10 s at k=20; bit-vectors + QF_FD 0.03 s at k=20 and 0.13 s
    at k=30. PDR keeps Int (Spacer's arithmetic is linear integer arithmetic)."""
    from gpcheck.checker.engines.smt.bounds import bv_width

    return Encoder(model, Num(bv_width(model)))


BV_LOGIC = "QF_FD"


class PathLimit(Exception):
    """An action has more execution paths than `step_paths` was allowed to enumerate."""


class _Oracle:
    """Replays a prefix of decisions, then takes choice 0, recording every decision."""

    def __init__(self, prefix: list[int]) -> None:
        self.prefix = prefix
        self.trace: list[tuple[int, int]] = []  # (choice, number of alternatives)

    def choose(self, n: int) -> int:
        i = len(self.trace)
        c = self.prefix[i] if i < len(self.prefix) else 0
        self.trace.append((c, n))
        return c


@dataclass(frozen=True)
class PathEnc:
    """One execution path of an action instance: `cond` selects it (the paths of an action
    partition the states), `enabled`/`error`/`next` as in StepEnc, already conjoined with it."""

    cond: z3.BoolRef
    enabled: z3.BoolRef
    error: z3.BoolRef
    next: State


def step_paths(enc: Encoder, action: int, s: State, args: Sequence[z3.ExprRef], limit: int) -> list[PathEnc]:
    """The action's execution paths from `s`, each `if` and dynamic index decided, so every
    read and write on a path is static. Raises PathLimit beyond `limit` paths (the caller
    falls back to the single ite-encoded `Encoder.step`). PDR's clauses are one per path:
    Spacer generalises far better over such small linear updates than over ite-chains."""
    a = enc.model.actions[action]
    out: list[PathEnc] = []
    stack: list[list[int]] = [[]]
    while stack:
        budget.poll()  # NOTE(time-limit)
        prefix = stack.pop()
        oracle = _Oracle(prefix)
        ex = _Exec(enc, list(s), oracle=oracle)
        for p, v in zip(a.params, args):
            ex.locals[p.id] = v
        ex.block(a.body, true())
        if not z3.is_false(ex.pc):
            out.append(PathEnc(ex.pc, mk_and(ex.pc, ex.alive), mk_and(ex.pc, ex.error), tuple(ex.state)))
        if len(out) > limit:
            raise PathLimit(a.name)
        for i in range(len(prefix), len(oracle.trace)):
            c, n = oracle.trace[i]
            head = [ch for ch, _ in oracle.trace[:i]]
            for alt in range(c + 1, n):
                stack.append(head + [alt])
    return out


def _scalar(t: ir.Type) -> ir.ScalarType:
    assert isinstance(t, (ir.BoolType, ir.IntType, ir.EnumType)), t
    return t


# ---------------------------------------------------------------------------------------------
# Symbolic execution


def _in_domain(t: ir.Type, e: z3.ExprRef) -> z3.BoolRef:
    if isinstance(t, ir.BoolType):
        return true()
    return in_type(_scalar(t), e)


@dataclass
class _Exec:
    """State of one symbolic execution: current slot terms, locals, and the conditions under
    which execution is still running (`alive`) or has stopped with an error (`error`)."""

    enc: Encoder
    state: list[z3.ExprRef]
    post: State | None = None
    locals: dict[int, Value] = field(default_factory=dict)
    alive: z3.BoolRef = field(default_factory=true)
    error: z3.BoolRef = field(default_factory=false)
    errors: list[tuple[z3.BoolRef, str]] = field(default_factory=list)
    oracle: "_Oracle | None" = None  # path mode: decides branches and dynamic indexes
    pc: z3.BoolRef = field(default_factory=true)  # path mode: the condition of the path taken so far
    decided: dict[int, tuple[z3.ExprRef, z3.ExprRef, z3.BoolRef]] = field(default_factory=dict)  # path mode: index term id -> (term, choice, outside)

    def split_index(self, iv: z3.ExprRef, t: ir.Type) -> tuple[z3.ExprRef, z3.BoolRef]:
        """The index to use and the condition that it lies outside the domain `t`. In path
        mode a dynamic index is replaced by one domain value (or, on the path where it lies
        outside the domain, the error is certain), the choice recorded in the path condition
        and reused when the same index term comes back on this path."""
        if self.oracle is None or const_int(iv) is not None or z3.is_true(iv) or z3.is_false(iv):
            return iv, mk_not(_in_domain(t, iv))
        key = iv.get_id()
        hit = self.decided.get(key)
        if hit is None or not hit[0].eq(iv):  # (ids of freed terms are reused: compare terms)
            lits = domain_lits(t, self.enc.num)
            c = self.oracle.choose(len(lits) + 1)
            if c < len(lits):
                self.pc = mk_and(self.pc, mk_eq(iv, lits[c][1]))
                hit = (iv, lits[c][1], false())
            else:
                self.pc = mk_and(self.pc, mk_not(_in_domain(t, iv)))
                hit = (iv, iv, true())
            self.decided[key] = hit
        return hit[1], hit[2]

    # -- statements --------------------------------------------------------------------

    def fail_if(self, guard: z3.BoolRef, err: z3.BoolRef, what: str) -> None:
        """A modelling error happens under `guard ∧ err` if execution got here."""
        e = mk_and(self.alive, guard, err)
        if is_false(e):
            return
        self.error = mk_or(self.error, e)
        self.errors.append((e, what))
        self.alive = mk_and(self.alive, mk_not(mk_and(guard, err)))

    def block(self, body: tuple[ir.Stmt, ...], guard: z3.BoolRef) -> None:
        for st in body:
            if z3.is_false(self.alive):
                return
            budget.poll()  # NOTE(time-limit): a `for` unrolled over a large range runs here
            self.stmt(st, guard)

    def stmt(self, st: ir.Stmt, guard: z3.BoolRef) -> None:
        match st:
            case ir.Require(cond=c):
                v, err = self.eval(c)
                self.fail_if(guard, err, f"require at {st.span}")
                assert isinstance(v, z3.BoolRef)
                if st.assumption is not None and st.assumption in self.enc.relax:  # NOTE(assumptions)
                    v = z3.Or(z3.Not(self.enc.relax[st.assumption]), v)
                if z3.is_false(guard):
                    return
                self.alive = mk_and(self.alive, v if z3.is_true(guard) else z3.Implies(guard, v))
            case ir.Let(sym=sym, value=e):
                v, err = self.eval(e)
                self.fail_if(guard, err, f"let {sym.name} at {st.span}")
                self.locals[sym.id] = v
            case ir.Assign(target=tgt, value=e):
                self.assign(tgt, e, guard, st.span)
            case ir.If(cond=c, then=th, else_=el):
                v, err = self.eval(c)
                self.fail_if(guard, err, f"if at {st.span}")
                assert isinstance(v, z3.BoolRef)
                saved = dict(self.locals)
                if self.oracle is not None and not (z3.is_true(v) or z3.is_false(v)):
                    taken = self.oracle.choose(2) == 0
                    self.pc = mk_and(self.pc, v if taken else mk_not(v))
                    self.block(th if taken else el, guard)
                    self.locals = saved
                    return
                self.block(th, mk_and(guard, v))
                self.locals = dict(saved)
                self.block(el, mk_and(guard, mk_not(v)))
                self.locals = saved
            case ir.For(binder=b, lo=lo, hi=hi, body=body):
                saved = dict(self.locals)
                for k in range(lo, hi + 1):
                    self.locals[b.id] = scalar_lit(b.type, k, self.enc.num)
                    self.block(body, guard)
                self.locals = saved
            case _:
                raise EncodingError(f"unsupported statement {st!r}")

    def assign(self, tgt: ir.Expr, e: ir.Expr, guard: z3.BoolRef, span: object) -> None:
        val, err = self.eval(e)
        self.fail_if(guard, err, f"assignment at {span}")
        cands, ierr = self.lvalue(tgt)
        self.fail_if(guard, ierr, f"index out of range at {span}")
        ttype = tgt.type
        vals = list(val.slots) if isinstance(val, Agg) else [val]
        leaves = ir.leaf_paths(ttype)
        assert len(vals) == len(leaves), (tgt, e)
        rng = all_of(in_type(st, v) for (_, st), v in zip(leaves, vals))
        self.fail_if(guard, mk_not(rng), f"value out of range at {span}")
        if z3.is_false(self.alive):
            return
        for cond, start in cands:
            g = mk_and(guard, cond)
            if z3.is_false(g):
                continue
            for j, v in enumerate(vals):
                self.state[start + j] = mk_ite(g, v, self.state[start + j])

    def lvalue(self, tgt: ir.Expr) -> tuple[list[tuple[z3.BoolRef, int]], z3.BoolRef]:
        """Candidate (condition, first slot) places a target path may denote, and the
        condition under which an index in it is out of range."""
        match tgt:
            case ir.VarRef(var=vi, primed=False):
                return [(true(), self.enc.offsets[vi])], false()
            case ir.Field(base=b, name=name):
                cands, err = self.lvalue(b)
                off, _ = ir.slot_offset(b.type, name)
                return [(c, s + off) for c, s in cands], err
            case ir.Index(base=b, index=i):
                cands, err = self.lvalue(b)
                iv, ierr = self.eval(i)
                at = b.type
                assert isinstance(at, ir.ArrayType)
                iv, outside = self.split_index(iv, at.index)  # type: ignore[arg-type]
                err = mk_or(err, ierr, outside)
                out: list[tuple[z3.BoolRef, int]] = []
                pos = _literal_position(at, iv)
                if pos is not None:  # a static index: one place
                    return [(c, s + pos) for c, s in cands], err
                for c, s in cands:
                    for v, lit in domain_lits(at.index, self.enc.num):
                        off, _ = ir.slot_offset(at, v)
                        out.append((mk_and(c, mk_eq(iv, lit)), s + off))  # type: ignore[arg-type]
                return out, err
            case _:
                raise EncodingError(f"not an assignable target: {tgt!r}")

    # -- expressions -------------------------------------------------------------------

    def var_value(self, vi: int, slots: Sequence[z3.ExprRef]) -> Value:
        var = self.enc.model.vars[vi]
        off = self.enc.offsets[vi]
        n = ir.slot_count(var.type)
        if ir.is_scalar(var.type):
            return slots[off]
        return Agg(var.type, tuple(slots[off : off + n]))

    def eval(self, e: ir.Expr) -> tuple[Value, z3.BoolRef]:
        """(value, condition under which evaluating `e` fails with a modelling error)."""
        match e:
            case ir.Lit(value=v, type=t):
                return scalar_lit(t, v, self.enc.num), false()
            case ir.VarRef(var=vi, primed=primed):
                if primed:
                    assert self.post is not None, "primed variable outside a transition property"
                    return self.var_value(vi, self.post), false()
                return self.var_value(vi, self.state), false()
            case ir.LocalRef(sym=sym):
                return self.locals[sym.id], false()
            case ir.Field(base=b, name=name):
                bv, err = self.eval(b)
                assert isinstance(bv, Agg) and isinstance(bv.type, ir.StructType)
                off, ft = ir.slot_offset(bv.type, name)
                n = ir.slot_count(ft)
                sub = bv.slots[off : off + n]
                return (sub[0] if ir.is_scalar(ft) else Agg(ft, tuple(sub))), err
            case ir.Index(base=b, index=i):
                bv, berr = self.eval(b)
                iv, ierr = self.eval(i)
                assert isinstance(bv, Agg) and isinstance(bv.type, ir.ArrayType)
                assert isinstance(iv, z3.ExprRef)
                iv, outside = self.split_index(iv, bv.type.index)
                val = _select(bv, iv, self.enc.num)
                return val, mk_or(berr, ierr, outside)
            case ir.Unary(op=op, operand=o):
                v, err = self.eval(o)
                if op is ir.UnOp.NOT:
                    return mk_not(v), err  # type: ignore[arg-type]
                k = const_int(v)  # type: ignore[arg-type]
                return (self.enc.num.lit(-k) if k is not None else -v), err  # type: ignore[operator]
            case ir.Binary():
                return self.binary(e)
            case ir.Ite(cond=c, then=th, else_=el):
                cv, cerr = self.eval(c)
                tv, terr = self.eval(th)
                fv, ferr = self.eval(el)
                assert isinstance(cv, z3.BoolRef)
                err = mk_or(cerr, mk_and(cv, terr), mk_and(mk_not(cv), ferr))
                return _ite_value(cv, tv, fv), err
            case ir.Fold():
                return self.fold(e)
            case _:
                raise EncodingError(f"unsupported expression {e!r}")

    def binary(self, e: ir.Binary) -> tuple[Value, z3.BoolRef]:
        op = e.op
        a, aerr = self.eval(e.lhs)
        b, berr = self.eval(e.rhs)
        if op in (ir.BinOp.AND, ir.BinOp.OR, ir.BinOp.IMPLIES):
            assert isinstance(a, z3.BoolRef) and isinstance(b, z3.BoolRef)
            if op is ir.BinOp.AND:
                return mk_and(a, b), mk_or(aerr, mk_and(a, berr))
            if op is ir.BinOp.OR:
                return mk_or(a, b), mk_or(aerr, mk_and(mk_not(a), berr))
            return mk_or(mk_not(a), b), mk_or(aerr, mk_and(a, berr))
        err = mk_or(aerr, berr)
        if op in ir.EQUALITY_OPS:
            eq = _values_equal(a, b)
            return (eq if op is ir.BinOp.EQ else mk_not(eq)), err
        assert not isinstance(a, (Agg, z3.BoolRef)) and not isinstance(b, (Agg, z3.BoolRef)), e
        num = self.enc.num
        ka, kb = const_int(a), const_int(b)
        match op:
            case ir.BinOp.ADD:
                r = num.lit(ka + kb) if ka is not None and kb is not None else a + b
            case ir.BinOp.SUB:
                r = num.lit(ka - kb) if ka is not None and kb is not None else a - b
            case ir.BinOp.MUL:
                r = num.lit(ka * kb) if ka is not None and kb is not None else a * b
            case ir.BinOp.DIV | ir.BinOp.MOD:
                zero = z3.BoolVal(kb == 0) if kb is not None else (b == num.lit(0))
                err = mk_or(err, zero)
                if ka is not None and kb is not None and kb != 0:
                    r = num.lit(ka // kb if op is ir.BinOp.DIV else ka % kb)
                else:
                    r = num.div(a, b) if op is ir.BinOp.DIV else num.mod(a, b)
            case ir.BinOp.LT:
                return (a < b), err
            case ir.BinOp.LE:
                return (a <= b), err
            case ir.BinOp.GT:
                return (a > b), err
            case ir.BinOp.GE:
                return (a >= b), err
            case _:
                raise EncodingError(f"unsupported operator {op}")
        return r, err  # type: ignore[return-value]

    def fold(self, e: ir.Fold) -> tuple[Value, z3.BoolRef]:
        dom = domain_lits(e.binder.type, self.enc.num)
        saved = self.locals.get(e.binder.id)
        vals: list[z3.ExprRef] = []
        errs: list[z3.BoolRef] = []
        for _, lit in dom:
            budget.poll()  # NOTE(time-limit): a fold over thousands of elements
            self.locals[e.binder.id] = lit
            v, err = self.eval(e.body)
            assert isinstance(v, z3.ExprRef)
            vals.append(v)
            errs.append(err)
        if saved is None:
            self.locals.pop(e.binder.id, None)
        else:
            self.locals[e.binder.id] = saved
        match e.kind:
            case ir.FoldKind.ALL | ir.FoldKind.ANY:
                # short-circuit: element i is evaluated only while the result is undecided
                going = true()
                err_terms: list[z3.BoolRef] = []
                for v, err in zip(vals, errs):
                    err_terms.append(mk_and(going, err))
                    going = mk_and(going, v if e.kind is ir.FoldKind.ALL else mk_not(v))  # type: ignore[arg-type]
                val = mk_and(*vals) if e.kind is ir.FoldKind.ALL else mk_or(*vals)  # type: ignore[arg-type]
                return val, mk_or(*err_terms)
            case ir.FoldKind.COUNT:
                return self.enc.num.sum([mk_ite(v, self.enc.num.lit(1), self.enc.num.lit(0)) for v in vals]), mk_or(*errs)  # type: ignore[arg-type]
            case ir.FoldKind.SUM:
                return self.enc.num.sum(vals), mk_or(*errs)
            case ir.FoldKind.MIN | ir.FoldKind.MAX:
                acc = vals[0]
                for v in vals[1:]:
                    better = (v < acc) if e.kind is ir.FoldKind.MIN else (v > acc)  # type: ignore[operator]
                    acc = mk_ite(better, v, acc)
                return acc, mk_or(*errs)
        raise EncodingError(f"unsupported fold {e.kind}")


def _literal_position(at: ir.ArrayType, idx: z3.ExprRef) -> int | None:
    """The slot offset of element `idx` in an array of type `at` when `idx` is a literal
    inside the index domain, else None."""
    if z3.is_true(idx) or z3.is_false(idx):
        v: int | None = 1 if z3.is_true(idx) else 0
    else:
        v = const_int(idx)
    if v is None:
        return None
    dom = ir.domain_values(at.index)  # type: ignore[arg-type]
    if v not in dom:
        return None
    return (v - dom.start) * ir.slot_count(at.elem)


def _select(arr: Agg, idx: z3.ExprRef, num: Num) -> Value:
    """`arr[idx]`: the element at a literal index, else an ite-chain over the domain."""
    at = arr.type
    assert isinstance(at, ir.ArrayType)
    n = ir.slot_count(at.elem)
    pos = _literal_position(at, idx)
    if pos is not None:
        sl = arr.slots[pos : pos + n]
        return sl[0] if ir.is_scalar(at.elem) else Agg(at.elem, tuple(sl))
    elems: list[tuple[z3.ExprRef, tuple[z3.ExprRef, ...]]] = []
    for v, lit in domain_lits(at.index, num):
        off, _ = ir.slot_offset(at, v)
        elems.append((lit, arr.slots[off : off + n]))
    k = const_int(idx)
    chosen: tuple[z3.ExprRef, ...] | None = None
    if k is not None or z3.is_true(idx) or z3.is_false(idx):
        for lit, sl in elems:
            if z3.is_true(mk_eq(lit, idx)):
                chosen = sl
        if chosen is None:  # out of range: an error is reported, the value is irrelevant
            chosen = elems[-1][1]
    else:
        cur = list(elems[-1][1])
        for i, (lit, sl) in enumerate(reversed(elems[:-1])):
            if not i & 0xFF:
                budget.poll()  # NOTE(time-limit): an ite-chain over a large array
            c = mk_eq(idx, lit)
            cur = [mk_ite(c, a, b) for a, b in zip(sl, cur)]
        chosen = tuple(cur)
    return chosen[0] if ir.is_scalar(at.elem) else Agg(at.elem, tuple(chosen))


def _ite_value(c: z3.BoolRef, a: Value, b: Value) -> Value:
    if isinstance(a, Agg):
        assert isinstance(b, Agg)
        return Agg(a.type, tuple(mk_ite(c, x, y) for x, y in zip(a.slots, b.slots)))
    assert isinstance(b, z3.ExprRef)
    return mk_ite(c, a, b)


def _values_equal(a: Value, b: Value) -> z3.BoolRef:
    if isinstance(a, Agg):
        assert isinstance(b, Agg) and len(a.slots) == len(b.slots)
        return all_of(mk_eq(x, y) for x, y in zip(a.slots, b.slots))
    assert isinstance(b, z3.ExprRef)
    return mk_eq(a, b)


# ---------------------------------------------------------------------------------------------
# Error freedom, expanded over instances (usable under negation, unlike `Encoder.error`)


def error_free(enc: Encoder, s: State) -> z3.BoolRef:
    """No action instance fails with a modelling error in `s` (or `s` is not expanded)."""

    def build(ts: State, _: State) -> z3.BoolRef:
        fails = []
        for ai, vals in enc.instances():
            budget.poll()  # NOTE(time-limit)
            fails.append(enc.step(ai, ts, enc.instance_args(ai, vals)).error)
        return mk_or(mk_not(enc.in_constraints(ts)), mk_not(mk_or(*fails)))

    return enc._instantiate(("error_free",), build, s)

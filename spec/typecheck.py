# over 600 lines: one class (_Checker) walks the AST once; its split (declarations vs expressions) waits for the others' edits (issue 34)
"""AST → IR: resolve names, evaluate constants (with overrides), check types, report every
error at once.

The checker never mutates the AST. It keeps going after an error (an erroneous expression
lowers to a placeholder of the expected type) so that one run reports all problems; the
phase gate at the end raises `SpecTypeError` (or `ConstantError` for bad overrides)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Iterator, Mapping

from gpcheck.spec import ir
from gpcheck.spec import syntax as S
from gpcheck.spec.affinity import NONE, Clause, Deps, affinity, clauses, closure
from gpcheck.spec.errors import ConstantError, Diagnostics, SpecTypeError
from gpcheck.spec.ir import BOOL, INT, BinOp, FoldKind
from gpcheck.spec.retired import retired_cost
from gpcheck.spec.limits import MAX_DOMAIN, MAX_INITIAL_STATES, MAX_INSTANCES, MAX_INT, MAX_SLOTS, MAX_UNROLL
from gpcheck.spec.assume import has_prime, lower
from gpcheck.spec.span import NO_SPAN, Span
from gpcheck.spec.symmetry import check_symmetry


class _Poison(Exception):
    """Raised inside one expression after its error was recorded; caught at statement level."""


@dataclass
class _Scope:
    """Local names (parameters, lets, binders), innermost last."""

    frames: list[dict[str, ir.Symbol]] = field(default_factory=lambda: [{}])

    def lookup(self, name: str) -> ir.Symbol | None:
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        return None

    def push(self) -> None:
        self.frames.append({})

    def pop(self) -> None:
        self.frames.pop()

    def bind(self, sym: ir.Symbol) -> None:
        self.frames[-1][sym.name] = sym


class _Checker:
    def __init__(self, spec: S.Spec, overrides: Mapping[str, int], diags: Diagnostics):
        self.spec = spec
        self.overrides = dict(overrides)
        self.d = diags
        self.consts: dict[str, ir.Constant] = {}
        self.enums: dict[str, ir.EnumType] = {}
        self.members: dict[str, tuple[ir.EnumType, int]] = {}
        self.structs: dict[str, ir.StructType] = {}
        self.symtypes: dict[str, ir.IntType] = {}  # `symmetric NAME = lo..hi` (NOTE(symmetry))
        self.vars: dict[str, ir.Var] = {}
        self.var_list: list[ir.Var] = []
        self.decl_spans: dict[str, Span] = {}
        self.ids = itertools.count()
        self.scope = _Scope()
        self.fixed: dict[str, ir.Lit] = {}  # NOTE(instance-properties): names read as one value
        self.primed_ok = False
        self.priming = False
        # Names whose declaration had an error: their uses fail silently (no cascades).
        self.poisoned: set[str] = set()
        # Running totals checked against spec/limits.py as variables are declared.
        self.slots = 0
        self.initial_states = 1
        self.unroll = 1  # iterations of the `for` loops and folds enclosing the current point
        # NOTE(nonaffine-constants): each constant's dependence on the others (spec/affinity.py),
        # and for the folded integers the clauses under which they are not affine, with where
        self.const_deps: dict[str, Deps] = {}
        self.nonaffine: dict[tuple[tuple[tuple[str, ...], ...], str], None] = {}

    # ------------------------------------------------------------------ top level
    def run(self) -> ir.Model:
        for name in self.overrides:
            if not any(isinstance(d, S.ConstDecl) and d.name == name for d in self.spec.decls):
                known = ", ".join(d.name for d in self.spec.decls if isinstance(d, S.ConstDecl)) or "none"
                self.d.error(None, f"--const {name}: the model has no constant {name} (constants: {known})")
        # Declarations that introduce names are processed in order (use after declaration).
        for decl in self.spec.decls:
            match decl:
                case S.ConstDecl():
                    self._const(decl)
                case S.EnumDecl():
                    self._enum(decl)
                case S.StructDecl():
                    self._struct(decl)
                case S.VarDecl():
                    self._var(decl)
                case S.SymmetricDecl():
                    self._symmetric(decl)
                case _:
                    pass
        fair_names: dict[str, Span] = {}
        for decl in self.spec.decls:
            if isinstance(decl, S.FairDecl):
                for n, sp in decl.names:
                    fair_names[n] = sp
        actions: list[ir.Action] = []
        invariants: list[ir.Invariant] = []
        transitions: list[ir.TransitionProperty] = []
        liveness: list[ir.Liveness] = []
        terminals: list[ir.Expr] = []
        constraints: list[ir.Constraint] = []
        expects: list[S.ExpectDecl] = []
        latencies: list[ir.Latency] = []
        assumptions: list[ir.Assumption] = []
        covers: list[ir.Cover] = []
        self.guard_assumptions: dict[str, list[tuple[str, Span]]] = {}
        allow_deadlock = False
        prop_names: dict[str, Span] = {}
        for decl in self.spec.decls:
            self.scope = _Scope()  # no local survives its declaration
            match decl:
                case S.ActionDecl():
                    if self._claim(decl.name, decl.span, "action"):
                        a = self._action(decl, decl.name in fair_names)
                        if a is not None:
                            actions.append(a)
                case S.InvariantDecl(name=name, expr=e, span=sp):
                    if self._prop_name(name, sp, prop_names):
                        x = self._bool_expr(e)
                        if x is not None:
                            invariants.append(ir.Invariant(name, x, sp))
                case S.TransitionDecl(name=name, expr=e, span=sp):
                    if self._prop_name(name, sp, prop_names):
                        self.primed_ok = True
                        x = self._bool_expr(e)
                        self.primed_ok = False
                        if x is not None:
                            transitions.append(ir.TransitionProperty(name, x, sp))
                case S.LivenessDecl(each=S.Each()) | S.LatencyDecl(each=S.Each()):
                    self._each_element(decl, prop_names, liveness, latencies)  # NOTE(instance-properties)
                case S.LivenessDecl(name=name, kind=kind, p=p, q=q, span=sp):
                    if self._prop_name(name, sp, prop_names):
                        xp = self._bool_expr(p) if p is not None else None
                        xq = self._bool_expr(q)
                        if xq is not None and (p is None or xp is not None):
                            liveness.append(ir.Liveness(name, kind, xp, xq, sp))
                case S.TerminalDecl(expr=e):
                    x = self._bool_expr(e)
                    if x is not None:
                        terminals.append(x)
                case S.ConstraintDecl(name=name, expr=e, span=sp):
                    x = self._bool_expr(e)
                    if x is not None:
                        constraints.append(ir.Constraint(name, x, sp))
                case S.AllowDeadlock():
                    allow_deadlock = True
                case S.ExpectDecl():
                    expects.append(decl)
                case S.LatencyDecl(name=name, span=sp):
                    if self._prop_name(name, sp, prop_names):
                        lat = self._latency(decl)
                        if lat is not None:
                            latencies.append(lat)
                case S.AssumeDecl():
                    asm = self._assume(decl, assumptions)
                    if asm is not None:
                        assumptions.append(asm)
                case S.CoverDecl(name=name, expr=e, span=sp):
                    if self._prop_name(name, sp, prop_names):
                        x = self._bool_expr(e)
                        if x is not None:
                            covers.append(ir.Cover(name, x, sp))
                case _:
                    pass
        action_names = {a.name for a in self.spec.decls if isinstance(a, S.ActionDecl)}
        for n, sp in fair_names.items():
            if n not in action_names:
                self.d.error(sp, f"fair action '{n}' is not declared")
        expectations = self._expectations(expects, set(prop_names))
        assumptions += self._guard_assumptions(assumptions)
        model = ir.Model(
            name=self.spec.name,
            description=self.spec.description,
            doc=self.spec.doc,
            file=self.spec.file,
            constants=tuple(self.consts.values()),
            enums=tuple(self.enums.values()),
            structs=tuple(self.structs.values()),
            vars=tuple(self.var_list),
            actions=tuple(actions),
            invariants=tuple(invariants),
            transitions=tuple(transitions),
            liveness=tuple(liveness),
            terminals=tuple(terminals),
            constraints=tuple(constraints),
            allow_deadlock=allow_deadlock,
            expectations=expectations,
            symmetric=tuple(t for t in self.symtypes.values() if t.symmetric),
            latencies=tuple(latencies),
            nonaffine=tuple(self.nonaffine),
            assumptions=tuple(assumptions),
            covers=tuple(covers),
        )
        if not self.d.errors:  # on a well-typed model only (placeholders would mislead it)
            # the assumptions and covers as the properties they read like (before lowering:
            # the snapshots of a step assumption name array positions one by one)
            check_symmetry(replace(
                model, invariants=model.invariants + tuple(ir.Invariant(c.name, c.expr, c.span) for c in covers),
                transitions=model.transitions + tuple(
                    ir.TransitionProperty(a.name, a.expr, a.span) for a in assumptions if a.expr is not None)), self.d)
        if assumptions and not self.d.errors:
            model = replace(model, actions=tuple(lower(list(model.actions), assumptions, self._snapshot_symbol)))
        return model

    def _snapshot_symbol(self, name: str, t: ir.Type) -> ir.Symbol:
        """A fresh local for spec/assume.py (no user name can clash: it is found by id)."""
        return ir.Symbol(next(self.ids), name, t)

    def _assume(self, decl: S.AssumeDecl, seen: list[ir.Assumption]) -> ir.Assumption | None:
        """`assume NAME: EXPR` (NOTE(assumptions)): a state assumption, or with primes a step one."""
        if any(a.name == decl.name for a in seen):
            first = next(a for a in seen if a.name == decl.name)
            self.d.error(decl.span, f"assumption '{decl.name}' is already declared", (first.span, "first declared here"))
            return None
        self.primed_ok = True
        try:
            x = self._bool_expr(decl.expr)
        finally:
            self.primed_ok = False
        if x is None:
            return None
        if has_prime(x):
            bad = _aggregate_outside_equality(x)
            if bad is not None:
                self.d.error(bad.span if bad.span is not NO_SPAN else decl.expr.span,
                             "a step assumption compares a whole array or struct of the pre-state only with == or !=")
                return None
            return ir.Assumption(decl.name, "step", x, (), decl.span)
        return ir.Assumption(decl.name, "state", x, (), decl.span)

    def _guard_assumptions(self, declared: list[ir.Assumption]) -> list[ir.Assumption]:
        """The `require assume NAME: ...` guards, one assumption per name (it may guard several actions)."""
        out = []
        for name, uses in self.guard_assumptions.items():
            clash = next((a for a in declared if a.name == name), None)
            if clash is not None:
                self.d.error(uses[0][1], f"assumption '{name}' is already declared (by an 'assume')",
                             (clash.span, "declared here"))
                continue
            actions = tuple(dict.fromkeys(a for a, _ in uses))
            out.append(ir.Assumption(name, "guard", None, actions, uses[0][1]))
        return out

    def _expectations(self, expects: list[S.ExpectDecl], props: set[str]) -> tuple[ir.Expectation, ...]:
        out = []
        seen: set[str] = set()
        for e in expects:
            if e.property not in props and e.property not in ir.BUILTIN_PROPERTIES:
                self.d.error(e.span, f"expect: no property named '{e.property}'")
                continue
            if e.verdict not in ir.EXPECTABLE_VERDICTS:
                self.d.error(e.span, f"expect: unknown verdict '{e.verdict}' (one of {', '.join(ir.EXPECTABLE_VERDICTS)})")
                continue
            if e.property in seen:
                self.d.error(e.span, f"expect: '{e.property}' already has an expectation")
                continue
            seen.add(e.property)
            out.append(ir.Expectation(e.property, e.verdict, e.span))
        return tuple(out)

    def _claim(self, name: str, span: Span, what: str) -> bool:
        """Register a global name; report a clash with an earlier declaration."""
        if name in self.decl_spans:
            self.d.error(span, f"{what} '{name}' is already declared", (self.decl_spans[name], "first declared here"))
            return False
        self.decl_spans[name] = span
        return True

    def _prop_name(self, name: str, span: Span, seen: dict[str, Span]) -> bool:
        if name in ir.BUILTIN_PROPERTIES:
            # the engines report results of these names (and name output files after them)
            self.d.error(span, f"property '{name}' is a built-in result name (deadlock and range are "
                               "reported by every engine); choose another name")
            return False
        if name in seen:
            self.d.error(span, f"property '{name}' is already declared", (seen[name], "first declared here"))
            return False
        seen[name] = span
        return True

    # ------------------------------------------------------------------ constants
    def _const(self, decl: S.ConstDecl) -> None:
        if not self._claim(decl.name, decl.span, "constant"):
            return
        try:
            default = self._const_eval(decl.value)
        except _Poison:
            self.poisoned.add(decl.name)
            return
        value = self.overrides.get(decl.name, default)
        self.const_deps[decl.name] = NONE if decl.name in self.overrides else affinity(decl.value, self.const_deps)
        if abs(value) > MAX_INT:
            self.d.error(decl.span, f"--const {decl.name}={_digits(value)}: a constant is at most 2^62 = {MAX_INT} "
                                    f"in magnitude")
            self.poisoned.add(decl.name)
            return
        self.consts[decl.name] = ir.Constant(
            decl.name, value, default, decl.doc, decl.name in self.overrides, decl.span
        )

    def _const_use(self, e: S.Expr) -> int:
        """`_const_eval` where the value lands in the IR (a range bound, an initial value, a
        latency bound): noting the constants it depends on other than affinely."""
        value = self._const_eval(e)
        self._note_nonaffine(clauses(affinity(e, self.const_deps), self.const_deps), e.span)
        return value

    def _note_nonaffine(self, clauses: frozenset[Clause], span: Span) -> None:
        if not clauses:
            return
        deps = self.const_deps
        for clause in sorted(tuple(tuple(sorted(closure(part, deps))) for part in c) for c in clauses):
            self.nonaffine[(clause, str(span))] = None

    def _const_eval(self, e: S.Expr) -> int:
        """Evaluate a constant integer expression (literals, constants, arithmetic, if)."""
        match e:
            case S.IntLit(value=v):
                return v
            case S.Name(name=n, span=sp):
                if n in self.consts:
                    return self.consts[n].value
                self.d.error(sp, f"'{n}' is not a constant" if n in self.decl_spans else f"unknown constant '{n}'")
                raise _Poison
            case S.Neg(operand=o):
                return -self._const_eval(o)
            case S.BinE(op=op, lhs=l, rhs=r, span=sp) if op in ir.ARITH_OPS:
                a, b = self._const_eval(l), self._const_eval(r)
                if op in (BinOp.DIV, BinOp.MOD) and b == 0:
                    self.d.error(sp, "division by zero in a constant expression")
                    raise _Poison
                v = _arith(op, a, b)
                if abs(v) > MAX_INT:
                    self.d.error(sp, f"constant expression too large: {_digits(v)} is beyond 2^62 = {MAX_INT}")
                    raise _Poison
                return v
            case S.IteE(cond=c, then=t, else_=f):
                return self._const_eval(t) if self._const_cond(c) else self._const_eval(f)
            case _:
                self.d.error(e.span, "expected a constant integer expression")
                raise _Poison

    def _const_cond(self, e: S.Expr) -> bool:
        match e:
            case S.BoolLit(value=v):
                return v
            case S.BinE(op=op, lhs=l, rhs=r) if op in ir.ORDER_OPS or op in ir.EQUALITY_OPS:
                return bool(_compare(op, self._const_eval(l), self._const_eval(r)))
            case S.BinE(op=BinOp.AND, lhs=l, rhs=r):
                return self._const_cond(l) and self._const_cond(r)
            case S.BinE(op=BinOp.OR, lhs=l, rhs=r):
                return self._const_cond(l) or self._const_cond(r)
            case S.Not(operand=o):
                return not self._const_cond(o)
            case _:
                self.d.error(e.span, "expected a constant condition")
                raise _Poison

    # ------------------------------------------------------------------ types
    def _enum(self, decl: S.EnumDecl) -> None:
        if not self._claim(decl.name, decl.span, "enum"):
            return
        names = []
        for m, sp in decl.members:
            if m in names:
                self.d.error(sp, f"enum member '{m}' appears twice in '{decl.name}'")
                continue
            if not self._claim(m, sp, "enum member"):
                continue
            names.append(m)
        t = ir.EnumType(decl.name, tuple(names))
        self.enums[decl.name] = t
        for i, m in enumerate(names):
            self.members[m] = (t, i)

    def _decl_of(self, name: str) -> S.Decl | None:
        return next((d for d in self.spec.decls if getattr(d, "name", None) == name), None)

    def _symmetric(self, decl: S.SymmetricDecl) -> None:
        if not self._claim(decl.name, decl.span, "symmetric type"):
            return
        t = self._type(decl.range)
        if isinstance(t, ir.IntType) and self._domain_ok(t, decl.range.span, "a symmetric type"):
            self.symtypes[decl.name] = ir.IntType(t.lo, t.hi, symmetric=decl.name if decl.symmetric else None)
        else:
            self.poisoned.add(decl.name)

    def _struct(self, decl: S.StructDecl) -> None:
        if not self._claim(decl.name, decl.span, "struct"):
            return
        fields: list[tuple[str, ir.Type]] = []
        seen: set[str] = set()
        for fname, ftype, sp in decl.fields:
            if fname in seen:
                self.d.error(sp, f"field '{fname}' appears twice in struct '{decl.name}'")
                continue
            seen.add(fname)
            t = self._type(ftype)
            if t is not None:
                fields.append((fname, t))
        self.structs[decl.name] = ir.StructType(decl.name, tuple(fields))

    def _type(self, t: S.TypeExpr) -> ir.Type | None:
        match t:
            case S.BoolT():
                return BOOL
            case S.RangeT(lo=lo, hi=hi, span=sp):
                try:
                    a, b = self._const_use(lo), self._const_use(hi)
                except _Poison:
                    return None
                if a > b:
                    self._bad_range(sp, a, b, lo, hi)
                    return None
                return ir.IntType(a, b)
            case S.NamedT(name=n, span=sp):
                if n in self.enums:
                    return self.enums[n]
                if n in self.structs:
                    return self.structs[n]
                if n in self.symtypes:
                    return self.symtypes[n]
                if n in self.poisoned and isinstance(self._decl_of(n), S.SymmetricDecl):
                    return None  # its declaration's error was reported
                if n == "int":
                    self.d.error(sp, "an unbounded 'int' cannot be a variable type; give a range such as 0..N")
                else:
                    self.d.error(sp, f"unknown type '{n}'")
                return None
            case S.ArrayT(index=i, elem=e, span=sp):
                it, et = self._type(i), self._type(e)
                if it is None or et is None:
                    return None
                if not isinstance(it, (ir.IntType, ir.EnumType, ir.BoolType)):
                    self.d.error(i.span, f"an array index must be a range, an enum or bool, not {it}")
                    return None
                if not self._domain_ok(it, i.span, "an array index"):
                    return None
                arr = ir.ArrayType(it, et)
                n = ir.slot_count(arr)
                if n > MAX_SLOTS:
                    self.d.error(sp, f"array too large: {n} slots (the limit is {MAX_SLOTS} slots per model)")
                    return None
                return arr
        raise AssertionError(t)

    def _bad_range(self, sp: Span, a: int, b: int, lo: S.Expr, hi: S.Expr) -> None:
        used = sorted(self._const_names(lo) | self._const_names(hi))
        over = [n for n in used if n in self.overrides]
        msg = f"empty range {a}..{b}: the lower bound is above the upper bound"
        if over:
            vals = ", ".join(f"{n}={self.consts[n].value}" for n in over)
            self.d.error(sp, msg + f" with --const {vals}")
        else:
            vals = ", ".join(f"{n}={self.consts[n].value}" for n in used if n in self.consts)
            self.d.error(sp, msg + (f" ({vals})" if vals else ""))

    def _const_names(self, e: S.Expr) -> set[str]:
        match e:
            case S.Name(name=n):
                return {n}
            case S.Neg(operand=o):
                return self._const_names(o)
            case S.BinE(lhs=l, rhs=r):
                return self._const_names(l) | self._const_names(r)
            case S.IteE(cond=c, then=t, else_=f):
                return self._const_names(c) | self._const_names(t) | self._const_names(f)
        return set()

    def _domain(self, t: S.TypeExpr, allow_empty: bool = False) -> ir.IntType | ir.EnumType | ir.BoolType | None:
        """A parameter's or binder's domain; `for` loops and folds may range over an empty
        range (they run zero times), a parameter may not."""
        if allow_empty and isinstance(t, S.RangeT):
            try:
                rt = ir.IntType(self._const_use(t.lo), self._const_use(t.hi))
            except _Poison:
                return None
            return rt if self._domain_ok(rt, t.span, "a binder") else None
        ty = self._type(t)
        if ty is None:
            return None
        if not isinstance(ty, (ir.IntType, ir.EnumType, ir.BoolType)):
            self.d.error(t.span, f"a parameter or binder ranges over a range, an enum or bool, not {ty}")
            return None
        return ty if self._domain_ok(ty, t.span, "a parameter or binder") else None

    def _enter_loop(self, d: ir.IntType | ir.EnumType | ir.BoolType, span: Span) -> int | None:
        """Account for a `for` loop or fold over `d` (the Z3 encoding unrolls them, the
        interpreter runs them on every step): the enclosing count before it, or None (reported)
        when nested loops and folds would unroll past MAX_UNROLL."""
        outer = self.unroll
        n = outer * max(_domain_size(d), 1)
        if n > MAX_UNROLL:
            self.d.error(span, f"loops nested too wide: with this one the enclosing 'for' loops and folds run "
                               f"{n} iterations (the limit is {MAX_UNROLL})")
            return None
        self.unroll = n
        return outer

    def _domain_ok(self, t: ir.IntType | ir.EnumType | ir.BoolType, span: Span, what: str) -> bool:
        """Is an enumerated domain within MAX_DOMAIN values (spec/limits.py)? Reports it if not."""
        n = _domain_size(t)
        if n > MAX_DOMAIN:
            self.d.error(span, f"domain too large: {t} has {n} values; {what} ranges over at most {MAX_DOMAIN}")
            return False
        return True

    # ------------------------------------------------------------------ variables
    def _var(self, decl: S.VarDecl) -> None:
        if not self._claim(decl.name, decl.span, "variable"):
            return
        t = self._type(decl.type)
        if t is None:
            self.poisoned.add(decl.name)
            return
        self.slots += ir.slot_count(t)
        if self.slots > MAX_SLOTS:
            self.d.error(decl.span, f"state too large: with '{decl.name}' the variables have {self.slots} slots "
                                    f"(the limit is {MAX_SLOTS})")
            self.poisoned.add(decl.name)
            return
        try:
            init = tuple(self._init(decl.init, t))
        except _Poison:
            self.poisoned.add(decl.name)
            return
        for (_, st), v in zip(ir.leaf_paths(t), init):
            if v is None:
                self.initial_states *= _domain_size(st)  # type: ignore[arg-type]
        if self.initial_states > MAX_INITIAL_STATES:
            self.d.error(decl.init.span, f"too many initial states: with the 'any' values of '{decl.name}' there are "
                                         f"{_digits(self.initial_states)} (the limit is {MAX_INITIAL_STATES})")
            self.initial_states = 1
            self.poisoned.add(decl.name)
            return
        v = ir.Var(len(self.var_list), decl.name, t, init, decl.doc, decl.span)
        self.vars[decl.name] = v
        self.var_list.append(v)

    def _init(self, init: S.Init, t: ir.Type) -> Iterator[int | None]:
        """The flat per-slot initial values of a value of type `t` (NOTE(slots))."""
        match init:
            case S.AnyInit():
                yield from (None for _ in range(ir.slot_count(t)))
            case S.ListInit(items=items, span=sp):
                if isinstance(t, ir.ArrayType):
                    n = len(ir.domain_values(t.index))
                    if len(items) != n:
                        self.d.error(sp, f"the array has {n} elements but the initialiser lists {len(items)}")
                        raise _Poison
                    for it in items:
                        yield from self._init(it, t.elem)
                elif isinstance(t, ir.StructType):
                    if len(items) != len(t.fields):
                        self.d.error(sp, f"struct {t.name} has {len(t.fields)} fields but the initialiser lists {len(items)}")
                        raise _Poison
                    for it, (_, ft) in zip(items, t.fields):
                        yield from self._init(it, ft)
                else:
                    self.d.error(sp, f"a list initialiser needs an array or struct, not {t}")
                    raise _Poison
            case S.StructInit(items=items, span=sp) if isinstance(t, ir.StructType):
                given = dict(items)
                for k in given:
                    if t.field_type(k) is None:
                        self.d.error(sp, f"struct {t.name} has no field '{k}'")
                        raise _Poison
                for fname, ft in t.fields:
                    if fname not in given:
                        self.d.error(sp, f"the initialiser does not give field '{fname}' of {t.name}")
                        raise _Poison
                    yield from self._init(given[fname], ft)
            case _ if isinstance(t, ir.ArrayType):
                # A single value or record initialises every element.
                for _ in ir.domain_values(t.index):
                    yield from self._init(init, t.elem)
            case S.StructInit(span=sp):
                self.d.error(sp, f"a field initialiser needs a struct, not {t}")
                raise _Poison
            case _ if isinstance(t, ir.StructType):
                for _, ft in t.fields:
                    yield from self._init(init, ft)
            case _:
                yield self._init_scalar(init, t)  # type: ignore[arg-type]

    def _init_scalar(self, e: S.Expr, t: ir.ScalarType) -> int:
        if isinstance(t, ir.BoolType):
            if isinstance(e, S.BoolLit):
                return int(e.value)
            self.d.error(e.span, "expected true or false")
            raise _Poison
        if isinstance(t, ir.EnumType):
            if isinstance(e, S.Name) and e.name in self.members and self.members[e.name][0] == t:
                return self.members[e.name][1]
            self.d.error(e.span, f"expected a member of {t.name} ({', '.join(t.members)})")
            raise _Poison
        v = self._const_use(e)
        if not ir.scalar_in_range(t, v):
            self.d.error(e.span, f"initial value {v} is outside {t}")
            raise _Poison
        return v

    # ------------------------------------------------------------------ actions
    def _fresh(self, name: str, t: ir.Type, span: Span) -> ir.Symbol | None:
        """A new local; rejects names that shadow a global or an enclosing local."""
        if name in self.vars:
            self.d.error(span, f"'{name}' shadows the state variable '{name}'", (self.vars[name].span, "declared here"))
        elif name in self.consts:
            self.d.error(span, f"'{name}' shadows the constant '{name}'")
        elif name in self.members:
            self.d.error(span, f"'{name}' shadows the enum member '{name}'")
        elif self.scope.lookup(name) is not None:
            self.d.error(span, f"'{name}' shadows an enclosing local '{name}'")
        else:
            return ir.Symbol(next(self.ids), name, t, span)
        return None

    def _action(self, decl: S.ActionDecl, fair_decl: bool) -> ir.Action | None:
        self.scope = _Scope()
        self.action_name = decl.name
        params = []
        ok = True
        for p in decl.params:
            dom = self._domain(p.type)
            if dom is None:
                ok = False
                continue
            sym = self._fresh(p.name, dom, p.span)
            if sym is None:
                ok = False
                continue
            self.scope.bind(sym)
            params.append(sym)
        instances = 1
        for sym in params:
            instances *= _domain_size(sym.type)  # type: ignore[arg-type]
        if instances > MAX_INSTANCES:
            self.d.error(decl.span, f"action '{decl.name}' has {instances} instances (the product of its parameters' "
                                    f"domains; the limit is {MAX_INSTANCES})")
            ok = False
        if decl.cost is not None:  # NOTE(retired-cost): one notion of time
            self.d.error(decl.cost, retired_cost(decl.name))
            ok = False
        timing = self._timing(decl.timing) if decl.timing is not None else None
        counter = itertools.count()
        body = self._block(decl.body, counter)
        if not ok or body is None or (decl.timing is not None and timing is None):
            return None
        return ir.Action(decl.name, tuple(params), body, decl.internal, decl.fair or fair_decl, decl.span,
                         time=timing)

    def _timing(self, t: S.Timing) -> ir.Timing | None:
        """NOTE(timed): `time L..U`: integer bounds over constants, parameters and the state (no
        primes); constant bounds must satisfy 0 <= L <= U (computed ones are checked when an
        instance becomes enabled)."""
        lo = self._duration(t.lower)
        hi = lo if t.upper is t.lower else (self._duration(t.upper) if t.upper is not None else None)
        if lo is None or (t.upper is not None and hi is None):
            return None
        if isinstance(lo, ir.Lit) and isinstance(hi, ir.Lit) and hi.value < lo.value:
            self.d.error(t.span, f"the time bounds are empty: the lower bound {lo.value} exceeds the upper bound {hi.value}")
            return None
        return ir.Timing(lo, hi, t.urgent, t.span)

    def _duration(self, e: S.Expr, what: str = "a time bound") -> ir.Expr | None:
        """A time bound (NOTE(timed)): an integer expression over constants, the parameters and
        the state (no primes, no `let` of the body); a constant one must not be negative (a
        computed one is checked when it is evaluated)."""
        try:
            x = self._expr(e)
        except _Poison:
            return None
        if not isinstance(x.type, ir.IntType):
            self.d.error(e.span, f"{what} is an integer expression (a duration), found {_tname(x.type)}")
            return None
        if isinstance(x, ir.Lit) and x.value < 0:
            self.d.error(e.span, f"{what} is a duration and cannot be negative ({x.value})")
            return None
        return x

    def _each_element(self, decl: S.LivenessDecl | S.LatencyDecl, prop_names: dict[str, Span],
                      liveness: list[ir.Liveness], latencies: list[ir.Latency]) -> None:
        """NOTE(instance-properties) in spec/instances.py: an array of instances' liveness or latency
        property, once per element v of its index, named `NAME[v].prop`, `NAME.self` read as v."""
        each = decl.each
        assert each is not None
        t = self._type(each.index)
        if t is None:
            return
        prop = decl.name[len(each.instance) + 1:]
        if isinstance(t, ir.IntType) and t.symmetric:
            self.d.error(decl.span, f"'{prop}' is a liveness or latency property of the array of instances "
                                    f"'{each.instance}', stated once per element, which names each value of the "
                                    f"symmetric type {t.symmetric} and so tells them apart: index the array by a "
                                    "plain range or enum, or drop the property")
            return
        for v in ir.domain_values(t):  # type: ignore[arg-type]
            name = f"{each.instance}[{ir.format_scalar(t, v)}].{prop}"  # type: ignore[arg-type]
            if not self._prop_name(name, decl.span, prop_names):
                continue
            self.scope = _Scope()
            self.fixed[each.element] = ir.Lit(v, INT if isinstance(t, ir.IntType) else t, decl.span)
            try:
                if isinstance(decl, S.LivenessDecl):
                    xp = self._bool_expr(decl.p) if decl.p is not None else None
                    xq = self._bool_expr(decl.q)
                    if xq is not None and (decl.p is None or xp is not None):
                        liveness.append(ir.Liveness(name, decl.kind, xp, xq, decl.span))
                else:
                    lat = self._latency(replace(decl, name=name))
                    if lat is not None:
                        latencies.append(lat)
            finally:
                del self.fixed[each.element]

    def _latency(self, decl: S.LatencyDecl) -> ir.Latency | None:
        """`latency NAME: from P to Q [within B]`: P and Q state predicates (no primes), B a
        constant integer expression >= 0 (NOTE(latency))."""
        xp = self._bool_expr(decl.p)
        xq = self._bool_expr(decl.q)
        within: int | None = None
        bad = xp is None or xq is None
        if decl.within is not None:
            try:
                within = self._const_use(decl.within)
            except _Poison:
                bad = True
            else:
                if within < 0:
                    self.d.error(decl.within.span, f"a latency bound cannot be negative ({within})")
                    bad = True
        if bad:
            return None
        assert xp is not None and xq is not None
        return ir.Latency(decl.name, xp, xq, within, decl.span)

    def _block(self, stmts: tuple[S.Stmt, ...], counter: Iterator[int]) -> tuple[ir.Stmt, ...] | None:
        self.scope.push()
        out: list[ir.Stmt] = []
        ok = True
        for s in stmts:
            x = self._stmt(s, counter)
            if x is None:
                ok = False
            else:
                out.append(x)
        self.scope.pop()
        return tuple(out) if ok else None

    def _stmt(self, s: S.Stmt, counter: Iterator[int]) -> ir.Stmt | None:
        match s:
            case S.RequireS(cond=c, span=sp, assumption=asm):
                x = self._bool_expr(c)
                if asm is not None and x is not None:
                    self.guard_assumptions.setdefault(asm, []).append((self.action_name, sp))
                return ir.Require(x, next(counter), sp, assumption=asm) if x is not None else None
            case S.LetS(name=n, value=v, span=sp):
                try:
                    x = self._expr(v)
                except _Poison:
                    return None
                if not ir.is_scalar(x.type):
                    self.d.error(v.span, f"'let' binds a scalar value; this is {x.type} (index it instead)")
                    return None
                sym = self._fresh(n, x.type, sp)
                if sym is None:
                    return None
                self.scope.bind(sym)
                return ir.Let(sym, x, sp)
            case S.AssignS(target=t, value=v, span=sp):
                return self._assign(t, v, sp)
            case S.IfS(cond=c, then=a, else_=b, span=sp):
                xc = self._bool_expr(c)
                xa = self._block(a, counter)
                xb = self._block(b, counter)
                if xc is None or xa is None or xb is None:
                    return None
                return ir.If(xc, xa, xb, sp)
            case S.ForS(name=n, domain=dom, body=body, span=sp):
                d = self._domain(dom, allow_empty=True)
                if d is None:
                    return None
                if not isinstance(d, ir.IntType):
                    self.d.error(dom.span, "a 'for' loop ranges over an integer range")
                    return None
                sym = self._fresh(n, d, sp)
                if sym is None:
                    return None
                outer = self._enter_loop(d, sp)
                if outer is None:
                    return None
                self.scope.push()
                self.scope.bind(sym)
                try:
                    xb = self._block(body, counter)
                finally:
                    self.scope.pop()
                    self.unroll = outer
                if xb is None:
                    return None
                assert d.lo is not None and d.hi is not None
                return ir.For(sym, d.lo, d.hi, xb, sp)
        raise AssertionError(s)

    def _assign(self, target: S.Expr, value: S.Expr, sp: Span) -> ir.Assign | None:
        root = _root_name(target)
        if root in self.poisoned:
            return None
        if not self._is_var_path(target):
            if root is not None and root not in self.decl_spans and self.scope.lookup(root) is None:
                self.d.error(target.span, f"unknown variable '{root}'")
            else:
                self.d.error(target.span, "only a state variable, an element or a field of one can be assigned")
            return None
        try:
            xt = self._expr(target)
            xv = self._expr(value)
        except _Poison:
            return None
        if not self._assignable(xt.type, xv.type):
            self.d.error(value.span, f"cannot assign a value of type {_tname(xv.type)} to a target of type {xt.type}")
            return None
        return ir.Assign(xt, xv, sp)

    def _is_var_path(self, e: S.Expr) -> bool:
        match e:
            case S.Name(name=n):
                return n in self.vars and self.scope.lookup(n) is None
            case S.IndexE(base=b) | S.FieldE(base=b):
                return self._is_var_path(b)
        return False

    @staticmethod
    def _assignable(target: ir.Type, value: ir.Type) -> bool:
        if isinstance(target, ir.IntType):
            return isinstance(value, ir.IntType)
        return target == value

    # ------------------------------------------------------------------ expressions
    def _bool_expr(self, e: S.Expr) -> ir.Expr | None:
        try:
            x = self._expr(e)
        except _Poison:
            return None
        if not isinstance(x.type, ir.BoolType):
            self.d.error(e.span, f"expected a bool expression, found {_tname(x.type)}")
            return None
        return x

    def _want(self, e: S.Expr, x: ir.Expr, kind: type, what: str) -> None:
        if not isinstance(x.type, kind):
            self.d.error(e.span, f"expected {what}, found {_tname(x.type)}")
            raise _Poison

    def _expr(self, e: S.Expr) -> ir.Expr:
        match e:
            case S.IntLit(value=v, span=sp):
                return ir.Lit(v, INT, sp)
            case S.BoolLit(value=v, span=sp):
                return ir.Lit(int(v), BOOL, sp)
            case S.Name(name=n, span=sp):
                return self._name(n, sp)
            case S.Prime(operand=o, span=sp):
                if not self.primed_ok:
                    self.d.error(sp, "a primed expression (x') is only allowed in a 'transition' property or an 'assume'")
                    raise _Poison
                if self.priming:
                    self.d.error(sp, "an expression is primed twice")
                    raise _Poison
                self.priming = True
                try:
                    return self._expr(o)
                finally:
                    self.priming = False
            case S.IndexE(base=b, index=i, span=sp):
                xb = self._expr(b)
                if not isinstance(xb.type, ir.ArrayType):
                    self.d.error(b.span, f"only an array can be indexed; this is {_tname(xb.type)}")
                    raise _Poison
                xi = self._expr(i)
                it = xb.type.index
                ok = (
                    isinstance(it, ir.IntType) and isinstance(xi.type, ir.IntType)
                    or isinstance(it, ir.BoolType) and isinstance(xi.type, ir.BoolType)
                    or isinstance(it, ir.EnumType) and xi.type == it
                )
                if not ok:
                    self.d.error(i.span, f"the index must be of type {it}, found {_tname(xi.type)}")
                    raise _Poison
                return ir.Index(xb, xi, xb.type.elem, sp)
            case S.FieldE(base=b, name=n, span=sp):
                xb = self._expr(b)
                if not isinstance(xb.type, ir.StructType):
                    self.d.error(sp, f"'.{n}' needs a struct; this is {_tname(xb.type)}")
                    raise _Poison
                ft = xb.type.field_type(n)
                if ft is None:
                    fields = ", ".join(f for f, _ in xb.type.fields)
                    self.d.error(sp, f"struct {xb.type.name} has no field '{n}' (fields: {fields})")
                    raise _Poison
                return ir.Field(xb, n, ft, sp)
            case S.Neg(operand=o, span=sp):
                x = self._expr(o)
                self._want(o, x, ir.IntType, "an integer")
                return ir.Unary(ir.UnOp.NEG, x, INT, sp)
            case S.Not(operand=o, span=sp):
                x = self._expr(o)
                self._want(o, x, ir.BoolType, "a bool")
                return ir.Unary(ir.UnOp.NOT, x, BOOL, sp)
            case S.BinE(op=op, lhs=l, rhs=r, span=sp):
                return self._binary(op, l, r, sp)
            case S.IteE(cond=c, then=t, else_=f, span=sp):
                xc = self._expr(c)
                self._want(c, xc, ir.BoolType, "a bool condition")
                xt, xf = self._expr(t), self._expr(f)
                if isinstance(xt.type, ir.IntType) and isinstance(xf.type, ir.IntType):
                    sym = xt.type.symmetric  # kept when both branches are of one symmetric type
                    rt = xt.type if sym is not None and sym == xf.type.symmetric else INT
                    return ir.Ite(xc, xt, xf, rt, sp)
                if xt.type != xf.type:
                    self.d.error(sp, f"the branches of 'if' have different types: {_tname(xt.type)} and {_tname(xf.type)}")
                    raise _Poison
                return ir.Ite(xc, xt, xf, xt.type, sp)
            case S.FoldE(kind=kind, name=n, domain=dom, body=body, span=sp):
                d = self._domain(dom, allow_empty=True)
                if d is None:
                    raise _Poison
                if kind in (FoldKind.MIN, FoldKind.MAX) and len(ir.domain_values(d)) == 0:
                    self.d.error(sp, f"'{kind.value}' over an empty domain")
                    raise _Poison
                sym = self._fresh(n, d, sp)
                if sym is None:
                    raise _Poison
                outer = self._enter_loop(d, sp)
                if outer is None:
                    raise _Poison
                self.scope.push()
                self.scope.bind(sym)
                try:
                    xb = self._expr(body)
                finally:
                    self.scope.pop()
                    self.unroll = outer
                if kind in (FoldKind.ALL, FoldKind.ANY, FoldKind.COUNT):
                    self._want(body, xb, ir.BoolType, f"a bool body for '{kind.value}'")
                else:
                    self._want(body, xb, ir.IntType, f"an integer body for '{kind.value}'")
                rt: ir.Type = BOOL if kind in (FoldKind.ALL, FoldKind.ANY) else INT
                return ir.Fold(kind, sym, xb, rt, sp)
        raise AssertionError(e)

    def _name(self, n: str, sp: Span) -> ir.Expr:
        if n in self.fixed:  # NOTE(instance-properties): the element a per-element property reads
            return replace(self.fixed[n], span=sp)
        sym = self.scope.lookup(n)
        if sym is not None:
            return ir.LocalRef(sym, sp)
        if n in self.vars:
            v = self.vars[n]
            return ir.VarRef(v.index, v.type, self.priming, sp)
        if n in self.consts:
            self._note_nonaffine(clauses(self.const_deps.get(n, NONE), self.const_deps), sp)
            return ir.Lit(self.consts[n].value, INT, sp)
        if n in self.members:
            t, i = self.members[n]
            return ir.Lit(i, t, sp)
        if n in self.poisoned:
            raise _Poison
        if n in self.decl_spans:
            self.d.error(sp, f"'{n}' is not a value here")
        else:
            self.d.error(sp, f"unknown name '{n}'")
        raise _Poison

    def _binary(self, op: BinOp, l: S.Expr, r: S.Expr, sp: Span) -> ir.Expr:
        xl = self._expr(l)
        xr = self._expr(r)
        if op in ir.ARITH_OPS:
            self._want(l, xl, ir.IntType, f"an integer operand of '{op.value}'")
            self._want(r, xr, ir.IntType, f"an integer operand of '{op.value}'")
            return ir.Binary(op, xl, xr, INT, sp)
        if op in ir.ORDER_OPS:
            self._want(l, xl, ir.IntType, f"an integer operand of '{op.value}'")
            self._want(r, xr, ir.IntType, f"an integer operand of '{op.value}'")
            return ir.Binary(op, xl, xr, BOOL, sp)
        if op in ir.LOGIC_OPS:
            self._want(l, xl, ir.BoolType, f"a bool operand of '{op.value}'")
            self._want(r, xr, ir.BoolType, f"a bool operand of '{op.value}'")
            return ir.Binary(op, xl, xr, BOOL, sp)
        # == and !=
        same = (
            isinstance(xl.type, ir.IntType) and isinstance(xr.type, ir.IntType)
            or xl.type == xr.type
        )
        if not same:
            self.d.error(sp, f"cannot compare {_tname(xl.type)} with {_tname(xr.type)}")
            raise _Poison
        return ir.Binary(op, xl, xr, BOOL, sp)


def _root_name(e: S.Expr) -> str | None:
    match e:
        case S.Name(name=n):
            return n
        case S.IndexE(base=b) | S.FieldE(base=b):
            return _root_name(b)
    return None


def _tname(t: ir.Type) -> str:
    if isinstance(t, ir.IntType):
        return "int" if not t.bounded else f"int ({t})"
    if isinstance(t, ir.EnumType):
        return f"enum {t.name}"
    if isinstance(t, ir.StructType):
        return f"struct {t.name}"
    return str(t)


def _domain_size(t: ir.IntType | ir.EnumType | ir.BoolType) -> int:
    """Values of a scalar domain, computed (never enumerated: the range may be huge)."""
    if isinstance(t, ir.BoolType):
        return 2
    if isinstance(t, ir.EnumType):
        return len(t.members)
    assert t.lo is not None and t.hi is not None
    return max(t.hi - t.lo + 1, 0)


def _digits(v: int) -> str:
    """An integer for a message: in full when short, else its size (str() of a huge int is slow
    and refused past 4300 digits)."""
    if abs(v) < 10**30:
        return str(v)
    return f"a {v.bit_length()}-bit integer"


def _arith(op: BinOp, a: int, b: int) -> int:
    if op is BinOp.ADD:
        return a + b
    if op is BinOp.SUB:
        return a - b
    if op is BinOp.MUL:
        return a * b
    if op is BinOp.DIV:
        return a // b
    return a % b


def _compare(op: BinOp, a: int, b: int) -> bool:
    return {
        BinOp.EQ: a == b, BinOp.NE: a != b, BinOp.LT: a < b,
        BinOp.LE: a <= b, BinOp.GT: a > b, BinOp.GE: a >= b,
    }[op]


def check_spec(spec: S.Spec, overrides: Mapping[str, int] | None = None, source: dict[str, str] | None = None) -> ir.Model:
    """Type-check a parsed spec and lower it to one IR instance; raises SpecTypeError with every
    error found (or ConstantError when only `--const` overrides are at fault)."""
    source = dict(source or {})
    from gpcheck.spec.compose import compose  # NOTE(compose): `use`/`call` are expanded on the AST first

    spec = compose(spec, source)
    diags = Diagnostics(source=source)
    model = _Checker(spec, overrides or {}, diags).run()
    if diags.errors and all(d.span is None or "--const" in d.message for d in diags.errors):
        diags.gate(ConstantError)
    diags.gate(SpecTypeError)
    if any(isinstance(d, S.RefinesDecl) for d in spec.decls):  # NOTE(refinement) in spec/refines.py
        from gpcheck.spec.refines import attach

        model = attach(model, spec, overrides or {}, source, check_spec)
    return model


def _aggregate_outside_equality(e: ir.Expr) -> ir.Expr | None:
    """An unprimed array or struct read used other than as an operand of == / != (spec/assume.py
    snapshots the pre-state slot by slot, so only those compare whole aggregates), or None."""
    def root_unprimed(x: ir.Expr) -> bool:
        while isinstance(x, (ir.Index, ir.Field)):
            x = x.base
        return isinstance(x, ir.VarRef) and not x.primed

    def visit(x: ir.Expr, cmp_operand: bool) -> ir.Expr | None:
        if isinstance(x, (ir.VarRef, ir.Index, ir.Field)) and root_unprimed(x):
            if not ir.is_scalar(x.type) and not cmp_operand:
                return x
            if isinstance(x, ir.Index):
                return visit(x.index, False)
            return visit(x.base, True) if isinstance(x, ir.Field) else None
        if isinstance(x, ir.Binary) and x.op in ir.EQUALITY_OPS and not ir.is_scalar(x.lhs.type):
            return visit(x.lhs, True) or visit(x.rhs, True)
        if isinstance(x, ir.Index):
            return visit(x.base, True) or visit(x.index, False)
        if isinstance(x, ir.Field):
            return visit(x.base, True)
        for sub in _children(x):
            hit = visit(sub, False)
            if hit is not None:
                return hit
        return None

    return visit(e, False)


def _children(e: ir.Expr) -> list[ir.Expr]:
    match e:
        case ir.Unary(operand=o):
            return [o]
        case ir.Binary(lhs=l, rhs=r):
            return [l, r]
        case ir.Ite(cond=c, then=t, else_=f):
            return [c, t, f]
        case ir.Fold(body=b):
            return [b]
    return []

"""Module instances: `use M as NAME(...)` and `use M as NAME[INDEX](...)`, expanded on the AST.

    use cwsr as gpu0(Q = 2) driving preempt       # one instance: gpu0.rptr, gpu0.preempt, ...
    use cwsr as gpu[Gpu](Q = 2)                    # one per value of Gpu: gpu[i].rptr, gpu[i].step

NOTE(instances): like `use` (NOTE(compose)), an instance is expanded before type checking into
ordinary declarations, so the IR, every engine, the reports and replay need nothing new. The
difference from `use` is naming: every global name of the module (constants, structs, symmetric
types, variables, actions and property names) is qualified by the instance, `NAME.x` (a name no
user can declare, so instances never clash with each other or with the using model). Enum types
are not qualified: their members are values the instances and the using model compare, so an
enum declared alike by several instances is declared once (a different enum of the same name is
the usual "already declared" error). The using model reads and writes an instance's names as
`NAME.x` and calls its actions as `call NAME.act(...)`.

An array of instances over INDEX (a range or a named index type, as an array's index) keeps one
copy of the module's constants and types (every element has the same constants) and lifts its
state: a variable `x: T` becomes `NAME.x: [INDEX] -> T`, an action `a(p...)` becomes
`NAME.a(NAME.self: INDEX, p...)` (so fairness stays per element, as each element's instance of the
action is an instance of the lifted one), and an invariant, transition property, constraint,
terminal predicate or assumption P becomes `all NAME.self in INDEX: P` (a cover: `any`). The
using model writes `NAME[i].x` (read as `NAME.x[i]`) and `call NAME[i].act(...)`.
NOTE(instance-properties): a liveness or latency property of the module is not one property of
the array ("every element eventually" is not "eventually every element"), so it is stated once per
element, as named instances would: `NAME[v].prop` for each value v of INDEX, its expressions
reading element v (`S.Each` on the declaration; the type checker expands it once INDEX's values
are known, constants and `--const` included).
When INDEX is a `symmetric` type of the using model, the elements are interchangeable and the
symmetry reduction applies, checked like any other use of a symmetric type (NOTE(symmetry)).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from gpcheck.spec import ir, syntax as S
from gpcheck.spec.errors import Diagnostics
from gpcheck.spec.ir import FoldKind
from gpcheck.spec.span import Span

SELF = "self"  # the element parameter of a lifted action: `NAME.self` (no user can write it)


@dataclass(frozen=True, slots=True)
class Qualify:
    """How one instance's module declarations are renamed: `names` (module global → qualified),
    `vars` (the module's variables, lifted to arrays when `index` is set), `actions`."""

    inst: str
    names: dict[str, str]
    vars: frozenset[str]
    actions: frozenset[str]
    index: S.TypeExpr | None

    @property
    def self_name(self) -> str:
        return f"{self.inst}.{SELF}"

    def element(self, sp: Span) -> S.Name:
        return S.Name(self.self_name, sp)


def global_names(decls: list[S.Decl], action_of: Callable[[S.Decl], S.ActionDecl | None]) -> tuple[dict[str, str], set[str], set[str]]:
    """Every global name the module declares that an instance qualifies (enums excepted), with
    its variables and actions apart."""
    names: list[str] = []
    vars_: set[str] = set()
    actions: set[str] = set()
    for d in decls:
        a = action_of(d)
        if a is not None:
            actions.add(a.name)
            names.append(a.name)
        match d:
            case S.ConstDecl(name=n) | S.StructDecl(name=n) | S.SymmetricDecl(name=n):
                names.append(n)
            case S.VarDecl(name=n):
                vars_.add(n)
                names.append(n)
            case S.InvariantDecl(name=n) | S.TransitionDecl(name=n) | S.LivenessDecl(name=n) \
                    | S.ConstraintDecl(name=n) | S.LatencyDecl(name=n) | S.AssumeDecl(name=n) | S.CoverDecl(name=n):
                names.append(n)
    return {n: n for n in names}, vars_, actions


def qualify_decl(d: S.Decl, q: Qualify, diags: Diagnostics, use_span: Span) -> S.Decl | None:
    """One module declaration with its names qualified (and lifted, for an array of instances);
    None when it has no place in an instance (an `expect`, a `refines`)."""
    r = _Renamer(q)
    lift = q.index is not None

    def prop(e: S.Expr, kind: FoldKind = FoldKind.ALL) -> S.Expr:
        x = r.expr(e, frozenset())
        if not lift:
            return x
        assert q.index is not None
        return S.FoldE(kind, q.self_name, q.index, x, e.span)

    match d:
        case S.ExpectDecl() | S.RefinesDecl():
            return None
        case S.ConstDecl(name=n, value=v):
            return replace(d, name=q.names[n], value=r.expr(v, frozenset()))
        case S.EnumDecl():
            return d
        case S.StructDecl(name=n, fields=fs):
            return replace(d, name=q.names[n], fields=tuple((f, r.type(t, frozenset()), sp) for f, t, sp in fs))
        case S.SymmetricDecl(name=n, range=rg):
            return replace(d, name=q.names[n], range=r.type(rg, frozenset()), symmetric=False)
        case S.VarDecl(name=n, type=t, init=init):
            t2 = r.type(t, frozenset())
            if lift:
                assert q.index is not None
                if _has_list_init(init):
                    diags.error(d.span, f"variable '{n}' has a list initialiser, which an array of instances cannot repeat "
                                        "for each element (give it one value, or use named instances)",
                                (use_span, "instantiated here"))
                t2 = S.ArrayT(q.index, t2, t.span)
            return replace(d, name=q.names[n], type=t2, init=r.init(init))
        case S.ActionDecl():
            return qualify_action(d, q)
        case S.FairDecl(names=ns):
            return replace(d, names=tuple((q.names.get(n, n), sp) for n, sp in ns))
        case S.InvariantDecl(name=n, expr=e) | S.TransitionDecl(name=n, expr=e) | S.ConstraintDecl(name=n, expr=e) \
                | S.AssumeDecl(name=n, expr=e):
            return replace(d, name=q.names[n], expr=prop(e))
        case S.CoverDecl(name=n, expr=e):
            return replace(d, name=q.names[n], expr=prop(e, FoldKind.ANY))
        case S.TerminalDecl(expr=e):
            return replace(d, expr=prop(e))
        case S.AllowDeadlock():
            return d
        case S.LivenessDecl(name=n) | S.LatencyDecl(name=n):
            # NOTE(instance-properties): lifted, one property per element (the type checker expands it)
            each = S.Each(q.inst, q.self_name, q.index) if lift and q.index is not None else None
            if isinstance(d, S.LivenessDecl):
                return replace(d, name=q.names[n], p=None if d.p is None else r.expr(d.p, frozenset()),
                               q=r.expr(d.q, frozenset()), each=each)
            return replace(d, name=q.names[n], p=r.expr(d.p, frozenset()), q=r.expr(d.q, frozenset()),
                           within=None if d.within is None else r.expr(d.within, frozenset()), each=each)
    raise AssertionError(d)


def qualify_action(a: S.ActionDecl, q: Qualify) -> S.ActionDecl:
    """An action of the module as the instance's (with the element parameter first when lifted)."""
    r = _Renamer(q)
    bound = frozenset(p.name for p in a.params)
    params = tuple(replace(p, type=r.type(p.type, frozenset())) for p in a.params)
    if q.index is not None:
        params = (S.Param(q.self_name, q.index, a.span),) + params
    timing = a.timing
    if timing is not None:
        timing = replace(timing, lower=r.expr(timing.lower, bound),
                         upper=None if timing.upper is None else r.expr(timing.upper, bound))
    return replace(a, name=q.names[a.name], params=params, body=r.stmts(a.body, bound), timing=timing)


def _has_list_init(init: S.Init) -> bool:
    match init:
        case S.ListInit():
            return True
        case S.StructInit(items=items):
            return any(_has_list_init(i) for _, i in items)
    return False


@dataclass(frozen=True, slots=True)
class _Renamer:
    """Qualifies the module's global names, respecting local binders (a local is never renamed)."""

    q: Qualify

    def expr(self, e: S.Expr, bound: frozenset[str]) -> S.Expr:
        q = self.q
        match e:
            case S.Name(name=n) if n not in bound and n in q.names:
                named = replace(e, name=q.names[n])
                if q.index is not None and n in q.vars:
                    return S.IndexE(named, q.element(e.span), e.span)
                return named
            case S.IntLit() | S.BoolLit() | S.Name():
                return e
            case S.Prime(operand=x) | S.Neg(operand=x) | S.Not(operand=x):
                return replace(e, operand=self.expr(x, bound))
            case S.IndexE(base=x, index=y):
                return replace(e, base=self.expr(x, bound), index=self.expr(y, bound))
            case S.FieldE(base=x):
                return replace(e, base=self.expr(x, bound))
            case S.BinE(lhs=x, rhs=y):
                return replace(e, lhs=self.expr(x, bound), rhs=self.expr(y, bound))
            case S.IteE(cond=x, then=y, else_=z):
                return replace(e, cond=self.expr(x, bound), then=self.expr(y, bound), else_=self.expr(z, bound))
            case S.FoldE(name=n, domain=dom, body=b):
                return replace(e, domain=self.type(dom, bound), body=self.expr(b, bound | {n}))
        raise AssertionError(e)

    def type(self, t: S.TypeExpr, bound: frozenset[str]) -> S.TypeExpr:
        match t:
            case S.RangeT(lo=lo, hi=hi):
                return replace(t, lo=self.expr(lo, bound), hi=self.expr(hi, bound))
            case S.NamedT(name=n) if n in self.q.names:
                return replace(t, name=self.q.names[n])
            case S.ArrayT(index=i, elem=el):
                return replace(t, index=self.type(i, bound), elem=self.type(el, bound))
        return t

    def init(self, init: S.Init) -> S.Init:
        match init:
            case S.AnyInit():
                return init
            case S.ListInit(items=items):
                return replace(init, items=tuple(self.init(i) for i in items))
            case S.StructInit(items=items):
                return replace(init, items=tuple((f, self.init(i)) for f, i in items))
        return self.expr(init, frozenset())  # type: ignore[arg-type]

    def stmts(self, body: tuple[S.Stmt, ...], bound: frozenset[str]) -> tuple[S.Stmt, ...]:
        out: list[S.Stmt] = []
        for s in body:
            match s:
                case S.RequireS(cond=c):
                    out.append(replace(s, cond=self.expr(c, bound)))
                case S.AssignS(target=t, value=v):
                    out.append(replace(s, target=self.expr(t, bound), value=self.expr(v, bound)))
                case S.IfS(cond=c, then=a, else_=b):
                    out.append(replace(s, cond=self.expr(c, bound), then=self.stmts(a, bound), else_=self.stmts(b, bound)))
                case S.ForS(name=n, domain=dom, body=b):
                    out.append(replace(s, domain=self.type(dom, bound), body=self.stmts(b, bound | {n})))
                case S.LetS(name=n, value=v):
                    out.append(replace(s, value=self.expr(v, bound)))
                    bound = bound | {n}
                case S.CallS(name=n, args=args):
                    new_args = tuple(self.expr(x, bound) for x in args)
                    if n in self.q.actions:
                        if self.q.index is not None:  # the same element's action
                            new_args = (self.q.element(s.span),) + new_args
                        out.append(replace(s, name=self.q.names[n], args=new_args))
                    else:
                        out.append(replace(s, args=new_args))
                case _:
                    raise AssertionError(s)
        return tuple(out)


def instance_groups(model: "ir.Model") -> dict[str, bool]:
    """The model's instances (the first component of its dotted variable and action names), each
    with whether it is an array of instances (its actions take the element first)."""
    out: dict[str, bool] = {}
    for name in [v.name for v in model.vars] + [a.name for a in model.actions]:
        if "." in name:
            out.setdefault(name.split(".", 1)[0], False)
    for a in model.actions:
        if a.params and a.params[0].name == f"{a.name.split('.', 1)[0]}.{SELF}":
            out[a.name.split(".", 1)[0]] = True
    return out


# --------------------------------------------------------------------------- the using model's side
def resolve_references(decls: list[S.Decl], named: dict[str, frozenset[str]], arrays: dict[str, frozenset[str]],
                       diags: Diagnostics, array_vars: dict[str, frozenset[str]] | None = None) -> list[S.Decl]:
    """The using model's `NAME.x` (a named instance's name) as the qualified name, and
    `NAME[i].x` (an element of an array of instances) as `NAME.x[i]` (a constant of the array,
    `NAME[i].C` or `NAME.C`, as `NAME.C`). `named` and `arrays` map each instance to the names it
    declares, `array_vars` each array to its variables."""
    if not named and not arrays:
        return decls
    res = _Resolver(named, arrays, diags, dict(array_vars or {}))
    return [res.decl(d) for d in decls]


@dataclass
class _Resolver:
    named: dict[str, frozenset[str]]
    arrays: dict[str, frozenset[str]]
    diags: Diagnostics
    array_vars: dict[str, frozenset[str]]

    def _missing(self, inst: str, name: str, sp: Span) -> None:
        known = ", ".join(sorted(self.named.get(inst) or self.arrays.get(inst) or ())) or "none"
        self.diags.error(sp, f"instance '{inst}' has no '{name}' (its names: {known})")

    def expr(self, e: S.Expr) -> S.Expr:
        match e:
            case S.FieldE(base=S.Name(name=inst), name=n) if inst in self.named:
                if n not in self.named[inst]:
                    self._missing(inst, n, e.span)
                return S.Name(f"{inst}.{n}", e.span)
            case S.FieldE(base=S.IndexE(base=S.Name(name=inst), index=i), name=n) if inst in self.arrays:
                if n not in self.arrays[inst]:
                    self._missing(inst, n, e.span)
                if n not in self.array_vars.get(inst, frozenset()):  # a constant: every element's
                    return S.Name(f"{inst}.{n}", e.span)
                return S.IndexE(S.Name(f"{inst}.{n}", e.span), self.expr(i), e.span)
            case S.FieldE(base=S.Name(name=inst), name=n) if inst in self.arrays and n not in self.array_vars.get(inst, ()):
                if n not in self.arrays[inst]:
                    self._missing(inst, n, e.span)
                return S.Name(f"{inst}.{n}", e.span)
            case S.IntLit() | S.BoolLit() | S.Name():
                return e
            case S.Prime(operand=x) | S.Neg(operand=x) | S.Not(operand=x):
                return replace(e, operand=self.expr(x))
            case S.IndexE(base=x, index=y):
                return replace(e, base=self.expr(x), index=self.expr(y))
            case S.FieldE(base=x):
                return replace(e, base=self.expr(x))
            case S.BinE(lhs=x, rhs=y):
                return replace(e, lhs=self.expr(x), rhs=self.expr(y))
            case S.IteE(cond=x, then=y, else_=z):
                return replace(e, cond=self.expr(x), then=self.expr(y), else_=self.expr(z))
            case S.FoldE(domain=dom, body=b):
                return replace(e, domain=self.type(dom), body=self.expr(b))
        raise AssertionError(e)

    def type(self, t: S.TypeExpr) -> S.TypeExpr:
        match t:
            case S.RangeT(lo=lo, hi=hi):
                return replace(t, lo=self.expr(lo), hi=self.expr(hi))
            case S.ArrayT(index=i, elem=el):
                return replace(t, index=self.type(i), elem=self.type(el))
        return t

    def init(self, init: S.Init) -> S.Init:
        match init:
            case S.AnyInit():
                return init
            case S.ListInit(items=items):
                return replace(init, items=tuple(self.init(i) for i in items))
            case S.StructInit(items=items):
                return replace(init, items=tuple((f, self.init(i)) for f, i in items))
        return self.expr(init)  # type: ignore[arg-type]

    def stmts(self, body: tuple[S.Stmt, ...]) -> tuple[S.Stmt, ...]:
        out: list[S.Stmt] = []
        for s in body:
            match s:
                case S.RequireS(cond=c):
                    out.append(replace(s, cond=self.expr(c)))
                case S.AssignS(target=t, value=v):
                    out.append(replace(s, target=self.expr(t), value=self.expr(v)))
                case S.IfS(cond=c, then=a, else_=b):
                    out.append(replace(s, cond=self.expr(c), then=self.stmts(a), else_=self.stmts(b)))
                case S.ForS(domain=dom, body=b):
                    out.append(replace(s, domain=self.type(dom), body=self.stmts(b)))
                case S.LetS(value=v):
                    out.append(replace(s, value=self.expr(v)))
                case S.CallS(args=args):
                    out.append(replace(s, args=tuple(self.expr(x) for x in args)))
                case _:
                    raise AssertionError(s)
        return tuple(out)

    def decl(self, d: S.Decl) -> S.Decl:
        match d:
            case S.ConstDecl(value=v):
                return replace(d, value=self.expr(v))
            case S.StructDecl(fields=fs):
                return replace(d, fields=tuple((f, self.type(t), sp) for f, t, sp in fs))
            case S.SymmetricDecl(range=rg):
                return replace(d, range=self.type(rg))
            case S.VarDecl(type=t, init=i):
                return replace(d, type=self.type(t), init=self.init(i))
            case S.ActionDecl(params=ps, body=b, timing=tm):
                if tm is not None:
                    tm = replace(tm, lower=self.expr(tm.lower), upper=None if tm.upper is None else self.expr(tm.upper))
                return replace(d, params=tuple(replace(p, type=self.type(p.type)) for p in ps), body=self.stmts(b),
                               timing=tm)
            case S.InvariantDecl(expr=e) | S.TransitionDecl(expr=e) | S.ConstraintDecl(expr=e) | S.AssumeDecl(expr=e) \
                    | S.CoverDecl(expr=e) | S.TerminalDecl(expr=e):
                return replace(d, expr=self.expr(e))
            case S.LivenessDecl(p=p, q=qq):
                return replace(d, p=None if p is None else self.expr(p), q=self.expr(qq))
            case S.LatencyDecl(p=p, q=qq, within=w):
                return replace(d, p=self.expr(p), q=self.expr(qq), within=None if w is None else self.expr(w))
            case S.RefinesDecl(bindings=bs, mapping=ms):
                return replace(d, bindings=tuple((n, self.expr(v), sp) for n, v, sp in bs),
                               mapping=tuple((n, self.expr(v), sp) for n, v, sp in ms))  # targets are M's names
        return d


__all__ = ["Qualify", "global_names", "qualify_decl", "qualify_action", "resolve_references", "instance_groups", "SELF"]

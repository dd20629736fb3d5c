"""Model composition: `use` and `call`, expanded on the AST before type checking.

    use cwsr(Q = 2, MAXP = 0) driving preempt, remap     # splice cwsr's declarations in
    action monitor { ... call preempt() ... }              # run cwsr's preempt in this step

NOTE(compose): why on the AST: the composed model is an ordinary flat model, so the type checker, the IR (the
single source of truth), every engine, replay and the reports need nothing new; errors in the
module keep their own file:line:column.

`use M(C = e, ...)` inserts, at its place, every declaration of module M (a bundled model's name,
or a quoted path relative to the using file) except its `model` line and its `expect` lines (the
using model states its own expectations: composition may change a verdict). A binding `C = e`
replaces the default of M's constant C by the expression `e`, written in the using model's names
(declared above the `use`); the constant stays overridable with `--const`. Names are shared, not
qualified: a module declaration whose name the using model also declares is the usual located
"already declared" error (with the module's declaration as the first one).

`driving A, B` makes M's actions A and B procedures of the using model: they no longer run on
their own (nor count for fairness), only where an action `call`s them.

`call A(e1, ..., en)` (a statement) runs action A's body at that point of the same atomic step:
its parameters are bound to the arguments (a value outside a parameter's integer range disables
the step, as there is no such instance of A), its `require`s become the caller's, and its locals
are renamed so that they cannot clash with the caller's. A call may name any action of the
composed model, driven or not, but not itself (directly or through other calls).

NOTE(compose-time): a spliced action keeps its `time` (NOTE(timed) in spec/ir.py), and a used
module's latency properties are kept like its other properties (only `expect` lines are dropped).
A `call` runs the callee's body inside the caller's step and adds no time: the caller states its
own (docs/timed.md). A retired `cost` (NOTE(retired-cost)) in a composed spec is reported here, all
at once (a driven action never reaches the type checker, which reports it otherwise).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

from gpcheck.spec import syntax as S
from gpcheck.spec.errors import Diagnostics, SpecTypeError
from gpcheck.spec.retired import retired_cost
from gpcheck.spec.instances import Qualify, global_names, qualify_action, qualify_decl, resolve_references
from gpcheck.spec.ir import BinOp
from gpcheck.spec.limits import MAX_SOURCE_CHARS, normalize_newlines
from gpcheck.spec.span import Span

MAX_USE_DEPTH = 16   # nested `use` (a cycle is reported before this is reached)
MAX_CALL_DEPTH = 16  # nested `call` (a recursion is reported before this is reached)


def needs_compose(spec: S.Spec) -> bool:
    """True when the spec uses `use` or `call` (otherwise `compose` returns it unchanged)."""
    return any(isinstance(d, (S.UseDecl, S.InstanceDecl)) for d in spec.decls) or any(
        _has_call(d.body) for d in spec.decls if isinstance(d, S.ActionDecl))


def compose(spec: S.Spec, source: dict[str, str]) -> S.Spec:
    """The flat spec: every `use` spliced in, every `call` inlined. `source` (file → text) gains
    the modules' texts, so that diagnostics in them render with their lines. Raises
    SpecTypeError (located) for a module that is missing, used recursively, or misused, and
    SpecSyntaxError for a syntax error inside a module."""
    if not needs_compose(spec):
        return spec
    diags = Diagnostics(source=source)
    c = _Composer(diags, source)
    decls = c.splice(spec, [spec.file])
    decls = c.inline_calls(decls)
    diags.gate(SpecTypeError)
    return replace(spec, decls=tuple(decls))


def find_module(use: S.UseDecl | S.InstanceDecl | S.RefinesDecl, using_file: str, diags: Diagnostics,
                source: dict[str, str]) -> tuple[str, str] | None:
    """(file, text) of the module a `use`, an instance or a `refines` names (None after a located
    error in `diags`); `source` gains its text."""
    found = _Composer(diags, source)._find(use, using_file)
    if found is None:
        return None
    file, text = found[0], normalize_newlines(found[1])
    source.setdefault(file, text)
    return file, text


# --------------------------------------------------------------------------- module lookup
def _bundled(name: str) -> tuple[str, str] | None:
    """(file name, text) of bundled model `name`, read as package data (works from a wheel)."""
    entry = resources.files("gpcheck.spec") / "models" / f"{name}.gpspec"
    if not entry.is_file():
        return None
    return str(entry), entry.read_bytes().decode("utf-8")


def _bundled_names() -> list[str]:
    root = resources.files("gpcheck.spec") / "models"
    return sorted(e.name[: -len(".gpspec")] for e in root.iterdir() if e.name.endswith(".gpspec"))


@dataclass
class _Composer:
    diags: Diagnostics
    source: dict[str, str]
    fresh: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    # ------------------------------------------------------------------ use
    def splice(self, spec: S.Spec, stack: list[str]) -> list[S.Decl]:
        out: list[S.Decl] = []
        named: dict[str, frozenset[str]] = {}
        arrays: dict[str, frozenset[str]] = {}
        array_vars: dict[str, frozenset[str]] = {}
        for d in spec.decls:
            if isinstance(d, S.UseDecl):
                out += self._use(d, spec.file, stack)
            elif isinstance(d, S.InstanceDecl):
                got = self._instance(d, spec.file, stack, out)
                if got is not None:
                    if d.name in named or d.name in arrays:
                        self.diags.error(d.name_span, f"instance '{d.name}' is already declared")
                    (named if d.index is None else arrays)[d.name] = got[0]
                    array_vars[d.name] = got[1]
            else:
                out.append(d)
        if named or arrays:
            self._instance_names_free(out, named | arrays, spec.decls)
            out = resolve_references(out, named, arrays, self.diags, array_vars)
        return out

    def _module(self, use: S.UseDecl | S.InstanceDecl, using_file: str, stack: list[str]) -> list[S.Decl] | None:
        """The module's declarations, its own `use`s spliced in (None after an error)."""
        from gpcheck.spec.parser import parse_spec  # the parser imports lark: load it only when needed

        found = self._find(use, using_file)
        if found is None:
            return None
        file, text = found
        if file in stack or len(stack) >= MAX_USE_DEPTH:
            chain = " -> ".join(Path(f).name for f in stack + [file])
            self.diags.error(use.module_span, f"'use {use.module}' is recursive ({chain})")
            return None
        text = normalize_newlines(text)
        self.source.setdefault(file, text)
        module = parse_spec(text, file)
        return self.splice(module, stack + [file])

    def _use(self, use: S.UseDecl, using_file: str, stack: list[str]) -> list[S.Decl]:
        decls = self._module(use, using_file, stack)
        if decls is None:
            return []
        bound, driven = self._bind(use, decls)
        out: list[S.Decl] = []
        for d in decls:
            match d:
                case S.ExpectDecl() | S.RefinesDecl():
                    continue
                case S.SymmetricDecl():  # symmetry is the using model's to declare: it may tell the values apart
                    out.append(replace(d, symmetric=False))
                case S.ConstDecl(name=n) if n in bound:
                    out.append(replace(d, value=bound[n]))
                case S.ActionDecl(name=n) if n in driven:
                    out.append(_Procedure(d))
                case S.FairDecl(names=names):
                    kept = tuple((n, sp) for n, sp in names if n not in driven)
                    if kept:
                        out.append(replace(d, names=kept))
                case _:
                    out.append(d)
        return out

    def _instance(self, use: S.InstanceDecl, using_file: str, stack: list[str],
                  before: list[S.Decl]) -> tuple[frozenset[str], frozenset[str]] | None:
        """NOTE(instances): append the instance's qualified declarations to `before`; the names
        it declares (unqualified) and its variables, or None after an error."""
        decls = self._module(use, using_file, stack)
        if decls is None:
            return None
        bound, driven = self._bind(use, decls)
        names, vars_, actions = global_names(decls, lambda d: d.action if isinstance(d, _Procedure)
                                             else d if isinstance(d, S.ActionDecl) else None)
        q = Qualify(use.name, {n: f"{use.name}.{n}" for n in names}, frozenset(vars_), frozenset(actions), use.index)
        enums = {(d.name, tuple(m for m, _ in d.members)) for d in before if isinstance(d, S.EnumDecl)}
        for d in decls:
            if isinstance(d, S.EnumDecl) and (d.name, tuple(m for m, _ in d.members)) in enums:
                continue  # declared alike before (another instance of the module): one enum
            if isinstance(d, S.ConstDecl) and d.name in bound:
                d = replace(d, value=bound[d.name])
                before.append(replace(d, name=q.names[d.name]))  # the binding is in the using model's names
                continue
            if isinstance(d, _Procedure):
                before.append(_Procedure(qualify_action(d.action, q)))
                continue
            if isinstance(d, S.FairDecl):
                d = replace(d, names=tuple((n, sp) for n, sp in d.names if n not in driven))
                if not d.names:
                    continue
            x = qualify_decl(d, q, self.diags, use.span)
            if x is None:
                continue
            before.append(_Procedure(x) if isinstance(d, S.ActionDecl) and d.name in driven else x)
        return frozenset(names), frozenset(vars_)

    def _instance_names_free(self, decls: list[S.Decl], instances: dict[str, frozenset[str]],
                             own: tuple[S.Decl, ...]) -> None:
        """An instance's name may not be a global name of the using model (`NAME.x` would be ambiguous)."""
        for d in decls:
            name = getattr(d, "name", None)
            if isinstance(name, str) and name in instances and not isinstance(d, (S.ExpectDecl,)):
                inst = next(i for i in own if isinstance(i, S.InstanceDecl) and i.name == name)
                self.diags.error(inst.name_span, f"instance '{name}' has the name of a declaration of the model",
                                 (d.span, "declared here"))

    def _bind(self, use: S.UseDecl | S.InstanceDecl, decls: list[S.Decl]) -> tuple[dict[str, S.Expr], dict[str, Span]]:
        """The constant bindings and driven actions of a `use`, checked against the module."""
        consts = {d.name: d for d in decls if isinstance(d, S.ConstDecl)}
        actions = {d.name: d for d in decls if isinstance(d, S.ActionDecl)}
        bound: dict[str, S.Expr] = {}
        for name, value, sp in use.bindings:
            if name not in consts:
                known = ", ".join(consts) or "none"
                self.diags.error(sp, f"'{use.module}' has no constant {name} (its constants: {known})")
            elif name in bound:
                self.diags.error(sp, f"constant {name} of '{use.module}' is bound twice")
            else:
                bound[name] = value
        driven: dict[str, Span] = {}
        for name, sp in use.driven:
            if name not in actions:
                known = ", ".join(actions) or "none"
                self.diags.error(sp, f"'{use.module}' has no action {name} to drive (its actions: {known})")
            else:
                driven[name] = sp
        return bound, driven

    def _find(self, use: S.UseDecl | S.InstanceDecl | S.RefinesDecl, using_file: str) -> tuple[str, str] | None:
        if use.is_path:
            base = Path(using_file).parent if using_file and not using_file.startswith("<") else Path(".")
            path = base / use.module
            try:
                # only a regular file of at most the source limit (never a FIFO or a device)
                if not path.is_file():
                    self.diags.error(use.module_span, f"use: {str(path)!r} is not a regular file")
                    return None
                if path.stat().st_size > 4 * MAX_SOURCE_CHARS:
                    self.diags.error(use.module_span, f"use: {str(path)!r} is larger than a spec may be "
                                                      f"({MAX_SOURCE_CHARS} characters)")
                    return None
                data = path.read_bytes()
            except OSError as e:
                self.diags.error(use.module_span, f"use: cannot read {str(path)!r}: {e.strerror or e}")
                return None
            try:
                return str(path), data.decode("utf-8")
            except UnicodeDecodeError:
                self.diags.error(use.module_span, f"use: {str(path)!r} is not UTF-8 text")
                return None
        found = _bundled(use.module)
        if found is None:
            self.diags.error(use.module_span, f"use: no bundled model named '{use.module}' (bundled: "
                                              f"{', '.join(_bundled_names())}; a file is written as a quoted path)")
        return found

    # ------------------------------------------------------------------ call
    def inline_calls(self, decls: list[S.Decl]) -> list[S.Decl]:
        table: dict[str, S.ActionDecl] = {}
        for d in decls:
            if isinstance(d, S.ActionDecl):
                table.setdefault(d.name, d)
            elif isinstance(d, _Procedure):
                table.setdefault(d.action.name, d.action)
        out: list[S.Decl] = []
        for d in decls:
            action = d.action if isinstance(d, _Procedure) else d
            if isinstance(action, S.ActionDecl) and action.cost is not None:
                # NOTE(retired-cost): here, with every other cost, since a driven action never reaches the type checker
                self.diags.error(action.cost, retired_cost(action.name))
            if isinstance(d, _Procedure):
                continue  # driven: runs only where called
            if isinstance(d, S.ActionDecl) and _has_call(d.body):
                d = replace(d, body=self._stmts(d.body, table, [d.name]))
            out.append(d)
        return out

    def _stmts(self, body: tuple[S.Stmt, ...], table: dict[str, S.ActionDecl], stack: list[str]) -> tuple[S.Stmt, ...]:
        out: list[S.Stmt] = []
        for s in body:
            match s:
                case S.CallS():
                    out += self._call(s, table, stack)
                case S.IfS(then=a, else_=b):
                    out.append(replace(s, then=self._stmts(a, table, stack),
                                       else_=self._stmts(b, table, stack)))
                case S.ForS(body=b):
                    out.append(replace(s, body=self._stmts(b, table, stack)))
                case _:
                    out.append(s)
        return tuple(out)

    def _call(self, call: S.CallS, table: dict[str, S.ActionDecl], stack: list[str]) -> list[S.Stmt]:
        callee = table.get(call.name)
        if callee is None:
            self.diags.error(call.span, f"call: no action named '{call.name}'")
            return []
        if call.name in stack or len(stack) >= MAX_CALL_DEPTH:
            chain = " -> ".join(stack + [call.name])
            self.diags.error(call.span, f"call: '{call.name}' calls itself ({chain})")
            return []
        if len(call.args) != len(callee.params):
            self.diags.error(call.span, f"call: '{call.name}' takes {len(callee.params)} argument(s), "
                                        f"{len(call.args)} given", (callee.span, "declared here"))
            return []
        k = next(self.fresh)
        ren = {n: f"{n}__{call.name}{k}" for n in _locals(callee)}
        out: list[S.Stmt] = []
        for p, arg in zip(callee.params, call.args):
            out.append(S.LetS(ren[p.name], arg, call.span))
            if isinstance(p.type, S.RangeT):
                # no instance of the callee has this argument: the step is not enabled
                v = S.Name(ren[p.name], call.span)
                out.append(S.RequireS(S.BinE(BinOp.AND, S.BinE(BinOp.LE, p.type.lo, v, call.span),
                                             S.BinE(BinOp.LE, v, p.type.hi, call.span), call.span), call.span))
        body = tuple(_rename_stmt(s, ren) for s in callee.body)
        return out + list(self._stmts(body, table, stack + [call.name]))


@dataclass(frozen=True, slots=True)
class _Procedure:
    """A driven action while composing: callable, but not an action of the flat model."""

    action: S.ActionDecl


# --------------------------------------------------------------------------- AST helpers
def _has_call(body: tuple[S.Stmt, ...]) -> bool:
    for s in body:
        match s:
            case S.CallS():
                return True
            case S.IfS(then=a, else_=b):
                if _has_call(a) or _has_call(b):
                    return True
            case S.ForS(body=b):
                if _has_call(b):
                    return True
    return False


def _locals(a: S.ActionDecl) -> set[str]:
    """Every name the action binds locally: parameters, lets, loop and fold binders."""
    names = {p.name for p in a.params}

    def expr(e: S.Expr) -> None:
        match e:
            case S.FoldE(name=n, body=b):
                names.add(n)
                expr(b)
            case S.Prime(operand=x) | S.Neg(operand=x) | S.Not(operand=x):
                expr(x)
            case S.IndexE(base=x, index=y) | S.BinE(lhs=x, rhs=y):
                expr(x)
                expr(y)
            case S.FieldE(base=x):
                expr(x)
            case S.IteE(cond=x, then=y, else_=z):
                expr(x)
                expr(y)
                expr(z)

    def stmts(body: tuple[S.Stmt, ...]) -> None:
        for s in body:
            match s:
                case S.LetS(name=n, value=v):
                    names.add(n)
                    expr(v)
                case S.ForS(name=n, body=b):
                    names.add(n)
                    stmts(b)
                case S.IfS(cond=c, then=x, else_=y):
                    expr(c)
                    stmts(x)
                    stmts(y)
                case S.RequireS(cond=c):
                    expr(c)
                case S.AssignS(target=t, value=v):
                    expr(t)
                    expr(v)
                case S.CallS(args=args):
                    for x in args:
                        expr(x)

    stmts(a.body)
    return names


def _rename(e: S.Expr, ren: dict[str, str]) -> S.Expr:
    """`e` with the local names in `ren` renamed (globals are never in `ren`: locals may not
    shadow them, so every occurrence of such a name is the local)."""
    match e:
        case S.Name(name=n) if n in ren:
            return replace(e, name=ren[n])
        case S.IntLit() | S.BoolLit() | S.Name():
            return e
        case S.Prime(operand=x) | S.Neg(operand=x) | S.Not(operand=x):
            return replace(e, operand=_rename(x, ren))
        case S.IndexE(base=x, index=y):
            return replace(e, base=_rename(x, ren), index=_rename(y, ren))
        case S.FieldE(base=x):
            return replace(e, base=_rename(x, ren))
        case S.BinE(lhs=x, rhs=y):
            return replace(e, lhs=_rename(x, ren), rhs=_rename(y, ren))
        case S.IteE(cond=x, then=y, else_=z):
            return replace(e, cond=_rename(x, ren), then=_rename(y, ren), else_=_rename(z, ren))
        case S.FoldE(name=n, domain=dom, body=b):
            return replace(e, name=ren.get(n, n), domain=_rename_type(dom, ren), body=_rename(b, ren))
    raise AssertionError(e)


def _rename_type(t: S.TypeExpr, ren: dict[str, str]) -> S.TypeExpr:
    if isinstance(t, S.RangeT):
        return replace(t, lo=_rename(t.lo, ren), hi=_rename(t.hi, ren))
    return t


def _rename_stmt(s: S.Stmt, ren: dict[str, str]) -> S.Stmt:
    match s:
        case S.RequireS(cond=c):
            return replace(s, cond=_rename(c, ren))
        case S.AssignS(target=t, value=v):
            return replace(s, target=_rename(t, ren), value=_rename(v, ren))
        case S.IfS(cond=c, then=a, else_=b):
            return replace(s, cond=_rename(c, ren), then=tuple(_rename_stmt(x, ren) for x in a),
                           else_=tuple(_rename_stmt(x, ren) for x in b))
        case S.ForS(name=n, domain=dom, body=b):
            return replace(s, name=ren.get(n, n), domain=_rename_type(dom, ren),
                           body=tuple(_rename_stmt(x, ren) for x in b))
        case S.LetS(name=n, value=v):
            return replace(s, name=ren.get(n, n), value=_rename(v, ren))
        case S.CallS(args=args):
            return replace(s, args=tuple(_rename(x, ren) for x in args))
    raise AssertionError(s)


__all__ = ["compose", "needs_compose", "find_module", "MAX_USE_DEPTH", "MAX_CALL_DEPTH"]

"""IR → Python source → functions, so that successor generation never walks a tree per state.

The generated source is built only from the typed IR: names in it are slot numbers, symbol
ids and fault-site numbers, never user text (user names appear only in `#` comments, after
being reduced to identifier characters).

Every action instance (an action with constant parameter values) is unrolled into straight-line
code inside one function `succ(s)`, with constants folded, so most indexes become static slot
numbers. An instance whose writes all have static slots keeps written slots in locals and
builds the next tuple directly ("tuple mode"); one with a dynamic-index write works on a list
copy ("list mode")."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Callable

from gpcheck.spec import ir
from gpcheck.spec.ir import BinOp, FoldKind, UnOp
from gpcheck.spec.span import Span
from gpcheck.gpmodel import runtime
from gpcheck.gpmodel.runtime import FaultSite

_INT_RE = re.compile(r"-?\d+\Z")
_UNROLL_FOLD = 64  # folds over larger domains become generator expressions


class _NeedListMode(Exception):
    """Tuple mode cannot express this instance (dynamic write, or dynamic read after a write)."""


def _is_int(code: str) -> bool:
    return bool(_INT_RE.match(code))


def _safe_comment(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_ ,()=.-]", "_", text)


@dataclass
class _Ctx:
    """Compile-time environment of one piece of generated code."""

    mode: str  # "tuple" | "list" | "ro"
    locals: dict[int, str] = field(default_factory=dict)  # symbol id -> python expression
    written: dict[int, str] = field(default_factory=dict)  # tuple mode: slot -> local name
    written_vars: set[int] = field(default_factory=set)
    instance: int | None = None
    step_mode: bool = False  # per-instance step function: requires return their ordinal
    nested_requires: bool = False
    list_started: bool = False  # list mode: `w = list(s)` emitted (reads before it use s)


class _Emitter:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)


class Compiler:
    """Builds the generated module for one model instance."""

    unroll_fold = _UNROLL_FOLD  # folds over larger domains become generator expressions

    def __init__(self, model: ir.Model):
        self.model = model
        self.offsets = model.var_offsets()
        self.nslots = model.slot_total
        self.faults: list[FaultSite] = []
        self.tmp = itertools.count()

    # ------------------------------------------------------------------ faults
    def _site(self, ctx: _Ctx, kind: str, message: str, span: Span) -> int:
        self.faults.append(FaultSite(ctx.instance, kind, message, span))
        return len(self.faults) - 1

    # ------------------------------------------------------------------ state access
    def _read_slot(self, k: int, ctx: _Ctx, primed: bool) -> str:
        if ctx.mode == "ro":
            return f"t[{k}]" if primed else f"s[{k}]"
        if ctx.mode == "list":
            return f"w[{k}]" if ctx.list_started else f"s{k}"
        return ctx.written.get(k, f"s{k}")

    def _path(self, e: ir.Expr, ctx: _Ctx) -> tuple[int, str, ir.Type, bool, int]:
        """Resolve a VarRef/Index/Field chain: (static offset, dynamic offset code or "",
        type, primed, var index)."""
        match e:
            case ir.VarRef(var=v, type=t, primed=p):
                return self.offsets[v], "", t, p, v
            case ir.Field(base=b, name=n):
                off, dyn, t, p, v = self._path(b, ctx)
                delta, ft = ir.slot_offset(t, n)
                return off + delta, dyn, ft, p, v
            case ir.Index(base=b, index=i, span=sp):
                off, dyn, t, p, v = self._path(b, ctx)
                assert isinstance(t, ir.ArrayType)
                dom = ir.domain_values(t.index)
                lo, hi = dom.start, dom.stop - 1
                stride = ir.slot_count(t.elem)
                code = self.expr(i, ctx)
                if _is_int(code) and lo <= int(code) <= hi:
                    return off + (int(code) - lo) * stride, dyn, t.elem, p, v
                site = self._site(ctx, "index", f"index {{value}} is outside {t.index} of {_describe(b, self.model)}", sp)
                pos = f"_ix({code}, {lo}, {hi}, {site})"
                term = pos if stride == 1 else f"{pos} * {stride}"
                return off, (f"{dyn} + {term}" if dyn else term), t.elem, p, v
        raise AssertionError(f"not a path: {e}")

    def _slot_code(self, off: int, dyn: str, ctx: _Ctx, primed: bool, var: int) -> str:
        if not dyn:
            return self._read_slot(off, ctx, primed)
        if ctx.mode == "tuple" and var in ctx.written_vars:
            raise _NeedListMode
        base = "t" if primed and ctx.mode == "ro" else ("w" if ctx.mode == "list" and ctx.list_started else "s")
        return f"{base}[{off} + {dyn}]" if off else f"{base}[{dyn}]"

    def agg_slots(self, e: ir.Expr, ctx: _Ctx) -> list[str]:
        """Per-slot code of an aggregate-typed expression (a path, or `if` of paths)."""
        if isinstance(e, ir.Ite):
            c = self.expr(e.cond, ctx)
            return [f"({a} if {c} else {b})" for a, b in zip(self.agg_slots(e.then, ctx), self.agg_slots(e.else_, ctx))]
        off, dyn, t, p, v = self._path(e, ctx)
        return [self._slot_code(off + j, dyn, ctx, p, v) for j in range(ir.slot_count(t))]

    # ------------------------------------------------------------------ expressions
    def expr(self, e: ir.Expr, ctx: _Ctx) -> str:
        match e:
            case ir.Lit(value=v, type=t):
                return ("True" if v else "False") if isinstance(t, ir.BoolType) else str(v)
            case ir.LocalRef(sym=sym):
                return ctx.locals[sym.id]
            case ir.VarRef() | ir.Index() | ir.Field():
                if not ir.is_scalar(e.type):
                    raise AssertionError("aggregate used as a scalar")
                off, dyn, _, p, v = self._path(e, ctx)
                return self._slot_code(off, dyn, ctx, p, v)
            case ir.Unary(op=UnOp.NEG, operand=o):
                x = self.expr(o, ctx)
                return str(-int(x)) if _is_int(x) else f"(-{x})"
            case ir.Unary(op=UnOp.NOT, operand=o):
                x = self.expr(o, ctx)
                if x in ("True", "False"):
                    return "False" if x == "True" else "True"
                return f"(not {x})"
            case ir.Binary(op=op, lhs=l, rhs=r, span=sp):
                return self._binary(op, l, r, sp, ctx)
            case ir.Ite(cond=c, then=a, else_=b):
                cc = self.expr(c, ctx)
                if cc == "True":
                    return self.expr(a, ctx)
                if cc == "False":
                    return self.expr(b, ctx)
                return f"({self.expr(a, ctx)} if {cc} else {self.expr(b, ctx)})"
            case ir.Fold():
                return self._fold(e, ctx)
        raise AssertionError(e)

    def _binary(self, op: BinOp, l: ir.Expr, r: ir.Expr, sp: Span, ctx: _Ctx) -> str:
        if op in ir.EQUALITY_OPS and not ir.is_scalar(l.type):
            pairs = [f"{a} == {b}" for a, b in zip(self.agg_slots(l, ctx), self.agg_slots(r, ctx))]
            eq = "(" + " and ".join(pairs) + ")" if pairs else "True"
            return eq if op is BinOp.EQ else f"(not {eq})"
        a = self.expr(l, ctx)
        if op is BinOp.AND:
            if a == "False":
                return "False"
            b = self.expr(r, ctx)
            return b if a == "True" else f"({a} and {b})"
        if op is BinOp.OR:
            if a == "True":
                return "True"
            b = self.expr(r, ctx)
            return b if a == "False" else f"({a} or {b})"
        if op is BinOp.IMPLIES:
            if a == "False":
                return "True"
            b = self.expr(r, ctx)
            return b if a == "True" else f"((not {a}) or {b})"
        b = self.expr(r, ctx)
        if _is_int(a) and _is_int(b):
            x, y = int(a), int(b)
            if op in ir.ARITH_OPS:
                if op in (BinOp.DIV, BinOp.MOD) and y == 0:
                    site = self._site(ctx, "division", "division by zero ({value} / 0)", sp)
                    return f"_fail({site}, {x})"
                return str({BinOp.ADD: x + y, BinOp.SUB: x - y, BinOp.MUL: x * y,
                            BinOp.DIV: x // y if y else 0, BinOp.MOD: x % y if y else 0}[op])
            return "True" if {BinOp.EQ: x == y, BinOp.NE: x != y, BinOp.LT: x < y, BinOp.LE: x <= y,
                              BinOp.GT: x > y, BinOp.GE: x >= y}[op] else "False"
        if op in (BinOp.DIV, BinOp.MOD):
            if _is_int(b) and int(b) != 0:
                return f"({a} {'//' if op is BinOp.DIV else '%'} {b})"
            site = self._site(ctx, "division", "division by zero ({value} / 0)" if op is BinOp.DIV
                              else "modulo by zero ({value} % 0)", sp)
            return f"_{'div' if op is BinOp.DIV else 'mod'}({a}, {b}, {site})"
        py = {BinOp.ADD: "+", BinOp.SUB: "-", BinOp.MUL: "*", BinOp.EQ: "==", BinOp.NE: "!=",
              BinOp.LT: "<", BinOp.LE: "<=", BinOp.GT: ">", BinOp.GE: ">="}[op]
        return f"({a} {py} {b})"

    def _fold(self, e: ir.Fold, ctx: _Ctx) -> str:
        dom = ir.domain_values(e.binder.type)  # type: ignore[arg-type]
        kind = e.kind
        if len(dom) <= self.unroll_fold:
            parts = []
            for val in dom:
                ctx.locals[e.binder.id] = str(val)
                parts.append(self.expr(e.body, ctx))
            ctx.locals.pop(e.binder.id, None)
            if kind is FoldKind.ALL:
                parts = [p for p in parts if p != "True"]
                return "False" if "False" in parts else ("(" + " and ".join(parts) + ")" if parts else "True")
            if kind is FoldKind.ANY:
                parts = [p for p in parts if p != "False"]
                return "True" if "True" in parts else ("(" + " or ".join(parts) + ")" if parts else "False")
            if kind is FoldKind.COUNT:
                return "(" + " + ".join(f"(1 if {p} else 0)" for p in parts) + ")" if parts else "0"
            if kind is FoldKind.SUM:
                return "(" + " + ".join(parts) + ")" if parts else "0"
            return f"{kind.value}({', '.join(parts)})" if len(parts) > 1 else parts[0]
        name = f"l{e.binder.id}"
        ctx.locals[e.binder.id] = name
        body = self.expr(e.body, ctx)
        del ctx.locals[e.binder.id]
        gen = f"for {name} in range({dom.start}, {dom.stop})"
        return {
            FoldKind.ALL: f"all({body} {gen})",
            FoldKind.ANY: f"any({body} {gen})",
            FoldKind.COUNT: f"sum(1 for {name} in range({dom.start}, {dom.stop}) if {body})",
            FoldKind.SUM: f"sum({body} {gen})",
            FoldKind.MIN: f"min({body} {gen})",
            FoldKind.MAX: f"max({body} {gen})",
        }[kind]

    # ------------------------------------------------------------------ statements
    def _stmts(self, body: tuple[ir.Stmt, ...], ctx: _Ctx, out: _Emitter, top: bool) -> int:
        """Emit statements; returns how many extra indentation levels top-level requires opened."""
        opened = 0
        for st in body:
            match st:
                case ir.Require(cond=c, ordinal=o):
                    code = self.expr(c, ctx)
                    if ctx.step_mode:
                        if code != "True":
                            out.emit(f"if not {code}: return {o}")
                    elif top:
                        if code != "True":
                            out.emit(f"if {code}:")
                            out.depth += 1
                            opened += 1
                    else:
                        ctx.nested_requires = True
                        out.emit(f"if not {code}: break")
                case ir.Let(sym=sym, value=v):
                    code = self.expr(v, ctx)
                    if _is_int(code) or code in ("True", "False"):
                        ctx.locals[sym.id] = code
                    else:
                        name = f"l{sym.id}_{next(self.tmp)}"
                        out.emit(f"{name} = {code}")
                        ctx.locals[sym.id] = name
                case ir.Assign(target=t, value=v, span=sp):
                    self._assign(t, v, sp, ctx, out)
                case ir.If(cond=c, then=a, else_=b):
                    code = self.expr(c, ctx)
                    if code == "True":
                        self._block(a, ctx, out)
                        continue
                    if code == "False":
                        self._block(b, ctx, out)
                        continue
                    written = _written_vars(a) | _written_vars(b)
                    if ctx.mode == "tuple":
                        for vi in sorted(written):
                            self._materialise(vi, ctx, out)
                    elif written:
                        self._start_list(ctx, out)
                    out.emit(f"if {code}:")
                    out.depth += 1
                    self._block(a, ctx, out)
                    out.depth -= 1
                    if b:
                        out.emit("else:")
                        out.depth += 1
                        self._block(b, ctx, out)
                        out.depth -= 1
                case ir.For(binder=sym, lo=lo, hi=hi, body=fb):
                    for val in range(lo, hi + 1):
                        ctx.locals[sym.id] = str(val)
                        opened += self._stmts(fb, ctx, out, top)
                    ctx.locals.pop(sym.id, None)
        return opened

    def _block(self, body: tuple[ir.Stmt, ...], ctx: _Ctx, out: _Emitter) -> None:
        start = len(out.lines)
        opened = self._stmts(body, ctx, out, top=False)
        assert opened == 0
        if len(out.lines) == start:
            out.emit("pass")

    @staticmethod
    def _start_list(ctx: _Ctx, out: _Emitter) -> None:
        if ctx.mode == "list" and not ctx.list_started:
            out.emit("w = list(s)")
            ctx.list_started = True

    def _materialise(self, var: int, ctx: _Ctx, out: _Emitter) -> None:
        """Tuple mode: give every slot of `var` a local before a branch may write it."""
        start = self.offsets[var]
        for k in range(start, start + ir.slot_count(self.model.vars[var].type)):
            if k not in ctx.written:
                out.emit(f"v{k} = s{k}")
                ctx.written[k] = f"v{k}"
        ctx.written_vars.add(var)

    def _assign(self, target: ir.Expr, value: ir.Expr, sp: Span, ctx: _Ctx, out: _Emitter) -> None:
        off, dyn, t, _, var = self._path(target, ctx)
        if dyn and ctx.mode == "tuple":
            raise _NeedListMode
        self._start_list(ctx, out)
        if ir.is_scalar(t):
            vals = [self.expr(value, ctx)]
        else:
            vals = self.agg_slots(value, ctx)
        leaves = ir.leaf_paths(t)
        if len(vals) > 1:  # evaluate every source slot before writing any (overlapping copies)
            temps = []
            for v in vals:
                name = f"x{next(self.tmp)}"
                out.emit(f"{name} = {v}")
                temps.append(name)
            vals = temps
        base = ""
        if dyn:
            base = f"p{next(self.tmp)}"
            out.emit(f"{base} = {off} + {dyn}" if off else f"{base} = {dyn}")
        where = _describe(target, self.model)
        for j, (code, (_, st)) in enumerate(zip(vals, leaves)):
            check = isinstance(st, ir.IntType) and not (_is_int(code) and ir.scalar_in_range(st, int(code)))
            if ctx.mode == "tuple":
                name = f"v{off + j}"
                out.emit(f"{name} = {code}")
                ctx.written[off + j] = name
                ctx.written_vars.add(var)
                value_ref = name
            elif check:
                value_ref = f"x{next(self.tmp)}"
                out.emit(f"{value_ref} = {code}")
            else:
                value_ref = code
            if check:
                assert isinstance(st, ir.IntType)
                site = self._site(ctx, "range", f"{where} = {{value}} is outside {st}", sp)
                out.emit(f"if not ({st.lo} <= {value_ref} <= {st.hi}): _fail({site}, {value_ref})")
            if ctx.mode == "list":
                out.emit(f"w[{base} + {j}] = {value_ref}" if dyn else f"w[{off + j}] = {value_ref}")

    # ------------------------------------------------------------------ instances
    def instances(self) -> list[tuple[ir.Action, tuple[int, ...]]]:
        out = []
        for a in self.model.actions:
            doms = [ir.domain_values(p.type) for p in a.params]  # type: ignore[arg-type]
            for args in itertools.product(*doms):
                out.append((a, tuple(args)))
        return out

    def _instance_code(self, iid: int, action: ir.Action, args: tuple[int, ...], step: bool, out: _Emitter) -> None:
        for mode in ("tuple", "list"):
            ctx = _Ctx(mode=mode, instance=iid, step_mode=step)
            for p, v in zip(action.params, args):
                ctx.locals[p.id] = str(v)
            body = _Emitter()
            body.depth = out.depth + 1
            try:
                opened = self._stmts(action.body, ctx, body, top=True)
            except _NeedListMode:
                continue
            if mode == "tuple":
                parts = [ctx.written.get(k, f"s{k}") for k in range(self.nslots)]
                nxt = "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
            else:
                self._start_list(ctx, body)
                nxt = "tuple(w)"
            body.emit(f"return {nxt}" if step else f"out.append(({iid}, {nxt}))")
            body.depth -= opened
            label = _safe_comment(f"{action.name}({', '.join(map(str, args))})")
            out.emit(f"# {label}")
            if ctx.nested_requires:
                out.emit("for _ in _ONCE:")
                out.lines.extend(body.lines)
            else:
                out.lines.extend(line[4:] for line in body.lines)
            return
        raise AssertionError("list mode always applies")

    def successor_source(self) -> str:
        out = _Emitter()
        out.emit("def succ(s):")
        out.depth = 1
        if self.nslots:
            out.emit(", ".join(f"s{k}" for k in range(self.nslots)) + ", = s")
        out.emit("out = []")
        for iid, (a, args) in enumerate(self.instances()):
            self._instance_code(iid, a, args, False, out)
        out.emit("return out")
        return "\n".join(out.lines) + "\n"

    def step_source(self, iid: int) -> str:
        a, args = self.instances()[iid]
        out = _Emitter()
        out.emit(f"def step_{iid}(s):")
        out.depth = 1
        if self.nslots:
            out.emit(", ".join(f"s{k}" for k in range(self.nslots)) + ", = s")
        self._instance_code(iid, a, args, True, out)
        return "\n".join(out.lines) + "\n"

    def predicate_source(self, name: str, e: ir.Expr, two_state: bool = False) -> str:
        ctx = _Ctx(mode="ro")
        code = self.expr(e, ctx)
        return f"def {name}(s{', t' if two_state else ''}):\n    return {code}\n"


def _written_vars(body: tuple[ir.Stmt, ...]) -> set[int]:
    out: set[int] = set()
    for st in ir.iter_stmts(body):
        if isinstance(st, ir.Assign):
            t = st.target
            while isinstance(t, (ir.Index, ir.Field)):
                t = t.base
            assert isinstance(t, ir.VarRef)
            out.add(t.var)
    return out


def _describe(e: ir.Expr, model: ir.Model) -> str:
    """A short source-like rendering of a path for error messages."""
    match e:
        case ir.VarRef(var=v, primed=p):
            return model.vars[v].name + ("'" if p else "")
        case ir.Index(base=b, index=i):
            return f"{_describe(b, model)}[{_describe(i, model)}]"
        case ir.Field(base=b, name=n):
            return f"{_describe(b, model)}.{n}"
        case ir.LocalRef(sym=s):
            return s.name
        case ir.Lit(value=v, type=t):
            return str(ir.format_scalar(t, v))  # type: ignore[arg-type]
    return "..."


def build(source: str, names: list[str]) -> dict[str, Callable[..., object]]:
    """Execute generated source (built from IR only) and return the named functions."""
    env: dict[str, object] = {
        "_ix": runtime.ix, "_div": runtime.div, "_mod": runtime.mod, "_fail": runtime.fail, "_ONCE": (None,),
    }
    exec(compile(source, "<gpmodel>", "exec"), env)  # noqa: S102 - source generated from the IR only
    return {n: env[n] for n in names}  # type: ignore[misc]

"""Typed IR → C source of one model instance's successor function and predicates, for the
device search (`--device cuda`, checker/engines/explicit/device_search.py).

The C is not a second translation of the IR: it is the numba flavour that gpmodel/jit.py's
`JitCompiler` generates from the IR (the same packed words, the same error flag, the same
control flow), parsed with `ast` and printed as C, so that the device core and the compiled CPU
core evaluate every action, guard and predicate alike. Only the few shapes that generator
writes are accepted (straight-line code, `if`, `for _ in range(1)` with `break`, array
subscripts, the runtime helpers); anything else raises `Untranslatable`, which the engine
reports as a model it does not run.

Python's semantics are kept where C differs: `//` and `%` floor (`_fdiv`, `_fmod`), `and`/`or`
on truth values (the type checker makes every operand a bool), integers 64-bit (the compiled
core's precondition, gpmodel/int_range.py). The same text compiles with nvcc (kernels, launched
with CuPy) and with the host C compiler (a loop over the thread indexes), which is how the
default test run checks it without a GPU (gpmodel/cuda_kernels.py)."""

from __future__ import annotations

import ast

from gpcheck.gpmodel.cuda_compact import compact_source
from gpcheck.gpmodel.cuda_kernels import KERNELS, PRELUDE
from gpcheck.gpmodel.jit import JitCompiler
from gpcheck.gpmodel.model import CompiledModel
from gpcheck.gpmodel.packed import PackedLayout

# the generated functions the device kernels call, with their C parameter types
_SIGNATURES = {
    "unpack_row": ("void", [("row", "const i64*"), ("s", "i64*")]),
    "pack_row": ("void", [("w", "const i64*"), ("out", "i64*"), ("n", "i64")]),
    "state_preds": ("i64", [("s", "const i64*"), ("want", "const unsigned char*"), ("bad", "unsigned char*"),
                            ("err", "i64*")]),
    "terminal": ("i64", [("s", "const i64*"), ("err", "i64*")]),
    "transitions": ("i64", [("s", "const i64*"), ("t", "const i64*"), ("want", "const unsigned char*"),
                            ("bad", "unsigned char*"), ("err", "i64*")]),
    "succ": ("i64", [("key", "const i64*"), ("s", "i64*"), ("w", "i64*"), ("out", "i64*"), ("iids", "i64*"),
                     ("err", "i64*")]),
}
_PART = ("i64", [("key", "const i64*"), ("s", "i64*"), ("w", "i64*"), ("out", "i64*"), ("iids", "i64*"),
                 ("err", "i64*"), ("n", "i64")])
_HELPERS = {"_ix", "_div", "_mod", "_fail", "unpack_row", "pack_row"}
_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.BitAnd: "&", ast.BitOr: "|", ast.LShift: "<<",
           ast.RShift: ">>", ast.BitXor: "^"}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


class Untranslatable(Exception):
    """The generated code has a shape this printer does not know (the model is not run on the device)."""


class _Printer:
    """One generated numba function as a C function."""

    def __init__(self, fn: ast.FunctionDef, ret: str, params: list[tuple[str, str]], words: int):
        self.fn = fn
        self.ret = ret
        self.params = params
        self.words = words
        self.lines: list[str] = []
        self.locals: list[str] = []

    def source(self) -> str:
        names = {p for p, _ in self.params}
        for node in ast.walk(self.fn):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AugAssign):
                targets = [node.target]
            for t in targets:
                if isinstance(t, ast.Name) and t.id not in names and t.id not in self.locals:
                    self.locals.append(t.id)
        head = ", ".join(f"{ty} {name}" for name, ty in self.params)
        self.lines.append(f"DEV {self.ret} {self.fn.name}({head}) {{")
        if self.locals:
            self.lines.append("    i64 " + ", ".join(f"{n} = 0" for n in self.locals) + ";")
        self._body(self.fn.body, 1)
        if self.ret != "void":
            self.lines.append("    return 0;")
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"

    def _emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def _body(self, body: list[ast.stmt], depth: int) -> None:
        for st in body:
            self._stmt(st, depth)

    def _stmt(self, st: ast.stmt, depth: int) -> None:
        match st:
            case ast.Assign(targets=[target], value=value):
                self._emit(depth, f"{self._target(target)} = {self.expr(value)};")
            case ast.AugAssign(target=target, op=op, value=value) if type(op) in _BINOPS:
                self._emit(depth, f"{self._target(target)} {_BINOPS[type(op)]}= {self.expr(value)};")
            case ast.If(test=test, body=body, orelse=orelse):
                self._emit(depth, f"if ({self.expr(test)}) {{")
                self._body(body, depth + 1)
                if orelse:
                    self._emit(depth, "} else {")
                    self._body(orelse, depth + 1)
                self._emit(depth, "}")
            case ast.For(target=ast.Name(id="_"), iter=ast.Call(func=ast.Name(id="range"), args=[ast.Constant(value=1)]),
                         body=body, orelse=[]):
                self._emit(depth, "do {")  # the generator's once-loop: `break` leaves an instance
                self._body(body, depth + 1)
                self._emit(depth, "} while (0);")
            case ast.Break():
                self._emit(depth, "break;")
            case ast.Pass():
                self._emit(depth, ";")
            case ast.Return(value=None):
                self._emit(depth, "return;" if self.ret == "void" else "return 0;")
            case ast.Return(value=value) if value is not None:
                self._emit(depth, "return;" if self.ret == "void" else f"return {self.expr(value)};")
            case ast.Expr(value=ast.Call() as call):
                self._emit(depth, f"{self.expr(call)};")
            case _:
                raise Untranslatable(f"statement {ast.dump(st)[:80]}")

    def _target(self, t: ast.expr) -> str:
        if isinstance(t, (ast.Name, ast.Subscript)):
            return self.expr(t)
        raise Untranslatable(f"assignment target {ast.dump(t)[:80]}")

    def expr(self, e: ast.expr) -> str:
        match e:
            case ast.Constant(value=bool() as b):
                return "1" if b else "0"
            case ast.Constant(value=int() as v):
                return f"{v}LL" if abs(v) < 2**63 else _too_big(v)
            case ast.Name(id=name):
                return name
            case ast.Subscript(value=ast.Name(id=base), slice=ast.Tuple(elts=[row, col])):
                return f"{base}[({self.expr(row)}) * {self.words} + ({self.expr(col)})]"
            case ast.Subscript(value=ast.Name(id=base), slice=index):
                return f"{base}[{self.expr(index)}]"
            case ast.UnaryOp(op=ast.Not(), operand=o):
                return f"(!{self.expr(o)})"
            case ast.UnaryOp(op=ast.USub(), operand=o):
                return f"(-{self.expr(o)})"
            case ast.BoolOp(op=op, values=values):
                joiner = " && " if isinstance(op, ast.And) else " || "
                return "(" + joiner.join(f"({self.expr(v)} != 0)" for v in values) + ")"
            case ast.BinOp(left=l, op=ast.FloorDiv(), right=r):
                return f"_fdiv({self.expr(l)}, {self.expr(r)})"
            case ast.BinOp(left=l, op=ast.Mod(), right=r):
                return f"_fmod({self.expr(l)}, {self.expr(r)})"
            case ast.BinOp(left=l, op=op, right=r) if type(op) in _BINOPS:
                return f"({self.expr(l)} {_BINOPS[type(op)]} {self.expr(r)})"
            case ast.Compare(left=l, ops=ops, comparators=rights):
                parts, left = [], self.expr(l)
                for op, r in zip(ops, rights):
                    if type(op) not in _CMPOPS:
                        raise Untranslatable(f"comparison {ast.dump(op)}")
                    right = self.expr(r)
                    parts.append(f"({left} {_CMPOPS[type(op)]} {right})")
                    left = right
                return parts[0] if len(parts) == 1 else "(" + " && ".join(parts) + ")"
            case ast.IfExp(test=t, body=a, orelse=b):
                return f"(({self.expr(t)}) ? ({self.expr(a)}) : ({self.expr(b)}))"
            case ast.Call(func=ast.Attribute(value=ast.Name(id="np"), attr="int64"), args=[a], keywords=[]):
                return f"((i64)({self.expr(a)}))"
            case ast.Call(func=ast.Name(id=("min" | "max") as f), args=args, keywords=[]) if args:
                out = self.expr(args[0])
                for a in args[1:]:
                    out = f"_{f}2({out}, {self.expr(a)})"
                return out
            case ast.Call(func=ast.Name(id=f), args=args, keywords=[]) if f in _HELPERS or f.startswith("succ_"):
                return f"{f}({', '.join(self.expr(a) for a in args)})"
        raise Untranslatable(f"expression {ast.dump(e)[:80]}")


def _too_big(v: int) -> str:
    raise Untranslatable(f"integer literal {v} beyond 64 bits")


def model_functions(cm: CompiledModel, packed: PackedLayout) -> str:
    """The C functions of one model instance: unpack_row, pack_row, the succ parts and succ,
    state_preds, terminal, transitions (the numba module's, printed as C)."""
    tree = ast.parse(JitCompiler(cm.model, packed).module_source())
    fns = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    parts = sorted((n for n in fns if n.startswith("succ_")), key=lambda n: int(n[5:]))
    out = [_Printer(fns[h], *_SIGNATURES[h], packed.words).source() for h in ("unpack_row", "pack_row")]
    out += [_Printer(fns[p], *_PART, packed.words).source() for p in parts]
    for name in ("succ", "state_preds", "terminal", "transitions"):
        out.append(_Printer(fns[name], *_SIGNATURES[name], packed.words).source())
    return "\n".join(out)


def device_source(cm: CompiledModel, packed: PackedLayout) -> str:
    """The whole C text for the device search of one model instance: the prelude (host or CUDA
    macros, the runtime helpers), the model's functions and the search kernels."""
    m = cm.model
    consts = (f"#define W {packed.words}\n#define NSLOTS {max(1, m.slot_total)}\n"
              f"#define NINST {max(1, len(cm.instances))}\n#define NINV {max(1, len(m.invariants))}\n"
              f"#define NTR {max(1, len(m.transitions))}\n")
    return "\n".join([f"/* generated by gpcheck (gpmodel/cuda_source.py) from the typed IR */", consts, PRELUDE,
                      model_functions(cm, packed), KERNELS, compact_source(packed)])

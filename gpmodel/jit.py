"""IR → numba source → machine code: the successor function and predicates of one model
instance over bit-packed states (gpmodel/packed.py), for the compiled explicit engine.

The generated source comes from the same `Compiler` as the Python functions (gpmodel/compile.py),
so both engines share one translation of the IR; this module changes only what numba cannot
run or what the packed representation needs:
  * a modelling error cannot be raised and caught in compiled code, so the runtime helpers set
    a flag (`err[0] = 1`) and return a harmless value; the code checks the flag before each
    `require` decides and before a successor is emitted, and the caller then asks the Python
    functions for the exact error (the same first error: faults are sticky and the generated
    control flow is the same);
  * successors are written packed into rows of an output array instead of tuples;
  * folds are always unrolled (no generator expressions).
Integers are 64-bit in the compiled code (the Python engine's are unbounded).

The module text is written once into a user cache directory (never into the installed package)
and imported from there, so numba's `cache=True` keeps the machine code between runs."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from spec import ir
from gpmodel import jit_kernels
from gpmodel.compile import Compiler, _Ctx, _Emitter, _NeedListMode, _safe_comment
from gpmodel.packed import PackedLayout

PART_LINES = 80  # lines of generated successor code per compiled function (see _succ_source)
_HELPER_CALL = re.compile(r"(?<!def )\b_(ix|div|mod|fail)\(")
_RUNTIME = '''
@njit(cache=True)
def _ix(err, i, lo, hi, site):
    if lo <= i <= hi:
        return i - lo
    err[0] = 1
    return 0


@njit(cache=True)
def _div(err, a, b, site):
    if b == 0:
        err[0] = 1
        return 0
    return a // b


@njit(cache=True)
def _mod(err, a, b, site):
    if b == 0:
        err[0] = 1
        return 0
    return a % b


@njit(cache=True)
def _fail(err, site, value):
    err[0] = 1
    return 0
'''


_FAIL_STATEMENT = re.compile(r": _fail\(\d+, [^()]*\)$")


def _with_err(line: str) -> str:
    """Pass the error flag to every runtime helper call of one generated line (a failing
    range check sets it directly: fewer calls to type make numba compile faster)."""
    if line.lstrip().startswith("#"):
        return line
    line = _FAIL_STATEMENT.sub(": err[0] = 1", line)
    return _HELPER_CALL.sub(lambda m: f"_{m.group(1)}(err, ", line)


def _as_int(code: str, t: ir.ScalarType) -> str:
    """Slot value code as an integer (bools become 0/1; other slots are ints already)."""
    if code in ("True", "False"):
        return "1" if code == "True" else "0"
    return f"(1 if {code} else 0)" if isinstance(t, ir.BoolType) else code


class JitCompiler(Compiler):
    """The numba flavour of the generated code (see the module docstring)."""

    unroll_fold = 1 << 30

    def __init__(self, model: ir.Model, packed: PackedLayout):
        super().__init__(model)
        self.packed = packed
        self._faults_at_start = 0

    def _may_fault(self) -> bool:
        return len(self.faults) > self._faults_at_start

    def _stmts(self, body: tuple[ir.Stmt, ...], ctx: _Ctx, out: _Emitter, top: bool) -> int:
        opened = 0
        for st in body:
            if not isinstance(st, ir.Require):
                opened += super()._stmts((st,), ctx, out, top)
                continue
            code = self.expr(st.cond, ctx)
            if code == "True":
                continue
            name = f"c{next(self.tmp)}"
            out.emit(f"{name} = {code}")
            if self._may_fault():
                out.emit("if err[0]: return -1")
            if top:
                out.emit(f"if {name}:")
                out.depth += 1
                opened += 1
            else:
                ctx.nested_requires = True
                out.emit(f"if not {name}: break")
        return opened

    @staticmethod
    def _start_list(ctx: _Ctx, out: _Emitter) -> None:
        if ctx.mode == "list" and not ctx.list_started:
            out.emit("unpack_row(key, w)")
            ctx.list_started = True

    def _instance_code(self, iid: int, action: ir.Action, args: tuple[int, ...], step: bool, out: _Emitter) -> None:
        self._faults_at_start = len(self.faults)
        for mode in ("tuple", "list"):
            ctx = _Ctx(mode=mode, instance=iid)
            for p, v in zip(action.params, args):
                ctx.locals[p.id] = str(v)
            body = _Emitter()
            body.depth = out.depth + 1
            mark = len(self.faults)
            try:
                opened = self._stmts(action.body, ctx, body, top=True)
            except _NeedListMode:
                del self.faults[mark:]
                continue
            types = self.packed.slot_types
            if mode == "tuple":
                words = self.packed.repack_exprs("key", {k: _as_int(c, types[k]) for k, c in ctx.written.items()})
            else:
                self._start_list(ctx, body)
                words = self.packed.pack_exprs([f"w[{k}]" for k in range(self.nslots)])
            if self._may_fault():
                body.emit("if err[0]: return -1")
            for word, code in enumerate(words):
                body.emit(f"out[n, {word}] = {code}")
            body.emit(f"iids[n] = {iid}")
            body.emit("n += 1")
            body.depth -= opened
            label = f"{action.name}({', '.join(map(str, args))})"
            out.emit(f"# {_safe_comment(label)}")
            # the slot locals (v<slot>) renamed per instance: numba's SSA pass is slow on
            # variables reassigned across many blocks
            lines = [re.sub(r"\bv(\d+)\b", rf"v{iid}_\1", line) for line in body.lines]
            if ctx.nested_requires:
                out.emit("for _ in range(1):")
                out.lines.extend(lines)
            else:
                out.lines.extend(line[4:] for line in lines)
            return
        raise AssertionError("list mode always applies")

    # ------------------------------------------------------------------ the module
    def module_source(self) -> str:
        """The whole generated module: runtime helpers, model functions, engine kernels."""
        m = self.model
        lines = ["# generated by gpcheck (gpmodel/jit.py) from the typed IR of model "
                 + _safe_comment(m.name), "import numpy as np", "from numba import njit", _RUNTIME]
        lines.append(f"NSLOTS = {max(1, self.nslots)}")
        lines.append(f"WORDS = {self.packed.words}")
        lines.append(f"NINST = {len(self.instances())}")
        lines.append(f"NINV = {len(m.invariants)}")
        lines.append(f"NTRANS = {len(m.transitions)}")
        lines.append("")
        lines.append(self._unpack_source())
        lines.append(self._succ_source())
        lines.append(self._state_preds_source())
        lines.append(self._transitions_source())
        lines.append(self._terminal_source())
        lines.append(self._liveness_source("live_q", [p.q for p in m.liveness]))
        lines.append(self._liveness_source("live_p", [p.p for p in m.liveness]))
        lines.append(jit_kernels.SOURCE)
        return "\n".join(_with_err(line) for line in "\n".join(lines).split("\n")) + "\n"

    def _unpack_source(self) -> str:
        out = ["@njit(cache=True, inline=\"always\")", "def unpack_row(row, s):"]
        out += [f"    s[{k}] = {self.packed.unpack_expr(k, 'row')}" for k in range(self.nslots)]
        out += ["    return 0", "", "", "@njit(cache=True)", "def unpack(rows, i, s):", "    return unpack_row(rows[i], s)"]
        return "\n".join(out) + "\n"

    def _succ_source(self) -> str:
        """`succ(key, s, w, out, iids, err)`: the successors of packed state `key`, written into
        the rows of `out` with their instance ids in `iids`; their number, or -1 on a modelling
        error. The instances are split into part functions of about PART_LINES lines: numba's
        compile time grows faster than linearly with the size of one function."""
        parts: list[list[str]] = [[]]
        for iid, (a, args) in enumerate(self.instances()):
            out = _Emitter()
            out.depth = 1
            self._instance_code(iid, a, args, False, out)
            if parts[-1] and len(parts[-1]) + len(out.lines) > PART_LINES:
                parts.append([])
            parts[-1].extend(out.lines)
        text = []
        calls = []
        for j, body in enumerate(parts):
            code = [line for line in body if not line.lstrip().startswith("#")]
            used = sorted({int(x) for line in code for x in re.findall(r"\bs(\d+)\b", line)})
            head = [f"    s{k} = {self.packed.unpack_expr(k, 'key')}" for k in used]
            if any(re.search(r"\bs\[", line) for line in code):
                head.append("    unpack_row(key, s)  # a dynamic index reads the state array")
            text += ["@njit(cache=True)", f"def succ_{j}(key, s, w, out, iids, err, n):", *head, *body,
                     "    return n", "", ""]
            calls += [f"    n = succ_{j}(key, s, w, out, iids, err, n)", "    if n < 0:", "        return -1"]
        text += ["@njit(cache=True)", "def succ(key, s, w, out, iids, err):", "    n = 0", *calls, "    return n"]
        return "\n".join(text) + "\n"

    def _pred(self, e: ir.Expr) -> str:
        return self.expr(e, _Ctx(mode="ro"))

    def _state_preds_source(self) -> str:
        """`state_preds(s, want, bad, err)`: every wanted invariant (bad[i] = violated), then
        every constraint and terminal predicate, all evaluated in full (a modelling error in any
        of them is reported); returns whether s lies inside the constraints."""
        out = ["@njit(cache=True)", "def state_preds(s, want, bad, err):"]
        for i, inv in enumerate(self.model.invariants):
            out.append(f"    if want[{i}]:")
            out.append(f"        bad[{i}] = 0 if {self._pred(inv.expr)} else 1")
        out.append("    inside = True")
        for c in self.model.constraints:
            out.append(f"    if not ({self._pred(c.expr)}):")
            out.append("        inside = False")
        for e in self.model.terminals:
            out.append(f"    _t = {self._pred(e)}")
        out.append("    return inside")
        return "\n".join(out) + "\n"

    def _transitions_source(self) -> str:
        out = ["@njit(cache=True)", "def transitions(s, t, want, bad, err):"]
        for i, tp in enumerate(self.model.transitions):
            code = self.expr(tp.expr, _Ctx(mode="ro"))
            out.append(f"    if want[{i}]:")
            out.append(f"        bad[{i}] = 0 if {code} else 1")
        out.append("    return 0")
        return "\n".join(out) + "\n"

    def _liveness_source(self, name: str, exprs: list[ir.Expr | None]) -> str:
        """`name(s, which, err)`: the predicate of liveness property number `which`."""
        out = ["@njit(cache=True)", f"def {name}(s, which, err):"]
        for i, e in enumerate(exprs):
            if e is not None:
                out.append(f"    if which == {i}:")
                out.append(f"        return True if {self._pred(e)} else False")
        out.append("    return True")
        return "\n".join(out) + "\n"

    def _terminal_source(self) -> str:
        out = ["@njit(cache=True)", "def terminal(s, err):"]
        if self.model.allow_deadlock:
            out.append("    return True")
        else:
            out.append("    found = False")
            for e in self.model.terminals:
                out.append(f"    if {self._pred(e)}:")
                out.append("        found = True")
            out.append("    return found")
        return "\n".join(out) + "\n"


def cache_dir() -> Path:
    """Where generated modules and numba's machine code live: $GPCHECK_CACHE_DIR, else
    $XDG_CACHE_HOME/gpcheck/jit, else ~/.cache/gpcheck/jit; a temporary directory if none of
    them can be written."""
    env = os.environ.get("GPCHECK_CACHE_DIR")
    if env:
        base = Path(env)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "gpcheck" / "jit"
    try:
        base.mkdir(parents=True, exist_ok=True)
        probe = base / ".write-probe"
        probe.write_text("")
        probe.unlink()
        return base
    except OSError:
        fallback = Path(tempfile.gettempdir()) / f"gpcheck-jit-{os.getuid() if hasattr(os, 'getuid') else 0}"
        fallback.mkdir(parents=True, exist_ok=True)
        return fallback


def _module_name(source: str) -> str:
    return "gpcheck_jit_" + hashlib.sha256(source.encode()).hexdigest()[:24]


def is_cached_source(source: str) -> bool:
    """Whether numba has machine code for this generated module in the cache directory."""
    name = _module_name(source)
    return name in sys.modules or any((cache_dir() / "__pycache__").glob(f"{name}.expand-*.nbi"))


def load_module(source: str) -> ModuleType:
    """Write `source` (once, atomically) under the cache directory and import it."""
    name = _module_name(source)
    if name in sys.modules:
        return sys.modules[name]
    path = cache_dir() / f"{name}.py"
    if not path.exists() or path.read_text() != source:
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(source)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def compile_jit(model: ir.Model, packed: PackedLayout) -> ModuleType:
    """The compiled module of one model instance (see jit_kernels for what it exports)."""
    return load_module(JitCompiler(model, packed).module_source())



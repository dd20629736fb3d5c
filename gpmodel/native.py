"""Compiled kernels kept as native object code and loaded without numba (NOTE(native-kernels)).

NOTE(native-kernels): numba's own cache makes a later process import numba (0.1 s) and set up
its typing and target contexts for the first cached dispatch of every function (0.2 s on the
2-core development machine); for a search of about a second that is a third of the run. So the
hottest kernels of the sequential search (KERNELS) are also kept as relocatable machine code:
when numba has a kernel compiled for the argument types of a call, `build` takes the kernel's
optimised LLVM module from numba (the module numba links into other libraries, with every
callee inside), keeps only the kernel (numba's Python and C wrappers dropped, every other
symbol made internal), adds an entry `i32 entry(i64 *argv, ret *)` that unpacks one word per
argument of numba's calling convention, and emits an object file with the target machine numba
itself uses for its JIT. `load` in a later process imports llvmlite's binding alone (0.03 s),
adds the object file to an MCJIT engine and calls the entry through ctypes (`Kernel`), with the
arrays passed as numba passes them (meminfo and parent null, sizes, data pointer, shape,
strides). The machine code is the code numba runs, so results are the same bit for bit.

What may not be kept is left to numba: a kernel that allocates, raises into Python or calls
anything outside the object but the C library (its undefined symbols are checked against the
process at build time and again at load time, before MCJIT could abort on a missing one), or a
signature other than arrays, integers and booleans. A kernel call whose arrays differ from the
kept signature (dtype, dimensions, layout, alignment) is also handed to numba. The one symbol
numba's reference counting needs, NRT_MemInfo_call_dtor, is defined as a trap: with null
meminfos (arrays that numpy owns) the count is never taken, so it is never reached.

A file is named by the generated module (a hash of its source), the kernel and a key over
this format, the llvmlite and numba versions (their _version.py files, read without importing
them) and the host CPU's name and features. The file is not trusted by its name alone
(NOTE(cache-trust) in spec/usercache.py): its header repeats the module, kernel and key, and
the object's one exported symbol, the entry, is named by a fingerprint of all three, so an
object built for another model, kernel or key (a file copied or restored under this name)
lacks the symbol this load asks for and is refused before anything of it is loaded. A file
that is missing, unreadable, whose digest, module, kernel, key or symbols do not match, or
whose undefined symbols do not resolve makes `load` return None: the caller then uses numba,
silently and with the same results. $GPCHECK_NATIVE: `auto` (default; use kept
code, keep it after numba's), `off` (numba only), `always` (keep and use the native code in the
process that compiled it too: the tests run the cross-checks this way)."""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import json
import os
import struct
from pathlib import Path
from typing import Any, Callable

from gpcheck.spec.usercache import cache_dir, write_atomically

KERNELS = ("expand", "retable")  # the sequential search's kernels (checker/engines/explicit/fast_explicit.py)
FORMAT = 2  # the layout of a kept file and its entry: part of the key
ALLOWED_SYMBOLS = ("memset", "memcpy", "memmove")  # undefined symbols the C library resolves
_TRAP_STUBS = ("NRT_MemInfo_call_dtor",)  # defined as a trap (see NOTE(native-kernels))
_MASK = (1 << 64) - 1


def mode() -> str:
    """$GPCHECK_NATIVE: auto, off or always (anything else counts as auto)."""
    value = os.environ.get("GPCHECK_NATIVE", "auto").strip().lower()
    return value if value in ("off", "always") else "auto"


def _version_text(package: str) -> str:
    """The text of a package's _version.py (its version, read without importing it), or ''."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return ""
    try:
        return (Path(spec.origin).parent / "_version.py").read_text()
    except OSError:
        return ""


_llvm: Any = None  # llvmlite.binding, initialised once
_engine: Any = None  # the MCJIT engine holding every loaded object (kept alive with it)
_key: str | None = None
_loaded: dict[str, "Kernel"] = {}  # by the object's digest: each object is added to the engine once


def _binding() -> Any:
    global _llvm
    if _llvm is None:
        import llvmlite.binding as llvm

        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _llvm = llvm
    return _llvm


def key() -> str:
    """The part of a file name that changes with the format, llvmlite, numba and the CPU."""
    global _key
    if _key is None:
        llvm = _binding()
        parts = [str(FORMAT), _version_text("llvmlite"), _version_text("numba"), llvm.get_process_triple(),
                 llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()]
        _key = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]
    return _key


def entry_name(module: str, kernel: str) -> str:
    """The entry symbol of the kept code of `kernel` of `module` under this key: the object's
    fingerprint, checked in the object itself before it is loaded."""
    digest = hashlib.sha256("\0".join((str(FORMAT), module, kernel, key())).encode()).hexdigest()[:32]
    return f"gpcheck_{kernel}_{digest}"


def path(module: str, kernel: str) -> Path:
    """Where the native code of `kernel` of the generated module `module` is kept."""
    return cache_dir() / "native" / f"{module}.{kernel}.{key()}.bin"


# ---------------------------------------------------------------------------- loading
class Kernel:
    """A kept kernel, called like numba's dispatcher with the arrays and scalars of its
    signature; a call with other types returns NotImplemented (the caller asks numba)."""

    def __init__(self, address: int, params: list[list[Any]], ret: list[Any], entry: str):
        self.entry = entry
        self._fn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)(address)
        self._params = params
        self._words = sum(5 + 2 * p[2] if p[0] == "a" else 1 for p in params)
        self._ret_bits, self._ret_signed = int(ret[1]), bool(ret[2])

    def __call__(self, *args: Any) -> Any:
        if len(args) != len(self._params):
            return NotImplemented
        words: list[int] = []
        for a, p in zip(args, self._params):
            if p[0] == "a":
                flags = getattr(a, "flags", None)
                if (flags is None or a.dtype.str != p[1] or a.ndim != p[2] or not flags.c_contiguous
                        or not flags.aligned or flags.writeable != p[3]):
                    return NotImplemented
                words += [0, 0, a.size, a.itemsize, a.ctypes.data]
                words += a.shape
                words += a.strides
            elif p[0] == "i":
                if isinstance(a, bool) or type(a).__name__ in ("bool", "bool_") or not hasattr(a, "__index__"):
                    return NotImplemented
                words.append(int(a) & _MASK)
            else:
                words.append(1 if a else 0)
        argv = (ctypes.c_uint64 * max(1, self._words))(*words)
        ret = (ctypes.c_uint8 * 8)()
        status = self._fn(ctypes.addressof(argv), ctypes.addressof(ret))
        if status != 0:  # numba's calling convention: an exception (no kept kernel raises)
            raise RuntimeError(f"the native kernel {self.entry} returned status {status}")
        return int.from_bytes(bytes(ret)[: self._ret_bits // 8], "little", signed=self._ret_signed)


def load(module: str, kernel: str) -> Kernel | None:
    """The kept native code of `kernel`, or None when there is none that can be used here
    (see NOTE(native-kernels)); never raises."""
    if mode() == "off":
        return None
    try:
        return _load(path(module, kernel), module, kernel)
    except Exception:  # noqa: BLE001 - anything wrong with a cache file means: use numba
        return None


def _load(file: Path, module: str, kernel: str) -> Kernel | None:
    global _engine
    try:
        data = file.read_bytes()
    except OSError:
        return None
    head, sep, obj = data.partition(b"\n")
    if not sep:
        return None
    meta = json.loads(head)
    entry = entry_name(module, kernel)
    if (meta.get("format") != FORMAT or meta.get("sha256") != hashlib.sha256(obj).hexdigest()
            or meta.get("module") != module or meta.get("kernel") != kernel or meta.get("key") != key()
            or meta.get("entry") != entry):
        return None
    undefined, defined = _symbols(obj)  # the object itself, not only its header (see the docstring)
    if defined != {entry} or sorted(undefined) != sorted(meta["undefined"]):
        return None
    llvm = _binding()
    for name in meta["undefined"]:  # MCJIT aborts the process on a symbol it cannot resolve
        if name not in ALLOWED_SYMBOLS or not llvm.address_of_symbol(name):
            return None
    if meta["sha256"] in _loaded:  # the same code loaded before in this process
        return _loaded[meta["sha256"]]
    if _engine is None:
        tm = llvm.Target.from_default_triple().create_target_machine(
            cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=3,
            codemodel="jitdefault", jit=True)
        _engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
    _engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    _engine.finalize_object()
    address = _engine.get_function_address(meta["entry"])
    if not address:
        return None
    kernel = _loaded[meta["sha256"]] = Kernel(address, meta["params"], meta["ret"], meta["entry"])
    return kernel


# ---------------------------------------------------------------------------- building
def build(module: str, kernel: str, dispatcher: Any, args: tuple[Any, ...]) -> bool:
    """Keep numba's machine code of `kernel` for the types of `args` (compiling it if needed)
    under `path`; whether it was kept. Needs numba (imported by the caller); never raises."""
    try:
        return _build(module, kernel, dispatcher, args)
    except Exception:  # noqa: BLE001 - numba's internals changed, a cache not writable, ...: numba stays
        return False


def _params(sig: tuple[Any, ...]) -> list[list[Any]] | None:
    from numba.core import types
    import numpy as np

    out: list[list[Any]] = []
    for t in sig:
        if isinstance(t, types.Array) and t.layout == "C" and t.aligned:
            out.append(["a", np.dtype(str(t.dtype)).str, t.ndim, bool(t.mutable)])
        elif isinstance(t, types.Boolean):
            out.append(["b"])
        elif isinstance(t, types.Integer) and t.bitwidth <= 64:
            out.append(["i"])
        else:
            return None
    return out


def _build(module: str, kernel: str, dispatcher: Any, args: tuple[Any, ...]) -> bool:
    from numba import typeof
    from numba.core import types

    sig = tuple(typeof(a) for a in args)
    params = _params(sig)
    if params is None:
        return False
    dispatcher.compile(sig)
    cres = dispatcher.overloads[sig]
    rt = cres.signature.return_type
    if isinstance(rt, types.Boolean):
        ret = ["b", 8, False]
    elif isinstance(rt, types.Integer) and rt.bitwidth in (8, 16, 32, 64):
        ret = ["i", rt.bitwidth, rt.signed]
    else:
        return False
    lib = cres.library
    llvm = _binding()
    mod = llvm.parse_bitcode(lib._get_module_for_linking().as_bitcode())  # a copy: numba's stays as it is
    name = cres.fndesc.mangled_name
    fn = mod.get_function(name)
    arg_types = [str(a.type) for a in fn.arguments]
    words = sum(5 + 2 * p[2] if p[0] == "a" else 1 for p in params)
    if len(arg_types) != 2 + words:  # (ret *, excinfo **, each argument as numba flattens it)
        return False
    for f in mod.functions:
        if not f.is_declaration:
            f.linkage = "external" if f.name == name else "internal"
    for g in mod.global_variables:
        if not g.is_declaration:
            g.linkage = "internal"
    entry = entry_name(module, kernel)
    mod.link_in(_entry_module(llvm, mod, entry, name, arg_types))
    for f in mod.functions:  # the entry is the object's one exported symbol (see _load)
        if f.name != entry and not f.is_declaration:
            f.linkage = "internal"
    pb = llvm.create_pass_builder(lib._codegen._tm, llvm.create_pipeline_tuning_options(speed_level=0))
    pm = llvm.ModulePassManager()
    pm.add_global_dead_code_eliminate_pass()
    pm.add_strip_dead_prototype_pass()
    pm.run(mod, pb)
    mod.verify()
    obj = bytes(lib._codegen._tm.emit_object(mod))
    undefined_set, defined = _symbols(obj)
    undefined = sorted(undefined_set)
    if any(s not in ALLOWED_SYMBOLS for s in undefined) or defined != {entry}:
        return False
    meta = {"format": FORMAT, "module": module, "kernel": kernel, "key": key(), "entry": entry, "params": params,
            "ret": ret, "undefined": undefined, "sha256": hashlib.sha256(obj).hexdigest()}
    return write_atomically(path(module, kernel), json.dumps(meta).encode() + b"\n" + obj)


def _entry_module(llvm: Any, mod: Any, entry: str, kernel: str, arg_types: list[str]) -> Any:
    """`i32 entry(ptr argv, ptr ret)`: the kernel called with argv's words as its arguments
    (pointers, integers truncated to their width), its exception slot local; and the trap
    stubs the kernel's module still declares."""
    lines = [f"define i32 @{entry}(ptr %argv, ptr %ret) {{", "  %exc = alloca ptr"]
    call = []
    for k, t in enumerate(arg_types[2:]):
        lines += [f"  %p{k} = getelementptr i64, ptr %argv, i64 {k}", f"  %v{k} = load i64, ptr %p{k}"]
        if t == "ptr":
            lines.append(f"  %a{k} = inttoptr i64 %v{k} to ptr")
        elif t == "i64":
            lines.append(f"  %a{k} = or i64 %v{k}, 0")
        else:
            lines.append(f"  %a{k} = trunc i64 %v{k} to {t}")
        call.append(f"{t} %a{k}")
    lines += [f"  %r = call i32 @\"{kernel}\"(ptr %ret, ptr %exc, {', '.join(call)})", "  ret i32 %r", "}",
              f"declare i32 @\"{kernel}\"({', '.join(arg_types)})"]
    for f in mod.functions:
        if f.is_declaration and f.name in _TRAP_STUBS:
            decl = str(f).strip().splitlines()[-1]  # "declare <ret> @name(<types>) ..."
            rtype = decl.split()[1]
            if rtype not in ("void", "i32", "i64", "ptr"):
                raise ValueError(f"unexpected declaration {decl}")
            types_ = decl[decl.index("(") + 1: decl.rindex(")")]
            params = ", ".join(f"{t.strip()} %x{i}" for i, t in enumerate(types_.split(",")) if t.strip())
            lines += [f"define {rtype} @{f.name}({params}) {{", "  call void @llvm.trap()", "  unreachable", "}"]
    lines.append("declare void @llvm.trap()")
    wrapper = llvm.parse_assembly("\n".join(lines))
    wrapper.triple = mod.triple
    wrapper.data_layout = mod.data_layout
    return wrapper


def _symbols(obj: bytes) -> tuple[set[str], set[str]]:
    """The undefined and the defined non-local symbols of an ELF64 little-endian relocatable
    object (ValueError, IndexError or struct.error on anything else)."""
    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        raise ValueError("not a little-endian ELF64 object")
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize) for i in range(shnum)]
    undefined: set[str] = set()
    defined: set[str] = set()
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[sh[6]]
        for off in range(sh[4], sh[4] + sh[5], sh[9]):
            st_name, st_info, _, st_shndx, _, _ = struct.unpack_from("<IBBHQQ", obj, off)
            if st_name and (st_info >> 4) != 0:  # not STB_LOCAL
                start = strtab[4] + st_name
                name = obj[start: obj.index(b"\0", start)].decode()
                (undefined if st_shndx == 0 else defined).add(name)  # SHN_UNDEF or a section
    return undefined, defined


def _native_or(native: Kernel, fallback: Callable[[], Callable[..., Any]]) -> Callable[..., Any]:
    """Call `native`; a call of types it was not kept for goes to `fallback()` (numba)."""
    def call(*args: Any) -> Any:
        out = native(*args)
        return fallback()(*args) if out is NotImplemented else out
    call.native = native  # type: ignore[attr-defined]
    return call


def dispatch(module: str, kernel: str, numba_module: Callable[[], Any]) -> Callable[..., Any]:
    """The callable that runs `kernel` of a generated module: the kept native code when there is
    some (a call it cannot take goes to numba), else numba's dispatcher, which keeps its code
    at the first call (and, in mode `always`, runs the kept code from then on)."""
    native = load(module, kernel)
    if native is not None:
        return _native_or(native, lambda: getattr(numba_module(), kernel))
    disp = getattr(numba_module(), kernel)
    if mode() == "off":
        return disp
    state: dict[str, Callable[..., Any]] = {}

    def first(*args: Any) -> Any:
        if "fn" not in state:
            state["fn"] = disp
            kept = load(module, kernel) if build(module, kernel, disp, args) and mode() == "always" else None
            if kept is not None:
                state["fn"] = _native_or(kept, lambda: disp)
                first.native = kept  # type: ignore[attr-defined]
        return state["fn"](*args)
    return first

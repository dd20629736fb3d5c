"""The engine kernels every model shares are compiled once, not once per model
(NOTE(shared-kernels) in gpmodel/jit_shared.py, issue 33): a model's generated module defines
only the model's own functions and the sequential search kernels, binds its functions to the
shared kernels by name, and two models use the same shared module. The kernels themselves run
in the default run through tests/unit/test_fast_explicit.py (edges, liveness),
test_fast_latency.py and test_compiled_options.py (parallel, fingerprints)."""

from __future__ import annotations

import re

import pytest

from gpcheck.gpmodel import compile_model, jit_shared
from gpcheck.gpmodel.jit import _module_name, module_source, shared_source
from gpcheck.gpmodel.packed import PackedLayout
from gpcheck.spec import load_source

SPEC_A = ("model shared_a\nvar x: 0..3 = 0\naction inc { require x < 3\n x = x + 1 }\n"
          "invariant small: x <= 3\nliveness grows: eventually x == 3\n")
SPEC_B = ("model shared_b\nconst N = 2\nvar y: [0..N-1] -> bool = false\n"
          "action set(i: 0..N-1) { require not y[i]\n y[i] = true }\n"
          "transition keeps: y[0] implies y'[0]\n")
SHARED_NAMES = tuple(jit_shared.SIGNATURES) + jit_shared.IMPORTED


def _source(text: str, name: str) -> str:
    cm = compile_model(load_source(text, name))
    return module_source(cm, PackedLayout(cm.layout.slot_types))


def _defined(source: str) -> set[str]:
    return set(re.findall(r"^def (\w+)\(", source, re.M))


def test_model_modules_define_no_shared_kernel_and_import_one_shared_module():
    a, b = _source(SPEC_A, "shared_a.gpspec"), _source(SPEC_B, "shared_b.gpspec")
    shared = _module_name(shared_source())
    for source in (a, b):
        assert f"import {shared} as _shared\n" in source
        compiled = set(re.findall(r"^@njit\(cache=True\)\ndef (\w+)\(", source, re.M))
        assert "expand" in compiled and "succ" in compiled
        assert not compiled & set(SHARED_NAMES), compiled & set(SHARED_NAMES)
        for name in jit_shared.SIGNATURES:  # a plain Python binding, with the model's functions first
            funcs = ", ".join(jit_shared.SIGNATURES[name][1])
            assert f"def {name}(*args):\n    return _shared.compiled({name!r})({funcs}, *args" in source
    assert a != b


def test_the_shared_module_holds_every_shared_kernel_and_each_model_function_exists():
    shared = shared_source()
    defined = _defined(shared)
    assert set(SHARED_NAMES) <= defined
    for name, (fn, funcs, _spec) in jit_shared.SIGNATURES.items():
        params = fn.__code__.co_varnames[:fn.__code__.co_argcount]
        assert params[:len(funcs)] == funcs, name  # the model's functions come first
        assert f"    {name!r}: (_T." in shared
    model = _defined(_source(SPEC_A, "shared_a.gpspec"))
    assert set(jit_shared.MODEL_FUNCTIONS) <= model
    # the shared kernels are compiled on first use, not at import (an explicit signature
    # would make numba compile all of them whenever the module loads)
    assert not re.search(r"^@njit\(_T\.", shared, re.M)


@pytest.mark.parametrize("spec, text", [
    ("i8(I1, i8)", "_T.int64(SUCC_T, _T.int64[::1], _T.int64)"),
    ("T2(I2, U1)", "_T.UniTuple(_T.int64, 2)(SUCC_T, _T.int64[:, ::1], _T.uint8[::1])"),
    ("b1()", "_T.boolean(SUCC_T)"),
])
def test_signatures_expand_to_numba_types(spec, text):
    assert jit_shared._typed(spec, ("SUCC_T",)) == text

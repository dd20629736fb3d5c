"""What keeps a cold numba compilation of a generated model module cheap (issue 33: numba's
type inference and lowering were most of a fresh machine's first run): each generated
function is compiled for one argument signature only (a literal `n = 0` once made numba compile
the first successor part a second time, for `Literal[int](0)`), and the state is packed and
unpacked by one called function each instead of an expression per slot at every list-mode
action (`inline="always"` typed the unpacking again at every call site)."""

from __future__ import annotations

import pytest

from gpcheck.gpmodel import compile_model
from gpcheck.gpmodel.jit import load_model_module, module_source
from gpcheck.gpmodel.packed import PackedLayout
from gpcheck.spec import load_source

np = pytest.importorskip("numpy")
pytest.importorskip("numba")

# `x[i] = ...` with i a parameter folds to a static slot; `x[t % N]` is a dynamic write (list mode)
SPEC = ("model cost_t\nconst N = 3\nvar x: [0..N-1] -> 0..3 = 0\nvar t: 0..9 = 0\n"
        "action inc(i: 0..N-1) { require x[i] < 3\n x[i] = x[i] + 1\n t = (t + i) % 10 }\n"
        "action spin { require x[t % N] < 3\n x[t % N] = 3 }\n"
        "invariant small: t != 7 or x[0] != 3\n")


def _source():
    cm = compile_model(load_source(SPEC, "cost_t.gpspec"))
    packed = PackedLayout(cm.layout.slot_types)
    return cm, packed, module_source(cm, packed)


def test_the_generated_module_calls_pack_and_unpack_and_passes_no_literal_count():
    _, _, source = _source()
    assert 'inline="always"' not in source
    assert source.count("pack_row(w, out, n)\n") == 1  # the one list-mode action
    assert source.count("unpack_row(key, w)\n") == 1
    assert "    n = np.int64(0)\n    n = succ_0(key, s, w, out, iids, err, n)\n" in source


@pytest.mark.slow  # a cold numba compilation (about 5 s of CPU); the default run compiles the same code elsewhere
def test_each_generated_function_is_compiled_once_and_packing_is_called(tmp_path, monkeypatch):
    monkeypatch.setenv("GPCHECK_CACHE_DIR", str(tmp_path))  # a cold cache: numba compiles every function here
    cm, packed, source = _source()
    mod = load_model_module(source)
    key = np.array(packed.pack(cm.initial_states()[0]), dtype=np.int64)
    nslots, ninst = cm.model.slot_total, len(cm.instances)
    s, w = np.zeros(nslots, np.int64), np.zeros(nslots, np.int64)
    out, iids, err = np.zeros((ninst, packed.words), np.int64), np.zeros(ninst, np.int64), np.zeros(1, np.int64)
    n = mod.succ(key, s, w, out, iids, err)
    assert err[0] == 0 and n == ninst  # every inc and the spin are enabled in the initial state
    got = {tuple(packed.unpack(tuple(int(v) for v in out[k]))) for k in range(n)}
    assert (3, 0, 0, 0) in got and (1, 0, 0, 0) in got and (0, 1, 0, 1) in got
    parts = [name for name in vars(mod) if name.startswith("succ_")]
    assert parts
    for name in parts + ["succ", "unpack_row", "pack_row"]:
        assert len(getattr(mod, name).signatures) == 1, name

"""Kept native kernels (gpmodel/native.py, NOTE(native-kernels)): the search they run is the
numba search state for state; a later process with a warm cache runs them without importing
numba; a kept file that is corrupt, truncated, missing, made for another key or naming a
symbol the process lacks is not used (numba runs, with the same results)."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpcheck.checker.engines.explicit.explicit import Limits, select_properties
from gpcheck.gpmodel import compile_model, jit_fingerprint, jit_kernels, jit_parallel, native
from gpcheck.gpmodel.kernel_source import kernel_source
from gpcheck.spec import bundled_models, load_source, load_spec

pytest.importorskip("numba")
np = pytest.importorskip("numpy")

from tests.unit.test_compiled_options import EXTRA  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# test_compiled_options.py's `wide` corner case (81 states over four array slots, an invariant
# violated, a transition property): the same text, so the same cached numba module, which the
# run compiles for that file (a spec of this file's own was a cold compilation of 5 s of CPU)
SPEC = "model t\n" + EXTRA["wide"]


def test_kernel_source_is_what_inspect_gives():
    for module in (jit_kernels, jit_parallel, jit_fingerprint):
        for name, fn in vars(module).items():
            if inspect.isfunction(fn) and fn.__module__ == module.__name__ and name not in ("source", "model_source",
                                                                                            "_source"):
                assert kernel_source(fn) == inspect.getsource(fn), name


def _search(model, mode: str, cache: Path, monkeypatch):
    from gpcheck.checker.engines.explicit import fast_explicit

    monkeypatch.setenv("GPCHECK_NATIVE", mode)
    cache.mkdir(parents=True, exist_ok=True)
    monkeypatch.setattr(native, "cache_dir", lambda: cache)  # kept files there; numba's cache stays warm
    cm = compile_model(model)
    res, g = fast_explicit.search(cm, select_properties(model, None), Limits(), workers=1)
    return cm, res, g


def _same(a, b) -> None:
    (_, ra, ga), (_, rb, gb) = a, b
    assert (ra.complete, ra.depth, ra.pruned, ra.fired, ra.stop_reason) == (rb.complete, rb.depth, rb.pruned,
                                                                           rb.fired, rb.stop_reason)
    assert ga.n == gb.n
    assert np.array_equal(ga.states[:ga.n], gb.states[:gb.n]) and np.array_equal(ga.parent[:ga.n], gb.parent[:gb.n])
    assert np.array_equal(ga.flags[:ga.n], gb.flags[:gb.n]) and np.array_equal(ga.table, gb.table)
    assert ra.invariant_cex == rb.invariant_cex and ra.transition_cex == rb.transition_cex
    assert ra.deadlock == rb.deadlock and ra.parent == rb.parent


# each bundled model compiles cold three times (its own cache folder): `slow`; the small spec
# covers the same path in the default run
@pytest.mark.parametrize("name", ["spec", *(pytest.param(m, marks=pytest.mark.slow) for m in bundled_models())])
def test_native_search_is_the_numba_search(name, tmp_path, monkeypatch):
    model = load_source(SPEC, "wide.gpspec") if name == "spec" else load_spec(name)
    off = _search(model, "off", tmp_path / "off", monkeypatch)
    assert not hasattr(off[2].module.expand, "native")
    on = _search(model, "always", tmp_path / "on", monkeypatch)
    assert hasattr(on[2].module.expand, "native"), "the kept native code ran"
    _same(off, on)
    again = _search(model, "auto", tmp_path / "on", monkeypatch)  # loaded from the file written above
    assert hasattr(again[2].module.expand, "native")
    _same(off, again)


@pytest.fixture(scope="module")
def kept_once(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, Path]:
    """One search of SPEC that kept its native code (in the folder returned): building and
    writing it is most of a damage test's CPU, and each test damages a copy of its own."""
    folder = tmp_path_factory.mktemp("kept")
    with pytest.MonkeyPatch.context() as mp:
        first = _search(load_source(SPEC, "wide.gpspec"), "always", folder, mp)
    return first, folder


def _kept(tmp_path: Path, monkeypatch, kept_once: tuple[object, Path]) -> tuple[object, Path]:
    """The search that kept SPEC's native code, and the kept file, copied into `tmp_path`, where
    the kept files are looked for from now on (as after that search in this folder)."""
    first, folder = kept_once
    shutil.copytree(folder / "native", tmp_path / "native")
    monkeypatch.setenv("GPCHECK_NATIVE", "always")
    monkeypatch.setattr(native, "cache_dir", lambda: tmp_path)
    files = sorted((tmp_path / "native").glob("*.expand.*.bin"))
    assert len(files) == 1
    return first, files[0]


def _rewrite(file: Path, head: dict | None = None, obj: bytes | None = None) -> None:
    old_head, _, old_obj = file.read_bytes().partition(b"\n")
    meta = json.loads(old_head)
    obj = old_obj if obj is None else obj
    meta.update(head or {})
    if head is None or "sha256" not in head:
        meta["sha256"] = hashlib.sha256(obj).hexdigest()
    file.write_bytes(json.dumps(meta).encode() + b"\n" + obj)


@pytest.mark.parametrize("damage", ["flipped", "truncated", "empty", "missing", "bad_json",
                                    "unresolved_symbol", "other_format", "stale_digest"])
def test_a_damaged_file_is_not_used(damage, tmp_path, monkeypatch, kept_once):
    first, file = _kept(tmp_path, monkeypatch, kept_once)
    data = file.read_bytes()
    head, _, obj = data.partition(b"\n")
    if damage == "flipped":
        mid = len(head) + 1 + len(obj) // 2
        file.write_bytes(data[:mid] + bytes([data[mid] ^ 0xFF]) + data[mid + 1:])
    elif damage == "truncated":
        file.write_bytes(data[: len(head) + 1 + len(obj) // 3])
    elif damage == "empty":
        file.write_bytes(b"")
    elif damage == "missing":
        file.unlink()
    elif damage == "bad_json":
        file.write_bytes(b"{not json\n" + obj)
    elif damage == "unresolved_symbol":  # MCJIT would abort the process on it: refused before loading
        _rewrite(file, head={"undefined": ["gpcheck_no_such_symbol"]})
    elif damage == "other_format":
        _rewrite(file, head={"format": native.FORMAT + 1})
    elif damage == "stale_digest":
        _rewrite(file, head={"sha256": "0" * 64})
    module = first[2].module.__name__
    assert native.load(module, "expand") is None
    again = _search(load_source(SPEC, "wide.gpspec"), "auto", tmp_path, monkeypatch)
    _same(first, again)


def test_another_key_is_not_used(tmp_path, monkeypatch, kept_once):
    """Another CPU, llvmlite or numba gives another key: the file is not found."""
    first, file = _kept(tmp_path, monkeypatch, kept_once)
    module = first[2].module.__name__
    assert native.load(module, "expand") is not None
    monkeypatch.setattr(native, "_key", "0123456789abcdef")
    assert native.load(module, "expand") is None
    monkeypatch.setenv("GPCHECK_NATIVE", "off")
    monkeypatch.setattr(native, "_key", None)
    assert native.load(module, "expand") is None


def test_a_call_the_kept_signature_does_not_cover_goes_to_numba(tmp_path, monkeypatch, kept_once):
    first, file = _kept(tmp_path, monkeypatch, kept_once)
    module = first[2].module.__name__
    kernel = native.load(module, "expand")
    assert kernel is not None
    nargs = len(kernel._params)
    assert kernel() is NotImplemented
    assert kernel(*[np.zeros((4, 4), dtype=np.float64)] * nargs) is NotImplemented  # dtype
    strided = np.zeros((8, first[2].states.shape[1]), dtype=np.int64)[::2]
    assert kernel(strided, *[None] * (nargs - 1)) is NotImplemented  # layout

    class Numba:
        @staticmethod
        def expand(*args):
            return "numba"

    call = native.dispatch(module, "expand", lambda: Numba)
    assert call.native is not None and call() == "numba"


def test_a_warm_cache_runs_without_numba(tmp_path, fault_caches):
    """A fresh process with the native code kept: the search imports neither numba nor the
    generated module, and gives the report of a run of numba's own cached code. The cache is a
    copy of the run's warm cache of a small model (tests/conftest.py's `fault_caches`: made by a
    cold `gpcheck verify --core compiled`, which kept the native code), not a cold compilation
    of its own; test_native_search_is_the_numba_search writes and reads back kept code here."""
    sys.path.insert(0, str(ROOT / "tests" / "quality"))
    import fault_inject as F

    cache, _, _ = F.copy_caches(*fault_caches, tmp_path)
    spec = tmp_path / "fault_t.gpspec"
    assert sorted((cache / "native").glob("*.expand.*.bin")), "the warm cache holds kept native code"
    code = ("import sys, json\nfrom gpcheck.checker import verify\n"
            f"r = verify({str(spec)!r}, core='compiled', workers=1)\n"
            "print(json.dumps([[x.property, x.verdict.value, repr(x.counterexample)]"
            " for x in r.results] + [r.states, 'numba' in sys.modules]))\n")
    runs = []
    for native_mode in ("off", None):  # numba's cached machine code, then the kept native code
        env = dict(os.environ, GPCHECK_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
        env.pop("GPCHECK_NATIVE", None)
        if native_mode:
            env["GPCHECK_NATIVE"] = native_mode
        runs.append(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path))
    for r in runs:
        assert r.returncode == 0, r.stderr
    first, second = (json.loads(r.stdout) for r in runs)
    assert first[-1] is True and second[-1] is False, "the second process ran the kept code, numba not imported"
    assert first[:-1] == second[:-1] and first[-2] > 0

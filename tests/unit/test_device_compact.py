"""The device search's compact visited set (issue 35, item 3, NOTE(compact-table)), through the
host build of the generated C (no GPU needed): the same states, depth, fired counts, verdicts
and counterexamples as the full device search and the Python core while the table grows from
256 slots and chunks are tiny; `mix` is a bijection; a memory limit gives `unknown (device
memory)`; `run_device` takes the compact set only when no property needs the edges."""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

import numpy as np
import pytest

from gpcheck.checker.api import device_run
from gpcheck.checker.core.verdict import Verdict
from gpcheck.checker.engines.explicit import device_compact, device_search, explicit
from gpcheck.checker.engines.explicit.explicit import select_properties
from gpcheck.checker.engines.timed import untimed
from gpcheck.gpmodel import compile_model
from gpcheck.gpmodel.cuda_compact import SPLITMIX, _mix_source
from gpcheck.gpmodel.cuda_kernels import PRELUDE
from gpcheck.gpmodel.packed import PackedLayout, SlotField
from gpcheck.spec import load_source, load_spec
from tests.devices import needs_cc, needs_gpu

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "spec" / "models"

DEADLOCK = """model stuck "a counter that stops at 3, where nothing is enabled"
var x: 0..3 = 0
var y: 0..1 = 0
action inc {
    require x < 3
    x = x + 1
}
action flip {
    require x < 2
    y = 1 - y
}
"""


def _safety(m):
    cm = compile_model(m)
    later = {p.name for p in (*m.transitions, *m.liveness, *m.latencies)}
    return cm, select_properties(m, None) - later


def _outcome(cm, res, wanted):
    results = [(r.property, r.verdict, r.reason if r.verdict is Verdict.UNKNOWN else None,
                None if r.counterexample is None else [(s.action, s.args, s.state) for s in r.counterexample.steps])
               for r in explicit.safety_results(cm, res, wanted)]
    return res.depth, res.complete, res.pruned, res.fired, results


@needs_cc
@pytest.mark.parametrize(("name", "chunk_rows"), [
    ("kfd_sched", 512), ("gp_hip_suspend", 1),
    pytest.param("reef_flag_race", 7, marks=pytest.mark.slow), pytest.param("cwsr", 512, marks=pytest.mark.slow)])
def test_compact_search_is_the_full_search(name, chunk_rows):
    """Violated and proved invariants, counterexamples step by step; the table grows from 256
    slots (every entry re-homed from its quotient each time) and a state is met again in later
    chunks through its compact entry."""
    m = untimed(load_spec(str(MODELS / f"{name}.gpspec"), {}))
    cm, wanted = _safety(m)
    cres, cg = device_compact.search(cm, wanted, device="host", chunk_rows=chunk_rows)
    fres, fg = device_search.search(cm, wanted, device="host", chunk_rows=chunk_rows)
    assert cg.n == fg.n
    assert _outcome(cm, cres, wanted) == _outcome(cm, fres, wanted)
    assert cg.size > device_compact.HOST_START_SLOTS  # it grew
    if name == "cwsr":
        assert _outcome(cm, cres, wanted) == _outcome(cm, explicit.search(cm, wanted), wanted)


@needs_cc
def test_deadlock_and_range_errors_as_the_full_search():
    for src, stem in ((DEADLOCK, "stuck"), ((ROOT / "tests/unit/test_device_search.py").read_text()
                                             .split('OVERFLOW = """')[1].split('"""')[0], "overflow")):
        m = load_source(src, f"{stem}.gpspec")
        cm, wanted = _safety(m)
        cres, _ = device_compact.search(cm, wanted, device="host", chunk_rows=1)
        pres = explicit.search(cm, wanted)
        assert _outcome(cm, cres, wanted) == _outcome(cm, pres, wanted)
        assert str(cres.fault) == str(pres.fault)
        assert any(r.verdict is Verdict.VIOLATED for r in explicit.safety_results(cm, cres, wanted))


@needs_cc
def test_mix_is_a_bijection(tmp_path):
    """Every state of a 2-word layout of 5 + 6 bits mixes to a different state of that domain:
    two states never share an entry."""
    packed = PackedLayout([])
    packed.fields = [SlotField(0, 0, 5, 0), SlotField(1, 0, 6, 0)]
    packed.words = 2
    driver = r"""
void all(i64* out) {
    for (i64 a = 0; a < 32; a++) for (i64 b = 0; b < 64; b++) {
        i64 row[2] = {a, b};
        u64 x[2];
        mix(row, x);
        out[(a * 64 + b) * 2] = (i64)x[0];
        out[(a * 64 + b) * 2 + 1] = (i64)x[1];
    }
}
"""
    src = tmp_path / "mix.c"
    src.write_text("#define W 2\n" + PRELUDE + SPLITMIX + _mix_source(packed) + driver)
    lib = tmp_path / "mix.so"
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-w", "-o", str(lib), str(src)], check=True)
    out = np.zeros((2048, 2), dtype=np.int64)
    ctypes.CDLL(str(lib)).all(ctypes.c_void_p(out.ctypes.data))
    assert out[:, 0].max() < 32 and out[:, 1].max() < 64 and out.min() >= 0
    assert len({tuple(r) for r in out.tolist()}) == 2048
    assert len({tuple(r) for r in out.tolist()} ^ {(a, b) for a in range(32) for b in range(64)}) == 0


def test_entries_shrink_as_the_table_grows():
    """The quotient loses a bit each time the table doubles: rewind N=16's 89-bit states take
    2 words a slot from 2^20 slots on (the full search: 2 words of keys and a slot); rewind
    N=30's 145 bits 3 words in a small table, 2 from 2^30 slots on (re-encoded when it grows)."""
    packed = PackedLayout([])
    packed.fields = [SlotField(0, 0, 63, 0), SlotField(1, 0, 26, 0)]
    packed.words = 2
    assert device_compact.entry_words(packed, 1 << 20) == (2, 43)
    assert device_compact.entry_words(packed, 1 << 30) == (2, 33)
    packed.fields = [SlotField(0, 0, 62, 0), SlotField(1, 0, 60, 0), SlotField(2, 0, 23, 0)]
    packed.words = 3  # rewind N=30 CAP=4: 145 bits in 3 words
    assert device_compact.entry_words(packed, 1 << 26)[0] == 3
    assert device_compact.entry_words(packed, 1 << 30) == (2, 32)  # 32 + 60 + 23 = 115 bits: 51 + 64


@needs_cc
def test_a_full_device_is_unknown_device_memory():
    m = untimed(load_spec(str(MODELS / "kfd_sched.gpspec"), {}))
    cm, wanted = _safety(m)
    wanted -= {"hp_detected"}  # violated early: every other property holds in the full graph
    res, g = device_compact.search(cm, wanted, device="host", max_bytes=20_000, chunk_rows=64)
    assert not res.complete and "device memory" in (res.stop_reason or "")
    results = explicit.safety_results(cm, res, wanted)
    assert results and all(r.verdict is Verdict.UNKNOWN and "device memory" in r.reason for r in results)
    assert 0 < g.n


@needs_cc
def test_run_device_takes_the_compact_set_for_safety_only(monkeypatch):
    m = untimed(load_spec(str(MODELS / "kfd_monitor.gpspec"), {}))
    cm = compile_model(m)
    safety = {p.name for p in m.invariants} | {"deadlock", "range"}
    assert device_run._compact(cm, safety)
    assert not device_run._compact(cm, safety | {m.liveness[0].name})  # liveness: the edges, the full layout
    assert device_run._compact(cm, safety | {m.latencies[0].name})  # a latency: the zone engine's, no edges
    calls = []
    real = device_compact.search

    def spy(*a, **kw):
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(device_compact, "search", spy)
    rep = device_run.run_device(m, safety, explicit.Limits(), cm=cm, device="host")
    from gpcheck.checker import verify

    ref = verify(m, core="python", properties=sorted(safety), assumption_use=False)
    assert calls == [1] and rep.states == ref.states == 620
    assert [(r.property, r.verdict) for r in rep.results] == [(r.property, r.verdict) for r in ref.results]


@needs_gpu
@pytest.mark.parametrize("name", ["kfd_sched", "cwsr", "nvidia_streams", "gp_hip_suspend"])
def test_gpu_compact_search_is_the_full_search(name):
    """On the GPU, the table growing from 256 slots in chunks of 64 rows (many threads probe
    and claim at once), and at the default sizes."""
    m = untimed(load_spec(str(MODELS / f"{name}.gpspec"), {}))
    cm, wanted = _safety(m)
    fres, fg = device_search.search(cm, wanted, device="cuda")
    for kw in ({}, {"start_slots": 256, "chunk_rows": 2048}):
        cres, cg = device_compact.search(cm, wanted, device="cuda", **kw)
        assert cg.n == fg.n
        assert _outcome(cm, cres, wanted) == _outcome(cm, fres, wanted)


@needs_gpu
def test_gpu_a_full_device_is_unknown_device_memory():
    m = untimed(load_spec(str(MODELS / "cwsr.gpspec"), {}))
    cm, wanted = _safety(m)
    res, g = device_compact.search(cm, wanted, device="cuda", max_bytes=120_000, chunk_rows=256, start_slots=256)
    assert not res.complete and "device memory" in (res.stop_reason or "")
    assert 0 < g.n < 9992

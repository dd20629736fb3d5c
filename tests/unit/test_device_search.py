"""`--device cuda` (issue 35, NOTE(device-bfs)): the generated C and the level algorithm checked
on the CPU through the host build (the same text, built by `cc`), against the Python core:
state counts, depth, actions fired, verdicts and counterexamples step by step. The GPU tests
run where CuPy sees a GPU and skip elsewhere."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from gpcheck.checker.api.device_run import run_device
from gpcheck.checker.engines.explicit import device_search, explicit
from gpcheck.checker.engines.explicit.explicit import Limits, select_properties
from gpcheck.checker.core.verdict import Verdict
from gpcheck.gpmodel import compile_model
from gpcheck.gpmodel.cuda_source import Untranslatable, _Printer
from gpcheck.spec import load_source, load_spec
from tests.devices import DEVMON, has_gpu, needs_cc, needs_gpu

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "spec" / "models"

OVERFLOW = """model overflow "a counter that leaves its range after three steps, beside a harmless one"
var x: 0..3 = 0
var y: 0..1 = 0
action inc {
    x = x + 1
}
action flip {
    y = 1 - y
}
invariant small: x <= 2
"""


def _safety(m):
    cm = compile_model(m)
    later = {p.name for p in (*m.transitions, *m.liveness, *m.latencies)}
    return cm, select_properties(m, None) - later


def _outcome(cm, res, wanted):
    results = [(r.property, r.verdict, None if r.counterexample is None else
                [(s.action, s.args, s.state) for s in r.counterexample.steps])
               for r in explicit.safety_results(cm, res, wanted)]
    return res.depth, res.complete, res.pruned, res.fired, results


def _same_as_python(m, **kw):
    cm, wanted = _safety(m)
    dres, g = device_search.search(cm, wanted, device="host", **kw)
    pres = explicit.search(cm, wanted)
    assert g.n == len(pres.parent)
    assert _outcome(cm, dres, wanted) == _outcome(cm, pres, wanted)
    return dres, g


@needs_cc
@pytest.mark.parametrize("name", ["nv_query_group", "reef_flag_race", "gp_hip_suspend"])  # untimed (a timed spec: test_device_timed.py)
def test_host_build_matches_the_python_core(name):
    """Bundled models with violated and proved invariants: the same states, depth, fired
    counts, verdicts and (shortest) counterexamples."""
    _same_as_python(load_spec(str(MODELS / f"{name}.gpspec"), {}))


@needs_cc
def test_chunks_of_one_state_number_states_in_order():
    """Every frontier state its own chunk: a state first found in one chunk is found again in
    a later one through the table (gp_hip_suspend: 345 states, a violated invariant)."""
    m = load_spec(str(MODELS / "gp_hip_suspend.gpspec"), {})
    _, g = _same_as_python(m, chunk_rows=1)
    assert g.n == 345


@needs_cc
def test_a_range_error_is_the_python_core_s():
    m = load_source(OVERFLOW, "overflow.gpspec")
    cm, wanted = _safety(m)
    dres, _ = device_search.search(cm, wanted, device="host")
    pres = explicit.search(cm, wanted)
    assert dres.fault is not None and str(dres.fault) == str(pres.fault)
    assert _outcome(cm, dres, wanted)[4] == _outcome(cm, pres, wanted)[4]
    verdicts = {r.property: r.verdict for r in explicit.safety_results(cm, dres, wanted)}
    assert verdicts["range"] is Verdict.VIOLATED and verdicts["small"] is Verdict.VIOLATED


@needs_cc
def test_a_full_device_is_unknown_device_memory():
    m = load_spec(str(MODELS / "nvidia_streams.gpspec"), {})  # untimed, every property holds in the full graph
    cm, wanted = _safety(m)
    res, g = device_search.search(cm, wanted, device="host", max_bytes=50_000, chunk_rows=64)
    assert not res.complete and "device memory" in (res.stop_reason or "")
    results = explicit.safety_results(cm, res, wanted)
    assert results and all(r.verdict is Verdict.UNKNOWN and "device memory" in r.reason for r in results)
    assert 0 < g.n < 23_791  # fewer than even the symmetry-reduced count


@needs_cc
def test_the_report_answers_every_kind_of_property():
    m = load_source(DEVMON, "devmon.gpspec")
    rep = run_device(m, select_properties(m, None), Limits(), device="host")
    by = {r.property: r for r in rep.results}
    from gpcheck.checker import verify

    assert rep.states == verify(m, core="python", assumption_use=False).states == 80
    # liveness over the device's edges (tests/unit/test_device_graph.py compares it), the latency the zone engine's
    assert by["no_starvation"].verdict is Verdict.VIOLATED and by["no_starvation"].counterexample.loop is not None
    assert by["at_once"].verdict is Verdict.PROVED
    assert by["lp_grows"].verdict is Verdict.PROVED  # a transition property, on the device's edges
    assert by["no_loss"].verdict is Verdict.PROVED
    assert not [r.property for r in rep.results if r.verdict is Verdict.UNKNOWN]


def test_the_printer_refuses_what_it_does_not_know():
    fn = ast.parse("def f(s):\n    while True:\n        pass\n").body[0]
    with pytest.raises(Untranslatable):
        _Printer(fn, "i64", [("s", "i64*")], 1).source()


@pytest.mark.skipif(has_gpu(), reason="a GPU is present")
def test_without_a_gpu_the_command_says_so(tmp_path):
    spec = tmp_path / "overflow.gpspec"
    spec.write_text(OVERFLOW)
    done = subprocess.run([sys.executable, "-m", "gpcheck", "verify", str(spec), "--device", "cuda", "--no-progress"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2
    assert "--device cuda" in done.stderr and "Traceback" not in done.stderr


@needs_gpu
@pytest.mark.parametrize("name", ["gp_hip_suspend", "reef_flag_race", "nvidia_streams"])  # untimed (a timed spec: test_device_timed.py)
def test_gpu_matches_the_python_core(name):
    m = load_spec(str(MODELS / f"{name}.gpspec"), {})
    cm, wanted = _safety(m)
    dres, g = device_search.search(cm, wanted, device="cuda")
    pres = explicit.search(cm, wanted)
    assert g.n == len(pres.parent)
    assert _outcome(cm, dres, wanted) == _outcome(cm, pres, wanted)


def test_what_the_device_does_not_run_is_a_usage_error():
    from gpcheck.checker.api.model_api import verify
    from gpcheck.spec.errors import UsageError

    with pytest.raises(UsageError, match="runs the explicit engine"):  # a timed spec: its abstraction (test_device_timed.py)
        verify(str(MODELS / "hws_oversub.gpspec"), device="cuda", engine="pdr")
    with pytest.raises(UsageError, match="--workers"):
        verify(str(MODELS / "gp_hip_suspend.gpspec"), device="cuda", workers=4)
    with pytest.raises(UsageError, match="unknown device"):
        verify(str(MODELS / "gp_hip_suspend.gpspec"), device="tpu")

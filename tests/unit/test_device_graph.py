"""`--device cuda`'s liveness, latency and transition properties (issue 35 item 2,
NOTE(device-edges)): the edges built by the device code (its host build here, the same C text)
are the compiled core's CSR arrays edge for edge, and the verdicts, lassos and transition
counterexamples are the compiled core's; a latency is the zone engine's answer on the host, as
without a device (checker/api/untimed_latency.py). The GPU test runs where CuPy sees a GPU and
skips elsewhere. A timed spec's liveness and latencies are the zone engine's on the host
(tests/unit/test_device_timed.py), so the tests run on an untimed spec of their own
(tests/devices.py: DEVMON), small specs the compiled-core tests compile (test_fast_explicit.py,
test_compiled_options.py) and gp_hip_suspend (`slow`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpcheck.checker.api import model_api  # noqa: F401 - the api package's import order (explicit_run last)
from gpcheck.checker.api.device_run import run_device
from gpcheck.checker.api.explicit_run import run_explicit
from gpcheck.checker.core.verdict import Counterexample, Verdict
from gpcheck.checker.engines.explicit import device_graph, device_search, explicit, fast_explicit
from gpcheck.checker.engines.explicit.explicit import Limits, select_properties
from gpcheck.gpmodel import compile_model
from gpcheck.spec import load_spec
from tests.devices import DEVMON, needs_cc, needs_gpu

MODELS = Path(__file__).resolve().parents[2] / "spec" / "models"
def _model(name: str):  # type: ignore[no-untyped-def]
    """devmon, a small spec of test_fast_explicit.py (`model t` + its text: the same numba module
    as that file's, which the run compiles anyway), or a bundled model."""
    from gpcheck.spec import load_source

    if name == "devmon":
        return load_source(DEVMON, "devmon.gpspec")
    if name in ("fairness", "transition"):
        from tests.unit.test_fast_explicit import SMALL

        return load_source("model t\n" + SMALL[name], f"{name}.gpspec")
    return load_spec(str(MODELS / f"{name}.gpspec"), {})




def _key(r):  # type: ignore[no-untyped-def]
    c = r.counterexample
    return (r.property, r.kind, r.verdict, r.reason, r.detail,
            None if c is None else ([(s.action, s.args, s.state) for s in c.steps], c.loop))


def _wanted(m):  # type: ignore[no-untyped-def]
    return select_properties(m, None)


def _replays(cm, cex: Counterexample) -> bool:  # type: ignore[no-untyped-def]
    """Every step is a transition of the model from an initial state; a lasso's last state
    steps back to its loop state, is it (the zone engine's), or stutters there when the loop is the
    last step."""
    decode = cm.layout.decode
    starts = [s for s in cm.initial_states() if decode(s) == cex.steps[0].state]
    if not starts:
        return False
    cur, states = starts[0], [starts[0]]
    for step in cex.steps[1:]:
        nxt = [t for i, t in cm.successors(cur)
               if decode(t) == step.state and cm.instances[i].action.name == step.action]
        if not nxt:
            return False
        cur = nxt[0]
        states.append(cur)
    if cex.loop is None or cex.loop == len(cex.steps) - 1:
        return True
    if cur == states[cex.loop]:  # the zone engine's lassos (latencies) end in their loop state
        return True
    return any(t == states[cex.loop] for _, t in cm.successors(cur))


# Each model the compiled core runs here is a cold numba compilation (gp_hip_suspend 8 s of CPU,
# devmon 7 s): in the default run the compiled core runs `fairness` (test_fast_explicit.py compiles
# it), and devmon is compared with the Python core, whose reports test_fast_explicit.py holds
# equal to the compiled core's, lassos included; gp_hip_suspend and devmon against the compiled
# core are `slow`, with those two as their fast counterparts (the same device path)
@needs_cc
@pytest.mark.parametrize("name,core", [("devmon", "python"), ("fairness", "compiled"),
                                       pytest.param("devmon", "compiled", marks=pytest.mark.slow),
                                       pytest.param("gp_hip_suspend", "compiled", marks=pytest.mark.slow)])
def test_liveness_and_latency_are_the_compiled_core_s(name, core):
    """devmon: a violated liveness property (a lasso) and an unbounded latency beside a proved one;
    fairness: liveness under fairness proved and violated; gp_hip_suspend: proved liveness. Same
    states, verdicts, numbers, lassos and witnesses as the CPU core, and every counterexample
    replays."""
    m = _model(name)
    wanted = _wanted(m)
    dev = run_device(m, wanted, Limits(), device="host")
    cpu = run_explicit(m, wanted, Limits(), core=core, workers=1)
    assert dev.states == cpu.states
    assert [_key(r) for r in dev.results] == [_key(r) for r in cpu.results]
    graph = [r for r in dev.results if r.kind in ("liveness", "latency")]
    assert graph and all(r.verdict in (Verdict.PROVED, Verdict.VIOLATED) for r in graph)
    cm = compile_model(m)
    for r in graph:
        if r.counterexample is not None:
            assert _replays(cm, r.counterexample), r.property
    if name == "fairness":
        by = {r.property: r.verdict for r in dev.results}
        assert (by["often"], by["zero_done"]) == (Verdict.PROVED, Verdict.VIOLATED)
    if name == "devmon":
        by = {r.property: r for r in dev.results}
        assert by["no_starvation"].verdict is Verdict.VIOLATED and by["no_starvation"].counterexample.loop is not None
        assert by["be_resume_delay"].verdict is Verdict.VIOLATED and by["be_resume_delay"].detail["max"] is None
        assert by["at_once"].verdict is Verdict.PROVED and by["at_once"].detail["max"] == 0


@needs_cc
@pytest.mark.parametrize("rows", [1, 7, None])
def test_the_device_edges_are_the_cpu_csr_arrays(rows):
    """Chunks of one candidate row (a state per chunk), of an odd size, and the default: the
    offsets, targets and instances of the compiled core's _csr_graph, edge for edge. On
    test_compiled_options.py's `wide` (81 states, 8 instances; the same text, so the numba module
    the run compiles for that file: devmon's own was a cold compilation of 7 s of CPU)."""
    from gpcheck.spec import load_source
    from tests.unit.test_compiled_options import EXTRA

    m = load_source("model t\n" + EXTRA["wide"], "wide.gpspec")
    cm = compile_model(m)
    wanted = select_properties(m, None) - {p.name for p in (*m.transitions, *m.liveness, *m.latencies)}
    dres, g = device_search.search(cm, wanted, device="host")
    offsets, targets, iids = device_graph.device_edges(g, max(1, len(cm.instances)), rows)
    cres, cg = fast_explicit.search(cm, wanted, workers=1)
    csr = fast_explicit._csr_graph(cm, cres, cg)
    assert g.n == cg.n == 81
    edges = int(sum(cres.fired))
    assert edges > g.n and int(offsets[-1]) == edges
    assert np.array_equal(offsets, csr.offsets)
    assert np.array_equal(targets[:edges], csr.targets[:edges])
    assert np.array_equal(iids[:edges], csr.iids[:edges])


@needs_cc
@pytest.mark.parametrize("rows", [7, None])
def test_transition_properties_on_the_device_edges_are_the_compiled_core_s(rows):
    """A counter that wraps: x_grows violated (its first bad edge in the sequential order, the same
    counterexample), y_grows proved; chunks of an odd size and the default. (The bundled models with
    transition properties, reef_rewind's, are timed now: the device checks them on their untimed
    abstraction, tests/unit/test_device_timed.py.)"""
    m = _model("transition")  # test_fast_explicit.py's wrapping counter: the module it compiles
    cm = compile_model(m)
    wanted = {p.name for p in m.transitions}
    assert wanted == {"x_grows", "y_grows"}
    dres, g = device_search.search(cm, wanted, device="host")
    device_graph.check_transitions(cm, dres, g, wanted, chunk_rows=rows)
    cres, _ = fast_explicit.search(cm, wanted, workers=1)
    assert dres.transition_cex and dres.transition_cex == cres.transition_cex
    results = {r.property: r for r in explicit.safety_results(cm, dres, wanted)}
    assert results["x_grows"].verdict is Verdict.VIOLATED and results["y_grows"].verdict is Verdict.PROVED
    cex = results["x_grows"].counterexample
    assert _replays(cm, cex)
    cpu = {r.property: r for r in explicit.safety_results(cm, cres, wanted)}["x_grows"].counterexample
    assert [(s.action, s.args, s.state) for s in cex.steps] == [(s.action, s.args, s.state) for s in cpu.steps]




@needs_cc
def test_an_incomplete_device_search_leaves_liveness_and_latency_unknown():
    m = _model("devmon")
    rep = run_device(m, _wanted(m), Limits(max_states=50), device="host")
    graph = [r for r in rep.results if r.kind in ("liveness", "latency")]
    assert len(graph) == 3  # the latencies: the zone engine's own search, under the same limit
    assert all(r.verdict is Verdict.UNKNOWN and "state limit" in r.reason for r in graph)


@needs_gpu
@pytest.mark.parametrize("name", ["devmon", "gp_hip_suspend", "nvidia_streams"])  # untimed: a timed spec's liveness is the zone engine's
def test_gpu_liveness_and_latency_are_the_compiled_core_s(name):
    m = _model(name)
    wanted = _wanted(m)
    dev = run_device(m, wanted, Limits(), device="cuda")
    cpu = run_explicit(m, wanted, Limits(), core="compiled", workers=1)
    assert dev.states == cpu.states
    assert [_key(r) for r in dev.results] == [_key(r) for r in cpu.results]


@needs_cc
def test_without_numba_liveness_and_latency_are_unknown_with_the_reason(monkeypatch):
    """The CSR passes are numba code: where numba is missing liveness is `unknown`, not skipped (a
    latency is the zone engine's, plain Python: decided)."""
    import importlib.util

    from gpcheck.checker.api import device_run

    real = importlib.util.find_spec
    monkeypatch.setattr(device_run.importlib.util, "find_spec", lambda name, *a: None if name == "numba" else real(name, *a))
    m = _model("devmon")
    rep = run_device(m, _wanted(m), Limits(), device="host")
    live = [r for r in rep.results if r.kind == "liveness"]
    assert len(live) == 1 and all(r.verdict is Verdict.UNKNOWN and "numba" in r.reason for r in live)
    assert {r.property: r.verdict for r in rep.results if r.kind == "latency"} == {
        "be_resume_delay": Verdict.VIOLATED, "at_once": Verdict.PROVED}
    assert {r.property: r.verdict for r in rep.results}["no_loss"] is Verdict.PROVED

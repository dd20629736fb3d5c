"""`--device cuda` on a timed spec (checker/api/timed_explicit.py, `device`): the untimed
abstraction's search runs on the device, the zone engine on the host decides what it leaves, as
on the CPU. Checked through the host build (the same generated C, built by `cc`) against the CPU
path with the same search (symmetry off: the device does not reduce): the report's timed figures
(untimed_states, discrete states, zones), every result's verdict, reason, detail (decided_by) and
counterexample step by step (time stamps included), and the warnings. The GPU tests run where
CuPy sees a GPU and skip elsewhere."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from gpcheck.checker import verify
from gpcheck.checker.api import device_run, timed_explicit
from gpcheck.checker.api.model_api import load
from gpcheck.checker.api.timed_explicit import BY_ABSTRACTION, BY_ZONES, run_timed_explicit
from gpcheck.checker.core.verdict import Verdict
from gpcheck.checker.engines.explicit.explicit import Limits, select_properties
from gpcheck.spec import load_source, load_spec
from gpcheck.spec.errors import UsageError
from tests.devices import has_gpu, needs_cc, needs_gpu

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "spec" / "models"
# host build and CPU path together within a second or two each here (2 shared cores)
FAST = ["blp", "hws_oversub", "intel_guc", "kfd_evict", "nvidia_mps", "nvidia_partition", "nvidia_preempt",
        "nvidia_tsg", "rt_latency", "xsched"]
# 2-20 s here: mostly the zone engine's time, which both paths spend
SLOWER = ["collective_gang", "cwsr", "gpreempt_timeslice", "kfd_monitor", "kfd_sched", "mes_sched", "reef_rewind"]


def _timed_models() -> list[str]:
    # tests/bundled.py's models, loaded once per process (at collection, by the files that
    # parametrize over them): parsing the 20-odd models again took 1.3 s of CPU
    from tests.bundled import bundled_model

    return sorted(p.stem for p in MODELS.glob("*.gpspec") if bundled_model(p.stem).has_time)


def _key(r):  # type: ignore[no-untyped-def]
    c = r.counterexample
    return (r.property, r.kind, r.verdict, r.reason, r.bound, r.engine, r.detail,
            None if c is None else ([(s.action, s.args, s.state, s.time) for s in c.steps], c.loop))


def _same_as_cpu(name: str, device: str, limits: Limits = Limits()) -> None:
    m = load_spec(str(MODELS / f"{name}.gpspec"), {})
    wanted = select_properties(m, None)
    dev = run_timed_explicit(m, set(wanted), limits, device=device)
    cpu = run_timed_explicit(m, set(wanted), limits, core="auto", symmetry="off")
    assert dev.timed == cpu.timed
    assert dev.states == cpu.states and dev.warnings == cpu.warnings
    assert [_key(r) for r in dev.results] == [_key(r) for r in cpu.results]
    if limits.max_states is None:
        assert dev.timed["untimed_states"] > 0
        assert any(r.detail["decided_by"] == BY_ABSTRACTION for r in dev.results)


def test_every_timed_model_is_in_one_list():
    """A new timed model gets a host test (FAST, or SLOWER when it takes longer)."""
    assert sorted(FAST + SLOWER) == _timed_models()


# FAST's models in the default run (issue 33, item 3: each is a host build of its own): nvidia_mps
# (a transition property proved on the abstraction, an invariant and a latency violated in the
# zone graph), xsched (liveness proved and an invariant violated in the zone graph), kfd_evict
# (the model of the cut-short test below) and rt_latency (latencies only, no invariant); the
# others (blp, hws_oversub, intel_guc, nvidia_partition, nvidia_preempt, nvidia_tsg) are `slow`:
# the same constructs decided by the same two stages on other models.
HOST_SAMPLE = ("kfd_evict", "nvidia_mps", "rt_latency", "xsched")


@needs_cc
@pytest.mark.parametrize("name", [n if n in HOST_SAMPLE else pytest.param(n, marks=pytest.mark.slow) for n in FAST]
                         + [pytest.param(n, marks=pytest.mark.slow) for n in SLOWER])
def test_a_timed_model_on_the_host_device_is_the_cpu_path(name):
    _same_as_cpu(name, "host")


@needs_cc
def test_a_search_cut_short_is_the_cpu_path_s():
    """--max-states: the abstraction's search stops (no proof from it), the zone engine decides
    under the same limit, on both paths."""
    _same_as_cpu("kfd_evict", "host", Limits(max_states=40))


@needs_cc
def test_the_abstraction_is_searched_on_the_device_not_the_cpu(monkeypatch):
    """The device's search replaces the CPU core's (none runs), and a violation the abstraction
    finds still goes to the zone engine, as on the CPU."""
    calls: list[set[str]] = []
    search = device_run.run_device

    def spy(model, wanted, limits, cm=None, device="cuda"):  # type: ignore[no-untyped-def]
        assert not model.has_time and device == "host"
        calls.append(set(wanted))
        return search(model, wanted, limits, cm=cm, device=device)

    def no_cpu(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("the CPU core ran")

    monkeypatch.setattr(device_run, "run_device", spy)
    monkeypatch.setattr(timed_explicit, "run_explicit", no_cpu)
    m = load_spec(str(MODELS / "nvidia_partition.gpspec"), {})
    rep = run_timed_explicit(m, {"no_loss", "lc_undisturbed", "deadlock", "rt_preempt_latency"}, Limits(), device="host")
    assert calls == [{"no_loss", "lc_undisturbed", "deadlock"}]
    by = {r.property: (r.verdict, r.detail["decided_by"]) for r in rep.results}
    assert by["no_loss"] == (Verdict.PROVED, BY_ABSTRACTION) and by["deadlock"] == (Verdict.PROVED, BY_ABSTRACTION)
    assert by["lc_undisturbed"] == (Verdict.VIOLATED, BY_ZONES)
    assert by["rt_preempt_latency"][1] == BY_ZONES
    lc = rep.result("lc_undisturbed").counterexample
    assert lc is not None and lc.steps[-1].time is not None  # the zone engine's timed counterexample


@needs_cc
def test_verify_runs_a_timed_spec_on_the_device(monkeypatch):
    """Through verify (vacuity probes, covers, which assumptions each proof used): the same
    report as the CPU's on a model without a symmetric type."""
    monkeypatch.setattr(device_run, "DEVICES", (*device_run.DEVICES, "host"))
    m = load(str(MODELS / "kfd_evict.gpspec"), {})
    dev = verify(m, device="host")
    cpu = verify(m)
    assert dev.timed == cpu.timed and dev.timed["untimed_states"] == 84
    assert [_key(r) for r in dev.results] == [_key(r) for r in cpu.results]
    assert dev.warnings == cpu.warnings


def test_without_a_gpu_a_timed_spec_says_so(tmp_path):
    """No CuPy or GPU: exit 2 with the reason, as for an untimed spec (no fall-back to the CPU)."""
    if has_gpu():
        pytest.skip("a GPU is here")
    m = load(str(MODELS / "rt_latency.gpspec"), {})
    with pytest.raises(UsageError, match="CuPy"):
        verify(m, device="cuda")


@needs_gpu
@pytest.mark.parametrize("name", FAST + [pytest.param(n, marks=pytest.mark.slow) for n in SLOWER])
def test_gpu_a_timed_model_is_the_cpu_path(name):
    """On the GPU (the SLOWER models took up to 22 s of CPU each on an H100 machine, 8 workers:
    docs/device-runs/gpu_tests_h100.txt)."""
    _same_as_cpu(name, "cuda")


@needs_cc
def test_device_compare_gives_a_timed_model_a_timed_line(monkeypatch, capsys):
    """tools/device_compare.py (run on the GPU machine over every bundled model and example),
    here on the host build: the abstraction's search line, then the timed path's whole report."""
    tool = _load(ROOT / "tools" / "device_compare.py")
    monkeypatch.setattr(sys, "argv", ["device_compare.py", "--device", "host", "--cpu", "python", "--no-compact",
                                      str(MODELS / "rt_latency.gpspec")])
    assert tool.main() == 0
    first, timed = capsys.readouterr().out.splitlines()
    assert first.split()[1:5] == ["SAME", "untimed", "abstraction:", "states"]
    assert timed.split()[1:6] == ["timed", "SAME", "untimed_states", "8", "(cpu"]


def test_the_bench_searches_a_timed_models_abstraction():
    """tests/bench/bench_gpu_search.py's cases on timed bundled models run their untimed
    abstraction (cwsr at three queues, reef_rewind at two)."""
    bench = _load(ROOT / "tests" / "bench" / "bench_gpu_search.py")
    assert bench._timed("reef2") and bench._timed("cwsr3") and bench._timed("cwsr:Q=2") and not bench._timed("rewind16")
    m = bench._model("reef2", {})
    assert not m.has_time and m.const_values["Q"] == 2


def _load(path: Path):  # type: ignore[no-untyped-def]
    """A script (tools/, tests/bench/) as a module."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# WATCH of tests/unit/test_timed_abstraction.py with symmetric workers
SYM_WATCH = """model symwatch
const N = 3
symmetric Worker = 0..N-1
var w: [Worker] -> 0..1 = 0
var fired: bool = false
action work(k: Worker) time 1..3 { require w[k] == 0  w[k] = 1 }
action watchdog time 5 { require not fired and (any k in Worker: w[k] == 0)  fired = true }
fair action rest { require fired or (all k in Worker: w[k] == 1)  fired = fired }
invariant bounded: all k in Worker: w[k] <= 1
"""


@needs_cc
def test_symmetry_off_on_the_cpu_gives_the_devices_untimed_states(monkeypatch):
    """The device does not reduce by symmetry; `--symmetry off` makes the CPU path's abstraction
    search unreduced too (the same untimed_states), `auto` reduces it (fewer, the same verdicts)."""
    monkeypatch.setattr(device_run, "DEVICES", (*device_run.DEVICES, "host"))
    m = load_source(SYM_WATCH)
    dev = verify(m, device="host", assumption_use=False)
    off = verify(m, symmetry="off", assumption_use=False)
    auto = verify(m, assumption_use=False)
    assert dev.timed["untimed_states"] == off.timed["untimed_states"] == 16  # 2^3 worker states x fired
    assert auto.timed["untimed_states"] < 16
    assert [_key(r) for r in dev.results] == [_key(r) for r in off.results]
    assert [(r.property, r.verdict) for r in auto.results] == [(r.property, r.verdict) for r in dev.results]

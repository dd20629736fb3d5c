"""The explicit engine on a timed spec (checker/api/timed_explicit.py): safety and deadlock first on
the untimed abstraction, the zone engine only for what is left; the verdicts are the pure zone
run's (on the demonstrators, the timed library models and generated timed specs)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.api.model_api import load
from gpcheck.checker.api.timed_explicit import BY_ABSTRACTION, BY_ZONES, run_timed_explicit
from gpcheck.checker.cli.command import main
from gpcheck.checker.engines.explicit.explicit import Limits, select_properties
from gpcheck.checker.engines.timed.engine import run_timed
from gpcheck.spec import load_source
from tests.quality.timed_differential import gen_spec
from tests.recheck import write_spec
from tests.unit.test_timed_abstraction import _watch

ROOT = Path(__file__).resolve().parents[2]


def _safety(m) -> set[str]:  # type: ignore[no-untyped-def]
    every = select_properties(m, None)
    return {n for n in every if n in {p.name for p in m.invariants} | {p.name for p in m.transitions}
            | {"deadlock", "range"}}


def _same(m, wanted: set[str]) -> tuple[dict, dict]:  # type: ignore[no-untyped-def]
    """The hybrid's and the pure zone run's verdicts (and bounds)."""
    a = run_timed(m, set(wanted), Limits())
    b = run_timed_explicit(m, set(wanted), Limits())
    return ({r.property: (r.verdict, r.bound) for r in a.results}, {r.property: (r.verdict, r.bound) for r in b.results})


def test_what_the_abstraction_proves_needs_no_zone_graph():
    m = load_source(_watch(2))
    r = run_timed_explicit(m, {"bounded", "deadlock", "range"}, Limits())
    assert all(x.verdict is Verdict.PROVED and x.detail["decided_by"] == BY_ABSTRACTION for x in r.results)
    assert r.timed["zones"] is None and r.timed["untimed_states"] > 0 and r.states is None


def test_a_violation_of_the_abstraction_goes_to_the_zone_engine():
    r = verify(load_source(_watch(5)), properties=["bounded", "no_watchdog"])
    assert r.result("bounded").detail["decided_by"] == BY_ABSTRACTION
    v = r.result("no_watchdog")  # violated untimed, but every worker is done before the watchdog
    assert v.verdict is Verdict.PROVED and v.detail["decided_by"] == BY_ZONES
    v = verify(load_source(_watch(2)), properties=["no_watchdog"]).result("no_watchdog")
    assert v.verdict is Verdict.VIOLATED and v.detail["decided_by"] == BY_ZONES and v.counterexample.steps[-1].time == 2
    assert r.timed["zones"] is not None and r.states == r.timed["discrete_states"]


def test_the_text_report_says_no_zone_graph_was_needed(tmp_path, capsys):
    p = write_spec(tmp_path, _watch(2))
    assert main(["verify", str(p), "--property", "bounded"]) == 0
    out = capsys.readouterr().out
    assert "states of the untimed abstraction, no zone graph needed" in out and "proved for every timing" in out


LIBRARY = ["collective_gang", "intel_guc", "hws_oversub", "kfd_evict", "nvidia_preempt", "mes_sched", "blp"]
# every property in well under a second; mes_sched's and blp's latencies take longer, and
# collective_gang's collective_wait 1.1 s in each engine (the slow test below)
QUICK = LIBRARY[1:5]


@pytest.mark.parametrize("spec", LIBRARY)
def test_verdicts_are_the_zone_engines_on_the_timed_models(spec):
    m = load(spec)
    for wanted in [_safety(m)] + ([set(select_properties(m, None))] if spec in QUICK else []):
        zone, hybrid = _same(m, wanted)
        assert zone == hybrid


@pytest.mark.slow  # 2.3 s of CPU; fast: the test above, every property of the QUICK models (their latencies too)
def test_verdicts_are_the_zone_engines_on_every_property_of_collective_gang():
    m = load("collective_gang")
    zone, hybrid = _same(m, set(select_properties(m, None)))
    assert zone == hybrid and "collective_wait" in hybrid


def test_verdicts_are_the_zone_engines_on_the_demonstrator_safety():
    m = load(str(ROOT / "docs" / "timed" / "cwsr_parallel.gpspec"))
    zone, hybrid = _same(m, _safety(m))
    assert zone == hybrid and all(v is Verdict.PROVED for v, _ in hybrid.values())


@pytest.mark.parametrize("seed", range(2))
def test_verdicts_are_the_zone_engines_on_generated_specs(seed):
    """Safety only here (the latencies of a generated spec can take a while: the long test below)."""
    rng = random.Random(seed)
    for _ in range(8):
        m = load_source(gen_spec(rng), file="tgen.gpspec")
        zone, hybrid = _same(m, _safety(m))
        assert zone == hybrid, m


@pytest.mark.long
@pytest.mark.parametrize("seed", range(20))
def test_verdicts_are_the_zone_engines_on_many_generated_specs(seed):
    rng = random.Random(1000 + seed)
    for _ in range(20):
        m = load_source(gen_spec(rng), file="tgen.gpspec")
        for wanted in (_safety(m), set(select_properties(m, None))):
            zone, hybrid = _same(m, wanted)
            assert zone == hybrid, (m, wanted)

"""NOTE(timed-assumption-use): a timed spec's assumption attribution decided on the untimed
abstraction where that is sound (checker/api/timed_assumptions.py) names exactly the assumptions
the zone engine's own re-runs name, and what it cannot decide goes to the zones, under a cap."""

from __future__ import annotations

import pytest

from gpcheck.checker.api import assumptions
from gpcheck.checker.api.model_api import load, run_timed_spec, verify
from gpcheck.checker.api.timed_assumptions import BY_ABSTRACTION, BY_ZONES, rerun_without
from gpcheck.checker.core.verdict import Verdict
from gpcheck.checker.engines.explicit.explicit import Limits
from gpcheck.checker.engines.timed import zones
from gpcheck.checker.engines.timed.engine import run_timed
from gpcheck.gpmodel import compile_model
from gpcheck.spec import load_source

# Two assumptions: `slow` (a step assumption all_done's bound and the liveness rest on: without it
# `retry` can undo the work for ever) and `small` (a guard nothing needs); an urgent step, a
# bounded one, untimed ones.
SPEC = """
model attr "two assumptions, one used"
const MAXR = 2
var x: 0..3 = 0
var busy: bool = false
var r: 0..MAXR = 0
urgent action start { require not busy and x < 3
    busy = true }
action finish time 2..5 { require busy
    busy = false
    x = x + 1 }
action retry { require assume slow: r < MAXR
    require busy
    r = if r < MAXR then r + 1 else r
    busy = false }
action noop { require assume small: x <= 3
    require x == 3 and not busy }
fair action finish, start
invariant bounded: x <= 3
liveness done: eventually x == 3
latency work: from busy to not busy
latency all_done: from busy to x == 3
terminal: x == 3
"""


def _attribution(model, rerun):  # type: ignore[no-untyped-def]
    wanted = set(model.property_names()) | {"deadlock", "range"}
    pl = assumptions.plan(model, wanted)
    first = run_timed_spec(pl.model, pl.wanted, "explicit", Limits())
    use = assumptions.used(pl.model, first.results, lambda m, names: rerun(m, names, first))
    return use


def _zones(m, names, first):  # type: ignore[no-untyped-def]
    return run_timed_spec(m, names, "explicit", Limits()).results


def _abstraction(m, names, first):  # type: ignore[no-untyped-def]
    return rerun_without(m, names, Limits(), zone_cap=None).results


@pytest.mark.parametrize("spec, consts", [
    (SPEC, {}),
    pytest.param("cwsr", {"N": 1, "L": 1}, marks=pytest.mark.slow),  # 14 s of CPU on the loaded machine
    ("cwsr", {"Q": 1, "N": 1, "L": 2}),
])
def test_the_abstraction_names_what_the_zone_reruns_name(spec: str, consts: dict[str, int]) -> None:
    model = load_source(spec, "attr.gpspec") if spec == SPEC else load(spec, consts)
    ref = _attribution(model, _zones)
    new = _attribution(model, _abstraction)
    assert new.used == ref.used
    assert not new.undecided and not ref.undecided


def test_each_result_says_how_it_was_decided() -> None:
    model = load_source(SPEC, "attr.gpspec")
    relaxed = assumptions.without(model, "slow")
    rep = rerun_without(relaxed, {"bounded", "done", "work", "all_done", "deadlock", "range"}, Limits())
    by = {r.property: (r.verdict, r.detail["decided_by"]) for r in rep.results}
    assert by["bounded"] == (Verdict.PROVED, BY_ABSTRACTION)  # proved untimed: holds for every timing
    assert by["range"] == (Verdict.PROVED, BY_ABSTRACTION)
    assert by["work"] == (Verdict.PROVED, BY_ABSTRACTION)  # its region is acyclic with a deadline everywhere
    # endless retries: a cycle in all_done's region, and a fair lasso with a loop: the zones decide
    assert by["all_done"] == (Verdict.VIOLATED, BY_ZONES)
    assert by["done"] == (Verdict.VIOLATED, BY_ZONES)
    keep = rerun_without(assumptions.without(model, "small"), {"work", "all_done", "done"}, Limits())
    assert {r.property: r.detail["decided_by"] for r in keep.results} == dict.fromkeys(("work", "all_done", "done"),
                                                                                       BY_ABSTRACTION)
    assert all(r.verdict is Verdict.PROVED for r in keep.results)


def test_a_zone_rerun_past_its_cap_is_not_determined_and_counts_as_used() -> None:
    model = load_source(SPEC, "attr.gpspec")
    rep = rerun_without(assumptions.without(model, "slow"), {"all_done"}, Limits(), zone_cap=2)
    (r,) = rep.results
    assert r.verdict is Verdict.UNKNOWN and "not determined: the run without the assumption passed 2 zones" in r.reason


@pytest.mark.slow  # 18 s of CPU on the loaded machine; the fast path of the same code: the tests above
def test_cwsr_library_attribution_without_the_zone_reruns() -> None:
    """The library's cwsr (Q = 2, N = 2, L = 3): at N = 1 here (the library's size is the slow
    test below); the assumptions per result are the sequential model's."""
    rep = verify("cwsr", consts={"N": 1})
    got = {r.property: r.assumptions for r in rep.results}
    assert got["no_reexecution"] == ("copy_save",) and got["no_loss"] == ("copy_save",)
    assert got["ring_integrity"] == () and got["rt_preempt_latency"] == ()
    assert got["be_resume_delay"] == ("finite_preemptions",)
    assert set(got["no_starvation"]) == {"finite_preemptions", "copy_save"}


def test_the_zone_search_stops_early_once_every_property_asked_for_is_violated() -> None:
    cm = compile_model(assumptions.without(load("cwsr", {"Q": 1, "N": 1, "L": 2}), "copy_save"))
    g = zones.ZoneGraph(cm)
    full = zones.search(g, {"no_reexecution"})
    early = zones.search(zones.ZoneGraph(cm), {"no_reexecution"}, early=True)
    assert full.complete and not early.complete and early.stop_reason == "every property asked for is violated"
    assert len(early.nodes) < len(full.nodes)
    a = run_timed(cm.model, {"no_reexecution"}, cm=cm, early=True).result("no_reexecution")
    b = run_timed(cm.model, {"no_reexecution"}, cm=cm).result("no_reexecution")
    assert a.verdict is b.verdict is Verdict.VIOLATED
    assert [s.state for s in a.counterexample.steps] == [s.state for s in b.counterexample.steps]

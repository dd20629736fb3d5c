"""The Z3 engines (bmc, kind, pdr, auto) through the public API: the acceptance results on the
example specs, honest verdicts (bounds, timeouts, constraints, liveness) and counterexamples
that replay through the interpreter."""

from __future__ import annotations

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.engines.smt.witness import check_witness
from gpcheck.gpmodel import compile_model
from gpcheck.spec import load_source, load_spec


def run(src: str, **kw):
    return verify(load_source("model t\n" + src, "t.gpspec"), **kw)


# pdr `slow` (1.8 s of CPU): test_step_limits.py::test_pdr_proves_the_same_under_a_slow_clock proves
# the same properties of ring with pdr (and ring_kept_on_preempt) and asserts the same invariant
@pytest.mark.parametrize("engine", ["kind", pytest.param("pdr", marks=pytest.mark.slow)])
def test_ring_invariants_are_proved(examples, engine):
    """With kind, the transition property too (one run: it was a test of its own)."""
    props = ["no_reexecution", "ring_order"] + (["ring_kept_on_preempt"] if engine == "kind" else [])
    report = verify(examples / "ring.gpspec", engine=engine, properties=props, timeout=120)
    for prop in props:
        r = report.result(prop)
        assert r.verdict is Verdict.PROVED, r
        assert r.engine == engine
    if engine == "kind":
        assert report.result("ring_order").detail["k"] == 1
        assert report.result("no_reexecution").detail["k"] >= 1
    else:
        inv = report.result("no_reexecution").detail["invariant"]
        assert "waves_run[3]" in inv and "@" not in inv


@pytest.mark.slow  # fast: test_ring_invariants_are_proved[kind] (the same property proved by kind beside the invariants)
def test_ring_transition_property_is_proved_by_kind(examples):
    r = verify(examples / "ring.gpspec", engine="kind", properties=["ring_kept_on_preempt"]).result("ring_kept_on_preempt")
    assert r.verdict is Verdict.PROVED


REWIND_CEX = ["launch", "fetch", "wave", "preempt", "resume", "launch", "fetch", "wave"]


@pytest.mark.parametrize("engine", ["bmc", "kind", "pdr"])
def test_rewind_counterexample_is_the_explicit_one(examples, engine):
    m = load_spec(examples / "rewind.gpspec")
    r = verify(m, engine=engine, properties=["no_reexecution"], timeout=120).result("no_reexecution")
    assert r.verdict is Verdict.VIOLATED and r.engine == engine
    assert [s.action for s in r.counterexample.steps[1:]] == REWIND_CEX
    assert check_witness(compile_model(m), r) is None
    explicit = verify(m, properties=["no_reexecution"]).result("no_reexecution")
    assert [s.action for s in explicit.counterexample.steps] == [s.action for s in r.counterexample.steps]


def test_bmc_holds_to_bound_and_never_proves_liveness(examples):
    report = verify(examples / "ring.gpspec", engine="bmc", depth=5)
    assert report.result("no_reexecution").verdict is Verdict.HOLDS_TO_BOUND
    assert report.result("no_reexecution").bound == 5
    live = report.result("finishes")
    assert live.verdict is Verdict.HOLDS_TO_BOUND and live.bound == 5
    assert verify(examples / "ring.gpspec", engine="pdr", properties=["finishes"]).result("finishes").verdict \
        is Verdict.UNKNOWN


def test_lasso_bmc_finds_the_starvation_lasso(examples):
    m = load_spec(examples / "starve.gpspec")
    r = verify(m, engine="bmc", depth=10).result("be_served")
    want = verify(m).result("be_served")
    assert r.verdict is Verdict.VIOLATED and r.counterexample.loop is not None
    assert r.counterexample.length == want.counterexample.length
    assert check_witness(compile_model(m), r) is None
    fair = verify(examples / "starve.gpspec", consts={"AGING": 1}, engine="bmc", depth=10).result("be_served")
    assert fair.verdict is Verdict.HOLDS_TO_BOUND


def test_bmc_proves_when_every_behaviour_ends():
    r = run("var x: 0..3 = 0\naction inc { require x < 3\n x = x + 1 }\nterminal: x == 3\ninvariant small: x <= 3\n",
            engine="bmc", depth=10).result("small")
    assert r.verdict is Verdict.PROVED and "within 3 steps" in r.reason


def test_range_violation_names_the_failing_instance_like_explicit():
    src = "var x: 0..2 = 0\nvar a: [0..1] -> 0..5 = 0\naction go(i: 0..1) { require i == 1\n a[x + i] = 1\n x = x + 1 }\nallow deadlock\n"
    want = run(src).result("range")
    for engine in ("bmc", "kind", "pdr"):
        r = run(src, engine=engine).result("range")
        assert r.verdict is Verdict.VIOLATED, (engine, r)
        assert r.counterexample.length == want.counterexample.length
        for key in ("error", "kind", "location", "action", "args"):
            assert r.detail[key] == want.detail[key], (engine, key)


def test_deadlock_and_transition_counterexamples_are_shortest():
    src = ("var x: 0..3 = 0\nvar y: 0..3 = 0\naction a { require x < 2\n x = x + 1 }\n"
           "action b { require y < 1 and x == 2\n y = y + 1 }\ntransition slow: x' <= x + 1 and y' == y\n")
    want = run(src)
    for engine in ("bmc", "kind", "pdr"):
        got = run(src, engine=engine)
        for prop in ("deadlock", "slow"):
            g, w = got.result(prop), want.result(prop)
            assert g.verdict is w.verdict is Verdict.VIOLATED, (engine, prop)
            assert g.counterexample.length == w.counterexample.length, (engine, prop)


def test_constraint_means_holds_to_bound_never_proved():
    src = "var x: 0..9 = 0\naction inc { require x < 9\n x = x + 1 }\nterminal: x == 9\ninvariant small: x <= 5\nconstraint c: x < 4\n"
    for engine in ("kind", "pdr"):
        r = run(src, engine=engine, properties=["small"]).result("small")
        assert r.verdict is Verdict.HOLDS_TO_BOUND and "constraint c" in r.reason, (engine, r)


def test_timeout_is_unknown_with_a_reason(examples):
    r = verify(examples / "rewind.gpspec", consts={"N": 8, "MAXP": 2}, engine="pdr", properties=["in_order"],
               timeout=0.001).result("in_order")
    assert r.verdict in (Verdict.UNKNOWN, Verdict.PROVED)
    if r.verdict is Verdict.UNKNOWN:
        assert "timeout" in r.reason


def test_auto_uses_explicit_on_small_models_and_smt_beyond_the_state_limit(examples, monkeypatch):
    # no clock: each engine of `auto` runs to its own step limits (NOTE(step-limits)) instead of
    # AUTO_ENGINE_SECONDS of wall time, which a loaded machine used up (the verdicts came out unknown)
    from gpcheck.checker.api import smt_dispatch

    monkeypatch.setattr(smt_dispatch, "AUTO_ENGINE_SECONDS", None)
    small = verify(examples / "ring.gpspec", engine="auto")
    assert small.states == 225
    assert {r.engine for r in small.results} == {"explicit"}
    assert small.result("finishes").verdict is Verdict.PROVED
    # N=2 (75 states) and a bound of 6: still past 50 states (N=4 and a bound of 12 took 2.9 s of CPU,
    # N=6 and the default 30 took 20 s)
    big = verify(examples / "ring.gpspec", consts={"N": 2}, engine="auto", max_states=50, depth=6,
                 properties=["no_reexecution", "ring_order", "finishes"])
    assert big.result("no_reexecution").verdict is Verdict.PROVED
    assert big.result("no_reexecution").engine in ("pdr", "kind")
    assert big.result("finishes").verdict is Verdict.HOLDS_TO_BOUND and big.result("finishes").engine == "bmc"
    assert big.result("finishes").bound == 6
    rewind = verify(examples / "rewind.gpspec", engine="auto", max_states=50,
                    properties=["no_reexecution"]).result("no_reexecution")
    assert rewind.verdict is Verdict.VIOLATED and rewind.counterexample.length == 8


def test_examples_verdicts_match_expected_under_every_engine(examples):
    """EXPECTED.md's safety verdicts, every engine (holds = proved or held to the bound)."""
    expected = {("ring.gpspec", "no_reexecution"): True, ("ring.gpspec", "ring_order"): True,
                ("ring.gpspec", "ring_kept_on_preempt"): True, ("rewind.gpspec", "no_reexecution"): False,
                ("rewind.gpspec", "in_order"): True, ("peterson.gpspec", "mutual_exclusion"): True}
    for name in dict.fromkeys(name for name, _ in expected):  # one bmc run per spec
        props = [prop for n, prop in expected if n == name]
        report = verify(examples / name, engine="bmc", properties=props, depth=10, timeout=60)
        for prop in props:
            r = report.result(prop)
            assert r.verdict.holds == expected[name, prop], (name, prop, r)
    for engine in ("kind", "pdr"):
        r = verify(examples / "peterson.gpspec", engine=engine, properties=["mutual_exclusion"]).result("mutual_exclusion")
        assert r.verdict is Verdict.PROVED, (engine, r)

"""Action costs and latency properties (NOTE(latency) in spec/ir.py, checker/engines/latency/latency.py):
the language, exact numbers on purpose-written specs, the counterexamples, the Z3 engines'
honest `unknown`, and agreement with an independent brute-force computation (the reference
interpreter of tests/reference, value iteration instead of graph algorithms) on random specs."""

from __future__ import annotations

import json
import random

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.cli.command import main
from gpcheck.gpmodel import compile_model
from gpcheck.gpmodel.cost import compile_costs
from gpcheck.spec import load_source
from gpcheck.spec.errors import SpecTypeError
from tests.reference import explore as ref_explore
from tests.reference import latency as ref_latency
from tests.reference import semantics as ref


def run(src: str, **kw):
    return verify(load_source("model t\n" + src, "t.gpspec"), **kw)


COUNTER = """
const N = 3
var x: 0..N = 0
fair action inc cost 2 + x { require x < N
  x = x + 1 }
fair action reset cost 1 { require x == N
  x = 0 }
latency up: from x == 1 to x == N within 7
latency tight: from x == 1 to x == N within 6
latency round: from x == N to x == 0
"""


def test_costs_sum_along_the_only_path_and_within_decides():
    rep = run(COUNTER)
    up, tight, rnd = rep.result("up"), rep.result("tight"), rep.result("round")
    assert (up.detail["min"], up.detail["max"]) == (7, 7)  # inc from 1 costs 3, from 2 costs 4
    assert up.verdict is Verdict.PROVED and tight.verdict is Verdict.VIOLATED
    assert (rnd.detail["min"], rnd.detail["max"]) == (1, 1) and rnd.verdict is Verdict.PROVED
    cex = tight.counterexample
    start = tight.detail["start"]
    assert cex.steps[start].state["x"] == 1 and cex.steps[-1].state["x"] == 3


def test_json_fields_of_a_latency_result(capsys, tmp_path):
    f = tmp_path / "c.gpspec"
    f.write_text("model c\n" + COUNTER)
    assert main(["verify", str(f), "--json", "--property", "tight"]) == 1
    r = json.loads(capsys.readouterr().out)["results"][0]
    assert {k: r[k] for k in ("property", "kind", "verdict", "min", "max", "within")} == {
        "property": "tight", "kind": "latency", "verdict": "violated", "min": 7, "max": 7, "within": 6}
    assert r["counterexample"]["steps"][0]["action"] is None
    assert main(["verify", str(f), "--property", "up"]) == 0
    assert "min 7, max 7 (within 7)" in capsys.readouterr().out


def test_min_and_max_differ_over_branches_and_the_max_witness_realises_it():
    rep = run("""
var s: 0..3 = 0
fair action fast cost 1 { require s == 1
  s = 3 }
fair action slow cost 5 { require s == 1
  s = 2 }
fair action on cost 2 { require s == 2
  s = 3 }
fair action arrive cost 100 { require s == 0
  s = 1 }
allow deadlock
latency l: from s == 1 to s == 3
""")
    r = rep.result("l")
    assert (r.detail["min"], r.detail["max"]) == (1, 7) and r.verdict is Verdict.PROVED
    assert [st.action for st in r.counterexample.steps] == [None, "arrive", "slow", "on"]
    assert r.detail["start"] == 1  # the arrival's cost (100) is before the measurement
    assert [st["action"] for st in r.detail["min_counterexample"]["steps"]] == [None, "arrive", "fast"]


def test_a_start_that_is_already_a_q_state_measures_zero():
    r = run("var x: 0..1 = 0\nfair action go cost 4 { require x == 0\n x = 1 }\nallow deadlock\n"
            "latency l: from x == 1 to x == 1 within 0\n").result("l")
    assert (r.detail["min"], r.detail["max"], r.verdict) == (0, 0, Verdict.PROVED)


def test_only_steps_entering_p_start_a_measurement():
    # p holds in 1 and 2; the measurement starts at 1 (entered from 0), not again at 2
    r = run("var x: 0..3 = 0\nfair action go cost 1 { require x < 3\n x = x + 1 }\nallow deadlock\n"
            "latency l: from x == 1 or x == 2 to x == 3\n").result("l")
    assert (r.detail["min"], r.detail["max"], r.detail["starts"]) == (2, 2, 1)


def test_unbounded_when_q_can_be_avoided_by_stuttering():
    # inc is not fair: a behaviour may stop at x == 1 forever
    r = run("var x: 0..2 = 0\naction inc cost 1 { require x < 2\n x = x + 1 }\nallow deadlock\n"
            "latency l: from x == 1 to x == 2\n").result("l")
    assert r.verdict is Verdict.VIOLATED and r.detail["max"] is None and r.detail["min"] == 1
    assert "no fair action" in r.detail["unbounded"]
    assert r.counterexample.loop == len(r.counterexample.steps) - 1


def test_unbounded_on_a_positive_cost_cycle_before_q_but_not_on_a_zero_cost_unfair_one():
    src = """
var x: 0..2 = 0
var spin: bool = false
fair action go cost 1 { require x == 0
  x = 1 }
action toggle cost COST { require x == 1
  spin = not spin }
fair action done cost 3 { require x == 1
  x = 2 }
allow deadlock
latency l: from x == 1 to x == 2
"""
    pos = run("const COST = 2\n" + src).result("l")
    assert pos.verdict is Verdict.VIOLATED and pos.detail["max"] is None
    assert "positive cost" in pos.detail["unbounded"] and pos.counterexample.loop is not None
    zero = run("const COST = 0\n" + src).result("l")  # fairness of `done` forces the way out
    assert zero.verdict is Verdict.PROVED and (zero.detail["min"], zero.detail["max"]) == (3, 3)


def test_unbounded_on_a_fair_cycle_that_never_reaches_q():
    r = run("var x: 0..2 = 0\nfair action a { require x < 2\n x = x + 1 }\nfair action b { require x == 2\n x = 1 }\n"
            "latency l: from x == 1 to false\n").result("l")
    assert r.verdict is Verdict.VIOLATED and r.detail["max"] is None and r.detail["min"] is None
    assert "fair behaviour can cycle" in r.detail["unbounded"]


def test_no_start_is_vacuously_proved_and_says_so():
    r = run("var x: 0..1 = 0\nallow deadlock\nlatency l: from x == 1 to x == 0 within 3\n").result("l")
    assert r.verdict is Verdict.PROVED and r.detail["starts"] == 0 and r.detail["max"] is None


def test_constraint_gives_holds_to_bound_and_incomplete_search_unknown():
    src = ("var x: 0..9 = 0\nfair action inc cost 1 { require x < 9\n x = x + 1 }\nallow deadlock\n"
           "latency l: from x == 1 to x == 3 within 5\n")
    assert run(src + "constraint c: x < 6\n").result("l").verdict is Verdict.HOLDS_TO_BOUND
    r = run(src, max_states=3).result("l")
    assert r.verdict is Verdict.UNKNOWN and "state limit" in r.reason


def test_cost_errors_make_the_latency_unknown_with_the_location():
    r = run("var x: 0..2 = 0\nvar a: [0..1] -> 0..1 = 0\nfair action inc cost a[x + 1] { require x < 2\n x = x + 1 }\n"
            "allow deadlock\nlatency l: from x == 0 to x == 2\n").result("l")
    assert r.verdict is Verdict.UNKNOWN and "index 2 is outside 0..1" in r.reason and "t.gpspec:4:" in r.reason
    neg = run("var x: 0..2 = 0\nfair action dec cost 1 - 2 * x { require x < 2\n x = x + 1 }\n"
              "allow deadlock\nlatency l: from x == 0 to x == 2\n").result("l")
    assert neg.verdict is Verdict.UNKNOWN and "cannot be negative" in neg.reason


@pytest.mark.parametrize("engine", ["kind", "pdr"])
def test_kind_and_pdr_say_unknown_with_the_reason(engine):
    r = run(COUNTER, engine=engine).result("up")
    assert r.verdict is Verdict.UNKNOWN and "does not compute latencies" in r.reason


def test_bmc_bounds_latencies_over_an_unrolling():
    rep = run(COUNTER, engine="bmc", depth=8)
    up, tight, rnd = rep.result("up"), rep.result("tight"), rep.result("round")
    assert up.verdict is Verdict.HOLDS_TO_BOUND and up.bound == 8 and (up.detail["min"], up.detail["max"]) == (7, 7)
    assert tight.verdict is Verdict.VIOLATED and tight.engine == "bmc"  # its witness replayed (engines.check_witnesses)
    assert rnd.verdict is Verdict.UNKNOWN and (rnd.detail["min"], rnd.detail["max"]) == (1, 1)
    # too short an unrolling: no measurement fits, which is no violation
    short = run(COUNTER, engine="bmc", depth=1).result("up")
    assert short.verdict is Verdict.HOLDS_TO_BOUND and short.detail["max"] is None
    # a bounded max is a lower bound: the unbounded latency shows a finite one, and never a verdict
    unb = run("var x: 0..2 = 0\nfair action go cost 1 { require x == 0\n x = 1 }\n"
              "action spin cost 2 { require x == 1\n x = 1 }\nfair action done cost 3 { require x == 1\n x = 2 }\n"
              "allow deadlock\nlatency l: from x == 1 to x == 2\n", engine="bmc", depth=4).result("l")
    assert unb.verdict is Verdict.UNKNOWN and unb.detail["max"] == 2 * 2 + 3


# The seeds' timeline in sequential costs (what spec/models/rt_latency.gpspec was before it was timed,
# issue 29), with a 10 us detector period: the detector's phase is a state variable.
SEQ_TIMELINE = """
enum Phase { Arrived, Detected, Preempted, RtDone, Woken, Resumed }
var phase: 0..9 = any
var at: Phase = Arrived
fair action detect cost (if phase == 0 then 0 else 10 - phase) { require at == Arrived
 at = Detected }
fair action preempt cost 5 { require at == Detected
 at = Preempted }
fair action execute cost 40 { require at == Preempted
 at = RtDone }
fair action wake cost (10 - 45 % 10) % 10 { require at == RtDone
 at = Woken }
fair action resume cost 5 { require at == Woken
 at = Resumed }
latency rt_preempt_latency: from at == Arrived to at == Preempted
latency rt_completion: from at == Arrived to at == RtDone
latency be_resume_delay: from at == Detected to at == Resumed
terminal: at == Resumed
"""


def test_bmc_and_explicit_agree_on_a_sequential_cost_timeline():
    exact = run(SEQ_TIMELINE)
    bounded = run(SEQ_TIMELINE, engine="bmc", depth=6)
    for name in ("rt_preempt_latency", "rt_completion", "be_resume_delay"):
        e, b = exact.result(name), bounded.result(name)
        assert (e.detail["min"], e.detail["max"]) == (b.detail["min"], b.detail["max"]), name
    assert exact.result("rt_completion").detail["max"] == 9 + 5 + 40


def test_bmc_says_unknown_on_the_timed_bundled_timeline():
    # rt_latency is timed (issue 29): bmc has no clocks and says so, never an untimed answer
    bounded = verify("rt_latency", engine="bmc", depth=6)
    for name in ("rt_preempt_latency", "rt_completion", "be_resume_delay"):
        r = bounded.result(name)
        assert r.verdict is Verdict.UNKNOWN and "time" in (r.reason or ""), name


def test_auto_takes_the_explicit_latency_when_the_search_completes_else_bmc():
    r = run(COUNTER, engine="auto").result("tight")
    assert r.verdict is Verdict.VIOLATED and r.engine == "explicit"
    r = run(COUNTER, engine="auto", max_states=2, depth=8).result("tight")
    assert r.verdict is Verdict.VIOLATED and r.engine == "bmc"


@pytest.mark.parametrize("src, message", [
    ("var x: 0..1 = 0\naction a cost true { x = 1 }\n", "a cost is an integer expression"),
    ("var x: 0..1 = 0\naction a cost -2 { x = 1 }\n", "cannot be negative"),
    ("var x: 0..1 = 0\naction a cost x' { x = 1 }\n", "primed expression"),
    ("var x: 0..1 = 0\naction a cost y { let y = 1\n x = y }\n", "unknown name 'y'"),
    ("var x: 0..1 = 0\nlatency l: from x to x == 1\n", "expected a bool expression"),
    ("var x: 0..1 = 0\nlatency l: from x == 0 to x == 1 within x\n", "constant"),
    ("var x: 0..1 = 0\nlatency l: from x == 0 to x == 1 within 0 - 1\n", "cannot be negative"),
    ("var x: 0..1 = 0\ninvariant l: x <= 1\nlatency l: from x == 0 to x == 1\n", "already declared"),
])
def test_bad_costs_and_latencies_are_located_type_errors(src, message):
    with pytest.raises(SpecTypeError) as err:
        load_source("model t\n" + src, "t.gpspec")
    text = err.value.render()
    assert message in text and "t.gpspec:" in text


def test_cost_and_latency_words_stay_usable_as_names():
    m = load_source("model t\nvar cost: 0..1 = 0\nvar to: bool = false\nvar within: bool = false\n"
                    "fair action latency(from: 0..1) cost from + cost { require cost == 0\n cost = 1 }\n"
                    "allow deadlock\nlatency l: from cost == 0 to cost == 1 within 1\n", "t.gpspec")
    assert m.actions[0].cost is not None and m.latencies[0].within == 1


# ------------------------------------------------------------------ against a brute force
_GUARDS = ["x < 2", "x >= 2", "y < 2", "y != x", "b", "not b", "x + y < 4", "true", "y == 3"]
_ATOMS = ["x == 0", "x == 1", "x == 3", "y == 0", "y >= 2", "b", "not b", "x == y", "x > y"]
_UPDATES = ["x = (x + 1) % 4", "x = (x + 3) % 4", "y = (y + 1) % 4", "y = (x + y) % 4", "b = not b", "x = 0",
            "y = 0", "b = x == 1"]
_MONOTONE = [("x = x + 1", "x < 3"), ("y = y + 1", "y < 3"), ("x = x + 2", "x < 2"), ("y = x", "y < x"),
             ("b = true", "not b"), ("y = 3", "x == 3 and y < 3")]
_COSTS = [None, "0", "1", "2", "5", "x", "y + 1", "if b then 3 else 0", "x * y", "x + 2 * y"]


def _random_spec(rng: random.Random) -> str:
    lines = ["model r", "var x: 0..3 = 0", "var y: 0..3 = " + str(rng.randrange(4)), "var b: bool = false"]
    monotone = rng.random() < 0.5  # every step moves forward: no cycles, so finite latencies are common
    for k in range(rng.randint(3, 6)):
        cost = rng.choice(_COSTS)
        fair = "fair " if rng.random() < 0.8 else ""
        guard = " and ".join(rng.sample(_GUARDS, 1 if rng.random() < 0.7 else 2))
        ups = "\n  ".join(rng.sample(_UPDATES, rng.randint(1, 2)))
        if monotone:
            up, guard = rng.choice(_MONOTONE)
            if rng.random() < 0.3:
                guard += " and " + rng.choice(_GUARDS)
            ups = up
        lines.append(f"{fair}action a{k}{'' if cost is None else ' cost ' + cost} {{ require {guard}\n  {ups} }}")
    lines.append("allow deadlock")
    for k in range(2):
        p = rng.choice(_ATOMS)
        q = " and ".join(rng.sample(_ATOMS, 1 if rng.random() < 0.6 else 2))
        lines.append(f"latency l{k}: from {p} to {q}")
    return "\n".join(lines) + "\n"


def _brute(text: str) -> dict[str, tuple[int | None, int | None]]:
    """(min, max) of every latency property by the reference's brute force (tests/reference/latency.py)."""
    m = ref.load(text)
    return {n: (o.min, o.max) for n, o in ref_latency.latencies(m, ref_explore.explore(m)).items()}


@pytest.mark.parametrize("seed", range(150))
def test_latencies_agree_with_a_brute_force_on_random_specs(seed):
    text = _random_spec(random.Random(seed))
    want = _brute(text)
    model = load_source(text, "r.gpspec")
    rep = verify(model)
    cm = compile_model(model)
    cost = compile_costs(cm)
    for name, (mn, mx) in want.items():
        r = rep.result(name)
        assert (r.detail["min"], r.detail["max"]) == (mn, mx), text
        assert (r.verdict is Verdict.VIOLATED) == (r.detail["starts"] > 0 and mx is None), text
        if r.counterexample is not None and mx is not None:
            # the max witness is a behaviour (each step an enabled instance) that costs max
            steps = r.counterexample.steps
            states = [cm.layout.encode(st.state) for st in steps]
            total = 0
            for k in range(1, len(steps)):
                iid = cm.find_instance(steps[k].action, steps[k].args)
                assert cm.step(iid, states[k - 1]) == states[k]
                if k > r.detail["start"]:
                    total += cost(iid, states[k - 1])
            assert total == mx, text


def test_every_violated_latency_witness_replays_through_the_witness_check():
    from gpcheck.checker.engines.smt.witness import check_witness

    for src in (COUNTER, "var x: 0..2 = 0\naction inc cost 1 { require x < 2\n x = x + 1 }\nallow deadlock\n"
                "latency l: from x == 1 to x == 2\n"):
        model = load_source("model t\n" + src, "t.gpspec")
        cm = compile_model(model)
        for r in verify(model).results:
            if r.kind == "latency" and r.verdict is Verdict.VIOLATED:
                assert check_witness(cm, r) is None, r.property
    # a doctored witness is caught
    r = run(COUNTER).result("tight")
    from dataclasses import replace
    assert check_witness(compile_model(load_source("model t\n" + COUNTER, "t.gpspec")),
                         replace(r, detail={**r.detail, "max": 8})) is not None

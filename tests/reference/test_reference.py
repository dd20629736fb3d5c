"""The reference semantics itself, on hand-checked models: if these fail, the differential
test's judge is wrong, not the engines."""

from __future__ import annotations

import pytest

from tests.reference.explore import explore
from tests.reference.replay import check_counterexample
from tests.reference.semantics import ModellingError, holds, load, step, to_json


def _outcomes(text: str) -> dict[str, tuple[bool, int | None]]:
    ex = explore(load(text))
    return {k: (v.violated, v.shortest) for k, v in ex.outcomes.items() if v is not None}


@pytest.mark.parametrize(("name", "consts", "states"), [
    ("rewind.gpspec", {"N": 4}, 326),
    ("peterson.gpspec", {}, 20),
])
def test_example_state_counts(examples, name, consts, states):
    ex = explore(load((examples / name).read_text(), consts))
    assert len(ex.states) == states


def test_issue_example_both_invariants():
    out = _outcomes("""model m
var x: 0..10 = 0
var done: bool = false
action inc  { require not done and x < 10; x = x + 1 }
action stop { require not done and x == 0; done = true }
allow deadlock
invariant p1: x < 10
invariant p2: not done
""")
    assert out["p1"] == (True, 10) and out["p2"] == (True, 1)
    assert "deadlock" in out and out["deadlock"] == (False, None)


def test_expressions_floor_division_short_circuit_and_folds():
    m = load("""model m
const Z = 0
var i: -3..3 = -3
var a: [0..2] -> 0..3 = [1, 2, 3]
action go { i = i + 1 }
""")
    s = m.initial_states()[0]
    ev = lambda text: holds(m, load(f"model m\nconst Z = 0\nvar i: -3..3 = -3\nvar a: [0..2] -> 0..3 = [1, 2, 3]\ninvariant p: {text}\n").invariants[0][1], s)  # noqa: E731
    assert ev("-7 / 2 == -4 and -7 % 2 == 1 and 7 % -2 == -1")
    assert ev("i < 0 or a[i] == 0")  # lazy `or`: a[-3] is never evaluated
    assert ev("not (all k in 0..5: a[k] == 0)")  # `all` stops at the first false element
    assert ev("(sum k in 1..Z: k) == 0 and (count k in 0..100: k % 7 == 0) == 15")
    with pytest.raises(ModellingError):
        ev("a[i] == 0")
    with pytest.raises(ModellingError):
        ev("(sum k in 0..3: a[k]) == 6")  # `sum` evaluates every element
    with pytest.raises(ModellingError):
        ev("1 / (i + 3) == 0")


def test_step_semantics_requires_errors_and_writes():
    m = load("""model m
var x: 0..2 = 2
struct S { lo: -1..1, on: bool }
var s: S = { lo: 0, on: false }
var h: [0..1] -> [bool] -> 0..1 = 0
action over { x = x + 1 }
action guarded { require x < 2; x = x + 1 }
action late { x = x + 1; require false }
action nested(c: bool) { h[1][c] = 1; s.on = c; s.lo = -1 }
""")
    s0 = m.initial_states()[0]
    acts = {a.name: a for a in m.actions}
    with pytest.raises(ModellingError):
        step(m, acts["over"], (), s0)
    assert step(m, acts["guarded"], (), s0) is None
    with pytest.raises(ModellingError):  # the error comes before the failing require
        step(m, acts["late"], (), s0)
    t = step(m, acts["nested"], (True,), s0)
    assert to_json(m, t) == {"x": 2, "s": {"lo": -1, "on": True}, "h": [{"false": 0, "true": 0}, {"false": 0, "true": 1}]}


def test_constraint_states_are_reached_checked_but_not_expanded():
    ex = explore(load("""model m
var x: 0..5 = 0
action inc { require x < 5; x = x + 1 }
invariant p: x != 3
invariant q: x != 4
constraint c: x < 3
"""))
    assert len(ex.states) == 4 and ex.constrained
    assert ex.outcomes["p"].violated and not ex.outcomes["q"].violated
    assert not ex.outcomes["deadlock"].violated


def test_an_erroring_instance_is_enabled_so_no_deadlock():
    out = _outcomes("""model m
var x: 0..2 = 0
var y: 0..1 = 0
action a { require x < 2; x = x + 1 }
action b { require x == 2; y = y + 2 }
""")
    assert out["deadlock"] == (False, None) and out["range"] == (True, 2)


LIVE = """model m
var x: 0..3 = 0
fair action inc { require x < 2; x = x + 1 }
action back { require x == 2; x = 0 }
action st { require x == 1; x = 3 }
liveness p: eventually x == 3
liveness q: always eventually x == 0
liveness r: x == 1 leads_to x == 2
"""


def test_weak_fairness_liveness():
    out = _outcomes(LIVE)
    assert out["p"][0] and out["q"][0]
    assert out["r"][0]  # x=1 -> st -> x=3 stays there forever (inc is disabled at 3)
    fair_only = _outcomes(LIVE.replace("action st", "action st_never").replace("require x == 1", "require false"))
    assert not fair_only["r"][0]  # inc is fair: from x=1 it must be taken


def test_lasso_replay_checks_fairness_and_loop():
    m = load(LIVE)
    st = lambda x: {"x": x}  # noqa: E731
    good = {"steps": [{"action": None, "args": {}, "state": st(0)}, {"action": "inc", "args": {}, "state": st(1)},
                      {"action": "inc", "args": {}, "state": st(2)}], "loop": 0}
    assert check_counterexample(m, "liveness", "p", good) is None
    stutter_unfair = {"steps": [{"action": None, "args": {}, "state": st(0)}], "loop": 0}
    assert "unfair" in check_counterexample(m, "liveness", "p", stutter_unfair)
    no_back_edge = dict(good, loop=1)
    assert "back to state 1" in check_counterexample(m, "liveness", "p", no_back_edge)
    wrong_state = {"steps": good["steps"][:1] + [{"action": "inc", "args": {}, "state": st(2)}], "loop": 1}
    assert "different state" in check_counterexample(m, "liveness", "p", wrong_state)
    assert "no invariant" in check_counterexample(m, "invariant", "p", {"steps": good["steps"], "loop": None})


def test_a_predicate_that_fails_to_evaluate_is_range_and_false():
    """NOTE(predicate-errors) in spec/ir.py: a range violation, and false for its own property."""
    out = _outcomes("""model m
var i: 0..3 = 0
var a: [0..2] -> 0..2 = 1
action step { require i < 3; i = i + 1 }
invariant p: a[i] == 1
transition t: i' < 3 or a[i'] == 1
constraint c: i < 3 or a[i] == 0
terminal: a[i] == 1
""")
    assert out["p"] == (True, 3) and out["t"] == (True, 3) and out["range"] == (True, 3)
    # at i = 3 the constraint fails to evaluate, so counts as false: that state is not expanded,
    # hence not a deadlock (where the terminal predicate would fail to evaluate, hence not hold)
    assert out["deadlock"] == (False, None)


def test_lasso_bound_of_a_stutter_violation():
    ex = explore(load("""model m
var x: 0..3 = 0
fair action inc { require x < 3 and x != 1; x = x + 1 }
action jump { require x == 0; x = 1 }
liveness p1: always eventually x != 3
liveness p2: eventually x == 3
"""))
    assert ex.outcomes["p2"].violated and ex.outcomes["p2"].lasso_within == 1  # 0 -> 1, stutter
    assert not ex.outcomes["p1"].violated  # x never gets past 1


def test_lasso_bound_allows_taking_a_fair_self_loop():
    ex = explore(load("""model m
var a: 0..1 = 0
fair action noop { a = a }
liveness l: eventually a == 1
"""))
    assert ex.outcomes["l"].violated and ex.outcomes["l"].lasso_within == 1

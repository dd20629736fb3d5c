"""Semantics of the explicit engine on small purpose-written specs: modelling errors, deadlock,
terminal states, constraints, limits, liveness and the JSON / exit-code contract."""

from __future__ import annotations

import json

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.cli.command import main
from gpcheck.spec import load_source


def run(src: str, **kw):
    return verify(load_source("model t\n" + src, "t.gpspec"), **kw)


def test_out_of_range_write_is_a_range_violation_with_the_trace():
    r = run("var x: 0..2 = 0\naction inc { x = x + 1 }\nallow deadlock\n").result("range")
    assert r.verdict is Verdict.VIOLATED
    assert [s.state["x"] for s in r.counterexample.steps] == [0, 1, 2]
    assert r.detail["action"] == "inc" and "x = 3 is outside 0..2" in r.detail["error"]
    assert r.detail["location"] == "t.gpspec:3:14"


def test_bad_index_and_division_by_zero_are_modelling_errors():
    r = run("var a: [0..1] -> 0..5 = 0\nvar i: 0..3 = 0\naction go { i = i + 1\n a[i] = 1 }\nallow deadlock\n")
    assert r.result("range").verdict is Verdict.VIOLATED
    assert "index 2 is outside 0..1" in r.result("range").detail["error"]
    d = run("var x: 0..4 = 2\nvar y: 0..4 = 1\naction go { y = y - 1\n x = x / y }\nallow deadlock\n")
    assert "division by zero" in d.result("range").detail["error"]


def test_a_failed_require_after_a_bad_write_is_still_an_error_but_before_it_is_not():
    # NOTE(step-semantics): execution stops at the first failing require or modelling error.
    after = run("var x: 0..1 = 1\naction go { x = x + 1\n require false }\nallow deadlock\n")
    assert after.result("range").verdict is Verdict.VIOLATED
    before = run("var x: 0..1 = 1\naction go { require false\n x = x + 1 }\nallow deadlock\n")
    assert before.result("range").verdict is Verdict.PROVED


def test_deadlock_terminal_and_allow_deadlock():
    src = "var x: 0..2 = 0\naction inc { require x < 2\n x = x + 1 }\n"
    dead = run(src).result("deadlock")
    assert dead.verdict is Verdict.VIOLATED and dead.counterexample.length == 2
    assert run(src + "terminal: x == 2\n").result("deadlock").verdict is Verdict.PROVED
    report = run(src + "allow deadlock\n")
    assert all(r.property != "deadlock" for r in report.results)


def test_constraint_gives_holds_to_bound_not_proved():
    r = run("var x: 0..9 = 0\naction inc { require x < 9\n x = x + 1 }\nterminal: x == 9\n"
            "invariant small: x <= 9\nconstraint c: x < 4\n").result("small")
    assert r.verdict is Verdict.HOLDS_TO_BOUND and "constraint c" in r.reason


def test_state_limit_and_timeout_give_unknown_with_reason(examples):
    report = verify(examples / "rewind.gpspec", consts={"N": 8, "MAXP": 2}, properties=["in_order"], max_states=100)
    r = report.result("in_order")
    assert r.verdict is Verdict.UNKNOWN and "state limit 100" in r.reason
    assert report.states is None and report.exit_code == 3


def test_transition_property_violation_ends_with_the_bad_step():
    r = run("var x: 0..3 = 0\naction inc { require x < 3\n x = x + 1 }\naction reset { require x == 3\n x = 0 }\n"
            "transition monotone: x' >= x\n").result("monotone")
    assert r.verdict is Verdict.VIOLATED
    assert [s.action for s in r.counterexample.steps] == [None, "inc", "inc", "inc", "reset"]


def test_any_initial_values_and_struct_arrays():
    src = ("enum P { Lo, Hi }\nstruct Q { rptr: 0..2, wptr: 0..2 }\nvar q: [P] -> Q = {rptr: 0, wptr: any}\n"
           "action push(p: P) { require q[p].wptr < 2\n q[p].wptr = q[p].wptr + 1 }\n"
           "action pop(p: P) { require q[p].rptr < q[p].wptr\n q[p].rptr = q[p].rptr + 1 }\nallow deadlock\n"
           "invariant order: all p in P: q[p].rptr <= q[p].wptr\n")
    report = run(src)
    assert report.result("order").verdict is Verdict.PROVED
    assert report.states == 36  # (rptr <= wptr over 0..2: 6 pairs) per queue, two queues


def test_weak_fairness_is_per_instance():
    # Two processes; only instance i=1 of `work` is ever taken on the loop unless fairness is per
    # instance. With per-instance weak fairness, done[0] must eventually become true.
    src = ("var done: [0..1] -> bool = false\nvar spin: 0..1 = 0\n"
           "fair action work(i: 0..1) { require not done[i]\n done[i] = true }\n"
           "action idle { spin = 1 - spin }\nliveness zero_done: eventually done[0]\n")
    assert run(src).result("zero_done").verdict is Verdict.PROVED
    unfair = src.replace("fair action work", "action work")
    r = run(unfair).result("zero_done")
    assert r.verdict is Verdict.VIOLATED and r.counterexample.loop is not None


def test_json_output_shape_and_exit_codes(examples, capsys):
    assert main(["verify", str(examples / "rewind.gpspec"), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"model", "constants", "states", "seconds", "results"}
    assert out["states"] == 326 and out["constants"] == {"N": 4, "B": 1, "CAP": 2, "MAXP": 1}
    res = {r["property"]: r for r in out["results"]}
    assert set(res["no_reexecution"]) >= {"property", "kind", "verdict", "engine", "bound", "reason", "counterexample"}
    steps = res["no_reexecution"]["counterexample"]["steps"]
    assert steps[0]["action"] is None and len(steps) == 9 and res["no_reexecution"]["counterexample"]["loop"] is None
    assert res["deadlock"]["kind"] == "deadlock" and res["range"]["kind"] == "range"
    assert main(["verify", str(examples / "ring.gpspec"), "--json"]) == 0
    capsys.readouterr()
    assert main(["verify", str(examples / "ring.gpspec"), "--max-states", "10"]) == 3


def test_human_output_shows_changed_variables_only(examples, capsys):
    main(["verify", str(examples / "rewind.gpspec")])
    out = capsys.readouterr().out
    assert "counterexample for no_reexecution" in out
    assert "waves_run[0]: 1 -> 2" in out
    assert "coverage" in out


def test_never_fired_action_is_a_warning():
    report = run("var x: 0..1 = 0\naction a { require x == 0\n x = 1 }\naction never { require x == 5\n x = 0 }\n"
                 "allow deadlock\n")
    assert report.coverage == {"a": 1, "never": 0}
    assert report.warnings == ["action 'never' never fired"]


def test_same_run_twice_gives_the_same_counterexample(examples):
    a = verify(examples / "rewind.gpspec", consts={"N": 6, "MAXP": 2}).to_json()
    b = verify(examples / "rewind.gpspec", consts={"N": 6, "MAXP": 2}).to_json()
    a.pop("seconds"), b.pop("seconds")
    assert a == b


def test_for_loops_and_folds_over_empty_ranges_run_zero_times():
    report = run("const C = 1\nvar x: 0..3 = 0\naction a { for j in 0..C-2 { x = 3 }\n require x == 0\n x = 1 }\n"
                 "allow deadlock\ninvariant none: all k in 0..C-2: k > 5\ninvariant zero: (sum k in 0..C-2: k) == 0\n")
    assert report.states == 2
    assert report.result("none").verdict is Verdict.PROVED and report.result("zero").verdict is Verdict.PROVED


def test_modelling_error_in_a_constraint_is_a_range_violation_not_a_crash():
    report = run("var x: 0..3 = 0\naction inc { require x < 3\n x = x + 1 }\nallow deadlock\n"
                 "constraint c: 6 / (2 - x) > 0\ninvariant ok: x <= 3\n")
    assert report.result("range").verdict is Verdict.VIOLATED
    assert "division by zero" in report.result("range").detail["error"]
    assert report.result("ok").verdict is Verdict.UNKNOWN

"""Every example of ../shared/spec-examples gives the state counts and verdicts of its EXPECTED.md."""

from __future__ import annotations

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.gpmodel import compile_model
from gpcheck.spec import load_spec

CASES = [
    ("ring", {"N": 4, "B": 2, "MAXP": 2}, 225,
     {"no_reexecution": Verdict.PROVED, "ring_order": Verdict.PROVED,
      "ring_kept_on_preempt": Verdict.PROVED, "finishes": Verdict.PROVED}),
    ("rewind", {"N": 4, "B": 1, "CAP": 2, "MAXP": 1}, 326,
     {"no_reexecution": Verdict.VIOLATED, "in_order": Verdict.PROVED}),
    ("peterson", {}, 20, {"mutual_exclusion": Verdict.PROVED, "no_starvation": Verdict.PROVED}),
    ("starve", {"AGING": 0}, 9, {"be_served": Verdict.VIOLATED}),
    ("starve", {"AGING": 1}, 9, {"be_served": Verdict.PROVED}),
]


@pytest.mark.parametrize("name,consts,states,verdicts", CASES, ids=lambda x: str(x) if isinstance(x, str) else None)
def test_expected_counts_and_verdicts(examples, name, consts, states, verdicts):
    report = verify(examples / f"{name}.gpspec", consts=consts)
    assert report.states == states
    for prop, verdict in verdicts.items():
        assert report.result(prop).verdict is verdict, report.result(prop)


def test_rewind_shortest_counterexample_is_the_known_8_steps(examples):
    r = verify(examples / "rewind.gpspec", properties=["no_reexecution"]).result("no_reexecution")
    actions = [s.action for s in r.counterexample.steps]
    assert actions == [None, "launch", "fetch", "wave", "preempt", "resume", "launch", "fetch", "wave"]
    assert r.counterexample.steps[-1].state["waves_run"][0] == 2


@pytest.mark.parametrize("n,states", [(6, 5448), (8, 14854)])
def test_rewind_scaling_counts(examples, n, states):
    report = verify(examples / "rewind.gpspec", consts={"N": n, "CAP": 2, "B": 1, "MAXP": 2}, properties=["in_order"])
    assert report.states == states


def test_starve_lasso_is_a_fair_behaviour_that_never_serves_best_effort(examples):
    r = verify(examples / "starve.gpspec", consts={"AGING": 0}).result("be_served")
    cex = r.counterexample
    assert cex.loop is not None and 0 <= cex.loop < len(cex.steps)
    loop = cex.steps[cex.loop:]
    assert all(s.state["be_pending"] for s in loop)
    # run_be is fair: somewhere on the loop it must be disabled (real-time work pending).
    assert any(s.state["rt_pending"] > 0 for s in loop)


def test_counterexamples_replay_through_the_step_functions(examples):
    model = load_spec(examples / "rewind.gpspec")
    cm = compile_model(model)
    cex = verify(model).result("no_reexecution").counterexample
    s = cm.layout.encode(cex.steps[0].state)
    assert s in cm.initial_states()
    for step in cex.steps[1:]:
        iid = cm.find_instance(step.action, step.args)
        s = cm.step(iid, s)
        assert isinstance(s, tuple)
        assert cm.layout.decode(s) == step.state


def test_step_and_successors_agree_on_every_reachable_state(examples):
    for name in ("ring", "rewind", "peterson", "starve"):
        cm = compile_model(load_spec(examples / f"{name}.gpspec"))
        seen = set(cm.initial_states())
        work = list(seen)
        while work:
            s = work.pop()
            succ = dict(cm.successors(s))
            for iid in range(len(cm.instances)):
                r = cm.step(iid, s)
                assert (iid in succ) == isinstance(r, tuple)
                if isinstance(r, tuple):
                    assert r == succ[iid]
            for t in succ.values():
                if t not in seen:
                    seen.add(t)
                    work.append(t)

"""checker/engines/timed/path.py: timed feasibility of a fixed discrete path, with fixed stamps,
checked against the zone graph's own walk of the same path."""

from __future__ import annotations

import itertools

import pytest

from gpcheck.gpmodel import compile_model
from gpcheck.checker.core.verdict import Counterexample, Step
from gpcheck.checker.engines.timed.path import path_timing, timed_counterexample, zone_walk
from gpcheck.spec import load_source

RACE = """model race
const DRAIN_MIN = 2
const DRAIN_MAX = 8
const TIMEOUT = 5
enum Phase { Idle, Draining, Drained, Reset }
var ph: Phase = Idle
action preempt { require ph == Idle  ph = Draining }
action drain time DRAIN_MIN..DRAIN_MAX { require ph == Draining  ph = Drained }
action timeout time TIMEOUT { require ph == Draining  ph = Reset }
urgent action ack { require ph == Drained  ph = Idle }
invariant no_reset: ph != Reset
"""


def _cm(src: str, **consts: int):  # type: ignore[no-untyped-def]
    for k, v in consts.items():
        src = src.replace(f"const {k} = ", f"const {k} = {v} #")
    return compile_model(load_source(src, "race.gpspec"))


def _ids(cm, *names: str) -> list[int]:  # type: ignore[no-untyped-def]
    return [cm.instance_ids(n)[0] for n in names]


def test_a_feasible_path_gets_its_earliest_integer_timing() -> None:
    cm = _cm(RACE)
    s0 = cm.initial_states()[0]
    pt = path_timing(cm, s0, _ids(cm, "preempt", "drain", "ack", "preempt", "timeout"))
    assert pt.feasible and pt.times == [0, 0, 2, 2, 2, 7]
    assert pt.since == [None, None, 0, 2, None, 2]  # drain's timer started at 0; timeout's at the 2nd preempt
    steps = pt.steps(cm)
    assert [s.time for s in steps] == pt.times and steps[-1].state["ph"] == "Reset"


def test_timing_can_forbid_a_path() -> None:
    cm = _cm(RACE, DRAIN_MAX=4)  # the drain's deadline falls before the timeout's lower bound
    s0 = cm.initial_states()[0]
    pt = path_timing(cm, s0, _ids(cm, "preempt", "timeout"))
    assert not pt.feasible and "time bounds" in (pt.reason or "")
    assert path_timing(cm, s0, _ids(cm, "preempt", "drain")).feasible


def test_fixed_stamps_are_respected_or_refuted() -> None:
    cm = _cm(RACE)
    s0 = cm.initial_states()[0]
    path = _ids(cm, "preempt", "drain", "ack")
    pt = path_timing(cm, s0, path, fixed={1: 10, 2: 14})
    assert pt.feasible and pt.times == [0, 10, 14, 14]  # the urgent ack at once
    assert not path_timing(cm, s0, path, fixed={1: 10, 2: 11}).feasible  # drain needs 2
    assert not path_timing(cm, s0, path, fixed={1: 10, 2: 16}).feasible  # the timeout is due at 15
    assert not path_timing(cm, s0, path, fixed={2: 5, 3: 6}).feasible  # ack is urgent
    with pytest.raises(ValueError):
        path_timing(cm, s0, path, fixed={4: 1})


def test_a_step_that_does_not_follow_is_no_behaviour() -> None:
    cm = _cm(RACE)
    pt = path_timing(cm, cm.initial_states()[0], _ids(cm, "drain"))
    assert not pt.feasible and "not enabled" in (pt.reason or "")


def test_counterexamples_are_stamped_or_refuted() -> None:
    cm = _cm(RACE, DRAIN_MAX=4)
    s0 = cm.initial_states()[0]
    plain = path_timing(cm, s0, _ids(cm, "preempt", "drain")).steps(cm)
    cex, why = timed_counterexample(cm, Counterexample(tuple(Step(s.action, s.args, s.state) for s in plain)))
    assert why is None and cex is not None and [s.time for s in cex.steps] == [0, 0, 2]
    bad = (plain[0], plain[1], Step("timeout", {}, {"ph": "Reset"}))
    cex, why = timed_counterexample(cm, Counterexample(bad))
    assert cex is None and "time bounds" in (why or "")
    forged = (plain[0], plain[1], Step("drain", {}, {"ph": "Reset"}))
    assert timed_counterexample(cm, Counterexample(forged))[0] is None


@pytest.mark.parametrize("drain_max", [3, 5, 8])
def test_agrees_with_the_zone_graph_on_every_short_path(drain_max: int) -> None:
    cm = _cm(RACE, DRAIN_MAX=drain_max)
    s0 = cm.initial_states()[0]
    seen = {True: 0, False: 0}
    for n in range(1, 6):
        for path in itertools.product(range(len(cm.instances)), repeat=n):
            pt = path_timing(cm, s0, list(path))
            if len(pt.states) <= n:
                continue  # a step not enabled: no path at all
            assert pt.feasible == zone_walk(cm, s0, list(path)), path
            seen[pt.feasible] += 1
    assert seen[True] and (seen[False] or drain_max >= 5)

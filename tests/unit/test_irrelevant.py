"""NOTE(irrelevant-vars): the variables a set of results cannot depend on, frozen, give the same
verdicts on a smaller graph; a slice that could change `range` is refused."""

from __future__ import annotations

import pytest

from gpcheck.checker.api import assumptions
from gpcheck.checker.api.irrelevant import relevant_vars, slice_for, split
from gpcheck.checker.api.model_api import load, run_timed_spec
from gpcheck.checker.api.timed_assumptions import rerun_without
from gpcheck.checker.core.verdict import Verdict
from gpcheck.checker.engines.explicit.explicit import Limits
from gpcheck.spec import load_source

# `ops` counts the executions of each unit of work (saturating): only `once` reads it; `redo`
# (behind the step assumption `no_redo`) runs a unit again.
SPEC = """
model sl "a ghost counter only one property reads"
var x: 0..3 = 0
var busy: bool = false
var ops: [0..3] -> 0..2 = 0
urgent action start { require not busy and x < 3
    busy = true }
action finish time 1..2 { require busy
    ops[x] = if ops[x] < 2 then ops[x] + 1 else 2
    busy = false
    x = x + 1 }
action redo time 1..3 { require assume no_redo: false
    require busy and x > 0
    ops[x - 1] = if ops[x - 1] < 2 then ops[x - 1] + 1 else 2
    busy = false }
fair action finish, start
invariant once: all i in 0..3: ops[i] <= 1
invariant bounded: x <= 3
liveness done: eventually x == 3
latency work: from busy to not busy
terminal: x == 3
"""
OTHERS = {"bounded", "done", "work", "deadlock", "range"}


def _model(text: str = SPEC):  # type: ignore[no-untyped-def]
    return load_source(text, "sl.gpspec")


def test_the_ghost_counter_is_frozen_for_the_results_that_do_not_read_it() -> None:
    model = _model()
    ops = next(v.index for v in model.vars if v.name == "ops")
    assert ops not in relevant_vars(model, OTHERS) and ops in relevant_vars(model, {"once"})
    got = slice_for(model, OTHERS)
    assert got is not None
    sliced, frozen = got
    assert frozen == ["ops"] and "once" not in {p.name for p in sliced.invariants}
    assert slice_for(model, {"once"}) is None  # it reads every variable the steps write


def test_the_slice_gives_every_verdict_of_the_model_on_a_smaller_graph() -> None:
    relaxed = assumptions.without(_model(), "no_redo")
    got = slice_for(relaxed, OTHERS)
    assert got is not None
    full = run_timed_spec(relaxed, OTHERS, "explicit", Limits())
    small = run_timed_spec(got[0], OTHERS, "explicit", Limits())
    assert {r.property: r.verdict for r in small.results} == {r.property: r.verdict for r in full.results}
    assert {r.property: (r.detail.get("min"), r.detail.get("max")) for r in small.results} == \
        {r.property: (r.detail.get("min"), r.detail.get("max")) for r in full.results}
    assert full.result("done").verdict is Verdict.VIOLATED  # redo can undo the work for ever
    assert small.timed["zones"] < full.timed["zones"]


def test_the_rerun_without_an_assumption_uses_the_slice_and_names_the_same() -> None:
    relaxed = assumptions.without(_model(), "no_redo")
    parts = split(relaxed, OTHERS | {"once"})
    assert [(sorted(p), f) for p, _, f in parts] == [(sorted(OTHERS), ["ops"]), (["once"], [])]
    rep = rerun_without(relaxed, OTHERS | {"once"}, Limits())
    ref = run_timed_spec(relaxed, OTHERS | {"once"}, "explicit", Limits())
    assert {r.property: r.verdict for r in rep.results} == {r.property: r.verdict for r in ref.results}


@pytest.mark.parametrize("old, new", [
    # a frozen write that can leave its range: `range` could change
    ("ops[x] = if ops[x] < 2 then ops[x] + 1 else 2\n    busy = false\n    x = x + 1",
     "ops[x] = ops[x] + 1\n    busy = false\n    x = x + 1"),
    # a left-out predicate that can fail to evaluate (x + 1 reaches 4, past ops's last index)
    ("invariant once: all i in 0..3: ops[i] <= 1", "invariant once: ops[x + 1] <= 1"),
])
def test_no_slice_where_range_could_change(old: str, new: str) -> None:
    assert old in SPEC
    assert slice_for(_model(SPEC.replace(old, new)), OTHERS) is None


def test_a_variable_a_guard_reads_is_never_frozen() -> None:
    model = _model(SPEC.replace("require busy\n    ops[x] =", "require busy and ops[0] < 2\n    ops[x] ="))
    assert slice_for(model, OTHERS) is None


def test_kfd_monitors_results_without_copy_save_are_decided_on_the_slice() -> None:
    """kfd_monitor without copy_save: lp_ops takes every one of its 3^8 values; the results that
    do not read it are decided with it frozen (were `copy_save?`: past the zone cap)."""
    relaxed = assumptions.without(load("kfd_monitor"), "copy_save")
    names = {"bounded_inversion", "rt_preempt_latency", "deadlock", "range"}
    ((part, _, frozen),) = split(relaxed, names)
    assert part == names and "lp_ops" in frozen
    rep = rerun_without(relaxed, names, Limits(), zone_cap=20_000)
    assert {r.property: r.verdict for r in rep.results} == dict.fromkeys(names, Verdict.PROVED)


def test_a_slice_past_the_zone_cap_is_undecided_and_says_what_was_frozen() -> None:
    relaxed = assumptions.without(_model(), "no_redo")
    rep = rerun_without(relaxed, OTHERS, Limits(), zone_cap=2)
    done = rep.result("done")  # a lasso of endless redos: the abstraction leaves it to the zones
    assert done.verdict is Verdict.UNKNOWN and "passed 2 zones" in done.reason and "with ops frozen" in done.reason

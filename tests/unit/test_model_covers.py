"""The covers of xsched and reef_rewind: the scenarios their findings need, reached with a
witness or proved unreachable (NOTE(covers) in checker/api/assumptions.py)."""

from __future__ import annotations

import pytest

from gpcheck.checker import verify
from gpcheck.checker.core.verdict import Verdict
from gpcheck.spec import load_spec

R, U = Verdict.REACHED, Verdict.UNREACHABLE
XSCHED = ("block_killed", "abort_mid_kernel", "two_rt_one_kernel")


def _covers(model: str, names: tuple[str, ...], **consts: int) -> dict[str, Verdict]:
    rep = verify(load_spec(model, consts), properties=list(names), assumption_use=False)
    return {r.property: r.verdict for r in rep.results if r.property in names}


@pytest.mark.parametrize(("consts", "want"), [
    ({}, (R, U, U)),                                   # level 3: every kernel's block killed; one request
    ({"LEVEL": 2}, (U, R, U)),                         # the guardian aborts a kernel part-way
    ({"MAXRT": 2, "INV_BOUND": 4}, (R, U, R)),         # the second request preempts the kernel being restored
    ({"LEVEL": 2, "MAXRT": 2, "INV_BOUND": 4}, (U, R, R)),
    ({"LEVEL": 1}, (U, U, U)),                         # level 1 aborts and kills nothing
])
def test_xsched_covers(consts: dict[str, int], want: tuple[Verdict, ...]) -> None:
    assert _covers("xsched", XSCHED, **consts) == dict(zip(XSCHED, want))


def test_xsched_witness_of_two_requests_in_one_kernel() -> None:
    rep = verify(load_spec("xsched", {"MAXRT": 2, "INV_BOUND": 4}), properties=["two_rt_one_kernel"],
                 assumption_use=False)
    r = rep.result("two_rt_one_kernel")
    assert r.verdict is R and r.counterexample is not None
    steps = r.counterexample.steps
    assert [s.action for s in steps].count("rt_arrive") == 2 and steps[-1].state["rt_k"] == 2
    first = next(i for i, s in enumerate(steps) if s.action == "rt_arrive")
    # no BE command ended between the two requests: the head command is the same one
    assert steps[first].state["head"] == steps[-1].state["head"] < 3


REEF = ("launched_between_resets", "rewind_full_window", "preempt_during_restore", "two_rt_one_kernel")


def test_reef_rewind_covers_small() -> None:
    assert _covers("reef_rewind", REEF, N=2, CAP=1) == dict(zip(REEF, (R, R, U, U)))
    # two RT tasks: the second arrives with no BE kernel completed since the first; the rewind goes
    # back to k0 at N=2, CAP=1 (loff - temp - CAP <= 0), so no relaunch starts past k0
    assert _covers("reef_rewind", REEF, N=2, CAP=1, MAXRT=2) == dict(zip(REEF, (R, R, U, R)))


@pytest.mark.slow  # about 20 s of CPU: reef_rewind with two RT tasks at N=4
def test_reef_rewind_preemption_during_a_restore_at_the_default_size() -> None:
    assert _covers("reef_rewind", REEF, MAXRT=2) == dict(zip(REEF, (R, R, R, R)))


@pytest.mark.parametrize(("model", "cover", "consts", "want"), [
    ("gp_hip_suspend", "suspended_mid_request", {}, R),
    ("blp", "flag_cleared_before_drain", {}, U),                    # the 20 ms LC run outlasts the drain
    ("blp", "flag_cleared_before_drain", {"LC_MIN_US": 0, "LC_EXEC_US": 50}, R),    # where no_skip is violated
    ("nvidia_tsg", "saved_mid_block", {}, U),                       # TS = BLEN: blocks stay inside a slice
    ("nvidia_tsg", "saved_mid_block", {"TS": 3}, R),
    ("nvidia_tsg", "saved_mid_block", {"TS": 3, "PMODE": 1}, U),    # thread-block preemption saves none
])
def test_the_copy_save_and_race_scenarios(model: str, cover: str, consts: dict[str, int], want: Verdict) -> None:
    assert _covers(model, (cover,), **consts) == {cover: want}


def test_nvidia_tsg_names_copy_save_only_where_a_block_is_saved_part_way() -> None:
    for consts, used in (({}, ()), ({"TS": 3}, ("copy_save",))):
        r = verify(load_spec("nvidia_tsg", consts), properties=["no_loss"]).result("no_loss")
        assert r.verdict is Verdict.PROVED and r.assumptions == used, consts

"""Stops honoured in every phase (issue 11 / issue 20): the Python API's `timeout` bounds the Z3
engines' work outside Z3 too (encoding, lemma mining: NOTE(time-limit) in checker/core/budget.py),
and the liveness pass, the SCCs included, ends with a partial report when the budget stops.

Where a stop must land inside one phase, the tests make it land there deterministically: the
budget's poll (or check) raises when called from that phase's loop, as it would once the time
ran out there. One test runs the real clock against a fold that takes minutes to encode without
the polls, and asserts only a generous bound."""

from __future__ import annotations

import sys
import threading
import time
from typing import Callable

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.core import budget
from gpcheck.spec import load_source

# `total` sums a large array: its encoding is one long loop (the fold); `small` needs no fold
FOLD = """model fold
const N = 8
var a: [0..N-1] -> 0..3 = 0
var t: 0..5 = 0
action bump(i: 0..N-1) { require a[i] < 3 and t < 5; a[i] = a[i] + 1; t = t + 1 }
invariant total: (sum k in 0..N-1: a[k]) <= 5
invariant small: t <= 5
allow deadlock
"""
HANG = 60.0  # seconds: far beyond a run that honours a 1 s timeout, far below one that does not


def _fold(n: int):
    return load_source(FOLD.replace("const N = 8", f"const N = {n}"), "fold.gpspec")


def _raise_in(monkeypatch: pytest.MonkeyPatch, name: str, fn: str, stop: Callable[[], None]) -> list[str]:
    """Replace budget.`name` by a wrapper that calls `stop` first whenever its caller is the
    function `fn`; the callers it saw after the stop are returned (none: the stop unwound)."""
    real = getattr(budget, name)
    after: list[str] = []
    stopped = [False]

    def wrapper() -> None:
        caller = sys._getframe(1).f_code.co_name
        if stopped[0]:
            after.append(caller)
        if caller == fn:
            stopped[0] = True
            stop()
        real()

    monkeypatch.setattr(budget, name, wrapper)
    return after


def _limit_passed() -> None:
    raise budget.Stop(budget.TIMEOUT, budget.LIMIT_TEXT, None)


# ---------------------------------------------------------------------------- the time limit itself
def test_poll_does_nothing_outside_a_time_limit() -> None:
    budget.poll()  # trace replay shares the encoder: its own loops decide how it stops


def test_poll_raises_once_the_time_limit_passed() -> None:
    with budget.time_limit(60):
        budget.poll()
        with budget.time_limit(0):
            with pytest.raises(budget.Stop) as e:
                budget.poll()
            assert (e.value.reason, e.value.text) == (budget.TIMEOUT, "timeout")
            assert budget.remaining() == 0
        budget.poll()  # the outer limit is back
        with budget.time_limit(3600):  # an inner limit never extends an outer one
            assert 0 < budget.remaining() <= 60
    budget.poll()


def test_a_time_limit_is_per_thread() -> None:
    seen: list[BaseException | None] = []

    def other() -> None:
        try:
            budget.poll()
            seen.append(None)
        except budget.Stop as e:
            seen.append(e)

    with budget.time_limit(0):
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen == [None]


def test_poll_raises_once_the_budget_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "_state", budget._State())
    budget.request_stop(budget.INTERRUPTED, "interrupted (test)")
    with budget.time_limit(None), pytest.raises(budget.Stop) as e:
        budget.poll()
    assert e.value.text == "interrupted (test)"


# ---------------------------------------------------------------------------- the Z3 engines' phases
@pytest.mark.parametrize("engine", ["bmc", "kind", "pdr"])
def test_a_stop_while_encoding_a_fold_is_unknown_and_the_rest_is_decided(monkeypatch, engine) -> None:
    """The time runs out inside the fold's loop (each time it is encoded): the property that
    sums is `unknown` with the reason, the run returns, and `small`, which needs no fold, is
    decided as before."""
    model = _fold(8)
    after = _raise_in(monkeypatch, "poll", "fold", _limit_passed)
    report = verify(model, engine=engine, depth=6, timeout=600)
    total, small = report.result("total"), report.result("small")
    assert total.verdict is Verdict.UNKNOWN and "timeout" in (total.reason or ""), total
    assert small.verdict in (Verdict.PROVED, Verdict.HOLDS_TO_BOUND), small
    assert "fold" in after  # the fold was polled again, for another formula, and stopped again


@pytest.mark.slow  # runs the real clock to a 1 s timeout; fast: the other stop tests of this file (a clock that has run out)
def test_pdr_honours_the_api_timeout_on_a_large_fold() -> None:
    """3,000 elements: the encoding and the lemma mining took minutes past a 1 s timeout (the
    term's reads overflowed Python's recursion limit on the way); now the run stops at it."""
    model = _fold(3000)
    started = time.monotonic()
    report = verify(model, engine="pdr", timeout=1)
    took = time.monotonic() - started
    assert {r.property: r.verdict for r in report.results} == {
        "total": Verdict.UNKNOWN, "small": Verdict.UNKNOWN, "range": Verdict.UNKNOWN}
    assert all(r.reason and "timeout" in r.reason for r in report.results), report.results
    assert took < HANG


# ---------------------------------------------------------------------------- liveness
CHAIN = """model chain
var x: 0..6000 = 0
var y: 0..1 = 0
fair action inc { require x < 6000; x = x + 1 }
action flip { y = 1 - y }
invariant bounded: x <= 6000
liveness ends: eventually x == 6000
liveness wobbles: always eventually y == 1
"""


@pytest.fixture
def fresh_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A budget of this test alone, with no watchdog: a stop lands only where the test says."""
    monkeypatch.setattr(budget, "_state", budget._State())


def _interrupt() -> None:
    budget.request_stop(budget.INTERRUPTED, "interrupted (test)")


def _wide():  # type: ignore[no-untyped-def]
    """test_compiled_options.py's `wide` corner case, the same text: the same cached numba module,
    which the run compiles for that file (CHAIN compiled was a cold compilation of 3.5 s of CPU)."""
    from tests.unit.test_compiled_options import EXTRA

    return load_source("model t\n" + EXTRA["wide"], "wide.gpspec")


@pytest.mark.parametrize("core, where", [("python", "sccs"), ("compiled", "find")])
def test_a_stop_in_the_liveness_pass_gives_a_partial_report(monkeypatch, fresh_budget, core, where) -> None:
    """SIGINT during the SCC pass (the Python core's own Tarjan on CHAIN; the compiled core
    between its kernels, on `wide`): the safety results stand, each liveness property is
    `unknown`, interrupted."""
    model = load_source(CHAIN, "chain.gpspec") if core == "python" else _wide()
    safety, live = (("bounded", Verdict.PROVED), ("ends", "wobbles")) if core == "python" else (
        ("not_full", Verdict.VIOLATED), ("full",))
    _raise_in(monkeypatch, "check", where, _interrupt)
    with budget.cooperative():
        report = verify(model, core=core)
    assert report.result(safety[0]).verdict is safety[1]
    if core == "compiled":
        assert report.result("one_step").verdict is Verdict.PROVED
    for name in live:
        r = report.result(name)
        assert r.verdict is Verdict.UNKNOWN and r.reason == "interrupted (test)", r


def test_liveness_verdicts_found_before_the_stop_stand(monkeypatch, fresh_budget) -> None:
    """The stop comes in the second property's SCC pass: the first one's verdict stands."""
    from gpcheck.checker.engines.explicit import liveness

    model = load_source(CHAIN, "chain.gpspec")
    passes: list[int] = []
    real = liveness.sccs

    def second_pass_stops(*args: object):  # type: ignore[no-untyped-def]
        passes.append(1)
        if len(passes) == 2:
            _raise_in(monkeypatch, "check", "sccs", _interrupt)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(liveness, "sccs", second_pass_stops)
    with budget.cooperative():
        report = verify(model, core="python")
    assert len(passes) == 2
    assert report.result("ends").verdict is Verdict.PROVED  # decided in the first SCC pass
    r = report.result("wobbles")
    assert r.verdict is Verdict.UNKNOWN and r.reason == "interrupted (test)", r


def test_the_compiled_liveness_passes_in_small_pieces_give_the_same_verdicts(monkeypatch) -> None:
    """The compiled core's graph kernels run in pieces, the budget checked between them (one
    pass over millions of states took tens of seconds with no poll): pieces of a few states
    and SCC steps, so that every kernel stops and resumes many times, change nothing."""
    # specs this run compiles anyway (each new spec is a cold numba compilation of seconds of
    # CPU): the fairness and wide corner cases of test_fast_explicit.py and
    # test_compiled_options.py (the same text, so the same cached module); CHAIN's 6,000 states
    # in 2,000 pieces are `slow`, below
    from tests.unit.test_fast_explicit import SMALL

    models = [load_source("model t\n" + SMALL["fairness"], "fairness.gpspec"), _wide()]
    _same_in_pieces(models, monkeypatch)


@pytest.mark.slow  # cold compilations of cwsr (15 to 30 s of CPU) and CHAIN; fast: the test above (two small specs)
def test_the_compiled_liveness_passes_of_cwsr_in_small_pieces_give_the_same_verdicts(monkeypatch) -> None:
    from gpcheck.spec import load_spec

    _same_in_pieces([load_spec("cwsr"), load_source(CHAIN, "chain.gpspec")], monkeypatch)


def _same_in_pieces(models: list, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each model's compiled run in pieces of 3 states and 5 SCC steps gives the whole run's report."""
    from gpcheck.checker.engines.explicit import fast_explicit
    from gpcheck.checker.api.model_api import run_explicit
    from gpcheck.checker.engines.explicit.explicit import Limits, select_properties

    for model in models:
        wanted = select_properties(model, None)
        whole = run_explicit(model, wanted, Limits(), core="compiled").to_json()
        with monkeypatch.context() as m:
            m.setattr(fast_explicit, "CHUNK_STATES", 3)
            m.setattr(fast_explicit, "SCC_STEPS", 5)
            pieces = run_explicit(model, wanted, Limits(), core="compiled").to_json()
        whole.pop("seconds"), pieces.pop("seconds")
        assert pieces == whole, model.name
        assert any(r["kind"] == "liveness" for r in whole["results"])

"""NOTE(wall-clock-cut): the wall clock only cuts a run short, to `unknown` (reason `timeout`),
never choosing the printed lemmas. The clock is made to run out while a proof closes its
lemma set under induction (where a check given no answer used to fall back on the whole
lemma set, printed as the proof's invariant): the property is `unknown`, `timeout`.

The proofs are those of the example ring.gpspec (about 2 s of CPU each; nvidia_streams' took
6 to 9 s): its for-all proof of no_reexecution and pdr's proofs close their lemma sets too."""

from __future__ import annotations

import time
import types

import pytest

import gpcheck.checker.engines.param.prove as prove
import gpcheck.checker.engines.smt.lemmas as lemmas
import gpcheck.checker.engines.smt.session as session
from gpcheck.checker import Verdict, verify
from gpcheck.checker.api.for_all import verify_for_all


@pytest.fixture
def clock(monkeypatch):
    """The deadlines' clock (checker/engines/smt/session.py), with `run_out()` to jump it an hour on."""
    state = {"offset": 0.0}
    fake = types.SimpleNamespace(monotonic=lambda: time.monotonic() + state["offset"])
    monkeypatch.setattr(session, "time", fake)

    def run_out() -> None:
        state["offset"] = 3600.0

    return run_out


def _ring_for_all(examples):
    return verify_for_all(examples / "ring.gpspec", ["N", "B"], {"N": 1, "B": 1}, properties=["no_reexecution"],
                          timeout=600)


def test_for_all_a_proof_the_clock_cuts_while_closing_its_lemmas_is_unknown(examples, monkeypatch, clock):
    close = prove._close
    calls = []

    def close_late(*args, **kw):
        calls.append(1)
        clock()  # the time limit runs out now
        return close(*args, **kw)

    monkeypatch.setattr(prove, "_close", close_late)
    r = _ring_for_all(examples).result("no_reexecution")
    assert calls, "the proof no longer closes its lemma set: the test must cut elsewhere"
    assert r.verdict is Verdict.UNKNOWN, r
    assert r.reason.startswith("timeout"), r.reason


def test_for_all_without_the_cut_the_same_run_is_proved(examples, monkeypatch, clock):
    """The control: the fake clock alone changes nothing."""
    r = _ring_for_all(examples).result("no_reexecution")
    assert r.verdict is Verdict.PROVED and r.detail["lemmas"] >= 1, r


def test_pdr_a_proof_the_clock_cuts_while_closing_its_lemmas_is_unknown(examples, monkeypatch, clock):
    closed = lemmas.closed_core
    calls = []

    def closed_late(*args, **kw):
        calls.append(1)
        clock()
        return closed(*args, **kw)

    monkeypatch.setattr(lemmas, "closed_core", closed_late)
    rep = verify(examples / "ring.gpspec", engine="pdr", timeout=600)
    assert calls, "pdr no longer closes its lemma sets: the test must cut elsewhere"
    # the first property's proof was cut, and the clock had run out for the rest
    assert all(r.verdict is Verdict.UNKNOWN for r in rep.results), [(r.property, r.verdict) for r in rep.results]
    assert rep.results[0].reason.startswith("timeout"), rep.results[0].reason

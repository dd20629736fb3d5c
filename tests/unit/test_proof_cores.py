"""Proof cores (NOTE(proof-core) in checker/engines/smt/proofcore.py): every SMT proof names the
declared assumptions its inductive argument used, and none when it used none, on each path:
kind's k-induction (k = 1 relative to the auxiliary invariants, and k > 1 without them), pdr's
relative induction, its reachable-set certificate and Spacer."""

from __future__ import annotations

import pytest

from gpcheck.checker import verify
from gpcheck.checker.api.assumptions import CORE_HOW
from gpcheck.checker.engines.smt import kind, pdr
from gpcheck.checker.engines.smt.encode import bv_encoder
from gpcheck.checker.engines.smt.props import safety_properties
from gpcheck.checker.engines.smt.session import Deadline
from gpcheck.checker.core.verdict import Verdict
from gpcheck.spec import load_source

# held-back style: a save that is a copy only by assumption; `in_bounds` and `saved_ok` follow
# from the types alone, `no_loss` needs copy_save, `done_full` the finite workload
SAVE = """
model save "a save that is a copy only by assumption"
enum W { Run, Saved, Done }
const MAX = 3
var ws: W = Run
var ops: 0..MAX = 0
var sv: 0..MAX = 0
assume copy_save: ws' == Saved and ws != Saved implies sv' == ops
action work { require ws == Run and ops < MAX; ops = ops + 1 }
action save(v: 0..MAX) { require ws == Run; ws = Saved; sv = v }
action restore { require ws == Saved; ws = Run; ops = sv }
action finish { require assume finite: ops == MAX; require ws == Run; ws = Done }
invariant no_loss: ws == Saved implies sv == ops
invariant in_bounds: ops <= MAX
invariant done_full: ws == Done implies ops == MAX
invariant saved_ok: ws == Saved implies sv <= MAX
transition restore_exact: ws == Saved and ws' == Run implies ops' == sv
allow deadlock
"""

EXPECTED = {"no_loss": ("copy_save",), "in_bounds": (), "done_full": ("finite",), "saved_ok": (),
            "restore_exact": (), "range": ()}


def _check(rep, reason: str) -> None:
    res = {r.property: r for r in rep.results}
    for name, used in EXPECTED.items():
        r = res[name]
        assert r.verdict is Verdict.PROVED, (name, r.reason)
        assert reason in r.reason, (name, r.reason)
        assert r.assumptions == used, (name, r.assumptions)
        assert r.detail["assumptions_how"] == CORE_HOW  # the core, not a run without each assumption


def test_kind_names_the_assumptions_its_induction_used():
    _check(verify(load_source(SAVE), engine="kind"), "inductive")


def test_pdr_relative_induction_names_its_core():
    _check(verify(load_source(SAVE), engine="pdr"), "lemmas mined")


def test_pdr_certificate_names_its_core(monkeypatch):
    """The reachable-set certificate needs copy_save (a relaxed save leaves the set); a
    property whose argument survives without it (relative to the lemmas that do) names none."""
    monkeypatch.setattr(pdr, "_by_lemmas", lambda *a, **k: None)
    _check(verify(load_source(SAVE), engine="pdr"), "explicit reachable states")


def test_pdr_spacer_names_its_core(monkeypatch):
    monkeypatch.setattr(pdr, "_by_lemmas", lambda *a, **k: None)
    monkeypatch.setattr(pdr, "_by_certificate", lambda *a, **k: None)
    _check(verify(load_source(SAVE), engine="pdr"), "Spacer")


# `late <= 2` is 2-inductive (late is the previous value of `now`, which only an assumed step
# keeps small); `echo <= 1` is 2-inductive from the code alone
CHAIN = """
model chain "two-step delays"
var now: 0..3 = 0
var late: 0..3 = 0
var flip: 0..3 = 0
var echo: 0..3 = 0
action step(v: 0..3) {
    require assume small: v <= 2
    late = now
    now = v
    echo = flip
    flip = if flip == 0 then 1 else 0
}
invariant late_small: late <= 2
invariant echo_small: echo <= 1
allow deadlock
"""


def test_kind_core_at_k_two_without_auxiliary_invariants():
    model = load_source(CHAIN)
    props = safety_properties(model, ["late_small", "echo_small"])
    res = {r.property: r for r in kind.run_kind(model, props, max_k=5, deadline=Deadline(None),
                                                 enc=bv_encoder(model), auxiliary=False)}
    assert res["late_small"].verdict is Verdict.PROVED and res["late_small"].detail["k"] == 2
    assert res["late_small"].detail["assumption_core"] == ["small"]
    assert res["echo_small"].verdict is Verdict.PROVED and res["echo_small"].detail["k"] == 2
    assert res["echo_small"].detail["assumption_core"] == []


def test_without_the_assumption_the_core_is_not_a_guess():
    """The same spec without `assume copy_save` violates no_loss: the core named an assumption
    the property really rests on."""
    loose = SAVE.replace("assume copy_save: ws' == Saved and ws != Saved implies sv' == ops\n", "")
    res = {r.property: r for r in verify(load_source(loose), engine="pdr").results}
    assert res["no_loss"].verdict is Verdict.VIOLATED


NEVER_BLOCKS = """
model idle "an assumption that never blocks a step (gp_hip_suspend's daemon_polled at DAEMON_FIRST=0)"
const FIRST = 0
var x: 0..3 = 0
var seen: bool = false
action up { require assume polled: FIRST == 0 or seen; require x < 3; x = x + 1 }
action see { require not seen; seen = true }
invariant small: x <= 3
transition rises: x' >= x
allow deadlock
"""


def test_a_run_without_an_assumption_that_never_blocks_is_skipped(monkeypatch):
    """NOTE(assumption-use): the model without `polled` has the same state graph, so its run is
    skipped (the same results); with FIRST=1 the assumption blocks steps and the run happens."""
    from gpcheck.checker.api import model_api as api

    calls = []
    real = api.run_explicit
    monkeypatch.setattr(api, "run_explicit", lambda m, *a, **k: calls.append(len(m.assumptions)) or real(m, *a, **k))
    rep = verify(load_source(NEVER_BLOCKS), core="python")
    assert calls == [1] and rep.result("small").assumptions == () and rep.result("rises").assumptions == ()
    calls.clear()
    rep = verify(load_source(NEVER_BLOCKS.replace("const FIRST = 0", "const FIRST = 1")), core="python")
    assert calls == [1, 0] and rep.result("small").assumptions == ()


# deadlock freedom rests on `careful` (without it `stuck` is reachable and nothing is enabled
# there); `no_escape` blocks the way out of `stuck`: dropping it removes that deadlock, which must
# not make the proof look as if it needed nothing (a deadlock is the model's own, every guard in force)
DEADLOCK = """
model stuck "deadlock freedom resting on an assumption"
var x: 0..2 = 0
var stuck: bool = false
action escape { require assume no_escape: false; require stuck; stuck = false }
action go(v: 0..1) { require assume careful: v == 0; require x < 2 and not stuck; x = x + 1; stuck = v == 1 }
action back { require x == 2 and not stuck; x = 0 }
"""


@pytest.mark.parametrize("engine", ["explicit", "kind", "pdr"])
def test_a_deadlock_proof_core_keeps_the_models_own_deadlocks(engine):
    rep = verify(load_source(DEADLOCK), engine=engine, properties=["deadlock"])
    r = rep.result("deadlock")
    assert r.verdict is Verdict.PROVED and r.assumptions == ("careful",), (r.assumptions, r.reason)
    if engine != "explicit":
        assert r.detail["assumptions_how"] == CORE_HOW

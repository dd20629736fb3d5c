"""pdr's proposals from explicit states: mined lemmas (Houdini) and the reachable-set
certificate. The states only propose; Z3 decides; the printed invariants re-check."""

from __future__ import annotations

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.engines.smt import pdr
from gpcheck.checker.engines.smt.encode import Encoder
from gpcheck.checker.engines.smt.lemmas import _Checker, _successors, houdini
from gpcheck.checker.engines.smt.mining import Atom
from gpcheck.checker.engines.smt.session import Deadline
from gpcheck.gpmodel import compile_model
from gpcheck.spec import load_source

COUNTER = """model c
var x: 0..5 = 0
var y: 0..5 = 0
action inc { require x < 5
  x = x + 1
  y = y + 1 }
allow deadlock
invariant same: x == y
"""


def test_houdini_drops_what_fails_initially_or_is_not_inductive():
    model = load_source(COUNTER, "c.gpspec")
    system = pdr._System(Encoder(model))
    x, y = 0, 1
    atoms = [Atom((), "le", ((-1, x), (1, y)), 0),   # y <= x: inductive
             Atom((), "le", ((-1, x),), -1),         # x >= 1: false initially
             Atom((), "le", ((1, x),), 3)]           # x <= 3: not inductive
    ck = _Checker(system, atoms, 0)
    kept = houdini(ck, [0, 1, 2], Deadline(30), _successors(compile_model(model)))
    assert kept == [0]


@pytest.mark.slow  # fast: test_step_limits.py::test_pdr_proves_the_same_under_a_slow_clock (ring's pdr lemmas re-checked explicitly)
def test_pdr_lemma_invariant_rechecks_in_the_explicit_engine(examples):
    src = (examples / "ring.gpspec").read_text()
    r = verify(examples / "ring.gpspec", engine="pdr", properties=["no_reexecution"], timeout=60).result("no_reexecution")
    assert r.verdict is Verdict.PROVED
    inv = r.detail["invariant"]
    lemmas = [line.removeprefix("and ").strip() for line in inv.split("\n")]
    extra = "".join(f"\ninvariant mined_{i}: {t}" for i, t in enumerate(lemmas))
    report = verify(load_source(src + extra, "mined.gpspec"))
    assert all(report.result(f"mined_{i}").verdict is Verdict.PROVED for i in range(len(lemmas)))


def test_certificate_proves_and_refutes_with_a_replayed_counterexample(monkeypatch, examples):
    """The reachable set decides: a certificate proves in_order, and no_reexecution is refuted
    with a counterexample (rewind: 326 states, under 1 s of CPU; reef_rewind's untimed abstraction,
    33 s, is the slow test below)."""
    from gpcheck.checker.engines.smt.lemmas import LemmaProver

    monkeypatch.setattr(LemmaProver, "usable", property(lambda self: False))  # the reachable set decides
    report = verify(examples / "rewind.gpspec", engine="pdr", properties=["in_order", "no_reexecution"], timeout=120)
    proved = report.result("in_order")
    assert proved.verdict is Verdict.PROVED and "explicit reachable states" in proved.reason, proved
    bad = report.result("no_reexecution")
    assert bad.verdict is Verdict.VIOLATED and bad.counterexample is not None, bad


@pytest.mark.slow  # 33 s of CPU cold; fast: test_certificate_proves_and_refutes_with_a_replayed_counterexample
def test_certificate_of_a_timed_models_untimed_abstraction(monkeypatch):
    from gpcheck.checker.engines.smt.lemmas import LemmaProver

    from gpcheck.checker import load
    from gpcheck.checker.api.timed_abstraction import untimed

    monkeypatch.setattr(LemmaProver, "usable", property(lambda self: False))  # the reachable set decides
    # reef_rewind is timed: pdr's own certificate and counterexample are those of its untimed
    # abstraction (on the timed spec the first counterexample may need a forbidden timing: unknown)
    report = verify(untimed(load("reef_rewind")), engine="pdr", properties=["no_loss", "ring_kept"], timeout=120)
    proved = report.result("no_loss")
    assert proved.verdict is Verdict.PROVED and "explicit reachable states" in proved.reason
    bad = report.result("ring_kept")
    assert bad.verdict is Verdict.VIOLATED and bad.counterexample is not None


def test_a_partial_sample_proves_nothing_false(monkeypatch, examples):
    """A state limit leaves the sample incomplete: no certificate, and lemmas from the partial
    sample must still be proved inductive, so a violated property is never proved. N=2 (the
    default N=4 took 16 s of CPU), and no clock: pdr's own step limits end it (NOTE(step-limits));
    a 60 s timeout made it unknown on a loaded machine."""
    monkeypatch.setattr(pdr, "MAX_SAMPLE", 20)
    report = verify(examples / "rewind.gpspec", engine="pdr", properties=["no_reexecution"], consts={"N": 2})
    r = report.result("no_reexecution")
    assert r.verdict is Verdict.VIOLATED, r
    assert r.detail["lemmas"]["sample_complete"] is False


def test_atom_table_agrees_with_atom_holds():
    """The numpy evaluation Houdini uses gives Atom.holds' answer on every atom and state."""
    import random

    import numpy as np

    from gpcheck.checker.engines.smt.mining import AtomTable

    rng = random.Random(7)
    atoms = []
    for _ in range(400):
        cond = tuple((rng.randrange(5), rng.randrange(4)) for _ in range(rng.randrange(3)))
        if rng.random() < 0.3:
            atoms.append(Atom(cond, "ne", ((1, rng.randrange(5)),), rng.randrange(4)))
        else:
            terms = tuple((rng.choice((1, -1)), rng.randrange(5)) for _ in range(rng.randrange(1, 3)))
            atoms.append(Atom(cond, "le", terms, rng.randrange(-4, 6)))
    states = [tuple(rng.randrange(4) for _ in range(5)) for _ in range(60)]
    table = AtomTable(atoms)
    which = np.arange(len(atoms))
    arr = np.asarray(states)
    assert table.holds_all(arr, which).tolist() == [all(a.holds(s) for s in states) for a in atoms]
    assert table.rows_satisfying(arr, which).tolist() == [all(a.holds(s) for a in atoms) for s in states]


def test_houdini_exploring_from_counterexamples_keeps_the_same_fixpoint(examples):
    """Dropping candidates along the states a counterexample to induction leads to (and its
    mutants that satisfy every candidate) is exact: the same largest inductive subset. On rewind
    at N=2 (59 states, 134 candidates, 88 kept; blp's 333 states took 1.9 s of CPU)."""
    from gpcheck.checker.engines.smt import lemmas as lem
    from gpcheck.checker.engines.smt.mining import mine_atoms, sample_states
    from gpcheck.spec import load_spec

    model = load_spec(examples / "rewind.gpspec", {"N": 2})
    system = pdr._System(Encoder(model))
    cm = compile_model(model)
    states, complete = sample_states(cm, 10_000, Deadline(60))
    assert complete
    mined = mine_atoms(system.enc.slots, states, lem.MAX_CANDIDATES, max_conditions=1)
    plain = houdini(_Checker(system, mined, 0), list(range(len(mined))), Deadline(60), _successors(cm))
    fast = houdini(_Checker(system, mined, 0), list(range(len(mined))), Deadline(60), _successors(cm),
                   known=set(states), forward=lem.FORWARD_STATES)
    assert plain is not None and fast is not None and len(plain) < len(mined)
    assert plain == fast


def test_pdr_reports_each_propertys_own_and_shared_seconds(examples):
    # ring with two kernels of one wave (0.4 s of CPU; at its defaults 1.3 s, nvidia_streams twice that)
    report = verify(examples / "ring.gpspec", engine="pdr", timeout=120, consts={"N": 2, "B": 1})
    checked = [r for r in report.results if r.kind in ("invariant", "transition")]
    assert checked and all(r.verdict is Verdict.PROVED for r in checked)
    shared = {r.detail["shared_seconds"] for r in checked}
    assert len(shared) == 1 and shared.pop() > 0
    assert all(r.detail["seconds"] >= 0 for r in checked)
    assert "explore_seconds" in checked[0].detail["lemmas"]


def test_the_certificate_holds_only_for_a_closed_set():
    """Consecution is checked one action path at a time: a set missing one reachable state (or
    the initial one) is not inductive; the whole reachable set is, under any slot order."""
    from gpcheck.checker.engines.smt.mining import sample_states
    from gpcheck.checker.engines.smt.reachset import ReachCertificate

    model = load_source(COUNTER, "c.gpspec")
    system = pdr._System(Encoder(model))
    states, complete = sample_states(compile_model(model), 100, Deadline(None))
    assert complete and len(states) == 6
    assert ReachCertificate(system, states, Deadline(None)).inductive
    assert not ReachCertificate(system, states[:3] + states[4:], Deadline(None)).inductive  # (3, 3) missing
    assert not ReachCertificate(system, states[1:], Deadline(None)).inductive  # no initial state


def test_slot_order_makes_a_smaller_diagram_of_the_same_set():
    """`y1 == x1 and y2 == x2` laid out as x1, x2, y1, y2 is the textbook bad order (every
    (x1, x2) prefix its own node); the greedy order puts each copy after its original: fewer
    nodes, and the diagram still holds in exactly the given states."""
    import itertools

    import z3

    from gpcheck.checker.engines.smt.reachset import slot_order, state_set_formula

    src = "model m\nvar x1: 0..3 = 0\nvar x2: 0..3 = 0\nvar y1: 0..3 = 0\nvar y2: 0..3 = 0\nallow deadlock\n"
    enc = Encoder(load_source(src, "m.gpspec"))
    s = enc.state(0)
    states = [(a, b, a, b) for a in range(4) for b in range(4)]
    order = slot_order(states)
    assert order == [0, 2, 1, 3]
    plain, n_plain = state_set_formula(enc.slots, s, states)
    f, n = state_set_formula([enc.slots[i] for i in order], [s[i] for i in order],
                             [tuple(st[i] for i in order) for st in states])
    assert (n_plain, n) == (25, 10)
    solver = z3.Solver()  # one solver, each state as assumptions (a solver per state: 1.5 s of CPU)
    solver.add(f)
    for st in itertools.product(range(4), repeat=4):
        assert (solver.check(*(s[i] == st[i] for i in range(4))) == z3.sat) == (st in states)


def test_a_houdini_that_cannot_finish_in_its_steps_is_not_started():
    """NOTE(hopeless-houdini): candidates x action paths x the fewest steps per cell over the
    budget: no Z3 step is spent and no lemma is kept (as when Houdini runs out); with steps
    enough, the same candidates give lemmas."""
    from gpcheck.checker.engines.smt.lemmas import HOUDINI_MIN_STEPS_PER_CELL, LemmaProver
    from gpcheck.checker.engines.smt.mining import sample_states
    from gpcheck.checker.engines.smt.session import steps_used

    model = load_source(COUNTER, "c.gpspec")
    system = pdr._System(Encoder(model))
    cm = compile_model(model)
    states, _ = sample_states(cm, 100, Deadline(None))
    full = LemmaProver(system, cm, states, Deadline(None))
    assert full.usable and full.stats["lemmas"] > 0 and "houdini_skipped" not in full.stats
    need = full.stats["candidates"] * HOUDINI_MIN_STEPS_PER_CELL  # one action path
    before = steps_used()
    skipped = LemmaProver(system, cm, states, Deadline(None).limited(need - 1))
    assert steps_used() == before
    assert not skipped.usable and skipped.stats["lemmas"] == 0 and "need at least" in skipped.stats["houdini_skipped"]
    assert LemmaProver(system, cm, states, Deadline(None).limited(need * 1000)).usable

"""Assumptions (`assume`, `require assume`), covers and vacuity (NOTE(assumptions) in spec/ir.py,
NOTE(covers), NOTE(vacuity), NOTE(assumption-use) in checker/api/assumptions.py), through every engine."""

from __future__ import annotations

import functools
import json

import pytest

from gpcheck.checker import Report, verify
from gpcheck.checker.core.verdict import Verdict
from gpcheck.spec import load_source
from gpcheck.spec.errors import SpecError

SAVE = """
model save "a save that is a copy only by assumption"
enum W { Run, Saved, Done }
const MAX = 3
var ws: W = Run
var ops: 0..MAX = 0
var sv: 0..MAX = 0
var slack: 0..2 = any
assume small_slack: slack <= 1
assume copy_save: ws' == Saved and ws != Saved implies sv' == ops
action work { require ws == Run and ops < MAX; ops = ops + 1 }
action save(v: 0..MAX) { require ws == Run; ws = Saved; sv = v }
action restore { require ws == Saved; ws = Run; ops = sv }
action finish { require assume finite: ops == MAX; require ws == Run; ws = Done }
invariant no_loss: ws == Saved implies sv == ops
invariant slack_ok: slack <= 1
invariant in_bounds: ops <= MAX
invariant done_full: ws == Done and ops < MAX implies false
invariant saved_ok: ws == Saved implies sv <= MAX
cover saved_full: ws == Saved and ops == MAX
cover done_early: ws == Done and ops == 0
allow deadlock
"""


def _results(report):
    return {r.property: r for r in report.results}


@functools.lru_cache(maxsize=None)
def _save_run(options: tuple[tuple[str, object], ...]) -> Report:
    return verify(load_source(SAVE), **dict(options))


def _save(**options: object) -> Report:
    """verify(SAVE) with `options`, run once per module and set of options: several tests read
    the same report (readers do not change a Report)."""
    return _save_run(tuple(sorted(options.items())))


@pytest.mark.parametrize("engine", ["explicit", "kind", "pdr"])
def test_a_proof_names_the_assumptions_it_used_and_none_when_it_needs_none(engine):
    rep = _save(engine=engine)
    res = _results(rep)
    assert res["no_loss"].verdict is Verdict.PROVED and res["no_loss"].assumptions == ("copy_save",)
    assert res["slack_ok"].assumptions == ("small_slack",)
    assert res["in_bounds"].verdict is Verdict.PROVED
    # pdr's proof is relative to the mined lemmas, one of which needs copy_save; the proof core
    # keeps only what in_bounds' own argument needs (NOTE(proof-core))
    assert res["in_bounds"].assumptions == ()
    assert res["done_full"].assumptions == ("finite",)
    assert rep.assumptions == ["small_slack", "copy_save", "finite"]
    if engine != "explicit":  # an inductive proof names its proof core (NOTE(proof-core))
        assert res["no_loss"].detail["assumptions_how"].startswith("proof core")
        assert "assumption_core" not in res["no_loss"].detail


@pytest.mark.parametrize("engine", ["explicit", "kind", "pdr"])
def test_a_cover_is_reached_with_a_witness_or_proved_unreachable(engine):
    res = _results(_save(engine=engine))
    reached = res["saved_full"]
    assert reached.kind == "cover" and reached.verdict is Verdict.REACHED
    last = reached.counterexample.steps[-1].state
    assert last["ws"] == "Saved" and last["ops"] == 3
    never = res["done_early"]
    assert never.verdict is Verdict.UNREACHABLE and never.assumptions == ("finite",)
    assert reached.assumptions == ("small_slack", "copy_save", "finite")  # in force


def test_bmc_reaches_a_cover_and_leaves_an_unreached_one_unknown():
    res = _results(_save(engine="bmc", depth=6))
    assert res["saved_full"].verdict is Verdict.REACHED
    assert res["done_early"].verdict is Verdict.UNKNOWN and "not reached within" in res["done_early"].reason


@pytest.mark.parametrize("engine", ["explicit", "kind", "pdr"])
def test_a_vacuous_implication_is_flagged_and_a_live_one_is_not(engine):
    res = _results(_save(engine=engine))
    assert "antecedent" in res["done_full"].vacuous and "bound" not in res["done_full"].vacuous
    assert res["no_loss"].vacuous is None and res["saved_ok"].vacuous is None
    assert res["in_bounds"].vacuous is None


def test_bmc_flags_vacuity_up_to_its_bound():
    """bmc proves no probe unreachable: an antecedent not reached within its bound makes the
    property hold to that bound vacuously, and the warning says it is the bound's (issue 30)."""
    res = _results(_save(engine="bmc", depth=6))
    assert res["done_full"].verdict is Verdict.HOLDS_TO_BOUND
    assert "antecedent" in res["done_full"].vacuous and "within the bound checked (6 steps" in res["done_full"].vacuous
    assert res["no_loss"].vacuous is None and res["saved_ok"].vacuous is None


def test_the_assumptions_restrict_the_behaviours_like_guards():
    """Without the assumption the copy can fail: dropping it is a different model."""
    loose = SAVE.replace("assume copy_save: ws' == Saved and ws != Saved implies sv' == ops\n", "")
    res = _results(verify(load_source(loose)))
    assert res["no_loss"].verdict is Verdict.VIOLATED
    assert res["no_loss"].assumptions == ("small_slack", "finite")  # in force
    strict = _results(_save())
    assert strict["no_loss"].verdict is Verdict.PROVED


def test_a_state_assumption_filters_initial_states():
    from gpcheck.gpmodel import compile_model

    cm = compile_model(load_source(SAVE))
    assert sorted(s[3] for s in cm.initial_states()) == [0, 1]  # slack = 2 is assumed away


LEADS = """
model leads "leads_to and latency vacuity"
var x: 0..3 = 0
var trig: bool = false
action up time 1 { require x < 3; x = x + 1 }
fair action up
liveness never_triggered: trig leads_to x == 3
liveness triggered: x == 1 leads_to x == 3
latency no_start: from trig to x == 3
latency starts: from x == 1 to x == 3
terminal: x == 3
"""


@pytest.mark.parametrize("engine", ["explicit", "bmc", "kind", "pdr"])
def test_leads_to_and_latency_vacuity(engine):
    """Every engine warns (issue 30); bmc, kind and pdr decide the probes on the untimed
    abstraction and leave the liveness and latency results themselves unknown."""
    res = _results(verify(load_source(LEADS), engine=engine, depth=6))
    assert "trigger never happens" in res["never_triggered"].vacuous
    assert res["triggered"].vacuous is None
    assert "no behaviour starts" in res["no_start"].vacuous
    assert res["starts"].vacuous is None
    if engine == "explicit":
        assert all(r.assumptions == () for r in res.values())


def test_an_assumption_that_leaves_no_behaviour_makes_every_result_vacuous():
    spec = "model empty \"x\"\nvar x: 0..3 = 0\nassume never: x > 0\naction up { require x < 3; x = x + 1 }\n" \
           "invariant small: x <= 3\nallow deadlock\n"
    res = _results(verify(load_source(spec)))
    assert "no initial state" in res["small"].vacuous
    ok = spec.replace("x > 0", "x >= 0")
    assert _results(verify(load_source(ok)))["small"].vacuous is None


def test_covers_do_not_change_the_exit_code_unless_expected():
    rep = _save()
    assert rep.exit_code == 0  # one cover reached, one unreachable
    from gpcheck.checker.regression.expectations import judge

    model = load_source(SAVE + "expect done_early: reached\nexpect saved_full: reached\n")
    j = judge(model, verify(model))
    assert j.exit_code == 1 and [s[0] for s in j.surprises] == ["done_early"]


def test_json_and_text_reports_carry_assumptions_and_vacuity():
    from gpcheck.checker.report.render import render_text

    rep = _save()
    doc = json.loads(json.dumps(rep.to_json()))
    by = {r["property"]: r for r in doc["results"]}
    assert by["no_loss"]["assumptions"] == ["copy_save"] and by["in_bounds"]["assumptions"] == []
    assert "vacuous" in by["done_full"] and "vacuous" not in by["no_loss"]
    assert by["saved_full"]["verdict"] == "reached" and by["done_early"]["verdict"] == "unreachable"
    text = render_text(rep, width=160)
    assert "assumptions" in text and "none" in text
    assert "warning: done_full holds vacuously" in text and "witness for cover saved_full" in text


def test_a_model_without_assumptions_reports_empty_lists():
    spec = "model plain \"x\"\nvar x: 0..3 = 0\naction up { require x < 3; x = x + 1 }\ninvariant small: x <= 3\n" \
           "allow deadlock\n"
    rep = verify(load_source(spec))
    assert rep.result("small").assumptions == () and rep.assumptions == []


@pytest.mark.parametrize("text,where,what", [
    ("assume a: x >= 0\nassume a: x <= 3\n", (4, 1), "already declared"),
    ("cover c: x' == 1\n", (3, 10), "primed expression"),
    ("assume g: x >= 0\naction b { require assume g: x == 0; x = 1 }\n", (4, 12), "already declared"),
    ("assume s: x\n", (3, 11), "expected a bool"),
])
def test_bad_assumptions_and_covers_are_located_errors(text, where, what):
    spec = "model bad \"x\"\nvar x: 0..3 = 0\n" + text + "allow deadlock\n"
    with pytest.raises(SpecError) as err:
        load_source(spec, file="bad.gpspec")
    shown = err.value.render() if hasattr(err.value, "render") else str(err.value)
    assert what in shown and f"bad.gpspec:{where[0]}:{where[1]}" in shown


def test_a_step_assumption_over_arrays_snapshots_the_pre_state():
    spec = """
model arr "array step assumption"
const N = 2
var a: [0..N-1] -> 0..3 = 0
var b: [0..N-1] -> 0..3 = 0
action set(i: 0..N-1, v: 0..3) { b[i] = v; a[i] = v }
assume monotone: all k in 0..N-1: a[k]' >= a[k]
assume keep: a' == b'
invariant never_down: all k in 0..N-1: a[k] == b[k]
allow deadlock
"""
    for engine in ("explicit", "pdr"):
        res = _results(verify(load_source(spec), engine=engine))
        assert res["never_down"].verdict is Verdict.PROVED and res["never_down"].assumptions == ()
    from gpcheck.gpmodel import compile_model

    cm = compile_model(load_source(spec))
    s0 = cm.initial_states()[0]
    nxt = {t for _, t in cm.successors(s0)}
    assert all(all(x >= 0 for x in t) for t in nxt) and len(nxt) == 7  # the initial state again, and 1..3 in either slot
    up = next(t for t in nxt if t[0] == 2)
    assert all(t2[0] >= 2 for _, t2 in cm.successors(up))  # a[0] never goes down


def test_cwsr_exactly_once_rests_on_the_copy_save_assumption():
    """The acceptance of issue 30 at a small instance (Q=1): `verify cwsr` names copy_save on
    no_reexecution and no_loss."""
    rep = verify("cwsr", consts={"Q": 1}, properties=["no_reexecution", "no_loss", "ring_kept"], core="python")
    res = _results(rep)
    assert res["no_reexecution"].assumptions == ("copy_save",)
    assert res["no_loss"].assumptions == ("copy_save",)
    assert res["ring_kept"].assumptions == ()


def test_nvidia_tsg_exactly_once_rests_on_its_copy_save():
    """nvidia_tsg's CILP save is a copy by assumption (`switch(lose)`, `require assume copy_save`):
    no_reexecution and no_loss name it, and without it a switch that loses the resident blocks'
    progress breaks no_loss (the assumption is what the proof rests on, not decoration). With a
    block longer than a timeslice (BLEN=3 > TS=2): in the timed model at the defaults (BLEN = TS)
    every slice ends as its blocks do, nothing is resident mid-way at a switch, and the proofs
    need no assumption (that run's assumptions are rightly none). One block per kernel (NB=1) is
    enough for a resident block mid-way at a switch (NB=2: 10 s of CPU, NB=1: 0.5 s)."""
    from gpcheck.checker.api.assumptions import without
    from gpcheck.spec import load_spec

    at_defaults = _results(verify("nvidia_tsg", properties=["no_loss"], core="python"))
    assert at_defaults["no_loss"].verdict is Verdict.PROVED and at_defaults["no_loss"].assumptions == ()
    long_blocks = {"BLEN": 3, "NB": 1}
    rep = verify("nvidia_tsg", properties=["no_reexecution", "no_loss", "ring_kept"], consts=long_blocks, core="python")
    res = _results(rep)
    assert res["no_reexecution"].assumptions == ("copy_save",) and res["no_loss"].assumptions == ("copy_save",)
    assert res["ring_kept"].assumptions == ()
    loose = verify(without(load_spec("nvidia_tsg", long_blocks), "copy_save"), properties=["no_loss"], core="python")
    assert loose.result("no_loss").verdict is Verdict.VIOLATED


@pytest.mark.long
def test_the_compiled_core_honours_the_assumptions_as_guards():
    """The compiled explicit core reads the assumptions' guards from the IR like any guard: the
    same states, verdicts and assumptions as the Python core (numba compiles each variant)."""
    py = verify(load_source(SAVE), core="python")
    compiled = verify(load_source(SAVE), core="compiled")
    assert compiled.states == py.states == 36
    for a, b in zip(py.results, compiled.results):
        assert (a.property, a.verdict, a.assumptions, a.vacuous) == (b.property, b.verdict, b.assumptions, b.vacuous)


def test_the_library_matrix_has_an_assumptions_column_and_lists_what_rests_on_each():
    from gpcheck.checker.regression.library import Cell, LibraryReport, ModelRow, render_matrix

    cells = [Cell("m", "no_loss", "invariant", Verdict.PROVED, "explicit", assumptions=("copy_save",), expected="proved"),
             Cell("m", "no_reexecution", "invariant", Verdict.PROVED, "explicit", assumptions=(), expected="proved"),
             Cell("m", "lost", "invariant", Verdict.PROVED, "explicit", assumptions=(), vacuous="never", expected="proved"),
             Cell("m", "reset", "cover", Verdict.UNREACHABLE, "explicit", assumptions=(), expected="unreachable")]
    rep = LibraryReport("explicit", [ModelRow("m", "d", {}, cells, 10, 0.1, assumptions=("copy_save",))])
    text = render_matrix(rep, width=200)
    assert "assumptions" in text.splitlines()[1]
    assert "m: copy_save: no_loss" in text and "m: lost holds vacuously: never" in text
    assert "reset unreachable" in text and rep.ok
    row = rep.to_json()["models"][0]
    assert row["assumptions"] == ["copy_save"] and row["results"][0]["assumptions"] == ["copy_save"]

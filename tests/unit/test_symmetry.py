"""Symmetric types and symmetry reduction (NOTE(symmetry) in spec/ir.py; issue 13 item 4).

- the type checker rejects, with a located error, every construct that tells values of a
  symmetric type apart, and accepts the ones that keep the permutations automorphisms;
- canonical forms are exact: the reduced search visits one state per orbit of the reachable
  states (counted by brute force over every permutation);
- verdicts and shortest counterexample lengths equal the unreduced search on random symmetric
  specs (tests/quality/symgen.py) and on the bundled models marked symmetric, and every
  counterexample of the reduced search replays through the interpreter and through the
  independent reference semantics;
- liveness is refused under reduction (`on`) and checked unreduced (`auto`);
- reports say the count is reduced (text and JSON), and the command's flag works."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import pytest

from gpcheck.checker import verify
from gpcheck.checker.api.model_api import _symmetry_choice, run_explicit
from gpcheck.checker.cli.command import main
from gpcheck.checker.engines.explicit.explicit import Limits, search, select_properties
from gpcheck.checker.core.verdict import Verdict
from gpcheck.checker.engines.smt.witness import check_witness
from gpcheck.gpmodel import compile_model
from gpcheck.gpmodel.symmetry import Symmetry
from gpcheck.checker.engines.timed import untimed
from gpcheck.spec import SpecError, load_source, load_spec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "quality"))
from symgen import sym_spec  # noqa: E402

HEAD = "model m\nconst K = 3\nsymmetric P = 0..K-1\n"
# cwsr at its former defaults (one queue, three dispatches of two waves): the sizes these tests were
# measured at; the model now defaults to two queues
OLD = {"Q": 1, "N": 3, "W": 2, "L": 3}

# (source after HEAD, message fragment, line, column): each breaks the symmetry of P
BAD = [
    ("var a: [P] -> bool = false\ninvariant i: a[0]\n", "indexed by a value of the symmetric type P; the index is an integer", 5, 16),
    ("var a: [0..2] -> bool = false\naction f(p: P) { a[p] = true }\n", "indexed by an integer; the index is a value of the symmetric type P", 5, 20),
    ("var o: P = any\ninvariant i: o == 1\n", "'==' compares a value of the symmetric type P with an integer", 5, 14),
    ("var o: P = any\naction f(p: P) { require p < o }\n", "'<' on a value of the symmetric type P", 5, 26),
    ("var x: 0..5 = 0\naction f(p: P) { x = p + 1 }\n", "'+' on a value of the symmetric type P", 5, 22),
    ("var x: 0..5 = 0\naction f(p: P) { x = p }\n", "cannot assign a value of the symmetric type P to a target holding an integer", 5, 22),
    ("var o: P = 0\n", "the initial value of 'o' singles out values of the symmetric type P", 4, 1),
    ("var a: [P] -> 0..1 = [0, 1, 0]\n", "the initial value of 'a' singles out", 4, 1),
    ("var o: P = any\ninvariant i: (sum p in P: p) > 0\n", "'sum' of values of the symmetric type P", 5, 27),
    ("var a: [P] -> bool = false\naction f(q: P) { for p in P { a[q] = a[p] } }\n", "the 'for' over the symmetric type P writes this", 5, 31),
    ("var a: [P] -> bool = false\naction f { for p in P { require a[p]\n a[p] = false } }\n", "a 'require' inside a 'for' over the symmetric type P", 5, 25),
    ("var a: [P] -> 0..3 = 0\nvar b: [0..1] -> bool = false\ninvariant i: all p in P: b[a[p]]\n",
     "'all' over the symmetric type P stops at the first value", 6, 26),
    ("var o: P = any\naction f(p: P) { o = if p == o then p else 0 }\n", "the branches of 'if'", 5, 22),
    ("var a: [P] -> bool = false\nvar b: [0..2] -> bool = false\ninvariant i: a == b\n", "'==' compares", 6, 14),
    ("symmetric P = 0..1\n", "symmetric type 'P' is already declared", 4, 1),
    # time bounds and latency predicates (NOTE(timed), NOTE(latency)) are read like the rest of the model
    ("var x: 0..5 = 0\naction f(p: P) time (if p == 1 then 1 else 2) { x = 1 }\n",
     "'==' compares a value of the symmetric type P with an integer", 5, 25),
    ("var o: P = any\nlatency l: from o == 1 to true\n", "'==' compares a value of the symmetric type P with an integer", 5, 17),
]


@pytest.mark.parametrize("body,message,line,column", BAD, ids=[b[1][:40] for b in BAD])
def test_breaking_the_symmetry_is_a_located_error(body, message, line, column):
    with pytest.raises(SpecError) as info:
        load_source(HEAD + body, "bad.gpspec")
    rendered = info.value.render()
    hits = [d for d in info.value.diagnostics if message in d.message]
    assert hits, rendered
    assert (hits[0].span.line, hits[0].span.column) == (line, column), rendered
    assert f"bad.gpspec:{line}:{column}: error:" in rendered


def test_cli_rejects_a_broken_symmetry_with_exit_2(tmp_path, capsys):
    spec = tmp_path / "bad.gpspec"
    spec.write_text(HEAD + BAD[0][0])
    assert main(["check", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "bad.gpspec:5:16: error:" in err and "Traceback" not in err


GOOD = HEAD + """\
enum St { Idle, Busy, Done }
const L = 2
var st: [P] -> St = Idle
var pc: [P] -> [0..L-1] -> 0..2 = 0
var own: P = any
var held: bool = false
var n: 0..3 = 0
action start(p: P, q: P) {
    require st[p] == Idle and p != q and (all r in P: pc[r][0] <= 2)
    let who = if held then own else q
    st[p] = Busy
    own = who
    held = true
    n = n + 1
}
action work(p: P, k: 0..L-1) {
    require st[p] == Busy and pc[p][k] < 2
    pc[p][k] = pc[p][k] + 1
}
action finish(p: P) {
    require st[p] == Busy and own != p
    st[p] = Done
    held = false
}
action reset {
    require all p in P: st[p] == Done
    for p in P {
        st[p] = Idle
        for k in 0..L-1 { pc[p][k] = 0 }
    }
    n = 0
}
invariant bounded: n <= 3
invariant owner_busy: held implies st[own] != Done
transition counts: (sum p in P: pc[p][0]) <= (sum p in P: pc[p][0]') or n' == 0
"""


def test_a_symmetric_model_is_accepted_and_reduced():
    model = load_source(GOOD, "good.gpspec")
    assert [t.symmetric for t in model.symmetric] == ["P"]
    on = verify(model, symmetry="on")
    off = verify(model, symmetry="off")
    assert on.symmetry == {"reduced": True, "types": {"P": 3}, "group": 6}
    assert off.symmetry is None
    assert on.states is not None and off.states is not None and on.states < off.states
    assert _verdicts(on) == _verdicts(off)


def _verdicts(report):
    return {r.property: (r.verdict, None if r.counterexample is None else len(r.counterexample.steps))
            for r in report.results}


def _agree(reduced, full, live=()):
    """The reduced report agrees with the full one: every verdict and counterexample length is
    the same, except that when both searches stopped at the same modelling error (the `range`
    result, equal in both), a property whose violation lies in that BFS layer may have been met
    by one search before it stopped and not by the other (their orders within a layer differ):
    then one says `violated` and the other `unknown` ("stopped at a modelling error")."""
    a, b = _verdicts(reduced), _verdicts(full)
    assert set(a) == set(b)
    stopped = b.get("range", (None,))[0] is Verdict.VIOLATED and full.states is None
    for name in b:
        if name in live:
            continue
        if a[name] == b[name]:
            continue
        assert stopped and a["range"] == b["range"], (name, a[name], b[name])
        pair = {a[name][0], b[name][0]}
        assert pair == {Verdict.VIOLATED, Verdict.UNKNOWN}, (name, a[name], b[name])
        unknown = reduced.result(name) if a[name][0] is Verdict.UNKNOWN else full.result(name)
        assert "modelling error" in unknown.reason


def _orbits(model, states):
    """Orbits of a set of states, by applying every permutation (brute force)."""
    sym = Symmetry(model)
    perms = list(itertools.product(*[list(itertools.permutations(range(t.size()))) for t in sym.types]))
    seen: set = set()
    count = 0
    for s in states:
        if s in seen:
            continue
        count += 1
        orbit = {sym.apply(p, s) for p in perms}
        assert orbit <= states, "a permutation of a reachable state is not reachable"
        seen |= orbit
    return count


def _exact_orbits(model):
    cm = compile_model(model)
    wanted = select_properties(model, None)
    full = search(cm, set())
    reduced = search(cm, set(), symmetry=Symmetry(model))
    assert full.complete and reduced.complete
    assert len(reduced.parent) == _orbits(model, set(full.parent))
    assert all(Symmetry(model).canonical(s) == s for s in reduced.parent)
    return wanted


def test_canonical_forms_are_exact_one_per_orbit():
    _exact_orbits(load_source(GOOD, "good.gpspec"))


# 241, 388: stopped at a modelling error; seeds 12 to 39 `slow` (other random specs through the
# same two searches: seeds 0 to 11 are the default run's, two symmetric types at once in 2 and 4)
@pytest.mark.parametrize("seed", list(range(0, 12)) + [pytest.param(s, marks=pytest.mark.slow) for s in range(12, 40)]
                         + [241, 388])
def test_random_symmetric_specs_reduced_equals_unreduced(seed):
    text = sym_spec(seed)
    model = load_source(text, "rnd.gpspec")
    on = verify(model, symmetry="on")
    off = verify(model, symmetry="off")
    live = {p.name for p in model.liveness}
    for name in live:
        assert on.result(name).verdict is Verdict.UNKNOWN and "symmetry" in on.result(name).reason
    _agree(on, off, live)
    cm = compile_model(model)
    for r in on.results:
        if r.verdict is Verdict.VIOLATED:
            assert check_witness(cm, r) is None, (r.property, text)
    if on.states is not None and off.states is not None:
        full = search(cm, set())
        if full.complete and not model.constraints:
            assert on.states == _orbits(model, set(full.parent)), text


# seeds 112 to 124 `slow` (other random specs through the same comparison: 100 to 111 are the default run's)
@pytest.mark.parametrize("seed", [s if s < 112 else pytest.param(s, marks=pytest.mark.slow) for s in range(100, 125)])
def test_random_symmetric_specs_agree_with_the_reference(seed):
    """The reduced search (verify's default `auto`) against the independent reference
    semantics: verdicts, shortest lengths, and the reference's replay of every counterexample."""
    from differential import compare

    text = sym_spec(seed, liveness=False, small=True)
    model = load_source(text, "rnd.gpspec")
    assert verify(model).symmetry is not None  # auto reduced it
    problems = compare(text, ("explicit",))
    assert not problems, text + "\n" + "\n".join(problems)


# The cwsr instances are slow (30 to 76 s of CPU each, measured: the Q=2, PREEMPT_TIMEOUT=2 one
# 75.6 s). The default run keeps this test on both nvidia_streams instances (a bundled model, groups
# of two and three), two symmetric types at once in the random specs of
# test_random_symmetric_specs_reduced_equals_unreduced, and the replay of a violation found up to
# symmetry in test_a_violation_found_up_to_symmetry_replays_step_by_step.
_SLOW_CWSR = pytest.mark.slow  # fast: nvidia_streams below, and the random-spec and replay tests of this file


@pytest.mark.parametrize("name,consts", [
    pytest.param("cwsr", OLD, marks=_SLOW_CWSR), pytest.param("cwsr", {**OLD, "W": 3}, marks=_SLOW_CWSR),
    pytest.param("cwsr", {**OLD, "Q": 2, "N": 1}, marks=_SLOW_CWSR),
    pytest.param("cwsr", {**OLD, "W": 3, "PREEMPT_TIMEOUT": 1}, marks=_SLOW_CWSR),
    pytest.param("cwsr", {**OLD, "Q": 2, "N": 1, "PREEMPT_TIMEOUT": 2}, marks=_SLOW_CWSR),
    pytest.param("cwsr", {**OLD, "L": 1, "MAXP": 0, "W": 3}, marks=_SLOW_CWSR),
    ("nvidia_streams", {}), ("nvidia_streams", {"S": 3, "Q": 1, "P": 3}),
])
def test_bundled_symmetric_models_reduced_equals_unreduced(name, consts):
    model = untimed(load_spec(name, consts))  # cwsr is timed: its untimed abstraction (same discrete states)
    assert model.symmetric
    # liveness and latency properties are not checked under reduction (test below)
    skip = {x.name for x in model.liveness} | {x.name for x in model.latencies}
    safety = [p for p in select_properties(model, None) if p not in skip]
    on = verify(model, properties=safety, symmetry="on", core="python")
    off = verify(model, properties=safety, symmetry="off", core="python")
    assert on.symmetry is not None and on.states is not None and on.states <= off.states  # type: ignore[operator]
    _agree(on, off)
    cm = compile_model(model)
    for r in on.results:
        if r.verdict is Verdict.VIOLATED:
            assert check_witness(cm, r) is None


def test_a_violation_found_up_to_symmetry_replays_step_by_step():
    """Counterexamples of every kind, un-permuted: invariant, transition, range (action), and
    the last step's action names the concrete instance."""
    text = HEAD + """\
enum St { Idle, Busy, Done }
var st: [P] -> St = Idle
var own: P = any
var n: 0..N = 0
action start(w: P, v: P) {
    require st[w] == Idle and w != v
    st[w] = Busy
    own = v
    n = n + 1
}
action finish(w: P) {
    require st[w] == Busy
    st[w] = Done
}
invariant not_two: (count p in P: st[p] == Busy) < 2
transition owner_kept: st[own] == Busy implies own' == own
"""
    for n, broken in ((3, ("not_two", "owner_kept")), (1, ("range",))):  # n: 0..1 overflows first
        model = load_source(text.replace("const K = 3", f"const K = 3\nconst N = {n}"), "v.gpspec")
        on = verify(model, symmetry="on")
        off = verify(model, symmetry="off")
        assert on.symmetry is not None and _verdicts(on) == _verdicts(off)
        cm = compile_model(model)
        for name in broken:
            r = on.result(name)
            assert r.verdict is Verdict.VIOLATED and check_witness(cm, r) is None, name
    rng = on.result("range")
    last = cm.layout.encode(rng.counterexample.steps[-1].state)
    iid = cm.find_instance(rng.detail["action"], rng.detail["args"])
    with pytest.raises(Exception) as err:
        cm.step(iid, last)
    assert "outside" in str(err.value)


# three symmetric workers that each finish once: liveness and a safety property, 24 states
LIVE = """model m
const K = 3
symmetric P = 0..K-1
var done: [P] -> bool = false
var turns: 0..2 = 0
fair action finish(p: P) {
    require not done[p]
    done[p] = true
}
action wait {
    require turns < 2
    turns = turns + 1
}
allow deadlock
invariant no_loss: turns <= 2
liveness no_starvation: eventually (all p in P: done[p])
"""


def _liveness_under_reduction(model) -> None:
    # which search each setting makes (the runs that attribute assumptions would repeat them: off)
    on = verify(model, symmetry="on", assumption_use=False)
    r = on.result("no_starvation")
    assert r.verdict is Verdict.UNKNOWN and "not checked under symmetry reduction" in r.reason
    auto = verify(model, assumption_use=False)  # liveness asked for: auto searches unreduced, and checks it
    assert auto.symmetry is None and auto.result("no_starvation").verdict is Verdict.PROVED
    safety = verify(model, properties=["no_loss"], assumption_use=False)  # safety only: auto reduces
    assert safety.symmetry is not None and safety.states < auto.states  # type: ignore[operator]


def test_liveness_is_refused_under_reduction_and_checked_by_auto():
    """On a small symmetric spec (under 1 s of CPU); cwsr's untimed abstraction: the slow test below."""
    _liveness_under_reduction(load_source(LIVE, "live.gpspec"))


@pytest.mark.slow  # 18 s of CPU; fast: test_liveness_is_refused_under_reduction_and_checked_by_auto
def test_liveness_is_refused_under_reduction_and_checked_by_auto_on_cwsr():
    _liveness_under_reduction(untimed(load_spec("cwsr", {**OLD, "W": 3})))  # cwsr is timed: symmetry reduces untimed searches


def test_compiled_core_falls_back_to_python_with_a_warning():
    model = untimed(load_spec("cwsr", {**OLD, "W": 3}))
    rep = run_explicit(model, {"no_loss"}, Limits(), core="compiled", symmetry="on")
    assert rep.symmetry is not None
    assert any("Python core" in w for w in rep.warnings)
    # asked for the compiled core, auto does not reduce (the choice alone: no numba compile here)
    assert _symmetry_choice(model, {"no_loss"}, "compiled", "auto")[0] is None
    assert _symmetry_choice(model, {"no_loss"}, "auto", "auto")[0] is not None
    # nor when --workers or --fingerprint (compiled-core options) were asked for
    assert _symmetry_choice(model, {"no_loss"}, "auto", "auto", True)[0] is None


def test_reports_say_the_count_is_reduced(tmp_path, capsys):
    spec = tmp_path / "good.gpspec"
    spec.write_text(GOOD)
    assert main(["verify", str(spec), "--json"]) == 1  # owner_busy and deadlock are violated
    out = json.loads(capsys.readouterr().out)
    assert out["symmetry"] == {"reduced": True, "types": {"P": 3}, "group": 6}
    assert main(["verify", str(spec), "--symmetry", "off", "--json"]) == 1
    full = json.loads(capsys.readouterr().out)
    assert full["symmetry"] is None and full["states"] > out["states"]
    assert main(["verify", str(spec)]) == 1
    text = capsys.readouterr().out
    assert f"{out['states']:,} states up to symmetry (reduced" in text and "P (3 values)" in text
    assert main(["verify", str(spec), "--symmetry", "sideways"]) == 2


def test_models_without_a_symmetric_type_are_unaffected(examples):
    model = load_spec(str(examples / "ring.gpspec"))
    rep = verify(model, symmetry="on")
    assert rep.symmetry is None and rep.states == verify(model, symmetry="off").states


def test_past_the_candidate_cap_the_search_stays_sound_and_says_so(monkeypatch):
    """With ties left in index order (gpmodel/symmetry.py MAX_CANDIDATES) a state is still in
    its orbit: verdicts stay those of the full search, an orbit may be counted twice, and the
    report says the count is not one per orbit."""
    import gpcheck.gpmodel.symmetry as symmetry_module

    monkeypatch.setattr(symmetry_module, "MAX_CANDIDATES", 1)
    capped_somewhere = False
    for seed in range(0, 17):  # capped at seeds 0, 9, 12, 15 and 16 (were 30 seeds: 25 is the next)
        model = load_source(sym_spec(seed, liveness=False), "rnd.gpspec")
        capped = verify(model, symmetry="on")
        full = verify(model, symmetry="off")
        _agree(capped, full)
        cm = compile_model(model)
        assert all(check_witness(cm, r) is None for r in capped.results if r.verdict is Verdict.VIOLATED)
        if capped.symmetry is not None and capped.symmetry.get("one_per_orbit") is False:
            capped_somewhere = True
            assert full.states is None or capped.states <= full.states  # type: ignore[operator]
    assert capped_somewhere


@pytest.mark.parametrize("k,reduced", [(3, False), (4, True)])
def test_auto_gives_a_small_group_to_the_compiled_core_on_a_large_model(monkeypatch, k, reduced):
    """--symmetry auto, --core auto: past the Python core's switch points, a reduction by fewer
    than AUTO_SYMMETRY_GROUP permutations gives way to the compiled core (unreduced); a larger
    group keeps the reduced search. (The compiled search is stubbed: no numba compile here.)"""
    from gpcheck.checker.api import explicit_run as api
    from gpcheck.checker.engines.explicit import fast_explicit
    from gpcheck.gpmodel import jit

    monkeypatch.setattr(api, "AUTO_PYTHON_STATES", 20)
    monkeypatch.setattr(api, "AUTO_PYTHON_STATES_CACHED", 20)
    monkeypatch.setattr(jit, "is_cached", lambda cm: True)
    monkeypatch.setattr(api, "compiled_unsupported", lambda cm, wanted: None)
    calls = []

    def stub(*args, **kw):
        calls.append(1)
        raise api.budget.Stop("stub", "stub", None)

    monkeypatch.setattr(fast_explicit, "search", stub)
    model = load_source(GOOD.replace("const K = 3", f"const K = {k}"), "good.gpspec")
    rep = run_explicit(model, {"bounded"}, Limits(), core="auto", symmetry="auto")
    if reduced:
        assert not calls and rep.symmetry is not None
    else:
        assert calls and rep.symmetry is None
        assert any("symmetry reduction not used" in w for w in rep.warnings)


def test_a_bad_symmetric_declaration_is_one_located_error():
    for rng, message in (("3..1", "empty range 3..1"), ("0..5000", "a symmetric type ranges over at most 4096")):
        with pytest.raises(SpecError) as info:
            load_source(f"model m\nsymmetric P = {rng}\nvar x: [P] -> bool = false\n", "bad.gpspec")
        assert len(info.value.diagnostics) == 1 and message in info.value.diagnostics[0].message
        assert (info.value.diagnostics[0].span.line, info.value.diagnostics[0].span.column) == (2, 15)


def test_latencies_are_computed_beside_symmetry_reduction():
    """NOTE(latency) x NOTE(symmetry): a latency is elapsed time, decided by the zone engine's own
    (unreduced) search (checker/api/untimed_latency.py), so --symmetry on reduces the safety search
    and still answers the latency, with the numbers of the unreduced run."""
    # K = 2: 343 and 686 states, under 1 s (K = 3: 5,131 and 29,757 states, 15 s of CPU)
    model = load_source(GOOD + "latency busy: from held to not held\n", "good.gpspec", {"K": 2})
    on = verify(model, symmetry="on", core="python", assumption_use=False)
    off = verify(model, symmetry="off", core="python", assumption_use=False)
    assert on.symmetry is not None and off.symmetry is None and on.states < off.states
    got = [(r.verdict, r.detail.get("min"), r.detail.get("max")) for r in (on.result("busy"), off.result("busy"))]
    assert got[0] == got[1] and got[0][0] is not Verdict.UNKNOWN

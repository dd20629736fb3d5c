"""Symmetry over identical named instances (issue 32, NOTE(instance-symmetry) in
gpmodel/instance_symmetry.py): `--symmetry on` reduces over `use M as a(...)`, `use M as
b(...)` with equal constants when the model does not tell them apart; the verdicts are the
unreduced search's, each counterexample a behaviour violating its own property."""

from __future__ import annotations

from pathlib import Path

from gpcheck.checker import Verdict, verify
from gpcheck.checker.engines.explicit import explicit
from gpcheck.checker.engines.smt.witness import check_witness
from gpcheck.gpmodel import compile_model
from gpcheck.gpmodel.instance_symmetry import find
from gpcheck.spec import load_spec

QUEUE = """model queue "one ring"
const CAP = 2
enum Mode { Run, Saved }
var work: 0..CAP = 0
var mode: Mode = Run
var done: 0..CAP = 0
action submit { require work < CAP; work = work + 1 }
action exec { require mode == Run and work > 0; work = work - 1; if done < CAP { done = done + 1 } }
action preempt { require mode == Run; mode = Saved }
action resume { require mode == Saved; mode = Run }
invariant bounded: work <= CAP
invariant not_both_done: done < CAP or work == 0 or mode == Run
"""

# two GPUs of one module and one preemption token; the using model treats them alike
TWIN = """model twin "two identical GPUs, one preemption token"
use "queue.gpspec" as g0(CAP = 2) driving preempt, resume
use "queue.gpspec" as g1(CAP = 2) driving preempt, resume
var token: bool = true
action p0 { require token and g0.work > 0; call g0.preempt(); token = false }
action p1 { require token and g1.work > 0; call g1.preempt(); token = false }
action r0 { require g0.mode == Saved; call g0.resume(); token = true }
action r1 { require g1.mode == Saved; call g1.resume(); token = true }
invariant one_saved: not (g0.mode == Saved and g1.mode == Saved)
"""

THREE = """model three "three identical queues, nothing between them"
use "queue.gpspec" as a(CAP = 1)
use "queue.gpspec" as b(CAP = 1)
use "queue.gpspec" as c(CAP = 1)
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / "queue.gpspec").write_text(QUEUE)
    p = tmp_path / name
    p.write_text(text)
    return p


def _compare(path: Path) -> tuple[object, object]:
    m = load_spec(str(path))
    off = verify(m, symmetry="off", core="python", assumption_use=False)
    on = verify(m, symmetry="on", assumption_use=False)
    assert [(r.property, r.verdict) for r in off.results] == [(r.property, r.verdict) for r in on.results]
    cm = compile_model(m)
    for r in on.results:
        if r.verdict is Verdict.VIOLATED:
            assert check_witness(cm, r) is None, r.property  # replays, and violates its own property
    return off, on


def test_two_identical_gpus_are_reduced_with_the_unreduced_verdicts(tmp_path: Path) -> None:
    off, on = _compare(_write(tmp_path, "twin.gpspec", TWIN))
    assert off.states == 189 and on.states == 99
    assert on.symmetry == {"reduced": True, "types": {"instances g0, g1": 2}, "group": 2}
    assert off.symmetry is None
    # each copy's counterexample runs on its own GPU (g1's uses p1, not p0)
    cx = on.result("g1.not_both_done").counterexample
    assert cx.steps[-1].action == "p1" and cx.steps[-1].state["g1.mode"] == "Saved"
    # one state per orbit: the orbits of the unreduced reachable states under the exchange
    m = load_spec(str(tmp_path / "twin.gpspec"))
    sym, _ = find(m)
    assert sym is not None
    reach = explicit.search(compile_model(m), set()).parent
    orbits = {frozenset({s, sym.swap_state("g0", "g1", s)}) for s in reach}
    assert len(orbits) == 99


def test_three_identical_instances(tmp_path: Path) -> None:
    off, on = _compare(_write(tmp_path, "three.gpspec", THREE))
    assert on.symmetry["group"] == 6
    # 8 states per queue (CAP = 1): 8^3 = 512 states; one per multiset of three: C(10, 3) = 120
    assert off.states == 512 and on.states == 120


def test_what_tells_the_instances_apart_is_not_reduced(tmp_path: Path) -> None:
    # different constants: different instances
    diff = _write(tmp_path, "diff.gpspec", TWIN.replace("as g1(CAP = 2)", "as g1(CAP = 1)"))
    rep = verify(load_spec(str(diff)), symmetry="on", assumption_use=False)
    assert rep.symmetry is None and rep.states == 78
    # the using model resumes g1 only when it is empty: r1 is not r0 renamed
    asym = _write(tmp_path, "asym.gpspec", TWIN.replace("require g1.mode == Saved;", "require g1.mode == Saved and g1.work == 0;"))
    rep = verify(load_spec(str(asym)), symmetry="on", assumption_use=False)
    assert rep.symmetry is None
    assert any("no symmetry reduction over instances g0 and g1: action 'r0' tells them apart" in w for w in rep.warnings)
    # a property of the using model that names one GPU
    prop = _write(tmp_path, "prop.gpspec", TWIN + "invariant g0_only: g0.done <= 2\n")
    rep = verify(load_spec(str(prop)), symmetry="on", assumption_use=False)
    assert rep.symmetry is None and any("invariant 'g0_only' tells them apart" in w for w in rep.warnings)


def test_auto_keeps_the_unreduced_search(tmp_path: Path) -> None:
    rep = verify(load_spec(str(_write(tmp_path, "twin.gpspec", TWIN))), assumption_use=False)
    assert rep.symmetry is None and rep.states == 189

"""Refinement (issue 32 item 2): `refines M with { var := expr, ... }` (spec/refines.py,
checker/engines/explicit/refinement.py, NOTE(refinement))."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.cli.command import main
from gpcheck.spec import load_spec
from gpcheck.spec.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]

# The abstract model: a job moves Idle -> Queued -> Running -> Idle, one at a time.
ABSTRACT = """model job "one job's life"
enum St { Idle, Queued, Running }
var st: St = Idle
var runs: 0..3 = 0
action submit { require st == Idle; st = Queued }
action start { require st == Queued; st = Running }
action finish { require st == Running and runs < 3; st = Idle; runs = runs + 1 }
"""

# A concrete model: a ring with a doorbell and a CU, refining `job` (stutters: ring, dispatch).
# `BAD = 1` adds one step that skips the queue: the refinement fails in exactly that step.
CONCRETE = """model ring "a ring and a CU"
const BAD = 0
var written: bool = false
var rung: bool = false
var on_cu: bool = false
var done: 0..3 = 0
var warm: 0..2 = 0
action write { require not written and not on_cu and done < 3; written = true }
action ring { require written and not rung; rung = true }
action dispatch { require written and rung and not on_cu; on_cu = true; written = false; rung = false }
action prefetch { require warm < 2; warm = warm + 1 }
action complete { require on_cu; on_cu = false; done = done + 1 }
allow deadlock
action fast_path { require BAD == 1 and not written and not on_cu and done < 3 and done >= 1; on_cu = true }
refines "job.gpspec" with {
    st := if on_cu then Running else if written and rung then Queued else Idle,
    runs := done
}
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_a_refining_model_is_proved_with_stutters(tmp_path: Path) -> None:
    write(tmp_path, "job.gpspec", ABSTRACT)
    m = load_spec(str(write(tmp_path, "ring.gpspec", CONCRETE)))
    rep = verify(m)
    r = rep.result("refines")
    assert r.verdict is Verdict.PROVED and r.engine == "explicit" and r.kind == "refinement"
    assert r.detail["states"] == rep.states


def test_the_one_bad_step_is_refuted_there(tmp_path: Path) -> None:
    write(tmp_path, "job.gpspec", ABSTRACT)
    m = load_spec(str(write(tmp_path, "ring.gpspec", CONCRETE)), {"BAD": 1})
    r = verify(m).result("refines")
    assert r.verdict is Verdict.VIOLATED
    cx = r.counterexample
    assert cx is not None
    # the shortest way to the bad step: write, ring, dispatch, complete, then the fast path
    assert [s.action for s in cx.steps[1:]] == ["write", "ring", "dispatch", "complete", "fast_path"]
    assert r.detail["step"] == 5
    assert r.detail["abstract_before"] == {"st": "Idle", "runs": 1}
    assert r.detail["abstract_after"] == {"st": "Running", "runs": 1}
    assert "fast_path" in (r.reason or "") and "no step of job" in (r.reason or "")
    # every other step maps to a step or a stutter: removing fast_path's one state change restores it
    assert verify(load_spec(str(tmp_path / "ring.gpspec"), {"BAD": 0})).result("refines").verdict is Verdict.PROVED


def test_initial_state_and_range_failures(tmp_path: Path) -> None:
    write(tmp_path, "job.gpspec", ABSTRACT)
    init = CONCRETE.replace("var done: 0..3 = 0", "var done: 0..3 = 1")
    r = verify(load_spec(str(write(tmp_path, "a.gpspec", init)))).result("refines")
    assert r.verdict is Verdict.VIOLATED and len(r.counterexample.steps) == 1 and "not an initial state" in r.reason
    wide = CONCRETE.replace("runs := done", "runs := done + warm")
    r = verify(load_spec(str(write(tmp_path, "b.gpspec", wide)))).result("refines")
    assert r.verdict is Verdict.VIOLATED and r.counterexample.steps[-1].action == "prefetch"


def test_bounded_search_is_not_a_proof(tmp_path: Path) -> None:
    write(tmp_path, "job.gpspec", ABSTRACT)
    r = verify(load_spec(str(write(tmp_path, "ring.gpspec", CONCRETE))), max_states=5).result("refines")
    assert r.verdict is Verdict.UNKNOWN and r.bound is not None


@pytest.mark.parametrize("mapping, message", [
    ("st := Idle", "gives no expression for runs"),
    ("st := Idle, runs := done, nope := 1", "has no variable nope"),
    ("st := done, runs := done", "st of 'job.gpspec' is a St, the mapping gives an integer"),
    ("st := Idle, runs := done, runs := 0", "runs is mapped twice"),
    ("st := Idle, runs := undefined_name", "undefined_name"),
])
def test_mapping_errors_are_located(tmp_path: Path, mapping: str, message: str) -> None:
    write(tmp_path, "job.gpspec", ABSTRACT)
    text = CONCRETE.split("refines")[0] + 'refines "job.gpspec" with { ' + mapping + " }\n"
    with pytest.raises(SpecError) as e:
        load_spec(str(write(tmp_path, "ring.gpspec", text)))
    out = e.value.render()
    assert message in out and "ring.gpspec:" in out


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "job.gpspec", ABSTRACT)
    spec = write(tmp_path, "ring.gpspec", CONCRETE)
    assert main(["verify", str(spec), "--no-progress"]) == 0
    assert main(["verify", str(spec), "--const", "BAD=1", "--property", "refines", "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "refines" in out and "fast_path" in out
    missing = write(tmp_path, "m.gpspec", CONCRETE.replace('"job.gpspec"', '"nope.gpspec"'))
    assert main(["verify", str(missing), "--no-progress"]) == 2
    assert "nope.gpspec" in capsys.readouterr().err


def test_kfd_sched_against_kfd_monitor_is_unknown_now_both_are_timed() -> None:
    """Both models are timed (issue 29): refinement is decided on untimed models only, so the
    decision (refuted at step 1 while both were untimed) is `unknown` with the reason, never a
    refutation of an abstraction passed off as the timed models'."""
    for f in ("kfd_sched_monitor.gpspec", "kfd_sched_lp_first.gpspec"):
        r = verify(str(ROOT / "spec" / "refinements" / f), properties=["refines"]).result("refines")
        assert r.verdict is Verdict.UNKNOWN and "untimed" in (r.reason or "")

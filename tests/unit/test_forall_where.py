"""Issue 33: a --for-all `unknown` says where (the declaration's file:line:col) and what to do,
and a long reason shared by several properties is printed once, not once per row."""

from __future__ import annotations

from pathlib import Path

from gpcheck.checker.engines.param.where import HINT_CAN_FAIL, HINT_FRAGMENT, locate
from gpcheck.checker.report.render import render_text
from gpcheck.checker.core.verdict import Report, Result, Verdict
from gpcheck.spec import load_spec

SPEC = """model fa
const N = 3
var st: [0..N-1] -> 0..1 = 0
var c: 0..N = 0
var d: 0..N = 0
action fin(k: 0..N-1) { require st[k] == 0
    st[k] = 1
    c = c + 1
    d = (d * d) % (N + 1) }
invariant small: c <= N
"""


def test_reasons_name_the_declaration_and_give_a_hint(tmp_path: Path) -> None:
    spec = tmp_path / "fa.gpspec"
    spec.write_text(SPEC)
    model = load_spec(str(spec))
    text = locate(model, "from 3 lemmas: action fin can fail in a state where the 3 lemmas hold")
    assert f"action fin (at {spec}:6:1) can fail" in text and text.endswith(HINT_CAN_FAIL)
    text = locate(model, "outside the parameterised fragment: c: a counted array read other than at a row")
    assert f"c (at {spec}:4:1):" in text and text.endswith(HINT_FRAGMENT)
    assert locate(model, "timeout after 5 s") == "timeout after 5 s"
    assert locate(model, text) == text  # located once


def test_a_for_all_run_locates_the_action_that_can_fail(tmp_path: Path) -> None:
    from gpcheck.checker.api.for_all import verify_for_all

    spec = tmp_path / "fa.gpspec"
    spec.write_text(SPEC)
    report = verify_for_all(str(spec), ["N"], {}, properties=["small"])
    small = report.result("small")
    assert small.verdict is Verdict.UNKNOWN and f"(at {spec}:6:1)" in (small.reason or "")


def test_a_long_shared_reason_is_printed_once() -> None:
    why = "outside the parameterised fragment: UNIQUE-MARK " + "x" * 300
    results = [Result(p, "invariant", Verdict.UNKNOWN, "forall", reason=why) for p in ("a", "b", "c")]
    text = render_text(Report("m", "m.gpspec", {}, results), width=100)
    assert text.count("UNIQUE-MARK") == 1 and text.count("see note 1 below") == 3 and "note 1 (a, b, c):" in text

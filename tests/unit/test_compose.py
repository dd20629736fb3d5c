"""Model composition (issue 16): `use MODULE(C = e) driving A` and `call A(args)`, expanded on the
AST before type checking (spec/compose.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.cli.command import main
from gpcheck.spec import load_source, load_spec
from gpcheck.spec.errors import SpecError

BASE = """model base "a counter module"
const MAX = 3
var x: 0..MAX = 0
# bump x by d
action bump(d: 1..2) {
    require x + d <= MAX
    let n = x + d
    x = n
}
invariant x_small: x <= MAX
expect x_small: proved
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_use_splices_declarations_binds_constants_and_drives_actions(tmp_path: Path) -> None:
    write(tmp_path, "base.gpspec", BASE)
    top = write(tmp_path, "top.gpspec", """model top
const LIMIT = 4
use "base.gpspec"(MAX = LIMIT) driving bump
var calls: 0..9 = 0
action twice {
    require calls < 9
    let n = 1          # the callee's `let n` is renamed apart
    call bump(n)
    call bump(n + 1)
    calls = calls + 1
}
invariant x_bounded: x <= 3
""")
    m = load_spec(str(top))
    assert [a.name for a in m.actions] == ["twice"]            # bump is driven: not an action of its own
    assert {c.name: c.value for c in m.constants}["MAX"] == 4
    assert m.property_names() == ["x_small", "x_bounded"]     # the module's property comes along, its expect not
    assert not m.expectations
    rep = verify(m)
    # twice adds 3 atomically; from x=3 the callee's require (x + d <= MAX) disables the whole step
    assert rep.result("x_bounded").verdict is Verdict.PROVED
    assert rep.states == 2
    # the bound constant is still overridable
    assert {c.name: c.value for c in load_spec(str(top), {"MAX": 9}).constants}["MAX"] == 9
    assert verify(load_spec(str(top), {"MAX": 9})).result("x_bounded").verdict is Verdict.VIOLATED


def test_call_argument_outside_the_parameter_range_disables_the_step(tmp_path: Path) -> None:
    write(tmp_path, "base.gpspec", BASE)
    top = write(tmp_path, "top.gpspec", """model top
use "base.gpspec" driving bump
action big { call bump(3) }
action small { call bump(1) }
allow deadlock
""")
    rep = verify(load_spec(str(top)))
    assert rep.coverage is not None and rep.coverage.get("big", 0) == 0 and rep.coverage["small"] > 0


def test_undriven_module_actions_still_run_and_can_be_called(tmp_path: Path) -> None:
    write(tmp_path, "base.gpspec", BASE)
    top = write(tmp_path, "top.gpspec", """model top
use "base.gpspec"
action reset_then_bump { require x == MAX  x = 0  call bump(2) }
""")
    m = load_spec(str(top))
    assert [a.name for a in m.actions] == ["bump", "reset_then_bump"]
    rep = verify(m)
    assert rep.result("x_small").verdict is Verdict.PROVED and rep.coverage["reset_then_bump"] > 0


def test_bundled_module_and_the_kfd_sched_composition() -> None:
    m = load_spec("kfd_sched")
    names = {a.name for a in m.actions}
    assert {"monitor", "arbitrate", "tick", "submit", "save_wave", "remap"} <= names
    assert "preempt" not in names and "step" not in names       # driven by the monitor / tick
    assert {"no_reexecution", "no_loss", "hp_undisturbed"} <= set(m.property_names())
    monitor = next(a for a in m.actions if a.name == "monitor")
    assert monitor.span.file == "kfd_sched"                        # the name it was loaded by
    save = next(a for a in m.actions if a.name == "save_wave")
    assert save.span.file.endswith("cwsr.gpspec")                 # errors and explain point into the module


@pytest.mark.parametrize("text, line, col, words", [
    ("model t\nuse nosuch\n", 2, 5, "no bundled model named 'nosuch'"),
    ("model t\nuse cwsr(QQ = 1)\n", 2, 10, "has no constant QQ"),
    ("model t\nuse cwsr(Q = 1, Q = 2)\n", 2, 17, "bound twice"),
    ("model t\nuse cwsr driving nope\n", 2, 18, "has no action nope"),
    ("model t\nuse cwsr\naction a { call preempt(1) }\n", 3, 12, "takes 0 argument(s), 1 given"),
    ("model t\nuse cwsr\naction a { call nope() }\n", 3, 12, "no action named 'nope'"),
    ("model t\naction a { call b() }\naction b { call a() }\n", 3, 12, "calls itself"),
    ("model t\nuse cwsr\nvar loc: bool = false\n", 3, 1, "variable 'loc' is already declared"),
    ("model t\nuse \"missing.gpspec\"\n", 2, 5, "not a regular file"),
    ("model t\nuse \"/dev/zero\"\n", 2, 5, "not a regular file"),
    ("model t\nuse \"\"\n", 2, 5, "not a regular file"),
])
def test_composition_errors_are_located(tmp_path: Path, text: str, line: int, col: int, words: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, "t.gpspec", text)
    with pytest.raises(SpecError) as exc:
        load_spec(str(p))
    d = exc.value.first
    assert d.span is not None and (d.span.line, d.span.column) == (line, col), exc.value.render()
    assert words in d.message
    assert main(["check", str(p)]) == 2
    err = capsys.readouterr().err
    assert f"t.gpspec:{line}:{col}: error:" in err and "Traceback" not in err


def test_use_cycle_is_located(tmp_path: Path) -> None:
    write(tmp_path, "a.gpspec", 'model a\nuse "b.gpspec"\n')
    write(tmp_path, "b.gpspec", 'model b\nuse "a.gpspec"\n')
    with pytest.raises(SpecError) as exc:
        load_spec(str(tmp_path / "a.gpspec"))
    d = exc.value.first
    assert "recursive" in d.message and d.span is not None and d.span.file.endswith("b.gpspec")


def test_an_error_inside_a_module_renders_with_the_module_line(tmp_path: Path) -> None:
    write(tmp_path, "bad.gpspec", "model bad\nvar y: 0..2 = 0\naction a { y = zz }\n")
    with pytest.raises(SpecError) as exc:
        load_source('model t\nuse "bad.gpspec"\n', str(tmp_path / "t.gpspec"))
    text = exc.value.render()
    assert "bad.gpspec:3:" in text and "y = zz" in text


def test_a_spec_without_use_is_unchanged() -> None:
    a = load_source("model m\nvar x: bool = false\naction f { x = true }\nallow deadlock\n")
    assert [v.name for v in a.vars] == ["x"] and [x.name for x in a.actions] == ["f"]


TIMED = """model timed "a timed module (durations in us)"
const STEP = 10
var x: 0..7 = 0
var done: bool = false
action work(d: 1..2) time STEP * d {
    require not done and x + d <= 6
    x = x + d
}
action stop time 1 {
    require x >= 5 and not done
    done = true
}
fair action work, stop
allow deadlock
latency to_done: from x == 0 to done
"""


def _latency(rep, name: str) -> tuple[int | None, int | None]:
    r = rep.result(name)
    assert r.kind == "latency" and r.verdict is Verdict.PROVED, (r.verdict, r.reason)
    return r.detail["min"], r.detail["max"]


def _reference(text: str, name: str) -> tuple[int | None, int | None]:
    """(min, max) of latency `name` by the discrete-time reference of timed specs."""
    from tests.reference.timed import explore, load_timed

    _, lo, hi = explore(load_timed(text)).latencies[name]
    return lo, hi


def test_use_keeps_time_and_latency_properties(tmp_path: Path) -> None:
    """NOTE(compose-time): a spliced action keeps its `time`; the module's latency property comes
    along like its other properties."""
    write(tmp_path, "timed.gpspec", TIMED)
    top = write(tmp_path, "top.gpspec", 'model top\nuse "timed.gpspec"\n')
    m = load_spec(str(top))
    assert [p.name for p in m.latencies] == ["to_done"]
    assert all(a.time is not None for a in m.actions)
    # work(1) and work(2) run side by side (both enabled: their durations overlap), then stop (1 us)
    assert _latency(verify(m), "to_done") == _reference(TIMED, "to_done") == _latency(verify(load_source(TIMED)), "to_done")


def test_a_call_adds_no_time(tmp_path: Path) -> None:
    """NOTE(compose-time): the caller's `time` is the step's; the callee's is not added (the
    same latency as the call inlined by hand)."""
    write(tmp_path, "timed.gpspec", TIMED)
    top = write(tmp_path, "top.gpspec", """model top
use "timed.gpspec" driving work
fair action pair(k: 1..2) time 5 {
    call work(k)
    call work(1)
}
""")
    m = load_spec(str(top))
    assert [a.name for a in m.actions] == ["stop", "pair"]
    pair = next(a for a in m.actions if a.name == "pair")
    assert pair.time is not None and pair.time.lower == pair.time.upper and pair.time.lower.value == 5
    flat = TIMED.replace("action work(d: 1..2) time STEP * d {", "action pair(k: 1..2) time 5 {\n"
                         "    require not done and x + k <= 6\n    x = x + k\n    require not done and x + 1 <= 6\n"
                         "    x = x + 1\n}\naction unused(d: 1..2) {\n    require false").replace("fair action work, stop",
                                                                                                  "fair action pair, stop")
    assert _latency(verify(m), "to_done") == _reference(flat, "to_done")


@pytest.mark.parametrize("body", [
    "action a {\n    if x < 3 {\n        call work(1)\n    }\n}\n",
    "action a {\n    let n = 1\n    call work(n)\n}\n",
])
def test_a_call_of_a_timed_action_may_stand_anywhere(tmp_path: Path, body: str) -> None:
    """With `cost` retired a call adds no duration, so the rules a cost needed (top level, no
    `let` in its arguments) are gone."""
    write(tmp_path, "timed.gpspec", TIMED)
    p = write(tmp_path, "t.gpspec", 'model t\nuse "timed.gpspec" driving work\n' + body)
    assert [a.name for a in load_spec(str(p)).actions] == ["stop", "a"]


def test_kfd_sched_keeps_cwsrs_times_and_latencies() -> None:
    m = load_spec("kfd_sched")  # timed, on the timed cwsr
    assert {p.name for p in m.latencies} == {"rt_preempt_latency", "be_resume_delay"}
    times = {a.name: a.time for a in m.actions}
    assert times["unmapped"] is not None and times["restored"] is not None and times["tick"] is not None

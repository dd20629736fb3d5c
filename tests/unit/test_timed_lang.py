"""The timed language (NOTE(timed) in spec/ir.py): `time L..U`, `time E`, `time L..`, `urgent
action`, and `cost`'s retirement (one notion of time: every `cost` is an error saying to write
`time E`; more in tests/unit/test_retired_cost.py)."""

from __future__ import annotations

import pytest

from gpcheck.checker.cli.command import main
from gpcheck.spec import SpecError, ir, load_source

HEAD = "model t\nconst N = 4\nvar a: 0..3 = 0\n"


def _action(m: ir.Model, name: str) -> ir.Action:
    a = m.action(name)
    assert a is not None
    return a


def test_every_form_of_time_reaches_the_ir():
    m = load_source(HEAD + """
action r time 2..N { require a < 3  a = a + 1 }
action o(i: 0..1) time 1.. { require a == 3  a = 0 }
action e time a + 1 { require a == 1 }
fair urgent action u { require a == 2  a = 3 }
urgent internal fair action v { require a == 0 }
action plain { require a == 0 }
""")
    r, o, e, u, v = (_action(m, n) for n in "roeuv")
    assert r.time is not None and isinstance(r.time.lower, ir.Lit) and r.time.lower.value == 2
    assert isinstance(r.time.upper, ir.Lit) and r.time.upper.value == 4  # the constant folded
    assert o.time is not None and o.time.upper is None and len(o.params) == 1
    assert e.time is not None and e.time.lower == e.time.upper and not isinstance(e.time.lower, ir.Lit)
    assert u.time is not None and u.time.urgent and u.fair and not u.internal
    assert v.time is not None and v.time.urgent and v.fair and v.internal
    assert isinstance(u.time.upper, ir.Lit) and u.time.upper.value == 0
    assert _action(m, "plain").time is None
    assert m.has_time


def test_an_untimed_spec_has_no_time():
    m = load_source(HEAD + "action c { require a == 0  a = 1 }\n")
    assert not m.has_time and m.actions[0].time is None


@pytest.mark.parametrize("body, message, line, column", [
    ("action c cost 4 { require a == 0 }\naction d time 1 { require a == 1 }",
     "write `time E` instead", 4, 10),
    ("action c cost 4 time 2 { require a == 0 }", "`cost` is retired", 4, 10),
    ("action c time 5..2 { require a == 0 }", "lower bound 5 exceeds the upper bound 2", 4, 10),
    ("action c time true { require a == 0 }", "a time bound is an integer expression", 4, 15),
    ("action c time -1 { require a == 0 }", "cannot be negative", 4, 15),
    ("action c time a' { require a == 0 }", "", 4, 15),
])
def test_timing_errors_are_located(body, message, line, column):
    with pytest.raises(SpecError) as err:
        load_source(HEAD + body + "\n", file="t.gpspec")
    text = err.value.render()
    assert f"t.gpspec:{line}:{column}" in text, text
    assert message in text


def test_cli_rejects_cost_in_timed_spec_with_exit_2(tmp_path, capsys):
    p = tmp_path / "t.gpspec"
    p.write_text(HEAD + "action c cost 4 { require a == 0 }\nurgent action d { require a == 1 }\n")
    assert main(["verify", str(p)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "write `time E` instead" in err and f"{p}:4:10" in err

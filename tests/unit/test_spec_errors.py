"""Malformed specs: each gives a located message, a caret, and exit code 2 from the command line."""

from __future__ import annotations

import pytest

from gpcheck.checker.cli.command import main
from gpcheck.spec import SpecError, load_source

HEAD = "model m\n"
# (source after the model line, expected message fragment, line, column)
BAD = [
    ("var x: 0..3 = \n", "unexpected end of file", 2, 15),
    ("action a { x = = 1 }\n", "unexpected '='", 2, 16),
    ("var y: @\n", "unexpected character '@'", 2, 8),
    ("var x: 0..3 = 0\naction a { require x }\n", "expected a bool expression, found int", 3, 20),
    ("var x: 0..3 = 0\naction a { x = true }\n", "cannot assign a value of type bool", 3, 16),
    ("var x: 0..3 = 0\naction a { y = 1 }\n", "unknown variable 'y'", 3, 12),
    ("var x: 0..3 = 0\ninvariant i: x + 1\n", "expected a bool expression, found int", 3, 14),
    ("var x: 0..3 = 0\naction a(x: 0..1) { require true }\n", "'x' shadows the state variable 'x'", 3, 10),
    ("var x: 0..3 = 0\ninvariant i: x' == x\n", "only allowed in a 'transition' property", 3, 14),
    ("var x: 0..3 = 7\n", "initial value 7 is outside 0..3", 2, 15),
    ("var x: 3..1 = 0\n", "empty range 3..1", 2, 8),
    ("var x: Foo = 0\n", "unknown type 'Foo'", 2, 8),
    ("enum E { A, B }\nvar x: E = C\n", "expected a member of E", 3, 12),
    ("var x: 0..3 = 0\nvar x: 0..3 = 0\n", "variable 'x' is already declared", 3, 1),
    ("var x: bool = false\ninvariant i: x < 1\n", "expected an integer operand of '<', found bool", 3, 14),
    ("var a: [0..2] -> bool = false\ninvariant i: a[true]\n", "the index must be of type 0..2", 3, 16),
    ("struct S { f: 0..1 }\nvar s: S = 0\ninvariant i: s.g == 0\n", "struct S has no field 'g'", 4, 14),
    ("var x: 0..3 = 0\naction a { require true }\nfair action b\n", "fair action 'b' is not declared", 4, 13),
    ("var x: 0..3 = 0\ninvariant i: x == 0\ninvariant i: x == 1\n", "property 'i' is already declared", 4, 1),
    ("var x: 0..3 = 0\nexpect nothing: violated\n", "no property named 'nothing'", 3, 1),
    ("var x: 0..3 = 0\ninvariant i: x == 0\nexpect i: broken\n", "unknown verdict 'broken'", 4, 1),
    ("var x: [0..1] -> 0..3 = [1, 2, 3]\n", "the array has 2 elements", 2, 25),
    ("var x: 0..3 = 0\ninvariant i: x == (1\n", "unexpected end of file", 3, 21),
    ("enum E { A, B }\nvar x: 0..3 = 0\ninvariant i: x == A\n", "cannot compare int", 4, 14),
    ("var x: 0..3 = 0\naction a { let v = x\n let v = 1 }\n", "'v' shadows an enclosing local 'v'", 4, 2),
    ("var x: 0..3 = 0\ninvariant i: min k in 0..-1: k\n", "'min' over an empty domain", 3, 14),
]


@pytest.mark.parametrize("body,message,line,column", BAD)
def test_error_is_located(body, message, line, column):
    with pytest.raises(SpecError) as info:
        load_source(HEAD + body, "bad.gpspec")
    diag = info.value.first
    assert message in diag.message, info.value.render()
    assert (diag.span.line, diag.span.column) == (line, column), info.value.render()
    rendered = info.value.render()
    assert rendered.startswith(f"bad.gpspec:{line}:{column}: error:")
    assert "^" in rendered


@pytest.mark.parametrize("body,message,line,column", BAD[:8])
def test_cli_reports_exit_2_without_traceback(tmp_path, capsys, body, message, line, column):
    spec = tmp_path / "bad.gpspec"
    spec.write_text(HEAD + body)
    before = spec.read_text()
    assert main(["check", str(spec)]) == 2
    err = capsys.readouterr().err
    assert f"bad.gpspec:{line}:{column}: error:" in err and message in err
    assert "Traceback" not in err
    assert spec.read_text() == before


def test_every_error_is_reported_at_once():
    src = HEAD + "var x: 0..3 = 0\ninvariant a: x + 1\ninvariant b: y\naction c { x = false }\n"
    with pytest.raises(SpecError) as info:
        load_source(src, "bad.gpspec")
    assert len(info.value.diagnostics) == 3


def test_const_override_that_empties_a_range_names_the_override():
    src = HEAD + "const N = 4\nvar w: [0..N-1] -> 0..1 = 0\n"
    with pytest.raises(SpecError) as info:
        load_source(src, "bad.gpspec", {"N": 0})
    assert "empty range 0..-1" in info.value.first.message and "--const N=0" in info.value.first.message


def test_unknown_const_override_is_an_error(capsys, examples):
    assert main(["verify", str(examples / "ring.gpspec"), "--const", "Q=1"]) == 2
    assert "no constant Q" in capsys.readouterr().err


def test_malformed_const_flag(capsys, examples):
    assert main(["verify", str(examples / "ring.gpspec"), "--const", "N"]) == 2
    assert "expected NAME=INTEGER" in capsys.readouterr().err


def test_missing_file_and_unknown_property(capsys, examples):
    assert main(["verify", "no/such.gpspec"]) == 2
    assert main(["verify", str(examples / "ring.gpspec"), "--property", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no such file" in err and "no property nope" in err

"""Property-based: random small specs (well-formed ones and mutated ones) never crash the front
end with anything but a reported SpecError, and well-formed ones explore without internal errors."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpcheck.checker import verify
from gpcheck.spec import GpcheckError, SpecError, load_source

NAMES = ["x", "y", "b"]


@st.composite
def int_expr(draw, depth=0):
    if depth > 2 or draw(st.booleans()):
        return draw(st.sampled_from(["x", "y", "0", "1", "2", "N", "a[x]", "a[0]"]))
    op = draw(st.sampled_from(["+", "-", "*", "/", "%"]))
    return f"({draw(int_expr(depth + 1))} {op} {draw(int_expr(depth + 1))})"


@st.composite
def bool_expr(draw, depth=0):
    kind = draw(st.integers(0, 5 if depth < 2 else 1))
    if kind == 0:
        op = draw(st.sampled_from(["<", "<=", "==", "!=", ">", ">="]))
        return f"{draw(int_expr())} {op} {draw(int_expr())}"
    if kind == 1:
        return draw(st.sampled_from(["b", "true", "false", "not b"]))
    if kind == 2:
        return f"({draw(bool_expr(depth + 1))} and {draw(bool_expr(depth + 1))})"
    if kind == 3:
        return f"({draw(bool_expr(depth + 1))} or {draw(bool_expr(depth + 1))})"
    if kind == 4:
        return f"(all k in 0..2: a[k] <= {draw(int_expr(depth + 1))})"
    return f"(if {draw(bool_expr(depth + 1))} then {draw(bool_expr(depth + 1))} else b)"


@st.composite
def statement(draw):
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return f"require {draw(bool_expr())}"
    if kind == 1:
        return f"{draw(st.sampled_from(['x', 'y', 'a[x]', 'a[y]']))} = {draw(int_expr())}"
    if kind == 2:
        return f"b = {draw(bool_expr())}"
    return f"if {draw(bool_expr())} {{ x = {draw(int_expr())} }} else {{ b = not b }}"


@st.composite
def spec_text(draw):
    lines = ["model fuzz", f"const N = {draw(st.integers(1, 3))}", "var x: 0..3 = 0",
             f"var y: 0..N = {draw(st.sampled_from(['0', 'any']))}", "var b: bool = false",
             "var a: [0..2] -> 0..3 = 0"]
    for i in range(draw(st.integers(1, 3))):
        body = "\n    ".join(draw(st.lists(statement(), min_size=1, max_size=4)))
        param = draw(st.sampled_from(["", "(p: 0..1)"]))
        lines.append(f"action act{i}{param} {{\n    {body}\n}}")
    lines.append(f"invariant inv: {draw(bool_expr())}")
    lines.append("allow deadlock")
    return "\n".join(lines) + "\n"


def mutate(text: str, data: st.DataObject) -> str:
    pos = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.sampled_from(["", "(", ")", "{", "}", "[", "==", "x'", "@", "9999", "-", "and", ":", "\n"]))
    cut = data.draw(st.integers(0, 3))
    return text[:pos] + junk + text[pos + cut:]


# The default run draws FRONT_END and EXPLORE examples; the `slow` twins below draw the full
# counts (150 and 60) of the same properties, which is where a rare input is likelier to turn up.
FRONT_END, EXPLORE = 20, 15


def _front_end_only_raises_reported_errors(text: str, data: st.DataObject) -> None:
    for candidate in (text, mutate(text, data)):
        try:
            load_source(candidate, "fuzz.gpspec")
        except SpecError as e:
            rendered = e.render()
            assert rendered.startswith("fuzz.gpspec:") or rendered.startswith("error:")


def _explores_without_internal_errors(text: str) -> None:
    try:
        model = load_source(text, "fuzz.gpspec")
    except SpecError:
        return
    try:
        report = verify(model, max_states=2000)
    except GpcheckError:
        return
    assert {r.property for r in report.results} >= {"inv", "range"}


@settings(max_examples=FRONT_END, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec_text(), st.data())
def test_front_end_only_raises_reported_errors(text, data):
    _front_end_only_raises_reported_errors(text, data)


@pytest.mark.slow  # the full count; fast: the test above (the same property, FRONT_END examples)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec_text(), st.data())
def test_front_end_only_raises_reported_errors_150_examples(text, data):
    _front_end_only_raises_reported_errors(text, data)


@settings(max_examples=EXPLORE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec_text())
def test_well_typed_random_specs_explore_without_internal_errors(text):
    _explores_without_internal_errors(text)


@pytest.mark.slow  # the full count; fast: the test above (the same property, EXPLORE examples)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec_text())
def test_well_typed_random_specs_explore_without_internal_errors_60_examples(text):
    _explores_without_internal_errors(text)

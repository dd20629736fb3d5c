"""The order of a timed run without an assumption (checker/api/timed_assumptions.py): the slices'
abstractions first, the whole model's only for what they leave (NOTE(slice-first)), and a search
asked only safety properties stopped where a breadth-first search has found all it can say
(NOTE(violations-first))."""

from __future__ import annotations

import pytest

from gpcheck.checker.api import assumptions, explicit_run
from gpcheck.checker.api import timed_assumptions as ta
from gpcheck.checker.api.model_api import run_timed_spec
from gpcheck.checker.core.verdict import Verdict
from gpcheck.checker.engines.explicit.explicit import Limits
from gpcheck.gpmodel import compile_model
from gpcheck.spec import load_source
from tests.unit.test_irrelevant import OTHERS, SPEC

# a counter with far more states than the probe below is given: `small` fails at depth 3, `fine` holds
COUNTER = """
model counter "a long counter"
var x: 0..200 = 0
var y: 0..3 = 0
action inc time 1..2 { require x < 200
    x = x + 1 }
action spin { y = (y + 1) % 4 }
invariant small: x < 3
invariant fine: x <= 200
"""


def test_the_slice_answers_first_and_the_whole_abstraction_only_what_it_leaves(
        monkeypatch: pytest.MonkeyPatch) -> None:
    relaxed = assumptions.without(load_source(SPEC, "sl.gpspec"), "no_redo")
    asked: list[tuple[str, set[str]]] = []
    real = ta._by_abstraction

    def spy(model, cm, names, limits, core):  # type: ignore[no-untyped-def]
        frozen = "ops" if model is not relaxed else ""
        asked.append((frozen, set(names)))
        return real(model, cm, names, limits, core)

    monkeypatch.setattr(ta, "_by_abstraction", spy)
    rep = ta.rerun_without(relaxed, OTHERS | {"once"}, Limits())
    assert asked[0] == ("ops", OTHERS)  # the slice first, with every result it keeps
    whole = [names for frozen, names in asked if not frozen]
    assert whole and all("once" in names and not names & {"bounded", "deadlock", "range"} for names in whole)
    ref = run_timed_spec(relaxed, OTHERS | {"once"}, "explicit", Limits())
    assert {r.property: r.verdict for r in rep.results} == {r.property: r.verdict for r in ref.results}
    assert all("frozen" in r.detail for r in rep.results if r.property != "once")


def _searches(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The state caps of the explicit searches core auto runs from now on."""
    caps: list[int | None] = []
    real = explicit_run._auto_python_search

    def spy(cm, wanted, limits, symmetry=None):  # type: ignore[no-untyped-def]
        caps.append(limits.max_states)
        return real(cm, wanted, limits, symmetry)

    monkeypatch.setattr(explicit_run, "_auto_python_search", spy)
    return caps


def test_a_search_for_safety_properties_stops_once_all_are_violated(monkeypatch: pytest.MonkeyPatch) -> None:
    model = load_source(COUNTER, "counter.gpspec")
    cm = compile_model(model)
    monkeypatch.setattr(ta, "PROBE_STATES", 40)  # the counter has 804 states
    full = ta._by_abstraction(model, cm, {"small"}, Limits(), "python")  # no probe on another core
    caps = _searches(monkeypatch)
    got = ta._by_abstraction(model, cm, {"small"}, Limits(), "auto")
    assert caps == []  # the whole search never ran: the Python search's first 40 states answered
    assert got["small"].verdict is Verdict.VIOLATED
    assert got["small"].counterexample == full["small"].counterexample  # the same shortest path, timed
    # one property that holds: only the whole search can say so
    both = ta._by_abstraction(model, cm, {"small", "fine"}, Limits(), "auto")
    assert caps == [None] and both["fine"].verdict is Verdict.PROVED and both["small"] == got["small"]

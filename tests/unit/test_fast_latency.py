"""The compiled core's latency path (checker/engines/latency/fast_latency.py, kernels in gpmodel/jit_latency.py)
against the Python reference path (checker/engines/latency/latency.py): the same numbers, verdicts, reasons,
counterexamples and min witnesses, on the random specs of test_latency_props.py (cycles,
stuttering, zero- and positive-cost loops, unfair actions) and on purpose-written ones."""

from __future__ import annotations

import random

import pytest

from gpcheck.checker.engines.latency import fast_latency
from gpcheck.checker import verify
from gpcheck.spec import load_source
from tests.unit.test_latency_props import COUNTER, _random_spec


def _latencies(text: str, core: str) -> list[tuple[object, ...]]:
    calls = []
    real = fast_latency.latency_results

    def counted(*args: object) -> object:
        calls.append(1)
        return real(*args)  # type: ignore[arg-type]

    fast_latency.latency_results = counted  # type: ignore[assignment]
    try:
        rep = verify(load_source(text, "t.gpspec"), core=core)
    finally:
        fast_latency.latency_results = real  # type: ignore[assignment]
    assert bool(calls) == (core == "compiled")  # the path under test ran (the compiled core), or not
    return [(r.property, r.verdict, r.reason, r.bound, r.detail,
             None if r.counterexample is None else r.counterexample.to_json())
            for r in rep.results if r.kind == "latency"]


def _same(text: str) -> None:
    want = _latencies(text, "python")
    assert want, text
    assert _latencies(text, "compiled") == want, text


# each compiles its model (about 2 s cold): five random specs in the default run, the rest `slow`
@pytest.mark.parametrize("seed", [pytest.param(seed, marks=pytest.mark.slow if seed >= 5 else ()) for seed in range(30)])
def test_compiled_latencies_equal_the_python_ones_on_random_specs(seed):
    _same(_random_spec(random.Random(seed)))


@pytest.mark.parametrize("src", [
    COUNTER,
    # branches of different costs joining: the longest exit of a component is a tie-break
    "var x: 0..4 = 0\nvar y: 0..2 = 0\nfair action a cost 2 { require x == 0\n x = 1 }\n"
    "fair action b cost 1 { require x == 0\n x = 2 }\nfair action c cost 1 { require x == 1 or x == 2\n x = 3 }\n"
    "fair action d cost y { require x == 3 and y < 2\n y = y + 1 }\nfair action e cost 3 { require x == 3\n x = 4 }\n"
    "allow deadlock\nlatency l: from x == 1 or x == 2 to x == 4 within 4\nlatency m: from x == 0 to x == 4\n",
    # a positive-cost cycle, a fair cycle, a stutter state
    "var x: 0..3 = 0\nfair action a cost 1 { require x < 2\n x = x + 1 }\naction back cost 2 { require x == 2\n x = 1 }\n"
    "action out { require x == 2\n x = 3 }\nallow deadlock\nlatency pos: from x == 1 to x == 3\n"
    "latency stut: from x == 0 to x == 3\n",
    "var x: 0..2 = 0\nfair action a { require x < 2\n x = x + 1 }\nfair action b { require x == 2\n x = 1 }\n"
    "latency never: from x == 1 to x == 0\n",
    # costs that fail to evaluate or are negative: unknown with the same message and location
    "var x: 0..2 = 0\nvar a: [0..1] -> 0..1 = 0\nfair action inc cost a[x + 1] { require x < 2\n x = x + 1 }\n"
    "allow deadlock\nlatency l: from x == 0 to x == 2\n",
    "var x: 0..2 = 0\nfair action dec cost 1 - 2 * x { require x < 2\n x = x + 1 }\n"
    "allow deadlock\nlatency l: from x == 0 to x == 2\n",
    # a positive-cost toggle before Q, and a constraint (holds_to_bound)
    "const COST = 2\nvar x: 0..2 = 0\nvar spin: bool = false\nfair action go cost 1 { require x == 0\n x = 1 }\n"
    "action toggle cost COST { require x == 1\n spin = not spin }\nfair action done cost 3 { require x == 1\n x = 2 }\n"
    "allow deadlock\nlatency l: from x == 1 to x == 2\n",
    "var x: 0..9 = 0\nfair action inc cost 1 { require x < 9\n x = x + 1 }\nallow deadlock\n"
    "latency l: from x == 1 to x == 3 within 5\nconstraint c: x < 6\n",
])
def test_compiled_latencies_equal_the_python_ones_on_purpose_written_specs(src):
    _same("model t\n" + src)

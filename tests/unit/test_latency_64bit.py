"""Issue 38: latencies are exact at any size (NOTE(latency-64-bit) in checker/engines/latency/fast_latency.py,
NOTE(json-bigint) in checker/report/render.py). Before, two steps of cost 2^62 came out `proved, max 0`
(or an internal AssertionError) on the compiled core, whose kernels add in int64; a cost past 64
bits ended in an OverflowError there and in a TypeError with `--json` on the Python core."""

from __future__ import annotations

import json
import random

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.api import explicit_run as api
from gpcheck.checker.engines.latency import fast_latency
from gpcheck.checker.cli.command import main
from gpcheck.spec import load_source
from tests.quality.latency_diff import big_cost_spec, compare
from tests.recheck import write_spec
from tests.unit.test_fast_latency import _latencies, _same

TWO_STEPS = """model two_steps
var x: 0..3 = 0
fair action step cost 4611686018427387904 { require x < 2; x = x + 1 }
fair action rest { require x == 2; x = 3 }
terminal: x == 3
latency l: from x == 0 to x == 2 within 10
"""

PAST_64 = """model past_64
var x: 0..3 = 0
var k: 0..3 = 3
fair action step cost (k * 4294967296) * 4294967296 { require x < 3; x = x + 1 }
terminal: x == 3
latency l: from x == 0 to x == 3 within 10
"""

# TWO_STEPS beside an independent counter of M + 1 values: 3 * (M + 1) states, so that
# `--core auto` switches to the compiled core (api.AUTO_PYTHON_STATES)
LARGE = """model large
const M = 80000
var x: 0..2 = 0
var y: 0..M = 0
fair action step cost 4611686018427387904 { require x < 2; x = x + 1 }
fair action grow { require y < M; y = y + 1 }
terminal: x == 2 and y == M
latency l: from x == 0 to x == 2 within 10
"""


@pytest.mark.parametrize("core", ["python", "compiled"])
def test_two_steps_of_two_to_the_62_are_violated_with_the_exact_max(core):
    r = verify(load_source(TWO_STEPS, "t.gpspec"), core=core).result("l")
    assert r.verdict is Verdict.VIOLATED
    assert r.detail["max"] == r.detail["min"] == 2 ** 63


@pytest.mark.parametrize("src", [TWO_STEPS, PAST_64])
def test_compiled_core_equals_the_python_core_past_64_bits(src):
    _same(src)


@pytest.mark.parametrize("core", ["python", "compiled"])
def test_json_writes_a_cost_sum_past_64_bits_exactly(tmp_path, capsys, core):
    rc = main(["verify", str(write_spec(tmp_path, PAST_64)), "--json", "--core", core, "--no-progress"])
    out = json.loads(capsys.readouterr().out)  # Python's json reads the exact integer back
    r = next(r for r in out["results"] if r["property"] == "l")
    assert rc == 1 and r["verdict"] == "violated"
    assert r["max"] == r["min"] == 3 * 3 * 2 ** 64


def test_core_auto_past_its_switch_point_uses_the_exact_numbers(monkeypatch):
    """`--core auto` on a model past the switch point: the compiled core runs (fast_latency),
    and its answer is the exact one. The switch points are lowered so that a small model
    crosses them (the long test below runs the 240,003-state model itself)."""
    monkeypatch.setattr(api, "AUTO_PYTHON_STATES", 10)
    monkeypatch.setattr(api, "AUTO_PYTHON_STATES_CACHED", 5)
    src = LARGE.replace("const M = 80000", "const M = 20")
    assert _latencies(src, "compiled") == _latencies(src, "python")
    calls = []
    real = fast_latency.latency_results
    monkeypatch.setattr(fast_latency, "latency_results", lambda *a: calls.append(1) or real(*a))
    r = verify(load_source(src, "t.gpspec")).result("l")
    assert calls and r.verdict is Verdict.VIOLATED and r.detail["max"] == 2 ** 63


@pytest.mark.long
def test_core_auto_on_240003_states_is_violated():
    rep = verify(load_source(LARGE, "t.gpspec"))
    assert rep.states == 240_003
    r = rep.result("l")
    assert r.verdict is Verdict.VIOLATED and r.detail["max"] == 2 ** 63


@pytest.mark.parametrize("seed", range(12))
def test_big_costs_compiled_equals_python_equals_the_reference(seed):
    """tests/quality/latency_diff.py's comparison (python core, compiled core, the reference's
    brute force; exact min and max, a passed `within` never proved, JSON written) on its specs
    with costs up to and past 2^63; the long run takes more seeds."""
    found, counts = compare(big_cost_spec(random.Random(f"latency-diff:0:{seed}")))
    assert not found, found
    assert counts["comparisons"] == 2
    if seed in (0, 2, 5):  # the slice is not vacuous: these maxima pass 2^63 (the fallback path)
        assert counts["past64"] >= 1, counts


@pytest.mark.long
def test_latency_differential_long_run():
    from tests.quality.latency_diff import main

    assert main(["--seed", "1", "--count", "200"]) == 0

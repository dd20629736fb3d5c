"""Issue 38: latencies are exact at any size (NOTE(latency-64-bit) in checker/fast_latency.py,
NOTE(json-bigint) in checker/report.py). Before, two steps of cost 2^62 came out `proved, max 0`
(or an internal AssertionError) on the compiled core, whose kernels add in int64; a cost past 64
bits ended in an OverflowError there and in a TypeError with `--json` on the Python core."""

from __future__ import annotations

import json
import random

import pytest

from gpcheck.checker import Verdict, api, fast_latency, verify
from gpcheck.checker.cli import main
from gpcheck.spec import load_source
from tests.reference import explore as ref_explore
from tests.reference import latency as ref_latency
from tests.reference import semantics as ref
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


BIG = [0, 1, 2 ** 61, 2 ** 62, 2 ** 62 + 1, 2 ** 63 - 1, 2 ** 63, 2 ** 64 + 3, 3 * 2 ** 70]


def lit(c: int) -> str:
    """`c` in gpspec: a literal may be at most 2^62, larger ones are written as products."""
    if c <= 2 ** 62:
        return str(c)
    return f"({lit(c >> 32)} * 4294967296 + {c & 0xFFFFFFFF})"


def big_cost_spec(rng: random.Random) -> str:
    """A random latency spec whose costs are drawn up to and past 2^63 (also as a product of
    a state variable and a large constant), with cycles and unfair actions."""
    lines = ["model big", "var x: 0..3 = 0", f"var y: 0..3 = {rng.randrange(4)}"]
    for k in range(rng.randint(3, 5)):
        c = lit(rng.choice(BIG))
        cost = rng.choice([c, f"y * {c}", f"(x + 1) * {c}", "0"])
        fair = "fair " if rng.random() < 0.8 else ""
        guard = rng.choice(["x < 3", "x == 1", "y < 3", "x < 2 and y > 0", "true"])
        up = rng.choice(["x = x + 1", "y = y + 1", "x = (x + 1) % 4", "y = 0"])
        guard += {"x = x + 1": " and x < 3", "y = y + 1": " and y < 3"}.get(up, "")
        lines.append(f"{fair}action a{k} cost {cost} {{ require {guard}; {up} }}")
    lines.append("allow deadlock")
    for k in range(2):
        p, q = rng.choice(["x == 0", "y == 1", "x == 1"]), rng.choice(["x == 3", "y == 3", "x == 2 and y > 0"])
        bound = rng.choice(["", f" within {min(rng.choice(BIG), 2 ** 62)}"])
        lines.append(f"latency l{k}: from {p} to {q}{bound}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(12))  # each compiles its model (about 2 s cold)
def test_big_costs_compiled_equals_python_equals_the_reference(seed):
    text = big_cost_spec(random.Random(seed))
    _same(text)
    m = ref.load(text)
    want = {n: (o.min, o.max) for n, o in ref_latency.latencies(m, ref_explore.explore(m)).items()}
    rep = verify(load_source(text, "big.gpspec"), core="compiled")
    for name, (mn, mx) in want.items():
        r = rep.result(name)
        if r.verdict is Verdict.UNKNOWN:
            continue
        assert (r.detail["min"], r.detail["max"]) == (mn, mx), text
        within = r.detail["within"]
        if within is not None and mx is not None and mx > within:
            assert r.verdict is Verdict.VIOLATED, text

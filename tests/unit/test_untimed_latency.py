"""A latency on a spec without `time` (NOTE(latency) in spec/ir.py, checker/api/untimed_latency.py;
docs/timed.md "A latency on an untimed spec"): with `cost` retired, a latency is elapsed time in
the one timed semantics, where an untimed action is `0..` and may wait forever. Every engine that
decides one gives the zone engine's answer (max 0 where every start is a `to`-state, else
unbounded with a lasso that stays while time passes; min 0 where `to` is reachable), with a
warning; the engines without clocks say `unknown`. Checked against the discrete-time reference of
timed specs (tests/reference/timed.py) on random untimed specs, and against the same spec made
timed with `time 0..` (the same behaviours)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.api.for_all import verify_for_all
from gpcheck.checker.cli.command import main
from gpcheck.spec import load_source
from tests.quality.timed_differential import _check_measure, gen_spec
from tests.reference.timed import explore, load_timed, replay_timed

SPEC = """model u
var st: 0..3 = 0
fair action go { require st == 0
  st = 1 }
fair action done { require st == 1
  st = 2 }
action back { require st == 2
  st = 0 }
action stray { require st == 1
  st = 3 }
latency lat: from st == 1 to st == 2
latency capped: from st == 1 to st == 2 within 5
latency zero: from st == 2 to st >= 2
latency never: from st == 3 to st == 0
latency nostart: from st == 9 to st == 0
allow deadlock
"""


def run(src: str = SPEC, **kw):
    return verify(load_source(src, "u.gpspec"), **kw)


def _numbers(rep, name: str) -> tuple[str, int | None, int | None]:
    r = rep.result(name)
    return r.verdict.value, r.detail.get("min"), r.detail.get("max")


def test_the_explicit_engine_answers_in_the_timed_semantics():
    rep = run()
    assert _numbers(rep, "lat") == ("violated", 0, None)  # time may pass in st == 1 forever
    assert _numbers(rep, "capped") == ("violated", 0, None)
    assert _numbers(rep, "zero") == ("proved", 0, 0)  # every start is a `to`-state
    assert _numbers(rep, "never") == ("violated", None, None)  # `to` is never reached after a start
    nostart = rep.result("nostart")
    assert nostart.verdict is Verdict.PROVED and nostart.detail["starts"] == 0
    lat = rep.result("lat")
    assert lat.engine == "timed" and "no clock" in lat.detail["decided_by"]
    assert "time-divergent" in lat.detail["unbounded"]
    # the lasso: reach the start, then stay there (its loop is the last state) while time passes
    steps, loop = lat.counterexample.steps, lat.counterexample.loop
    assert steps[lat.detail["start"]].state["st"] == 1 and loop == len(steps) - 1
    assert [s.time for s in steps] == [0] * len(steps)
    # the min witness reaches `to` at once
    mc = lat.detail["min_counterexample"]["steps"]
    assert mc[-1]["state"]["st"] == 2 and mc[-1]["time"] == 0
    # safety is the explicit search's, unchanged, and one warning says why the latencies are degenerate
    assert rep.result("range").engine == "explicit" and rep.states == 4
    assert any("the spec has no `time`" in w and "gpcheck docs timed" in w for w in rep.warnings)


def test_no_warning_without_a_latency_or_on_a_timed_spec():
    assert not any("no `time`" in w for w in run(properties=["range"]).warnings)
    timed = SPEC.replace("fair action done {", "fair action done time 2..4 {")
    rep = run(timed)
    assert not any("no `time`" in w for w in rep.warnings)
    assert _numbers(rep, "lat")[0] == "violated"  # `stray` and `go` still wait forever: no deadline on them


def test_the_same_answers_as_the_spec_made_timed_with_no_bounds():
    """`time 0..` on one action makes the spec timed (the zone engine's whole path, no clock that
    constrains anything): the same behaviours, so the same numbers and verdicts."""
    plain = run()
    timed = run(SPEC.replace("action back {", "action back time 0.. {"))
    for name in ("lat", "capped", "zero", "never", "nostart"):
        assert _numbers(plain, name) == _numbers(timed, name), name


@pytest.mark.parametrize("core", ["python", pytest.param("compiled", marks=pytest.mark.slow)])  # 20 s: numba's compile
def test_both_cores_give_the_zone_engines_answer(core):
    if core == "compiled":
        pytest.importorskip("numba")
    rep = run(core=core)
    assert _numbers(rep, "lat") == ("violated", 0, None) and _numbers(rep, "zero") == ("proved", 0, 0)


def test_the_device_path_gives_the_same_answer():
    pytest.importorskip("numpy")
    from gpcheck.checker.api.device_run import run_device
    from gpcheck.checker.engines.explicit.explicit import Limits

    model = load_source(SPEC, "u.gpspec")
    names = {p.name for p in model.latencies} | {"range"}
    rep = run_device(model, names, Limits(), device="host")
    cpu = run()
    for name in ("lat", "capped", "zero", "never", "nostart"):
        assert _numbers(rep, name) == _numbers(cpu, name), name
    assert rep.result("lat").counterexample.to_json() == cpu.result("lat").counterexample.to_json()
    assert any("the spec has no `time`" in w for w in rep.warnings)


@pytest.mark.parametrize("engine", ["bmc", "kind", "pdr"])
def test_the_z3_engines_say_unknown_and_keep_it_out_of_the_exit_code(engine, tmp_path: Path, capsys):
    r = run(engine=engine).result("lat")
    assert r.verdict is Verdict.UNKNOWN and "zone engine" in r.reason and r.detail.get("not_checked")
    f = tmp_path / "u.gpspec"
    f.write_text(SPEC)
    assert main(["verify", str(f), "--engine", engine, "--property", "range"]) == 0
    assert main(["verify", str(f), "--engine", engine, "--property", "lat"]) == 3  # named: it counts
    capsys.readouterr()


def test_a_timed_specs_latency_under_bmc_says_why_too():
    """bmc no longer bounds latencies (its sequential-cost unrolling went with `cost`): on a timed
    spec it answers like kind and pdr, `unknown` and not checked unless named."""
    r = run(SPEC.replace("fair action done {", "fair action done time 2..4 {"), engine="bmc", depth=4).result("lat")
    assert r.verdict is Verdict.UNKNOWN and "zone engine" in r.reason and r.detail.get("not_checked")


def test_auto_takes_the_zone_engines_answer_or_its_reason():
    assert _numbers(run(engine="auto"), "lat") == ("violated", 0, None)
    r = run(engine="auto", max_states=1).result("lat")
    assert r.verdict is Verdict.UNKNOWN and r.reason  # the zone engine's own limit; no Z3 engine computes one


def test_for_all_refutes_at_a_size_as_the_explicit_engine_does(tmp_path: Path):
    f = tmp_path / "n.gpspec"
    f.write_text("model n\nconst N = 2\nvar x: 0..N = 0\nfair action inc { require x < N\n x = x + 1 }\n"
                 "allow deadlock\ninvariant le: x <= N\nlatency up: from x == 0 to x == N\n")
    rep = verify_for_all(f, ["N"], {"N": 1}, properties=["up", "le"], timeout=120)
    up = rep.result("up")
    assert up.verdict is Verdict.VIOLATED and up.detail.get("max") is None
    size = up.detail["instance"]["N"]
    assert _numbers(verify(load_source(f.read_text(), "n.gpspec", {"N": size})), "up") == ("violated", 0, None)


def test_json_and_text(tmp_path: Path, capsys):
    f = tmp_path / "u.gpspec"
    f.write_text(SPEC)
    assert main(["verify", str(f), "--json", "--property", "capped"]) == 1
    r = json.loads(capsys.readouterr().out)["results"][0]
    assert {k: r[k] for k in ("property", "kind", "verdict", "min", "max", "within")} == {
        "property": "capped", "kind": "latency", "verdict": "violated", "min": 0, "max": None, "within": 5}
    assert r["counterexample"]["loop"] is not None
    assert main(["verify", str(f), "--property", "zero"]) == 0
    out = capsys.readouterr()
    assert "min 0, max 0" in out.out and "the spec has no `time`" in out.err + out.out


# ------------------------------------------------------------------ against the discrete-time reference
def untimed_spec(seed: int) -> str:
    """A random spec of tests/quality/timed_differential.py with every `time` and `urgent` dropped."""
    text = gen_spec(random.Random(seed))
    text = re.sub(r" time [^{]*\{", " {", text)
    return text.replace("urgent ", "")


def compare_latencies(text: str) -> list[str]:
    """Every disagreement on the latencies of `text` between the explicit engine and the
    discrete-time reference (tests/reference/timed.py): verdict, exact min and max, and each
    witness replayed in discrete time (the checks of tests/quality/timed_differential.py)."""
    tm = load_timed(text)
    ref = explore(tm)
    rep = verify(load_source(text, "tgen.gpspec"))
    problems = []
    for name, p, q, within in tm.m.latencies:
        r = rep.result(name)
        starts, lo, hi = ref.latencies[name]
        d = r.detail
        if not starts:
            if r.verdict is not Verdict.PROVED or d.get("starts") != 0:
                problems.append(f"{name}: no start in the reference, engine {r.verdict.value} {d}")
            continue
        emax = None if d.get("unbounded") else d.get("max")
        if (d.get("min"), emax) != (lo, hi):
            problems.append(f"{name}: engine min {d.get('min')} max {emax}, reference min {lo} max {hi}")
            continue
        want = "violated" if hi is None or (within is not None and hi > within) else "proved"
        if r.verdict.value != want:
            problems.append(f"{name}: engine {r.verdict.value}, reference {want}")
        if r.counterexample is not None:
            cex = r.counterexample.to_json()
            if hi is None:
                got = replay_timed(tm, cex)
                if isinstance(got, str) or got[0][-1] != got[0][r.counterexample.loop]:
                    problems.append(f"{name} lasso: {got if isinstance(got, str) else 'the loop does not close'}")
            else:
                problems += [w for w in [_check_measure(tm, cex, d["start"], hi, p, q, f"{name} max")] if w]
        if lo is not None and "min_counterexample" in d:
            problems += [w for w in [_check_measure(tm, d["min_counterexample"], d["min_start"], lo, p, q,
                                                    f"{name} min")] if w]
    return problems


@pytest.mark.parametrize("seed", range(12))
def test_untimed_specs_agree_with_the_reference(seed):
    text = untimed_spec(seed)
    assert " time " not in text and "urgent" not in text and "latency " in text
    problems = compare_latencies(text)
    assert not problems, text + "\n" + "\n".join(problems)


@pytest.mark.long
def test_untimed_specs_agree_with_the_reference_long_run():
    for seed in range(12, 500):
        text = untimed_spec(seed)
        problems = compare_latencies(text)
        assert not problems, text + "\n" + "\n".join(problems)


def test_a_latency_past_64_bits_is_exact_or_unknown_never_wrapped():
    """Issue 38's two steps of 2^62, timed (the int64 kernels went with `cost`): the zone engine
    adds Python integers; past its measuring clock's cap it says `unknown`, never a wrong number."""
    src = ("model big\nconst BIG = 4611686018427387904\nvar x: 0..2 = 0\naction a time BIG { require x == 0\n x = 1 }\n"
           "action b time BIG { require x == 1\n x = 2 }\nallow deadlock\nlatency l: from x == 0 to x == 2 within 5\n")
    r = run(src).result("l")
    if r.verdict is Verdict.UNKNOWN:
        assert "exceeds" in r.reason
    else:
        assert (r.verdict, r.detail["min"], r.detail["max"]) == (Verdict.VIOLATED, 2 ** 63, 2 ** 63)

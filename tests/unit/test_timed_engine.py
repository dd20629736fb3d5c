"""The zone engine (checker/engines/timed/) on the issue's acceptance examples: overlapping durations,
a drain racing a timeout, a 1 s slice in microseconds; time stamps in the reports; engines that
do not know time say so."""

from __future__ import annotations

import json
import time

import pytest

from gpcheck.checker import verify
from gpcheck.checker.cli.command import main
from gpcheck.checker.engines.timed import dbm
from gpcheck.checker.core.verdict import Verdict
from gpcheck.spec import load_source

SAVES = """model saves
const SAVE = 5
const Q = 2
var saved: [0..Q - 1] -> bool = [false, false]
var req: bool = false
var done: bool = false
action request { require not req  req = true }
action save(q: 0..Q - 1) time SAVE { require req and not saved[q]  saved[q] = true }
urgent action finish { require all q in 0..Q - 1: saved[q]  require not done  done = true }
terminal: done
invariant not_done: not done
latency preempt: from req to done within SAVE
"""

RACE = """model race
const DRAIN_MIN = 2
const DRAIN_MAX = 8
const TIMEOUT = 5
enum Phase { Idle, Draining, Drained, Reset }
var ph: Phase = Idle
action preempt { require ph == Idle  ph = Draining }
action drain time DRAIN_MIN..DRAIN_MAX { require ph == Draining  ph = Drained }
action timeout time TIMEOUT { require ph == Draining  ph = Reset }
invariant no_reset: ph != Reset
terminal: ph == Drained or ph == Reset
latency stop: from ph == Draining to ph == Drained or ph == Reset
"""

SLICE = """model slice
const SLICE = 1000000
var cur: 0..2 = 0
var switches: 0..3 = 0
var work: [0..2] -> 0..5 = [0, 0, 0]
action run(i: 0..2) time 1..200 { require cur == i and work[i] < 5  work[i] = work[i] + 1 }
action timeslice time SLICE { require switches < 3  cur = (cur + 1) % 3  switches = switches + 1 }
allow deadlock
latency first_turn: from cur == 0 and switches == 0 to cur == 1 within SLICE
latency turn: from cur == 0 to cur == 1
"""


def _saves(q: int) -> str:
    return SAVES.replace("const Q = 2", f"const Q = {q}").replace("[false, false]", "[" + ", ".join(["false"] * q) + "]")


@pytest.mark.parametrize("q", [2, 3])
def test_overlapping_saves_take_save_not_q_times_save(q):
    r = verify(load_source(_saves(q)))
    lat = r.result("preempt")
    assert lat.verdict is Verdict.PROVED, lat
    assert (lat.detail["min"], lat.detail["max"]) == (5, 5)
    cex = r.result("not_done").counterexample
    assert cex is not None
    times = [s.time for s in cex.steps]
    assert times[0] == 0 and times[-1] == 5  # every save done by t = 5, in parallel
    assert [s.action for s in cex.steps].count("save") == q


def test_saves_in_sequence_would_take_twice_as_long_when_urgent_work_serialises_them():
    # the same saves, but one save engine: a save may start only when the other is done
    text = _saves(2).replace("require req and not saved[q]", "require req and not saved[q] and (q == 0 or saved[0])")
    lat = verify(load_source(text)).result("preempt")
    assert lat.verdict is Verdict.VIOLATED and (lat.detail["min"], lat.detail["max"]) == (10, 10)
    steps = lat.counterexample.steps
    assert steps[-1].time - steps[lat.detail["start"]].time == 10


def test_drain_racing_a_timeout_is_violated_or_proved_by_the_bounds():
    late = verify(load_source(RACE))
    r = late.result("no_reset")
    assert r.verdict is Verdict.VIOLATED
    assert [(s.action, s.time) for s in r.counterexample.steps] == [(None, 0), ("preempt", 0), ("timeout", 5)]
    assert (late.result("stop").detail["min"], late.result("stop").detail["max"]) == (2, 5)
    tie = verify(load_source(RACE.replace("DRAIN_MAX = 8", "DRAIN_MAX = 5")))
    assert tie.result("no_reset").verdict is Verdict.VIOLATED  # both may fire at t = 5
    early = verify(load_source(RACE.replace("DRAIN_MAX = 8", "DRAIN_MAX = 4")))
    assert early.result("no_reset").verdict is Verdict.PROVED
    assert (early.result("stop").detail["min"], early.result("stop").detail["max"]) == (2, 4)


def test_a_one_second_slice_in_microseconds_is_exact_without_state_blow_up():
    t0 = time.monotonic()
    r = verify(load_source(SLICE))
    took = time.monotonic() - t0
    first = r.result("first_turn")
    assert first.verdict is Verdict.PROVED and (first.detail["min"], first.detail["max"]) == (10**6, 10**6)
    turn = r.result("turn")  # after the third switch cur is 0 for ever: unbounded, a lasso
    assert turn.verdict is Verdict.VIOLATED and turn.detail["max"] is None and turn.detail["unbounded"]
    assert turn.counterexample.loop == len(turn.counterexample.steps) - 1
    assert r.timed["zones"] < 100 and r.states == r.timed["discrete_states"] < 100
    for other in ("10000", "10000000"):  # the constant's size costs nothing
        assert verify(load_source(SLICE.replace("1000000", other))).timed == r.timed
    assert took < 30


def test_time_stamps_in_text_and_json(tmp_path, capsys):
    p = tmp_path / "race.gpspec"
    p.write_text(RACE)
    assert main(["verify", str(p)]) == 1
    out = capsys.readouterr().out
    assert "timeout  @ t=5" in out and "initial state  @ t=0" in out
    assert main(["verify", str(p), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    steps = doc["results"][0]["counterexample"]["steps"]
    assert [s["time"] for s in steps] == [0, 0, 5]
    assert doc["timed"]["discrete_states"] == doc["states"] and doc["timed"]["zones"] >= doc["states"]


@pytest.mark.parametrize("engine", ["bmc", "kind", "pdr"])
def test_engines_without_time_check_the_untimed_abstraction(engine):
    """checker/api/timed_abstraction.py (tests/unit/test_timed_abstraction.py): never silently untimed."""
    r = verify(load_source(RACE), engine=engine)
    assert [s.time for s in r.result("no_reset").counterexample.steps] == [0, 0, 5]
    assert r.result("deadlock").detail["time"] == "proved for every timing (untimed abstraction)"
    lat = r.result("stop")
    assert lat.verdict is Verdict.UNKNOWN and "does not handle time" in lat.reason
    assert r.exit_code == 1


def test_bad_bounds_at_run_time_are_a_range_violation():
    text = RACE.replace("time DRAIN_MIN..DRAIN_MAX", "time 3..DRAIN_MAX - 6")
    r = verify(load_source(text)).result("range")
    assert r.verdict is Verdict.VIOLATED and "below the lower bound" in r.detail["error"]


def test_untimed_spec_still_runs_the_explicit_engine():
    text = RACE.replace(" time DRAIN_MIN..DRAIN_MAX", "").replace(" time TIMEOUT", "")
    r = verify(load_source(text))
    # a latency is elapsed time even here: the zone engine's (checker/api/untimed_latency.py), the rest explicit
    assert r.timed is None and all(x.engine == ("timed" if x.kind == "latency" else "explicit") for x in r.results)
    assert "time" not in json.dumps(r.result("no_reset").counterexample.to_json()["steps"][0])


def test_dbm_closure_emptiness_and_extrapolation():
    n = 3
    d = dbm.zero(n)
    dbm.free(d, n, 2)
    dbm.up(d, n)
    assert dbm.constrain(d, n, 1, 0, dbm.le(5))  # x1 <= 5
    assert dbm.constrain(d, n, 0, 2, dbm.le(-3))  # x2 >= 3
    assert dbm.upper(d, n, 1) == 5 and dbm.lower(d, n, 2) == 3
    e = list(d)
    assert not dbm.constrain(e, n, 0, 1, dbm.le(-6))  # x1 >= 6: empty
    big = list(d)
    dbm.extrapolate(big, n, [0, 4, 2])  # x1 <= 5 is above 4: dropped; x2 >= 3 becomes x2 > 2
    assert dbm.upper(big, n, 1) is None and dbm.lower(big, n, 2) == 2 and dbm.is_strict(big[2])
    assert dbm.includes(big, d) and not dbm.includes(d, big)


def test_itf_and_perfetto_carry_time_and_overlapping_durations(tmp_path):
    p = tmp_path / "saves.gpspec"
    p.write_text(_saves(3))
    perf, itf = tmp_path / "w.json", tmp_path / "w.itf.json"
    assert main(["verify", str(p), "--property", "not_done", "--perfetto", str(perf), "--itf", str(itf)]) == 1
    events = json.loads(perf.read_text())["traceEvents"]
    saves = [e for e in events if e.get("cat") == "duration" and e["name"].startswith("save")]
    assert len(saves) == 3 and {(e["ts"], e["dur"]) for e in saves} == {(0.0, 5.0)}
    assert len({e["tid"] for e in saves}) == 3  # one track each: they overlap on screen
    metas = [s["#meta"] for s in json.loads(itf.read_text())["states"]]
    assert [m["time"] for m in metas] == [0, 0, 5, 5, 5, 5]
    assert [m.get("since") for m in metas] == [None, None, 0, 0, 0, 5]


DEMO = "docs/timed/cwsr_parallel.gpspec"


def test_retimed_cwsr_saves_queues_in_parallel():
    r = verify(DEMO, consts={"N": 1, "L": 1})
    assert all(x.verdict is Verdict.PROVED for x in r.results), r.results
    assert (r.result("rt_preempt_latency").detail["min"], r.result("rt_preempt_latency").detail["max"]) == (5, 5)
    assert (r.result("be_resume_delay").detail["min"], r.result("be_resume_delay").detail["max"]) == (10, 10)


def test_retimed_cwsr_three_queues_still_take_one_save():
    # 5 s of CPU since urgent instances lost their clocks and zones keep only the active ones (30 s before)
    r = verify(DEMO, consts={"N": 1, "L": 1, "Q": 3})
    assert r.result("rt_preempt_latency").detail["max"] == 5
    assert r.result("be_resume_delay").detail["max"] == 10


@pytest.mark.long
def test_retimed_cwsr_at_full_size():
    r = verify(DEMO)  # Q = 2, N = 2, L = 3: 3,177 discrete states, 5,179 zones, 36 s of CPU (127 s before)
    assert (r.result("rt_preempt_latency").detail["min"], r.result("rt_preempt_latency").detail["max"]) == (5, 5)
    assert r.result("be_resume_delay").detail["max"] == 10

"""Engines without clocks on a timed spec (checker/api/timed_abstraction.py): bmc, kind, pdr and
--for-all check the untimed abstraction; a proof holds for every timing, a violation is confirmed
with a timing (path.py) or `unknown`, liveness and latencies are `unknown`."""

from __future__ import annotations

import json

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.api.for_all import verify_for_all
from gpcheck.checker.api.timed_abstraction import PROVED_NOTE, untimed
from gpcheck.checker.cli.command import main
from gpcheck.spec import load_source
from tests.recheck import write_spec

# N workers, each done within 3; a watchdog due at WD unless all are done.
WATCH = """model watch
const N = 2
const WD = 5
var w: [0..N-1] -> 0..1 = 0
var fired: bool = false
action work(k: 0..N-1) time 1..3 { require w[k] == 0  w[k] = 1 }
action watchdog time WD { require not fired and (any k in 0..N-1: w[k] == 0)  fired = true }
fair action rest { require fired or (all k in 0..N-1: w[k] == 1)  fired = fired }
invariant bounded: all k in 0..N-1: w[k] <= 1
invariant no_watchdog: not fired
liveness done: eventually (all k in 0..N-1: w[k] == 1)
latency finish: from true to (all k in 0..N-1: w[k] == 1)
"""


def _watch(wd: int) -> str:
    return WATCH.replace("const WD = 5", f"const WD = {wd}")


@pytest.mark.parametrize("engine", ["bmc", "kind", "pdr"])
def test_untimed_engines_prove_for_every_timing_and_confirm_violations(engine):
    r = verify(load_source(_watch(2)), engine=engine)  # the watchdog at 2 beats a worker that takes 3
    assert r.result("bounded").verdict in (Verdict.PROVED, Verdict.HOLDS_TO_BOUND)
    assert r.result("bounded").detail["time"].endswith("(untimed abstraction)")
    assert r.result("deadlock").verdict in (Verdict.PROVED, Verdict.HOLDS_TO_BOUND)
    v = r.result("no_watchdog")
    assert v.verdict is Verdict.VIOLATED and v.engine == engine
    times = [s.time for s in v.counterexample.steps]
    assert times[0] == 0 and times[-1] == 2 and v.counterexample.steps[-1].action == "watchdog"
    for name in ("done", "finish"):
        x = r.result(name)
        assert x.verdict is Verdict.UNKNOWN and "does not handle time" in x.reason
    assert r.exit_code == 1


@pytest.mark.parametrize("engine", ["bmc", "pdr"])
def test_a_violation_only_untimed_is_unknown(engine):
    r = verify(load_source(_watch(5)), engine=engine)  # every worker is done by 3: no watchdog
    v = r.result("no_watchdog")
    assert v.verdict is Verdict.UNKNOWN and v.counterexample is None
    assert "needs a timing the model forbids" in v.reason and "zone engine" in v.reason
    assert verify(load_source(_watch(5))).result("no_watchdog").verdict is Verdict.PROVED  # the zone engine
    assert r.exit_code == 3


def test_range_needs_bounds_that_cannot_fail():
    stateful = _watch(2).replace("time WD {", "time (if fired then 1 else WD) {")
    r = verify(load_source(stateful), engine="pdr").result("range")
    assert r.verdict is Verdict.UNKNOWN and "depend on the state" in r.reason
    assert verify(load_source(_watch(2)), engine="pdr").result("range").detail["time"] == PROVED_NOTE


def test_the_abstraction_drops_only_time():
    m = load_source(WATCH)
    u = untimed(m)
    assert m.has_time and not u.has_time
    assert [a.name for a in u.actions] == [a.name for a in m.actions] and u.invariants == m.invariants


def test_json_says_how_time_was_handled(tmp_path, capsys):
    p = write_spec(tmp_path, _watch(2))
    assert main(["verify", str(p), "--engine", "kind", "--property", "bounded", "--property", "no_watchdog",
                 "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    res = {r["property"]: r for r in doc["results"]}
    assert res["bounded"]["detail"]["time"] == PROVED_NOTE
    assert [s["time"] for s in res["no_watchdog"]["counterexample"]["steps"]][-1] == 2


def test_for_all_on_a_timed_spec(tmp_path):
    p = write_spec(tmp_path, _watch(2))
    r = verify_for_all(p, ["N"], {"N": 1}, properties=["bounded", "no_watchdog"], timeout=60)
    assert r.result("bounded").verdict is Verdict.PROVED and r.result("bounded").detail["time"] == PROVED_NOTE
    v = r.result("no_watchdog")
    assert v.verdict is Verdict.VIOLATED and v.counterexample.steps[-1].time == 2 and "instance" in v.detail
    q = write_spec(tmp_path, _watch(5), "watch5.gpspec")
    v = verify_for_all(q, ["N"], {"N": 1}, properties=["no_watchdog"], timeout=60).result("no_watchdog")
    assert v.verdict is Verdict.UNKNOWN and "needs a timing the model forbids" in v.reason


def test_a_confirmed_counterexample_carries_time_into_itf_and_perfetto(tmp_path, capsys):
    p = write_spec(tmp_path, _watch(2))
    perf, itf = tmp_path / "w.json", tmp_path / "w.itf.json"
    assert main(["verify", str(p), "--engine", "bmc", "--property", "no_watchdog", "--perfetto", str(perf),
                 "--itf", str(itf)]) == 1
    assert "watchdog  @ t=2" in capsys.readouterr().out
    metas = [s["#meta"] for s in json.loads(itf.read_text())["states"]]
    assert [m["time"] for m in metas] == [0, 2]
    events = json.loads(perf.read_text())["traceEvents"]
    assert any(e.get("name", "").startswith("watchdog") and e.get("dur") == 2.0 for e in events)


def test_bmc_bound_carries_over_as_a_bound():
    from gpcheck.checker.api.timed_abstraction import BOUNDED_NOTE

    r = verify(load_source(_watch(2)), engine="bmc", depth=4, properties=["bounded"]).result("bounded")
    assert r.verdict is Verdict.HOLDS_TO_BOUND and r.bound == 4 and r.detail["time"] == BOUNDED_NOTE

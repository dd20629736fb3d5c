"""Liveness in the timed semantics (checker/engines/timed/liveness.py): deadlines make "eventually" hold
where fairness alone would be needed; time-divergent behaviours that avoid the goal are violations
with a lasso whose loop takes time; Zeno loops are no witness; untimed fair actions keep weak
fairness."""

from __future__ import annotations

import json

from gpcheck.checker import verify
from gpcheck.checker.core.verdict import Verdict
from gpcheck.spec import load_source

BASE = """model m
var x: 0..2 = 0
action go {ACTION} {{ require x == 0  x = 1 }}
action end time 1..3 {{ require x == 1  x = 2 }}
terminal: x == 2
liveness done: eventually x == 2
liveness resp: x == 1 leads_to x == 2
"""


def _run(text: str, *props: str):
    return verify(load_source(text, "t.gpspec"), properties=list(props) or None)


def test_deadline_makes_eventually_hold():
    r = _run(BASE.format(ACTION="time 0..5"), "done", "resp")
    assert r.result("done").verdict is Verdict.PROVED and r.result("resp").verdict is Verdict.PROVED


def test_no_deadline_no_fairness_lets_time_diverge_before_the_goal():
    r = _run(BASE.format(ACTION="time 2.."), "done", "resp")
    done = r.result("done")
    assert done.verdict is Verdict.VIOLATED and done.engine == "timed"
    cex = done.counterexample
    assert cex is not None and cex.loop == len(cex.steps) - 1  # time passes for ever in x == 0
    assert r.result("resp").verdict is Verdict.PROVED  # once x == 1, `end` must fire by 3


def test_weak_fairness_still_counts_for_untimed_actions():
    text = BASE.format(ACTION="time 2..").replace("action go", "fair action go")
    assert _run(text, "done").result("done").verdict is Verdict.PROVED


def test_a_zeno_loop_is_no_witness_but_a_timed_one_is():
    zeno = """model z
var x: 0..1 = 0
var y: 0..1 = 0
urgent action flip { require y == 0  x = 1 - x }
action stop time 4 { require y == 0  y = 1 }
terminal: y == 1
liveness ends: eventually y == 1
"""
    assert _run(zeno, "ends").result("ends").verdict is Verdict.PROVED  # flip forever takes no time
    timed = zeno.replace("urgent action flip", "action flip time 1").replace("action stop time 4", "action stop time 4..")
    r = _run(timed, "ends").result("ends")
    assert r.verdict is Verdict.VIOLATED
    cex = r.counterexample
    assert cex is not None and cex.loop is not None and cex.loop < len(cex.steps) - 1
    times = [s.time for s in cex.steps]
    assert times == sorted(times) and times[-1] > times[cex.loop]  # the loop takes time


# ------------------------------------------------------------------ commands without clocks

SAVES = """model saves
const SAVE = 5
var saved: [0..1] -> bool = [false, false]
var req: bool = false
action request { require not req  req = true }
action save(q: 0..1) time SAVE { require req and not saved[q]  saved[q] = true }
terminal: saved[0] and saved[1]
latency preempt: from req to saved[0] and saved[1] within 5
"""


def test_sweep_decides_a_timed_spec_in_the_timed_semantics(tmp_path, capsys, in_process_cluster):
    # the sweep's command path with each combination checked in this process (the local Dask
    # cluster, seconds of processor time to start, is tests/unit/test_sweep.py's)
    from gpcheck.checker.cli.command import main

    spec = tmp_path / "saves.gpspec"
    spec.write_text(SAVES)
    assert main(["sweep", str(spec), "--const", "SAVE=5,6", "--json"]) == 1  # SAVE=6 breaks `within 5`
    runs = json.loads(capsys.readouterr().out)["runs"]
    lat = [next(r for r in run["results"] if r["property"] == "preempt") for run in runs]
    assert [(r["engine"], r["verdict"], r["max"]) for r in lat] == [("timed", "proved", 5), ("timed", "violated", 6)]


def test_liveness_past_its_zone_limit_is_unknown_saying_so():
    r = verify(load_source(BASE.format(ACTION="time 2.."), "t.gpspec"), properties=["done"], max_states=3)
    done = r.result("done")
    assert done.verdict is Verdict.UNKNOWN and "zone" in (done.reason or "")

"""`gpcheck simulate` on a timed spec (checker/engines/timed/simulate.py): integer-time random
behaviours, a time stamp on every step, deterministic per seed; each behaviour is one the timed
semantics admits (path.py with every stamp fixed)."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from gpcheck.checker.cli.command import main
from gpcheck.checker.engines.timed.path import path_timing
from gpcheck.checker.engines.timed.simulate import simulate_timed
from gpcheck.gpmodel import compile_model
from gpcheck.spec import load_source, load_spec
from tests.recheck import write_spec
from tests.unit.test_timed_abstraction import _watch
from tests.unit.test_timed_path import RACE

ROOT = Path(__file__).resolve().parents[2]


def _admitted(cm, seed: int, steps: int) -> list:  # type: ignore[no-untyped-def]
    run = list(simulate_timed(cm, steps, random.Random(seed)))
    iids = [st.iid for st in run[1:]]
    pt = path_timing(cm, run[0].state, iids, fixed={k: st.time for k, st in enumerate(run)})
    assert pt.feasible, (seed, pt.reason)
    assert pt.states == [st.state for st in run] and pt.since == [st.since for st in run]
    return run


@pytest.mark.parametrize("src", [RACE, _watch(2), _watch(5)])
def test_every_simulated_behaviour_is_a_timed_one(src):
    cm = compile_model(load_source(src))
    for seed in range(30):
        _admitted(cm, seed, 12)


def test_the_demonstrator_runs_with_overlapping_saves_and_urgent_steps():
    cm = compile_model(load_spec(str(ROOT / "docs" / "timed" / "cwsr_parallel.gpspec")))
    for seed in range(5):
        run = _admitted(cm, seed, 60)
        assert run[-1].time > 0


def test_deadlines_are_kept():
    cm = compile_model(load_source(_watch(5)))  # every worker within 3: the watchdog at 5 never fires
    for seed in range(40):
        assert all(cm.instances[st.iid].action.name != "watchdog" for st in simulate_timed(cm, 10, random.Random(seed))
                   if st.iid is not None)


def test_simulate_writes_time_stamps_in_every_format(tmp_path, capsys):
    p = write_spec(tmp_path, _watch(2))
    out = tmp_path / "w.jsonl"
    assert main(["simulate", str(p), "--steps", "5", "--seed", "3", "--out", str(out)]) == 1
    text = capsys.readouterr().out
    first = out.read_bytes()
    lines = [json.loads(x) for x in first.splitlines()]
    assert lines[0]["timed"] is True and all("time" in e["meta"] for e in lines[1:])
    times = [e["meta"]["time"] for e in lines[1:]]
    assert times == sorted(times) and f"time {times[-1]}" in text
    assert "the trace ends there" in text and "gpcheck replay" not in text  # replay refuses a timed spec
    assert main(["simulate", str(p), "--steps", "5", "--seed", "3", "--out", str(out)]) == 1
    assert out.read_bytes() == first  # deterministic per seed
    capsys.readouterr()
    gz = tmp_path / "w.jsonl.gz"
    assert main(["simulate", str(p), "--steps", "5", "--seed", "3", "--out", str(gz), "--observe", "none",
                 "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["runs"][0]["time"] == times[-1]
    events = [json.loads(x) for x in gzip.decompress(gz.read_bytes()).splitlines()[1:]]
    assert [e["meta"]["time"] for e in events] == times and all("state" not in e for e in events)


def test_an_untimed_spec_simulates_as_before(tmp_path, capsys):
    src = RACE.replace(" time DRAIN_MIN..DRAIN_MAX", "").replace(" time TIMEOUT", "").replace("urgent ", "")
    p = write_spec(tmp_path, src)
    out = tmp_path / "u.jsonl"
    main(["simulate", str(p), "--steps", "5", "--out", str(out), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert "time" not in doc["runs"][0]
    assert all("meta" not in json.loads(x) and "timed" not in json.loads(x) for x in out.read_bytes().splitlines())

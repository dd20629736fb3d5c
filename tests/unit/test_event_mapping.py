"""Event mappings (docs/event-mapping.md): recorded GPU runs replayed against mechanism models
through `MODEL.map.toml`, altered real traces that must not conform, timings and calibrate, and
the mapping file's located errors."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from gpcheck.checker.cli.command import main
from gpcheck.spec import load_spec
from gpcheck.traces.mapping import MappingError, check_against, load_mapping, parse_mapping

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "traces" / "corpus" / "real"
MODELS = ROOT / "spec" / "models"


# `--no-timing`: these tests check the discrete mapping; the re-timed models' bounds against the
# recordings' stamps are tests/unit/test_timing_conformance.py's
def _replay(capsys: pytest.CaptureFixture[str], trace: Path | str, model: str, *extra: str) -> tuple[int, dict]:
    rc = main(["replay", str(trace), "--model", str(MODELS / f"{model}.gpspec"), "--map", "--json",
               "--no-progress", *extra, "--no-timing"])
    return rc, json.loads(capsys.readouterr().out)


def _lines(trace: Path) -> list[str]:
    with gzip.open(trace, "rt") as f:
        return f.read().splitlines()


def _write(tmp: Path, name: str, lines: list[str]) -> Path:
    p = tmp / name
    p.write_text("\n".join(lines) + "\n")
    return p


def _result(out: dict, prop: str) -> dict:
    return next(r for r in out["results"] if r["property"] == prop)


# ------------------------------------------------------------------ the rewind recordings

# slow: 4 to 5 s of CPU, the lazy search through reef_rewind's first events (78 initial candidates),
# for the whole recording; test_timing_conformance.py's
# test_a_rewind_prefix_through_the_preemption_conforms_in_time replays it through the same mapping
# up to k4's second end (line 38) and asserts the same no_reexecution line and preemption_effective
@pytest.mark.slow
def test_rewind_mid_port_violates_no_reexecution_where_k4_completes_again(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _replay(capsys, REAL / "rewind_mid_port.jsonl.gz", "reef_rewind")
    assert out["verdict"] == "conforms" and rc == 1
    r = _result(out, "no_reexecution")
    assert r["verdict"] == "violated"
    line = r["detail"]["line"]
    ev = json.loads(_lines(REAL / "rewind_mid_port.jsonl.gz")[line - 1])
    # the second run of k4 ends there: its first run ended earlier in the file
    assert ev["action"] == "end" and ev["meta"]["kernel"] == "be:k4"
    before = [json.loads(x) for x in _lines(REAL / "rewind_mid_port.jsonl.gz")[1:line - 1]]
    assert sum(1 for e in before if e["action"] == "end" and e.get("meta", {}).get("kernel") == "be:k4") == 1
    assert _result(out, "preemption_effective")["verdict"] == "violated"  # k5 ran during the RT task


@pytest.mark.long
def test_rewind_after_finish_violates_no_reexecution_at_k9s_second_end(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _replay(capsys, REAL / "rewind_after_finish.jsonl.gz", "reef_rewind")
    r = _result(out, "no_reexecution")
    assert out["verdict"] == "conforms" and r["verdict"] == "violated" and rc == 1
    ev = json.loads(_lines(REAL / "rewind_after_finish.jsonl.gz")[r["detail"]["line"] - 1])
    assert ev["action"] == "end" and ev["meta"]["kernel"] == "be:k9"


@pytest.mark.long
def test_rewind_mid_reef_conforms_without_reexecution(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _replay(capsys, REAL / "rewind_mid_reef.jsonl.gz", "reef_rewind")
    assert out["verdict"] == "conforms"
    assert _result(out, "no_reexecution")["verdict"] == "holds_to_bound"
    assert _result(out, "preemption_effective")["verdict"] == "holds_to_bound"


# slow: 2.3 s of CPU, the lazy search through reef_rewind's first events (78 initial candidates);
# the same divergence through a mapping's rule, at the next kernel's start, stays in the default run
# on the other mechanisms: test_mechanism_mappings.py's xsched and blp `..._with_a_kernel_lost_...`,
# test_timeslice_with_a_kernel_lost_diverges_at_its_first_switch_out below
@pytest.mark.slow
def test_rewind_with_a_kernel_lost_diverges_at_the_next_kernels_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _lines(REAL / "rewind_mid_port.jsonl.gz")
    k2 = [i for i, x in enumerate(lines) if '"kernel":"be:k2"' in x and ('"action":"start"' in x or '"action":"end"' in x)]
    assert len(k2) == 2
    kept = [x for i, x in enumerate(lines) if i not in k2]
    start_k3 = next(i for i, x in enumerate(kept) if '"kernel":"be:k3"' in x and '"action":"start"' in x) + 1
    # only the prefix up to a few events past the divergence: keeps the test fast
    rc, out = _replay(capsys, _write(tmp_path, "lost.jsonl", kept[:start_k3 + 3]), "reef_rewind")
    assert rc == 1 and out["verdict"] == "diverges"
    d = out["divergence"]
    assert d["line"] == start_k3
    assert d["event"]["recorded"]["meta"]["kernel"] == "be:k3" and d["event"]["action"] == "launch_packet"
    assert "reef_rewind.map.toml:" in d["event"]["rule"] and d["candidates"]


# ------------------------------------------------------------------ the time-slice recording

@pytest.mark.long
def test_timeslice_two_processes_conforms_to_nvidia_tsg(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _replay(capsys, REAL / "timeslice_two_processes.jsonl.gz", "nvidia_tsg")
    assert out["verdict"] == "conforms" and rc == 0
    t = out["timings"][0]
    assert t["name"] == "switched_out" and t["samples"] == 1848 and t["violations"] == []


def test_timeslice_with_a_kernel_lost_diverges_at_its_first_switch_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _lines(REAL / "timeslice_two_processes.jsonl.gz")
    starts = [i for i, x in enumerate(lines) if '"action":"start"' in x]
    lost = starts[1]  # the second process's kernel start is lost
    pid = json.loads(lines[lost])["meta"]["pid"]
    kept = lines[:lost] + lines[lost + 1:]
    first_gap = next(i for i, x in enumerate(kept) if '"action":"gap"' in x and json.loads(x)["meta"]["pid"] == pid) + 1
    rc, out = _replay(capsys, _write(tmp_path, "lost.jsonl", kept[:first_gap + 2]), "nvidia_tsg")
    assert rc == 1 and out["divergence"]["line"] == first_gap


# ------------------------------------------------------------------ timings and calibrate

def test_a_duration_past_the_models_bound_is_a_violation_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _lines(REAL / "timeslice_two_processes.jsonl.gz")[:60]
    ev = json.loads(lines[20])
    assert ev["action"] == "gap"
    ev["meta"]["length_ns"] = 4_100_000
    lines[20] = json.dumps(ev)
    rc, out = _replay(capsys, _write(tmp_path, "slow.jsonl", lines), "nvidia_tsg")
    assert rc == 1 and out["verdict"] == "diverges"
    assert out["divergence"]["line"] == 21
    assert "takes at most 2491 us; line 21 took 4100 us" in out["divergence"]["reason"]  # SLICE_US + 2 * SWITCH_US


def test_calibrate_prints_the_fitted_constant(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["calibrate", str(REAL / "timeslice_two_processes.jsonl.gz"), "--model", str(MODELS / "nvidia_tsg.gpspec")])
    text = capsys.readouterr().out
    assert rc == 0
    assert "1848 samples" in text and "max 2485.1 us" in text
    # the slices 2059.8..2096.9 us; SLICE_US + 2 * SWITCH_US >= 2485.1 us: SWITCH_US = 195; the first
    # switch (a kernel start after the other TSG's switch-out) 176.6 us
    assert "fitted: --const SLICE_MIN_US=2059 --const SLICE_US=2097 --const SWITCH_MIN_US=176 --const SWITCH_US=195" in text
    rc = main(["calibrate", str(REAL / "timeslice_two_processes.jsonl.gz"), "--model", str(MODELS / "nvidia_tsg.gpspec"),
               "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["consts"] == {"SLICE_MIN_US": 2059, "SLICE_US": 2097, "SWITCH_MIN_US": 176, "SWITCH_US": 195}
    assert out["timings"][0]["stats_model_units"]["max"] == 2485.12


def test_a_timing_from_a_later_instant_of_its_from_event(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `from_at`: the duration opens at an instant the from event carries (a switched-out block's
    # resume: its stamp + length), not at its stamp
    spec = tmp_path / "s.gpspec"
    spec.write_text("model s\nconst RUN_US = 10\nvar n: 0..3 = 0\naction run time 0..RUN_US { require n < 3  n = n + 1 }\n")
    (tmp_path / "s.map.toml").write_text(
        'model = "s"\n[[event]]\nmatch = "gap"\naction = "run"\n'
        '[[timing]]\nname = "slice"\naction = "run"\nfrom = "gap"\nfrom_at = "t + meta.length_ns"\n'
        'to = "gap"\nupper = "RUN_US"\n')
    trace = _write(tmp_path, "t.jsonl", ['{"gpcheck_trace": 1, "model": null}',
                                          '{"action":"gap","args":{},"t":0,"meta":{"length_ns":2000}}',
                                          '{"action":"gap","args":{},"t":9000,"meta":{"length_ns":1000}}',
                                          '{"action":"gap","args":{},"t":14000,"meta":{"length_ns":0}}'])
    assert main(["calibrate", str(trace), "--model", str(spec), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    st = out["timings"][0]["stats_model_units"]
    assert (st["n"], st["min"], st["max"]) == (2, 4.0, 7.0) and out["consts"] == {"RUN_US": 7}
    e = _err('model = "x"\n[[event]]\nmatch = "a"\nignore = true\n[[timing]]\nname = "d"\naction = "a"\n'
             'event = "a"\nvalue = "meta.d"\nfrom_at = "t"\n')
    assert e.startswith("m.map.toml:10:") and "from_at" in e and "needs from and to" in e


def test_calibrate_of_the_rewind_rt_task(capsys: pytest.CaptureFixture[str]) -> None:
    traces = [str(REAL / f"rewind_{v}.jsonl.gz") for v in ("mid_reef", "mid_port", "after_finish")]
    rc = main(["calibrate", *traces, "--model", str(MODELS / "reef_rewind.gpspec"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["timings"][0]["samples"] == 3
    assert out["consts"]["RT_EXEC_US"] == 2226


# ------------------------------------------------------------------ the mapping files

@pytest.mark.parametrize("name", ["reef_rewind", "nvidia_tsg", "blp", "xsched", "cwsr", "kfd_sched"])
def test_every_bundled_mapping_loads_and_names_only_what_its_model_has(name: str) -> None:
    m = load_mapping(str(MODELS / f"{name}.map.toml"))
    check_against(m, load_spec(str(MODELS / f"{name}.gpspec")))


def _err(text: str) -> str:
    with pytest.raises(MappingError) as e:
        parse_mapping(text, "m.map.toml")
    return str(e.value)


def test_mapping_errors_are_located() -> None:
    assert _err('model = "x"\n[[event]]\nmatch = "start"\naction = "a"\nargs = { q = "1 +" }\n').startswith("m.map.toml:5:")
    assert _err('model = "x"\n[[event]]\nmatch = "start"\nwhen = "import os"\nignore = true\n').startswith("m.map.toml:4:")
    e = _err('model = "x"\n[[event]]\nmatch = "start"\nbogus = 1\n')
    assert e.startswith("m.map.toml:4:") and "unknown key 'bogus'" in e
    assert _err('model = "x"\n[[event]\n').startswith("m.map.toml:2:")
    assert "needs [[event]] rules" in _err('model = "x"\n')
    assert "ignore = true" in _err('model = "x"\n[[event]]\nmatch = "a"\n')
    # nothing the user wrote is executed: a call of anything but the listed functions is refused
    e = _err('model = "x"\n[[event]]\nmatch = "a"\nwhen = "__import__(\'os\')"\nignore = true\n')
    assert e.startswith("m.map.toml:4:") and "unknown function" in e


def test_mapping_names_are_checked_against_the_model(tmp_path: Path) -> None:
    model = load_spec(str(MODELS / "reef_rewind.gpspec"))
    text = (MODELS / "reef_rewind.map.toml").read_text()
    bad = text.replace('action = "write_packet"', 'action = "write_pakket"')
    with pytest.raises(MappingError) as e:
        check_against(parse_mapping(bad, "r.map.toml"), model)
    line = next(i for i, x in enumerate(bad.splitlines(), 1) if "[[event]]" in x and "write_pakket" in "\n".join(bad.splitlines()[i:i + 4]))
    assert str(e.value).startswith(f"r.map.toml:{line}:1: 'write_pakket' is not an action of reef_rewind")
    bad = text.replace('"run_k.0" = "index(meta.kernel)"', '"runk.0" = "index(meta.kernel)"')
    with pytest.raises(MappingError, match="has no variable 'runk'"):
        check_against(parse_mapping(bad, "r.map.toml"), model)


def test_bad_mapping_on_the_command_line_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "m.map.toml"
    p.write_text('model = "reef_rewind"\n[[event]]\nmatch = "start"\naction = "nope"\n')
    rc = main(["replay", str(REAL / "rewind_mid_reef.jsonl.gz"), "--model", str(MODELS / "reef_rewind.gpspec"),
               "--map", str(p), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and f"{p}:2:1: 'nope' is not an action of reef_rewind" in err and "Traceback" not in err


def test_an_event_no_rule_maps_is_an_input_error_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _lines(REAL / "rewind_mid_reef.jsonl.gz")[:4]
    lines.insert(2, json.dumps({"action": "ioctl_reset", "args": {}, "t": 5}))
    rc = main(["replay", str(_write(tmp_path, "x.jsonl", lines)), "--model", str(MODELS / "reef_rewind.gpspec"),
               "--map", "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and "x.jsonl:3: event 'ioctl_reset' matches no rule" in err


def test_without_map_replay_is_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["replay", str(REAL / "priority_equal.jsonl.gz"), "--model", "nvidia_streams", "--json", "--no-progress"])
    out = json.loads(capsys.readouterr().out)
    assert "timings" not in out and out["results"] and "through" not in json.dumps(out)


# ------------------------------------------------------------------ xsched: traces generated from the model

def _xsched_recording(seed: int) -> list[str]:
    """A behaviour of xsched written in the vocabulary xsched.map.toml reads: launch/start/end
    of BE kernels be:kK on stream 0, the RT kernel's start and end on stream 1 and the scheduler's
    host events."""
    import random

    from gpcheck.gpmodel import compile_model
    from gpcheck.gpmodel.simulate import simulate

    cm = compile_model(load_spec(str(MODELS / "xsched.gpspec")))
    header = {"gpcheck_trace": 1, "model": None, "constants": {},
              "source": {"format": "test", "params": {"level": 3, "n": 3, "window": 2, "rt_arrivals_ns": [0]}}}
    out = [json.dumps(header)]
    prev = None
    for i, (iid, st) in enumerate(simulate(cm, 200, random.Random(seed))):
        d = cm.layout.decode(st)
        if iid is not None:
            name = cm.instances[iid].action.name
            ev: dict | None = None
            if name == "launch":
                ev = {"action": "launch", "args": {"stream": 0}, "meta": {"kernel": f"be:k{prev['xq']}"}}
            elif name == "block_start" and prev["blk"] == 0 and not prev["live"]:
                ev = {"action": "start", "args": {"stream": 0}, "meta": {"kernel": f"be:k{d['head']}"}}
            elif name == "block_end" and d["head"] == prev["head"] + 1:
                ev = {"action": "end", "args": {"stream": 0}, "meta": {"kernel": f"be:k{prev['head']}"}}
            elif name == "rt_arrive":  # the recorder's scheduler logs its suspend
                ev = {"action": "suspend", "args": {}}
            elif name == "rt_start":  # the RT command's kernel starts on its own stream
                ev = {"action": "start", "args": {"stream": 1}, "meta": {"kernel": "rt:0"}}
            elif name == "rt_done":  # the RT kernel's end (the model's rt_done), then the host's rt_done
                out.append(json.dumps({"action": "end", "args": {"stream": 1}, "meta": {"kernel": "rt:0"}}))
                ev = {"action": "rt_done", "args": {}}
            if ev is not None:  # no time stamps: the untimed behaviour's order only (no durations to hold)
                out.append(json.dumps(ev))
        prev = d
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_xsched_behaviours_conform_through_the_mapping(seed: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _xsched_recording(seed)
    assert sum('"launch"' in x for x in lines) >= 3
    rc, out = _replay(capsys, _write(tmp_path, "x.jsonl", lines), "xsched")
    assert out["verdict"] == "conforms", out.get("divergence")


def test_xsched_with_a_launch_lost_diverges_at_the_next_launch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _xsched_recording(1)
    # k1's launch lost. (k0's first launch, undone by the RT request's abort before any block of
    # it ran, is not missed: a start observes only which kernel is the head.)
    lost = next(i for i, x in enumerate(lines) if '"action": "launch"' in x and '"be:k1"' in x)
    kept = lines[:lost] + lines[lost + 1:]
    nxt = next(i for i, x in enumerate(kept) if i >= lost and '"action": "launch"' in x) + 1
    rc, out = _replay(capsys, _write(tmp_path, "x.jsonl", kept), "xsched")
    assert rc == 1 and out["verdict"] == "diverges" and out["divergence"]["line"] <= nxt


def test_rules_translate_events_in_order_with_repeat_templates_and_first_seen() -> None:
    from gpcheck.traces.format import Event, TraceHeader
    from gpcheck.checker.engines.replay.mapped import mapped_source
    from gpcheck.checker.engines.replay.search import memory_source

    m = parse_mapping(
        'model = "m"\nunmatched = "ignore"\n'
        '[[event]]\nmatch = "start"\nlet = { p = "first_seen(meta.pid)" }\n'
        '[[event.step]]\naction = "go"\nrepeat = "meta.grid"\nvar = "b"\nargs = { i = "b" }\n'
        'observe = { "slot.{b}" = "p + 1" }\n'
        '[[event]]\nmatch = "gap"\nobserve = { "cur.{first_seen(meta.pid)}" = "index(meta.kernel)" }\n'
        '[[event]]\nmatch = "skip"\nignore = true\n', "t.map.toml")
    evs = [Event("start", {}, None, 1, {"pid": 70, "grid": 2}), Event("skip", {}), Event("other", {}),
           Event("start", {}, None, 2, {"pid": 9, "grid": 1}), Event("gap", {}, None, 3, {"pid": 70, "kernel": "A:k12"})]
    _, out = mapped_source(memory_source(TraceHeader(), evs), m, "t")()
    got = [(e.action, e.args, e.state, e.line) for e in out]
    assert got == [("go", {"i": 0}, {"slot.0": 1}, 2), ("go", {"i": 1}, {"slot.1": 1}, 2),
                   ("go", {"i": 0}, {"slot.0": 2}, 5), ("mapping_observation", {}, {"cur.0": 12}, 6)]


def test_a_field_the_event_lacks_is_an_error_at_its_line() -> None:
    from gpcheck.spec.errors import TraceError
    from gpcheck.traces.format import Event, TraceHeader
    from gpcheck.checker.engines.replay.mapped import mapped_source
    from gpcheck.checker.engines.replay.search import memory_source

    m = parse_mapping('model = "m"\n[[event]]\nmatch = "start"\naction = "go"\nargs = { i = "meta.block + 1" }\n', "t.map.toml")
    _, out = mapped_source(memory_source(TraceHeader(), [Event("start", {}, None, 1, {})]), m, "tr")()
    with pytest.raises(TraceError, match=r"tr:2: event 'start': mapping rule t.map.toml:2:1: meta.block: the event has no such field"):
        list(out)

"""The trace commands end to end: `gpcheck simulate` (determinism, runs, --no-internal),
`gpcheck replay` (exit codes 0/1/2/3, --json, --perfetto, --itf), `gpcheck export`, and
`gpcheck verify --itf/--perfetto`."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest

from gpcheck.checker.cli.command import main
from gpcheck.traces.format import read_trace
from gpcheck.traces.perfetto import validate_chrome_trace

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT.parent / "shared" / "spec-examples"
CORPUS = ROOT / "traces" / "corpus" / "sim"


@pytest.fixture()
def ring() -> str:
    if not (EXAMPLES / "ring.gpspec").exists():
        pytest.skip("no examples")
    return str(EXAMPLES / "ring.gpspec")


def test_simulate_same_seed_same_file(tmp_path, ring, capsys) -> None:
    a, b, c = (str(tmp_path / n) for n in ("a.jsonl.gz", "b.jsonl.gz", "c.jsonl.gz"))
    for out, seed in ((a, 7), (b, 7), (c, 8)):
        assert main(["simulate", ring, "--steps", "40", "--seed", str(seed), "--out", out]) == 0
    assert Path(a).read_bytes() == Path(b).read_bytes()
    assert gzip.decompress(Path(a).read_bytes()) != gzip.decompress(Path(c).read_bytes())
    h, evs = read_trace(a)
    assert h.model == "ring" and h.extra["seed"] == 7 and h.extra["logs_internal"] is True
    assert {e.action for e in evs} & {"fetch", "wave"}
    assert "24 events" in capsys.readouterr().out or evs


def test_simulate_runs_and_no_internal(tmp_path, ring, capsys) -> None:
    out = str(tmp_path / "r.jsonl")
    assert main(["simulate", ring, "--steps", "30", "--seed", "1", "--runs", "3", "--no-internal",
                 "--observe", "changed", "--out", out, "--json"]) == 0
    res = orjson.loads(capsys.readouterr().out)
    assert [r["seed"] for r in res["runs"]] == [1, 2, 3]
    for i in range(3):
        h, evs = read_trace(str(tmp_path / f"r-{i}.jsonl"))
        assert h.extra["logs_internal"] is False and h.extra["seed"] == 1 + i
        assert not {e.action for e in evs} & {"fetch", "wave", "retire"}
        assert main(["replay", str(tmp_path / f"r-{i}.jsonl"), "--model", ring]) == 0
    # run 1 of the batch is the single run with seed 2
    one = str(tmp_path / "one.jsonl")
    main(["simulate", ring, "--steps", "30", "--seed", "2", "--no-internal", "--observe", "changed", "--out", one])
    events = lambda p: Path(p).read_bytes().split(b"\n", 1)[1]  # noqa: E731  (the header names the run)
    assert events(one) == events(tmp_path / "r-1.jsonl")


def test_simulate_bad_usage(ring, tmp_path, capsys) -> None:
    assert main(["simulate", ring, "--steps", "-1", "--seed", "1", "--out", str(tmp_path / "x")]) == 2
    assert main(["simulate", "no_such_model", "--steps", "1", "--seed", "1", "--out", str(tmp_path / "x")]) == 2
    assert "no such file or bundled model" in capsys.readouterr().err


def _entry(name: str) -> dict:  # type: ignore[type-arg]
    for e in orjson.loads((CORPUS / "MANIFEST.json").read_bytes())["traces"]:
        if e["file"] == name:
            return e  # type: ignore[no-any-return]
    raise KeyError(name)


def test_replay_exit_codes(tmp_path, ring, capsys) -> None:
    spec = str((ROOT / _entry("ring-full.jsonl")["spec"]).resolve())
    assert main(["replay", str(CORPUS / "ring-full.jsonl"), "--model", spec]) == 0
    out = capsys.readouterr().out
    assert "conforms" in out and "liveness finishes: not evaluated" in out
    e = _entry("ring-bad-require.jsonl")
    assert main(["replay", str(CORPUS / e["file"]), "--model", spec]) == 1
    out = capsys.readouterr().out
    assert f"diverges at {CORPUS / e['file']}:{e['expect']['line']}" in out
    assert f"ring.gpspec:{e['expect']['require_line']}: require" in out
    assert main(["replay", str(CORPUS / "wide-limit.jsonl"), "--model", str(CORPUS / "models" / "wide.gpspec")]) == 3
    assert "Z3 fallback" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"gpcheck_trace": 1, "model": "ring"}\n{"action": "launch"}\n{"action": "launch", "args": [1]}\n')
    assert main(["replay", str(bad), "--model", spec]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:3: \"args\" must be an object" in err and "Traceback" not in err
    assert main(["replay", str(tmp_path / "missing.jsonl"), "--model", spec]) == 2
    assert main(["replay", str(CORPUS / "ring-full.jsonl"), "--model", spec, "--max-hidden", "-1"]) == 2


def test_replay_json_and_exports(tmp_path, capsys) -> None:
    e = _entry("rewind-reexecution-hidden.jsonl")
    spec = str((ROOT / e["spec"]).resolve())
    pf, itf = str(tmp_path / "p.json"), str(tmp_path / "r.itf.json")
    code = main(["replay", str(CORPUS / e["file"]), "--model", spec, "--json", "--perfetto", pf, "--itf", itf])
    assert code == 1
    rep = orjson.loads(capsys.readouterr().out)
    assert rep["verdict"] == "conforms" and rep["divergence"] is None
    (r,) = [r for r in rep["results"] if r["property"] == "no_reexecution"]
    assert r["verdict"] == "violated" and r["counterexample"]["steps"][0]["action"] is None
    assert validate_chrome_trace(orjson.loads(Path(pf).read_bytes())) == []
    # the reconstructed behaviour (hidden steps filled in) replays with every step logged
    assert main(["replay", itf, "--model", spec]) == 1
    assert "violated" in capsys.readouterr().out


def test_export_command(tmp_path, capsys) -> None:
    pf = str(tmp_path / "p.json")
    # bundled name in header (blp: the corpus's kfd_sched traces are of the former kfd_sched, now
    # kfd_monitor; the bundled kfd_sched is composed on cwsr and has other variables)
    assert main(["export", str(CORPUS / "blp-full.jsonl"), "--perfetto", pf]) == 0
    assert validate_chrome_trace(orjson.loads(Path(pf).read_bytes())) == []
    assert main(["export", str(CORPUS / "ring-none.jsonl"), "--perfetto", pf]) == 0  # no model: JSON kinds
    assert main(["export", str(CORPUS / "ring-none.jsonl")]) == 2
    spec = str((ROOT / _entry("ring-hidden.jsonl.gz")["spec"]).resolve())
    itf = str(tmp_path / "r.itf.json")
    assert main(["export", str(CORPUS / "ring-hidden.jsonl.gz"), "--model", spec, "--itf", itf]) == 0
    assert main(["replay", itf, "--model", spec]) == 0


def test_verify_itf_and_perfetto(tmp_path, capsys) -> None:
    if not (EXAMPLES / "rewind.gpspec").exists():
        pytest.skip("no examples")
    itf, pf = str(tmp_path / "cx.itf.json"), str(tmp_path / "cx.json")
    assert main(["verify", str(EXAMPLES / "rewind.gpspec"), "--itf", itf, "--perfetto", pf]) == 1
    assert f"to {itf}" in capsys.readouterr().err
    assert main(["replay", itf, "--model", str(EXAMPLES / "rewind.gpspec")]) == 1
    assert validate_chrome_trace(orjson.loads(Path(pf).read_bytes())) == []


# two overlapping timed saves: every property holds, and the latency is proved with its maximum's witness
SAVES = """model saves
var saved: [0..1] -> bool = [false, false]
var req: bool = false
var done: bool = false
action request { require not req  req = true }
action save(q: 0..1) time 2..5 { require req and not saved[q]  saved[q] = true }
urgent action finish { require saved[0] and saved[1] and not done  done = true }
terminal: done
invariant saved_first: done implies saved[0]
latency preempt: from req to done within 5
"""


def test_verify_writes_no_file_when_nothing_is_violated(tmp_path, capsys) -> None:
    """Issue 33: a proved latency carries the witness of its maximum; it is no counterexample, so
    `--itf`/`--perfetto` write nothing for a model whose properties all hold. (A small timed spec:
    cwsr's rt_preempt_latency took 20 s of CPU for the same path.)"""
    from gpcheck.checker import verify
    from gpcheck.spec import load_source

    spec = tmp_path / "saves.gpspec"
    spec.write_text(SAVES, encoding="utf-8")
    lat = verify(load_source(SAVES)).result("preempt")  # the witness this test is about is there
    assert lat.verdict.holds and lat.detail["max"] == 5 and lat.counterexample is not None
    itf, pf = tmp_path / "cx.itf.json", tmp_path / "cx.json"
    assert main(["verify", str(spec), "--itf", str(itf), "--perfetto", str(pf)]) == 0
    assert "no counterexample to write" in capsys.readouterr().err
    assert not itf.exists() and not pf.exists()


def test_simulate_says_when_it_replaces_a_file(tmp_path, capsys) -> None:
    """Issue 33: `simulate --runs` replaced an earlier run's files without a word."""
    out = str(tmp_path / "run.jsonl")
    assert main(["simulate", "kfd_monitor", "--runs", "2", "--out", out]) == 0
    assert "replacing" not in capsys.readouterr().err
    assert main(["simulate", "kfd_monitor", "--runs", "2", "--seed", "5", "--out", out]) == 0
    err = capsys.readouterr().err
    assert f"replacing {tmp_path / 'run-0.jsonl'}" in err and f"replacing {tmp_path / 'run-1.jsonl'}" in err

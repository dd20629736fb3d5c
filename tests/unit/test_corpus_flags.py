"""A corpus run is the single runs side by side (issue 36, NOTE(corpus-flags) in checker/distributed/corpus.py):
for every flag of `gpcheck check` and `gpcheck replay`, each row of `check/replay TRACE... FLAG
--json` equals `check/replay TRACE FLAG --json` (report and exit code).

The flags are read from the parsers themselves: a flag added later with no value below fails
`test_every_flag_has_a_case`, so no flag can be dropped again unnoticed. The corpus runs here go
through the real command path (argument parsing, `job_flags`, `check_job`, each job pickled and
unpickled as a cluster would) on an in-process stand-in for the Dask cluster; one test at the end
runs the issue's reproducers on a real local cluster."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpcheck.checker.cli.command import build_parser, main
from gpcheck.checker.distributed.corpus import CORPUS_LEVEL_FLAGS

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "traces" / "corpus" / "real"
SIM = ROOT / "traces" / "corpus" / "sim"

CHECK_TRACES = [str(REAL / n) for n in ("priority_high_vs_low.jsonl.gz", "priority_equal.jsonl.gz",
                                        "timeslice_two_processes.jsonl.gz")]
REPLAY_TRACES = [str(SIM / n) for n in ("blp-hidden.jsonl.gz", "blp-bad-state.jsonl", "blp-full.jsonl")]

# flag -> (arguments, whether they change some report against the defaults: then a dropped
# flag cannot pass by accident)
CHECK_CASES: dict[str, tuple[list[str], bool]] = {
    "--const": (["--const", "N=2"], False),  # a trace check reads no constants; accepted as by the single command
    "--property": (["--property", "launch_delay", "--property", "exactly_once"], True),
    "--max-inversion": (["--max-inversion", "1"], True),
    "--gap-threshold": (["--gap-threshold", "1000000000"], True),
    "--max-gap": (["--max-gap", "1"], True),
    "--max-delay": (["--max-delay", "1"], True),
    "--max-blocking": (["--max-blocking", "1"], True),
    "--timeout": (["--timeout", "60"], False),
}
REPLAY_CASES: dict[str, tuple[list[str], bool]] = {
    "--model": (["--model", str(ROOT / "spec" / "models" / "blp.gpspec")], True),
    "--const": (["--const", "N=2"], True),
    "--max-hidden": (["--max-hidden", "0"], True),
    # the simulated traces hold model actions, not the recorded events the mapping maps: each row is
    # the single run's located input error
    "--map": (["--map", str(ROOT / "spec" / "models" / "blp.map.toml")], True),
    "--max-candidates": (["--max-candidates", "1"], True),
    "--engine": (["--engine", "exhaustive"], True),
    "--no-timing": (["--no-timing"], True),
    "--format": (["--format", "gpcheck"], False),
    "--timeout": (["--timeout", "60"], False),
}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out) if out.strip() else None


def _flags_of(command: str) -> set[str]:
    """The optional flags of a subcommand's parser whose value a trace's job receives."""
    parser = build_parser([command])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return {a.option_strings[-1] if a.option_strings[-1].startswith("--") else a.option_strings[0]
            for a in sub._actions if a.option_strings and a.dest not in CORPUS_LEVEL_FLAGS
            and a.dest != "help"}


def test_every_flag_has_a_case() -> None:
    assert _flags_of("check") == set(CHECK_CASES)
    assert _flags_of("replay") == set(REPLAY_CASES)


def _rows_equal_single_runs(capsys: pytest.CaptureFixture[str], command: str, traces: list[str],
                            extra: list[str]) -> list[Any]:
    code, doc = _run(capsys, command, *traces, *extra, "--json", "--no-progress")
    assert [r["trace"] for r in doc["traces"]] == traces and doc["interrupted"] is False
    codes, reports = [], []
    for row in doc["traces"]:
        single_code, single = _run(capsys, command, row["trace"], *extra, "--json", "--no-progress")
        assert row["exit_code"] == single_code, (extra, row["trace"])
        if "error" in row:
            assert single_code == 2 and "error" in single
            reports.append(row["error"])
        else:
            row["report"].pop("seconds", None), single.pop("seconds", None)
            assert row["report"] == single, (extra, row["trace"])
            reports.append(row["report"])
        codes.append(single_code)
    from gpcheck.checker.distributed.corpus import corpus_exit_code

    assert code == corpus_exit_code(codes)
    return reports


_WITHOUT_FLAGS: dict[str, list[Any]] = {}


def _rows_without_flags(capsys: pytest.CaptureFixture[str], command: str, traces: list[str]) -> list[Any]:
    """`_rows_equal_single_runs` without a flag, made once per process: every flag's test compares
    its rows with these (the same corpus run and single runs each time, 7 replay flags x 4 replays)."""
    if command not in _WITHOUT_FLAGS:
        _WITHOUT_FLAGS[command] = _rows_equal_single_runs(capsys, command, traces, [])
    return _WITHOUT_FLAGS[command]


@pytest.mark.parametrize("flag", sorted(CHECK_CASES))
def test_check_corpus_rows_are_single_runs(capsys: pytest.CaptureFixture[str], in_process_cluster: None, flag: str) -> None:
    extra, changes = CHECK_CASES[flag]
    with_flag = _rows_equal_single_runs(capsys, "check", CHECK_TRACES, extra)
    if changes:
        assert with_flag != _rows_without_flags(capsys, "check", CHECK_TRACES), flag


SLOW = {"--max-candidates"}  # past the limit the Z3 fallback decides blp-hidden: tens of seconds per run


@pytest.mark.parametrize("flag", [pytest.param(f, marks=pytest.mark.long) if f in SLOW else f for f in sorted(REPLAY_CASES)])
def test_replay_corpus_rows_are_single_runs(capsys: pytest.CaptureFixture[str], in_process_cluster: None, flag: str) -> None:
    extra, changes = REPLAY_CASES[flag]
    with_flag = _rows_equal_single_runs(capsys, "replay", REPLAY_TRACES, extra)
    if changes:
        assert with_flag != _rows_without_flags(capsys, "replay", REPLAY_TRACES), flag


@pytest.mark.parametrize("command,first,cases", [("check", "file", CHECK_CASES), ("replay", "trace", REPLAY_CASES)])
def test_every_job_gets_every_flag(command: str, first: str, cases: dict[str, tuple[list[str], bool]]) -> None:
    """What each trace's job receives is the parsed command line, every flag of the cases above."""
    from gpcheck.checker.distributed.corpus import job_flags

    parser = build_parser([command])
    argv = [command, "a.jsonl", "b.jsonl", *[a for args, _ in cases.values() for a in args]]
    args = parser.parse_args(argv)
    flags = job_flags(args, first)
    assert flags == {k: v for k, v in vars(args).items() if k not in CORPUS_LEVEL_FLAGS and k != first}
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    defaults = vars(sub.parse_args(["a.jsonl"]))
    for flag in cases:
        dest = next(a.dest for a in sub._actions if flag in a.option_strings)
        assert flags[dest] != defaults[dest], flag  # the value given, not the default, reaches the job


def test_all_flags_at_once(capsys: pytest.CaptureFixture[str], in_process_cluster: None) -> None:
    _rows_equal_single_runs(capsys, "check", CHECK_TRACES, [a for args, _ in CHECK_CASES.values() for a in args])
    _rows_equal_single_runs(capsys, "replay", REPLAY_TRACES, ["--engine", "lazy", "--max-candidates", "50",
                                                              "--const", "N=3", "--timeout", "60"])


def test_a_trace_timeout_holds_on_the_worker(tmp_path: Path) -> None:
    """`--timeout` is each trace's: the job (as a worker runs it) ends its replay undecided with
    the partial report, as `gpcheck replay TRACE --timeout T --json` does; no command budget."""
    from gpcheck.checker.cli.commands.replay import trace_outcome
    from gpcheck.checker.distributed.corpus import TraceJob, check_job

    trace = tmp_path / "hidden.jsonl"
    # 5,000 steps: a whole replay of a second or more here (0.3 s on an idle fast machine), three
    # times the limit at least; 20,000 steps and 0.5 s cost 1.5 s of CPU more for the same answer
    assert main(["simulate", "cwsr", "--const", "MAXP=0", "--steps", "5000", "--seed", "1", "--observe", "none",
                 "--no-internal", "--out", str(trace)]) == 0
    parser = build_parser(["replay"])
    args = parser.parse_args(["replay", str(trace), "--timeout", "0.1"])
    from gpcheck.checker.distributed.corpus import job_flags

    run = check_job(TraceJob("replay", str(trace), job_flags(args, "trace"), trace_outcome))
    assert run.exit_code == 3 and run.report is not None, run
    assert run.report["verdict"] == "unknown" and run.report["reason"].startswith("timeout after 0.1 s at line ")
    from gpcheck.checker.core import budget

    assert budget.stopped() is None  # the task's budget is gone with the task


@pytest.mark.long
def test_issue_reproducers_on_a_local_cluster(tmp_path: Path) -> None:
    """The three findings of issue 36 as the user met them: one real embedded cluster (long:
    three cluster start-ups; the same code paths run in-process above)."""
    def gpcheck(*argv: str) -> tuple[int, Any, str]:
        proc = subprocess.run([sys.executable, "-m", "gpcheck", *argv, "--json", "--no-progress", "--workers", "1"],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert "Traceback" not in proc.stderr
        return proc.returncode, json.loads(proc.stdout), proc.stderr

    code, doc, _ = gpcheck("check", *CHECK_TRACES[:2], "--max-delay", "1", "--max-blocking", "1")
    assert code == 1 and all(r["exit_code"] == 1 for r in doc["traces"])
    status = {res["property"]: res["status"] for res in doc["traces"][0]["report"]["results"]}
    assert status["launch_delay"] == status["blocking"] == "violated"
    code, doc, _ = gpcheck("replay", *REPLAY_TRACES[:1], str(SIM / "blp-none.jsonl"), "--engine", "exhaustive")
    assert [r["report"]["engine"] for r in doc["traces"]] == ["exhaustive", "exhaustive"]
    folder = tmp_path / "traces"
    folder.mkdir()
    for t in REPLAY_TRACES:
        (folder / Path(t).name).write_bytes(Path(t).read_bytes())
    code, doc, _ = gpcheck("replay", str(folder), "--timeout", "4")
    assert doc["interrupted"] is False and len(doc["traces"]) == 3 and code == 1  # blp-bad-state diverges

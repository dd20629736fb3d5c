"""Long commands stop on SIGINT and SIGTERM (exit 130 / 143) with a partial report where they
have one (`unknown`, reason interrupted), honour --timeout and --max-memory (`unknown`, exit 3),
and leave no temporary file behind (issue 20; checker/core/budget.py).

The subprocess tests start a real `gpcheck` on a run that lasts far longer than the test (a PDR
proof, an explicit search of about a million states, a replay that must infer hidden steps),
signal it once it is at work (by its processor time) and check the exit code, the report and the directory. They assert
only a generous bound on the time to stop (a hang), not a speed: tests/bench/bench_interrupts.py
measures that."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest

from gpcheck.checker.core import budget
from gpcheck.checker import verify
from gpcheck.checker.cli.command import main

ROOT = Path(__file__).resolve().parents[2]
STREAMS_BIG = ["nvidia_streams", "--const", "S=3", "--const", "Q=4", "--const", "SLOTS=3", "--symmetry", "off"]  # > 20 s explicit
HANG = 10.0  # seconds after the signal past which the command is taken to hang


def _gpcheck(argv: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "gpcheck", *argv], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _signal_after(argv: list[str], cwd: Path, sig: int, cpu: float) -> tuple[int, bytes, str, float]:
    """Run gpcheck, send `sig` once it has used `cpu` seconds of processor time (past its start-up
    however loaded the machine is); (exit code, stdout, stderr, seconds to stop)."""
    p = _gpcheck(argv, cwd)
    started = time.monotonic()
    while _cpu_seconds(p.pid) < cpu and p.poll() is None and time.monotonic() - started < 120:
        time.sleep(0.05)
    assert p.poll() is None, f"finished before the signal: {p.communicate()}"
    p.send_signal(sig)
    sent = time.monotonic()
    try:
        out, err = p.communicate(timeout=HANG)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail(f"gpcheck {' '.join(argv)} still running {HANG} s after {signal.Signals(sig).name}")
    return p.returncode, out, err.decode(), time.monotonic() - sent


def _leftovers(d: Path) -> list[str]:
    return sorted(n for n in os.listdir(d) if n.startswith(".gpcheck-") or n.endswith(".tmp"))


SIGS = [signal.SIGINT, signal.SIGTERM]


@pytest.fixture(scope="module")
def hidden_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A trace without internal actions or state: replay infers hidden steps (tens of seconds)."""
    path = tmp_path_factory.mktemp("trace") / "hidden.jsonl"
    assert main(["simulate", "cwsr", "--const", "MAXP=0", "--steps", "20000", "--seed", "1", "--observe", "none",
                 "--no-internal", "--out", str(path)]) == 0
    return path


@pytest.mark.slow  # waits for a child process; fast: test_simulate_stops_on_signal_and_leaves_no_file, test_z3_call_is_interrupted_in_process
@pytest.mark.parametrize("sig", SIGS, ids=lambda s: s.name)
def test_pdr_stops_on_signal_with_a_partial_report(tmp_path: Path, sig: int) -> None:
    # cwsr's former single-queue default: the timing of these runs was tuned on it
    code, out, err, took = _signal_after(["verify", "cwsr", "--const", "Q=1", "--const", "N=3", "--const", "W=2",
                                          "--engine", "pdr", "--json", "--itf", "cx.itf.json"],
                                         tmp_path, sig, 1.5)
    assert code == 128 + sig, err
    assert "Traceback" not in err
    why = f"interrupted ({signal.Signals(sig).name})"
    if out:  # the partial report (a stop inside a Z3 call is interrupted at once)
        results = orjson.loads(out)["results"]
        assert any(r["verdict"] == "unknown" and r["reason"] == why for r in results)
    else:  # the engine did not return within the grace period: stopped without a report
        assert why in err
    assert _leftovers(tmp_path) == []
    assert not (tmp_path / "cx.itf.json").exists()
    assert took < HANG


@pytest.mark.slow  # waits for a child process; fast: test_simulate_stops_on_signal_and_leaves_no_file
@pytest.mark.parametrize("sig", SIGS, ids=lambda s: s.name)
def test_explicit_search_stops_on_signal_with_a_partial_report(tmp_path: Path, sig: int) -> None:
    code, out, err, _ = _signal_after(["verify", *STREAMS_BIG, "--json", "--perfetto", "cx.json"], tmp_path, sig, 1.0)
    assert code == 128 + sig, err
    report = orjson.loads(out)
    assert report["states"] is None  # the search did not complete
    why = f"interrupted ({signal.Signals(sig).name})"
    assert all(r["verdict"] == "unknown" and r["reason"].startswith(why) for r in report["results"]
               if r["kind"] != "liveness"), report["results"]
    assert _leftovers(tmp_path) == [] and not (tmp_path / "cx.json").exists()


@pytest.mark.slow  # a 20,000-step trace and a child process; fast: test_simulate_stops_on_signal_and_leaves_no_file
@pytest.mark.parametrize("sig", SIGS, ids=lambda s: s.name)
def test_replay_stops_on_signal_with_a_partial_report(tmp_path: Path, hidden_trace: Path, sig: int) -> None:
    code, out, err, _ = _signal_after(["replay", str(hidden_trace), "--json", "--itf", "rebuilt.itf.json",
                                       "--perfetto", "rebuilt.json"], tmp_path, sig, 1.2)
    assert code == 128 + sig, err
    report = orjson.loads(out)
    assert report["verdict"] == "unknown"
    assert report["reason"].startswith(f"interrupted ({signal.Signals(sig).name}) at line ")
    assert 0 < report["events"] < 11428
    assert os.listdir(tmp_path) == []  # neither output written, no temporary file


@pytest.mark.parametrize("sig", SIGS, ids=lambda s: s.name)
def test_simulate_stops_on_signal_and_leaves_no_file(tmp_path: Path, sig: int) -> None:
    code, _, err, _ = _signal_after(["simulate", "cwsr", "--const", "MAXP=0", "--steps", "50000000", "--seed", "1",
                                     "--out", "long.jsonl.gz"], tmp_path, sig, 0.8)
    assert code == 128 + sig
    assert f"gpcheck: interrupted ({signal.Signals(sig).name})" in err
    assert os.listdir(tmp_path) == []


@pytest.mark.slow  # waits out a 1 s timeout on a 20,000-step trace; fast: test_simulate_honours_timeout
def test_replay_honours_timeout(hidden_trace: Path, capsys) -> None:
    assert main(["replay", str(hidden_trace), "--timeout", "1", "--json"]) == 3
    report = orjson.loads(capsys.readouterr().out)
    assert report["verdict"] == "unknown" and report["reason"].startswith("timeout after 1 s at line ")


_MAX_MEMORY_CHILD = """
import sys
from gpcheck.checker.core import budget
from gpcheck.checker.cli.command import main
limit = (budget.resident_memory() >> 20) + 40  # MiB: the search passes it within seconds
print(limit, flush=True)
sys.exit(main(["verify", *sys.argv[1:], "--max-memory", f"{limit}M", "--json"]))
"""


def test_explicit_search_honours_max_memory() -> None:
    # In a fresh process: in this one, the heap that earlier tests freed is reused without the
    # resident size growing, so whether the limit was passed depended on the tests run before.
    if budget.resident_memory() is None:
        pytest.skip("no /proc/self/statm")
    proc = subprocess.run([sys.executable, "-c", _MAX_MEMORY_CHILD, *STREAMS_BIG], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2])), timeout=300)
    assert proc.returncode == 3, proc.stderr
    first, _, rest = proc.stdout.partition("\n")
    limit = int(first)
    results = orjson.loads(rest)["results"]
    assert all(r["verdict"] == "unknown" and r["reason"].startswith(f"memory limit {limit:.1f} MiB reached")
               for r in results if r["kind"] != "liveness"), results


def test_simulate_honours_timeout(tmp_path: Path, capsys) -> None:
    out = tmp_path / "t.jsonl"
    assert main(["simulate", "cwsr", "--const", "MAXP=0", "--steps", "50000000", "--seed", "1", "--out", str(out),
                 "--timeout", "0.5"]) == 3
    assert "timeout after 0.5 s" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []


def test_stop_outside_an_engine_raises() -> None:
    """Code that polls nothing (parsing, compiling) gets `Stop` raised by the watchdog."""
    started = time.monotonic()
    with pytest.raises(budget.Stop) as e:
        with budget.activate(timeout=0.2):
            while time.monotonic() - started < HANG:
                pass
    assert e.value.reason == budget.TIMEOUT and e.value.exit_code == 3
    assert budget.stopped() is None  # the budget of the run is gone with it


def test_z3_call_is_interrupted_in_process() -> None:
    """A stop during a PDR query interrupts Z3 (a Python handler alone would wait for it)."""
    with budget.activate():
        threading.Timer(1.0, budget.request_stop, (budget.INTERRUPTED, "interrupted (test)")).start()
        with budget.cooperative():
            report = verify("cwsr", consts={"Q": 1, "N": 3, "W": 2}, engine="pdr")  # the former default
    assert any(r.reason == "interrupted (test)" for r in report.results)
    assert report.seconds < HANG


# The main thread sits in a C call that releases the GIL and ignores both the signal (blocked in
# this thread: the kernel delivers it to the watchdog's) and Z3-style interruption: like a Z3
# tactic that never checks for cancellation.
HARD_EXIT_PROGRAM = """
import signal, sys, time
from gpcheck.checker.core import budget
from gpcheck.traces.atomic import AtomicFile, remove_temp_files
budget.on_hard_exit(remove_temp_files)
with budget.activate():
    out = AtomicFile(sys.argv[1])
    out.file.write(b"partial")
    with budget.cooperative():
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        print("ready", flush=True)
        time.sleep(100)
"""


@pytest.mark.slow  # waits out the watchdog's 3 s; fast: test_stop_outside_an_engine_raises
def test_watchdog_ends_a_process_stuck_in_c_and_removes_its_temporary_files(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen([sys.executable, "-c", HARD_EXIT_PROGRAM, str(tmp_path / "out.json")], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None and p.stdout.readline() == b"ready\n"
    assert len(os.listdir(tmp_path)) == 1  # the temporary file
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=HANG + budget.HARD_EXIT)
    assert p.returncode == 143
    assert b"interrupted (SIGTERM): stopped without a report" in err
    assert os.listdir(tmp_path) == []


@pytest.mark.slow  # waits out a 1 s timeout; fast: test_simulate_honours_timeout
def test_replay_of_a_huge_header_constant_stops_at_the_timeout(tmp_path: Path, capsys) -> None:
    """A header constant of 10^9 made replay run forever (issue 20): --timeout now ends it (or,
    once the type checker bounds sizes, the constant is refused: a usage error)."""
    trace = tmp_path / "huge.jsonl"
    header = {"gpcheck_trace": 1, "model": "cwsr", "constants": {"N": 10**9}, "observe": "none"}
    trace.write_bytes(orjson.dumps(header) + b"\n" + b'{"action":"submit","args":{"q":0}}\n')
    started = time.monotonic()
    code = main(["replay", str(trace), "--timeout", "1"])
    err = capsys.readouterr().err
    assert time.monotonic() - started < HANG
    assert "Traceback" not in err
    assert (code, "timeout after 1 s" in err) == (3, True) or code == 2


def test_a_long_sqlite_query_of_an_import_stops_with_the_budget(tmp_path: Path) -> None:
    """An import's query runs in SQLite's C code, where no signal handler runs; the progress
    handler aborts it once the budget stops, and the stop (not a TraceError) propagates."""
    import sqlite3

    from gpcheck.traces.importers.sqlite import Database

    db = tmp_path / "big.sqlite"
    conn = sqlite3.connect(db)
    # one row whose computation runs for minutes unless aborted
    conn.execute("CREATE VIEW v AS WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) "
                 "SELECT count(*) AS n FROM c")
    conn.commit()
    conn.close()
    with budget.activate(timeout=0.5), Database(str(db)) as d:
        started = time.monotonic()
        with pytest.raises(budget.Stop):
            list(d.rows("v", ["n"]))
    assert time.monotonic() - started < HANG

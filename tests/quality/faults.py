"""Fault injection in the spirit of Jepsen (issue 36, item 5): run gpcheck's commands (verify,
check, replay, sweep, and check/replay over several traces) as a user runs them, inject a fault,
and judge what came out. Every run must end with a complete, honest report or a clear error:

- exit code 0/1/3 (a report), 2 (an error, said on stderr), 130/143 (SIGINT/SIGTERM); a process
  killed by the signal itself only where nothing was printed (before the interpreter installed
  its handler);
- no Python traceback and no "internal error" on stderr;
- no partial output file: every file in the run's folder is complete (JSON that parses, a page
  that ends with </html>), and no temporary file is left behind;
- with --json, standard output holds exactly one JSON document, or nothing (or, where standard
  output itself could not be written, whatever got out before, with exit 2 and the error);
- no wrong verdict: a report's verdicts are those of the same command run without a fault,
  except `unknown` where a stop cut the run short;
- no process of the run left behind (the run's process group is empty afterwards).

The faults: none, SIGINT or SIGTERM at a random moment (to the whole process group, as Ctrl-C),
standard output closed, standard output /dev/full, a file-size limit (RLIMIT_FSIZE, which a full
disk looks like to a writer: EFBIG instead of ENOSPC) on the output files and on a standard
output redirected to a file; and, for corpus runs, random flags whose rows must equal the single
command's --json (a corpus run is the single runs side by side).

A run's start-up before gpcheck's first line (the interpreter's own start, `site`, `runpy`) is
out of gpcheck's reach: a KeyboardInterrupt traceback whose frames are all the interpreter's
is counted apart ("startup window"), never as a pass and never hidden.

Usage: `python tests/quality/faults.py --minutes 5 --seed 1` (the long mode; prints the figures),
`tests/quality/test_fault_slice.py` (the CI slice: a few seeded cases)."""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "traces" / "corpus" / "real"
SIM = ROOT / "traces" / "corpus" / "sim"
CHECK_TRACES = [str(REAL / n) for n in ("priority_high_vs_low.jsonl.gz", "priority_equal.jsonl.gz",
                                        "timeslice_two_processes.jsonl.gz")]
REPLAY_TRACES = [str(SIM / n) for n in ("blp-hidden.jsonl.gz", "blp-bad-state.jsonl", "blp-full.jsonl")]
EXIT_OK_CODES = {0, 1, 2, 3}
TIMEOUT_S = 240  # a run still going after this long is a hang (a finding)


@dataclass(frozen=True)
class Command:
    name: str
    argv: tuple[str, ...]  # "{out}" is the run's folder
    json: bool = True
    slow: bool = False  # a cluster starts: long mode only


COMMANDS = [
    Command("verify", ("verify", "blp", "--json", "--perfetto", "{out}/cx.json", "--itf", "{out}/cx.itf.json")),
    Command("verify-text", ("verify", "blp", "--const", "N=2"), json=False),
    Command("check", ("check", CHECK_TRACES[0], "--json", "--max-delay", "1", "--max-blocking", "1")),
    Command("replay", ("replay", REPLAY_TRACES[2], "--json", "--perfetto", "{out}/r.json", "--itf", "{out}/r.itf.json")),
    Command("sweep", ("sweep", "blp", "--const", "N=1,2", "--workers", "1", "--json", "--html", "{out}/s.html"),
            slow=True),
    Command("check-corpus", ("check", *CHECK_TRACES, "--workers", "1", "--json"), slow=True),
    Command("replay-corpus", ("replay", *REPLAY_TRACES, "--workers", "1", "--json"), slow=True),
]
FAULTS = ["none", "sigint", "sigterm", "close-stdout", "full-stdout", "fsize-outputs", "fsize-stdout"]

# corpus flags drawn at random (tests/unit/test_corpus_flags.py holds every flag; here, mixes)
CHECK_FLAG_CHOICES = [["--max-delay", "1"], ["--max-blocking", "1"], ["--max-gap", "1"], ["--max-inversion", "1"],
                      ["--gap-threshold", "1000000000"], ["--property", "launch_delay"], ["--timeout", "60"]]
REPLAY_FLAG_CHOICES = [["--engine", "exhaustive"], ["--engine", "lazy"], ["--max-hidden", "0"],
                       ["--max-candidates", "1"], ["--const", "N=2"], ["--timeout", "60"], ["--format", "gpcheck"]]


@dataclass
class Outcome:
    command: str
    fault: str
    detail: str
    code: int
    seconds: float
    problems: list[str] = field(default_factory=list)
    startup_window: bool = False


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _full_device() -> bool:
    import stat

    try:
        return stat.S_ISCHR(os.stat("/dev/full").st_mode)
    except OSError:
        return False


def _start(argv: list[str], cwd: Path, stdout: Any, fsize: int | None, close_stdout: bool) -> subprocess.Popen[bytes]:
    def child() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        if close_stdout:
            os.close(1)

    # a file-size limit cuts bytecode short, and CPython renames a short .pyc into place: this child
    # writes none into the run's shared bytecode (tests/conftest.py, "Bytecode")
    env = _env() if fsize is None else {**_env(), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.Popen([sys.executable, "-m", "gpcheck", *argv], cwd=cwd, env=env, stdout=stdout,
                            stderr=subprocess.PIPE, preexec_fn=child, start_new_session=True)


def _reap(proc: subprocess.Popen[bytes]) -> bool:
    """Kill whatever is left of the run's process group; True if something was left."""
    left = False
    deadline = time.monotonic() + 15  # a local cluster's workers take a moment to follow their nanny
    while True:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return left
        except PermissionError:
            return left
        if time.monotonic() > deadline:
            left = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                return left
            time.sleep(0.2)
            continue
        time.sleep(0.1)


def run(command: Command, fault: str, rng: random.Random, base: Path,
        baseline: dict[str, Any] | None = None) -> Outcome:
    """One run of `command` under `fault` in a fresh folder below `base`, judged."""
    out = Path(tempfile.mkdtemp(prefix=f"{command.name}-{fault}-", dir=base))
    argv = [a.replace("{out}", str(out)) for a in command.argv]
    detail = ""
    fsize = None
    stdout: Any = subprocess.PIPE
    stdout_file = None
    if fault in ("fsize-outputs", "fsize-stdout"):
        fsize = rng.choice([0, 100, 2000, 20000])
        detail = f"RLIMIT_FSIZE {fsize}"
        if fault == "fsize-stdout":
            stdout_file = out / "stdout.txt"
            stdout = open(stdout_file, "wb")
    elif fault == "full-stdout":
        stdout = open("/dev/full", "wb")
    elif fault == "close-stdout":
        stdout = subprocess.DEVNULL
    delay = None
    if fault in ("sigint", "sigterm"):
        span = (baseline or {}).get("seconds", 2.0) * 1.2
        delay = rng.uniform(0.0, span)
        detail = f"after {delay:.2f} s"
    started = time.monotonic()
    proc = _start(argv, out, stdout, fsize, fault == "close-stdout")
    if stdout not in (subprocess.PIPE, subprocess.DEVNULL):
        stdout.close()
    if delay is not None:
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGINT if fault == "sigint" else signal.SIGTERM)
            except ProcessLookupError:
                pass
    problems: list[str] = []
    try:
        data, err_b = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        data, err_b = proc.communicate()
        problems.append(f"still running after {TIMEOUT_S} s")
    seconds = time.monotonic() - started
    if _reap(proc):
        problems.append("processes of the run left behind")
    if stdout_file is not None:
        data = stdout_file.read_bytes()
        stdout_file.unlink()
    outcome = Outcome(command.name, fault, detail, proc.returncode, seconds, problems)
    _judge(outcome, command, fault, data or b"", err_b.decode("utf-8", "replace"), out, baseline)
    if not outcome.problems:
        shutil.rmtree(out, ignore_errors=True)
    else:
        outcome.problems.append(f"(files kept in {out})")
    return outcome


def _startup_only(err: str) -> bool:
    """A KeyboardInterrupt traceback raised before gpcheck's first line: no frame of ours."""
    frames = [line for line in err.splitlines() if line.strip().startswith("File ")]
    return "KeyboardInterrupt" in err and not any(str(ROOT) in f or "gpcheck" in f for f in frames)


def _judge(o: Outcome, command: Command, fault: str, out: bytes, err: str, folder: Path,
           baseline: dict[str, Any] | None) -> None:
    code = o.code
    signalled = fault in ("sigint", "sigterm")
    want_signal = 130 if fault == "sigint" else 143
    if "Traceback" in err:
        if signalled and _startup_only(err):
            o.startup_window = True
        else:
            o.problems.append("a traceback on stderr: " + err[-600:])
    if "internal error" in err:
        o.problems.append("internal error: " + err[-400:])
    if code < 0:
        if not (signalled and -code in (signal.SIGINT, signal.SIGTERM) and (o.startup_window or not err.strip())):
            o.problems.append(f"killed by signal {-code}")
    elif signalled:
        if code not in EXIT_OK_CODES | {want_signal}:
            o.problems.append(f"exit {code} after {fault}")
    elif code not in EXIT_OK_CODES:
        o.problems.append(f"exit {code} without a signal")
    if fault in ("close-stdout", "full-stdout") and code != 2:
        o.problems.append(f"exit {code} with standard output {fault.split('-')[0]}: expected 2")
    if code == 2 and "gpcheck" not in err:
        o.problems.append("exit 2 without a message on stderr")
    # files: complete or absent; no temporary files
    for p in sorted(folder.rglob("*")):
        if not p.is_file():
            continue
        if p.name.startswith(".gpcheck-") or p.name.endswith(".tmp"):
            o.problems.append(f"temporary file left: {p.name}")
            continue
        text = p.read_bytes()
        if p.suffix == ".json":
            try:
                json.loads(text)
            except ValueError:
                o.problems.append(f"partial output file {p.name} ({len(text)} bytes)")
        elif p.suffix == ".html" and not text.rstrip().endswith(b"</html>"):
            o.problems.append(f"partial output file {p.name}")
    if fault in ("close-stdout", "full-stdout"):
        return
    if fault == "fsize-stdout" and code == 2 and "standard output" in err:
        return  # a stream cannot be taken back: what got out is cut, and the exit code and stderr say so
    report = None
    if command.json and out.strip():
        try:
            report = json.loads(out)
        except ValueError:
            o.problems.append(f"standard output is not one JSON document ({len(out)} bytes): {out[-200:]!r}")
    elif not command.json and code in (0, 1, 3) and not out.strip():
        o.problems.append(f"exit {code} and no report")
    if command.json and code in (0, 1, 3) and not (signalled and code == 3) and report is None:
        o.problems.append(f"exit {code} and no JSON report")
    if report is not None and baseline is not None and isinstance(report, dict) and "error" not in report:
        stopped = signalled or code == 3
        for where, verdict in _verdicts(report).items():
            expected = baseline["verdicts"].get(where)
            if expected is not None and verdict != expected and not (stopped and verdict in ("unknown", None)):
                o.problems.append(f"wrong verdict {where}: {verdict}, without a fault {expected}")
        if not stopped and report.get("interrupted"):
            o.problems.append("a report marked interrupted without a stop")


def _verdicts(report: dict[str, Any]) -> dict[str, Any]:
    """(row, property) -> verdict or status, for every kind of report here."""
    out: dict[str, Any] = {}

    def results(prefix: str, doc: dict[str, Any]) -> None:
        if "verdict" in doc and "results" in doc:
            out[f"{prefix}replay"] = doc["verdict"]
        for r in doc.get("results", []):
            out[f"{prefix}{r['property']}"] = r.get("verdict", r.get("status"))

    if "traces" in report:
        for t in report["traces"]:
            if "report" in t:
                results(f"{Path(t['trace']).name}:", t["report"])
    elif "runs" in report:
        for r in report["runs"]:
            results(f"{r.get('constants')}:", r)
    else:
        results("", report)
    return out


def baseline_of(command: Command, base: Path) -> dict[str, Any]:
    """The command without a fault: its verdicts and its duration (the span for signals)."""
    o_started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "gpcheck", *[a.replace("{out}", str(base)) for a in command.argv]],
                          cwd=base, env=_env(), capture_output=True, timeout=TIMEOUT_S)
    seconds = time.monotonic() - o_started
    verdicts = _verdicts(json.loads(proc.stdout)) if command.json else {}
    for p in base.iterdir():
        if p.is_file():
            p.unlink()
    return {"seconds": seconds, "verdicts": verdicts, "code": proc.returncode}


def corpus_case(mode: str, rng: random.Random, base: Path) -> Outcome:
    """A corpus run with random flags against the single runs: each row equals the single
    command's --json with the same flags (seconds aside)."""
    choices = CHECK_FLAG_CHOICES if mode == "check" else REPLAY_FLAG_CHOICES
    flags = [a for pick in rng.sample(choices, rng.randint(1, 3)) for a in pick]
    traces = CHECK_TRACES if mode == "check" else REPLAY_TRACES
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "gpcheck", mode, *traces, *flags, "--json", "--workers", "1",
                           "--no-progress"], cwd=base, env=_env(), capture_output=True, timeout=TIMEOUT_S)
    o = Outcome(f"{mode}-corpus-vs-single", "random flags", " ".join(flags), proc.returncode,
                time.monotonic() - started)
    err = proc.stderr.decode("utf-8", "replace")
    if "Traceback" in err or proc.returncode not in EXIT_OK_CODES:
        o.problems.append(f"exit {proc.returncode}: {err[-600:]}")
        return o
    doc = json.loads(proc.stdout)
    for row in doc["traces"]:
        single = subprocess.run([sys.executable, "-m", "gpcheck", mode, row["trace"], *flags, "--json"],
                                cwd=base, env=_env(), capture_output=True, timeout=TIMEOUT_S)
        if single.returncode != row["exit_code"]:
            o.problems.append(f"{row['trace']}: exit {row['exit_code']} in the corpus, {single.returncode} alone")
            continue
        if "report" in row:
            one = json.loads(single.stdout)
            one.pop("seconds", None), row["report"].pop("seconds", None)
            if one != row["report"]:
                o.problems.append(f"{row['trace']}: the corpus row differs from the single run")
    return o


def _faults_for(command: Command) -> list[str]:
    return [f for f in FAULTS if f != "full-stdout" or _full_device()]


def campaign(seconds: float, seed: int, slow: bool, base: Path, log: Any = None) -> list[Outcome]:
    """Random (command, fault) runs for `seconds` (at least one of each command), seeded."""
    rng = random.Random(seed)
    commands = [c for c in COMMANDS if slow or not c.slow]
    baselines = {c.name: baseline_of(c, base) for c in commands}
    outcomes: list[Outcome] = []
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end or i < len(commands):
        if slow and rng.random() < 0.1:
            o = corpus_case(rng.choice(["check", "replay"]), rng, base)
        else:
            command = commands[i % len(commands)] if i < len(commands) else rng.choice(commands)
            o = run(command, rng.choice(_faults_for(command)), rng, base, baselines[command.name])
        outcomes.append(o)
        i += 1
        if log is not None:
            mark = "FAIL" if o.problems else ("startup" if o.startup_window else "ok")
            log.write(f"[{i}] {o.command} {o.fault} {o.detail} -> exit {o.code} in {o.seconds:.1f} s: {mark}"
                      + ("".join(f"\n    {p}" for p in o.problems)) + "\n")
            log.flush()
    return outcomes


def summary(outcomes: list[Outcome]) -> str:
    by = Counter((o.command, o.fault) for o in outcomes)
    codes = Counter(o.code for o in outcomes)
    failed = [o for o in outcomes if o.problems]
    lines = [f"{len(outcomes)} runs, {len(failed)} with a problem, "
             f"{sum(o.startup_window for o in outcomes)} in the interpreter's start-up window",
             "exit codes: " + ", ".join(f"{c}: {n}" for c, n in sorted(codes.items())),
             "runs per command and fault:"]
    lines += [f"  {c} {f}: {n}" for (c, f), n in sorted(by.items())]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-cluster", action="store_true", help="leave out sweeps and corpus runs")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpcheck-faults-") as tmp:
        outcomes = campaign(a.minutes * 60, a.seed, not a.no_cluster, Path(tmp), sys.stdout)
    print(summary(outcomes))
    return 1 if any(o.problems for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())

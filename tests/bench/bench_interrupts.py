"""Benchmark: how fast a running `gpcheck` stops after SIGINT or SIGTERM (issue 20: within a
second, with a partial report where it has one, no temporary file left).

    python tests/bench/bench_interrupts.py [--runs 3]

Each scenario starts a real `gpcheck` on a run much longer than the measurement, waits until the
process has used some processor time (past its start-up, however loaded the machine is), sends
the signal and measures the wall time until the process has exited. Reported per scenario and
signal: the median and worst stop time, whether the partial report was printed, and temporary
files left behind. Baseline, same run: a bare Python process killed by the default SIGTERM
action (the floor: signal delivery and process exit).

Measured 2026-11-23 (2-CPU machine shared with other jobs, load average 12-17; 3 or 5 runs; median
seconds from the signal to the exit, SIGINT / SIGTERM; every run exit 130 / 143, no file left):
baseline 0.001; pdr 0.31 / 0.36; bmc 0.48 / 0.51; kind 0.57 / 0.63; auto 0.17 / 0.18; explicit
0.21 / 0.22; explicit+liveness 0.84 / 0.47 (worst 1.44, one run of five stopped without a report);
replay 0.16 / 0.17; simulate 0.07 / 0.08. A partial report was printed in every run but that one
(simulate has none).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STREAMS_BIG = ["nvidia_streams", "--const", "S=3", "--const", "Q=4", "--const", "SLOTS=3", "--symmetry", "off"]
CWSR_LIVE = ["cwsr", "--const", "Q=1", "--const", "N=5", "--const", "MAXP=3", "--const", "W=3"]


def scenarios(trace: str) -> list[tuple[str, list[str], float]]:
    """(name, gpcheck arguments, processor seconds before the signal)."""
    return [
        ("pdr", ["verify", "cwsr", "--engine", "pdr", "--itf", "cx.itf.json"], 1.5),
        ("bmc", ["verify", "cwsr", "--const", "Q=1", "--const", "N=6", "--const", "MAXP=4", "--engine", "bmc", "--depth", "60"], 1.5),
        ("kind", ["verify", "cwsr", "--const", "Q=1", "--const", "N=6", "--const", "MAXP=4", "--engine", "kind", "--depth", "60"], 1.5),
        ("auto", ["verify", *STREAMS_BIG, "--engine", "auto"], 3.0),
        ("explicit", ["verify", *STREAMS_BIG, "--perfetto", "cx.json"], 1.0),
        ("explicit+liveness", ["verify", *CWSR_LIVE], 2.0),
        ("replay", ["replay", trace, "--itf", "rebuilt.itf.json"], 1.2),
        ("simulate", ["simulate", "cwsr", "--const", "MAXP=0", "--steps", "50000000", "--seed", "1",
                      "--out", "long.jsonl.gz"], 0.8),
    ]


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(argv: list[str], cpu: float, sig: int, cwd: str) -> tuple[float, bool, int, int]:
    """(seconds from the signal to the exit, partial report printed, exit code, files left)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while cpu_seconds(p.pid) < cpu and p.poll() is None:
        time.sleep(0.02)
    if p.poll() is not None:
        raise SystemExit(f"{argv} ended before the signal")
    p.send_signal(sig)
    sent = time.monotonic()
    out, _ = p.communicate()
    took = time.monotonic() - sent
    left = len(os.listdir(cwd))
    for n in os.listdir(cwd):
        os.unlink(os.path.join(cwd, n))
    return took, b"interrupted" in out, p.returncode, left


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated scenario names")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "hidden.jsonl")
        subprocess.run([sys.executable, "-m", "gpcheck", "simulate", "cwsr", "--const", "MAXP=0", "--steps",
                        "20000", "--seed", "1", "--observe", "none", "--no-internal", "--out", trace],
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True, capture_output=True)
        work = os.path.join(tmp, "work")
        os.mkdir(work)
        base = [measure([sys.executable, "-c", "import time; time.sleep(100)"], 0.0, signal.SIGTERM, work)[0]
                for _ in range(a.runs)]
        print(f"{'baseline (default SIGTERM)':<28} median {statistics.median(base):.3f} s  worst {max(base):.3f} s")
        only = set(a.only.split(",")) if a.only else None
        for name, args, cpu in scenarios(trace):
            if only and name not in only:
                continue
            for sig in (signal.SIGINT, signal.SIGTERM):
                rows = [measure([sys.executable, "-m", "gpcheck", *args], cpu, sig, work) for _ in range(a.runs)]
                times = [r[0] for r in rows]
                print(f"{name + ' ' + sig.name:<28} median {statistics.median(times):.3f} s  worst {max(times):.3f} s  "
                      f"report {sum(r[1] for r in rows)}/{a.runs}  exit {sorted({r[2] for r in rows})}  "
                      f"files left {sum(r[3] for r in rows)}  (x{statistics.median(times) / statistics.median(base):.1f} baseline)")


if __name__ == "__main__":
    main()

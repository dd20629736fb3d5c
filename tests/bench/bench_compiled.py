"""Benchmark: the compiled explicit engine (`--core compiled`) against SPIN and against the
Python engine (`--core python`), every side a whole process measured in the same run (wall
time and peak RSS from wait4), medians over --runs.

    python tests/bench/bench_compiled.py [--runs 3] [--cases rewind12,rewind16,cwsr,table]
                                         [--python-table] [--python-timeout 900]
                                         [--variants workers2,fingerprint]

Cases (issue 13):
  rewind12  rewind.gpspec N=12 B=2 CAP=2 MAXP=3, waves_run widened to 0..8 (2,774,248 states);
            SPIN 6.5 on tests/bench/rewind.pml (spin -o2 -a, gcc -O2 -DSAFETY, pan -m10000)
  rewind16  the same with N=16 CAP=3 (29,904,391 states): SPIN (pan -w26) and compiled
  cwsr      cwsr Q=2, every property including liveness: compiled and Python
  table     every bundled model at a size with at least 1M states: compiled (Python with
            --python-table)
"compiled cold" runs with an empty compile cache (numba compiles the model: the first run of
a model and constants); "compiled" runs with the cache warm (every later run).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT.parent / "shared" / "spec-examples" / "rewind.gpspec"
PROMELA = Path(__file__).with_name("rewind.pml")
WIDE = ("var waves_run: [0..N-1] -> 0..3 = 0", "var waves_run: [0..N-1] -> 0..8 = 0")
REWIND12 = {"N": 12, "B": 2, "CAP": 2, "MAXP": 3}
REWIND16 = {"N": 16, "B": 2, "CAP": 3, "MAXP": 3}
# (model, constants): each at least 1M states
TABLE = [
    ("blp", {"N": 10, "LB": 4, "P": 2, "MAXLC": 3, "INV_BOUND": 3}),  # 1,511,027 states
    ("cwsr", {"Q": 2, "N": 3, "W": 2}),  # the former Q=2 instance (cwsr now defaults to Q=2 N=2 W=1)
    ("gpreempt_timeslice", {"MAXLC": 0, "TS_LC": 100000, "LC_WORK": 6, "BE_WORK": 8, "INV_BOUND": 3}),  # 3,200,134
    ("kfd_monitor", {"T_MON": 40, "HP_CAP": 20, "LP_WORK": 70, "TIMESLICE": 1, "TS": 30, "INV_BOUND": 40}),  # 1,111,210
    ("nvidia_streams", {"S": 3, "P": 4, "SLOTS": 2}),  # 1,663,001
    ("nvidia_tsg", {"S": 3, "NB": 4, "BLEN": 3}),  # 2,447,000
    ("reef_rewind", {"N": 10, "B": 2, "MAXRT": 2}),  # 3,431,357
    ("rt_latency", {"DETECT_US": 200000, "LAT_MAX": 220009, "INV_BOUND": 200009}),  # 1,000,000
    # nv_query_group has at most a few hundred states at any constants (booleans and small
    # ranges only): it has no instance with 1M states
]


def measure(argv: list[str], *, cwd: Path = ROOT, env: dict[str, str] | None = None,
            timeout: float | None = None) -> tuple[float, int, str]:
    """(wall seconds, peak RSS in KiB, stdout) of one process; (inf, 0, "") past `timeout`."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.DEVNULL)
        deadline = None if timeout is None else t0 + timeout
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if deadline is not None and time.perf_counter() > deadline:
                p.kill()
                os.wait4(p.pid, 0)
                return float("inf"), 0, ""
            time.sleep(0.01)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return wall, usage.ru_maxrss, out.read().decode()


def gpcheck(spec: str, consts: dict[str, int], core: str, cache: Path, timeout: float | None = None,
            extra: tuple[str, ...] = ()) -> tuple[float, int, dict | None]:
    argv = [sys.executable, "-m", "gpcheck", "verify", spec, "--json", "--no-progress", "--core", core, *extra]
    argv += [a for k, v in consts.items() for a in ("--const", f"{k}={v}")]
    env = dict(os.environ, PYTHONPATH=str(ROOT), GPCHECK_CACHE_DIR=str(cache))
    wall, rss, out = measure(argv, env=env, timeout=timeout)
    return wall, rss, (json.loads(out) if out else None)


def spin(consts: dict[str, int], workdir: Path, hash_bits: int | None) -> tuple[float, int, int, float]:
    """(pan wall seconds, pan peak RSS KiB, states stored, spin + gcc seconds); `hash_bits`:
    pan's -w (its hash table has 2**w slots; None: pan's default, as issue 13 measured)."""
    t0 = time.perf_counter()
    defs = [f"-D{k}={v}" for k, v in consts.items()]
    shutil.copy(PROMELA, workdir / "rewind.pml")
    subprocess.run(["spin", *defs, "-a", "-o2", "rewind.pml"], cwd=workdir, check=True, capture_output=True)
    subprocess.run(["gcc", "-O2", "-DSAFETY", "-o", "pan", "pan.c"], cwd=workdir, check=True, capture_output=True)
    build = time.perf_counter() - t0
    wall, rss, out = measure(["./pan", "-m10000"] + ([f"-w{hash_bits}"] if hash_bits else []), cwd=workdir)
    m = re.search(r"(\d+) states, stored", out)
    assert m is not None and "errors: 0" in out, out
    return wall, rss, int(m.group(1)), build


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, list[float], list[int], int | None]] = []

    def add(self, name: str, walls: list[float], rsss: list[int], states: int | None) -> None:
        self.rows.append((name, walls, rsss, states))
        self.print_row(self.rows[-1])

    @staticmethod
    def print_row(row: tuple[str, list[float], list[int], int | None]) -> None:
        name, walls, rsss, states = row
        med = statistics.median(walls)
        rate = f"{states / med / 1e6:6.2f} M states/s" if states and med != float("inf") else ""
        print(f"  {name:34s} wall median {med:8.2f} s (min {min(walls):7.2f}, n={len(walls)})  "
              f"peak RSS {max(rsss) / 1024:7.0f} MiB  {rate}", flush=True)

    def ratio(self, a: str, b: str) -> None:
        rows = {r[0]: r for r in self.rows}
        if a in rows and b in rows:
            wa, wb = statistics.median(rows[a][1]), statistics.median(rows[b][1])
            ma, mb = max(rows[a][2]), max(rows[b][2])
            if not all(0 < x < float("inf") for x in (wa, wb, ma, mb)):  # a side timed out
                return
            print(f"  ratio {a} / {b}: wall {wa / wb:.2f}x, peak memory {ma / mb:.2f}x", flush=True)


VARIANTS = {"workers2": ("--workers", "2"), "fingerprint": ("--fingerprint",)}  # --variants


def rewind_case(consts: dict[str, int], expected: int, runs: int, python: bool, cache: Path,
                py_timeout: float, hash_bits: int | None, cold: bool = True, variants: tuple[str, ...] = ()) -> None:
    print(f"rewind {consts} (waves_run 0..8), {expected:,} states", flush=True)
    table = Table()
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "rewind_wide.gpspec"
        spec.write_text(EXAMPLE.read_text().replace(*WIDE))
        cold, warm, sp, py = [], [], [], []
        var: dict[str, list[tuple[float, int]]] = {v: [] for v in variants}
        build = 0.0
        gpcheck(str(spec), consts, "compiled", cache, extra=("--max-states", "1"))  # compile: warm the cache
        for _ in range(runs):
            wall, rss, states, build = spin(consts, Path(tmp), hash_bits)
            assert states == expected, states
            sp.append((wall, rss))
            wall, rss, out = gpcheck(str(spec), consts, "compiled", cache)
            assert out is not None and out["states"] == expected, out and out["states"]
            warm.append((wall, rss))
            for v in variants:
                wall, rss, out = gpcheck(str(spec), consts, "compiled", cache, extra=VARIANTS[v])
                assert out is not None and out["states"] == expected, out and out["states"]
                var[v].append((wall, rss))
            if cold:
                with tempfile.TemporaryDirectory() as fresh:
                    wall, rss, out = gpcheck(str(spec), consts, "compiled", Path(fresh))
                assert out is not None and out["states"] == expected
                cold.append((wall, rss))
            if python:
                wall, rss, out = gpcheck(str(spec), consts, "python", cache, timeout=py_timeout)
                assert out is None or out["states"] == expected
                py.append((wall, rss))
    table.add("SPIN pan (-O2 -DSAFETY)", [w for w, _ in sp], [r for _, r in sp], expected)
    print(f"  (spin -a + gcc -O2: {build:.2f} s, not included)")
    table.add("gpcheck compiled (cache warm)", [w for w, _ in warm], [r for _, r in warm], expected)
    for v in variants:
        table.add(f"gpcheck compiled --{v}", [w for w, _ in var[v]], [r for _, r in var[v]], expected)
    if cold:
        table.add("gpcheck compiled cold (compiles)", [w for w, _ in cold], [r for _, r in cold], expected)
    if py:
        table.add("gpcheck python", [w for w, _ in py], [r for _, r in py], expected)
    table.ratio("gpcheck compiled (cache warm)", "SPIN pan (-O2 -DSAFETY)")
    for v in variants:
        table.ratio(f"gpcheck compiled --{v}", "SPIN pan (-O2 -DSAFETY)")
    table.ratio("gpcheck compiled cold (compiles)", "SPIN pan (-O2 -DSAFETY)")
    table.ratio("gpcheck compiled (cache warm)", "gpcheck python")


def model_case(name: str, consts: dict[str, int], runs: int, python: bool, cache: Path, py_timeout: float,
               variants: tuple[str, ...] = ()) -> None:
    print(f"{name} {consts}", flush=True)
    table = Table()
    core = "compiled"
    if gpcheck(name, consts, "compiled", cache, extra=("--max-states", "1"))[2] is None:  # compile: warm the cache
        # the compiled core refuses the model (a predicate that can fail to evaluate, ...): auto runs Python
        print("  the compiled core refuses this model: measured with --core auto (the Python core)", flush=True)
        core, variants = "auto", ()
    fast, py = [], []
    states = None
    verdicts = None
    for _ in range(runs):
        wall, rss, out = gpcheck(name, consts, core, cache)
        assert out is not None
        states = out["states"]
        verdicts = {r["property"]: r["verdict"] for r in out["results"]}
        fast.append((wall, rss, out["seconds"]))
    var: dict[str, list[tuple[float, int]]] = {v: [] for v in variants}
    for v in variants:
        for _ in range(runs):
            wall, rss, out = gpcheck(name, consts, "compiled", cache, extra=VARIANTS[v])
            assert out is not None and out["states"] == states
            var[v].append((wall, rss))
    if python:
        wall, rss, out = gpcheck(name, consts, "python", cache, timeout=py_timeout)
        if out is not None:
            assert out["states"] == states
            assert {r["property"]: r["verdict"] for r in out["results"]} == verdicts
        py.append((wall, rss))
    table.add(f"gpcheck {core} (cache warm)", [w for w, _, _ in fast], [r for _, r, _ in fast], states)
    print(f"  search + properties inside the process: median {statistics.median(s for _, _, s in fast):.2f} s; "
          f"verdicts {verdicts}")
    for v in variants:
        table.add(f"gpcheck compiled --{v}", [w for w, _ in var[v]], [r for _, r in var[v]], states)
    if py:
        table.add("gpcheck python" + (" (timed out)" if py[0][0] == float("inf") else ""),
                  [w for w, _ in py], [max(1, r) for _, r in py], states)
        table.ratio("gpcheck compiled (cache warm)", "gpcheck python")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cases", default="rewind12,rewind16,cwsr,table")
    ap.add_argument("--table-runs", type=int, default=None, help="runs per table model (default --runs)")
    ap.add_argument("--models", default=None, help="table: only these models (comma-separated)")
    ap.add_argument("--python-table", action="store_true", help="also run the Python engine on the table")
    ap.add_argument("--python-timeout", type=float, default=900.0)
    ap.add_argument("--no-cold", action="store_true", help="skip the runs that compile from an empty cache")
    ap.add_argument("--cache", default=None, help="compile cache to use (default: a fresh temporary one)")
    ap.add_argument("--variants", default="", help=f"also run the compiled core with: {','.join(VARIANTS)}")
    opts = ap.parse_args()
    cases = opts.cases.split(",")
    variants = tuple(v for v in opts.variants.split(",") if v)
    with tempfile.TemporaryDirectory() as cache_dir:
        cache = Path(opts.cache or cache_dir)
        if "rewind12" in cases:
            rewind_case(REWIND12, 2_774_248, opts.runs, True, cache, opts.python_timeout, None, not opts.no_cold,
                        variants)
        if "rewind16" in cases:
            rewind_case(REWIND16, 29_904_391, opts.runs, False, cache, opts.python_timeout, 26, not opts.no_cold,
                        variants)
        if "cwsr" in cases:
            model_case("cwsr", {"Q": 2, "N": 3, "W": 2}, opts.runs, True, cache, opts.python_timeout, variants)
        if "table" in cases:
            for name, consts in TABLE:
                if opts.models and name not in opts.models.split(","):
                    continue
                model_case(name, consts, opts.table_runs or opts.runs, opts.python_table, cache,
                           opts.python_timeout, variants)


if __name__ == "__main__":
    main()

"""Benchmark: the compiled explicit engine (`--core compiled`) against SPIN and against the
Python engine (`--core python`), every side a whole process measured in the same run (wall
time and peak RSS from wait4), medians over --runs.

    python tests/bench/bench_compiled.py [--runs 3] [--cases rewind12,rewind16,cwsr,table]
                                         [--python-table] [--python-timeout 900] [--no-python]
                                         [--variants workers2,fingerprint] [--workers-list 1,2,4,8]
                                         [--spin PATH | --pan-c DIR] [--make-pan-c DIR]

It needs nothing outside this checkout (the rewind spec and its Promela are in tests/bench/), so
it runs on a machine without ../shared, network or apt. SPIN: `--spin PATH` names the spin
binary (default: `spin` on PATH); on a machine without SPIN, `--make-pan-c DIR` run where SPIN
is installed writes DIR/rewind12 and DIR/rewind16 (pan.c and the files it includes, generated
with `spin -a -o2`), and `--pan-c DIR` on the other machine compiles those with its gcc. With
neither SPIN nor a pan.c the SPIN rows are left out (and said so).
`--workers-list 1,2,4,8` runs the compiled core once per worker count and prints a speedup
table against one worker (and against SPIN), every row measured in the same run.

Cases (issue 13):
  rewind12  rewind.gpspec N=12 B=2 CAP=2 MAXP=3, waves_run widened to 0..8 (2,774,248 states);
            SPIN 6.5 on tests/bench/rewind.pml (spin -o2 -a, gcc -O2 -DSAFETY, pan -m10000)
  rewind16  the same with N=16 CAP=3 (29,904,391 states): SPIN (pan -w26) and compiled
  cwsr      cwsr Q=2, every property including liveness: compiled and Python
  table     every bundled model at a size with at least 1M states: compiled (Python with
            --python-table)
Bytecode: by default the gpcheck processes run as after a pip install, which writes every
module's bytecode (.pyc) at install time: PYTHONDONTWRITEBYTECODE is unset for them and
PYTHONPYCACHEPREFIX points into the run's temporary directory (the checkout is not written),
so the warm-up runs write the bytecode and the measured runs read it. `--no-bytecode` keeps the
caller's setting (this sandbox sets PYTHONDONTWRITEBYTECODE=1: every module is compiled from
source in every process, 0.05-0.1 s). The mode is printed with the results.
CPU: besides wall time and peak RSS, the user + system CPU seconds of each process (from
wait4) are printed: on the shared machine they move less with the other work than wall time.

"compiled cold" runs with an empty compile cache (numba compiles the model: the first run of
a model and constants); "compiled" runs with the cache warm (every later run) and the default
--workers auto (one thread on a machine with fewer than 4 idle cores).
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
EXAMPLE = Path(__file__).with_name("rewind.gpspec")  # a copy of ../shared/spec-examples/rewind.gpspec
PROMELA = Path(__file__).with_name("rewind.pml")
WIDE = ("var waves_run: [0..N-1] -> 0..3 = 0", "var waves_run: [0..N-1] -> 0..8 = 0")
REWIND12 = {"N": 12, "B": 2, "CAP": 2, "MAXP": 3}
REWIND16 = {"N": 16, "B": 2, "CAP": 3, "MAXP": 3}
# (model, constants): each at least 1M states
TABLE = [
    ("blp", {"N": 10, "LB": 4, "P": 2, "MAXLC": 3, "INV_BOUND": 3}),  # 1,511,027 states
    ("cwsr", {"Q": 2, "N": 3, "W": 2}),  # the former Q=2 instance (cwsr now defaults to Q=2 N=2 W=1)
    # gpreempt_timeslice (3,200,134 states) and kfd_monitor (1,111,210) are timed (issue 29): the
    # zone engine decides them, not the compiled core this table times
    ("nvidia_streams", {"S": 3, "P": 4, "SLOTS": 2}),  # 1,663,001
    ("nvidia_tsg", {"S": 3, "NB": 4, "BLEN": 3}),  # 2,447,000
    ("reef_rewind", {"N": 10, "B": 2, "MAXRT": 2}),  # 3,431,357
    # rt_latency is timed (issue 29): its detector's phase is a clock, 8 discrete states at any DETECT_US
    # nv_query_group has at most a few hundred states at any constants (booleans and small
    # ranges only): it has no instance with 1M states
]


CPU: dict[str, list[float]] = {}  # user + system CPU seconds of the measured processes, by row name
_last_cpu = [0.0]  # the CPU seconds of the last process `measure` ran
BYTECODE: Path | None = None  # PYTHONPYCACHEPREFIX for the gpcheck processes (None: --no-bytecode)


def measure(argv: list[str], *, cwd: Path = ROOT, env: dict[str, str] | None = None,
            timeout: float | None = None) -> tuple[float, int, str]:
    """(wall seconds, peak RSS in KiB, stdout) of one process; (inf, 0, "") past `timeout`.
    Its user + system CPU seconds are left in `_last_cpu[0]`."""
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
        _last_cpu[0] = usage.ru_utime + usage.ru_stime
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return wall, usage.ru_maxrss, out.read().decode()


def gpcheck(spec: str, consts: dict[str, int], core: str, cache: Path, timeout: float | None = None,
            extra: tuple[str, ...] = ()) -> tuple[float, int, dict | None]:
    argv = [sys.executable, "-m", "gpcheck", "verify", spec, "--json", "--no-progress", "--core", core, *extra]
    argv += [a for k, v in consts.items() for a in ("--const", f"{k}={v}")]
    path = os.pathsep.join([str(ROOT)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))
    env = dict(os.environ, PYTHONPATH=path, GPCHECK_CACHE_DIR=str(cache))
    if BYTECODE is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(BYTECODE)
    wall, rss, out = measure(argv, env=env, timeout=timeout)
    return wall, rss, (json.loads(out) if out else None)


class Spin:
    """Where SPIN's side comes from: a spin binary (`--spin`, default `spin` on PATH) that
    generates pan.c here, or pan.c files generated elsewhere (`--pan-c DIR`: DIR/<case>/pan.c)."""

    def __init__(self, binary: str | None, pan_dir: Path | None):
        self.binary = shutil.which(binary) if binary else shutil.which("spin")  # None: not found
        self.pan_dir = pan_dir

    def available(self, case: str) -> bool:
        if self.pan_dir is not None:
            return (self.pan_dir / case / "pan.c").exists() and shutil.which("gcc") is not None
        return self.binary is not None and shutil.which("gcc") is not None

    def generate(self, consts: dict[str, int], workdir: Path) -> None:
        """spin -a -o2 on tests/bench/rewind.pml with the constants: pan.c and its includes in workdir."""
        assert self.binary is not None, "no spin binary: pass --spin PATH"
        defs = [f"-D{k}={v}" for k, v in consts.items()]
        shutil.copy(PROMELA, workdir / "rewind.pml")
        subprocess.run([self.binary, *defs, "-a", "-o2", "rewind.pml"], cwd=workdir, check=True, capture_output=True)

    def build(self, case: str, consts: dict[str, int], workdir: Path) -> None:
        if self.pan_dir is not None:
            for f in (self.pan_dir / case).iterdir():
                shutil.copy(f, workdir / f.name)
        else:
            self.generate(consts, workdir)
        subprocess.run(["gcc", "-O2", "-DSAFETY", "-o", "pan", "pan.c"], cwd=workdir, check=True, capture_output=True)


def spin(sp: Spin, case: str, consts: dict[str, int], workdir: Path,
         hash_bits: int | None) -> tuple[float, int, int, float]:
    """(pan wall seconds, pan peak RSS KiB, states stored, spin + gcc seconds); `hash_bits`:
    pan's -w (its hash table has 2**w slots; None: pan's default, as issue 13 measured)."""
    t0 = time.perf_counter()
    sp.build(case, consts, workdir)
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
        cpu = f"  CPU median {statistics.median(CPU[name]):6.2f} s" if CPU.get(name) else ""
        print(f"  {name:34s} wall median {med:8.2f} s (min {min(walls):7.2f}, n={len(walls)})  "
              f"peak RSS {max(rsss) / 1024:7.0f} MiB  {rate}{cpu}", flush=True)

    def ratio(self, a: str, b: str) -> None:
        rows = {r[0]: r for r in self.rows}
        if a in rows and b in rows:
            wa, wb = statistics.median(rows[a][1]), statistics.median(rows[b][1])
            ma, mb = max(rows[a][2]), max(rows[b][2])
            if not all(0 < x < float("inf") for x in (wa, wb, ma, mb)):  # a side timed out
                return
            cpu = ""
            if CPU.get(a) and CPU.get(b):
                cpu = f", CPU {statistics.median(CPU[a]) / statistics.median(CPU[b]):.2f}x"
            print(f"  ratio {a} / {b}: wall {wa / wb:.2f}x, peak memory {ma / mb:.2f}x{cpu}", flush=True)


VARIANTS = {"workers2": ("--workers", "2"), "fingerprint": ("--fingerprint",)}  # --variants


def rewind_case(case: str, consts: dict[str, int], expected: int, runs: int, python: bool, cache: Path,
                py_timeout: float, hash_bits: int | None, cold: bool = True, variants: tuple[str, ...] = (),
                sp: Spin | None = None, workers_list: tuple[int, ...] = ()) -> None:
    print(f"rewind {consts} (waves_run 0..8), {expected:,} states", flush=True)
    table = Table()
    with_spin = sp is not None and sp.available(case)
    if not with_spin:
        print("  no SPIN here (no spin binary or --pan-c files, or no gcc): SPIN's rows are left out", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "rewind_wide.gpspec"
        spec.write_text(EXAMPLE.read_text().replace(*WIDE))
        cold, warm, sp_runs, py = [], [], [], []
        var: dict[str, list[tuple[float, int]]] = {v: [] for v in variants}
        per_workers: dict[int, list[tuple[float, int]]] = {k: [] for k in workers_list}
        build = 0.0
        gpcheck(str(spec), consts, "compiled", cache, extra=("--max-states", "1"))  # compile: warm the cache
        # the parallel kernels are compiled on their first use (--workers auto, the default, uses them on
        # a machine with 4 idle cores or more)
        gpcheck(str(spec), consts, "compiled", cache, extra=("--max-states", "100000", "--workers", "2"))
        for _ in range(runs):
            if with_spin:
                assert sp is not None
                wall, rss, states, build = spin(sp, case, consts, Path(tmp), hash_bits)
                assert states == expected, states
                sp_runs.append((wall, rss))
                CPU.setdefault("SPIN pan (-O2 -DSAFETY)", []).append(_last_cpu[0])
            wall, rss, out = gpcheck(str(spec), consts, "compiled", cache)
            assert out is not None and out["states"] == expected, out and out["states"]
            warm.append((wall, rss))
            CPU.setdefault("gpcheck compiled (cache warm)", []).append(_last_cpu[0])
            for v in variants:
                wall, rss, out = gpcheck(str(spec), consts, "compiled", cache, extra=VARIANTS[v])
                assert out is not None and out["states"] == expected, out and out["states"]
                var[v].append((wall, rss))
                CPU.setdefault(f"gpcheck compiled --{v}", []).append(_last_cpu[0])
            for k in workers_list:
                wall, rss, out = gpcheck(str(spec), consts, "compiled", cache, extra=("--workers", str(k)))
                assert out is not None and out["states"] == expected, out and out["states"]
                per_workers[k].append((wall, rss))
                CPU.setdefault(f"gpcheck compiled --workers {k}", []).append(_last_cpu[0])
            if cold:
                with tempfile.TemporaryDirectory() as fresh:
                    wall, rss, out = gpcheck(str(spec), consts, "compiled", Path(fresh))
                assert out is not None and out["states"] == expected
                cold.append((wall, rss))
            if python:
                wall, rss, out = gpcheck(str(spec), consts, "python", cache, timeout=py_timeout)
                assert out is None or out["states"] == expected
                py.append((wall, rss))
    spin_row = "SPIN pan (-O2 -DSAFETY)"
    if sp_runs:
        table.add(spin_row, [w for w, _ in sp_runs], [r for _, r in sp_runs], expected)
        print(f"  (spin -a + gcc -O2: {build:.2f} s, not included)")
    table.add("gpcheck compiled (cache warm)", [w for w, _ in warm], [r for _, r in warm], expected)
    for v in variants:
        table.add(f"gpcheck compiled --{v}", [w for w, _ in var[v]], [r for _, r in var[v]], expected)
    for k in workers_list:
        table.add(f"gpcheck compiled --workers {k}", [w for w, _ in per_workers[k]],
                  [r for _, r in per_workers[k]], expected)
    if cold:
        table.add("gpcheck compiled cold (compiles)", [w for w, _ in cold], [r for _, r in cold], expected)
    if py:
        table.add("gpcheck python", [w for w, _ in py], [r for _, r in py], expected)
    table.ratio("gpcheck compiled (cache warm)", spin_row)
    for v in variants:
        table.ratio(f"gpcheck compiled --{v}", spin_row)
    table.ratio("gpcheck compiled cold (compiles)", spin_row)
    table.ratio("gpcheck compiled (cache warm)", "gpcheck python")
    if workers_list:
        speedup_table(table, workers_list, spin_row if sp_runs else None)


def speedup_table(table: Table, workers_list: tuple[int, ...], spin_row: str | None) -> None:
    """--workers-list: wall medians per worker count, speedup against the first (usually 1)
    and the ratio to SPIN's wall time, all from the same run."""
    rows = {r[0]: r for r in table.rows}
    med = {k: statistics.median(rows[f"gpcheck compiled --workers {k}"][1]) for k in workers_list}
    rss = {k: max(rows[f"gpcheck compiled --workers {k}"][2]) for k in workers_list}
    base = med[workers_list[0]]
    spin_wall = statistics.median(rows[spin_row][1]) if spin_row else None
    print(f"  speedup table (cpus here: {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}):")
    print(f"  {'workers':>7}  {'wall s':>8}  {'speedup vs ' + str(workers_list[0]):>14}  {'x SPIN wall':>11}  "
          f"{'peak MiB':>8}")
    for k in workers_list:
        vs_spin = f"{med[k] / spin_wall:11.2f}" if spin_wall else f"{'-':>11}"
        print(f"  {k:7d}  {med[k]:8.2f}  {base / med[k]:14.2f}  {vs_spin}  {rss[k] / 1024:8.0f}", flush=True)


def model_case(name: str, consts: dict[str, int], runs: int, python: bool, cache: Path, py_timeout: float,
               variants: tuple[str, ...] = ()) -> None:
    print(f"{name} {consts}", flush=True)
    table = Table()
    core = "compiled"
    gpcheck(name, consts, "compiled", cache, extra=("--max-states", "200000", "--workers", "2"))  # parallel kernels
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
    ap.add_argument("--no-python", action="store_true", help="rewind12 and cwsr: leave out the Python engine")
    ap.add_argument("--python-timeout", type=float, default=900.0)
    ap.add_argument("--no-cold", action="store_true", help="skip the runs that compile from an empty cache")
    ap.add_argument("--cache", default=None, help="compile cache to use (default: a fresh temporary one)")
    ap.add_argument("--variants", default="", help=f"also run the compiled core with: {','.join(VARIANTS)}")
    ap.add_argument("--workers-list", default="", help="rewind cases: one compiled run per worker count "
                    "(e.g. 1,2,4,8) and a speedup table")
    ap.add_argument("--no-bytecode", action="store_true", help="run gpcheck with the caller's bytecode setting "
                    "(default: bytecode written, as after pip install; see the docstring)")
    ap.add_argument("--spin", default=None, help="the spin binary (default: spin on PATH)")
    ap.add_argument("--pan-c", default=None, help="a folder written by --make-pan-c elsewhere: "
                    "<folder>/rewind12/pan.c ... compiled here with gcc instead of running spin")
    ap.add_argument("--make-pan-c", default=None, help="write the pan.c files of rewind12 and rewind16 "
                    "into this folder (needs spin here) and exit")
    opts = ap.parse_args()
    if opts.make_pan_c:
        sp = Spin(opts.spin, None)
        for case, consts in (("rewind12", REWIND12), ("rewind16", REWIND16)):
            folder = Path(opts.make_pan_c) / case
            folder.mkdir(parents=True, exist_ok=True)
            sp.generate(consts, folder)
            (folder / "rewind.pml").unlink()
            print(f"wrote {folder}/pan.c")
        return
    cases = opts.cases.split(",")
    variants = tuple(v for v in opts.variants.split(",") if v)
    workers_list = tuple(int(k) for k in opts.workers_list.split(",") if k)
    sp = Spin(opts.spin, Path(opts.pan_c).resolve() if opts.pan_c else None)
    print(f"cpus {os.cpu_count()}, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    global BYTECODE
    with tempfile.TemporaryDirectory() as cache_dir:
        cache = Path(opts.cache or cache_dir)
        if not opts.no_bytecode:
            BYTECODE = Path(cache_dir) / "pycache"
        dont = os.environ.get("PYTHONDONTWRITEBYTECODE", "")
        mode = (f"PYTHONDONTWRITEBYTECODE={dont!r} as the caller has it" if BYTECODE is None
                else "written by the warm-up runs and read by the measured ones (as after pip install)")
        print(f"gpcheck bytecode: {mode}", flush=True)
        if "rewind12" in cases:
            rewind_case("rewind12", REWIND12, 2_774_248, opts.runs, not opts.no_python, cache, opts.python_timeout,
                        None, not opts.no_cold, variants, sp, workers_list)
        if "rewind16" in cases:
            rewind_case("rewind16", REWIND16, 29_904_391, opts.runs, False, cache, opts.python_timeout, 26,
                        not opts.no_cold, variants, sp, workers_list)
        if "cwsr" in cases:
            model_case("cwsr", {"Q": 2, "N": 3, "W": 2}, opts.runs, not opts.no_python, cache, opts.python_timeout,
                       variants)
        if "table" in cases:
            for name, consts in TABLE:
                if opts.models and name not in opts.models.split(","):
                    continue
                model_case(name, consts, opts.table_runs or opts.runs, opts.python_table, cache,
                           opts.python_timeout, variants)
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


if __name__ == "__main__":
    main()

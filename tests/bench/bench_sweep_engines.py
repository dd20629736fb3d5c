"""Benchmark: Ray against Dask (distributed) as the engine under `gpcheck sweep`, on this work.

    python tests/bench/bench_sweep_engines.py [--engine dask|ray|both] [--workers 2] [--tasks 200] [--json]

Run it with an interpreter that has the engine installed, each in its own venv so that install
sizes can be compared (`du -sm VENV/lib/python3.*/site-packages` before and after):

    python3 -m venv /tmp/b-dask && /tmp/b-dask/bin/pip install distributed psutil z3-solver lark networkx rich orjson
    python3 -m venv /tmp/b-ray && /tmp/b-ray/bin/pip install ray psutil z3-solver lark networkx rich orjson
    /tmp/b-dask/bin/python tests/bench/bench_sweep_engines.py --engine dask
    /tmp/b-ray/bin/python tests/bench/bench_sweep_engines.py --engine ray

For each engine it measures, in this one process:

- import: seconds to import the engine's client module;
- start: seconds to start an embedded local cluster of `--workers` single-threaded worker processes
  and wait until they are all up;
- memory: resident memory (MB) of this process and every process it started, once started and
  again after the sweep (the workers hold the compiled models by then);
- per task: wall seconds of `--tasks` no-op tasks submitted at once, divided by their number;
- sweep: wall seconds of a small real sweep (rewind.gpspec, N in 2..13 x CAP in 1..2: 24 `verify`
  runs) on the cluster (`sweep`, cold workers), then again on the warm workers (`sweep_again`:
  gpcheck imported there), both against the same 24 runs one after another in this process once
  the cluster is stopped (`serial`, the baseline measured in the same run: this machine is
  shared and noisy, so compare the ratios `sweep_over_serial`, `again_over_serial`);
- stop: seconds to shut the cluster down.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[2]
SPEC = str(ROOT.parent / "shared" / "spec-examples" / "rewind.gpspec")
GRID = [{"N": n, "CAP": c} for n, c in itertools.product(range(2, 14), range(1, 3))]


def _verify_one(consts: dict[str, int]) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from gpcheck.checker import verify

    return [r.verdict.value for r in verify(SPEC, consts=consts).results]


def _noop(i: int) -> int:
    return i


def _rss_mb() -> float:
    import psutil

    me = psutil.Process()
    procs = [me] + me.children(recursive=True)
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def bench_dask(workers: int, tasks: int) -> dict[str, Any]:
    t_import, _ = _timed(lambda: __import__("distributed"))
    from distributed import Client, LocalCluster

    def start() -> Any:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
        client.wait_for_workers(workers)
        return cluster, client

    t_start, (cluster, client) = _timed(start)
    rss_started = _rss_mb()
    t_tasks, _ = _timed(lambda: client.gather(client.map(_noop, range(tasks), pure=False)))
    t_sweep, verdicts = _timed(lambda: client.gather(client.map(_verify_one, GRID, pure=False)))
    t_again, _ = _timed(lambda: client.gather(client.map(_verify_one, GRID, pure=False)))
    rss_swept = _rss_mb()
    t_stop, _ = _timed(lambda: (client.close(), cluster.close()))
    return _row("dask", t_import, t_start, rss_started, rss_swept, t_tasks / tasks, t_sweep, t_again, t_stop, verdicts)


def bench_ray(workers: int, tasks: int) -> dict[str, Any]:
    t_import, ray = _timed(lambda: __import__("ray"))

    def start() -> None:
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
        warm = ray.remote(_noop)
        ray.get([warm.remote(i) for i in range(workers)])  # workers up, as Dask's wait_for_workers

    t_start, _ = _timed(start)
    rss_started = _rss_mb()
    noop = ray.remote(_noop)
    t_tasks, _ = _timed(lambda: ray.get([noop.remote(i) for i in range(tasks)]))
    one = ray.remote(num_cpus=1)(_verify_one)
    t_sweep, verdicts = _timed(lambda: ray.get([one.remote(c) for c in GRID]))
    t_again, _ = _timed(lambda: ray.get([one.remote(c) for c in GRID]))
    rss_swept = _rss_mb()
    t_stop, _ = _timed(ray.shutdown)
    return _row("ray", t_import, t_start, rss_started, rss_swept, t_tasks / tasks, t_sweep, t_again, t_stop, verdicts)


def _row(engine: str, t_import: float, t_start: float, rss_started: float, rss_swept: float,
         per_task: float, t_sweep: float, t_again: float, t_stop: float, verdicts: list[list[str]]) -> dict[str, Any]:
    _verify_one(GRID[0])  # gpcheck imported here too, as on the warm workers
    t_serial, serial = _timed(lambda: [_verify_one(c) for c in GRID])
    assert serial == verdicts, "the cluster's verdicts differ from the serial run's"
    return {
        "engine": engine, "import_s": round(t_import, 2), "start_s": round(t_start, 2),
        "rss_started_mb": round(rss_started), "rss_after_sweep_mb": round(rss_swept),
        "per_task_ms": round(per_task * 1000, 2), "sweep_s": round(t_sweep, 2), "sweep_again_s": round(t_again, 2),
        "serial_s": round(t_serial, 2), "sweep_over_serial": round(t_sweep / t_serial, 2), "again_over_serial": round(t_again / t_serial, 2),
        "stop_s": round(t_stop, 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", choices=("dask", "ray", "both"), default="both")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.environ["PYTHONPATH"] = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    rows = []
    for name, fn in (("dask", bench_dask), ("ray", bench_ray)):
        if args.engine not in (name, "both"):
            continue
        if importlib.util.find_spec("distributed" if name == "dask" else "ray") is None:
            print(f"{name}: not installed, skipped", file=sys.stderr)
            continue
        rows.append(fn(args.workers, args.tasks))
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            print("  ".join(f"{k}={v}" for k, v in r.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

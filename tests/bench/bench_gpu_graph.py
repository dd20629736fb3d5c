"""Benchmark (issue 35, item 3): liveness after `--device cuda` at millions of states, phase by
phase: the device search, the edges built on the device and copied to the host
(device_graph.host_graph), the compiled core's liveness pass on the host. (Latencies are elapsed
time since `cost` retired: the zone engine decides them, with or without a device.)

    python tests/bench/bench_gpu_graph.py [--compare] [--max-states 20000000] CASE [CASE ...]

CASE is MODEL:K=V,... (a bundled untimed model with liveness properties). `--compare` (up to
--compare-max states) runs the compiled CPU core on one thread on the same properties and checks
that its report equals the device's. A case whose
device search finds more than --max-states states stops after the search (said so). Needs CuPy,
a GPU and numba."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # this checkout's gpcheck


def _key(r):  # type: ignore[no-untyped-def]
    c = r.counterexample
    return (r.property, r.kind, r.verdict.value, r.reason, r.detail,
            None if c is None else ([(s.action, s.args, s.state) for s in c.steps], c.loop))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="+")
    ap.add_argument("--compare", action="store_true")
    ap.add_argument("--max-states", type=int, default=20_000_000)
    ap.add_argument("--compare-max", type=int, default=5_000_000, help="--compare only up to this many states")
    a = ap.parse_args()
    from gpcheck.checker.api import model_api  # noqa: F401 - the api package's import order
    from gpcheck.checker.api.explicit_run import run_explicit
    from gpcheck.checker.engines.explicit import device_graph, device_search, fast_explicit
    from gpcheck.checker.engines.explicit.explicit import Limits, select_properties
    from gpcheck.gpmodel import compile_model
    from gpcheck.spec import load_spec

    failed = False
    for case in a.cases:
        name, _, given = case.partition(":")
        consts = {k: int(v) for k, v in (p.split("=") for p in given.split(",") if p)}
        m = load_spec(str(ROOT / "spec" / "models" / f"{name}.gpspec"), consts)
        cm = compile_model(m)
        graph = {p.name for p in (*m.liveness, *m.latencies)}  # latencies: left to the zone engine
        wanted = select_properties(m, None) - {p.name for p in m.transitions}
        safety = wanted - graph
        device_search.search(cm, safety, Limits(max_states=1000), device="cuda")  # nvcc once
        t0 = time.perf_counter()
        res, g = device_search.search(cm, safety, device="cuda")
        t1 = time.perf_counter()
        print(f"{case}: {g.n:,} states, device search {t1 - t0:.2f} s", flush=True)
        if g.n > a.max_states or not res.complete:
            print(f"{case}: past --max-states or incomplete: the host passes are not run", flush=True)
            continue
        host = device_graph.host_graph(cm, res, g)
        t2 = time.perf_counter()
        edges = int(host.csr.offsets[-1]) if host.csr is not None else 0
        print(f"{case}: edges {edges:,} built on the device and copied to the host {t2 - t1:.2f} s", flush=True)
        live = fast_explicit.liveness_results(cm, res, host, wanted)
        t3 = time.perf_counter()
        print(f"{case}: liveness pass {t3 - t2:.2f} s: " + ", ".join(f"{r.property}={r.verdict.value}" for r in live),
              flush=True)
        if a.compare and g.n <= a.compare_max:
            t7 = time.perf_counter()
            cpu = run_explicit(m, wanted - {p.name for p in m.latencies}, Limits(), core="compiled", workers=1)
            t8 = time.perf_counter()
            mine = [_key(r) for r in sorted(live, key=lambda r: r.property)]
            theirs = [_key(r) for r in sorted(cpu.results, key=lambda r: r.property) if r.kind == "liveness"]
            same = cpu.states == g.n and mine == theirs
            failed |= not same
            print(f"{case}: compiled CPU core, 1 thread, whole run {t8 - t7:.2f} s: {'SAME' if same else 'DIFFERENT'}",
                  flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

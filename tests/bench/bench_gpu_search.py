"""Benchmark (issue 35): the device search (`--device cuda`) beside the compiled CPU core on 1 and
16 threads, in one process on one machine: states per second and peak device memory.

    python tests/bench/bench_gpu_search.py [--cases rewind16,cwsr] [--cwsr Q=2,N=3,W=2]
                                           [--threads 1,16] [--cpu-timeout 120] [--no-cpu]

Every side checks the same properties: the safety ones the device checks (invariants, deadlock,
range; transition properties, liveness and latency are left out of all sides). Each side is
warmed up first (nvcc and numba compile the model; a short search), so the figures are search
time only. The CPU core stops at --cpu-timeout seconds (Limits.timeout), and its rate is then
that of the part it explored (said in the row). The state counts of every finished side must be
equal; the bench exits 1 otherwise.

Cases:
  rewind16  tests/bench/rewind.gpspec, waves_run widened to 0..8, N=16 B=2 CAP=3 MAXP=3
            (29,904,391 states; bench_compiled.py's case)
  cwsr      spec/models/cwsr.gpspec at --cwsr (default Q=2 N=3 W=2)
  rewind12  the same as rewind16 at N=12 CAP=2 (2,774,248 states): a quick check
  NAME:K=V,...  a bundled model (or `rewind`, widened as above) at these constants, e.g.
            `--cases reef_rewind:Q=2,N=4` (separate cases with `;`)
Needs CuPy and a GPU for the device rows, numba for the CPU rows."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # this checkout's gpcheck
EXAMPLE = Path(__file__).with_name("rewind.gpspec")
WIDE = ("var waves_run: [0..N-1] -> 0..3 = 0", "var waves_run: [0..N-1] -> 0..8 = 0")
CASES = {
    "rewind12": ("rewind", {"N": 12, "B": 2, "CAP": 2, "MAXP": 3}),
    "rewind16": ("rewind", {"N": 16, "B": 2, "CAP": 3, "MAXP": 3}),
}


def _model(case: str, cwsr: dict[str, int]):  # type: ignore[no-untyped-def]
    from gpcheck.spec import load_source, load_spec

    name, _, given = case.partition(":")
    consts = {k: int(v) for k, v in (p.split("=") for p in given.split(",") if p)}
    if name in CASES:
        name, consts = CASES[name]
    elif name == "cwsr" and not given:
        consts = cwsr
    if name == "rewind":
        return load_source(EXAMPLE.read_text().replace(*WIDE), str(EXAMPLE), consts)
    return load_spec(str(ROOT / "spec" / "models" / f"{name}.gpspec"), consts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="rewind16,cwsr")
    ap.add_argument("--cwsr", default="Q=2,N=3,W=2")
    ap.add_argument("--threads", default="1,16")
    ap.add_argument("--cpu-timeout", type=float, default=120.0)
    ap.add_argument("--no-cpu", action="store_true")
    a = ap.parse_args()
    import cupy

    from gpcheck.gpmodel import compile_model
    from gpcheck.checker.engines.explicit import device_search, fast_explicit
    from gpcheck.checker.engines.explicit.explicit import Limits, select_properties

    cwsr = {k: int(v) for k, v in (p.split("=") for p in a.cwsr.split(",") if p)}
    props = cupy.cuda.runtime.getDeviceProperties(0)
    print(f"device: {props['name'].decode()}, {props['totalGlobalMem'] / 2**30:.1f} GiB; CuPy {cupy.__version__}")
    failed = False
    for case in a.cases.split(";" if ":" in a.cases else ","):
        m = _model(case, cwsr)
        cm = compile_model(m)
        wanted = select_properties(m, None) - {p.name for p in (*m.transitions, *m.liveness, *m.latencies)}
        label = case + ("" if case != "cwsr" else ":" + a.cwsr)
        t0 = time.perf_counter()
        device_search.search(cm, wanted, Limits(max_states=1000), device="cuda")  # nvcc, once
        compile_s = time.perf_counter() - t0
        cupy.get_default_memory_pool().free_all_blocks()
        t0 = time.perf_counter()
        dres, g = device_search.search(cm, wanted, device="cuda")
        wall = time.perf_counter() - t0
        device_n, device_complete = g.n, dres.complete
        dev_rate = g.n / g.seconds  # type: ignore[attr-defined]
        verdicts = {r.property: r.verdict.value for r in __import__(
            "gpcheck.checker.engines.explicit.explicit", fromlist=["x"]).safety_results(cm, dres, wanted)}
        print(f"{label}: device {g.n:,} states, depth {dres.depth}, complete {dres.complete}, "
              f"search {g.seconds:.2f} s (wall {wall:.2f} s, nvcc {compile_s:.1f} s), "  # type: ignore[attr-defined]
              f"{dev_rate / 1e6:.1f} M states/s, peak device memory {g.peak_bytes / 2**30:.2f} GiB; "  # type: ignore[attr-defined]
              f"{dres.stop_reason or ''} verdicts {verdicts}", flush=True)
        del dres, g  # the next search starts with the whole card
        cupy.get_default_memory_pool().free_all_blocks()
        if a.no_cpu:
            continue
        for threads in (int(t) for t in a.threads.split(",")):
            fast_explicit.search(cm, wanted, Limits(max_states=200_000), workers=threads)  # numba compiles
            t0 = time.perf_counter()
            cres, cg = fast_explicit.search(cm, wanted, Limits(timeout=a.cpu_timeout), workers=threads)
            secs = time.perf_counter() - t0
            rate = cg.n / secs
            done = "complete" if cres.complete else f"stopped at {a.cpu_timeout:g} s"
            print(f"{label}: cpu {threads:2} thread(s) {cg.n:,} states ({done}), {secs:.2f} s, "
                  f"{rate / 1e6:.2f} M states/s; device/cpu = {dev_rate / rate:.1f}x", flush=True)
            if cres.complete and device_complete and cg.n != device_n:
                print(f"{label}: STATE COUNTS DIFFER: device {device_n} cpu {cg.n}")
                failed = True
            del cres, cg
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

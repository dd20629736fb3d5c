"""Benchmark (issue 35): the device search (`--device cuda`) beside the compiled CPU core on 1 and
16 threads and SPIN, in one process on one machine: states per second and device memory.

    python tests/bench/bench_gpu_search.py [--cases rewind16,cwsr] [--cwsr Q=2,N=3,W=2]
                                           [--stores full,compact] [--threads 1,16]
                                           [--cpu-timeout 120] [--device-timeout S] [--no-cpu]
                                           [--spin PATH | --pan-c DIR] [--spin-timeout 600]

Every side checks the same properties: the safety ones the device checks (invariants, deadlock,
range; transition properties, liveness and latency are left out of all sides). A timed model
(`time` durations: every bundled model but a few) is searched as `verify --device cuda` and the
explicit engine on the CPU search it: its untimed abstraction (checker/api/timed_abstraction.py;
its row says so), whose proofs hold for every timing. Each side is
warmed up first (nvcc and numba compile the model; a short search), so the figures are search
time only. The CPU core stops at --cpu-timeout seconds (Limits.timeout), the device search at
--device-timeout (none by default), and the rate is then that of the part explored (said in the
row). The state counts of every finished side must be
equal; the bench exits 1 otherwise.

Device stores (--stores): `full` keeps every state's packed words, parent, flag and a table
slot (device_search.py); `compact` the compact visited set (device_compact.py,
NOTE(compact-table)), which `gpcheck verify --device cuda` uses for safety-only runs. Each row
gives the peak device memory (CuPy's pool, the chunk's scratch arrays included) and the visited
set's bytes per state at the end (what stays allocated for the states, without the scratch).
The two stores must find the same states, depth and verdicts.

SPIN (the rewind cases only: tests/bench/rewind.pml is their Promela): `--spin PATH` names a
spin binary (default: `spin` on PATH; spin -a -o2, gcc -O2 -DSAFETY, pan -m10000, the -w of
bench_compiled.py), `--pan-c DIR` the pan.c files `bench_compiled.py --make-pan-c DIR` wrote
where SPIN is installed; without gcc, a `pan` built beside them (DIR/<case>/pan) is run. No
SPIN, gcc or pan: the SPIN row is left out and said so.

Cases:
  rewind16  tests/bench/rewind.gpspec, waves_run widened to 0..8, N=16 B=2 CAP=3 MAXP=3
            (29,904,391 states; bench_compiled.py's case)
  cwsr      spec/models/cwsr.gpspec at --cwsr (default Q=2 N=3 W=2)
  cwsr3     spec/models/cwsr.gpspec at Q=3 N=3 W=2 (three queues)
  reef2     spec/models/reef_rewind.gpspec with two BE queues: Q=2 N=4 INV_BOUND=11 (the tight
            bound at Q=2, the model's comment)
  rewind12  the same as rewind16 at N=12 CAP=2 (2,774,248 states): a quick check
  NAME:K=V,...  a bundled model (or `rewind`, widened as above) at these constants, e.g.
            `--cases rewind:N=28,B=2,CAP=4,MAXP=3` (separate cases with `;`)
Needs CuPy and a GPU for the device rows, numba for the CPU rows."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # this checkout's gpcheck
EXAMPLE = Path(__file__).with_name("rewind.gpspec")
WIDE = ("var waves_run: [0..N-1] -> 0..3 = 0", "var waves_run: [0..N-1] -> 0..8 = 0")
SPIN_HASH_BITS = {"rewind12": None, "rewind16": 26}  # bench_compiled.py's pan -w
CASES = {
    "rewind12": ("rewind", {"N": 12, "B": 2, "CAP": 2, "MAXP": 3}),
    "rewind16": ("rewind", {"N": 16, "B": 2, "CAP": 3, "MAXP": 3}),
    "cwsr3": ("cwsr", {"Q": 3, "N": 3, "W": 2}),
    "reef2": ("reef_rewind", {"Q": 2, "N": 4, "INV_BOUND": 11}),
}


def _model(case: str, cwsr: dict[str, int]):  # type: ignore[no-untyped-def]
    """The case's model; a timed one's untimed abstraction (what the device and the CPU core
    search for its safety properties)."""
    from gpcheck.checker.engines.timed import untimed
    from gpcheck.spec import load_source, load_spec

    name, _, given = case.partition(":")
    consts = {k: int(v) for k, v in (p.split("=") for p in given.split(",") if p)}
    if name in CASES:
        name, consts = CASES[name]
    elif name == "cwsr" and not given:
        consts = cwsr
    if name == "rewind":
        return load_source(EXAMPLE.read_text().replace(*WIDE), str(EXAMPLE), consts)
    return untimed(load_spec(str(ROOT / "spec" / "models" / f"{name}.gpspec"), consts))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="rewind16,cwsr")
    ap.add_argument("--cwsr", default="Q=2,N=3,W=2")
    ap.add_argument("--threads", default="1,16")
    ap.add_argument("--cpu-timeout", type=float, default=120.0)
    ap.add_argument("--device-timeout", type=float, default=None)
    ap.add_argument("--no-cpu", action="store_true")
    ap.add_argument("--stores", default="full,compact")
    ap.add_argument("--spin", default=None, help="a spin binary (default: spin on PATH)")
    ap.add_argument("--pan-c", default=None, help="DIR/<case>/pan.c from bench_compiled.py --make-pan-c")
    ap.add_argument("--spin-timeout", type=float, default=600.0)
    a = ap.parse_args()
    import cupy

    from gpcheck.gpmodel import compile_model
    from gpcheck.checker.engines.explicit import device_compact, device_search, explicit, fast_explicit
    from gpcheck.checker.engines.explicit.explicit import Limits, select_properties

    cwsr = {k: int(v) for k, v in (p.split("=") for p in a.cwsr.split(",") if p)}
    props = cupy.cuda.runtime.getDeviceProperties(0)
    print(f"device: {props['name'].decode()}, {props['totalGlobalMem'] / 2**30:.1f} GiB; CuPy {cupy.__version__}")
    failed = False
    for case in a.cases.split(";" if ":" in a.cases else ","):
        timed = _timed(case)
        m = _model(case, cwsr)
        cm = compile_model(m)
        wanted = select_properties(m, None) - {p.name for p in (*m.transitions, *m.liveness, *m.latencies)}
        label = case + ("" if case != "cwsr" else ":" + a.cwsr) + (" (untimed abstraction)" if timed else "")
        dev_rate = 0.0
        device_n, device_complete = None, False
        seen = None
        for store in a.stores.split(","):
            run = device_compact.search if store == "compact" else device_search.search
            t0 = time.perf_counter()
            run(cm, wanted, Limits(max_states=1000), device="cuda")  # nvcc, once
            compile_s = time.perf_counter() - t0
            cupy.get_default_memory_pool().free_all_blocks()
            t0 = time.perf_counter()
            dres, g = run(cm, wanted, Limits(timeout=a.device_timeout), device="cuda")
            wall = time.perf_counter() - t0
            rate = g.n / g.seconds  # type: ignore[attr-defined]
            verdicts = {r.property: r.verdict.value for r in explicit.safety_results(cm, dres, wanted)}
            held = g.held_bytes()
            print(f"{label}: device {store:7} {g.n:,} states, depth {dres.depth}, complete {dres.complete}, "
                  f"search {g.seconds:.2f} s (wall {wall:.2f} s, nvcc {compile_s:.1f} s), "  # type: ignore[attr-defined]
                  f"{rate / 1e6:.1f} M states/s, peak device memory {g.peak_bytes / 2**30:.2f} GiB "  # type: ignore[attr-defined]
                  f"({g.peak_bytes / max(1, g.n):.1f} B/state), visited set {held / 2**30:.2f} GiB "  # type: ignore[attr-defined]
                  f"({held / max(1, g.n):.1f} B/state); {dres.stop_reason or ''} verdicts {verdicts}", flush=True)
            mine = (g.n, dres.depth, dres.complete, verdicts)
            if seen is not None and dres.complete and seen[2] and mine != seen:
                print(f"{label}: THE DEVICE STORES DIFFER: {seen} vs {mine}")
                failed = True
            if seen is None or (dres.complete and not seen[2]):
                seen = mine
                device_n, device_complete = g.n, dres.complete
            if store == "compact" or not dev_rate:  # the ratios: what `verify --device cuda` runs
                dev_rate = rate
            del dres, g  # the next search starts with the whole card
            cupy.get_default_memory_pool().free_all_blocks()
        failed |= _spin_row(a, case, label, device_n, device_complete, dev_rate)
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


def _timed(case: str) -> bool:
    """Whether the case's bundled model is timed (its rows are then its untimed abstraction's)."""
    from gpcheck.spec import load_spec

    name = CASES.get(case.partition(":")[0], (case.partition(":")[0],))[0]
    path = ROOT / "spec" / "models" / f"{name}.gpspec"
    return path.exists() and load_spec(str(path), {}).has_time


def _spin_row(a: argparse.Namespace, case: str, label: str, device_n: int | None, complete: bool,
              dev_rate: float) -> bool:
    """SPIN's row for a rewind case (bench_compiled.py's build and run); True if its state
    count differs from the device's."""
    if case not in SPIN_HASH_BITS:
        return False
    sys.path.insert(0, str(Path(__file__).parent))
    import bench_compiled as bc  # noqa: PLC0415 - the SPIN side is bench_compiled.py's

    pan_dir = Path(a.pan_c).resolve() if a.pan_c else None
    sp = bc.Spin(a.spin, pan_dir)
    prebuilt = pan_dir / case / "pan" if pan_dir is not None else None
    with tempfile.TemporaryDirectory() as tmp:
        if sp.available(case):
            wall, rss, states, build = bc.spin(sp, case, dict(CASES[case][1]), Path(tmp), SPIN_HASH_BITS[case])
            made = "gcc -O2 -DSAFETY on the given pan.c" if pan_dir is not None else "spin -a -o2 + gcc -O2 -DSAFETY"
            how = f"{made} here: {build:.1f} s, not included"
        elif prebuilt is not None and prebuilt.exists():
            shutil.copy(prebuilt, Path(tmp) / "pan")
            bits = SPIN_HASH_BITS[case]
            wall, rss, out = bc.measure(["./pan", "-m10000"] + ([f"-w{bits}"] if bits else []), cwd=Path(tmp),
                                        timeout=a.spin_timeout)
            import re  # noqa: PLC0415

            found = re.search(r"(\d+) states, stored", out)
            assert found is not None and "errors: 0" in out, out
            states = int(found.group(1))
            how = "pan built with gcc -O2 -DSAFETY on the machine that generated pan.c (no gcc here)"
        else:
            print(f"{label}: no SPIN here (no spin binary or pan.c with gcc, no prebuilt pan): SPIN's row is left out",
                  flush=True)
            return False
    rate = states / wall
    ratio = f"; device/SPIN = {dev_rate / rate:.1f}x" if dev_rate else ""
    print(f"{label}: SPIN pan {states:,} states, {wall:.2f} s, {rate / 1e6:.2f} M states/s, peak RSS "
          f"{rss / 1024:.0f} MiB ({rss * 1024 / states:.1f} B/state){ratio} ({how})", flush=True)
    if complete and device_n is not None and states != device_n:
        print(f"{label}: STATE COUNTS DIFFER: device {device_n} SPIN {states}")
        return True
    return False


if __name__ == "__main__":
    sys.exit(main())

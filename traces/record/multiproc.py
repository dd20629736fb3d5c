"""Several processes (one CUDA context each, so one TSG each: `spec/models/nvidia_tsg.gpspec`) time-
slicing the GPU: each launches its own sequence of kernels back to back, one 1024-thread block per
SM, from one agreed host instant; thread 0 of every block logs each jump > 20 us between
consecutive `%globaltimer` reads (`gap` events: the block was switched out).

Runs on the device machine only (CuPy). The parent (`timeslice_multi`) starts one child process
per role (`python3 -m gpcheck.traces.record timeslice-multi-child ...`) and joins their recordings
into one `parts` file, the format of `timeslice_two_processes`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

MAX_GAPS = 32


def child(role: str, start_at_ns: int, n: int, spin_ns: int, path: str) -> None:
    """One process: n kernels of spin_ns, gap logs per launch, written to `path` as JSON."""
    import cupy as cp  # type: ignore[import-not-found]

    from gpcheck.traces.record.device import Gpu
    from gpcheck.traces.record.workloads import _record, gpu_sm_count

    sm = gpu_sm_count()
    gpu = Gpu(max_blocks=sm * (n + 2) + 8)
    gpu.calibrate()
    s, p = gpu.stream(gpu.prio_least)
    gpu.launch("warmup", 0, s, role, 1, 1000)
    cp.cuda.runtime.deviceSynchronize()
    gpu.launches.clear()
    gpu.used_blocks = 0
    gaps = [cp.zeros(2 * MAX_GAPS * sm, dtype=cp.uint64) for _ in range(n)]
    while time.time_ns() < start_at_ns:
        pass
    for i in range(n):
        gpu.launch(f"{role}:{i}", i, s, role, sm, spin_ns, gap_thr=20_000, gaps=gaps[i], max_gaps=MAX_GAPS)
    cp.cuda.runtime.deviceSynchronize()
    rec = _record(gpu, "timeslice", role, {"kernels": n, "blocks": sm, "spin_ns": spin_ns, "gap_threshold_ns": 20_000,
                                           "max_gaps_logged_per_block": MAX_GAPS},
                  [{"name": role, "cuda_priority": p}])
    base = rec["clock"]["base_ns"]
    rows = []
    for i in range(n):
        g = gaps[i].get().reshape(sm, MAX_GAPS, 2)
        rows += [[i, b, int(g[b, j, 0]) - base, int(g[b, j, 1])]
                 for b in range(sm) for j in range(MAX_GAPS) if int(g[b, j, 1]) > 0]
    rec["gaps"] = {"columns": ["launch", "block", "t", "length_ns"], "rows": rows}
    with open(path, "w") as f:
        json.dump(rec, f)


def timeslice_multi(out: str, variant: str, roles: list[tuple[str, int, int]]) -> dict[str, Any]:
    """Run one child per (role, kernels, spin_ns) from the same host instant; the joined recording."""
    start_at = time.time_ns() + 6_000_000_000  # every child is up and warmed by then
    procs = []
    for role, n, spin in roles:
        path = os.path.join(out, f".tsm_{variant}_{role}.json")
        procs.append((path, subprocess.Popen([sys.executable, "-m", "gpcheck.traces.record", "timeslice-multi-child",
                                              role, str(start_at), str(n), str(spin), path])))
    parts = []
    for path, p in procs:
        if p.wait() != 0:
            raise RuntimeError(f"timeslice child failed: {p.returncode}")
        with open(path) as f:
            parts.append(json.load(f))
        os.unlink(path)
    desc = ", ".join(f"{r}: {n} x {s // 1000} us" for r, n, s in roles)
    return {"gpcheck_record": 1, "workload": "timeslice", "variant": variant, "parts": parts,
            "note": f"{len(roles)} processes (one CUDA context each) launch kernels back to back from the same host "
                    f"instant, one 1024-thread block per SM ({desc}); each part has its own clock calibration, all "
                    "times are on the shared GPU %globaltimer; gaps: per-launch in-kernel timer jumps > 20 us"}

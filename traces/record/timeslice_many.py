"""Two processes (two CUDA contexts) each launch N kernels back to back, one 1024-thread block per
SM, spinning SPIN us each; per-launch in-kernel gap logs. Uses traces/record/ (Gpu, _record).
argv: OUTDIR [N] [SPIN_US]. Writes OUTDIR/timeslice_many.json.gz (parts format)."""
import json, os, subprocess, sys, time

sys.path.insert(0, os.getcwd())


def child(role, start_at, n, spin_ns, path):
    import cupy as cp
    from gpcheck.traces.record.device import Gpu
    from gpcheck.traces.record.workloads import _record, gpu_sm_count
    sm = gpu_sm_count()
    gpu = Gpu(max_blocks=sm * (n + 2) + 8)
    gpu.calibrate()
    s, p = gpu.stream(gpu.prio_least)
    mg = 16
    gpu.launch("warmup", 0, s, role, 1, 1000)
    cp.cuda.runtime.deviceSynchronize()
    gpu.launches.clear()
    gpu.used_blocks = 0
    gaps = [cp.zeros(2 * mg * sm, dtype=cp.uint64) for _ in range(n)]
    while time.time_ns() < start_at:
        pass
    for i in range(n):
        gpu.launch(f"{role}:{i}", i, s, role, sm, spin_ns, gap_thr=20_000, gaps=gaps[i], max_gaps=mg)
    cp.cuda.runtime.deviceSynchronize()
    rec = _record(gpu, "timeslice", role, {"kernels": n, "blocks": sm, "spin_ns": spin_ns, "gap_threshold_ns": 20_000,
                                           "max_gaps_logged_per_block": mg}, [{"name": role, "cuda_priority": p}])
    base = rec["clock"]["base_ns"]
    rows = []
    for i in range(n):
        g = gaps[i].get().reshape(sm, mg, 2)
        rows += [[i, b, int(g[b, j, 0]) - base, int(g[b, j, 1])] for b in range(sm) for j in range(mg) if int(g[b, j, 1]) > 0]
    rec["gaps"] = {"columns": ["launch", "block", "t", "length_ns"], "rows": rows}
    json.dump(rec, open(path, "w"))


if __name__ == "__main__":
    if sys.argv[1] == "child":
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
        sys.exit(0)
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 150
    spin_us = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    start_at = time.time_ns() + 5_000_000_000
    procs = []
    for role in ("A", "B"):
        path = os.path.join(out, f".ts_{role}.json")
        procs.append((path, subprocess.Popen([sys.executable, __file__, "child", role, str(start_at), str(n),
                                              str(spin_us * 1000), path])))
    parts = []
    for path, p in procs:
        if p.wait() != 0:
            raise SystemExit(f"child failed {p.returncode}")
        parts.append(json.load(open(path)))
        os.unlink(path)
    rec = {"gpcheck_record": 1, "workload": "timeslice", "variant": "two_processes_many", "parts": parts,
           "note": f"two processes (two CUDA contexts) each launch {n} kernels back to back, one 1024-thread block "
                   f"per SM spinning {spin_us} us, from the same host instant; each part has its own clock calibration, "
                   "all times are on the shared GPU %globaltimer; gaps: per-launch in-kernel timer jumps > 20 us"}
    import gzip
    with gzip.GzipFile(os.path.join(out, "timeslice_many.json.gz"), "wb", mtime=0) as g:
        g.write(json.dumps(rec, separators=(",", ":")).encode())
    print("timeslice", n, "kernels/process", os.path.getsize(os.path.join(out, "timeslice_many.json.gz")), flush=True)

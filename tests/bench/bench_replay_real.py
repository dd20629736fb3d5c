"""Benchmark: `gpcheck replay` of importer-shaped traces (launch, start, end per kernel only, two
streams at CUDA priorities 0 and -5) against `nvidia_streams`, with the lazy hidden-step search
(NOTE(lazy-replay)), next to `gpcheck check` on the same file in the same run.

    python tests/bench/bench_replay_real.py [--kernels 5000,10000,100000] [--keep DIR]

The traces are the recorded PyTorch training-with-inference trace
(traces/corpus/real/kineto_train_infer_priority.jsonl.gz, 6,497 kernels, the training stream up
to 689 kernels ahead of the GPU) cut to its first N launches, or tiled end to end (times and
correlation ids shifted; every kernel has ended at the end of a copy, so a copy starts from an
idle GPU) for N past 6,497; each copy after the first leaves out a random 5% of the inference
kernels (seeded), so the copies do not repeat the same states (which replay's caches would
recognise) and stay behaviours of the model. Each command is its own process, timed by wall clock, with its peak
RSS from wait4. Goals (issue 12): 5,000 kernels replay within 10x `check` and under 300 MB;
100,000 kernels under 60 s with the same peak memory as 10,000.

Measured 2026-11-23 (Python 3.12, a 2-CPU machine shared with up to 7 other jobs, hence wall
time 2-4x the CPU time; one run):

     kernels   events   check wall (CPU)  MiB   replay wall (CPU)  MiB   x check wall (CPU)
        5000    15000      2.82 (0.68)     53       6.74 (1.51)     75      2.4 (2.2)
       10000    30000      4.24 (1.06)     66       9.18 (2.17)     88      2.2 (2.0)
      100000   300000     37.61 (8.59)    289      17.15 (4.40)     99      0.5 (0.5)

Replay memory is bounded by its caches (not by the trace): 88 MiB at 10,000 kernels, 99 at
100,000; `check` keeps a record per kernel. The training loop repeats itself, so at 100,000
kernels most (state, event) pairs hit replay's successor cache.

The `synthetic` shape (`make_synthetic`: random, nothing repeats) found what the tiled recording
hid: before the lazy search's dead ends (NOTE(lazy-dead-ends)), 5,000 kernels replayed in 70.9 s
wall, 22.4 s CPU, against `check`'s 0.72 s (0.44 s CPU): 98x (50x CPU), with the search
enumerating every split of the unobserved queues at each `start` of the training stream behind a
waiting inference kernel. Measured 2026-11-24 after it (commit 08bea8c; the same shared 2-CPU
machine, load average 11-12 throughout; one run):

       shape  kernels   events  check wall (CPU)  MiB   replay wall (CPU)  MiB   x check wall (CPU)
       tiled     5000    15000     3.73 (0.64)     54      8.90 (1.63)    106      2.4 (2.5)
       tiled    10000    30000     7.58 (1.07)     66      9.63 (1.55)    110      1.3 (1.5)
       tiled   100000   300000    50.63 (8.30)    290     17.98 (3.26)    119      0.4 (0.4)
   synthetic     5000    15000     3.38 (0.57)     51     11.06 (1.82)    119      3.3 (3.2)
   synthetic    10000    30000     5.49 (0.77)     57     15.11 (2.52)    120      2.8 (3.3)
   synthetic   100000   300000    35.32 (5.33)    192     95.81 (14.59)   124      2.7 (2.7)

At 100,000 synthetic kernels the replay needs 14.6 s of CPU; its wall time is the machine's
load (33.8 s in a run at load 7-10 the same morning, 95.8 s here). Peak memory: 120 MiB at
10,000 kernels, 124 at 100,000 (caches capped: checker/engines/replay/search.py MASK_CACHE_LIMIT and
LAZY_SUCC_CACHE_LIMIT).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gpcheck.traces.format import Event, read_trace, write_trace  # noqa: E402
from gpcheck.traces.progress import count_events  # noqa: E402

SOURCE = ROOT / "traces" / "corpus" / "real" / "kineto_train_infer_priority.jsonl.gz"


def make_trace(path: Path, kernels: int) -> None:
    """The source trace cut or tiled to `kernels` launches (see module doc)."""
    header, events = read_trace(str(SOURCE))
    n_src = sum(1 for e in events if e.action == "launch")
    span = events[-1].t - events[0].t + 1_000_000
    corr_step = max(e.meta["corr"] for e in events) + 1
    out: list[Event] = []
    copy = 0
    while len(out) < 3 * kernels:
        take = kernels - len(out) // 3
        keep: set[int] = set()
        rng = random.Random(copy)
        for e in events:
            if e.action == "launch" and len(keep) < take and not (copy and e.args["stream"] == 1 and rng.random() < 0.05):
                keep.add(e.meta["corr"])
        for e in events:
            if e.meta["corr"] in keep:
                meta = dict(e.meta, corr=e.meta["corr"] + copy * corr_step)
                out.append(e._replace(t=e.t + copy * span, meta=meta, line=0))
        copy += 1
    write_trace(str(path), header, out)


def make_synthetic(path: Path, kernels: int, seed: int = 1) -> None:
    """A random importer-shaped trace (built by the importers' own `build_trace`): a training
    stream (CUDA priority 0) whose host runs up to a few hundred kernels ahead of the GPU (the
    depth changes now and then, sometimes to 0, a sync), and an inference stream (CUDA -5) with
    bursts of 2-12 kernels every 1-5 ms, each burst waited for, its kernels often blocked by a
    running training kernel; kernel durations log-normal. Unlike the tiled recording, nothing
    repeats, so replay's caches do not carry it."""
    from gpcheck.traces.importers.common import Kernel, build_trace

    rng = random.Random(seed)
    ks: list[Kernel] = []
    t_host, corr, depth = 0, 0, rng.randint(1, 400)
    free = [0, 0]  # when each stream's last kernel ends
    starts: list[int] = []  # training kernels' start times (the host waits for the GPU)
    t_inf = rng.randint(500_000, 3_000_000)
    while len(ks) < kernels:
        if t_inf <= t_host:
            t = t_inf
            for _ in range(rng.randint(2, 12)):
                t += rng.randint(3_000, 15_000)
                corr += 1
                st = max(t + rng.randint(4_000, 20_000), free[1]) + (rng.randint(0, 300_000) if rng.random() < 0.7 else 0)
                free[1] = st + int(rng.lognormvariate(9.5, 1.0))
                ks.append(Kernel(f"void infer_kernel_{rng.randint(0, 20)}<float, {rng.randint(1, 8)}>(float const*, float*, int)",
                                 ("s", 14), st, free[1], corr, 1, t, "api", 5,
                                 stream_info={"stream_id": 14, "cuda_priority": -5}))
            t_inf = free[1] + rng.randint(1_000_000, 5_000_000)
            continue
        if rng.random() < 0.002:
            depth = rng.randint(0, 600)
        if len(starts) > depth:
            t_host = max(t_host, starts[-depth - 1] if depth else free[0])
        t_host += rng.randint(2_000, 40_000)
        corr += 1
        st = max(t_host + rng.randint(4_000, 20_000), free[0])
        free[0] = st + int(rng.lognormvariate(10.5, 1.2))
        starts.append(st)
        ks.append(Kernel(f"void train_kernel_{rng.randint(0, 40)}<__nv_bfloat16, {rng.randint(1, 8)}>(int, float*)",
                         ("s", 13), st, free[0], corr, 1, t_host, "api", 0, stream_info={"stream_id": 13}))
    header, events = build_trace(ks[:kernels], {"format": "synthetic", "file": f"bench_replay_real seed {seed}"})
    write_trace(str(path), header, events)


def run(args: list[str]) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds, peak RSS (MiB) and exit code of `gpcheck ARGS` in a fresh
    process. (This process holds no trace in memory, so the child's RSS is its own.)"""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "gpcheck", *args], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss // 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", default="5000,10000,100000")
    ap.add_argument("--shape", default="tiled,synthetic", help="tiled (the recording), synthetic (random), or both")
    ap.add_argument("--keep", default=None, help="keep the generated traces in this folder")
    ap.add_argument("--make", nargs=3, metavar=("SHAPE", "KERNELS", "FILE"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.make:
        (make_trace if a.make[0] == "tiled" else make_synthetic)(Path(a.make[2]), int(a.make[1]))
        return
    d = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="bench_replay_real_"))
    d.mkdir(parents=True, exist_ok=True)
    print("wall and CPU seconds; x check: replay/check on wall (and CPU) time")
    print(f"{'shape':>9} {'kernels':>8} {'events':>8} {'check':>14} {'MiB':>5} {'replay':>16} {'MiB':>5} {'x check':>12} "
          f"{'ev/s':>7}  exit")
    for shape in a.shape.split(","):
        for n in [int(x) for x in a.kernels.split(",")]:
            f = d / f"{'train_infer' if shape == 'tiled' else 'synthetic'}_{n}.jsonl.gz"
            if not f.exists():  # made in a process of its own: this one stays small
                subprocess.run([sys.executable, __file__, "--make", shape, str(n), str(f)], check=True)
            events = count_events(str(f)) or 0
            cw, cc, cm, _ = run(["check", str(f)])
            rw, rc, rm, code = run(["replay", str(f), "--no-progress"])
            print(f"{shape:>9} {n:>8} {events:>8} {cw:>6.2f} ({cc:>5.2f}) {cm:>5} {rw:>7.2f} ({rc:>6.2f}) {rm:>5} "
                  f"{rw / cw:>5.1f} ({rc / cc:>4.1f}) {events / rw:>7.0f}  {code}", flush=True)


if __name__ == "__main__":
    main()

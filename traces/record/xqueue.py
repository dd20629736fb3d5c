"""XSched's level-1 preemption (`spec/models/xsched.gpspec`, Shen et al. OSDI'25 section 4) on CUDA:
an XQueue holds a best-effort task's commands on the host and a launch worker thread submits them
progressively, keeping at most W in flight on the hardware queue (a CUDA stream); a real-time
request suspends the worker (the launch in progress completes, nothing already submitted is
recalled: level 1 cannot stop the hardware queue), its command runs, and resume restarts the
worker. In-flight commands run to their end, so the request waits for up to W of them.

Runs on the device machine only (CuPy). Host events: `rt_arrive`, `suspend` (with the commands in
flight and left in the host queue), `rt_done`, `resume`, `task_finish`; every kernel has the
recorder's per-block records.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from typing import Any

import cupy as cp  # type: ignore[import-not-found]

from gpcheck.traces.record.device import BLOCK_THREADS, Gpu
from gpcheck.traces.record.workloads import _record, gpu_sm_count


class XQueue:
    """The host queue and its launch worker (async_xqueue.cpp: a worker thread, paused by Suspend)."""

    def __init__(self, gpu: Gpu, n: int, window: int, spin_ns: int, be_priority: int):
        self.gpu, self.n, self.window, self.spin_ns = gpu, n, window, spin_ns
        self.grid = 2 * gpu.sm_count  # one wave: the command fills every block slot
        self.be, self.p_be = gpu.stream(be_priority)
        self.host_q: deque[int] = deque(range(n))
        self.inflight: deque[Any] = deque()
        self.lock = threading.Lock()       # held for a whole launch: Suspend waits for the one in progress
        self.paused = False
        self.stop = False
        self.events: list[dict[str, Any]] = []
        self.worker = threading.Thread(target=self._work, daemon=True)

    def log(self, action: str, **meta: Any) -> None:
        self.events.append({"action": action, "t_host": time.time_ns(), "meta": meta})

    def _reap(self) -> None:
        while self.inflight and self.inflight[0].done:
            self.inflight.popleft()

    def _work(self) -> None:
        while not self.stop:
            with self.lock:
                if not self.paused and self.host_q:
                    self._reap()
                    if len(self.inflight) < self.window:
                        k = self.host_q.popleft()
                        self.gpu.launch(f"be:k{k}", k, self.be, "be", self.grid, self.spin_ns)
                        ev = cp.cuda.Event(disable_timing=True)
                        ev.record(self.be)
                        self.inflight.append(ev)
                        continue
            time.sleep(5e-6)

    def suspend(self) -> None:
        with self.lock:
            self.paused = True
            self._reap()
            self.log("suspend", in_flight=len(self.inflight), queued=len(self.host_q), window=self.window)

    def resume(self) -> None:
        with self.lock:
            self.paused = False
            self.log("resume", queued=len(self.host_q))

    def idle(self) -> bool:
        with self.lock:
            self._reap()
            return not self.host_q and not self.inflight


def xsched(variant: str, window: int, rt_priority: int | None = None, n: int = 40, spin_ns: int = 500_000,
           arrivals_ns: tuple[int, ...] = (5_000_000, 13_000_000), rt_spin_ns: int = 500_000) -> dict[str, Any]:
    """One BE XQueue of n one-wave commands of spin_ns each with an in-flight window; an RT command
    (one wave, rt_spin_ns) arrives at each of `arrivals_ns` on its own stream (CUDA priority
    `rt_priority`, default the same as the BE stream's: XSched's queues carry no hardware priority)."""
    sm = gpu_sm_count()
    gpu = Gpu(max_blocks=2 * sm * (n + len(arrivals_ns) + 4))
    sys.setswitchinterval(1e-4)
    gpu.calibrate()
    xq = XQueue(gpu, n, window, spin_ns, gpu.prio_least)
    rt, p_rt = gpu.stream(gpu.prio_least if rt_priority is None else rt_priority)
    gpu.launch("warmup", 0, rt, "rt", 1, 1000)
    cp.cuda.runtime.deviceSynchronize()
    gpu.launches.clear()
    gpu.used_blocks = 0
    t0 = time.time_ns()
    xq.log("task_start")
    xq.worker.start()
    for i, at in enumerate(arrivals_ns):
        while time.time_ns() < t0 + at:
            time.sleep(20e-6)
        xq.log("rt_arrive", rt=i)
        xq.suspend()
        with xq.lock:
            gpu.launch(f"rt:{i}", n + i, rt, "rt", 2 * sm, rt_spin_ns)
        rt.synchronize()
        xq.log("rt_done", rt=i)
        xq.resume()
    while not xq.idle():
        time.sleep(50e-6)
    xq.stop = True
    xq.worker.join()
    cp.cuda.runtime.deviceSynchronize()
    xq.log("task_finish")
    streams = [{"name": "be", "cuda_priority": xq.p_be}, {"name": "rt", "cuda_priority": p_rt}]
    params = {"level": 1, "window": window, "n": n, "be_grid": xq.grid, "rt_grid": 2 * sm,
              "block_threads": BLOCK_THREADS, "spin_ns": spin_ns, "rt_spin_ns": rt_spin_ns,
              "rt_arrivals_ns": list(arrivals_ns)}
    return _record(gpu, "xsched", variant, params, streams, xq.events)

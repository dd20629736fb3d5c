"""The recorded workloads: stream priority, the kernel_offset rewind emulation, and two-process
time slicing. Each returns a raw recording (a JSON-able dict, `gpcheck_record: 1`) that
`gpcheck.traces.importers.record` turns into a gpcheck observation trace.

Runs on the device machine only (CuPy). Sizes are chosen so that every workload needs well
under a second of GPU time: kernels spin on `%globaltimer` for a fixed wall time, so their
duration does not depend on the GPU model.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from typing import Any

import cupy as cp  # type: ignore[import-not-found]

from gpcheck.traces.record.device import Gpu
from gpcheck.traces.record.kernels import STATUS_COMPLETED

BLOCK_COLUMNS = ["launch", "block", "t_entry", "t_exit", "sm_entry", "sm_exit", "status",
                 "max_gap_ns", "sum_gap_ns", "n_gaps"]


def _blocks(gpu: Gpu, base: int) -> dict[str, Any]:
    """Every block record, times relative to `base` (keeps the JSON small)."""
    recs = gpu.records()
    rows = []
    for ln in gpu.launches:
        for b in range(ln.grid):
            r = recs[ln.rec_off + b]
            packed = int(r[2])
            rows.append([ln.seq, b, int(r[0]) - base, int(r[1]) - base, packed & 0xFFFF,
                         (packed >> 16) & 0xFFFF, (packed >> 32) & 0xFF, int(r[3]), int(r[4]), int(r[5])])
    return {"columns": BLOCK_COLUMNS, "base_ns": base, "rows": rows}


def _record(gpu: Gpu, workload: str, variant: str, params: dict[str, Any], streams: list[dict[str, Any]],
            host_events: list[dict[str, Any]] | None = None, counters: dict[str, Any] | None = None) -> dict[str, Any]:
    recs = gpu.records()
    starts = [int(recs[i][0]) for i in range(gpu.used_blocks)]
    base = min(starts + [ln.t_host_before + gpu.offset_ns for ln in gpu.launches])
    base -= base % 1_000_000  # a round number: relative times stay readable
    launches = [{"seq": ln.seq, "kernel": ln.kernel, "kidx": ln.kidx, "stream": ln.stream, "grid": ln.grid,
                 "t_launch": ln.t_host_before + gpu.offset_ns - base,
                 "t_launch_return": ln.t_host_after + gpu.offset_ns - base} for ln in gpu.launches]
    for ev in host_events or []:
        ev["t"] = ev.pop("t_host") + gpu.offset_ns - base
    return {"gpcheck_record": 1, "workload": workload, "variant": variant, "device": gpu.info(),
            "clock": dict(gpu.calibration, base_ns=base,
                          note="all times are ns on the GPU %globaltimer clock, relative to base_ns; "
                               "host times were moved onto it with globaltimer_minus_host_ns"),
            "params": params, "streams": streams, "launches": launches, "blocks": _blocks(gpu, base),
            "host_events": host_events or [], "counters": counters or {}}


# ---------------------------------------------------------------------------------------------
# 1. Stream priority: a low-priority stream with many kernels, a high-priority one mid-way.


def priority(high_priority: int | None, variant: str, n_low: int = 24, n_high: int = 4,
             low_spin_ns: int = 1_000_000, high_spin_ns: int = 500_000, high_at_ns: int = 20_000_000) -> dict[str, Any]:
    """Low stream (least priority): n_low kernels of two waves each, all launched up front. After
    high_at_ns the high stream launches n_high one-wave kernels back to back. With a higher
    priority the high kernels should take the next free block slots (research/gpu_traces.md 5.3)."""
    gpu = Gpu(max_blocks=4 * gpu_sm_count() * (n_low + n_high + 4))
    wave = 2 * gpu.sm_count
    gpu.calibrate()
    s_low, p_low = gpu.stream(gpu.prio_least)
    s_high, p_high = gpu.stream(gpu.prio_greatest if high_priority is None else high_priority)
    # warm-up launches (module load, first-launch costs), then forget them
    gpu.launch("warmup", 0, s_low, "low", 1, 1000)
    gpu.launch("warmup", 0, s_high, "high", 1, 1000)
    cp.cuda.runtime.deviceSynchronize()
    gpu.launches.clear()
    gpu.used_blocks = 0
    t0 = time.time_ns()
    for i in range(n_low):
        gpu.launch(f"low:{i}", i, s_low, "low", 2 * wave, low_spin_ns)
    while time.time_ns() < t0 + high_at_ns:
        pass
    for j in range(n_high):
        gpu.launch(f"high:{j}", n_low + j, s_high, "high", wave, high_spin_ns)
    cp.cuda.runtime.deviceSynchronize()
    streams = [{"name": "low", "cuda_priority": p_low}, {"name": "high", "cuda_priority": p_high}]
    params = {"n_low": n_low, "n_high": n_high, "low_grid": 2 * wave, "high_grid": wave, "block_threads": 1024,
              "low_spin_ns": low_spin_ns, "high_spin_ns": high_spin_ns, "high_after_ns": high_at_ns}
    return _record(gpu, "priority", variant, params, streams)


def gpu_sm_count() -> int:
    return int(cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"])


# ---------------------------------------------------------------------------------------------
# 2. GPreempt/REEF kernel_offset rewind, emulated on a CUDA stream.


class RewindEmulation:
    """research/gpreempt_code.md 2-3 on CUDA. A host queue (deque) drained by one worker thread that
    keeps at most CAP kernels in flight on the BE stream (HIP's window); `preempt_reset` writes the
    device flag asynchronously on a separate stream, clears the host queue (temp = kernels dropped),
    rewinds kernel_offset = max(launch_offset - temp - CAP, kernel_offset) and waits only for the
    flag write; resume clears the flag, synchronises, and relaunches kernel_offset..N-1.

    NVIDIA GPUs offer no wavefront reset to user code: with `killable` the kernels poll the flag
    while they run and stop (status killed), which is what the three resets do to running waves.
    With `honour_flag` a kernel returns at entry when the flag is set (REEF's `.be` kernels); the
    GPreempt port loads kernels that ignore it (both off)."""

    def __init__(self, gpu: Gpu, n: int, cap: int, spin_ns: int, honour_flag: bool, killable: bool):
        self.gpu, self.n, self.cap, self.spin_ns = gpu, n, cap, spin_ns
        self.honour, self.killable = honour_flag, killable
        self.grid = 2 * gpu.sm_count
        self.be, self.p_be = gpu.stream(gpu.prio_least)
        self.rt, self.p_rt = gpu.stream(gpu.prio_greatest)
        self.ps, self.p_ps = gpu.stream(gpu.prio_greatest)
        self.flag = cp.zeros(1, dtype=cp.uint32)
        self.entered = cp.zeros(n, dtype=cp.uint32)
        self.completed = cp.zeros(n, dtype=cp.uint32)
        self.host_q: deque[int] = deque()
        self.lock = threading.Lock()
        self.inflight: deque[Any] = deque()
        self.held: int | None = None   # popped by the worker, waiting for a window slot
        self.launch_offset, self.kernel_offset = -1, 0
        self.state, self.preempted = "Init", False
        self.events: list[dict[str, Any]] = []
        self.stop = False
        self.worker = threading.Thread(target=self._drain, daemon=True)

    def _log(self, action: str, **meta: Any) -> None:
        self.events.append({"action": action, "t_host": time.time_ns(), "meta": meta})

    def _drain(self) -> None:
        """HIP's HostQueue worker: dequeue, reserve a slot, spin while the window is full, launch."""
        while not self.stop:
            with self.lock:
                k = self.host_q.popleft() if self.host_q else None
                self.held = k
            if k is None:
                time.sleep(20e-6)
                continue
            while True:
                while self.inflight and self.inflight[0].done:
                    self.inflight.popleft()
                if len(self.inflight) < self.cap:
                    break
                time.sleep(5e-6)  # release the GIL: the scheduler thread must keep running
            self.gpu.launch(f"be:k{k}", k, self.be, "be", self.grid, self.spin_ns, flag=self.flag,
                            entered=self.entered, completed=self.completed, honour=self.honour,
                            killable=self.killable)
            ev = cp.cuda.Event(disable_timing=True)
            ev.record(self.be)
            with self.lock:
                self.inflight.append(ev)
                self.held = None

    def execute_be_task(self) -> None:
        if self.preempted:
            self.gpu.memset_async(self.flag, 0, self.ps)
            self.preempted = False
            self.ps.synchronize()
            self._log("flag_clear")
        self.state = "Executing"
        self._log("resume" if self.kernel_offset else "task_start", kernel_offset=self.kernel_offset)
        for i in range(self.kernel_offset, self.n):
            with self.lock:
                self.host_q.append(i)
            self.launch_offset = i

    def preempt_reset(self) -> None:
        self.gpu.memset_async(self.flag, 1, self.ps)
        self.preempted = True
        with self.lock:
            temp = len(self.host_q)
            self.host_q.clear()
            held = self.held
        old = self.kernel_offset
        if self.state == "Executing":
            self.kernel_offset = max(self.launch_offset - temp - self.cap, self.kernel_offset)
            self.state = "Waiting"
        self.ps.synchronize()
        self._log("preempt", temp=temp, launch_offset=self.launch_offset, kernel_offset_before=old,
                  kernel_offset_after=self.kernel_offset, held_by_worker=held, cap=self.cap)

    def stream_empty(self) -> bool:
        """GPUStreamEmpty: nothing in the host queue, nothing held, the BE stream idle."""
        with self.lock:
            idle = not self.host_q and self.held is None
        return idle and self.be.done

    def run_rt(self, n_rt: int, spin_ns: int, first: int = 0) -> None:
        """The RT task: n_rt one-wave kernels, named rt:first.. (each arrival its own logical kernels)."""
        self._log("rt_arrive")
        for j in range(first, first + n_rt):
            self.gpu.launch(f"rt:{j}", self.n + j, self.rt, "rt", self.gpu.sm_count, spin_ns)
        self.rt.synchronize()
        self._log("rt_done")


def rewind(variant: str, when: str, honour_flag: bool, killable: bool, n: int = 12, cap: int = 2,
           spin_ns: int = 1_000_000, preempt_after_ns: int = 4_500_000, n_rt: int = 2,
           rt_spin_ns: int = 500_000, arrivals: list[int] | None = None) -> dict[str, Any]:
    """One BE task of n kernels, preempted once by an RT task: `when` = "mid" (preempt_after_ns after
    the task starts) or "after_finish" (every BE kernel completed on the GPU but the scheduler has
    not polled the stream yet: scenario R1 of research/gpreempt_code.md 5.1). `arrivals` (with
    "mid"): several RT tasks, each preempting at that many ns after the BE task started."""
    gpu = Gpu(max_blocks=2 * gpu_sm_count() * (2 * n * (1 + len(arrivals or [0])) + 8))
    sys.setswitchinterval(1e-4)
    gpu.calibrate()
    em = RewindEmulation(gpu, n, cap, spin_ns, honour_flag, killable)
    gpu.launch("warmup", 0, em.be, "be", 1, 1000)
    cp.cuda.runtime.deviceSynchronize()
    gpu.launches.clear()
    gpu.used_blocks = 0
    em.worker.start()
    t0 = time.time_ns()
    em.execute_be_task()
    for a, at in enumerate(arrivals or [preempt_after_ns]):
        if when == "mid":
            while time.time_ns() < t0 + at:
                time.sleep(20e-6)  # a sleeping wait: a busy one would starve the worker thread (GIL)
        else:
            while not em.stream_empty():
                time.sleep(50e-6)
        em.preempt_reset()
        em.run_rt(n_rt, rt_spin_ns, a * n_rt)
        em.execute_be_task()
    while not em.stream_empty():
        time.sleep(50e-6)
    em.state = "Finish"
    em._log("task_finish")
    em.stop = True
    em.worker.join()
    cp.cuda.runtime.deviceSynchronize()
    counters = {"entered": [int(x) for x in em.entered.get()], "completed": [int(x) for x in em.completed.get()],
                "grid": em.grid, "n": n,
                "note": "per logical BE kernel k: blocks that passed the entry check / finished their work "
                        "(device atomics); a kernel ran twice iff completed[k] > grid"}
    streams = [{"name": "be", "cuda_priority": em.p_be}, {"name": "rt", "cuda_priority": em.p_rt}]
    params = {"n": n, "cap": cap, "be_grid": em.grid, "rt_grid": gpu.sm_count, "block_threads": 1024,
              "spin_ns": spin_ns, "when": when, "preempt_after_ns": preempt_after_ns if when == "mid" else None,
              "honour_flag": honour_flag, "killable": killable, "n_rt": n_rt, "rt_spin_ns": rt_spin_ns,
              "flag_stream_cuda_priority": em.p_ps}
    if arrivals:
        params["rt_arrivals_ns"] = list(arrivals)
    return _record(gpu, "rewind", variant, params, streams, em.events, counters)


# ---------------------------------------------------------------------------------------------
# 3. Two processes time-slicing the GPU (one child process per side; see __main__).


def timeslice_child(role: str, start_at_ns: int, spin_ns: int, blocks: int | None) -> dict[str, Any]:
    """One kernel, one block per SM, launched at an agreed host instant; thread 0 of each block logs
    every jump > 20 us between consecutive %globaltimer reads (a jump = the block was switched out)."""
    gpu = Gpu(max_blocks=2 * gpu_sm_count() + 8)
    nblk = blocks or gpu.sm_count
    gpu.calibrate()
    s, p = gpu.stream(gpu.prio_least)
    max_gaps = 64
    gaps = cp.zeros(2 * max_gaps * nblk, dtype=cp.uint64)
    gpu.launch("warmup", 0, s, role, 1, 1000)
    cp.cuda.runtime.deviceSynchronize()
    gpu.launches.clear()
    gpu.used_blocks = 0
    while time.time_ns() < start_at_ns:
        pass
    gpu.launch(f"{role}:0", 0, s, role, nblk, spin_ns, gap_thr=20_000, gaps=gaps, max_gaps=max_gaps)
    cp.cuda.runtime.deviceSynchronize()
    rec = _record(gpu, "timeslice", role, {"blocks": nblk, "spin_ns": spin_ns, "gap_threshold_ns": 20_000,
                                           "max_gaps_logged_per_block": max_gaps},
                  [{"name": role, "cuda_priority": p}])
    g = gaps.get().reshape(nblk, max_gaps, 2)
    base = rec["clock"]["base_ns"]
    rec["gaps"] = {"columns": ["launch", "block", "t", "length_ns"],
                   "rows": [[0, b, int(g[b, i, 0]) - base, int(g[b, i, 1])]
                            for b in range(nblk) for i in range(max_gaps) if int(g[b, i, 1]) > 0]}
    return rec


def completed_blocks(rec: dict[str, Any]) -> int:
    """Blocks with status completed (a sanity figure printed by __main__)."""
    i = rec["blocks"]["columns"].index("status")
    return sum(1 for r in rec["blocks"]["rows"] if r[i] == STATUS_COMPLETED)


"""Block-level cooperative preemption (GPreempt's WB baseline, `spec/models/blp.gpspec`) on CUDA:
persistent blocks that poll a flag the host writes, claim logical blocks with an atomic counter,
record the first stopped kernel and exit; the host resumes from that kernel.

Runs on the device machine only (CuPy). Two host sides, as in GPreempt (research/gpreempt_code.md
3.4, 5.4, 6):

- `hip`: one daemon-like host thread: an LC task arrives -> flag := 1, the LC kernel runs on a
  high-priority stream, then resume_be writes flag := 0 FIRST and only then synchronises the BE
  stream and reads the stop index (blpclient.cpp:48-54, executor.cpp:269-298). Kernels still queued
  behind the stopped one when the flag clears run their logical blocks before the stopped kernel
  finished (the flag hand-over race of the HIP client: `stale` logical blocks, no_skip violated).
- `cuda`: LC threads hand the flag over through `running_lc` (fetch_add: the first sets flag := 1,
  spins until `running_be` == 0, runs; fetch_sub: the last clears the flag); the BE thread waits
  for `running_lc` == 0, sets `running_be`, relaunches from the stop index, drains, clears
  `running_be` (cuda-clients/blpclient.cpp:167-195). `clear_delay_ns` widens the window between an
  LC's fetch_sub and its flag clear (a host thread descheduled there), so that a second LC arriving
  in it has its flag := 1 overwritten by the first one's late clear.

Every logical block run is logged in device memory (start, end, kernel, claim index, persistent
block, SM, and `stale`: the predecessor kernel had not completed every logical block when it was
claimed); every persistent block gets the recorder's usual block record (status 1 = returned on the
flag, 0 = the claim counter was exhausted).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import cupy as cp  # type: ignore[import-not-found]
import numpy as np

from gpcheck.traces.record.device import BLOCK_THREADS, Gpu, Launch
from gpcheck.traces.record.kernels import REC_WORDS, SOURCE as WORK_SOURCE
from gpcheck.traces.record.workloads import _record

L_WORDS = 6  # per logical block: t_start, t_end, kernel, claim, block | sm << 16, stale | launch seq << 1

BLP_SOURCE = WORK_SOURCE.split('extern "C" __global__ void work')[0] + r"""
extern "C" __global__ void blp(const unsigned int* flag, int* stop_index, unsigned int* executed,
                               unsigned int* done, int kid, int lb, unsigned long long spin_ns,
                               unsigned long long* rec, unsigned long long* lrec, unsigned int* lcount,
                               unsigned int max_l, int seq)
{
    __shared__ int act;                 // -1 returned on the flag, -2 counter exhausted, >= 0 claimed
    __shared__ unsigned long long ts;
    __shared__ int stale;
    __shared__ unsigned long long t_entry;
    __shared__ unsigned int sm_entry;
    if (threadIdx.x == 0) { t_entry = gtimer(); sm_entry = smid(); }
    unsigned long long nrun = 0;
    int status = 0;
    for (;;) {
        if (threadIdx.x == 0) {
            if (*((volatile const unsigned int*)flag) != 0u) {
                atomicCAS(stop_index, -1, kid);
                act = -1;
            } else {
                unsigned int c = atomicAdd(&executed[kid], 1u);
                act = c < (unsigned int)lb ? (int)c : -2;
                if (act >= 0) {
                    stale = (kid > 0 && *((volatile unsigned int*)&done[kid - 1]) < (unsigned int)lb) ? 1 : 0;
                    ts = gtimer();
                }
            }
        }
        __syncthreads();
        int a = act;
        if (a < 0) { status = a == -1 ? 1 : 0; break; }
        unsigned long long deadline = ts + spin_ns;
        while (gtimer() < deadline) { }
        __syncthreads();
        if (threadIdx.x == 0) {
            unsigned long long te = gtimer();
            __threadfence();
            atomicAdd(&done[kid], 1u);
            unsigned int i = atomicAdd(lcount, 1u);
            if (i < max_l) {
                unsigned long long* r = lrec + 6ull * i;
                r[0] = ts; r[1] = te; r[2] = (unsigned long long)kid; r[3] = (unsigned long long)a;
                r[4] = (unsigned long long)blockIdx.x | ((unsigned long long)smid() << 16);
                r[5] = (unsigned long long)stale | ((unsigned long long)seq << 1);
            }
            nrun += 1;
        }
    }
    if (threadIdx.x == 0) {
        unsigned long long t_exit = gtimer();
        unsigned long long* r = rec + 8ull * blockIdx.x;
        r[0] = t_entry; r[1] = t_exit;
        r[2] = (unsigned long long)sm_entry | ((unsigned long long)smid() << 16) | ((unsigned long long)status << 32);
        r[3] = 0; r[4] = 0; r[5] = 0; r[6] = (unsigned long long)kid; r[7] = nrun;
    }
}
"""


class BlpTask:
    """One BE task of n persistent-block kernels on a low-priority stream, its device counters and
    logical-block log, the flag, and the host events of whichever client drives it."""

    def __init__(self, gpu: Gpu, n: int, lb: int, spin_ns: int, lc_spin_ns: int):
        self.gpu, self.n, self.lb, self.spin_ns, self.lc_spin_ns = gpu, n, lb, spin_ns, lc_spin_ns
        self.p = gpu.sm_count  # one persistent block per SM (a second 1024-thread block still fits: the LC's)
        self.mod = cp.RawModule(code=BLP_SOURCE, options=("--std=c++17",))
        self.f_blp = self.mod.get_function("blp")
        self.be, self.p_be = gpu.stream(gpu.prio_least)
        self.lc, self.p_lc = gpu.stream(gpu.prio_greatest)
        self.fs, _ = gpu.stream(gpu.prio_greatest)
        self.flag = cp.zeros(1, dtype=cp.uint32)
        self.stop = cp.full(1, -1, dtype=cp.int32)
        self.executed = cp.zeros(n, dtype=cp.uint32)
        self.done = cp.zeros(n, dtype=cp.uint32)
        self.max_l = 2 * n * lb
        self.lrec = cp.zeros(L_WORDS * self.max_l, dtype=cp.uint64)
        self.lcount = cp.zeros(1, dtype=cp.uint32)
        self.seq_of: list[int] = []  # launch seq of every blp launch (for the logical-block log)
        self.events: list[dict[str, Any]] = []
        self.lc_count = 0
        self.lock = threading.Lock()
        self.stop.fill(-1)  # CuPy compiles its fill kernel on first use (~0.1 s): not inside a resume
        int(self.stop.get()[0])
        cp.cuda.runtime.deviceSynchronize()

    def log(self, action: str, **meta: Any) -> None:
        with self.lock:
            self.events.append({"action": action, "t_host": time.time_ns(), "meta": meta})

    def launch(self, k: int) -> None:
        gpu = self.gpu
        with self.lock:  # the record slice and the seq are reserved before the launch: the kernel logs the seq
            if gpu.used_blocks + self.p > gpu.max_blocks:
                raise RuntimeError("record buffer full")
            off = gpu.used_blocks
            gpu.used_blocks += self.p
            seq = len(gpu.launches)
            ln = Launch(seq, f"be:k{k}", k, "be", self.p, off, 0, 0)
            gpu.launches.append(ln)
        args = (self.flag, self.stop, self.executed, self.done, np.int32(k), np.int32(self.lb),
                np.uint64(self.spin_ns), gpu.rec[off * REC_WORDS:], self.lrec, self.lcount, np.uint32(self.max_l),
                np.int32(seq))
        ln.t_host_before = time.time_ns()
        self.f_blp((self.p,), (BLOCK_THREADS,), args, stream=self.be)
        ln.t_host_after = time.time_ns()

    def execute(self, first: int) -> None:
        for k in range(first, self.n):
            self.launch(k)

    def set_flag(self, v: int, who: str) -> None:
        self.gpu.memset_async(self.flag, v, self.fs)
        self.fs.synchronize()
        self.log("flag_set" if v else "flag_clear", by=who)

    def stop_point(self) -> int:
        """GPreempt's getStopPoint: synchronise the BE stream, read the stop index, reset it to -1."""
        self.be.synchronize()
        s = int(self.stop.get()[0])
        self.stop.fill(-1)
        cp.cuda.Stream.null.synchronize()
        self.log("stop_read", stop=s)
        return s

    def run_lc(self, i: int) -> None:
        """The LC task's work: one one-wave kernel on the high-priority stream, waited for."""
        with self.lock:
            self.gpu.launch(f"lc:{i}", self.n + i, self.lc, "lc", self.gpu.sm_count, self.lc_spin_ns)
        self.lc.synchronize()


def _wait_until(t: int) -> None:
    while time.time_ns() < t:
        time.sleep(20e-6)  # sleeping waits: a busy one would starve the other threads (GIL)


def hip_client(task: BlpTask, arrivals_ns: list[int]) -> None:
    """The HIP client's order: every kernel launched up front; per LC: flag := 1, LC runs, flag := 0,
    then the stream drains and the stop index is read and relaunched from."""
    t0 = time.time_ns()
    task.log("task_start", kernel_offset=0)
    task.execute(0)
    for i, at in enumerate(arrivals_ns):
        _wait_until(t0 + at)
        task.log("lc_arrive", lc=i)
        task.set_flag(1, f"lc:{i}")
        task.run_lc(i)
        task.log("lc_done", lc=i)
        task.set_flag(0, "resume_be")          # resume_be: the flag first ...
        s = task.stop_point()                  # ... then the drain and the stop index
        if s >= 0:
            task.log("resume", kernel_offset=s)
            task.execute(s)
    task.be.synchronize()
    task.log("task_finish")


def cuda_client(task: BlpTask, arrivals_ns: list[int], clear_delay_ns: list[int], max_rounds: int = 10) -> None:
    """The CUDA client's hand-over (module doc): a BE thread and one thread per LC task. An arrival
    >= 0 is ns after the start; a negative one, -d, is d ns after the previous LC's fetch_sub."""
    state = {"running_lc": 0, "running_be": 0}
    lk = threading.Lock()

    def be_thread() -> None:
        start = 0
        task.log("task_start", kernel_offset=0)
        try:
            for _ in range(max_rounds):
                while True:
                    with lk:
                        if state["running_lc"] == 0:
                            state["running_be"] = 1
                            break
                    time.sleep(10e-6)
                if start:
                    task.log("resume", kernel_offset=start)
                task.execute(start)
                task.be.synchronize()
                with lk:
                    state["running_be"] = 0
                task.log("be_drained")
                s = task.stop_point()
                if s < 0:
                    break
                start = s
            else:
                task.log("gave_up", rounds=max_rounds)
        finally:  # never leave an LC thread spinning on running_be
            with lk:
                state["running_be"] = 0
            task.log("task_finish")

    done_at: dict[int, int] = {}
    done_ev = [threading.Event() for _ in arrivals_ns]

    def lc_thread(i: int, at: int, delay: int) -> None:
        if at >= 0:
            _wait_until(t0 + at)
        else:  # arrive -at ns after the previous LC's fetch_sub (to land inside its clear window)
            done_ev[i - 1].wait()
            _wait_until(done_at[i - 1] - at)
        task.log("lc_arrive", lc=i)
        with lk:
            first = state["running_lc"] == 0
            state["running_lc"] += 1
        if first:
            task.set_flag(1, f"lc:{i}")
        while True:
            with lk:
                if state["running_be"] == 0:
                    break
            time.sleep(10e-6)
        task.log("lc_run", lc=i)
        task.run_lc(i)
        with lk:
            state["running_lc"] -= 1
            last = state["running_lc"] == 0
        done_at[i] = time.time_ns()
        done_ev[i].set()
        task.log("lc_done", lc=i, last=last)
        if last:
            if delay:
                _wait_until(time.time_ns() + delay)
            task.set_flag(0, f"lc:{i}")

    t0 = time.time_ns()
    threads = [threading.Thread(target=be_thread)] + [
        threading.Thread(target=lc_thread, args=(i, at, clear_delay_ns[i])) for i, at in enumerate(arrivals_ns)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()


def blp(variant: str, platform: str, arrivals_ns: list[int], n: int = 40, lb: int | None = None,
        spin_ns: int = 50_000, lc_spin_ns: int = 300_000, clear_delay_ns: list[int] | None = None) -> dict[str, Any]:
    """One BLP run (module doc); returns a raw recording with the logical-block log (`lblocks`)."""
    import sys

    from gpcheck.traces.record.workloads import gpu_sm_count

    sm = gpu_sm_count()
    gpu = Gpu(max_blocks=sm * (n * 14 + 16))
    sys.setswitchinterval(1e-4)
    gpu.calibrate()
    task = BlpTask(gpu, n, lb or 2 * sm, spin_ns, lc_spin_ns)
    gpu.launch("warmup", 0, task.lc, "lc", 1, 1000)
    cp.cuda.runtime.deviceSynchronize()
    gpu.launches.clear()
    gpu.used_blocks = 0
    delays = clear_delay_ns or [0] * len(arrivals_ns)
    if platform == "hip":
        hip_client(task, arrivals_ns)
    else:
        cuda_client(task, arrivals_ns, delays)
    cp.cuda.runtime.deviceSynchronize()
    count = min(int(task.lcount.get()[0]), task.max_l)
    lr = task.lrec[: count * L_WORDS].get().reshape(-1, L_WORDS)
    counters = {"executed": [int(x) for x in task.executed.get()], "done": [int(x) for x in task.done.get()],
                "lb": task.lb, "n": n, "persistent_blocks": task.p, "logical_blocks_logged": count,
                "note": "per BE kernel k: claims of its counter (atomicAdd, never reset on resume) and logical "
                        "blocks that ran to their end (device atomics); a logical block ran twice iff done[k] > lb, "
                        "one was lost iff done[k] < lb at the end"}
    streams = [{"name": "be", "cuda_priority": task.p_be}, {"name": "lc", "cuda_priority": task.p_lc}]
    params = {"platform": platform, "n": n, "logical_blocks": task.lb, "persistent_blocks": task.p,
              "block_threads": BLOCK_THREADS, "logical_block_spin_ns": spin_ns, "lc_spin_ns": lc_spin_ns,
              "lc_arrivals_ns": arrivals_ns, "lc_clear_delay_ns": delays}
    rec = _record(gpu, "blp", variant, params, streams, task.events, counters)
    base = rec["clock"]["base_ns"]
    rows = [[int(r[5]) >> 1, int(r[2]), int(r[3]), int(r[4]) & 0xFFFF, (int(r[4]) >> 16) & 0xFFFF,
             int(r[0]) - base, int(r[1]) - base, int(r[5]) & 1]
            for r in sorted(lr.tolist(), key=lambda r: (r[0], r[2], r[3]))]
    rec["lblocks"] = {"columns": ["launch", "kernel", "lblock", "block", "sm", "t_start", "t_end", "stale"],
                      "rows": rows}
    return rec

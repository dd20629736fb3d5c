"""A thin CuPy layer for the recorder: the compiled kernels, prioritised streams, launches, and
the host-clock to `%globaltimer` calibration.

Runs only on the device machine (CuPy and a CUDA GPU); nothing else in gpcheck imports it.
Why calibrate: launch calls are timed with the host clock, kernel blocks with `%globaltimer`,
and the two differ by 0.1-0.3 ms on the H200 we measured (research/gpu_traces.md 4.2); each
launch time is moved onto the GPU clock by an offset measured with a stamp kernel.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

import cupy as cp  # type: ignore[import-not-found]
import numpy as np

from gpcheck.traces.record.kernels import REC_WORDS, SOURCE

BLOCK_THREADS = 1024  # two such blocks fit on a Hopper SM (2048 threads): one "wave" = 2 x SMs


@dataclass
class Launch:
    """One physical kernel launch: where its block records live and when the host issued it."""

    seq: int
    kernel: str          # logical name, e.g. "be:k5" or "low:3"
    kidx: int            # index into the per-kernel execution counters
    stream: str
    grid: int
    rec_off: int         # first block record (in blocks) in the shared record buffer
    t_host_before: int   # time.time_ns() just before the launch call
    t_host_after: int    # ... and just after it returned


def _priority_range() -> tuple[int, int]:
    """(least, greatest) CUDA stream priority, through CuPy or else the driver API by ctypes."""
    try:
        least, greatest = cp.cuda.runtime.deviceGetStreamPriorityRange()
        return int(least), int(greatest)
    except AttributeError:
        import ctypes

        cu = ctypes.CDLL("libcuda.so.1")
        lo, hi = ctypes.c_int(), ctypes.c_int()
        cp.cuda.runtime.free(0)  # make sure the primary context is current
        if cu.cuCtxGetStreamPriorityRange(ctypes.byref(lo), ctypes.byref(hi)) != 0:
            raise RuntimeError("cuCtxGetStreamPriorityRange failed")
        return lo.value, hi.value


class Gpu:
    """The device, its compiled kernels, and a record buffer shared by every launch."""

    def __init__(self, max_blocks: int):
        self.dev = cp.cuda.Device(0)
        props = cp.cuda.runtime.getDeviceProperties(0)
        self.name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        self.sm_count = int(props["multiProcessorCount"])
        self.cc = f"{props['major']}.{props['minor']}"
        self.prio_least, self.prio_greatest = _priority_range()
        self.driver = int(cp.cuda.runtime.driverGetVersion())
        self.runtime = int(cp.cuda.runtime.runtimeGetVersion())
        self.mod = cp.RawModule(code=SOURCE, options=("--std=c++17",))
        self.f_work = self.mod.get_function("work")
        self.f_stamp = self.mod.get_function("stamp")
        self.rec = cp.zeros(max_blocks * REC_WORDS, dtype=cp.uint64)
        self.max_blocks = max_blocks
        self.used_blocks = 0
        self.launches: list[Launch] = []
        self.null_flag = cp.zeros(1, dtype=cp.uint32)
        self.offset_ns = 0
        self.calibration: dict[str, Any] = {}

    def info(self) -> dict[str, Any]:
        return {"name": self.name, "sm_count": self.sm_count, "compute_capability": self.cc,
                "stream_priority_range": {"least": self.prio_least, "greatest": self.prio_greatest},
                "cuda_driver_version": self.driver, "cuda_runtime_version": self.runtime,
                "cupy": cp.__version__, "pid": os.getpid()}

    def stream(self, priority: int) -> tuple[Any, int]:
        """A non-blocking stream with the given CUDA priority (lower = more urgent; the driver
        clamps silently) and the priority it was granted."""
        s = cp.cuda.Stream(non_blocking=True, priority=priority)
        granted: Any = None
        for get in (lambda: s.priority, lambda: cp.cuda.runtime.streamGetPriority(s.ptr)):
            try:
                granted = int(get())
                break
            except Exception:  # older CuPy: fall back to the clamp rule of the CUDA docs
                continue
        if granted is None:
            granted = min(max(priority, self.prio_greatest), self.prio_least)
        return s, granted

    def calibrate(self, rounds: int = 20) -> dict[str, Any]:
        """Offset globaltimer - host time_ns, from the stamp with the shortest host round trip."""
        out = cp.zeros(2, dtype=cp.uint64)
        best: tuple[int, int] | None = None
        for _ in range(rounds):
            h0 = time.time_ns()
            self.f_stamp((1,), (1,), (out,))
            cp.cuda.runtime.deviceSynchronize()
            h1 = time.time_ns()
            g = int(out[0].get())
            rt = h1 - h0
            if best is None or rt < best[0]:
                best = (rt, g - (h0 + h1) // 2)
        assert best is not None
        self.offset_ns = best[1]
        self.calibration = {"globaltimer_minus_host_ns": best[1], "uncertainty_ns": best[0] // 2,
                            "method": "stamp kernel bracketed by time.time_ns(); shortest of %d round trips" % rounds}
        return self.calibration

    def launch(self, kernel: str, kidx: int, stream: Any, stream_name: str, grid: int, spin_ns: int,
               flag: Any = None, entered: Any = None, completed: Any = None, honour: bool = False,
               killable: bool = False, gap_thr: int = 20_000, gaps: Any = None, max_gaps: int = 0) -> Launch:
        """Launch `work` once; its block records go to the next free slice of the record buffer."""
        if self.used_blocks + grid > self.max_blocks:
            raise RuntimeError("record buffer full")
        off = self.used_blocks
        self.used_blocks += grid
        rec = self.rec[off * REC_WORDS:]
        flag = self.null_flag if flag is None else flag
        entered = self._counters if entered is None else entered
        completed = self._counters if completed is None else completed
        gp = gaps if gaps is not None else self._counters  # never written: max_gaps is 0 then
        if gaps is None:
            max_gaps = 0
        args = (flag, rec, entered, completed, np.int32(kidx), np.uint64(spin_ns), np.int32(honour),
                np.int32(killable), np.uint64(gap_thr), gp, np.int32(max_gaps))
        t0 = time.time_ns()
        self.f_work((grid,), (BLOCK_THREADS,), args, stream=stream)
        t1 = time.time_ns()
        ln = Launch(len(self.launches), kernel, kidx, stream_name, grid, off, t0, t1)
        self.launches.append(ln)
        return ln

    @property
    def _counters(self) -> Any:
        if not hasattr(self, "_scratch"):
            self._scratch = cp.zeros(4096, dtype=cp.uint32)
        return self._scratch

    def records(self) -> np.ndarray:
        """All block records so far, shape (blocks, REC_WORDS)."""
        cp.cuda.runtime.deviceSynchronize()
        return self.rec[: self.used_blocks * REC_WORDS].get().reshape(-1, REC_WORDS)

    def memset_async(self, arr: Any, value: int, stream: Any) -> None:
        cp.cuda.runtime.memsetAsync(arr.data.ptr, value, arr.nbytes, stream.ptr)

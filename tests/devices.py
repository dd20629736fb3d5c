"""What the `--device cuda` tests share (tests/unit/test_device_*.py): the markers that skip
without a host C compiler or a GPU, and an untimed spec of every property kind (the device
searches a timed spec's untimed abstraction, tests/unit/test_device_timed.py, and most bundled
models are timed)."""

from __future__ import annotations

import shutil

import pytest


def has_gpu() -> bool:
    """CuPy imports and sees at least one CUDA device."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - no CuPy, no driver, no device
        return False


needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="no host C compiler")
needs_gpu = pytest.mark.skipif(not has_gpu(), reason="no CUDA device (CuPy and a GPU)")

# The LP queue is unmapped while an RT request runs: an invariant, a transition property, a
# violated liveness property (a lasso), an unbounded latency (untimed actions may wait forever)
# and one that is 0 at every start; 80 states.
DEVMON = """model devmon "an untimed monitor"
const N = 4
var lp: 0..N = 0
var rt: bool = false
var mapped: bool = true
var k: 0..3 = 0
fair action lp_run { require mapped and lp < N
  lp = lp + 1 }
action rt_arrive { require not rt
  rt = true }
fair action monitor { require rt and mapped
  mapped = false }
action rt_done { require rt and not mapped
  rt = false
  k = (k + 1) % 4 }
action remap { require not rt and not mapped
  mapped = true }
action lp_reset { require lp == N
  lp = 0 }
invariant no_loss: lp <= N
transition lp_grows: lp' >= lp or lp == N
liveness no_starvation: eventually lp == N
latency be_resume_delay: from not mapped to mapped
latency at_once: from mapped to true
"""

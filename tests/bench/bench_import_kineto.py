"""Time and peak memory of `gpcheck import` of a large PyTorch profiler (Kineto) trace, the
whole-document path against the streamed one, in the same run (issue 31, item 4).

    PYTHONPATH=$PWD python tests/bench/bench_import_kineto.py [--kernels 100000 1000000] [--old-max 1000000]

For each size a synthetic trace shaped like the real ones (tests/bench/kineto_synth.py: about 1.3 KB
per kernel, so 10^5 kernels is about the 131 MB of the held-back trace) is written to a temporary
folder, then imported twice, each in a fresh process: **old**, what `gpcheck import` did before
(detect_format + import_trace + TraceWriter: the whole JSON loaded, a Kernel and an Event per
kernel and event), still the path of every other format; **new**, `gpcheck import` itself, which
streams Kineto (traces/importers/kineto_stream.py). Reported per path: CPU seconds (user + system:
the machine is shared, so wall time is noisy), wall seconds and peak RSS, then the ratios old/new;
the two outputs are compared byte for byte. `--old-max N` skips the old path above N kernels (at
10^6 it needs about 9 GB and minutes).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = str(HERE.parents[2])

# The child's own peak: VmHWM (per address space, so not the parent's size at fork, which
# ru_maxrss inherits across exec on Linux), else ru_maxrss.
PEAK = """
import atexit, resource, sys
def _peak():
    try:
        kb = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sys.stderr.write("MAXRSS %d\\n" % kb)
atexit.register(_peak)
"""
OLD = """
import sys
from gpcheck.traces.format import TraceWriter
from gpcheck.traces.importers import detect_format, import_trace
src, out = sys.argv[1:3]
header, events = import_trace(src, detect_format(src))
with TraceWriter(out, header) as w:
    for ev in events:
        w.write_event(ev)
"""
NEW = """
import sys
from gpcheck.checker.cli.command import main
sys.exit(main(["import", sys.argv[1], "--out", sys.argv[2]]))
"""


def measure(code: str, src: str, out: str) -> tuple[float, float, float]:
    """(CPU s, wall s, peak RSS MiB) of one import in a fresh process."""
    wrapper = PEAK + code
    t0 = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([sys.executable, "-c", wrapper, src, out], env={**os.environ, "PYTHONPATH": ROOT},
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"import failed: {p.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rss = [int(line.split()[1]) for line in p.stderr.splitlines() if line.startswith("MAXRSS ")][-1]
    return cpu, wall, rss / 1024


def digest(path: Path) -> str:
    """SHA-256 of a file read a buffer at a time (this process stays small: see PEAK)."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--old-max", type=int, default=1_000_000, help="skip the old path above this many kernels")
    ap.add_argument("--dir", default=None, help="where to write the traces (default: a temporary folder)")
    a = ap.parse_args()
    sys.path.insert(0, str(HERE.parent))
    import kineto_synth

    with tempfile.TemporaryDirectory(dir=a.dir) as d:
        for n in a.kernels:
            src = Path(d, f"kineto_{n}.json")
            with open(src, "w") as f:
                kineto_synth.write(f, n)
            size = src.stat().st_size / 1e6
            print(f"{n} kernels, {size:.0f} MB of JSON", flush=True)
            new = measure(NEW, str(src), str(Path(d, "new.jsonl")))
            print(f"  new (streamed):       {new[0]:7.1f} s CPU  {new[1]:7.1f} s wall  {new[2]:6.0f} MiB peak", flush=True)
            if n <= a.old_max:
                old = measure(OLD, str(src), str(Path(d, "old.jsonl")))
                print(f"  old (whole document): {old[0]:7.1f} s CPU  {old[1]:7.1f} s wall  {old[2]:6.0f} MiB peak",
                      flush=True)
                same = digest(Path(d, "new.jsonl")) == digest(Path(d, "old.jsonl"))
                print(f"  old/new: CPU {old[0] / new[0]:.1f}x, wall {old[1] / new[1]:.1f}x, "
                      f"peak RSS {old[2] / new[2]:.1f}x; outputs {'identical' if same else 'DIFFER'}", flush=True)
                if not same:
                    return 1
                os.unlink(Path(d, "old.jsonl"))
            os.unlink(Path(d, "new.jsonl"))
            os.unlink(src)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Peak memory and time of `gpcheck import` of a large rocprof CSV (issue 19: imports stream in
bounded memory). Each run is a fresh process; compare checkouts by running it with each on the
path, in the same session (the machine is shared: always compare ratios of one session).

    PYTHONPATH=$PWD python tests/bench/bench_import_memory.py [--rows 300000] [--wide 0] [--other /work/main]

`--wide N` adds an unused N-character column to every row (a CSV much larger than what is
kept of it). With `--other DIR` the same import also runs with DIR first on the path.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEADER = ["Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id", "Kernel_Name",
          "Correlation_Id", "Start_Timestamp", "End_Timestamp", "Workgroup_Size_X", "Workgroup_Size_Y",
          "Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"]


def write_csv(path: Path, rows: int, wide: int) -> None:
    with open(path, "w") as f:
        f.write(",".join(HEADER + (["Notes"] if wide else [])) + "\n")
        pad = "," + "x" * wide if wide else ""
        for i in range(rows):
            f.write(f'KERNEL_DISPATCH,Agent 2,{1 + i % 2},0,77,{i + 1},"void vector_add<float>(float*, int)",'
                    f"{i + 1},{1000 * i + 10},{1000 * i + 500},256,1,1,1000,1,1{pad}\n")


def run(tree: str, csv: Path, out: Path) -> tuple[float, float]:
    """(peak RSS MiB, seconds) of one import in a fresh process with `tree` first on the path."""
    code = ("import resource, sys\nfrom gpcheck.checker.cli import main\nrc = main(sys.argv[1:])\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\nsys.exit(rc)\n")
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-c", code, "import", str(csv), "--format", "rocprof", "--out", str(out)],
                       env={**os.environ, "PYTHONPATH": tree}, cwd=csv.parent, capture_output=True, text=True)
    seconds = time.monotonic() - t0
    if p.returncode != 0:
        raise SystemExit(f"import failed with {tree}: {p.stderr}")
    return int(p.stderr.strip().splitlines()[-1]) / 1024, seconds


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=300_000)
    ap.add_argument("--wide", type=int, default=0)
    ap.add_argument("--other", default=None, help="another checkout to compare with")
    args = ap.parse_args()
    here = str(Path(__file__).resolve().parents[2])
    with tempfile.TemporaryDirectory() as d:
        csv = Path(d, "kernel_trace.csv")
        write_csv(csv, args.rows, args.wide)
        size = csv.stat().st_size / 2**20
        print(f"{args.rows} rows, {size:.0f} MiB")
        for tree in [here] + ([args.other] if args.other else []):
            mib, s = run(tree, csv, Path(d, "out.jsonl"))
            print(f"  {tree}: peak {mib:.0f} MiB ({mib / size:.2f} x the file), {s:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

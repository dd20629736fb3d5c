"""Benchmark: `no_reexecution` of ring.gpspec proved by the pdr engine for N = 4..32 (B, MAXP
at their defaults), through the public API, each N in a fresh process so that no Z3 state is
shared. The goal is under 5 s per N.

    python tests/bench/bench_pdr_sweep.py [--from 4] [--to 32] [--step 1] [--timeout 120] [--json]

Prints, per N: the verdict, wall seconds of the whole `verify` call (loading, encoding,
Spacer, rendering the invariant), and the number of lines of the invariant Spacer found.
Exits 1 if some N is not proved.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT.parent / "shared" / "spec-examples" / "ring.gpspec"
GOAL_SECONDS = 5.0

_ONE = """
import json, sys, time
sys.path.insert(0, {root!r})
from gpcheck.checker import verify
t0 = time.perf_counter()
r = verify({spec!r}, consts={{"N": {n}}}, engine="pdr", properties=["no_reexecution"], timeout={timeout})
r = r.result("no_reexecution")
print(json.dumps({{"N": {n}, "verdict": r.verdict.value, "seconds": time.perf_counter() - t0,
                  "invariant_lines": len((r.detail.get("invariant") or "").splitlines()), "reason": r.reason}}))
"""


def run_one(n: int, timeout: float) -> dict[str, object]:
    code = _ONE.format(root=str(ROOT), spec=str(EXAMPLE), n=n, timeout=timeout)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        return {"N": n, "verdict": "error", "seconds": None, "reason": p.stderr.strip().splitlines()[-1:]}
    return json.loads(p.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from", dest="lo", type=int, default=4)
    ap.add_argument("--to", dest="hi", type=int, default=32)
    ap.add_argument("--step", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    for n in range(args.lo, args.hi + 1, args.step):
        row = run_one(n, args.timeout)
        rows.append(row)
        if not args.json:
            secs = row["seconds"]
            mark = "" if isinstance(secs, float) and secs < GOAL_SECONDS else "  (over the 5 s goal)"
            shown = f"{secs:6.2f} s" if isinstance(secs, float) else "     -  "
            print(f"N={n:>2}  {row['verdict']:<8} {shown}  invariant lines {row.get('invariant_lines', '-')}{mark}",
                  flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        done = [r["seconds"] for r in rows if isinstance(r["seconds"], float)]
        if done:
            print(f"max {max(done):.2f} s, total {sum(done):.1f} s over {len(rows)} values of N")
    sys.exit(0 if all(r["verdict"] == "proved" for r in rows) else 1)


if __name__ == "__main__":
    main()

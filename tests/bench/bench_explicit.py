"""Benchmark: exhaustive search of rewind.gpspec at N=12 B=2 CAP=2 MAXP=3 (waves_run widened to
0..8 in a copy: 2,774,248 reachable states), gpcheck against a hand-written Python BFS of the
same model (tests/bench/rewind_baseline.py), both as whole processes in the same run.

    python tests/bench/bench_explicit.py [--runs 3]

Prints each side's wall time and peak RSS (min/median over runs) and the ratio gpcheck/baseline.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT.parent / "shared" / "spec-examples" / "rewind.gpspec"
CONSTS = {"N": 12, "B": 2, "CAP": 2, "MAXP": 3}
EXPECTED_STATES = 2_774_248
_RSS = ("import resource,sys,runpy\nsys.argv={argv!r}\ntry:\n    {body}\nexcept SystemExit:\n    pass\n"
        "print('maxrss', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)")


def _run(argv: list[str], body: str) -> tuple[float, int, str]:
    code = _RSS.format(argv=argv, body=body)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    m = re.search(r"maxrss (\d+)", p.stderr)
    if m is None:
        raise SystemExit(f"run failed: {argv}\n{p.stderr}")
    return wall, int(m.group(1)), p.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    opts = ap.parse_args()
    text = EXAMPLE.read_text().replace("var waves_run: [0..N-1] -> 0..3 = 0", "var waves_run: [0..N-1] -> 0..8 = 0")
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "rewind_wide.gpspec"
        spec.write_text(text)
        gp_argv = ["gpcheck", "verify", str(spec), "--json", "--no-progress"] + [
            a for k, v in CONSTS.items() for a in ("--const", f"{k}={v}")]
        gp_body = "from gpcheck.checker.cli.command import main; rc = main(sys.argv[1:])"
        base_argv = ["baseline"] + [str(v) for v in CONSTS.values()]
        base_body = f"runpy.run_path({str(ROOT / 'tests/bench/rewind_baseline.py')!r}, run_name='__main__')"
        gp, base = [], []
        for _ in range(opts.runs):
            wall, rss, out = _run(gp_argv, gp_body)
            assert f'"states": {EXPECTED_STATES}' in out, out[:400]
            gp.append((wall, rss))
            wall, rss, out = _run(base_argv, base_body)
            assert out.startswith(str(EXPECTED_STATES)), out
            base.append((wall, rss))
    for name, rows in (("gpcheck", gp), ("baseline", base)):
        walls = [w for w, _ in rows]
        print(f"{name:9s} wall min {min(walls):6.2f} s  median {statistics.median(walls):6.2f} s  "
              f"peak RSS {max(r for _, r in rows) / 1024:7.0f} MiB")
    ratio = statistics.median(w for w, _ in gp) / statistics.median(w for w, _ in base)
    mem = max(r for _, r in gp) / max(r for _, r in base)
    print(f"ratio gpcheck/baseline: wall {ratio:.2f}x (goal <= 1.5x), peak memory {mem:.2f}x")


if __name__ == "__main__":
    main()

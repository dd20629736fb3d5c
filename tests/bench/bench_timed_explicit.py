"""The explicit engine on a timed spec (checker/api/timed_explicit.py) against the pure zone run
(checker/engines/timed/engine.py run_timed), each in its own process: CPU seconds of the engine
call (the spec loaded and compiled before the clock starts), for the safety properties only and
for every property, and whether the verdicts agree.

    PYTHONPATH=$PWD python tests/bench/bench_timed_explicit.py [SPEC ...]

Default specs: docs/timed/*.gpspec and the six timed library models."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPECS = sorted(glob.glob(os.path.join(ROOT, "docs", "timed", "*.gpspec"))) + [
    "collective_gang", "intel_guc", "mes_sched", "hws_oversub", "kfd_evict", "nvidia_preempt"]

CHILD = """
import json, sys, time
from gpcheck.checker.api.model_api import load
from gpcheck.checker.api.timed_explicit import run_timed_explicit
from gpcheck.checker.engines.explicit.explicit import Limits, select_properties
from gpcheck.checker.engines.timed.engine import run_timed
from gpcheck.gpmodel import compile_model
spec, which, how = sys.argv[1:4]
m = load(spec)
every = set(select_properties(m, None))
safe = {p.name for p in m.invariants} | {p.name for p in m.transitions} | {"deadlock", "range"}
wanted = every & safe if which == "safety" else every
cm = compile_model(m)
t = time.process_time()
r = run_timed(m, wanted, Limits(None, 900), cm=cm) if how == "zone" else run_timed_explicit(m, wanted, Limits(None, 900))
took = time.process_time() - t
print(json.dumps({"seconds": took, "verdicts": {x.property: [x.verdict.value, x.bound] for x in r.results},
                  "zones": r.timed.get("zones"), "by_abstraction": sum(1 for x in r.results
                  if x.detail.get("decided_by", "").startswith("untimed"))}))
"""


def main(argv: list[str]) -> int:
    specs = argv or SPECS
    env = dict(os.environ, PYTHONPATH=ROOT)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'spec':24} {'props':7} {'zone s':>8} {'hybrid s':>9} {'speed-up':>8}  same  decided untimed  zones")
    bad = 0
    for spec in specs:
        for which in ("safety", "all"):
            out = {}
            for how in ("zone", "hybrid"):
                p = subprocess.run([sys.executable, "-c", CHILD, spec, which, how], capture_output=True, text=True,
                                   env=env, cwd=ROOT, check=True)
                out[how] = json.loads(p.stdout.strip().splitlines()[-1])
            z, h = out["zone"], out["hybrid"]
            same = z["verdicts"] == h["verdicts"]
            bad += not same
            name = os.path.basename(spec)
            print(f"{name:24} {which:7} {z['seconds']:8.2f} {h['seconds']:9.2f} {z['seconds'] / max(h['seconds'], 1e-3):7.1f}x"
                  f"  {'yes' if same else 'NO '}  {h['by_abstraction']}/{len(h['verdicts']):<14} {z['zones']}",
                  flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

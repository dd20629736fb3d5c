"""Symmetry reduction, measured: the reduced Python search against the unreduced Python and
compiled searches of the same model instance, each in its own process (wall time and peak
RSS of the whole process), safety properties only (the reduction does not check liveness).

    PYTHONPATH=$PWD python tests/bench/bench_symmetry.py [--only cwsr] [--skip-compiled]

Prints one row per (model, constants, configuration) and the ratios against the unreduced
Python search measured in the same run, with the machine's load average. The compiled core's
first run of a model compiles it (numba) and caches the code: it is run once untimed first."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

CASES = [
    ("cwsr", {"Q": 1, "N": 3, "W": 3}),
    ("cwsr", {"Q": 1, "N": 3, "W": 4}),
    ("cwsr", {"Q": 2, "N": 3, "W": 2}),
    ("nvidia_streams", {"S": 3, "Q": 2}),
    ("nvidia_streams", {"S": 4, "Q": 1}),
]
CONFIGS = [("python, full", "python", "off"), ("python, reduced", "python", "on"),
           ("compiled, full", "compiled", "off")]

CHILD = """
import json, sys, time
from gpcheck.checker import load, verify
from gpcheck.checker.engines.explicit.explicit import select_properties
name, consts, core, sym = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
m = load(name, consts)
live = {p.name for p in m.liveness}
props = [p for p in select_properties(m, None) if p not in live]
t = time.monotonic()
r = verify(m, properties=props, core=core, symmetry=sym)
print(json.dumps({"states": r.states, "seconds": time.monotonic() - t,
                  "verdicts": {x.property: x.verdict.value for x in r.results}}))
"""


def peak_rss_mb(name: str, consts: dict, core: str, sym: str, timeout: float) -> tuple[dict, float]:
    """Run the child under its own wait4 to read its peak RSS."""
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, name, json.dumps(consts), core, sym],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ)
    deadline = start + timeout
    out = b""
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            return {"error": f"over {timeout:g} s"}, 0.0
        time.sleep(0.05)
    wall = time.monotonic() - start
    out = proc.stdout.read() if proc.stdout else b""  # type: ignore[union-attr]
    err = proc.stderr.read() if proc.stderr else b""  # type: ignore[union-attr]
    if os.waitstatus_to_exitcode(status) != 0:
        return {"error": err.decode()[-300:]}, 0.0
    res = json.loads(out.decode().strip().splitlines()[-1])
    res["wall"] = wall
    return res, ru.ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=None)
    ap.add_argument("--skip-compiled", action="store_true")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()}", flush=True)
    for name, consts in CASES:
        if args.only and args.only != name:
            continue
        if not args.skip_compiled:  # compile and cache once, untimed
            peak_rss_mb(name, consts, "compiled", "off", args.timeout)
        base = None
        base_rss = 1.0
        verdicts = None
        for label, core, sym in CONFIGS:
            if args.skip_compiled and core == "compiled":
                continue
            res, rss = peak_rss_mb(name, consts, core, sym, args.timeout)
            if "error" in res:
                print(f"{name} {consts} {label}: {res['error']}", flush=True)
                continue
            if verdicts is None:
                verdicts = res["verdicts"]
            same = "same verdicts" if res["verdicts"] == verdicts else f"DIFFERENT verdicts {res['verdicts']}"
            if label == "python, full":
                base = res
                base_rss = rss
            ratio = (f"  vs python full: search {base['seconds'] / res['seconds']:.2f}x faster, "
                     f"states {base['states'] / res['states']:.2f}x fewer") if base and res["states"] else ""
            if base is not None and label != "python, full":
                ratio += f", peak memory {rss / base_rss:.2f}x"
            print(f"{name} {consts} {label:16s} states {res['states']:>10,}  search {res['seconds']:7.2f} s  "
                  f"process {res['wall']:7.2f} s  peak {rss:7.0f} MB  {same}{ratio}", flush=True)
    print(f"load average {os.getloadavg()}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

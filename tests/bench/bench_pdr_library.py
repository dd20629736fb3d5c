"""Benchmark: `gpcheck verify MODEL --engine pdr --json` on every bundled model (default constants),
each model in a fresh process, and the per-property table of issue 14 item 1.

    python tests/bench/bench_pdr_library.py [--engine pdr|kind] [--timeout 120] [--models a,b] [--json]

Per property: the verdict, its own seconds (`detail.seconds`), the model's shared seconds
(`detail.shared_seconds`: exploration, mining, Houdini, the reachable-set certificate, the
counterexample search; NOTE(pdr-seconds)) and their sum, the figure held against the 10 s goal.
Per model: wall seconds and CPU seconds of the whole process (start-up included).
Then the library's total wall time against the 120 s goal, and the load average before and after
(the development machine is shared: read ratios within one run). Exits 1 if some invariant or
transition property is neither proved nor violated (the goal: every one that holds is proved).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOAL_PROPERTY_SECONDS = 10.0
GOAL_LIBRARY_SECONDS = 120.0
CHECKED_KINDS = ("invariant", "transition")


def bundled() -> list[str]:
    return sorted(p.stem for p in (ROOT / "spec" / "models").glob("*.gpspec"))


def run_model(name: str, engine: str, timeout: float) -> dict[str, object]:
    """One `gpcheck verify` process: its JSON report and wall seconds."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "gpcheck", "verify", name, "--engine", engine, "--timeout", str(timeout), "--json"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    try:
        report = json.loads(out)
    except json.JSONDecodeError:
        return {"model": name, "wall": wall, "error": (err.strip().splitlines() or ["no output"])[-1]}
    return {"model": name, "wall": wall, "report": report}


def _children_cpu() -> float:
    ru = os.times()
    return ru.children_user + ru.children_system


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", default="pdr", choices=["pdr", "kind"])
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--models", default=None, help="comma-separated model names (default: every bundled model)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    names = args.models.split(",") if args.models else bundled()
    load_before = os.getloadavg()
    started = time.perf_counter()
    rows: list[dict[str, object]] = []
    models: list[dict[str, object]] = []
    for name in names:
        before = _children_cpu()
        m = run_model(name, args.engine, args.timeout)
        m["cpu"] = round(_children_cpu() - before, 2)
        models.append({"model": name, "wall": round(float(m["wall"]), 2), "cpu": m["cpu"], "error": m.get("error")})
        report = m.get("report")
        if not isinstance(report, dict):
            continue
        for r in report["results"]:
            if r["kind"] not in CHECKED_KINDS + ("range", "deadlock"):
                continue
            d = r.get("detail") or {}
            own = d.get("seconds")
            shared = d.get("shared_seconds") or 0.0
            rows.append({"model": name, "property": r["property"], "kind": r["kind"], "verdict": r["verdict"],
                         "seconds": own, "shared_seconds": shared,
                         "with_shared": None if own is None else round(own + shared, 3),
                         "how": (r.get("reason") or d.get("found_by") or "")[:60]})
    total = time.perf_counter() - started
    load_after = os.getloadavg()
    summary = {"engine": args.engine, "library_wall": round(total, 1), "load_before": load_before,
               "load_after": load_after, "models": models, "properties": rows}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{'model':20} {'property':26} {'verdict':10} {'own s':>7} {'shared s':>8} {'sum s':>7}  how")
        for r in rows:
            own = "-" if r["seconds"] is None else f"{r['seconds']:.2f}"
            tot = "-" if r["with_shared"] is None else f"{r['with_shared']:.2f}"
            mark = " *" if isinstance(r["with_shared"], float) and r["with_shared"] > GOAL_PROPERTY_SECONDS else ""
            print(f"{r['model']:20} {r['property']:26} {r['verdict']:10} {own:>7} {r['shared_seconds']:>8.2f} "
                  f"{tot:>7}  {r['how']}{mark}")
        print()
        for m in models:
            print(f"{m['model']:20} wall {m['wall']:6.2f} s  cpu {m['cpu']:6.2f} s  {m['error'] or ''}")
        held = [r for r in rows if r["verdict"] == "proved" and isinstance(r["with_shared"], float)]
        worst = max(held, key=lambda r: r["with_shared"], default=None)  # type: ignore[arg-type, return-value]
        if worst is not None:
            print(f"slowest proved property with its model's shared work: {worst['model']} {worst['property']} "
                  f"{worst['with_shared']:.2f} s (goal {GOAL_PROPERTY_SECONDS:g} s)")
        print(f"library: {total:.1f} s wall (goal {GOAL_LIBRARY_SECONDS:g} s), "
              f"{sum(float(m['cpu'] or 0) for m in models):.1f} s CPU; load average "
              f"{load_before[0]:.2f} before, {load_after[0]:.2f} after")
    undecided = [r for r in rows if r["kind"] in CHECKED_KINDS and r["verdict"] not in ("proved", "violated")]
    sys.exit(1 if undecided or any(m["error"] for m in models) else 0)


if __name__ == "__main__":
    main()

"""`python3 -m gpcheck.traces.record all --out DIR` on the device machine: record every workload and write
one gzip-compressed raw recording per run (plus a Kineto trace of the priority run when PyTorch
is there). `gpcheck import FILE --format record` turns a raw recording into a gpcheck trace.

Sub-commands: `all`, `priority`, `rewind`, `timeslice`, and `timeslice-child` (internal: one side
of the two-process run); `mechanisms [--only NAME...]` records issue 31's runs (more rewind
variants, time slicing between three processes and unequal kernels, block-level preemption,
XSched's level-1 window: `MECHANISMS` below), one file each, a failed run reported and skipped. Every recording is a separate, self-describing file; see README.md in
traces/corpus/real/ for what each one is.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from typing import Any, Callable


def _dump(obj: Any, path: str) -> None:
    data = json.dumps(obj, separators=(",", ":")).encode()
    if path.endswith(".gz"):
        with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
            f.write(data)
    else:
        with open(path, "wb") as f:
            f.write(data)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)", flush=True)


def _summary(rec: dict[str, Any]) -> dict[str, Any]:
    from gpcheck.traces.record.workloads import completed_blocks

    out = {"workload": rec["workload"], "variant": rec["variant"], "launches": len(rec["launches"]),
           "blocks": len(rec["blocks"]["rows"]), "completed_blocks": completed_blocks(rec),
           "host_events": [(e["action"], e.get("meta")) for e in rec.get("host_events", [])]}
    if rec.get("counters", {}).get("completed"):
        c = rec["counters"]
        out["ran_twice"] = [k for k, v in enumerate(c["completed"]) if v > c["grid"]]
        out["completed"] = c["completed"]
    elif rec.get("counters", {}).get("done"):  # block-level preemption: logical blocks per kernel
        c = rec["counters"]
        out["done"], out["executed"] = c["done"], c["executed"]
        out["stale_lblocks"] = sum(r[-1] for r in rec.get("lblocks", {}).get("rows", []))
    return out


def _priority(out: str, kineto: bool) -> list[dict[str, Any]]:
    from gpcheck.traces.record import workloads as w

    recs = []
    prof = None
    if kineto:
        try:
            import torch
            from torch.profiler import ProfilerActivity, profile

            torch.cuda.init()
            prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        except Exception as e:  # no PyTorch: record without Kineto
            print("kineto unavailable:", e, flush=True)
    if prof is not None:
        with prof:
            rec = w.priority(None, "high_vs_low")
        path = os.path.join(out, "kineto_priority.json")
        prof.export_chrome_trace(path)
        with open(path, "rb") as f:
            data = f.read()
        os.unlink(path)
        with open(path + ".gz", "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as g:
            g.write(data)
        print(f"wrote {path}.gz ({os.path.getsize(path + '.gz')} bytes)", flush=True)
    else:
        rec = w.priority(None, "high_vs_low")
    _dump(rec, os.path.join(out, "priority_high_vs_low.json.gz"))
    recs.append(rec)
    rec = w.priority(0, "equal_priority")
    _dump(rec, os.path.join(out, "priority_equal.json.gz"))
    recs.append(rec)
    return recs


def _rewind(out: str) -> list[dict[str, Any]]:
    from gpcheck.traces.record import workloads as w

    recs = []
    for variant, when, honour, kill in (("mid_reef", "mid", True, True), ("mid_port", "mid", False, False),
                                        ("after_finish", "after_finish", True, True)):
        rec = w.rewind(variant, when, honour, kill)
        _dump(rec, os.path.join(out, f"rewind_{variant}.json.gz"))
        recs.append(rec)
    return recs


def _timeslice(out: str, spin_ms: int = 30) -> list[dict[str, Any]]:
    start_at = time.time_ns() + 4_000_000_000  # both children are up and warmed by then
    parts = []
    procs = []
    for role in ("A", "B"):
        path = os.path.join(out, f".ts_{role}.json")
        procs.append((path, subprocess.Popen([sys.executable, "-m", "gpcheck.traces.record", "timeslice-child", role,
                                              str(start_at), str(spin_ms * 1_000_000), path])))
    for path, p in procs:
        if p.wait() != 0:
            raise SystemExit(f"timeslice child failed: {p.returncode}")
        with open(path) as f:
            parts.append(json.load(f))
        os.unlink(path)
    rec = {"gpcheck_record": 1, "workload": "timeslice", "variant": "two_processes", "parts": parts,
           "note": "two processes (two CUDA contexts) each launch one kernel of one 1024-thread block per SM "
                   "at the same host instant; each part has its own clock calibration, all times are on "
                   "the shared GPU %globaltimer"}
    _dump(rec, os.path.join(out, "timeslice_two_processes.json.gz"))
    return parts


def _mechanism_runs(out: str) -> dict[str, Callable[[], dict[str, Any]]]:
    """Issue 31's recordings by file name (README.md in traces/corpus/real/ says what each shows)."""
    from gpcheck.traces.record import workloads as w

    def rw(when: str, honour: bool, name: str, **kw: Any) -> Callable[[], dict[str, Any]]:
        return lambda: w.rewind(name, when, honour, honour, **kw)

    def bl(name: str, platform: str, arrivals: list[int], **kw: Any) -> Callable[[], dict[str, Any]]:
        from gpcheck.traces.record.blp import blp
        return lambda: blp(name, platform, arrivals, **kw)

    def xs(name: str, window: int, **kw: Any) -> Callable[[], dict[str, Any]]:
        from gpcheck.traces.record.xqueue import xsched
        return lambda: xsched(name, window, **kw)

    def ts(name: str, roles: list[tuple[str, int, int]]) -> Callable[[], dict[str, Any]]:
        from gpcheck.traces.record.multiproc import timeslice_multi
        return lambda: timeslice_multi(out, name, roles)

    ms = 1_000_000
    return {
        "rewind_early_reef": rw("mid", True, "early_reef", preempt_after_ns=2_500_000),
        "rewind_cap3_reef": rw("mid", True, "cap3_reef", cap=3),
        "rewind_cap3_port": rw("mid", False, "cap3_port", cap=3),
        "rewind_two_rt_reef": rw("mid", True, "two_rt_reef", arrivals=[3_500_000, 8_500_000]),
        "rewind_two_rt_port": rw("mid", False, "two_rt_port", arrivals=[3_500_000, 8_500_000]),
        "blp_hip_long_lc": bl("hip_long_lc", "hip", [800_000], lc_spin_ns=2 * ms),
        "blp_hip_short_lc": bl("hip_short_lc", "hip", [800_000], lc_spin_ns=20_000),
        "blp_hip_two_lc": bl("hip_two_lc", "hip", [800_000, 2_000_000], lc_spin_ns=100_000),
        "blp_cuda_one_lc": bl("cuda_one_lc", "cuda", [800_000]),
        "blp_cuda_two_lc_apart": bl("cuda_two_lc_apart", "cuda", [800_000, 3 * ms]),
        "blp_cuda_handover_race": bl("cuda_handover_race", "cuda", [800_000, -200_000],
                                     clear_delay_ns=[600_000, 0]),
        "xsched_l1_w1": xs("l1_w1", 1),
        "xsched_l1_w4": xs("l1_w4", 4),
        "xsched_l1_w8": xs("l1_w8", 8),
        "xsched_l1_w8_rt_priority": xs("l1_w8_rt_priority", 8, rt_priority=-5),
        "timeslice_three_processes": ts("three_processes", [("A", 1, 30 * ms), ("B", 1, 30 * ms), ("C", 1, 30 * ms)]),
        "timeslice_unequal_lengths": ts("unequal_lengths", [("A", 20, 1 * ms), ("B", 2, 10 * ms)]),
        "timeslice_three_mixed": ts("three_mixed", [("A", 30, 1 * ms), ("B", 6, 5 * ms), ("C", 1, 30 * ms)]),
    }


def _mechanisms(out: str, only: list[str]) -> list[dict[str, Any]]:
    import traceback

    recs = []
    for name, fn in _mechanism_runs(out).items():
        if only and name not in only:
            continue
        t = time.time()
        try:
            rec = fn()
        except Exception:  # one failed run must not cost the others (device time is short)
            print(f"FAILED {name}:\n{traceback.format_exc()}", flush=True)
            continue
        _dump(rec, os.path.join(out, f"{name}.json.gz"))
        print(f"{name}: {time.time() - t:.1f} s", flush=True)
        recs.append(rec)
    return recs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m gpcheck.traces.record")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("all", "priority", "rewind", "timeslice"):
        p = sub.add_parser(name)
        p.add_argument("--out", default=os.environ.get("OUT", "."))
        p.add_argument("--no-kineto", action="store_true")
    m = sub.add_parser("mechanisms")
    m.add_argument("--out", default=os.environ.get("OUT", "."))
    m.add_argument("--only", nargs="*", default=[])
    mc = sub.add_parser("timeslice-multi-child")
    for arg in ("role", "start_at", "n", "spin_ns", "path"):
        mc.add_argument(arg, type=int if arg in ("start_at", "n", "spin_ns") else str)
    c = sub.add_parser("timeslice-child")
    c.add_argument("role")
    c.add_argument("start_at", type=int)
    c.add_argument("spin_ns", type=int)
    c.add_argument("path")
    a = ap.parse_args(argv)
    if a.cmd == "timeslice-child":
        from gpcheck.traces.record.workloads import timeslice_child

        with open(a.path, "w") as f:
            json.dump(timeslice_child(a.role, a.start_at, a.spin_ns, None), f)
        return 0
    if a.cmd == "timeslice-multi-child":
        from gpcheck.traces.record.multiproc import child

        child(a.role, a.start_at, a.n, a.spin_ns, a.path)
        return 0
    os.makedirs(a.out, exist_ok=True)
    if a.cmd == "mechanisms":
        summaries = [_summary(r) if "blocks" in r else {"workload": r["workload"], "variant": r["variant"]}
                     for r in _mechanisms(a.out, a.only)]
        with open(os.path.join(a.out, "summary.json"), "w") as f:
            json.dump(summaries, f, indent=1)
        return 0
    steps: dict[str, Callable[[], list[dict[str, Any]]]] = {
        "priority": lambda: _priority(a.out, not a.no_kineto),
        "rewind": lambda: _rewind(a.out),
        "timeslice": lambda: _timeslice(a.out),
    }
    summaries = []
    for name, fn in steps.items():
        if a.cmd not in ("all", name):
            continue
        t = time.time()
        for rec in fn():
            s = _summary(rec) if "blocks" in rec else {"workload": rec["workload"], "variant": rec["variant"]}
            summaries.append(s)
            print(json.dumps(s), flush=True)
        print(f"{name}: {time.time() - t:.1f} s", flush=True)
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summaries, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

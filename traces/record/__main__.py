"""`python3 -m gpcheck.traces.record all --out DIR` on the device machine: record every workload and write
one gzip-compressed raw recording per run (plus a Kineto trace of the priority run when PyTorch
is there). `gpcheck import FILE --format record` turns a raw recording into a gpcheck trace.

Sub-commands: `all`, `priority`, `rewind`, `timeslice`, and `timeslice-child` (internal: one side
of the two-process run). Every recording is a separate, self-describing file; see README.md in
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
    if rec.get("counters"):
        c = rec["counters"]
        out["ran_twice"] = [k for k, v in enumerate(c["completed"]) if v > c["grid"]]
        out["completed"] = c["completed"]
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m gpcheck.traces.record")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("all", "priority", "rewind", "timeslice"):
        p = sub.add_parser(name)
        p.add_argument("--out", default=os.environ.get("OUT", "."))
        p.add_argument("--no-kineto", action="store_true")
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
    os.makedirs(a.out, exist_ok=True)
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

"""gpcheck's own raw GPU recordings (`python3 -m traces.record`, traces/record/) -> observation trace.

A raw recording (`"gpcheck_record": 1`) holds, per physical kernel launch, the host launch time
moved onto the GPU clock and one record per thread block (entry/exit `%globaltimer`, `%smid` at
entry and exit, a status: completed / returned at entry on the preempt flag / killed mid-way).
A kernel's start is its first block's entry and its end its last block's exit (what CUPTI would
report). Extra per-launch meta: `kernel` (the logical kernel: the same for a relaunch), `work`
(blocks that completed their work in this launch), `exited`, `killed`, `sm_changed` (blocks whose
`%smid` differs at exit), `max_gap_ns`. Host-side scheduler steps of the rewind emulation
(`preempt`, `resume`, ...) become events of those names; in-kernel timer gaps of the time-slice
recording become `gap` events. The recording's execution counters and parameters are kept in the
header (`source.counters`, `source.params`), so a check can be compared with what the device
itself counted.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from spec.errors import TraceError
from traces.format import Event, TraceHeader
from traces.importers.common import Extra, Kernel, build_trace, cuda_level, file_info
from traces.importers.jsonload import load_json

STATUS = {0: "completed", 1: "exited", 2: "killed"}


def looks_like_record(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("gpcheck_record") == 1


def _part(rec: dict[str, Any], path: str, where: str) -> tuple[list[Kernel], list[Extra]]:
    try:
        base = int(rec["clock"]["base_ns"])
        pid = rec["device"].get("pid")
        prio = {s["name"]: s.get("cuda_priority") for s in rec["streams"]}
        cols = rec["blocks"]["columns"]
        rows = rec["blocks"]["rows"]
        launches = rec["launches"]
    except (KeyError, TypeError, AttributeError) as e:
        raise TraceError(f"{path}: {where}: not a gpcheck raw recording: missing {e}") from None
    need = ("launch", "t_entry", "t_exit", "sm_entry", "sm_exit", "status", "max_gap_ns")
    if any(c not in cols for c in need):
        raise TraceError(f"{path}: {where}: blocks.columns lacks {[c for c in need if c not in cols]}")
    ix = {c: cols.index(c) for c in need}
    per: dict[int, list[list[int]]] = defaultdict(list)
    for n, r in enumerate(rows):
        if not isinstance(r, list) or len(r) != len(cols):
            raise TraceError(f"{path}: {where}: blocks.rows[{n}] has {len(r) if isinstance(r, list) else '?'} "
                             f"values, expected {len(cols)}")
        per[r[ix["launch"]]].append(r)
    kernels = []
    for n, ln in enumerate(launches):
        seq = ln.get("seq")
        blocks = per.get(seq, [])
        if not blocks:
            raise TraceError(f"{path}: {where}: launches[{n}] (seq {seq}) has no block records")
        status = [b[ix["status"]] for b in blocks]
        meta: dict[str, Any] = {
            "kernel": ln["kernel"], "stream_id": ln["stream"],
            "work": status.count(0), "exited": status.count(1), "killed": status.count(2),
            "blocks_recorded": len(blocks),
            "sm_changed": sum(1 for b in blocks if b[ix["sm_entry"]] != b[ix["sm_exit"]]),
            "max_gap_ns": max(b[ix["max_gap_ns"]] for b in blocks)}
        stream = ln["stream"]
        kernels.append(Kernel(
            name=str(ln["kernel"]).split(":")[0] if ":" in str(ln["kernel"]) else str(ln["kernel"]),
            stream_key=(pid if isinstance(pid, int) else -1, stream),
            start=base + min(b[ix["t_entry"]] for b in blocks), end=base + max(b[ix["t_exit"]] for b in blocks),
            corr=int(seq) + 1, pid=pid, launch=base + int(ln["t_launch"]), launch_from="api",
            level=cuda_level(prio.get(stream)), grid_dims=(int(ln["grid"]),), block_dims=(1024,),
            stream_info={"name": stream, "pid": pid, "cuda_priority": prio.get(stream)}, meta=meta))
    extras = [Extra(base + int(e["t"]), str(e["action"]), {}, dict(e.get("meta") or {}))
              for e in rec.get("host_events", [])]
    gaps = rec.get("gaps")
    if gaps:
        gc = gaps["columns"]
        gi = {c: gc.index(c) for c in ("launch", "block", "t", "length_ns")}
        for g in gaps["rows"]:
            extras.append(Extra(base + int(g[gi["t"]]), "gap", {},
                                {"corr": int(g[gi["launch"]]) + 1, "pid": pid, "block": g[gi["block"]],
                                 "length_ns": int(g[gi["length_ns"]])}))
    return kernels, extras


def import_record(path: str) -> tuple[TraceHeader, list[Event]]:
    """Import a raw recording (see module doc)."""
    doc = load_json(path)
    if not looks_like_record(doc):
        raise TraceError(f"{path}: not a gpcheck raw recording (no \"gpcheck_record\": 1)")
    parts = doc["parts"] if isinstance(doc.get("parts"), list) else [doc]
    kernels: list[Kernel] = []
    extras: list[Extra] = []
    for i, p in enumerate(parts):
        k, x = _part(p, path, f"parts[{i}]" if "parts" in doc else "recording")
        kernels += k
        extras += x
    first = parts[0]
    src: dict[str, Any] = {"format": "record", **file_info(path), "workload": doc.get("workload"),
                           "variant": doc.get("variant"), "device": first.get("device"),
                           "clock": "ns, GPU %globaltimer (launch times moved from the host clock by calibration)",
                           "calibration": [p.get("clock") for p in parts]}
    if len(parts) == 1:
        src["params"] = first.get("params")
        if first.get("counters"):
            src["counters"] = first["counters"]
    else:
        src["params"] = [p.get("params") for p in parts]
        src["note"] = doc.get("note")
    return build_trace(kernels, src, extras=extras)

"""gpcheck's own raw GPU recordings (`python3 -m gpcheck.traces.record`, traces/record/) -> observation trace.

A raw recording (`"gpcheck_record": 1`) holds, per physical kernel launch, the host launch time
moved onto the GPU clock and one record per thread block (entry/exit `%globaltimer`, `%smid` at
entry and exit, a status: completed / returned at entry on the preempt flag / killed mid-way).
A kernel's start is its first block's entry and its end its last block's exit (what CUPTI would
report). Extra per-launch meta: `kernel` (the logical kernel: the same for a relaunch), `work`
(blocks that completed their work in this launch), `exited`, `killed`, `sm_changed` (blocks whose
`%smid` differs at exit), `max_gap_ns`. Host-side scheduler steps of the rewind emulation
(`preempt`, `resume`, ...) become events of those names; in-kernel timer gaps of the time-slice
recording become `gap` events; the logical blocks of the block-level preemption recordings
(`lblocks`: one row per logical block a persistent block claimed and ran) become `lblock` events at
their start, with the kernel, claim index, persistent block, SM, end time and `stale` (its
predecessor kernel had not finished when it was claimed) in meta, and a persistent-block
launch's `work` counts the logical blocks it ran, `logical_blocks` the kernel's total (the unit
exactly-once counts in: a relaunch whose blocks find the claim counter exhausted did no work). The recording's execution counters and parameters are kept in the
header (`source.counters`, `source.params`), so a check can be compared with what the device
itself counted.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import Event, TraceHeader
from gpcheck.traces.importers.common import MAX_NS, Extra, Kernel, build_trace, cuda_level, file_info, key, short
from gpcheck.traces.importers.jsonload import load_json

STATUS = {0: "completed", 1: "exited", 2: "killed"}


def looks_like_record(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("gpcheck_record") == 1


def _fields(obj: Any, where: str, **types: Any) -> dict[str, Any]:
    """`obj` as an object whose named fields have the given types (a TraceError naming the
    place otherwise); integers must be within +-2^62."""
    if not isinstance(obj, dict):
        raise TraceError(f"{where}: expected an object, got {short(obj)}")
    for name, t in types.items():
        v = obj.get(name)
        ok = isinstance(v, t) and not (isinstance(v, bool) and t is int)
        if ok and isinstance(v, int) and not isinstance(v, bool):
            ok = -MAX_NS <= v <= MAX_NS
        if not ok:
            raise TraceError(f"{where}: field {name!r} must be {getattr(t, '__name__', t)}, got {short(v)}")
    return obj


def _table(obj: Any, where: str, need: tuple[str, ...]) -> tuple[dict[str, int], list[list[int]]]:
    """A `{columns, rows}` table whose rows are integer lists: column index by name, rows."""
    _fields(obj, where, columns=list, rows=list)
    cols = obj["columns"]
    missing = [c for c in need if c not in cols]
    if missing:
        raise TraceError(f"{where}.columns lacks {missing}")
    for n, r in enumerate(obj["rows"]):
        if not isinstance(r, list) or len(r) != len(cols) or \
                not all(isinstance(x, int) and not isinstance(x, bool) and -MAX_NS <= x <= MAX_NS for x in r):
            raise TraceError(f"{where}.rows[{n}]: expected {len(cols)} integers, got {short(r)}")
    return {c: cols.index(c) for c in need}, obj["rows"]


def _part(rec: Any, path: str, where: str) -> tuple[list[Kernel], list[Extra]]:
    where = f"{path}: {where}"
    _fields(rec, where, clock=dict, device=dict, streams=list, blocks=dict, launches=list)
    base = _fields(rec["clock"], f"{where}.clock", base_ns=int)["base_ns"]
    pid = rec["device"].get("pid")
    pid = pid if isinstance(pid, int) and not isinstance(pid, bool) else None
    prio: dict[Any, Any] = {}
    for n, st in enumerate(rec["streams"]):
        _fields(st, f"{where}.streams[{n}]")
        p = st.get("cuda_priority")
        prio[key(st.get("name"))] = p if isinstance(p, int) and not isinstance(p, bool) and abs(p) < 1 << 32 else None
    need = ("launch", "t_entry", "t_exit", "sm_entry", "sm_exit", "status", "max_gap_ns")
    ix, rows = _table(rec["blocks"], f"{where}.blocks", need)
    per: dict[int, list[list[int]]] = defaultdict(list)
    for r in rows:
        per[r[ix["launch"]]].append(r)
    lbl = rec.get("lblocks")
    li: dict[str, int] = {}
    lrows: list[list[int]] = []
    if lbl:
        li, lrows = _table(lbl, f"{where}.lblocks", ("launch", "kernel", "lblock", "block", "sm", "t_start", "t_end",
                                                    "stale"))
    ran: dict[int, int] = defaultdict(int)  # logical blocks run per launch
    for r in lrows:
        ran[r[li["launch"]]] += 1
    seq_stream = {ln.get("seq"): key(ln.get("stream")) for ln in rec["launches"] if isinstance(ln, dict)}
    persistent = {seq_stream.get(s) for s in ran}  # streams of persistent-block kernels
    params = rec.get("params")
    lb = params.get("logical_blocks") if isinstance(params, dict) else None
    kernels = []
    for n, ln in enumerate(rec["launches"]):
        lw = f"{where}.launches[{n}]"
        _fields(ln, lw, seq=int, t_launch=int, grid=int)
        seq = ln["seq"]
        blocks = per.get(seq, [])
        if not blocks:
            raise TraceError(f"{lw}: (seq {seq}) has no block records")
        status = [b[ix["status"]] for b in blocks]
        stream = key(ln.get("stream"))
        meta: dict[str, Any] = {
            "kernel": key(ln.get("kernel")), "stream_id": stream,
            "work": status.count(0), "exited": status.count(1), "killed": status.count(2),
            "blocks_recorded": len(blocks),
            "sm_changed": sum(1 for b in blocks if b[ix["sm_entry"]] != b[ix["sm_exit"]]),
            "max_gap_ns": max(b[ix["max_gap_ns"]] for b in blocks)}
        if stream in persistent and isinstance(lb, int) and not isinstance(lb, bool):
            meta["work"], meta["logical_blocks"] = ran.get(seq, 0), lb
        kname = str(ln.get("kernel"))
        kernels.append(Kernel(
            name=kname.split(":")[0] if ":" in kname else kname,
            stream_key=(pid if pid is not None else -1, str(stream)),
            start=base + min(b[ix["t_entry"]] for b in blocks), end=base + max(b[ix["t_exit"]] for b in blocks),
            corr=seq + 1, pid=pid, launch=base + ln["t_launch"], launch_from="api",
            level=cuda_level(prio.get(stream)), grid_dims=(ln["grid"],), block_dims=(1024,),
            stream_info={"name": stream, "pid": pid, "cuda_priority": prio.get(stream)}, meta=meta, where=lw))
    extras = []
    host = rec.get("host_events", [])
    if not isinstance(host, list):
        raise TraceError(f"{where}.host_events: expected a list, got {short(host)}")
    for n, e in enumerate(host):
        _fields(e, f"{where}.host_events[{n}]", t=int, action=str)
        m = e.get("meta")
        extras.append(Extra(base + e["t"], e["action"], {}, dict(m) if isinstance(m, dict) else {},
                            f"{where}.host_events[{n}]"))
    gaps = rec.get("gaps")
    if gaps:
        gi, grows = _table(gaps, f"{where}.gaps", ("launch", "block", "t", "length_ns"))
        for n, g in enumerate(grows):
            extras.append(Extra(base + g[gi["t"]], "gap", {},
                                {"corr": g[gi["launch"]] + 1, "pid": pid, "block": g[gi["block"]],
                                 "length_ns": g[gi["length_ns"]]}, f"{where}.gaps.rows[{n}]"))
    for n, r in enumerate(lrows):
        extras.append(Extra(base + r[li["t_start"]], "lblock", {},
                            {"corr": r[li["launch"]] + 1, "pid": pid, "kernel": r[li["kernel"]],
                             "lblock": r[li["lblock"]], "block": r[li["block"]], "sm": r[li["sm"]],
                             "t_end": base + r[li["t_end"]], "stale": bool(r[li["stale"]])},
                            f"{where}.lblocks.rows[{n}]"))
    return kernels, extras


def import_record(path: str) -> tuple[TraceHeader, list[Event]]:
    """Import a raw recording (see module doc)."""
    doc = load_json(path)
    if not looks_like_record(doc):
        raise TraceError(f"{path}:1:1: not a gpcheck raw recording (no \"gpcheck_record\": 1)")
    parts = doc["parts"] if isinstance(doc.get("parts"), list) else [doc]
    kernels: list[Kernel] = []
    extras: list[Extra] = []
    for i, p in enumerate(parts):
        k, x = _part(p, path, f"parts[{i}]" if "parts" in doc else "recording")
        kernels += k
        extras += x
    if not parts:
        raise TraceError(f"{path}: parts[0]: missing (an empty list: no recording)")
    first = parts[0] if isinstance(parts[0], dict) else {}
    src: dict[str, Any] = {"format": "record", **file_info(path), "workload": doc.get("workload"),
                           "variant": doc.get("variant"), "device": first.get("device"),
                           "clock": "ns, GPU %globaltimer (launch times moved from the host clock by calibration)",
                           "calibration": [p.get("clock") for p in parts]}
    if len(parts) == 1:
        src["params"] = first.get("params")
        if first.get("counters"):
            src["counters"] = first["counters"]
    else:
        src["params"] = [p.get("params") if isinstance(p, dict) else None for p in parts]
        src["note"] = doc.get("note")
    # every block logs its largest %globaltimer jump (meta.max_gap_ns): per-block timer stamps
    return build_trace(kernels, src, path=path, extras=extras, switch_evidence=True)

"""AMD rocprofv3 `*_kernel_trace.csv` (and rocprofv2 / rocprof v1 kernel CSVs) -> observation trace.

Columns are found by header name, never by position (research/gpu_traces.md 3.2-3.3): names are
compared case-insensitively with `_`, `-` and spaces dropped, so `Start_Timestamp`,
`start-timestamp` and `StartTimestamp` are one column. Recognised:

| field | rocprofv3 (6.4+/7.x) | older rocprofv3 / v2 | rocprof v1 |
|---|---|---|---|
| name | Kernel_Name | Kernel_Name | KernelName |
| start, end (ns) | Start_Timestamp, End_Timestamp | same | BeginNs, EndNs |
| agent | Agent_Id ("Agent 2" or 2) | GPU_ID | gpu-id |
| queue | Queue_Id | Queue_ID | queue-id |
| HIP stream | Stream_Id (absent before 6.4) | - | - |
| correlation | Correlation_Id | Correlation_ID | - (Index) |
| grid (work-items), workgroup | Grid_Size_X/Y/Z, Workgroup_Size_X/Y/Z | Grid_Size, Workgroup_Size | grd, wgr |
| launch (host dispatch) | - | - | DispatchNs |

The in-order unit is (agent, queue, HIP stream): BE kernels on one HIP stream carry the AQL
barrier bit and run one after another. Grid sizes follow HSA (work-items); `grid` in the trace is
work-groups (ceil(grid / workgroup) per dimension), `grid_items` keeps the raw value. rocprof
records no queue priority, so every stream gets level 0; the trace names no model (these are
AMD queues, not CUDA streams) but keeps the same constants so `--model nvidia_streams` still
replays it. Rows whose `Kind` is not KERNEL_DISPATCH are skipped. A `Guid` column (CSV converted
from rocpd) is kept in meta.
"""

from __future__ import annotations

import csv
import re
import zlib
from typing import Any, Iterator

from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import Event, TraceHeader
from gpcheck.traces.importers.common import Kernel, build_trace, file_info, int_value, ns
from gpcheck.traces.importers.jsonload import TextLines

ALIASES: dict[str, tuple[str, ...]] = {
    "name": ("kernelname",),
    "start": ("starttimestamp", "beginns", "start"),
    "end": ("endtimestamp", "endns", "end"),
    "agent": ("agentid", "gpuid"),
    "queue": ("queueid",),
    "stream": ("streamid",),
    "corr": ("correlationid",),
    "dispatch": ("dispatchid",),
    "index": ("index",),
    "pid": ("pid", "processid"),
    "tid": ("threadid", "tid"),
    "kind": ("kind",),
    "launch": ("dispatchns",),
    "guid": ("guid",),
    "grid": ("gridsize", "grd"),
    "wg": ("workgroupsize", "wgr"),
    "grid_x": ("gridsizex",), "grid_y": ("gridsizey",), "grid_z": ("gridsizez",),
    "wg_x": ("workgroupsizex",), "wg_y": ("workgroupsizey",), "wg_z": ("workgroupsizez",),
}
REQUIRED = ("name", "start", "end")


def norm(h: str) -> str:
    return re.sub(r"[\s_\-]", "", h.strip().lower())


def header_map(header: list[str]) -> dict[str, int]:
    """Field -> column index for the recognised columns of a header row."""
    pos = {norm(h): i for i, h in enumerate(header)}
    out = {}
    for field, names in ALIASES.items():
        for n in names:
            if n in pos:
                out[field] = pos[n]
                break
    return out


def looks_like_rocprof(head: bytes) -> bool:
    line = head.split(b"\n", 1)[0].decode("utf-8", "replace")
    cols = {norm(c.strip('"')) for c in line.split(",")}
    return ("kernelname" in cols) and bool(cols & {"starttimestamp", "beginns"})


def _agent(v: str) -> Any:
    m = re.search(r"(?<!\d)(-?\d{1,18})\s*$", v)
    return int(m.group(1)) if m else v


def _num(v: str, where: str) -> int:
    return int_value(v, where)


def _rows(path: str) -> Iterator[tuple[int, list[str]]]:
    """(line, fields) of each CSV row, read a row at a time (bounded memory: csv's field size
    limit caps one row); a decoding, gzip or CSV error is a TraceError at its line."""
    with TextLines(path) as lines:
        reader = csv.reader(lines)
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as e:
                raise TraceError(f"{path}:{reader.line_num}: bad CSV: {e}") from None
            except (UnicodeDecodeError, OSError, EOFError, zlib.error):
                raise lines.located_error() from None
            yield reader.line_num, row


def import_rocprof(path: str) -> tuple[TraceHeader, list[Event]]:
    """Import a rocprof kernel-trace CSV (see module doc), streamed a row at a time."""
    rows = _rows(path)
    try:
        _, header = next(rows)
    except StopIteration:
        raise TraceError(f"{path}:1: empty file (expected a kernel-trace CSV header)") from None
    cols = header_map(header)
    missing = [f for f in REQUIRED if f not in cols]
    if missing:
        want = {f: ALIASES[f][0] for f in missing}
        got = ", ".join(header)
        raise TraceError(f"{path}:1: header lacks the column(s) {', '.join(want.values())} "
                         f"(got: {got if len(got) < 300 else got[:297] + '...'})")
    kernels = []
    n_cols = len(header)
    for line, row in rows:
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        where = f"{path}:{line}"
        if len(row) != n_cols:
            raise TraceError(f"{where}: {len(row)} fields, the header has {n_cols} (truncated or malformed row)")

        def get(field: str) -> str | None:
            i = cols.get(field)
            return row[i].strip() if i is not None else None

        kind = get("kind")
        if kind and kind.upper() != "KERNEL_DISPATCH":
            continue
        start = ns(get("start"), f"{where} column {header[cols['start']]}")
        end = ns(get("end"), f"{where} column {header[cols['end']]}")
        agent = _agent(get("agent") or "0")
        queue = _num(get("queue") or "0", f"{where} column Queue_Id")
        stream = _num(get("stream") or "0", f"{where} column Stream_Id")
        corr_s = get("corr") or get("dispatch") or get("index")
        corr = _num(corr_s, f"{where} correlation column") if corr_s else None
        pid_s = get("pid")
        pid = _num(pid_s, f"{where} column pid") if pid_s else None
        items = [get(f) for f in ("grid_x", "grid_y", "grid_z")]
        wgs = [get(f) for f in ("wg_x", "wg_y", "wg_z")]
        if all(items) and all(wgs):
            gi = tuple(_num(x or "0", f"{where} grid size") for x in items)
            wg = tuple(_num(x or "0", f"{where} workgroup size") for x in wgs)
        elif get("grid") and get("wg"):
            gi = (_num(get("grid") or "0", f"{where} grid size"),)
            wg = (_num(get("wg") or "0", f"{where} workgroup size"),)
        else:
            gi = wg = ()
        grid = tuple(-(-g // max(w, 1)) for g, w in zip(gi, wg)) if gi else None
        launch_s = get("launch")
        launch = ns(launch_s, f"{where} column DispatchNs") if launch_s else None
        meta: dict[str, Any] = {"agent": agent, "queue_id": queue, "line": line}
        if "stream" in cols:
            meta["stream_id"] = stream
        if gi:
            meta["grid_items"] = list(gi)
        for f in ("dispatch", "tid", "guid"):
            v = get(f)
            if v:
                meta[f] = v
        info = {"agent": agent, "queue_id": queue}
        if "stream" in cols:
            info["stream_id"] = stream
        kernels.append(Kernel(name=get("name") or "?", stream_key=(str(agent), queue, stream), start=start, end=end,
                              corr=corr, pid=pid, launch=launch, launch_from="api" if launch is not None else "kernel",
                              grid_dims=grid, block_dims=wg or None, stream_info=info, meta=meta, where=where))
    src = {"format": "rocprof", **file_info(path), "clock": "ns, ROCprofiler timestamps",
           "columns": header, "has_stream_id": "stream" in cols}
    return build_trace(kernels, src, path=path, model=None)

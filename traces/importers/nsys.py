"""Nsight Systems SQLite export (`nsys export --type sqlite`) -> observation trace.

Reads (research/gpu_traces.md 1.2-1.6):
- `CUPTI_ACTIVITY_KIND_KERNEL` (start, end, streamId, correlationId required; deviceId,
  contextId, globalPid, names, grid/block dims when present); kernel names are ids into
  `StringIds(id, value)` (shortName, else demangledName, else mangledName);
- launch calls from `CUPTI_ACTIVITY_KIND_RUNTIME` (else `_DRIVER`) joined by correlationId within
  the same process (correlation ids are unique per process only; PID = (globalTid >> 24) & 0xFFFFFF);
- stream priorities from `TARGET_INFO_CUDA_STREAM(processId, contextId, streamId, priority)`,
  sign-converted (CUPTI stores them as uint32);
- `GPU_CONTEXT_SWITCH_EVENTS` when present, as `ctx_switch` events (the only nsys table that shows
  time-slice preemption between processes);
- `META_DATA_EXPORT` for the schema version, recorded in the header but never relied on: the
  schema is checked by columns.
"""

from __future__ import annotations

from typing import Any

from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import Event, TraceHeader
from gpcheck.traces.importers.common import Extra, Kernel, build_trace, cuda_level, file_info, int_value, key, signed32
from gpcheck.traces.importers.sqlite import Database

KERNEL_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"
NEEDED = ("start", "end", "streamId", "correlationId")
OPTIONAL = ("deviceId", "contextId", "globalPid", "shortName", "demangledName", "mangledName",
            "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "launchType", "gridId")


def pid_of(global_id: Any, where: str = "globalPid") -> int | None:
    """The process id packed into an nsys globalPid/globalTid."""
    if global_id is None:
        return None
    return (int_value(global_id, where) >> 24) & 0xFFFFFF


_int = int_value


def _strings(db: Database) -> dict[int, str]:
    if not db.has("StringIds"):
        return {}
    db.require("StringIds", ("id", "value"))
    return {_int(i, f"{db.path}: table StringIds row {r} column id"): str(v)
            for r, i, v in db.rows("StringIds", ("id", "value"))}


def _launches(db: Database, strings: dict[int, str]) -> dict[tuple[int | None, int], tuple[int, str]]:
    """(pid, correlationId) -> (API call start, API name), runtime calls preferred over driver ones."""
    out: dict[tuple[int | None, int], tuple[int, str]] = {}
    for table in ("CUPTI_ACTIVITY_KIND_DRIVER", "CUPTI_ACTIVITY_KIND_RUNTIME"):  # runtime overrides
        if not db.has(table):
            continue
        cols = db.require(table, ("start", "correlationId"))
        sel = ["start", "correlationId"] + [c for c in ("globalTid", "nameId") if c in cols]
        for row in db.rows(table, sel):
            rowid, vals = row[0], dict(zip(sel, row[1:]))
            where = f"{db.path}: table {table} row {rowid}"
            corr = _int(vals["correlationId"], f"{where} column correlationId")
            name = strings.get(_int(vals["nameId"], f"{where} column nameId"), "") \
                if vals.get("nameId") is not None else ""
            if name and "aunch" not in name:  # only launch calls (cudaLaunchKernel, cuLaunchKernelEx, ...)
                continue
            pid = pid_of(vals.get("globalTid"), f"{where} column globalTid")
            out[(pid, corr)] = (_int(vals["start"], f"{where} column start"), name)
    return out


def _priorities(db: Database) -> dict[tuple[int | None, int | None, int], int]:
    """(pid, contextId, streamId) -> signed CUDA priority."""
    table = "TARGET_INFO_CUDA_STREAM"
    if not db.has(table):
        return {}
    cols = db.require(table, ("streamId", "priority"))
    sel = ["streamId", "priority"] + [c for c in ("processId", "contextId") if c in cols]
    out = {}
    for row in db.rows(table, sel):
        vals = dict(zip(sel, row[1:]))
        where = f"{db.path}: table {table} row {row[0]}"
        stream = _int(vals["streamId"], f"{where} column streamId")
        out[(key(vals.get("processId")), key(vals.get("contextId")), stream)] = \
            signed32(_int(vals["priority"], f"{where} column priority"))
    return out


def _ctx_switches(db: Database) -> list[Extra]:
    table = "GPU_CONTEXT_SWITCH_EVENTS"
    if not db.has(table):
        return []
    cols = db.require(table, ("timestamp",))
    sel = ["timestamp"] + [c for c in ("tag", "contextId", "globalPid", "gpuId", "vmId", "seqNo") if c in cols]
    tags: dict[int, str] = {}
    if db.has("ENUM_GPU_CTX_SWITCH") and {"id", "name"} <= set(db.columns("ENUM_GPU_CTX_SWITCH")):
        tags = {_int(k, f"{db.path}: table ENUM_GPU_CTX_SWITCH column id"): str(v)
                for k, v in db.scalar_map("ENUM_GPU_CTX_SWITCH", "id", "name").items()}
    out = []
    for row in db.rows(table, sel):
        vals = dict(zip(sel, row[1:]))
        t = _int(vals["timestamp"], f"{db.path}: table {table} row {row[0]} column timestamp")
        meta: dict[str, Any] = {k: vals[k] for k in sel[1:] if vals.get(k) is not None}
        where = f"{db.path}: table {table} row {row[0]}"
        if "globalPid" in meta:
            meta["pid"] = pid_of(meta.pop("globalPid"), f"{where} column globalPid")
        if "tag" in meta:
            meta["tag_name"] = tags.get(_int(meta["tag"], f"{where} column tag"), str(meta["tag"]))
        out.append(Extra(t, "ctx_switch", {}, meta))
    return out


def import_nsys(path: str) -> tuple[TraceHeader, list[Event]]:
    """Import an nsys SQLite export; raises TraceError naming the file and table on bad input."""
    with Database(path) as db:
        if not db.has(KERNEL_TABLE):
            raise TraceError(f"{path}: no table {KERNEL_TABLE}: not an nsys export, or no kernels were traced "
                             f"(nsys creates tables only when there is data)")
        cols = db.require(KERNEL_TABLE, NEEDED)
        sel = list(NEEDED) + [c for c in OPTIONAL if c in cols]
        schema = None
        if db.has("META_DATA_EXPORT") and {"name", "value"} <= set(db.columns("META_DATA_EXPORT")):
            schema = db.scalar_map("META_DATA_EXPORT", "name", "value").get("EXPORT_SCHEMA_VERSION")
        strings = _strings(db)
        launches = _launches(db, strings)
        prios = _priorities(db)
        kernels = []
        for row in db.rows(KERNEL_TABLE, sel):
            rowid, v = row[0], dict(zip(sel, row[1:]))
            where = f"{path}: table {KERNEL_TABLE} row {rowid}"
            start = _int(v["start"], f"{where} column start")
            end = _int(v["end"], f"{where} column end")
            corr = _int(v["correlationId"], f"{where} column correlationId")
            stream = _int(v["streamId"], f"{where} column streamId")
            pid = pid_of(v.get("globalPid"), f"{where} column globalPid")
            ctx, dev = key(v.get("contextId")), key(v.get("deviceId"))
            name = "?"
            for c in ("shortName", "demangledName", "mangledName"):
                if v.get(c) is not None:
                    name = strings.get(int(v[c]), str(v[c])) if isinstance(v[c], int) else str(v[c])
                    break
            cuda_p = prios.get((pid, ctx, stream))
            if cuda_p is None:  # exports without processId/contextId in the stream table
                cuda_p = prios.get((None, None, stream))
            launch = launches.get((pid, corr)) or launches.get((None, corr))
            dims = tuple(_int(v[c], f"{where} column {c}") for c in ("gridX", "gridY", "gridZ") if c in v)
            bdims = tuple(_int(v[c], f"{where} column {c}") for c in ("blockX", "blockY", "blockZ") if c in v)
            info = {"device": dev, "context": ctx, "stream_id": stream, "pid": pid, "cuda_priority": cuda_p}
            meta: dict[str, Any] = {"stream_id": stream, "device": dev, "context": ctx}
            if cuda_p is not None:
                meta["cuda_priority"] = cuda_p
            if launch is not None and launch[1]:
                meta["api"] = launch[1]
            kernels.append(Kernel(
                name=name, stream_key=(pid if pid is not None else -1, dev if dev is not None else -1,
                                       ctx if ctx is not None else -1, stream),
                start=start, end=end, corr=corr, pid=pid,
                launch=launch[0] if launch else None, launch_from="api" if launch else "kernel",
                level=cuda_level(cuda_p), grid_dims=dims or None, block_dims=bdims or None,
                stream_info={k: x for k, x in info.items() if x is not None}, meta=meta, where=where))
        extras = _ctx_switches(db)
    src = {"format": "nsys", **file_info(path), "schema_version": schema,
           "clock": "ns, nsys session timeline (CUPTI GPU timestamps)",
           "tables": sorted(t for t in (KERNEL_TABLE, "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER",
                                        "TARGET_INFO_CUDA_STREAM", "GPU_CONTEXT_SWITCH_EVENTS", "StringIds")
                            if t in db.tables)}
    return build_trace(kernels, src, path=path, extras=extras, priorities_known=bool(prios) or None,
                       switch_evidence="GPU_CONTEXT_SWITCH_EVENTS" in src["tables"])

"""rocprofv3 rocpd SQLite database (`rocprofv3 ... --output-format rocpd`, `*.db`) -> observation trace.

Schema (ROCm rocprofiler-sdk `rocpd` SQL, research/gpu_traces.md 3.2): each profiled process
writes tables with a UUID suffix, `rocpd_kernel_dispatch<uuid>(pid, tid, agent_id, kernel_id,
dispatch_id, queue_id, stream_id, start, end, workgroup_size_x/y/z, grid_size_x/y/z, event_id,
...)`, kernel names in `rocpd_info_kernel_symbol<uuid>(id, kernel_name, display_name)`, and
unsuffixed views over them. The views decompress JSON columns with a function (`lz4_decompress`)
that plain SQLite lacks, so we read the suffixed tables directly, one suffix set at a time
(falling back to an unsuffixed *table* where a file has one), and check their columns.
Correlation ids come from `rocpd_event<uuid>.correlation_id` via `event_id` (else the dispatch
id); launch times from API regions (`rocpd_region<uuid>`, name containing "Launch") with the
same correlation id. Agents are shown by `absolute_index` from `rocpd_info_agent<uuid>`.
"""

from __future__ import annotations

from typing import Any

from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import Event, TraceHeader
from gpcheck.traces.importers.common import Kernel, build_trace, file_info, int_value, key
from gpcheck.traces.importers.sqlite import Database

DISPATCH = "rocpd_kernel_dispatch"
NEEDED = ("start", "end", "queue_id", "agent_id")
OPTIONAL = ("pid", "tid", "stream_id", "kernel_id", "dispatch_id", "event_id", "guid",
            "workgroup_size_x", "workgroup_size_y", "workgroup_size_z", "grid_size_x", "grid_size_y", "grid_size_z")


def suffixes(db: Database) -> list[str]:
    """Suffixes s such that DISPATCH + s is a real table ('' for an unsuffixed table)."""
    return sorted(t[len(DISPATCH):] for t in db.tables if t.startswith(DISPATCH) and db.kind(t) == "table")


def looks_like_rocpd(tables: set[str]) -> bool:
    return any(t.startswith(DISPATCH) for t in tables)


def _map(db: Database, table: str, key_col: str, cols: tuple[str, ...]) -> dict[Any, dict[str, Any]]:
    if not db.has(table):
        return {}
    have = db.columns(table)
    if key_col not in have:
        return {}
    sel = [key_col] + [c for c in cols if c in have]
    return {key(r[1]): dict(zip(sel[1:], r[2:])) for r in db.rows(table, sel)}


_int = int_value


def import_rocpd(path: str) -> tuple[TraceHeader, list[Event]]:
    """Import a rocpd database (see module doc)."""
    kernels: list[Kernel] = []
    with Database(path) as db:
        sufs = suffixes(db)
        if not sufs:
            if db.has(DISPATCH):
                raise TraceError(f"{path}: {DISPATCH} is a view over tables this file lacks")
            raise TraceError(f"{path}: no table {DISPATCH}*: not a rocpd database, or no kernels were traced")
        for suf in sufs:
            table = DISPATCH + suf
            cols = db.require(table, NEEDED)
            sel = list(NEEDED) + [c for c in OPTIONAL if c in cols]
            symbols = _map(db, "rocpd_info_kernel_symbol" + suf, "id", ("display_name", "kernel_name"))
            agents = _map(db, "rocpd_info_agent" + suf, "id", ("absolute_index", "type", "name"))
            procs = _map(db, "rocpd_info_process" + suf, "id", ("pid",))
            events = _map(db, "rocpd_event" + suf, "id", ("correlation_id",))
            strings = {k: v.get("string") for k, v in _map(db, "rocpd_string" + suf, "id", ("string",)).items()}
            launches: dict[int, int] = {}
            for rid, r in _map(db, "rocpd_region" + suf, "id", ("start", "event_id", "name_id")).items():
                name = str(strings.get(key(r.get("name_id")), ""))
                ev = events.get(key(r.get("event_id")), {})
                corr = ev.get("correlation_id")
                where = f"{path}: table rocpd_region{suf} id {rid}"
                if corr is not None and "aunch" in name and r.get("start") is not None:
                    launches.setdefault(_int(corr, f"{where} (its event's correlation_id)"),
                                        _int(r["start"], f"{where} column start"))
            for row in db.rows(table, sel):
                v = dict(zip(sel, row[1:]))
                where = f"{path}: table {table} row {row[0]}"
                start = _int(v["start"], f"{where} column start")
                end = _int(v["end"], f"{where} column end")
                queue = _int(v["queue_id"], f"{where} column queue_id")
                agent_id = _int(v["agent_id"], f"{where} column agent_id")
                agent = agents.get(agent_id, {}).get("absolute_index", agent_id)
                stream = _int(v["stream_id"], f"{where} column stream_id") if v.get("stream_id") is not None else 0
                sym = symbols.get(key(v.get("kernel_id")), {})
                name = sym.get("display_name") or sym.get("kernel_name") or f"kernel_{v.get('kernel_id')}"
                ev = events.get(key(v.get("event_id")), {})
                corr = ev.get("correlation_id")
                if corr is None:
                    corr = v.get("dispatch_id")
                if corr is not None:
                    corr = _int(corr, f"{where} (correlation id of its event, else dispatch_id)")
                pid = procs.get(key(v.get("pid")), {}).get("pid", v.get("pid"))
                gi = tuple(_int(v[c], f"{where} column {c}") for c in ("grid_size_x", "grid_size_y", "grid_size_z")
                           if v.get(c) is not None)
                wg = tuple(_int(v[c], f"{where} column {c}") for c in ("workgroup_size_x", "workgroup_size_y",
                                                                       "workgroup_size_z") if v.get(c) is not None)
                grid = tuple(-(-g // max(w, 1)) for g, w in zip(gi, wg)) if gi and len(gi) == len(wg) else None
                launch = launches.get(corr) if corr is not None else None
                meta: dict[str, Any] = {"agent": agent, "queue_id": queue, "stream_id": stream}
                if gi:
                    meta["grid_items"] = list(gi)
                if v.get("dispatch_id") is not None:
                    meta["dispatch"] = v["dispatch_id"]
                kernels.append(Kernel(
                    name=str(name), stream_key=(suf, int(pid) if isinstance(pid, int) else -1, agent_id, queue, stream),
                    start=start, end=end, corr=corr,
                    pid=pid if isinstance(pid, int) else None, launch=launch,
                    launch_from="api" if launch is not None else "kernel", grid_dims=grid, block_dims=wg or None,
                    stream_info={"agent": agent, "queue_id": queue, "stream_id": stream}, meta=meta, where=where))
    src = {"format": "rocpd", **file_info(path), "clock": "ns, ROCprofiler timestamps", "table_sets": len(sufs)}
    return build_trace(kernels, src, path=path, model=None)

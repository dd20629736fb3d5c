"""Plain Chrome Trace Event JSON (chrome://tracing, Perfetto UI, nsys2json, rocprof v1
`results.json`, hand-made) -> observation trace.

The file is a bare array of events or `{"traceEvents": [...], ...}` (research/gpu_traces.md 2).
Which slices are kernels: those whose `cat` mentions "kernel" when any does, else every duration
slice (`X`, or `B`/`E` pairs matched per pid/tid). One `(pid, tid)` track is one stream. `ts` and
`dur` are microseconds (fractional), converted to integer ns; `displayTimeUnit` only affects
display and is ignored. Optional per-slice `args`: `correlation` (or `correlation id`, `corr`)
as the correlation id, `stream`, `grid` ([x, y, z] or a number), `priority` (taken as a CUDA
priority: lower = more urgent). Flow events (`ph` `s`/`f`) whose `id` equals a slice's
correlation id give its launch time (the `s` point). A `B` never closed gives a kernel with a
start and no end (an observation trace shows it as an incomplete launch).
"""

from __future__ import annotations

from typing import Any

from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import Event, TraceHeader
from gpcheck.traces.importers.common import Kernel, build_trace, cuda_level, file_info, key, signed32, us_to_ns
from gpcheck.traces.importers.jsonload import load_json


def trace_events(doc: Any, path: str) -> tuple[list[Any], dict[str, Any]]:
    """(events, top-level metadata) of a Chrome trace document."""
    if isinstance(doc, list):
        return doc, {}
    if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        return doc["traceEvents"], {k: v for k, v in doc.items() if k != "traceEvents"}
    raise TraceError(f"{path}:1:1: not a Chrome trace: expected a JSON array of events or an object with "
                     f"a \"traceEvents\" array")


def _where(path: str, i: int) -> str:
    return f"{path}: traceEvents[{i}]"


def _dims(v: Any) -> tuple[int, ...] | None:
    if isinstance(v, list) and all(isinstance(x, int) for x in v) and v:
        return tuple(v)
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,)
    return None


def _corr(args: dict[str, Any]) -> int | None:
    for k in ("correlation", "correlation id", "correlationId", "corr"):
        v = args.get(k)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def names(events: list[Any]) -> dict[tuple[Any, Any], str]:
    """(pid, tid) -> thread name, (pid, None) -> process name, from `M` events."""
    out: dict[tuple[Any, Any], str] = {}
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "M" and isinstance(e.get("args"), dict):
            if e.get("name") == "thread_name":
                out[(key(e.get("pid")), key(e.get("tid")))] = str(e["args"].get("name"))
            elif e.get("name") == "process_name":
                out[(key(e.get("pid")), None)] = str(e["args"].get("name"))
    return out


def slices(events: list[Any], path: str) -> list[tuple[int, dict[str, Any], int, int | None]]:
    """Every duration slice as (index, event, start ns, end ns or None if never closed)."""
    out: list[tuple[int, dict[str, Any], int, int | None]] = []
    open_: dict[tuple[Any, Any], list[tuple[int, dict[str, Any], int]]] = {}
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            raise TraceError(f"{_where(path, i)}: an event must be an object, got {type(e).__name__}")
        ph = e.get("ph")
        if ph not in ("X", "B", "E"):
            continue
        if "ts" not in e:
            raise TraceError(f"{_where(path, i)}: a \"{ph}\" event needs \"ts\"")
        ts = us_to_ns(e["ts"], f"{_where(path, i)} field ts")
        track = (key(e.get("pid")), key(e.get("tid")))
        if ph == "X":
            if "dur" not in e:
                raise TraceError(f"{_where(path, i)}: an \"X\" event needs \"dur\"")
            out.append((i, e, ts, ts + us_to_ns(e["dur"], f"{_where(path, i)} field dur")))
        elif ph == "B":
            open_.setdefault(track, []).append((i, e, ts))
        else:
            stack = open_.get(track)
            if not stack:
                raise TraceError(f"{_where(path, i)}: \"E\" event with no open \"B\" on pid {track[0]} tid {track[1]}")
            j, b, t0 = stack.pop()
            merged = dict(b)
            if isinstance(e.get("args"), dict):
                merged["args"] = {**(b.get("args") or {}), **e["args"]}
            out.append((j, merged, t0, ts))
    for stack in open_.values():
        for j, b, t0 in stack:
            out.append((j, b, t0, None))
    out.sort(key=lambda s: s[0])
    return out


def flow_starts(events: list[Any], path: str) -> dict[Any, int]:
    """Flow id -> time of its `s` point (launch side of a launch->kernel arrow)."""
    out: dict[Any, int] = {}
    for i, e in enumerate(events):
        if isinstance(e, dict) and e.get("ph") == "s" and "id" in e and "ts" in e:
            out.setdefault(key(e["id"]), us_to_ns(e["ts"], f"{_where(path, i)} field ts"))
    return out


def import_chrome(path: str) -> tuple[TraceHeader, list[Event]]:
    """Import a plain Chrome trace (see module doc)."""
    events, top = trace_events(load_json(path), path)
    other = top.get("otherData")
    if isinstance(other, dict) and str(other.get("generator", "")).startswith("gpcheck"):
        raise TraceError(f"{path}:1:1: this is gpcheck's own Perfetto export of a model behaviour (its slices "
                         "are actions and state tracks, not kernels): replay or check the gpcheck trace it was "
                         "exported from instead")
    sl = slices(events, path)
    if not sl:
        raise TraceError(f"{path}:1:1: no duration slices (\"X\" events, or \"B\"/\"E\" pairs) in this Chrome "
                         "trace: there is no kernel to import")
    kernel_cat = [s for s in sl if "kernel" in str(s[1].get("cat", "")).lower()]
    chosen = kernel_cat or sl
    tnames = names(events)
    flows = flow_starts(events, path)
    kernels = []
    for i, e, start, end in chosen:
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        pid, tid = key(e.get("pid")), key(e.get("tid"))
        corr = _corr(args)
        prio = args.get("priority")
        ok = isinstance(prio, int) and not isinstance(prio, bool) and abs(prio) < 1 << 33
        cuda_p = signed32(prio) if ok else None
        launch = flows.get(corr) if corr is not None else None
        info = {"pid": pid, "tid": tid}
        if (pid, tid) in tnames:
            info["track"] = tnames[(pid, tid)].strip()
        if cuda_p is not None:
            info["cuda_priority"] = cuda_p
        k = Kernel(name=str(e.get("name", "?")), stream_key=(str(pid), str(tid)), start=start,
                   end=end, corr=corr,
                   launch=launch, launch_from="api" if launch is not None else "kernel",
                   level=cuda_level(cuda_p), grid_dims=_dims(args.get("grid")), block_dims=_dims(args.get("block")),
                   stream_info=info, meta={"track": f"{pid}/{tid}", "event_index": i}, where=_where(path, i))
        if end is None:
            k.meta["unfinished"] = True
        kernels.append(k)
    src = {"format": "chrome", **file_info(path), "clock": "ns = Chrome ts (us) x 1000",
           "selected": "slices with 'kernel' in cat" if kernel_cat else "every duration slice",
           "display_time_unit": top.get("displayTimeUnit")}
    return build_trace(kernels, src, path=path)

"""PyTorch profiler / Kineto Chrome-trace JSON (`prof.export_chrome_trace`, `*.pt.trace.json[.gz]`)
-> observation trace.

Structure (research/gpu_traces.md 2.4, and our own H200 capture in traces/corpus/real/raw/):
kernels are `ph: "X"`, `cat: "kernel"` slices with `args.stream`, `args.context`, `args.device`,
`args.correlation`, `args.grid`, `args.block`, `args.queued`; `ts`/`dur` are microseconds
relative to the top-level `baseTimeNanoseconds` (absolute ns = base + ts * 1000). Launch calls
are `cuda_runtime`/`cuda_driver` slices on the host (`cudaLaunchKernel`, `cuLaunchKernel`, ...)
with the same `args.correlation`; their start is the launch time, else a nonzero `queued` is.
Kineto records no stream priority: every stream gets level 0 and the header's `source.missing`
says so (a kernel slice that does carry an integer `args.priority` is read in CUDA's convention) (`gpcheck import --stream-priority` supplies them: the stream id is `args.stream`, CUPTI's
stream id, not PyTorch's `Stream.stream_id`). With `include_copies`, `gpu_memcpy`/`gpu_memset` slices are streams'
work too; by default only kernels are imported.
"""

from __future__ import annotations

from typing import Any

from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import Event, TraceHeader
from gpcheck.traces.importers.chrome import _dims, names, slices, trace_events
from gpcheck.traces.importers.common import MAX_NS, Kernel, build_trace, cuda_level, file_info, key, signed32
from gpcheck.traces.importers.jsonload import load_json

LAUNCH_CATS = ("cuda_runtime", "cuda_driver")


def looks_like_kineto(doc: Any) -> bool:
    """A Chrome trace written by Kineto: its top-level keys or kernel slices say so."""
    if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        if any(k in doc for k in ("schemaVersion", "deviceProperties", "baseTimeNanoseconds", "cupti_version")):
            return True
        evs = doc["traceEvents"]
    elif isinstance(doc, list):
        evs = doc
    else:
        return False
    for e in evs[:20000]:
        if isinstance(e, dict) and e.get("cat") == "kernel" and isinstance(e.get("args"), dict) \
                and "stream" in e["args"] and "correlation" in e["args"]:
            return True
    return False


def import_kineto(path: str, include_copies: bool = False) -> tuple[TraceHeader, list[Event]]:
    """Import a Kineto trace (see module doc)."""
    doc = load_json(path)
    events, top = trace_events(doc, path)
    base = top.get("baseTimeNanoseconds", 0)
    if not isinstance(base, int) or isinstance(base, bool) or not 0 <= base <= MAX_NS:
        raise TraceError(f"{path}: top-level baseTimeNanoseconds must be an integer in 0..2^62, got {str(base)[:40]}")
    cats = ("kernel", "gpu_memcpy", "gpu_memset") if include_copies else ("kernel",)
    all_slices = slices(events, path)
    launches: dict[int, tuple[int, str, Any]] = {}
    for i, e, start, _ in all_slices:
        if e.get("cat") in LAUNCH_CATS and isinstance(e.get("args"), dict):
            corr = e["args"].get("correlation")
            name = str(e.get("name", ""))
            if isinstance(corr, int) and not isinstance(corr, bool) and "aunch" in name:
                launches.setdefault(corr, (start + base, name, e.get("pid")))
    tnames = names(events)
    kernels = []
    for i, e, start, end in all_slices:
        if e.get("cat") not in cats:
            continue
        args = e.get("args")
        if not isinstance(args, dict):
            raise TraceError(f"{path}: traceEvents[{i}]: a kernel slice needs \"args\"")
        corr = args.get("correlation")
        if not isinstance(corr, int) or isinstance(corr, bool):
            raise TraceError(f"{path}: traceEvents[{i}]: kernel {e.get('name')!r} has no integer args.correlation")
        stream = key(args.get("stream", e.get("tid")))
        dev = key(args.get("device", e.get("pid")))
        ctx = key(args.get("context"))
        launch = launches.get(corr)
        queued = args.get("queued")
        t_launch: int | None = None
        how = "kernel"
        if launch is not None:
            t_launch, how = launch[0], "api"
        elif isinstance(queued, int) and not isinstance(queued, bool) and 0 < queued <= MAX_NS:
            t_launch, how = queued, "queued"  # CUPTI latency timestamps: absolute ns
        prio = args.get("priority")
        cuda_p = signed32(prio) if isinstance(prio, int) and not isinstance(prio, bool) and abs(prio) < 1 << 33 else None
        meta: dict[str, Any] = {"stream_id": stream, "device": dev, "context": ctx, "event_index": i}
        if cuda_p is not None:
            meta["cuda_priority"] = cuda_p
        if launch is not None:
            meta["api"] = launch[1]
        if e.get("cat") != "kernel":
            meta["kind"] = e.get("cat")
        info = {"device": dev, "context": ctx, "stream_id": stream, "cuda_priority": cuda_p}
        if (key(e.get("pid")), key(e.get("tid"))) in tnames:
            info["track"] = tnames[(key(e.get("pid")), key(e.get("tid")))].strip()
        kernels.append(Kernel(
            name=str(e.get("name", "?")), stream_key=(str(dev), str(ctx), str(stream)), start=start + base,
            end=None if end is None else end + base, corr=corr,
            pid=launch[2] if launch is not None and isinstance(launch[2], int) else None,
            launch=t_launch, launch_from=how, level=cuda_level(cuda_p), grid_dims=_dims(args.get("grid")),
            block_dims=_dims(args.get("block")), stream_info={k: v for k, v in info.items() if v is not None},
            meta=meta, where=f"{path}: traceEvents[{i}]"))
    device = top.get("deviceProperties")
    src = {"format": "kineto", **file_info(path),
           "clock": "ns = baseTimeNanoseconds + ts (us) x 1000 (CUPTI GPU timestamps)",
           "base_time_ns": base, "schema_version": top.get("schemaVersion"),
           "cupti_version": top.get("cupti_version"), "cuda_driver_version": top.get("cuda_driver_version"),
           "devices": [d.get("name") for d in device if isinstance(d, dict)] if isinstance(device, list) else None,
           "launches_matched": sum(1 for k in kernels if k.launch_from == "api")}
    return build_trace(kernels, src, path=path)

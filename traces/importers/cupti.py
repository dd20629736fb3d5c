"""cupti-python activity records saved as JSON -> observation trace.

Input: a JSON array (or `{"records": [...]}`) of objects, one per CUPTI activity record, with a
`kind` naming the record type and CUPTI's snake_case field names, as cupti-python exposes them
(research/gpu_traces.md 4.1; research/gpu_trace_probes/cupti_probe.py writes exactly this):

- kernel (`kind`: "kernel", "CONCURRENT_KERNEL" or "KERNEL"): `name, start, end, stream_id,
  context_id, device_id, correlation_id`, grid as `grid: [x, y, z]` or `grid_x/_y/_z` (block
  likewise), optional `queued`/`submitted` (latency timestamps) and `priority` (CUDA 13.1's
  kernel-level launch priority; a non-integer such as "n/a" means absent);
- stream ("stream", "STREAM"): `stream_id, context_id, priority` (uint32: sign-converted);
- launch calls ("driver"/"runtime", "DRIVER"/"RUNTIME"): `name, start, correlation_id`.

Launch time: the API call with the kernel's correlation id, else `queued` when nonzero.
"""

from __future__ import annotations

from typing import Any

from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import Event, TraceHeader
from gpcheck.traces.importers.common import MAX_NS, Kernel, build_trace, cuda_level, file_info, key, ns, short, signed32
from gpcheck.traces.importers.jsonload import load_json

KERNEL_KINDS = {"kernel", "concurrent_kernel"}
STREAM_KINDS = {"stream"}
API_KINDS = {"driver", "runtime"}


def records_of(doc: Any, path: str) -> list[Any]:
    if isinstance(doc, dict) and isinstance(doc.get("records"), list):
        doc = doc["records"]
    if not isinstance(doc, list):
        raise TraceError(f"{path}:1:1: not cupti records: expected a JSON array of record objects "
                         f"(or {{\"records\": [...]}})")
    return doc


def looks_like_cupti(doc: Any) -> bool:
    try:
        recs = records_of(doc, "")
    except TraceError:
        return False
    kinds = {str(r.get("kind", "")).lower()[:40] for r in recs[:1000] if isinstance(r, dict)}
    return bool(kinds & KERNEL_KINDS) and all(isinstance(r, dict) and "ph" not in r for r in recs[:1000])


def _int(r: dict[str, Any], key: str, where: str, required: bool = True) -> int | None:
    v = r.get(key)
    if v is None:
        if required:
            raise TraceError(f"{where}: missing field {key!r}")
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not -MAX_NS <= v <= MAX_NS:
        if required:
            raise TraceError(f"{where}: field {key!r} must be an integer within +-2^62, got {short(v)}")
        return None
    return v


def _dims(r: dict[str, Any], key: str) -> tuple[int, ...] | None:
    v = r.get(key)
    if isinstance(v, list) and v and all(isinstance(x, int) for x in v):
        return tuple(v)
    parts = [r.get(f"{key}_{c}") for c in "xyz"]
    if all(isinstance(x, int) for x in parts):
        return tuple(parts)  # type: ignore[arg-type]
    return None


def import_cupti(path: str) -> tuple[TraceHeader, list[Event]]:
    """Import cupti-python records (see module doc)."""
    recs = records_of(load_json(path), path)
    prios: dict[tuple[Any, int], int] = {}
    apis: dict[int, tuple[int, str]] = {}
    for i, r in enumerate(recs):
        where = f"{path}: record {i}"
        if not isinstance(r, dict):
            raise TraceError(f"{where}: a record must be an object, got {type(r).__name__}")
        kind = str(r.get("kind", "")).lower()
        if kind in STREAM_KINDS:
            sid = _int(r, "stream_id", where)
            p = _int(r, "priority", where, required=False)
            if p is not None and sid is not None:
                prios[(key(r.get("context_id")), sid)] = signed32(p)
        elif kind in API_KINDS:
            corr = _int(r, "correlation_id", where)
            name = str(r.get("name", ""))
            if corr is not None and "aunch" in name:
                apis.setdefault(corr, (ns(r.get("start"), f"{where} field start"), name))
    kernels = []
    for i, r in enumerate(recs):
        if str(r.get("kind", "")).lower() not in KERNEL_KINDS:
            continue
        where = f"{path}: record {i}"
        start = ns(r.get("start"), f"{where} field start")
        end = ns(r.get("end"), f"{where} field end")
        sid = _int(r, "stream_id", where)
        corr = _int(r, "correlation_id", where)
        ctx, dev = key(r.get("context_id")), key(r.get("device_id"))
        assert sid is not None and corr is not None
        kp = _int(r, "priority", where, required=False)  # CUDA 13.1+: per-kernel launch priority
        cuda_p = signed32(kp) if kp is not None else prios.get((ctx, sid))
        api = apis.get(corr)
        queued = _int(r, "queued", where, required=False)
        submitted = _int(r, "submitted", where, required=False)
        launch, how = (api[0], "api") if api else ((queued, "queued") if queued else (None, "kernel"))
        meta: dict[str, Any] = {"stream_id": sid, "device": dev, "context": ctx}
        if cuda_p is not None:
            meta["cuda_priority"] = cuda_p
        if queued:
            meta["queued"] = queued
        if submitted:
            meta["submitted"] = submitted
        if api:
            meta["api"] = api[1]
        info = {"device": dev, "context": ctx, "stream_id": sid, "cuda_priority": cuda_p}
        kernels.append(Kernel(
            name=str(r.get("name", "?")), stream_key=(dev if isinstance(dev, int) else -1,
                                                     ctx if isinstance(ctx, int) else -1, sid),
            start=start, end=end, corr=corr, launch=launch, launch_from=how, level=cuda_level(cuda_p),
            grid_dims=_dims(r, "grid"), block_dims=_dims(r, "block"),
            stream_info={k: v for k, v in info.items() if v is not None}, meta=meta, where=where))
    src = {"format": "cupti", **file_info(path), "clock": "ns, CUPTI timestamps",
           "stream_records": len(prios), "launch_records": len(apis)}
    return build_trace(kernels, src, path=path)

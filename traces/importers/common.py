"""What every importer shares: the normalised kernel record, and the one function that turns a
list of them into a gpcheck observation trace (header + ordered events).

NOTE(observation-events): every importer emits, per kernel launch, three events

    {"action": "launch", "args": {"stream": S, "priority": P}, "t": ..., "meta": {...}}
    {"action": "start",  "args": {"stream": S, "priority": P}, "t": ..., "meta": {...}}
    {"action": "end",    "args": {"stream": S, "priority": P}, "t": ..., "meta": {...}}

- `args` hold only what the bundled observation model `nvidia_streams` has as action parameters
  (docs/trace-format.md: replay matches args against parameters; a left-out one matches any
  value). `stream` is a dense index 0..S-1 (the header's `source.streams` maps it back to the
  device/context/stream ids of the input); `priority` is an urgency level, larger = more urgent:
  CUDA priorities (0 = least, -5 = greatest on Hopper; CUPTI hands them over as uint32, so -5
  arrives as 4294967291) are sign-converted and negated, so CUDA 0 -> 0 and -5 -> 5. Where the
  source records no priority at all (Kineto, rocprof), every stream gets level 0 and P = 1.
- `meta` holds the rest: `corr` (correlation id of the launch call), `pid` where known, `name`,
  `grid` (total blocks), `grid_dims`, `block_dims`, the raw `stream_id`, `cuda_priority`, and
  `launch_from` saying where the launch time came from (`api`: the runtime/driver call;
  `queued`: CUPTI's queued timestamp; `kernel`: none recorded, the launch is placed at the start).
- `t` is integer nanoseconds on the source's GPU clock. Events are sorted by time; at equal times
  an `end` comes before a `launch`, which comes before a `start`, except that a kernel's own
  start always precedes its end.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import Event, TraceHeader

MAX_NS = 1 << 62  # bound of every time and integer read from an input (|t| < 146 years in ns)

MODEL = "nvidia_streams"
KERNEL_ACTIONS = ("launch", "start", "end")
UINT32 = 1 << 32


def signed32(v: int) -> int:
    """CUPTI's `priority` is a uint32 holding a signed value: 4294967291 -> -5."""
    v = int(v)
    if v >= UINT32 // 2 and v < UINT32:
        return v - UINT32
    return v


def cuda_level(cuda_priority: int | None) -> int | None:
    """Urgency level (larger = more urgent) of a CUDA stream priority (lower = more urgent)."""
    if cuda_priority is None:
        return None
    return -signed32(cuda_priority)


@dataclass
class Kernel:
    """One kernel execution as every source describes it, in ns on the source's GPU clock.

    `stream_key` identifies the in-order queue (it must be hashable and sortable within one
    import); `stream_info` is what the header's stream table shows about it."""

    name: str
    stream_key: tuple[Any, ...]
    start: int
    end: int | None               # None: started, never seen to end (an incomplete launch)
    corr: int | None = None
    pid: int | None = None
    launch: int | None = None
    launch_from: str = "kernel"
    level: int | None = None            # urgency level, larger = more urgent (see module doc)
    grid_dims: tuple[int, ...] | None = None
    block_dims: tuple[int, ...] | None = None
    stream_info: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    where: str = ""                     # its place in the input (file:line, table row, record), for errors

    @property
    def grid(self) -> int | None:
        if not self.grid_dims:
            return None
        n = 1
        for d in self.grid_dims:
            n *= max(int(d), 1)
        return n


@dataclass
class Extra:
    """A non-kernel event an importer wants in the trace (gap, ctx_switch, preempt, ...)."""

    t: int
    action: str
    args: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    where: str = ""  # its place in the input, for errors


def file_info(path: str) -> dict[str, Any]:
    """Provenance of an input file for the header: name, size and SHA-256."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        size = os.path.getsize(path)
    except OSError as e:
        raise TraceError(f"{path}: cannot read: {e.strerror or e}") from None
    return {"file": os.path.basename(path), "bytes": size, "sha256": h.hexdigest()}


def short(v: Any) -> str:
    """A value for an error message, cut to 60 characters."""
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def key(v: Any) -> Any:
    """A value usable as a dict key or stream-key part: scalars as they are, anything else
    (a list or object where a scalar was expected) as its repr."""
    return v if v is None or isinstance(v, (int, float, str, bytes)) else repr(v)


def _number(value: Any, where: str, what: str, scale: float = 1) -> int:
    t = type(value)
    n: int | None = None
    if scale == 1 and (t is int or (t is str and len(value) <= 40)):  # the common cases, fast
        try:
            n = int(value)
        except ValueError:
            pass
    if n is None:
        n = _parse_number(value, where, what, scale)
    if not -MAX_NS <= n <= MAX_NS:
        raise TraceError(f"{where}: {what} out of range: {short(value)} (at most 2^62 in magnitude)")
    return n


def _parse_number(value: Any, where: str, what: str, scale: float) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float, str, bytes)):
        raise TraceError(f"{where}: expected {what}, got {short(value)}")
    try:
        if isinstance(value, (str, bytes)):
            s = value.strip()
            if len(s) > 40:
                raise ValueError
            value = int(s) if scale == 1 and s.lstrip(b"-" if isinstance(s, bytes) else "-").isdigit() else float(s)
        if isinstance(value, float) and not math.isfinite(value * scale):
            raise ValueError
        return value if isinstance(value, int) and scale == 1 else round(value * scale)
    except (TypeError, ValueError, OverflowError):
        raise TraceError(f"{where}: expected {what}, got {short(value)}") from None


def int_value(value: Any, where: str) -> int:
    """An integer field (int, integral float or numeric string), within +-2^62."""
    if value is None:
        raise TraceError(f"{where}: missing value")
    return _number(value, where, "an integer")


def ns(value: Any, where: str) -> int:
    """An integer nanosecond timestamp from an int, float or numeric string, within +-2^62."""
    return _number(value, where, "a timestamp")


def us_to_ns(value: Any, where: str) -> int:
    """Chrome-trace microseconds (float, Kineto writes 3 decimals) to integer nanoseconds."""
    return _number(value, where, "a time in microseconds", 1000)


_MAX_META_DEPTH = 64


class _TooDeep(Exception):
    """Metadata nested deeper than _MAX_META_DEPTH (the trace writer refuses past 255)."""


def _jsonable(v: Any, depth: int = 0) -> Any:
    """A metadata value the trace writer can encode: bytes as hex, non-finite floats and
    integers beyond 64 bits as text (database columns can hold anything)."""
    if depth > _MAX_META_DEPTH:
        raise _TooDeep
    t = type(v)
    if t is str or t is bool or v is None:
        return v
    if t is int:
        return v if -(1 << 63) <= v < (1 << 64) else str(v)
    if t is float:
        return v if math.isfinite(v) else str(v)
    if t is bytes:
        return v.hex()
    if t is list or t is tuple:
        return [_jsonable(x, depth + 1) for x in v]
    if t is dict:
        return {str(k): _jsonable(x, depth + 1) for k, x in v.items()}
    return v if isinstance(v, (str, int, float)) else str(v)


def _plain(v: Any, depth: int = 0) -> bool:
    """Is a value one the trace writer encodes as it is (the common case, checked fast)?"""
    if depth > _MAX_META_DEPTH:
        return False
    t = type(v)
    if t is str or t is bool or t is float or v is None:
        return True  # orjson writes a non-finite float as null
    if t is int:
        return -(1 << 63) <= v < (1 << 64)
    if t is list:
        return all(_plain(x, depth + 1) for x in v)
    return False


def _jsonable_dict(d: dict[str, Any], where: str) -> dict[str, Any]:
    """A metadata object as the trace writer can encode it: itself when every value is plain;
    a TraceError at `where` when it is nested too deeply to write."""
    if all(_plain(v) for v in d.values()):
        return d
    try:
        return _jsonable(d)  # type: ignore[no-any-return]
    except _TooDeep:
        raise TraceError(f"{where}: metadata nested more than {_MAX_META_DEPTH} levels deep") from None


_MAX_BLOCKS = 1 << 62


def _dims_ok(d: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """Launch dimensions as recorded, or None where they are not small non-negative integers
    whose product (the block count written to the trace) fits the trace's 2^62 bound (they are
    metadata: a nonsense grid is dropped rather than written)."""
    if not d or not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < (1 << 32) for x in d):
        return None
    n = 1
    for x in d:
        n *= max(x, 1)
        if n > _MAX_BLOCKS:
            return None
    return d


def _sort_key(k: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple((0, x) if isinstance(x, (int, float)) else (1, str(x)) for x in k)


def build_trace(kernels: Iterable[Kernel], source: Mapping[str, Any], *, extras: Iterable[Extra] = (),
                model: str | None = MODEL, priorities_known: bool | None = None,
                path: str | None = None, switch_evidence: bool = False) -> tuple[TraceHeader, list[Event]]:
    """The observation trace of some kernels (NOTE(observation-events)).

    Validates what every source must satisfy (end >= start); assigns dense stream indices in the
    order of the sorted stream keys (`path`, the input, names it in errors); computes the model
    constants S (streams), P (priority levels), Q (most kernels queued in one stream at once) and
    SLOTS (most kernels running at once, at least 1). `model` is dropped to null when extras add actions the model lacks.
    Writes what the source lacks into `source.missing` (NOTE(source-missing) in traces/preconditions.py);
    `switch_evidence`: the source has per-block timer stamps or context-switch records."""
    ks = list(kernels)
    for k in ks:
        loc = k.where or path or source.get("file", "?")
        for t in (k.start, k.end, k.launch):
            if t is not None and not -MAX_NS <= t <= MAX_NS:
                raise TraceError(f"{loc}: kernel {k.name!r} (correlation {k.corr}): time {t} "
                                 f"out of range (at most 2^62 ns in magnitude)")
        if k.level is not None and abs(k.level) > 1 << 32:
            raise TraceError(f"{loc}: kernel {k.name!r} (correlation {k.corr}): priority {k.level} "
                             f"out of range (a CUDA priority fits 32 bits)")
        k.meta = _jsonable_dict(k.meta, loc)
        k.stream_info = _jsonable_dict(k.stream_info, loc)
        k.grid_dims = _dims_ok(k.grid_dims)
        k.block_dims = _dims_ok(k.block_dims)
        if k.end is not None and k.end < k.start:
            raise TraceError(f"{loc}: kernel {k.name!r} (correlation {k.corr}) ends "
                             f"before it starts ({k.start} > {k.end})")
    keys = sorted({k.stream_key for k in ks}, key=_sort_key)
    index = {key: i for i, key in enumerate(keys)}
    levels: dict[int, int | None] = {}
    infos: dict[int, dict[str, Any]] = {}
    for k in ks:
        s = index[k.stream_key]
        infos.setdefault(s, dict(k.stream_info))
        if k.level is not None:
            if levels.get(s) is not None and levels[s] != k.level:
                raise TraceError(f"{loc}: stream {k.stream_info or k.stream_key} has kernels "
                                 f"with priorities {levels[s]} and {k.level}")
            levels[s] = k.level
        else:
            levels.setdefault(s, None)
    known = any(v is not None for v in levels.values()) if priorities_known is None else priorities_known
    if known:
        lo = min((v for v in levels.values() if v is not None), default=0)
        if lo < 0:  # e.g. HIP's +1 = low: shift so that the least urgent level is 0
            levels = {s: (None if v is None else v - lo) for s, v in levels.items()}
    else:
        levels = {s: 0 for s in levels}
    n_levels = max([v for v in levels.values() if v is not None] + [0]) + 1
    streams = []
    for s in range(len(keys)):
        row = {"stream": s, "priority": levels.get(s)}
        row.update(infos.get(s, {}))
        streams.append(row)

    # (t, rank, seq, event): rank orders simultaneous events (see module doc)
    rows: list[tuple[int, int, int, Event]] = []
    seq = 0
    corr_next = max([k.corr for k in ks if k.corr is not None] + [0]) + 1
    for k in sorted(ks, key=lambda k: (k.start, k.end if k.end is not None else k.start,
                                       _sort_key(k.stream_key), k.corr or 0)):
        s = index[k.stream_key]
        args: dict[str, Any] = {"stream": s}
        if levels.get(s) is not None:
            args["priority"] = levels[s]
        corr = k.corr
        meta: dict[str, Any] = {}
        if corr is None:
            corr, corr_next = corr_next, corr_next + 1
            meta["corr_synthetic"] = True
        meta = {"corr": corr, **({"pid": k.pid} if k.pid is not None else {}), "name": k.name, **meta}
        if k.grid is not None:
            meta["grid"] = k.grid
            meta["grid_dims"] = list(k.grid_dims or ())
        if k.block_dims:
            meta["block_dims"] = list(k.block_dims)
        meta.update(k.meta)
        t_launch = k.launch if k.launch is not None else k.start
        lmeta = dict(meta, launch_from=k.launch_from if k.launch is not None else "kernel")
        rows.append((min(t_launch, k.start), 1, seq, Event("launch", args, None, min(t_launch, k.start), lmeta)))
        rows.append((k.start, 2, seq + 1, Event("start", args, None, k.start, meta)))
        if k.end is not None:
            rows.append((k.end, 0 if k.end > k.start else 3, seq + 2, Event("end", args, None, k.end, meta)))
        seq += 3
    extra_actions = set()
    for x in extras:
        if not -MAX_NS <= x.t <= MAX_NS:
            raise TraceError(f"{x.where or path or source.get('file', '?')}: a '{x.action}' event at time {x.t}: "
                             f"out of range "
                             f"(at most 2^62 ns in magnitude)")
        x.meta = _jsonable_dict(x.meta, x.where or path or source.get("file", "?"))
        extra_actions.add(x.action)
        rows.append((x.t, 1, seq, Event(x.action, x.args, None, x.t, x.meta or None)))
        seq += 1
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    events = [r[3] for r in rows]

    q_max, slots = _depths(events)
    constants = {"S": max(len(keys), 1), "P": n_levels, "Q": max(q_max, 1), "SLOTS": max(slots, 1)}
    if extra_actions - set(KERNEL_ACTIONS):
        model = None  # the trace logs actions nvidia_streams does not have
    missing = _missing(ks, str(source.get("format", "")) or None, known, switch_evidence)
    return trace_header(source, streams, len(ks), known, missing, constants, model, path), events


def trace_header(source: Mapping[str, Any], streams: list[dict[str, Any]], n_kernels: int, known: bool,
                 missing: list[dict[str, Any]], constants: dict[str, int], model: str | None,
                 path: str | None) -> TraceHeader:
    """The header build_trace writes (shared with the streaming Kineto import, kineto_stream.py)."""
    src = {}
    for key_, v in source.items():  # provenance copied from the input into the header
        try:
            src[key_] = v if _plain(v) else _jsonable(v)
        except _TooDeep:
            raise TraceError(f"{path or source.get('file', '?')}: top-level {key_}: nested more than {_MAX_META_DEPTH} "
                             f"levels deep") from None
    src["streams"] = streams
    src["kernels"] = n_kernels
    src["priority_convention"] = ("level = -(signed CUDA priority): larger is more urgent; CUDA 0 -> 0, -5 -> 5"
                                  if known else "no priorities in the source: every stream at level 0")
    src["missing"] = missing
    return TraceHeader(model=model, constants=constants, extra={"source": src})


def _missing(ks: list[Kernel], fmt: str | None, priorities: bool, switch_evidence: bool) -> list[dict[str, Any]]:
    """What the source did not record (NOTE(source-missing) in traces/preconditions.py)."""
    return missing_entries(len(ks), sum(1 for k in ks if k.launch is None),
                           bool(ks) and all(k.corr is None for k in ks), fmt, priorities, switch_evidence)


def missing_entries(n: int, unlaunched: int, no_corr: bool, fmt: str | None, priorities: bool,
                    switch_evidence: bool) -> list[dict[str, Any]]:
    """`source.missing` from counts: n kernels, `unlaunched` of them without a launch time,
    `no_corr` when none has a correlation id."""
    from gpcheck.traces.preconditions import entry

    ks = n  # a kernel count stands where the list was
    out = []
    if not priorities and ks:
        out.append(entry("stream_priority", fmt, f"the source ({fmt}) records no stream priorities: every stream "
                                                 f"was put at level 0"))
    if ks and unlaunched == n:
        out.append(entry("launch_time", fmt, f"the source ({fmt}) records no kernel launch times: each launch "
                                             f"was placed at its kernel's start"))
    elif unlaunched:
        e = entry("launch_time", fmt, f"{unlaunched} of {n} kernels have no launch time in the source "
                                      f"({fmt}): their launch was placed at their start", (unlaunched, n))
        e["partial"] = True
        out.append(e)
    if no_corr:
        out.append(entry("correlation_id", fmt, f"the source ({fmt}) records no correlation ids: each kernel "
                                                f"got a made-up one"))
    if not switch_evidence and ks:
        out.append(entry("switch_evidence", fmt, f"the source ({fmt}) records neither per-block timer stamps nor "
                                                 f"GPU context-switch records"))
    return out


def _depths(events: list[Event]) -> tuple[int, int]:
    """Most kernels queued (launched, not started) in one stream, and most running at once."""
    queued: dict[int, int] = {}
    running = 0
    q_max = slots = 0
    for ev in events:
        if ev.action not in KERNEL_ACTIONS:
            continue
        s = int(ev.args["stream"])
        if ev.action == "launch":
            queued[s] = queued.get(s, 0) + 1
            q_max = max(q_max, queued[s])
        elif ev.action == "start":
            queued[s] = queued.get(s, 0) - 1
            running += 1
            slots = max(slots, running)
        else:
            running -= 1
    return q_max, slots


KERNEL_PATTERN = "kernel:"  # --stream-priority 'kernel:*gemm*=-5': the streams that ran a matching kernel


def override_priorities(header: TraceHeader, events: list[Event],
                        overrides: Mapping[str, int]) -> tuple[TraceHeader, list[Event]]:
    """Set the CUDA priority of some streams by hand (for sources that do not record it, such as
    Kineto: `gpcheck import --stream-priority 14=-5`). A key is a stream's raw `stream_id` or its
    `name` in the header's stream table (`stream:14` says the same as `14`), or `kernel:PATTERN`:
    every stream that ran a kernel whose full name matches the shell pattern (fnmatch, case
    sensitive). A stream named by id takes that priority over any pattern; two patterns that give
    one stream different priorities are an error, as is a key that names no stream. Every other
    stream without a recorded priority gets CUDA's default 0 (level 0). The source no longer
    counts as lacking priorities (`source.missing`); each stream row says where its priority came
    from (`priority_from`). Returns a new header and new events."""
    names: dict[Any, set[str]] = {}
    for ev in events:
        if ev.action == "start" and ev.meta and isinstance(ev.args.get("stream"), int):
            names.setdefault(ev.args["stream"], set()).add(str(ev.meta.get("name", "")))
    header, level = override_stream_table(header, names, overrides)
    out = []
    for ev in events:
        if ev.action in KERNEL_ACTIONS and isinstance(ev.args.get("stream"), int):
            ev = Event(ev.action, {**ev.args, "priority": level[ev.args["stream"]]}, ev.state, ev.t, ev.meta, ev.line)
        out.append(ev)
    return header, out


def override_stream_table(header: TraceHeader, names: Mapping[Any, set[str]],
                          overrides: Mapping[str, int]) -> tuple[TraceHeader, dict[int, int]]:
    """override_priorities' header part: the new header and each stream's level, given the kernel
    names each stream ran (`names`: stream index -> full kernel names)."""
    from fnmatch import fnmatchcase

    src = dict(header.extra.get("source", {}))
    streams = [dict(r) for r in src.get("streams", [])]
    by_id = {(k[len("stream:"):] if k.startswith("stream:") else k): v for k, v in overrides.items()
             if not k.startswith(KERNEL_PATTERN)}
    patterns = {k: v for k, v in overrides.items() if k.startswith(KERNEL_PATTERN)}
    used: set[str] = set()
    level: dict[int, int] = {}
    for row in streams:
        keys = {str(row.get("stream_id")), str(row.get("name"))} - {"None"}
        hit = next((k for k in sorted(keys) if k in by_id), None)
        cuda: int | None = None
        got = {}
        for pat, v in patterns.items():
            if any(fnmatchcase(n, pat[len(KERNEL_PATTERN):]) for n in names.get(row["stream"], ())):
                got[pat] = signed32(v)
        used.update(got)
        if hit is not None:
            used.add(hit)
            cuda, row["priority_from"] = signed32(by_id[hit]), f"--stream-priority {hit}"
        else:
            if len(set(got.values())) > 1:
                raise TraceError(f"--stream-priority: stream {row.get('stream_id', row['stream'])} ran kernels matching "
                                 f"{' and '.join(sorted(got))}, which give it different priorities")
            if got:
                pat = sorted(got)[0]
                cuda, row["priority_from"] = got[pat], f"--stream-priority {pat}"
        if cuda is not None:
            row["cuda_priority"] = cuda
            row["priority"] = -cuda
        elif row.get("priority") is None:
            row["priority"] = 0
        level[row["stream"]] = row["priority"]
    unknown = sorted(set(by_id) - used) + sorted(set(patterns) - used)
    if unknown:
        ids = ", ".join(str(r.get("stream_id", r.get("name"))) for r in streams)
        raise TraceError(f"--stream-priority: no stream {', '.join(unknown)} in the trace (streams: {ids}; "
                         f"kernel:PATTERN matches a kernel's full name, e.g. 'kernel:*gemm*')")
    if any(v < 0 for v in level.values()):
        raise TraceError("--stream-priority: a CUDA priority must be <= 0 (0 least urgent, -5 greatest on Hopper)")
    src["streams"] = streams
    src["priority_overrides"] = dict(overrides)
    src["priority_convention"] = ("level = -(signed CUDA priority): larger is more urgent; CUDA 0 -> 0, -5 -> 5 "
                                  "(some set by --stream-priority)")
    if isinstance(src.get("missing"), list):
        src["missing"] = [m for m in src["missing"] if not (isinstance(m, dict) and m.get("field") == "stream_priority")]
    consts = dict(header.constants, P=max(level.values(), default=0) + 1)
    return TraceHeader(header.model, consts, header.init, dict(header.extra, source=src)), level

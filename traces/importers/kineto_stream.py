"""`gpcheck import` of a PyTorch profiler (Kineto) trace in memory that does not grow with the
trace's events, writing the very bytes `import_kineto` + `TraceWriter` write (issue 31, item 4).

Why: the whole-document import holds the parsed JSON, a Kernel object per kernel and an Event per
event: 859 MB and 57 s for a 131 MB, 99,910-kernel trace. Here the events stream out of the file
(jsonstream.py, orjson per event); each kernel and each launch call keeps a few integers in
growable arrays (strings, stream ids and launch dimensions are kept once each and referred to by
number); sorting, the launch-to-kernel join by correlation id, the queue depths and the stream
table are NumPy operations over those columns; the events are then built one at a time, in trace
order, and written. What remains in memory is about 90 bytes per kernel, not the trace.

Semantics are `import_kineto`'s, `build_trace`'s and `override_priorities`' to the byte: the same
slices (X, and B/E pairs per pid/tid), the first launch call per correlation id in trace order,
the same sort keys and tie-breaks, the same header (common.trace_header, common.missing_entries,
common.override_stream_table). Input that the whole-document path would refuse or read
differently (every error, NaN, numbers beyond 64 bits, ...) raises `Fallback`, and the caller runs
the whole-document path, so errors read exactly as before.
"""

from __future__ import annotations

import os
from array import array
from collections import Counter
from typing import Any, Mapping

import numpy as np
import orjson

from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import TraceWriter
from gpcheck.traces.importers.chrome import _dims
from gpcheck.traces.importers.common import (MAX_NS, MODEL, _dims_ok, cuda_level, key, missing_entries,
                                             override_stream_table, signed32, trace_header, us_to_ns)
from gpcheck.traces.importers.jsonstream import NotStreamable, TraceEventStream
from gpcheck.traces.importers.kineto import LAUNCH_CATS

NONE = -(1 << 63)        # "absent" in an int64 column
I64 = (1 << 63) - 1
LIM = 4.0e15  # |us| below this: x 1000 is within 2^62 ns and finite
KERNEL_KEYS = ("schemaVersion", "deviceProperties", "baseTimeNanoseconds", "cupti_version")


class Fallback(Exception):
    """Import this file the whole-document way (the reason is the message)."""


class _Table:
    """Values kept once each, by type and value (1, 1.0 and True stay distinct)."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self._ids: dict[Any, int] = {}

    def id(self, v: Any) -> int:
        k = (type(v), v) if not isinstance(v, (list, dict)) else (type(v), repr(v))
        i = self._ids.get(k)
        if i is None:
            i = self._ids[k] = len(self.values)
            self.values.append(v)
        return i


def _i64(v: int) -> int:
    if not -I64 <= v <= I64:
        raise Fallback("an integer beyond 64 bits")
    return v


class _Columns:
    """Pass 1: what each kernel slice and each launch slice contributes, in arrays. What a kernel
    shares with others (name, stream, device, context, dimensions, category, track) is one
    `static` row, kept once; what a launch call contributes (api name, pid) likewise."""

    def __init__(self, cats: tuple[str, ...]):
        self.cats = cats
        q = lambda: array("q")  # noqa: E731
        self.j, self.start, self.end, self.corr, self.queued, self.cuda_p = q(), q(), q(), q(), q(), q()
        self.sid = array("i")                       # static row of each kernel
        self.l_corr, self.l_j, self.l_start, self.l_id = q(), q(), q(), array("i")
        self.values = _Table()   # raw values, names, dims, tracks
        self.static: dict[bytes, int] = {}
        self.static_rows: list[tuple[int, ...]] = []  # ids of name, stream, dev, ctx, grid, block, cat, track
        self.launch_ids: dict[bytes, int] = {}
        self.launch_rows: list[tuple[str, Any]] = []  # (api name, pid)
        self.tnames: dict[tuple[Any, Any], str] = {}
        self.kernel_like = False  # a kernel slice with args.stream and args.correlation (auto-detection)

    def slice(self, j: int, e: dict[str, Any], start: int, end: int | None) -> None:
        """import_kineto's two loops over slices, for one slice."""
        cat = e.get("cat")
        args = e.get("args")
        if cat in LAUNCH_CATS and type(args) is dict:
            corr = args.get("correlation")
            name = str(e.get("name", ""))
            if type(corr) is int and "aunch" in name:
                pid = e.get("pid")
                lk = orjson.dumps((name, pid))  # typed: 1, 1.0 and true differ
                li = self.launch_ids.get(lk)
                if li is None:
                    li = self.launch_ids[lk] = len(self.launch_rows)
                    self.launch_rows.append((name, pid))
                self.l_corr.append(_i64(corr))
                self.l_j.append(j)
                self.l_start.append(start)
                self.l_id.append(li)
            return
        if cat not in self.cats:
            return
        if type(args) is not dict:
            raise Fallback("a kernel slice without args")
        corr = args.get("correlation")
        if type(corr) is not int:
            raise Fallback("a kernel without an integer correlation id")
        queued = args.get("queued")
        prio = args.get("priority")
        self.j.append(j)
        self.start.append(start)
        self.end.append(NONE if end is None else end)
        self.corr.append(_i64(corr))
        self.queued.append(queued if type(queued) is int and 0 < queued <= MAX_NS else NONE)
        self.cuda_p.append(signed32(prio) if type(prio) is int and abs(prio) < 1 << 33 else NONE)
        pid, tid = e.get("pid"), e.get("tid")
        raw = (e.get("name", "?"), args.get("stream", tid), args.get("device", pid), args.get("context"),
               args.get("grid"), args.get("block"), cat, pid, tid)
        sk = orjson.dumps(raw)  # typed: 1, 1.0 and true differ
        sid = self.static.get(sk)
        if sid is None:
            vid = self.values.id
            sid = self.static[sk] = len(self.static_rows)
            self.static_rows.append((vid(str(raw[0])), vid(key(raw[1])), vid(key(raw[2])), vid(key(raw[3])),
                                     vid(_dims_ok(_dims(raw[4]))), vid(_dims_ok(_dims(raw[5]))), vid(cat),
                                     vid((key(pid), key(tid)))))
        self.sid.append(sid)


def _us(v: Any) -> int:
    """us_to_ns, with the common cases (a float or an int) inline; out of range: Fallback."""
    t = type(v)
    try:
        n = round(v * 1000) if t is float else v * 1000 if t is int else us_to_ns(v, "")
    except (OverflowError, ValueError, TraceError):
        raise Fallback("a time that is not a number") from None
    if not -MAX_NS <= n <= MAX_NS:
        raise Fallback("a time out of range")
    return n  # type: ignore[no-any-return]


def _read(path: str, include_copies: bool, detect: bool) -> tuple[_Columns, TraceEventStream]:
    """Pass 1 over the file: slices() and names() of chrome.py, streamed. `detect`: give up early
    on a file that will not be detected as Kineto (no Kineto header key and no Kineto kernel slice
    among its first 20000 events)."""
    cols = _Columns(("kernel", "gpu_memcpy", "gpu_memset") if include_copies else ("kernel",))
    open_: dict[tuple[Any, Any], list[tuple[int, dict[str, Any], int]]] = {}
    s = TraceEventStream(path)
    slice_ = cols.slice
    wanted = LAUNCH_CATS + cols.cats  # a tuple: `in` compares, so an unhashable cat is no error
    try:
        for i0, batch in s.batches():
            if i0 < 20000 and not cols.kernel_like:
                for e in batch[:20000 - i0]:
                    if type(e) is dict and e.get("cat") == "kernel" and type(e.get("args")) is dict \
                            and "stream" in e["args"] and "correlation" in e["args"]:
                        cols.kernel_like = True
                        break
            if detect and i0 + len(batch) >= 20000 and not cols.kernel_like \
                    and not any(k in s.top for k in KERNEL_KEYS):
                raise Fallback("not recognisably Kineto")
            for k, e in enumerate(batch):
                if type(e) is not dict:
                    raise Fallback("an event that is not an object")
                ph = e.get("ph")
                if ph == "X":
                    if "ts" not in e or "dur" not in e:
                        raise Fallback("an X slice without ts or dur")
                    v, d = e["ts"], e["dur"]
                    if type(v) is float and type(d) is float and -LIM < v < LIM and -LIM < d < LIM:
                        if e.get("cat") in wanted:  # other slices: their times are valid, and unused
                            ts = round(v * 1000)  # us_to_ns's common case, inline
                            slice_(i0 + k, e, ts, ts + round(d * 1000))
                    else:
                        ts = _us(v)
                        slice_(i0 + k, e, ts, ts + _us(d))
                elif ph == "M":
                    a = e.get("args")
                    if isinstance(a, dict):
                        if e.get("name") == "thread_name":
                            cols.tnames[(key(e.get("pid")), key(e.get("tid")))] = str(a.get("name"))
                        elif e.get("name") == "process_name":
                            cols.tnames[(key(e.get("pid")), None)] = str(a.get("name"))
                elif ph == "B" or ph == "E":
                    if "ts" not in e:
                        raise Fallback("a slice without ts")
                    ts = _us(e["ts"])
                    track = (key(e.get("pid")), key(e.get("tid")))
                    if ph == "B":
                        open_.setdefault(track, []).append((i0 + k, e, ts))
                        continue
                    stack = open_.get(track)
                    if not stack:
                        raise Fallback("an E with no open B")
                    j, b, t0 = stack.pop()
                    merged = dict(b)
                    if isinstance(e.get("args"), dict):
                        merged["args"] = {**(b.get("args") or {}), **e["args"]}
                    slice_(j, merged, t0, ts)
        for stack in open_.values():
            for j, b, t0 in stack:
                slice_(j, b, t0, None)
    except (NotStreamable, TraceError) as err:
        s.close()
        raise Fallback(str(err)) from None
    except BaseException:
        s.close()
        raise
    return cols, s


def _np(a: array) -> np.ndarray:
    """A NumPy view of an array column (no copy)."""
    dt = np.int64 if a.typecode == "q" else np.int32
    return np.frombuffer(a, dtype=dt) if len(a) else np.zeros(0, dtype=dt)


def _launches(cols: _Columns, corr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per kernel: the launch row (api name, pid) of its launch call, the first in trace order with
    its correlation id (-1: none), and that call's start."""
    lc, lj = _np(cols.l_corr), _np(cols.l_j)
    if not len(lc) or not len(corr):
        return np.full(len(corr), -1, dtype=np.int32), np.zeros(len(corr), dtype=np.int64)
    order = np.lexsort((lj, lc))
    lc_s = lc[order]
    first = np.ones(len(lc_s), dtype=bool)
    first[1:] = lc_s[1:] != lc_s[:-1]
    pick = order[first]
    del order, lc_s, first
    keys = lc[pick]
    pos = np.minimum(np.searchsorted(keys, corr), len(keys) - 1)
    hit = keys[pos] == corr
    at = pick[pos]
    lid = np.where(hit, _np(cols.l_id)[at], -1).astype(np.int32)
    lstart = np.where(hit, _np(cols.l_start)[at], 0)
    cols.l_corr = cols.l_j = cols.l_start = array("q")  # free them
    cols.l_id = array("i")
    return lid, lstart


def import_kineto_to(path: str, out: str, overrides: Mapping[str, int] | None = None, *,
                     detect: bool = False, include_copies: bool = False) -> dict[str, Any]:
    """Import a Kineto trace into `out` (see module doc); returns what `gpcheck import` reports:
    `header`, `events`, `kernels`, `names` (per stream index, a Counter of kernel names in the
    order their first start event appears). `detect`: the file was not named a Kineto trace, so
    it must also be what detect_format would call one (else Fallback)."""
    cols, stream = _read(path, include_copies, detect)
    try:
        top = stream.top
        sha = stream.sha256
    finally:
        stream.close()
    if not stream.bare_array and ("traceEvents" in top or not stream.saw_events):
        raise Fallback("no traceEvents array")  # detect_format and trace_events would refuse it
    if detect:  # what detect_format decides: a recording first, then Kineto (looks_like_kineto)
        if top.get("gpcheck_record") == 1:
            raise Fallback("a gpcheck recording")
        if not cols.kernel_like and (stream.bare_array or not any(k in top for k in KERNEL_KEYS)):
            raise Fallback("not recognisably Kineto")
    base = top.get("baseTimeNanoseconds", 0)
    if not isinstance(base, int) or isinstance(base, bool) or not 0 <= base <= MAX_NS:
        raise Fallback("bad baseTimeNanoseconds")
    return _write(path, out, cols, top, base, sha, overrides)


def _write(path: str, out: str, cols: _Columns, top: dict[str, Any], base: int, sha: str,
           overrides: Mapping[str, int] | None) -> dict[str, Any]:
    vals = cols.values.values
    j = _np(cols.j)
    cs = [_np(c) for c in (cols.start, cols.end, cols.corr, cols.queued, cols.cuda_p, cols.sid)]
    if len(j) > 1 and not (j[1:] > j[:-1]).all():  # B/E slices close late: back to trace order
        order0 = np.argsort(j, kind="stable")
        j = j[order0]
        cs = [c[order0] for c in cs]
        del order0
    start, end, corr, queued, cuda_p, sid = cs
    del cs
    n = len(j)
    static = np.array(cols.static_rows, dtype=np.int64).reshape(-1, 8)
    has_end = end != NONE
    # times within +-2^62 ns once the base is added, ends not before starts (build_trace's checks)
    lo, hi = -MAX_NS - base, MAX_NS - base
    if n and (start.min() < lo or start.max() > hi or (has_end & ((end < lo) | (end > hi))).any()
              or (has_end & (end < start)).any()):
        raise Fallback("a time out of range or an end before its start")
    lid, lstart = _launches(cols, corr)
    matched = lid >= 0
    if ((lstart < lo) | (lstart > hi)).any():
        raise Fallback("a launch time out of range")
    has_prio = cuda_p != NONE
    if (has_prio & (np.abs(np.where(has_prio, cuda_p, 0)) > 1 << 32)).any():
        raise Fallback("a priority out of range")
    start += base  # absolute ns from here on (in place: the column is ours)
    end[has_end] += base
    t_launch = np.where(matched, lstart + base, queued)  # queued: absolute already (NONE: none)
    del lstart
    has_launch = t_launch != NONE
    np.minimum(np.where(has_launch, t_launch, start), start, out=t_launch)  # the launch event's time

    # streams: (str(device), str(context), str(stream)), indexed in sorted order
    triple_of = {}
    for u, row in enumerate(cols.static_rows):
        triple_of[u] = (str(vals[row[2]]), str(vals[row[3]]), str(vals[row[1]]))
    skeys = sorted(set(triple_of.values()))
    sindex = {k: i for i, k in enumerate(skeys)}
    stream_of_static = np.array([sindex[triple_of[u]] for u in range(len(cols.static_rows))] or [0], dtype=np.int32)
    sidx = stream_of_static[sid] if n else np.zeros(0, dtype=np.int32)
    n_streams = len(skeys)
    first_of = np.full(n_streams, -1, dtype=np.int64)
    seen = np.unique(sidx, return_index=True)
    first_of[seen[0]] = seen[1]
    levels: dict[int, int | None] = {s: None for s in range(n_streams)}
    if has_prio.any():  # at most one priority per stream
        sp = np.unique(np.stack([sidx[has_prio], cuda_p[has_prio]], axis=1), axis=0)
        if len(np.unique(sp[:, 0])) < len(sp):
            raise Fallback("a stream with two priorities")
        for s_, p_ in sp.tolist():
            levels[s_] = cuda_level(p_)
    known = any(v is not None for v in levels.values())
    if known:
        lmin = min(v for v in levels.values() if v is not None)
        if lmin < 0:
            levels = {s: (None if v is None else v - lmin) for s, v in levels.items()}
    else:
        levels = {s: 0 for s in levels}
    n_levels = max([v for v in levels.values() if v is not None] + [0]) + 1
    streams = []
    for s in range(n_streams):
        r = int(first_of[s])
        st_row = cols.static_rows[sid[r]]
        info = {"device": vals[st_row[2]], "context": vals[st_row[3]], "stream_id": vals[st_row[1]],
                "cuda_priority": None if cuda_p[r] == NONE else int(cuda_p[r])}
        if vals[st_row[7]] in cols.tnames:
            info["track"] = cols.tnames[vals[st_row[7]]].strip()
        row: dict[str, Any] = {"stream": s, "priority": levels.get(s)}
        row.update({k: v for k, v in info.items() if v is not None})
        streams.append(row)

    # kernel order: (start, end or start, stream, corr), stable in trace order
    korder = np.lexsort((corr, sidx, np.where(has_end, end, start), start)).astype(np.int32)
    # events in (t, rank, seq) order, seq = 3 * position + 0 launch / 1 start / 2 end: laid out in
    # (rank, seq) order (ends that take time, launches, starts, instant ends; each in kernel order),
    # then sorted by t alone, stably
    ke = korder[has_end[korder]]
    took = end[ke] > start[ke]
    e0, e3 = ke[took], ke[~took]
    del ke, took
    ev_k = np.concatenate([e0, korder, korder, e3])
    ev_a = np.concatenate([np.full(len(e0), 2, dtype=np.int8), np.zeros(n, dtype=np.int8), np.ones(n, dtype=np.int8),
                           np.full(len(e3), 2, dtype=np.int8)])
    ev_t = np.concatenate([end[e0], t_launch[korder], start[korder], end[e3]])
    del korder, e0, e3
    order = np.argsort(ev_t, kind="stable")
    del ev_t
    ev_k, ev_a = ev_k[order], ev_a[order]
    del order
    q_max, slots = _depths(ev_a, ev_k, sidx, n_streams)
    constants = {"S": max(n_streams, 1), "P": n_levels, "Q": max(q_max, 1), "SLOTS": max(slots, 1)}

    # kernel names per stream, in the order their first start event appears (--stream-priority
    # kernel:PATTERN and the import's warning)
    names: dict[int, Counter[str]] = {}
    st = ev_k[ev_a == 1]
    width = int(static[:, 0].max()) + 1 if len(static) else 1
    pair = sidx[st].astype(np.int64) * width + static[sid[st], 0]
    up, first_at, counts = np.unique(pair, return_index=True, return_counts=True)
    for i in np.argsort(first_at, kind="stable").tolist():
        s_, nm = divmod(int(up[i]), width)
        names.setdefault(s_, Counter())[vals[nm]] = int(counts[i])
    del st, pair, up, first_at, counts

    device = top.get("deviceProperties")
    src = {"format": "kineto", "file": os.path.basename(path), "bytes": os.path.getsize(path), "sha256": sha,
           "clock": "ns = baseTimeNanoseconds + ts (us) x 1000 (CUPTI GPU timestamps)",
           "base_time_ns": base, "schema_version": top.get("schemaVersion"),
           "cupti_version": top.get("cupti_version"), "cuda_driver_version": top.get("cuda_driver_version"),
           "devices": [d.get("name") for d in device if isinstance(d, dict)] if isinstance(device, list) else None,
           "launches_matched": int(matched.sum())}
    missing = missing_entries(n, int((~has_launch).sum()), False, "kineto", known, False)
    del matched, has_launch
    try:
        header = trace_header(src, streams, n, known, missing, constants, MODEL, path)
    except TraceError as e:
        raise Fallback(str(e)) from None
    if overrides:  # a --stream-priority error reads the same either way
        header, lv = override_stream_table(header, {s: set(c) for s, c in names.items()}, overrides)
        levels = dict(lv)
    args_json = [orjson.dumps({"stream": s, "priority": levels[s]} if levels.get(s) is not None else {"stream": s})
                 for s in range(n_streams)]
    with TraceWriter(out, header) as w:
        _events(w, _fragments(cols, vals), cols.launch_rows, ev_k, ev_a, (t_launch, start, end),
                (corr, lid, sid, j, cuda_p, queued, sidx), args_json)
        count = w.count
    return {"header": header, "events": count, "kernels": n, "names": names}


def _fragments(cols: _Columns, vals: list[Any]) -> list[tuple[bytes, bytes]]:
    """Per static row, the encoded meta from "name" to "context" (with a leading comma) and the
    "kind" member (empty for a kernel): what orjson writes for those keys inside the meta object."""
    out = []
    for name, stream, dev, ctx, grid, block, cat, _track in cols.static_rows:
        m: dict[str, Any] = {"name": vals[name]}
        dims = vals[grid]
        if dims:
            g = 1
            for d in dims:
                g *= max(int(d), 1)
            m["grid"] = g
            m["grid_dims"] = list(dims)
        if vals[block]:
            m["block_dims"] = list(vals[block])
        m["stream_id"], m["device"], m["context"] = vals[stream], vals[dev], vals[ctx]
        kind = b"" if vals[cat] == "kernel" else b',"kind":' + orjson.dumps(vals[cat])
        out.append((b"," + orjson.dumps(m)[1:-1], kind))
    return out


_ACTION = (b'{"action":"launch","args":', b'{"action":"start","args":', b'{"action":"end","args":')
_FROM = (b',"launch_from":"api"}}\n', b',"launch_from":"queued"}}\n', b',"launch_from":"kernel"}}\n', b"}}\n")


def _events(w: TraceWriter, frags: list[tuple[bytes, bytes]], launch_rows: list[tuple[str, Any]],
            ev_k: np.ndarray, ev_a: np.ndarray, times: tuple[np.ndarray, np.ndarray, np.ndarray],
            columns: tuple[np.ndarray, ...], args_json: list[bytes]) -> None:
    """Write the events in order, a block at a time, each line joined from pre-encoded pieces (the
    bytes orjson writes for the event object build_trace makes: compact, keys in its order)."""
    pid_api = [((b',"pid":' + orjson.dumps(pid)) if isinstance(pid, int) else b"", b',"api":' + orjson.dumps(name))
               for name, pid in launch_rows]
    block_size = 1 << 12  # events per write: about 2 MB of output
    for b0 in range(0, len(ev_k), block_size):
        ks = ev_k[b0:b0 + block_size]
        corr, lid, sid, j, cuda_p, queued, sidx = (c[ks].tolist() for c in columns)
        ab = ev_a[b0:b0 + block_size]
        acts = ab.tolist()
        t_block = np.where(ab == 0, times[0][ks], np.where(ab == 1, times[1][ks], times[2][ks])).tolist()
        lines = []
        for x in range(len(ks)):
            a, li = acts[x], lid[x]
            mid, kind = frags[sid[x]]
            pid, api = pid_api[li] if li >= 0 else (b"", b"")
            p = cuda_p[x]
            lines.append(b"".join((
                _ACTION[a], args_json[sidx[x]], b',"t":', str(t_block[x]).encode(), b',"meta":{"corr":',
                str(corr[x]).encode(), pid, mid, b',"event_index":', str(j[x]).encode(),
                b"" if p == NONE else b',"cuda_priority":' + str(p).encode(), api, kind,
                _FROM[3] if a else _FROM[0 if li >= 0 else 1 if queued[x] != NONE else 2])))
        w.write_encoded(b"".join(lines), len(lines))


def _depths(action: np.ndarray, ev_k: np.ndarray, sidx: np.ndarray, n_streams: int) -> tuple[int, int]:
    """common._depths over the event columns (action 0 launch, 1 start, 2 end; kernel of each
    event; stream of each kernel): most kernels queued in one stream, most running at once.
    Small dtypes and one stream at a time: no temporary wider than the events."""
    if not len(action):
        return 0, 0
    delta = (action == 1).astype(np.int8)
    delta -= (action == 2).astype(np.int8)
    slots = max(int(np.cumsum(delta, dtype=np.int32).max()), 0)
    delta = (action == 0).astype(np.int8)
    delta -= (action == 1).astype(np.int8)  # +1 launch, -1 start, 0 end
    q_max = 0
    if n_streams == 1:
        return max(int(np.cumsum(delta, dtype=np.int32).max()), 0), slots
    ev_s = sidx[ev_k]
    if n_streams <= 64:
        for s in range(n_streams):
            q_max = max(q_max, int(np.cumsum(delta[ev_s == s], dtype=np.int32).max(initial=0)))
        return q_max, slots
    order = np.argsort(ev_s, kind="stable")
    d, s_sorted = delta[order], ev_s[order]
    del order, ev_s
    cs = np.cumsum(d, dtype=np.int32)
    starts = np.nonzero(np.r_[True, s_sorted[1:] != s_sorted[:-1]])[0]
    offset = np.repeat(np.r_[0, cs[starts[1:] - 1]], np.diff(np.r_[starts, len(cs)]))
    return max(int((cs - offset).max()), 0), slots

"""Model-free observation properties of a gpcheck observation trace (`gpcheck check TRACE`).

Decided from the kernel events alone (NOTE(observation-events) in traces/importers/common.py:
`launch`/`start`/`end` with `args.stream`, `args.priority`, `meta.corr`), no model needed:

- `exactly_once`: every launch (correlation id, per process) is started once and completed once:
  no missing completion, no duplicate start or completion, no start/end of a launch never logged.
  Where events name a logical kernel (`meta.kernel`, the same across relaunches, as in the rewind
  recordings), its completed work (`meta.work` blocks, else `meta.grid` per completion) must not
  exceed its grid (`meta.logical_blocks` where a recording counts work in logical blocks, as the
  block-level preemption ones do): more is a re-execution (a block ran twice), less once every
  launch of it has ended is a loss.
- `stream_order`: within a stream, kernels start in launch order, none starts before its launch,
  and none starts before the previous one ended (no overlap, beyond `overlap_tolerance_ns`).
- `priority_inversion`: a kernel h is *queued* from its launch to its start and *eligible* once
  its stream predecessor has ended. An inversion window opens when a kernel of a lower-priority
  stream starts while h is queued, and lasts from max(that start, h eligible) to h's start: the
  time h could have run but lower-priority work was admitted ahead of it. Every window with its
  duration, and the worst. Informational unless `max_inversion_ns` is set (then longer = violated).
- `timeslice`: preemption and time slicing inferred as research/gpu_traces.md 5.4 says they must
  be, since kernel start/end span switched-out periods: (a) in-kernel `gap` events (timer jumps
  logged by blocks; merged across blocks into switched-out periods, those >= `gap_threshold_ns`
  kept), with the running slices between them; (b) `ctx_switch` events (nsys
  GPU_CONTEXT_SWITCH_EVENTS); (c) kernels of different processes/contexts that overlap in time
  (without MPS they cannot run at once: they were time-sliced); (d) kernels stretched past 1.5x
  the median duration of their name and grid by at least the gap threshold. Informational unless
  `max_gap_ns` is set (a longer switched-out period = violated).

Preconditions (traces/preconditions.py, NOTE(source-missing)): each property names what it needs
from the trace (`PRECONDITIONS`): `exactly_once` correlation ids, `stream_order`, `launch_delay`
launch times, `priority_inversion` and `blocking` stream priorities and launch times, `timeslice`
per-block timer stamps or context-switch records, all of them timestamps. Where the header's
`source.missing` (else what the events show) says the trace lacks one, a property that found
nothing is `unknown`, with the reason and what would supply it (`missing` in JSON), never `ok`; a
property that found something keeps its verdict. A trace whose streams all *have* one recorded
priority still decides priority inversion (none is possible): only a missing record is unknown.

Memory is linear in the number of kernels (one small record per launch), not in the events.
"""

from __future__ import annotations

import bisect
import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable

from gpcheck.spec.errors import TraceError, UsageError
from gpcheck.traces.format import Event, TraceHeader, open_trace
from gpcheck.traces.latency import check_blocking, check_launch_delay, render_stats, short_label, timeslice_stats
from gpcheck.traces.names import PriorityNames, short_kernel_name
from gpcheck.traces.preconditions import PRECONDITIONS, describe, missing_of, not_judged, settle, unlaunched, untimed
from gpcheck.traces.observe_types import (
    INFO,
    Launch,
    OK,
    ObserveOptions,
    PropertyResult,
    UNKNOWN,
    VIOLATED,
    _by_stream,
)

PROPERTIES = ("exactly_once", "stream_order", "priority_inversion", "timeslice", "launch_delay", "blocking")
SHOW = 50  # findings listed per property (all are counted)


@dataclass
class ObservationReport:
    trace: str
    model: str | None
    events: int
    kernels: int
    streams: int
    results: list[PropertyResult]
    names: PriorityNames | None = None
    missing: list[dict[str, Any]] = field(default_factory=list)  # what the trace's source lacks

    @property
    def exit_code(self) -> int:
        """1 a property is violated; 3 one is unknown (the trace cannot decide it, or has no kernel
        launches); else 0."""
        if any(r.status == VIOLATED for r in self.results):
            return 1
        return 3 if any(r.status == UNKNOWN for r in self.results) else 0

    def to_json(self) -> dict[str, Any]:
        return {"trace": self.trace, "model": self.model, "events": self.events, "kernels": self.kernels,
                "streams": self.streams, "results": [r.to_json() for r in self.results],
                "source_missing": self.missing, "exit_code": self.exit_code}


# ---------------------------------------------------------------------------------------------
# Collecting


@dataclass
class _Collected:
    header: TraceHeader
    launches: dict[tuple[Any, ...], Launch]
    order: list[tuple[Any, ...]]
    gaps: list[tuple[int, int, dict[str, Any]]]
    switches: list[tuple[int, dict[str, Any]]]
    events: int
    timed: bool
    missing: dict[str, dict[str, Any]] = field(default_factory=dict)  # field -> source.missing entry

    def lacks(self, prop: str) -> list[dict[str, Any]]:
        """The `source.missing` entries (whole, not partial) that `prop` needs."""
        return [self.missing[f] for f in PRECONDITIONS.get(prop, ()) if f in self.missing
                and not self.missing[f].get("partial")]


def collect(header: TraceHeader, events: Iterable[Event], path: str) -> _Collected:
    """One pass over the events: a Launch record per correlation id, plus gap/ctx_switch events."""
    launches: dict[tuple[Any, ...], Launch] = {}
    order: list[tuple[Any, ...]] = []
    fifo: dict[tuple[str, Any], int] = {}
    gaps: list[tuple[int, int, dict[str, Any]]] = []
    switches: list[tuple[int, dict[str, Any]]] = []
    n = 0
    timed = True
    for ev in events:
        n += 1
        meta = ev.meta or {}
        if ev.action in ("launch", "start", "end"):
            if "stream" not in ev.args:
                raise TraceError(f"{path}:{ev.line}: a '{ev.action}' event needs args.stream")
            stream = ev.args["stream"]
            corr = meta.get("corr")
            if corr is None:  # no correlation ids: match launches, starts and ends per stream in order
                i = fifo.get((ev.action, stream), 0)
                fifo[(ev.action, stream)] = i + 1
                key: tuple[Any, ...] = (None, "fifo", stream, i)
            else:
                key = (meta.get("pid"), corr)
            rec = launches.get(key)
            if rec is None:
                rec = launches[key] = Launch(key)
                order.append(key)
            if rec.stream is None:
                rec.stream = stream
            if rec.priority is None and isinstance(ev.args.get("priority"), int):
                rec.priority = ev.args["priority"]
            for k, v in meta.items():
                rec.meta.setdefault(k, v)
            t = int(ev.t) if ev.t is not None else None
            timed = timed and t is not None
            point = (t, ev.line)
            if ev.action == "launch":
                if rec.launch is None:
                    rec.launch = point
                else:
                    rec.meta.setdefault("_dup_launch", []).append(ev.line)
            elif ev.action == "start":
                rec.starts.append(point)
            else:
                rec.ends.append(point)
        elif ev.action == "gap":
            length = meta.get("length_ns")
            if ev.t is None or not isinstance(length, int):
                raise TraceError(f"{path}:{ev.line}: a 'gap' event needs t and meta.length_ns")
            gaps.append((int(ev.t), length, meta))
        elif ev.action == "ctx_switch" and ev.t is not None:
            switches.append((int(ev.t), meta))
    return _Collected(header, launches, order, gaps, switches, n, timed)


# ---------------------------------------------------------------------------------------------
# Properties


def _line(p: tuple[int | None, int] | None) -> int | None:
    return p[1] if p else None


def check_exactly_once(c: _Collected) -> PropertyResult:
    found: list[dict[str, Any]] = []
    for key in c.order:
        L = c.launches[key]
        where = {"kernel": L.label(), "stream": L.stream}
        if L.launch is None:
            found.append({**where, "kind": "unlogged_launch", "line": _line((L.starts or L.ends)[0]),
                          "message": f"{short_label(L)}: started/completed, but its launch was never logged"})
        for ln in L.meta.get("_dup_launch", []):
            found.append({**where, "kind": "duplicate_launch", "line": ln,
                          "message": f"{short_label(L)}: launched again (line {ln}) with the same correlation id"})
        if len(L.starts) > 1:
            found.append({**where, "kind": "duplicate_start", "line": L.starts[1][1],
                          "message": f"{short_label(L)}: started {len(L.starts)} times (lines {[s[1] for s in L.starts]})"})
        if len(L.ends) > 1:
            found.append({**where, "kind": "duplicate_completion", "line": L.ends[1][1],
                          "message": f"{short_label(L)}: completed {len(L.ends)} times (lines {[e[1] for e in L.ends]})"})
        if L.ends and not L.starts:
            found.append({**where, "kind": "end_without_start", "line": L.ends[0][1],
                          "message": f"{short_label(L)}: completed without a start"})
        if L.launch is not None and not L.ends:
            found.append({**where, "kind": "missing_completion", "line": L.launch[1],
                          "message": f"{short_label(L)}: launched (line {L.launch[1]}) but never completed"
                                     + ("" if L.starts else ", never started")})
    # logical kernels (relaunches share meta.kernel)
    logical: dict[Any, list[Launch]] = {}
    for key in c.order:
        L = c.launches[key]
        if "kernel" in L.meta:
            logical.setdefault((key[0], L.meta["kernel"]), []).append(L)
    for (_, name), ls in logical.items():
        # block-level preemption recordings count work in logical blocks (`logical_blocks` of them)
        grid = next((L.meta.get("logical_blocks", L.meta.get("grid")) for L in ls
                     if isinstance(L.meta.get("logical_blocks", L.meta.get("grid")), int)), None)
        if grid is None:
            continue
        work = 0
        for L in ls:
            for _ in L.ends:
                w = L.meta.get("work")
                work += w if isinstance(w, int) else grid
        corrs = [L.key[-1] for L in ls]
        if work > grid:
            found.append({"kind": "re_execution", "kernel": name, "work": work, "grid": grid, "launches": corrs,
                          "line": ls[-1].ends[0][1] if ls[-1].ends else None,
                          "message": f"logical kernel {name}: {work} blocks completed for a grid of {grid} "
                                     f"({work / grid:g}x) over launches {corrs}: it ran twice"})
        elif work < grid and all(L.ends for L in ls):
            found.append({"kind": "loss", "kernel": name, "work": work, "grid": grid, "launches": corrs,
                          "line": ls[-1].ends[0][1],
                          "message": f"logical kernel {name}: only {work} of {grid} blocks completed over "
                                     f"launches {corrs}, and no launch of it is outstanding"})
    n = len(c.order)
    rex = sum(1 for f in found if f["kind"] == "re_execution")
    summary = (f"{n} launches, each started and completed once" + (f"; {len(logical)} logical kernels, none "
               f"re-executed or lost" if logical else "")) if not found else \
        f"{len(found)} violation(s) over {n} launches" + (f" ({rex} logical kernel(s) ran twice)" if rex else "")
    return PropertyResult("exactly_once", VIOLATED if found else OK, summary, found[:SHOW], len(found))


def _pos(p: tuple[int | None, int], timed: bool) -> int:
    return p[0] if timed and p[0] is not None else p[1]


def check_stream_order(c: _Collected, opts: ObserveOptions) -> PropertyResult:
    found: list[dict[str, Any]] = []
    timed = c.timed
    for s, ls in sorted(_by_stream(c).items()):
        launched = sorted((L for L in ls if L.launch and L.starts), key=lambda L: (_pos(L.launch, timed), L.launch[1]))  # type: ignore[arg-type]
        for L in launched:
            if _pos(L.starts[0], timed) < _pos(L.launch, timed):  # type: ignore[arg-type]
                found.append({"kind": "start_before_launch", "stream": s, "kernel": L.label(), "line": L.starts[0][1],
                              "message": f"stream {s}: {short_label(L)} starts before its launch"})
        started = sorted((L for L in ls if L.starts), key=lambda L: (_pos(L.starts[0], timed), L.starts[0][1]))
        rank = {id(L): i for i, L in enumerate(launched)}
        prev: Launch | None = None
        for L in started:
            if prev is not None:
                if id(L) in rank and id(prev) in rank and rank[id(L)] < rank[id(prev)]:
                    found.append({"kind": "out_of_order", "stream": s, "kernel": L.label(), "line": L.starts[0][1],
                                  "message": f"stream {s}: {short_label(L)} was launched before {short_label(prev)} "
                                             f"but started after it"})
                if prev.ends:
                    overlap = _pos(prev.ends[0], timed) - _pos(L.starts[0], timed)
                    if overlap > (opts.overlap_tolerance_ns if timed else 0):
                        found.append({"kind": "overlap", "stream": s, "kernel": L.label(), "line": L.starts[0][1],
                                      "overlap_ns": overlap if timed else None,
                                      "message": f"stream {s}: {short_label(L)} starts "
                                                 + (f"{overlap} ns " if timed else "") +
                                                 f"before {short_label(prev)} ends"})
                elif prev.starts:
                    found.append({"kind": "overlap", "stream": s, "kernel": L.label(), "line": L.starts[0][1],
                                  "message": f"stream {s}: {short_label(L)} starts while {short_label(prev)} never ended"})
            prev = L
    n = len(_by_stream(c))
    summary = f"{n} stream(s): kernels started in launch order, none overlapping" if not found else \
        f"{len(found)} violation(s) in {len({f['stream'] for f in found})} stream(s)"
    return PropertyResult("stream_order", VIOLATED if found else OK, summary, found[:SHOW], len(found))


def check_priority_inversion(c: _Collected, opts: ObserveOptions) -> PropertyResult:
    if not c.timed:
        return untimed("priority_inversion")
    ls = [c.launches[k] for k in c.order]
    prios = {L.priority for L in ls if L.priority is not None}
    if len(prios) < 2:
        return PropertyResult("priority_inversion", OK, "fewer than two priority levels: no inversion possible"
                              if prios else "no priorities in the trace")
    started = sorted((L for L in ls if L.starts and L.priority is not None), key=lambda L: L.t_start)  # type: ignore[arg-type,return-value]
    starts = [L.t_start for L in started]
    # the stream predecessor of each launch (previous launch in the same stream)
    pred_end: dict[int, int | None] = {}
    for s, sl in _by_stream(c).items():
        sl = sorted((L for L in sl if L.launch), key=lambda L: (L.t_launch, L.launch[1]))  # type: ignore[index]
        for a, b in zip(sl, sl[1:]):
            pred_end[id(b)] = a.t_end
    windows = []
    names = PriorityNames(c.header)
    for h in ls:
        if h.priority is None or h.launch is None or not h.starts or h.t_launch is None:
            continue
        lo = bisect.bisect_left(starts, h.t_launch)
        hi = bisect.bisect_left(starts, h.t_start)
        lower = [L for L in started[lo:hi] if L.priority < h.priority]  # type: ignore[operator]
        if not lower:
            continue
        eligible = max(h.t_launch, pred_end.get(id(h)) or h.t_launch)
        w0 = max(lower[0].t_start, eligible)  # type: ignore[type-var]
        dur = h.t_start - w0  # type: ignore[operator]
        if dur <= 0:
            continue
        windows.append({"kind": "inversion", "kernel": h.label(), "stream": h.stream, "priority": h.priority,
                        "line": h.starts[0][1], "start": w0, "end": h.t_start, "duration_ns": dur,
                        "queued_ns": h.t_start - h.t_launch,  # type: ignore[operator]
                        "source_priority": names.source(h.stream, h.priority),
                        "lower_started": [f"{L.label()} @stream {L.stream} prio {L.priority}" for L in lower[:5]],
                        "lower_count": len(lower),
                        "message": f"{short_label(h)} (stream {h.stream}, {names.label(h.stream, h.priority)}) waited "
                                   f"{dur / 1e3:.1f} us after {len(lower)} lower-priority kernel(s) started ahead of it, "
                                   f"first {short_label(lower[0])} (stream {lower[0].stream}, "
                                   f"{names.label(lower[0].stream, lower[0].priority)})"})
    worst = max(windows, key=lambda w: w["duration_ns"]) if windows else None
    total = sum(w["duration_ns"] for w in windows)
    short = short_label(next(h for h in ls if h.label() == worst["kernel"])) if worst else ""
    unjudged = unlaunched([L for L in ls if L.priority is not None and L.priority > min(prios)])
    if unjudged is not None and not windows:
        return unjudged
    status = OK if not windows else INFO
    if worst is not None and opts.max_inversion_ns is not None and worst["duration_ns"] > opts.max_inversion_ns:
        status = VIOLATED
    summary = "no inversion window" if not windows else \
        f"{len(windows)} window(s), worst {worst['duration_ns'] / 1e3:.1f} us ({short}), " \
        f"total {total / 1e3:.1f} us" + (f"; bound {opts.max_inversion_ns / 1e3:.1f} us"  # type: ignore[index]
                                         if opts.max_inversion_ns is not None else "")
    summary += not_judged([L for L in ls if L.priority is not None and L.priority > min(prios)])
    return PropertyResult("priority_inversion", status, summary, windows[:SHOW], len(windows), worst)


def _merge(intervals: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """Union of [a, b) intervals, each with how many inputs it merged."""
    out: list[list[int]] = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
            out[-1][2] += 1
        else:
            out.append([a, b, 1])
    return [(a, b, n) for a, b, n in out]


def check_timeslice(c: _Collected, opts: ObserveOptions) -> PropertyResult:
    if not c.timed:
        return untimed("timeslice")
    thr = opts.gap_threshold_ns
    found: list[dict[str, Any]] = []
    periods_all: list[int] = []
    period_items: list[tuple[int, Launch | None]] = []
    spans: list[tuple[int, int, Launch | None]] = []
    # (a) in-kernel gaps, merged across blocks of one launch
    per_launch: dict[tuple[Any, ...], list[tuple[int, int]]] = {}
    for t, length, meta in c.gaps:
        per_launch.setdefault((meta.get("pid"), meta.get("corr")), []).append((t, t + length))
    for key, iv in sorted(per_launch.items(), key=lambda kv: str(kv[0])):
        periods = [p for p in _merge(iv) if p[1] - p[0] >= thr]
        if not periods:
            continue
        L = c.launches.get(key)
        lens = [b - a for a, b, _ in periods]
        periods_all += lens
        slices = [b2 - a1 for (_, a1, _), (b2, _, _) in zip(periods, periods[1:])]
        period_items += [(x, L) for x in lens]
        spans += [(a, b, L) for a, b, _ in periods]
        first_run = periods[0][0] - (L.t_start or periods[0][0]) if L else None
        found.append({"kind": "switched_out", "kernel": L.label() if L else str(key), "stream": L.stream if L else None,
                      "periods": len(periods), "total_ns": sum(lens), "max_ns": max(lens),
                      "median_slice_ns": int(statistics.median(slices)) if slices else first_run,
                      "blocks_seeing_gaps": len({m.get("block") for _, _, m in c.gaps if (m.get("pid"), m.get("corr")) == key}),
                      "message": f"{short_label(L) if L else key}: switched out {len(periods)} time(s), "
                                 f"{sum(lens) / 1e6:.2f} ms in all (longest {max(lens) / 1e6:.2f} ms), running in "
                                 f"slices of ~{(statistics.median(slices) if slices else first_run or 0) / 1e6:.2f} ms"})
    # (a') launches without gap events whose blocks logged a large timer jump (recorder's meta.max_gap_ns)
    for key in c.order:
        L = c.launches[key]
        jump = L.meta.get("max_gap_ns")
        if isinstance(jump, int) and jump >= thr and key not in per_launch:
            found.append({"kind": "timer_jump", "kernel": L.label(), "stream": L.stream, "max_gap_ns": jump,
                          "message": f"{short_label(L)}: a block's %globaltimer jumped {jump / 1e6:.2f} ms between "
                                     f"two reads (switched out or stalled; no gap log says when)"})
    # (b) context-switch records
    if c.switches:
        by_ctx: dict[Any, list[int]] = {}
        for t, meta in c.switches:
            by_ctx.setdefault(meta.get("contextId", meta.get("context")), []).append(t)
        for ctx, ts in sorted(by_ctx.items(), key=lambda kv: str(kv[0])):
            found.append({"kind": "ctx_switches", "context": ctx, "count": len(ts),
                          "message": f"context {ctx}: {len(ts)} context-switch record(s)"})
    # (c) kernels of different processes/contexts that overlap in time
    ls = sorted((c.launches[k] for k in c.order if c.launches[k].starts and c.launches[k].ends),
                key=lambda L: L.t_start)  # type: ignore[arg-type,return-value]

    def owner(L: Launch) -> tuple[Any, Any]:
        return (L.key[0] if L.key[0] is not None else L.meta.get("pid"), L.meta.get("context"))

    active: list[Launch] = []
    for L in ls:
        active = [A for A in active if A.t_end > L.t_start]  # type: ignore[operator]
        for A in active:
            if owner(A) != owner(L) and (owner(A)[0] is not None or owner(A)[1] is not None):
                ov = min(A.t_end, L.t_end) - L.t_start  # type: ignore[type-var,operator]
                found.append({"kind": "cross_context_overlap", "kernel": L.label(), "other": A.label(),
                              "overlap_ns": ov,
                              "message": f"{short_label(A)} and {short_label(L)} (different processes/contexts) overlap "
                                         f"for {ov / 1e6:.2f} ms: without MPS they were time-sliced, not concurrent"})
        active.append(L)
    # (d) kernels stretched past the median duration of their name and grid size
    by_name: dict[tuple[str, str], list[Launch]] = {}
    for L in ls:
        by_name.setdefault((L.name, str(L.meta.get("grid"))), []).append(L)
    for (name, _), group in sorted(by_name.items()):
        if len(group) < 3:
            continue
        med = statistics.median(L.t_end - L.t_start for L in group)  # type: ignore[operator]
        for L in group:
            d = L.t_end - L.t_start  # type: ignore[operator]
            if d > 1.5 * med and d - med >= thr:
                found.append({"kind": "stretched", "kernel": L.label(), "stream": L.stream, "duration_ns": d,
                              "median_ns": int(med), "excess_ns": int(d - med),
                              "message": f"{short_label(L)}: ran {d / 1e6:.2f} ms against a median of {med / 1e6:.2f} ms "
                                         f"for {name!r} (+{(d - med) / 1e6:.2f} ms: preempted or starved of slots)"})
    status = INFO if found else OK
    worst = None
    if periods_all:
        worst = {"max_switched_out_ns": max(periods_all), "periods": len(periods_all)}
        if opts.max_gap_ns is not None and max(periods_all) > opts.max_gap_ns:
            status = VIOLATED
    kinds: dict[str, int] = {}
    for f in found:
        kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
    summary = "no sign of preemption or time slicing" if not found else \
        ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in kinds.items()) + \
        (f"; longest switched-out period {max(periods_all) / 1e6:.2f} ms" if periods_all else "")
    stats = timeslice_stats(period_items, spans, PriorityNames(c.header)) if period_items else None
    return PropertyResult("timeslice", status, summary, found[:SHOW], len(found), worst, stats=stats)


# ---------------------------------------------------------------------------------------------
# Entry points


def observe_events(header: TraceHeader, events: Iterable[Event], path: str = "<trace>",
                   properties: Iterable[str] | None = None, opts: ObserveOptions = ObserveOptions()) -> ObservationReport:
    """Check the observation properties on events already read (see module doc)."""
    props = list(properties) if properties else list(PROPERTIES)
    for p in props:
        if p not in PROPERTIES:
            raise UsageError(f"unknown observation property {p!r} (known: {', '.join(PROPERTIES)})")
    c = collect(header, events, path)
    missing = missing_of(c)
    c.missing = {str(m["field"]): m for m in missing}
    names = PriorityNames(header)
    results = []
    for p in PROPERTIES:
        if p not in props:
            continue
        if p == "exactly_once":
            r = check_exactly_once(c)
        elif p == "stream_order":
            r = check_stream_order(c, opts)
        elif p == "priority_inversion":
            r = check_priority_inversion(c, opts)
        elif p == "timeslice":
            r = check_timeslice(c, opts)
        elif p == "launch_delay":
            r = check_launch_delay(c, opts, names)
        else:
            r = check_blocking(c, opts, names)
        results.append(settle(r, c))
    if not c.launches:
        # nothing was observed to check: saying `ok` would claim what the trace cannot show
        why = ("the trace has no kernel launches, so there is nothing to check (a model's behaviour? "
               "check it with `gpcheck replay TRACE --model SPEC`)")
        results = [PropertyResult(r.name, UNKNOWN, why) if r.status != VIOLATED else r for r in results]
    streams = len({L.stream for L in c.launches.values() if L.stream is not None})
    return ObservationReport(path, header.model, c.events, len(c.launches), streams, results, names, missing)


def observe(path: str, properties: Iterable[str] | None = None,
            opts: ObserveOptions = ObserveOptions()) -> ObservationReport:
    """Read a trace file (streaming) and check the observation properties on it."""
    with open_trace(path) as tr:
        return observe_events(tr.header, tr, path, properties, opts)


def render_text(r: ObservationReport, details: int = 10) -> str:
    """The summary table, then up to `details` findings per property."""
    out = [f"{r.trace}: {r.events} events, {r.kernels} launches, {r.streams} stream(s)"
           + (f", model {r.model}" if r.model else "")]
    w = max(len(p.name) for p in r.results) if r.results else 8
    out.append(f"  {'property':<{w}}  {'status':<9} summary")
    for p in r.results:
        out.append(f"  {p.name:<{w}}  {p.status:<9} {p.summary}")
    for p in r.results:
        if not p.findings or details <= 0:
            continue
        out.append(f"\n{p.name}:")
        for f in p.findings[:details]:
            line = f" (line {f['line']})" if f.get("line") else ""
            out.append(f"  - {f['message']}{line}")
        if p.count > min(details, len(p.findings)):
            out.append(f"  ... {p.count - min(details, len(p.findings))} more (--json lists up to {SHOW})")
    undecided = [p for p in r.results if p.status == UNKNOWN and p.missing]
    if undecided:
        out.append("\nwhat would decide the unknown properties:")
        for p in undecided:
            for m in p.missing or []:
                out.append(f"  {p.name}: {m.get('remedy') or describe(m)}")
    out += render_stats(r.results, r.names or PriorityNames(TraceHeader()))
    return "\n".join(out)

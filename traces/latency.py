"""The latencies people record GPU traces for, per stream and per priority level (`gpcheck check`):

- `launch_delay`: launch-to-start delay of each kernel (its launch call to its first block);
  median, p99 and max, with the kernel that had the max. Over `max_delay_ns`: violated.
- `blocking`: how long a kernel waited, once eligible (launched, stream predecessor ended), while
  lower-priority kernels that were *already running* when it became eligible held the GPU: from
  eligibility until the earlier of its start and the last of those kernels' ends. Running blocks
  are not evicted (research/gpu_traces.md 5.3), so this is the blocking an urgent stream pays for
  work admitted before it arrived; `priority_inversion` (traces/observe.py) counts the other
  kind, lower kernels *started* while it was queued. Over `max_blocking_ns`: violated.
- time-slice periods: the switched-out periods and running slices that `timeslice` finds from
  in-kernel gaps, per stream (`timeslice_stats`, added to that property's stats).

Percentiles are nearest-rank over the kernels of the group. Everything is computed from the
Launch records `traces/observe.py` collects (memory linear in kernels).
"""

from __future__ import annotations

import bisect
import math
from typing import TYPE_CHECKING, Any, Iterable

from gpcheck.traces.names import PriorityNames, short_kernel_name

if TYPE_CHECKING:
    from gpcheck.traces.observe_types import Launch, ObserveOptions, PropertyResult
    from gpcheck.traces.observe import _Collected

SHOW = 50


def stat(items: Iterable[tuple[int, "Launch | None"]]) -> dict[str, Any] | None:
    """count, median, p99 and max of (value, launch) pairs, with the launch that had the max."""
    xs = sorted(items, key=lambda x: x[0])
    if not xs:
        return None
    n = len(xs)

    def rank(q: float) -> int:
        return xs[max(math.ceil(q * n) - 1, 0)][0]

    top, L = xs[-1]
    out: dict[str, Any] = {"count": n, "median_ns": rank(0.5), "p99_ns": rank(0.99), "max_ns": top}
    if L is not None:
        out["max_kernel"] = L.label()
        out["max_line"] = L.starts[0][1] if L.starts else None
    return out


def _grouped(c: "_Collected", values: list[tuple[int, "Launch"]], names: PriorityNames) -> dict[str, Any]:
    by_stream: dict[Any, list[tuple[int, Launch]]] = {}
    by_level: dict[Any, list[tuple[int, Launch]]] = {}
    for v, L in values:
        by_stream.setdefault(L.stream, []).append((v, L))
        by_level.setdefault(L.priority, []).append((v, L))
    streams = []
    for s, vs in sorted(by_stream.items(), key=lambda kv: str(kv[0])):
        lv = vs[0][1].priority
        streams.append({"stream": s, "priority": lv, "source_priority": names.source(s, lv), **(stat(vs) or {})})
    levels = []
    for lv, vs in sorted(by_level.items(), key=lambda kv: (kv[0] is None, kv[0] or 0), reverse=True):
        levels.append({"priority": lv, "source_priority": names.source(vs[0][1].stream, lv), **(stat(vs) or {})})
    return {"all": stat(values), "streams": streams, "priorities": levels}


def check_launch_delay(c: "_Collected", opts: "ObserveOptions", names: PriorityNames) -> "PropertyResult":
    from gpcheck.traces.observe_types import OK, UNKNOWN, VIOLATED, PropertyResult
    from gpcheck.traces.preconditions import entry, untimed

    if not c.timed:
        return untimed("launch_delay")
    values = []
    for k in c.order:
        L = c.launches[k]
        if L.t_launch is not None and L.t_start is not None and L.meta.get("launch_from") != "kernel":
            values.append((L.t_start - L.t_launch, L))
    if not values:
        m = entry("launch_time", None, "no kernel has both a launch time of its own and a start time")
        return PropertyResult("launch_delay", UNKNOWN, str(m["reason"]), missing=[m])
    stats = _grouped(c, values, names)
    over = []
    if opts.max_delay_ns is not None:
        over = sorted((v, L) for v, L in values if v > opts.max_delay_ns)
    findings = [_finding("delay_over_bound", v, L, names, "waited", "from launch to start") for v, L in
                sorted(over, key=lambda x: -x[0])[:SHOW]]
    a = stats["all"]
    summary = (f"{a['count']} kernels: median {_us(a['median_ns'])}, p99 {_us(a['p99_ns'])}, max {_us(a['max_ns'])} "
               f"({short_kernel_name(a['max_kernel'])})")
    if opts.max_delay_ns is not None:
        summary += f"; {len(over)} over {_us(opts.max_delay_ns)}"
    status = VIOLATED if over else OK  # a distribution, not a finding: ok unless over the bound
    return PropertyResult("launch_delay", status, summary, findings, len(over) if over else 0,
                          {"delay_ns": a["max_ns"], "kernel": a["max_kernel"]}, stats=stats)


def check_blocking(c: "_Collected", opts: "ObserveOptions", names: PriorityNames) -> "PropertyResult":
    from gpcheck.traces.observe_types import INFO, OK, VIOLATED, PropertyResult, _by_stream
    from gpcheck.traces.preconditions import not_judged, unlaunched, untimed

    if not c.timed:
        return untimed("blocking")
    ls = [c.launches[k] for k in c.order]
    ran = [L for L in ls if L.priority is not None and L.t_start is not None and L.t_end is not None]
    levels = sorted({L.priority for L in ran})  # type: ignore[type-var]
    if len(levels) < 2:
        return PropertyResult("blocking", OK, "fewer than two priority levels: no blocking by lower-priority work"
                              if levels else "no priorities in the trace")
    pred_end: dict[int, int | None] = {}
    for sl in _by_stream(c).values():
        sl = sorted((L for L in sl if L.launch), key=lambda L: (L.t_launch, L.launch[1]))  # type: ignore[index]
        for a, b in zip(sl, sl[1:]):
            pred_end[id(b)] = a.t_end
    # per level p: kernels of lower levels by start, with the running max of their ends
    below: dict[int, tuple[list[int], list[int]]] = {}
    for p in levels[1:]:
        lower = sorted((L for L in ran if L.priority < p), key=lambda L: L.t_start)  # type: ignore[operator,arg-type,return-value]
        starts, ends, m = [], [], -1
        for L in lower:
            m = max(m, L.t_end)  # type: ignore[type-var]
            starts.append(L.t_start)
            ends.append(m)
        below[p] = (starts, ends)  # type: ignore[assignment]
    higher = [h for h in ran if h.priority != levels[0]]
    unjudged = unlaunched(higher, "blocking")
    if unjudged is not None:
        return unjudged
    values = []
    for h in higher:
        if h.t_launch is None or h.meta.get("launch_from") == "kernel":
            continue
        eligible = max(h.t_launch, pred_end.get(id(h)) or h.t_launch)
        starts, ends = below[h.priority]  # type: ignore[index]
        i = bisect.bisect_right(starts, eligible)
        held_until = ends[i - 1] if i else eligible
        values.append((max(0, min(h.t_start, held_until) - eligible), h))  # type: ignore[type-var,operator]
    if not values:
        return PropertyResult("blocking", OK, "no higher-priority kernel with a launch time")
    stats = _grouped(c, values, names)
    blocked = sorted(((v, L) for v, L in values if v > 0), key=lambda x: -x[0])
    stats["blocked"] = len(blocked)
    over = [(v, L) for v, L in blocked if opts.max_blocking_ns is not None and v > opts.max_blocking_ns]
    shown = over if opts.max_blocking_ns is not None else blocked
    findings = [_finding("blocked", v, L, names, "was blocked", "by lower-priority kernels already running")
                for v, L in shown[:SHOW]]
    a = stats["all"]
    summary = (f"{len(blocked)} of {a['count']} higher-priority kernels blocked by running lower-priority work; "
               f"median {_us(a['median_ns'])}, p99 {_us(a['p99_ns'])}, max {_us(a['max_ns'])}"
               + (f" ({short_kernel_name(a['max_kernel'])})" if a["max_ns"] else ""))
    if opts.max_blocking_ns is not None:
        summary += f"; {len(over)} over {_us(opts.max_blocking_ns)}"
    summary += not_judged(higher)
    status = VIOLATED if over else (INFO if blocked else OK)
    worst = {"blocking_ns": a["max_ns"], "kernel": a.get("max_kernel")} if blocked else None
    return PropertyResult("blocking", status, summary, findings, len(shown), worst, stats=stats)


def timeslice_stats(periods: list[tuple[int, "Launch | None"]], spans: list[tuple[int, int, "Launch | None"]],
                    names: PriorityNames) -> dict[str, Any]:
    """Switched-out periods, overall and per stream, and the running slices between them: per
    stream, the time from the end of one switched-out period to the start of the next (the slice
    the stream ran for; meaningful while it has work queued, as in a time-slicing recording)."""
    by: dict[Any, tuple[list[Any], list[Any]]] = {}
    for v, L in periods:
        by.setdefault(L.stream if L else None, ([], []))[0].append((v, L))
    per_stream: dict[Any, list[tuple[int, int, Any]]] = {}
    for a, b, L in spans:
        per_stream.setdefault(L.stream if L else None, []).append((a, b, L))
    slices: list[tuple[int, Any]] = []
    for s, iv in per_stream.items():
        iv.sort(key=lambda x: x[0])
        got = [(n[0] - p[1], n[2]) for p, n in zip(iv, iv[1:]) if n[0] > p[1]]
        by.setdefault(s, ([], []))[1].extend(got)
        slices += got
    streams = [{"stream": s, "switched_out": stat(p), "running_slices": stat(q)}
               for s, (p, q) in sorted(by.items(), key=lambda kv: str(kv[0]))]
    return {"switched_out": stat(periods), "running_slices": stat(slices), "streams": streams}


def _finding(kind: str, v: int, L: "Launch", names: PriorityNames, verb: str, what: str) -> dict[str, Any]:
    return {"kind": kind, "kernel": L.label(), "stream": L.stream, "priority": L.priority,
            "source_priority": names.source(L.stream, L.priority), "duration_ns": v,
            "line": L.starts[0][1] if L.starts else None,
            "message": f"{short_label(L)} (stream {L.stream}, {names.label(L.stream, L.priority)}) {verb} "
                       f"{_us(v)} {what}"}


def short_label(L: "Launch") -> str:
    """`Launch.label()` with the kernel name shortened (text output)."""
    corr = L.key[-1]
    return f"{short_kernel_name(L.name)} (corr {corr}{', pid ' + str(L.key[0]) if L.key[0] is not None else ''})"


def _us(ns: int | float) -> str:
    if abs(ns) >= 10_000_000:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e3:.1f} us"


def render_stats(results: list["PropertyResult"], names: PriorityNames) -> list[str]:
    """Text lines: each latency distribution per stream and per priority level."""
    out: list[str] = []
    for r in results:
        st = r.stats
        if not st:
            continue
        if r.name in ("launch_delay", "blocking"):
            title = {"launch_delay": "launch-to-start delay", "blocking": "blocking by running lower-priority work"}[r.name]
            out.append(f"\n{title} (median / p99 / max):")
            for s in st["streams"]:
                out.append(f"  stream {s['stream']} ({names.label(s['stream'], s['priority'])}): " + _line(s))
            if len(st["priorities"]) > 1 or r.name == "blocking":
                for p in st["priorities"]:
                    out.append(f"  {names.label(None, p['priority']) if p['source_priority'] is None else _plabel(names, p)}: "
                               + _line(p))
        elif r.name == "timeslice" and st.get("switched_out"):
            out.append("\ntime-slice periods (median / p99 / max):")
            for s in st["streams"]:
                so, rs = s["switched_out"], s["running_slices"]
                txt = f"  stream {s['stream']}: "
                txt += (f"{so['count']} switched-out period(s) {_us(so['median_ns'])} / {_us(so['p99_ns'])} / "
                        f"{_us(so['max_ns'])}") if so else "not switched out"
                if rs:
                    txt += f"; running slices {_us(rs['median_ns'])} / {_us(rs['p99_ns'])} / {_us(rs['max_ns'])}"
                out.append(txt)
    return out


def _plabel(names: PriorityNames, p: dict[str, Any]) -> str:
    sp = p["source_priority"]
    return f"CUDA priority {sp}" if names.cuda else f"priority {sp}"


def _line(s: dict[str, Any]) -> str:
    if not s.get("count"):
        return "no kernels"
    txt = f"{s['count']} kernels, {_us(s['median_ns'])} / {_us(s['p99_ns'])} / {_us(s['max_ns'])}"
    if s.get("max_kernel") and s["max_ns"]:
        txt += f" (max: {short_kernel_name(s['max_kernel'].rsplit(' (corr ', 1)[0])}, line {s.get('max_line')})"
    return txt

"""What an observation check needs from a trace, and what a trace's source did not record.

Why: a check that finds nothing because the data it looks at was never recorded must not say
`ok` (issue 37: a Kineto trace has no stream priorities, so every stream came out at one level
and `priority_inversion` said "no inversion possible"). Each property of traces/observe.py and
traces/latency.py names its preconditions here (`PRECONDITIONS`); the importers write what their
source lacks into the header (`source.missing`, NOTE(source-missing)); `gpcheck check` turns an
`ok` that rests on a missing field into `unknown`, with the reason and what would decide it, and
`gpcheck import` / `gpcheck replay` print the same lines as warnings.

NOTE(source-missing): the header key `source.missing` is a list of objects
`{"field": F, "reason": ..., "remedy": ..., "needed_by": [...]}` (plus `"kernels": [n, of]` where
only some kernels lack it). Fields:

- `stream_priority`: the source records no stream priorities (every stream was put at level 0).
  Distinct from a recording whose streams all *have* one priority: that one decides "no
  inversion possible", this one decides nothing.
- `launch_time`: no kernel has a launch time (the launch was placed at the start), so how long a
  kernel was queued, and the order kernels were launched in, are unknown.
- `correlation_id`: no kernel carries the source's correlation id (ids were made up per kernel),
  so a launch that ran twice looks like two launches.
- `switch_evidence`: neither per-block timer stamps nor GPU context-switch records: a kernel
  switched out between its start and end looks the same as one that ran throughout.

A header with `source.missing` (even `[]`) is trusted as it is: a hand-written trace can state
`"source": {"missing": []}` to say its source recorded everything. A trace without it (older
imports, hand-written or simulated traces) is judged from its events (`infer_missing`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping

if TYPE_CHECKING:
    from gpcheck.traces.observe_types import Launch, PropertyResult
    from gpcheck.traces.observe import _Collected

# property -> the fields it needs (besides timestamps, checked by each property itself)
PRECONDITIONS: dict[str, tuple[str, ...]] = {
    "exactly_once": ("correlation_id",),
    "stream_order": ("launch_time",),
    "priority_inversion": ("stream_priority", "launch_time"),
    "timeslice": ("switch_evidence",),
    "launch_delay": ("launch_time",),
    "blocking": ("stream_priority", "launch_time"),
}

WHAT = {
    "stream_priority": "stream priorities",
    "launch_time": "kernel launch times",
    "correlation_id": "correlation ids",
    "switch_evidence": "per-block timer stamps or GPU context-switch records",
    "timestamps": "event timestamps",
}

_PRIORITY_FLAG = ("pass --stream-priority STREAM=PRIORITY at import (STREAM: the source's stream id, "
                  "as in the profiler's 'stream N' track, or kernel:PATTERN for the streams that ran a "
                  "kernel whose name matches, e.g. --stream-priority 'kernel:*softmax*=-5')")

# field -> format -> remedy ("*": any other source)
_REMEDY: dict[str, dict[str, str]] = {
    "stream_priority": {
        "kineto": _PRIORITY_FLAG + ", or record with nsys (TARGET_INFO_CUDA_STREAM) or CUPTI stream "
                  "records (gpcheck import --format cupti), which record priorities",
        "chrome": _PRIORITY_FLAG + " or give each kernel slice args.priority, or record with nsys/CUPTI, "
                  "which record priorities",
        "nsys": "export with the CUDA trace on (nsys profile --trace=cuda) so that TARGET_INFO_CUDA_STREAM "
                "is written, or " + _PRIORITY_FLAG,
        "rocprof": "rocprof records no queue priority: " + _PRIORITY_FLAG,
        "rocpd": "rocpd records no queue priority: " + _PRIORITY_FLAG,
        "*": _PRIORITY_FLAG + ", or give every kernel event args.priority",
    },
    "launch_time": {
        "kineto": "profile with the CPU-side CUDA runtime activity (torch.profiler ProfilerActivity.CUDA "
                  "records cudaLaunchKernel slices) or a CUPTI version that fills args.queued",
        "chrome": "add flow events (ph s/f) whose id is the kernel's correlation id, at the launch call",
        "nsys": "profile with --trace=cuda so that CUPTI_ACTIVITY_KIND_RUNTIME records the launch calls",
        "rocprof": "use rocprof v1's DispatchNs column, or rocprofv3 --output-format rocpd with API tracing",
        "rocpd": "profile with HIP API tracing (rocprofv3 --hip-trace) so that launch regions are recorded",
        "*": "log a `launch` event with its own time `t` before each kernel's `start`",
    },
    "correlation_id": {
        "chrome": "give each kernel slice args.correlation (the id of its launch call)",
        "rocprof": "use a rocprof CSV with Correlation_Id (rocprofv3) or Index (v1)",
        "*": "give each kernel's events meta.corr (the id of its launch call)",
    },
    "switch_evidence": {
        "nsys": "profile with --gpuctxsw=true (GPU_CONTEXT_SWITCH_EVENTS)",
        "*": "record with gpcheck's recorder (traces/record: per-block %globaltimer stamps and in-kernel gap "
             "logs) or with nsys --gpuctxsw=true (GPU context-switch records)",
    },
    "timestamps": {
        "*": "give every launch/start/end event its time `t` (ns)",
    },
}


def remedy(field: str, fmt: str | None) -> str:
    """What would supply `field` for a source of format `fmt`."""
    table = _REMEDY.get(field, {})
    return table.get(fmt or "*") or table.get("*", "")


def entry(field: str, fmt: str | None, reason: str, kernels: tuple[int, int] | None = None) -> dict[str, Any]:
    """One `source.missing` item (NOTE(source-missing))."""
    out: dict[str, Any] = {"field": field, "reason": reason, "remedy": remedy(field, fmt),
                           "needed_by": [p for p, need in PRECONDITIONS.items() if field in need]}
    if kernels is not None:
        out["kernels"] = list(kernels)
    return out


def source_of(header_extra: Mapping[str, Any]) -> dict[str, Any]:
    src = header_extra.get("source")
    return src if isinstance(src, dict) else {}


def declared_missing(header_extra: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The header's `source.missing`, or None when the header does not say."""
    src = source_of(header_extra)
    m = src.get("missing")
    if not isinstance(m, list):
        return None
    fmt = src.get("format") if isinstance(src.get("format"), str) else None
    out = []
    for x in m:  # a header is user input: keep only well-formed entries, with text fields as text
        if not isinstance(x, dict) or not isinstance(x.get("field"), str):
            continue
        f = x["field"]
        e = entry(f, fmt, x["reason"] if isinstance(x.get("reason"), str) else f"the source lacks {WHAT.get(f, f)}")
        if isinstance(x.get("remedy"), str):
            e["remedy"] = x["remedy"]
        if x.get("partial") is True:
            e["partial"] = True
            if isinstance(x.get("kernels"), list):
                e["kernels"] = x["kernels"]
        out.append(e)
    return out


def infer_missing(header_extra: Mapping[str, Any], launches: Iterable[Any], has_gaps: bool,
                  has_switches: bool) -> list[dict[str, Any]]:
    """What a trace without `source.missing` lacks, judged from its events (observe.Launch
    records): no `args.priority` on any kernel (or an older import that put every stream at level
    0), no launch time other than the start, no correlation id, no gap/ctx_switch/per-block stamp."""
    src = source_of(header_extra)
    fmt = src.get("format") if isinstance(src.get("format"), str) else None
    ls = list(launches)
    out = []
    convention = str(src.get("priority_convention", ""))
    if ls and all(L.priority is None for L in ls):
        out.append(entry("stream_priority", fmt, "the trace's kernel events carry no args.priority"))
    elif convention.startswith("no priorities in the source") and not src.get("priority_overrides"):
        out.append(entry("stream_priority", fmt, f"the source ({fmt}) records no stream priorities: "
                                                 f"the importer put every stream at level 0"))
    timed = [L for L in ls if L.launch is not None]
    if ls and all(L.meta.get("launch_from") == "kernel" or L.launch is None for L in ls):
        out.append(entry("launch_time", fmt, "no kernel has a launch time of its own (each launch is placed at "
                                             "its start)" if timed else "the trace logs no launch events"))
    if ls and all(L.meta.get("corr_synthetic") for L in ls):
        out.append(entry("correlation_id", fmt, "no kernel carries a correlation id from the source"))
    stamps = has_gaps or has_switches or fmt == "record" or any("max_gap_ns" in L.meta for L in ls)
    if not stamps:
        out.append(entry("switch_evidence", fmt, "the trace has no in-kernel gap events, no ctx_switch events "
                                                 "and no per-block timer stamps"))
    return out


def describe(m: Mapping[str, Any]) -> str:
    """One line: the reason, then what would decide it."""
    txt = str(m.get("reason", WHAT.get(str(m.get("field")), m.get("field"))))
    if m.get("remedy"):
        txt += f": {m['remedy']}"
    return txt


def warning_lines(missing: Iterable[Mapping[str, Any]]) -> list[str]:
    """The import/replay warnings: what is missing, which checks it leaves undecided, and how to
    supply it."""
    out = []
    for m in missing:
        needed = ", ".join(m.get("needed_by") or [])
        what = "judge only the kernels that have it" if m.get("partial") else "cannot be decided without it"
        out.append(f"{m.get('reason')}" + (f" ({needed} {what})" if needed else "")
                   + (f"; {m['remedy']}" if m.get("remedy") else ""))
    return out


# ---------------------------------------------------------------------------------------------
# Deciding a property's result (traces/observe.py, traces/latency.py)

# what an `ok` still established when a precondition is missing (None: nothing worth saying)
CHECKED = {"exactly_once": "every kernel record started and completed once",
           "stream_order": "no two kernels of a stream overlap; the launch order is not known",
           "timeslice": "no kernels of different processes overlap and none is stretched past its median"}


def untimed(name: str) -> "PropertyResult":
    """`unknown`: the trace's kernel events have no times."""
    from gpcheck.traces.observe_types import UNKNOWN, PropertyResult

    m = entry("timestamps", None, "the trace has kernel events without timestamps")
    return PropertyResult(name, UNKNOWN, str(m["reason"]), missing=[m])


def _no_launch(L: "Launch") -> bool:
    return L.t_launch is None or L.meta.get("launch_from") == "kernel"


def unlaunched(judged: list["Launch"], name: str = "priority_inversion") -> "PropertyResult | None":
    """`unknown` when every kernel that could suffer the property (`judged`, the higher-priority
    ones) lacks a launch time of its own, so none of them can be seen queued; else None."""
    from gpcheck.traces.observe_types import UNKNOWN, PropertyResult

    if not judged or not all(_no_launch(L) for L in judged):
        return None
    m = entry("launch_time", None, f"none of the {len(judged)} higher-priority kernels has a launch time of its "
                                   f"own (each launch was placed at its start)")
    return PropertyResult(name, UNKNOWN, str(m["reason"]), missing=[m])


def not_judged(judged: list["Launch"]) -> str:
    """A note for a summary: how many of `judged` had no launch time and could not be judged."""
    n = sum(1 for L in judged if _no_launch(L))
    return f"; {n} of {len(judged)} higher-priority kernels have no launch time and were not judged" if n else ""


def settle(r: "PropertyResult", c: "_Collected") -> "PropertyResult":
    """An `ok` that rests on something the trace lacks is `unknown`, with the reason and what would
    supply it; a property that found something (info, violated) keeps its verdict, with a note."""
    from gpcheck.traces.observe_types import OK, UNKNOWN, PropertyResult

    lacking = c.lacks(r.name)
    if r.status == UNKNOWN:
        # the property's own finding of a missing field, said as the header says it (its remedy
        # names the source's own flag or recorder)
        fields = {str(m.get("field")) for m in r.missing or []}
        same = [m for m in lacking if m.get("field") in fields]
        if same:
            r.summary, r.missing = "cannot be decided: " + "; ".join(str(m.get("reason")) for m in same), same
        return r
    if not lacking:
        return r
    reason = "; ".join(str(m.get("reason")) for m in lacking)
    if r.status != OK:
        r.summary += f" (also undecided where it needs what the trace lacks: {reason})"
        r.missing = lacking
        return r
    checked = CHECKED.get(r.name)
    summary = f"cannot be decided: {reason}" + (f" (checked: {checked})" if checked else "")
    return PropertyResult(r.name, UNKNOWN, summary, r.findings, r.count, r.worst, r.stats, lacking)


def missing_of(c: "_Collected") -> list[dict[str, Any]]:
    """The header's `source.missing`, else what the events show the trace lacks."""
    declared = declared_missing(c.header.extra)
    if declared is not None:
        return declared
    return infer_missing(c.header.extra, c.launches.values(), bool(c.gaps), bool(c.switches))


# ---------------------------------------------------------------------------------------------
# Replay: which model properties read a value the source did not record

# a missing field -> the event argument the importer filled in for it (a made-up value)
FILLED_ARG = {"stream_priority": "priority"}


def header_missing(header_extra: Mapping[str, Any]) -> list[dict[str, Any]]:
    """`source.missing`, or for an older import without it, the priorities its convention says
    the source did not record (replay has no Launch records to infer the rest from)."""
    declared = declared_missing(header_extra)
    if declared is not None:
        return declared
    src = source_of(header_extra)
    fmt = src.get("format") if isinstance(src.get("format"), str) else None
    if str(src.get("priority_convention", "")).startswith("no priorities in the source") \
            and not src.get("priority_overrides"):
        return [entry("stream_priority", fmt, f"the source ({fmt}) records no stream priorities: the importer put "
                                              f"every stream at level 0")]
    return []


def tainted_properties(model: Any, arg: str) -> dict[str, list[str]]:
    """Invariants and transition properties (name -> the variables) that read a variable whose
    value flows from a logged action's parameter named `arg` (through assignments, to a fixpoint;
    guards are not followed: a property of variables only guarded by it is kept)."""
    from gpcheck.spec import ir

    def reads(e: ir.Expr) -> set[Any]:
        return {x.var for x in ir.walk_expr(e) if isinstance(x, ir.VarRef)} | \
            {x.sym for x in ir.walk_expr(e) if isinstance(x, ir.LocalRef)}

    def target_var(e: ir.Expr) -> int | None:
        while isinstance(e, (ir.Index, ir.Field)):
            e = e.base
        return e.var if isinstance(e, ir.VarRef) else None

    tainted: set[int] = set()
    changed = True
    while changed:
        changed = False
        for a in model.actions:
            seeds: set[Any] = {p for p in a.params if p.name == arg and not a.internal}
            lets = set(seeds)
            for st in ir.iter_stmts(a.body):
                if isinstance(st, ir.Let) and reads(st.value) & (lets | tainted):
                    lets.add(st.sym)
                elif isinstance(st, ir.Assign) and reads(st.value) & (lets | tainted):
                    v = target_var(st.target)
                    if v is not None and v not in tainted:
                        tainted.add(v)
                        changed = True
    names = {v.index: v.name for v in model.vars}
    out = {}
    for p in list(model.invariants) + list(model.transitions):
        hit = sorted(names[v] for v in reads(p.expr) & tainted if isinstance(v, int))
        if hit:
            out[p.name] = hit
    return out

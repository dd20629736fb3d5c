"""`gpcheck import FILE [--format auto|nsys|kineto|chrome|rocprof|rocpd|cupti|record] --out TRACE`:
turn a real GPU trace into a gpcheck observation trace (traces/importers/).

The output is written whole or not at all (a temporary file renamed into place); the input is
only read. Prints what was imported (or one JSON object with --json); exit 0, or 2 on bad input."""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from gpcheck.checker.core import budget
from gpcheck.checker.cli.commands.common import write_out
from gpcheck.checker.cli.commands.flags import add_timeout_flag, ascii_int
from gpcheck.checker.cli.outputs import OutputPlan
from gpcheck.spec.errors import UsageError
from gpcheck.traces.format import Event, TraceWriter
from gpcheck.traces.importers import FORMATS, detect_format, import_trace


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("import", parents=[common], help="convert a real GPU trace into a gpcheck trace",
                       description="Import an Nsight Systems SQLite export, a PyTorch/Kineto or plain Chrome "
                                   "trace, a rocprofv3 kernel_trace.csv or rocpd database, cupti-python records "
                                   "(JSON) or a gpcheck GPU recording as an observation trace: launch/start/end "
                                   "events per kernel, times in ns, priorities as urgency levels (larger = more "
                                   "urgent).")
    p.add_argument("file", metavar="FILE", help="the trace to import (never modified)")
    p.add_argument("--format", choices=("auto",) + FORMATS, default="auto",
                   help="input format (default: detected from the content)")
    p.add_argument("--out", required=True, metavar="TRACE",
                   help="output trace (.jsonl, or .jsonl.gz to compress)")
    p.add_argument("--kfd-smi", metavar="FILE", default=None,
                   help="AMD: KFD SMI event lines of the same run (queue eviction/restore), merged in time "
                        "order as queue_evict / queue_restore events (docs/event-mapping.md)")
    p.add_argument("--stream-priority", action="append", default=[], metavar="STREAM=PRIORITY",
                   help="CUDA priority (0 least urgent .. -5 greatest on Hopper) of a stream whose source does "
                        "not record priorities (Kineto, Chrome, rocprof). STREAM is the source's stream id, as "
                        "in the profiler's 'stream N' track (Kineto's args.stream, CUPTI's stream id; not "
                        "torch's Stream.stream_id, which Kineto does not record), e.g. 14=-5; or "
                        "kernel:PATTERN for every stream that ran a kernel whose full name matches the shell "
                        "pattern, e.g. 'kernel:*softmax*=-5'. Repeatable; a stream id wins over a pattern; "
                        "other streams get CUDA's default 0. Without it, such a source's priority checks "
                        "answer unknown (the import warns and lists the streams)")
    add_timeout_flag(p, "the import")
    p.set_defaults(run=run)


def _priorities(items: list[str]) -> dict[str, int]:
    out = {}
    for it in items:
        k, sep, v = it.partition("=")
        try:
            out[k.strip()] = ascii_int(v.strip())
        except argparse.ArgumentTypeError:
            raise UsageError(f"--stream-priority {it!r}: expected STREAM=PRIORITY, e.g. 14=-5") from None
        if not sep or not k.strip():
            raise UsageError(f"--stream-priority {it!r}: expected STREAM=PRIORITY, e.g. 14=-5")
    return out


def _names_per_stream(events: list[Event]) -> dict[Any, Counter[str]]:
    """Kernel names per stream index (from the start events), in the order they first start."""
    per: dict[Any, Counter[str]] = {}
    for e in events:
        if e.action == "start":
            per.setdefault(e.args.get("stream"), Counter())[str((e.meta or {}).get("name", "?"))] += 1
    return per


def _warn(path: str, missing: list[dict[str, Any]], src: dict[str, Any], per: dict[Any, Counter[str]]) -> None:
    """Say on stderr what the source lacks and how to supply it (NOTE(source-missing) in
    traces/preconditions.py); where priorities are missing, list the streams by what a user can
    recognise (the source's id, kernel count, most frequent kernels) so that --stream-priority
    can name them."""
    import sys

    from gpcheck.traces.names import short_kernel_name
    from gpcheck.traces.preconditions import warning_lines

    for line in warning_lines(missing):
        sys.stderr.write(f"gpcheck: warning: {path}: {line}\n")
    if not any(m.get("field") == "stream_priority" for m in missing):
        return
    for row in src.get("streams", []):
        c = per.get(row.get("stream"), Counter())
        top = ", ".join(f"{short_kernel_name(n, 40)} x{k}" for n, k in c.most_common(3))
        sys.stderr.write(f"gpcheck: warning:   stream {row.get('stream_id', row.get('name', row.get('stream')))}: "
                         f"{sum(c.values())} kernels ({top})\n")


def _streamed_kineto(args: argparse.Namespace, prios: dict[str, int]) -> dict[str, Any] | None:
    """Import a Kineto trace without holding it in memory (importers/kineto_stream.py): its
    report, or None where the file must be imported the whole-document way (another format, or
    input that path reports or reads differently)."""
    import os

    if args.format not in ("auto", "kineto"):
        return None
    from gpcheck.traces.importers.jsonload import sniff
    from gpcheck.traces.importers.kineto_stream import Fallback, import_kineto_to
    from gpcheck.traces.importers.sqlite import is_sqlite

    if args.format == "auto":  # detect_format's first steps; the rest is checked while streaming
        if not os.path.isfile(args.file) or is_sqlite(args.file):
            return None
        head = sniff(args.file).lstrip()
        if head[:1] not in (b"[", b"{") or head.startswith(b'{"gpcheck_trace"'):
            return None
    try:
        return import_kineto_to(args.file, args.out, prios, detect=args.format == "auto")
    except Fallback:
        return None


def run(args: argparse.Namespace) -> int:
    budget.limit_time(args.timeout)
    plan = OutputPlan().read("input", args.file)
    smi_file = getattr(args, "kfd_smi", None)
    if smi_file:
        plan = plan.read("--kfd-smi", smi_file)
    plan.claim("--out", args.out)
    prios = _priorities(args.stream_priority)
    streamed = None if smi_file else _streamed_kineto(args, prios)
    if streamed is not None:
        fmt, header, n_events, kernel_events = "kineto", streamed["header"], streamed["events"], streamed["kernels"]
        per = streamed["names"]
    else:
        fmt = detect_format(args.file) if args.format == "auto" else args.format
        header, events = import_trace(args.file, fmt, prios)
        if smi_file:
            from gpcheck.traces.importers.kfd_smi import merge, read_smi

            smi = read_smi(smi_file)
            events = merge(events, smi.events)
            src = header.extra.get("source")
            if isinstance(src, dict):
                src["kfd_smi"] = {"file": smi_file, "queue_events": len(smi.events), "other_events_skipped": smi.skipped}
        with TraceWriter(args.out, header) as w:
            for ev in events:
                w.write_event(ev)
        n_events, kernel_events = len(events), sum(1 for e in events if e.action == "start")
        per = _names_per_stream(events)
        del events
    src = header.extra.get("source", {})
    missing = src.get("missing") or []
    info = {"input": args.file, "format": fmt, "out": args.out, "model": header.model,
            "constants": header.constants, "events": n_events, "kernels": kernel_events,
            "streams": len(src.get("streams", [])), "missing": missing,
            "priorities": [{k: r.get(k) for k in ("stream", "stream_id", "name", "cuda_priority", "priority_from")
                            if r.get(k) is not None} for r in src.get("streams", []) if r.get("priority_from")]}
    _warn(args.file, missing, src, per)
    if args.json:
        import orjson

        write_out(orjson.dumps(info))
    else:
        write_out(f"imported {args.file} ({fmt}): {kernel_events} kernels on {info['streams']} stream(s), "
                  f"{n_events} events -> {args.out}"
                  + (f" (model {header.model}, {', '.join(f'{k}={v}' for k, v in header.constants.items())})"
                     if header.model else "") + "\n")
    return 0

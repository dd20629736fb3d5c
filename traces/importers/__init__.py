"""Importers of real GPU traces: each turns one input format into a gpcheck observation trace
(NOTE(observation-events) in common.py says what the events are).

    from gpcheck.traces.importers import import_trace, detect_format, FORMATS
    header, events = import_trace("report.sqlite")            # format detected
    header, events = import_trace("trace.json", fmt="kineto")

Formats: nsys (Nsight Systems SQLite export), kineto (PyTorch profiler Chrome JSON), chrome
(plain Chrome trace JSON), rocprof (rocprofv3 kernel_trace.csv and older rocprof CSVs), rocpd
(rocprofv3 SQLite), cupti (cupti-python records as JSON), record (gpcheck's own raw GPU
recordings, traces/record/). Every input problem raises `gpcheck.spec.errors.TraceError` naming the file
and the table, line or record; inputs are only ever read (databases are opened `mode=ro`).
"""

from __future__ import annotations

import os
from typing import Callable, Mapping

from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import Event, TraceHeader

Importer = Callable[[str], tuple[TraceHeader, list[Event]]]

FORMATS = ("nsys", "kineto", "chrome", "rocprof", "rocpd", "cupti", "record")


def _importer(fmt: str) -> Importer:
    if fmt == "nsys":
        from gpcheck.traces.importers.nsys import import_nsys
        return import_nsys
    if fmt == "kineto":
        from gpcheck.traces.importers.kineto import import_kineto
        return import_kineto
    if fmt == "chrome":
        from gpcheck.traces.importers.chrome import import_chrome
        return import_chrome
    if fmt == "rocprof":
        from gpcheck.traces.importers.rocprof import import_rocprof
        return import_rocprof
    if fmt == "rocpd":
        from gpcheck.traces.importers.rocpd import import_rocpd
        return import_rocpd
    if fmt == "cupti":
        from gpcheck.traces.importers.cupti import import_cupti
        return import_cupti
    if fmt == "record":
        from gpcheck.traces.importers.record import import_record
        return import_record
    raise TraceError(f"unknown import format {fmt!r} (known: auto, {', '.join(FORMATS)})")


def detect_format(path: str) -> str:
    """The format of an input file, from its content (never from its name alone)."""
    from gpcheck.traces.importers.jsonload import load_json, sniff
    from gpcheck.traces.importers.sqlite import Database, is_sqlite

    if not os.path.isfile(path):
        raise TraceError(f"{path}: no such file")
    if is_sqlite(path):
        from gpcheck.traces.importers.rocpd import looks_like_rocpd

        with Database(path) as db:
            tables = db.tables
        if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
            return "nsys"
        if looks_like_rocpd(tables):
            return "rocpd"
        raise TraceError(f"{path}: table sqlite_master: an SQLite database with neither "
                         f"CUPTI_ACTIVITY_KIND_KERNEL (nsys) nor "
                         f"rocpd_kernel_dispatch (rocpd) tables")
    head = sniff(path).lstrip()
    if head.startswith(b'{"gpcheck_trace"'):
        raise TraceError(f"{path}:1: already a gpcheck trace (nothing to import)")
    if head[:1] in (b"[", b"{"):
        from gpcheck.traces.importers.cupti import looks_like_cupti
        from gpcheck.traces.importers.kineto import looks_like_kineto
        from gpcheck.traces.importers.record import looks_like_record

        doc = load_json(path)
        if looks_like_record(doc):
            return "record"
        if looks_like_kineto(doc):
            return "kineto"
        if looks_like_cupti(doc):
            return "cupti"
        if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list) or \
                isinstance(doc, list) and any(isinstance(e, dict) and "ph" in e for e in doc[:1000]):
            return "chrome"
        raise TraceError(f"{path}:1:1: JSON, but neither a Chrome/Kineto trace, cupti records nor a gpcheck recording")
    from gpcheck.traces.importers.rocprof import looks_like_rocprof

    if looks_like_rocprof(head):
        return "rocprof"
    raise TraceError(f"{path}:1: unrecognised input format: the first line is neither JSON, a kernel-trace CSV header "
                     f"nor an SQLite header (try --format {{{','.join(FORMATS)}}})")


def import_trace(path: str, fmt: str = "auto",
                 stream_priorities: Mapping[str, int] | None = None) -> tuple[TraceHeader, list[Event]]:
    """Import `path` as `fmt` ("auto": detected): the observation trace's header and events.
    `stream_priorities` maps raw stream ids (or recorder stream names) to CUDA priorities for
    sources that record none (see common.override_priorities)."""
    if fmt == "auto":
        fmt = detect_format(path)
    header, events = _importer(fmt)(path)
    if stream_priorities:
        from gpcheck.traces.importers.common import override_priorities

        header, events = override_priorities(header, events, stream_priorities)
    return header, events

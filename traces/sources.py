"""Opening a trace file of either format for replay and export: format detection, the header's
model and constants, and the model instance a trace should be checked against.

Why a module: `gpcheck replay` and `gpcheck export` resolve a trace the same way, and the
Python API should too."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Mapping

from gpcheck.spec import ir, load_spec
from gpcheck.spec.errors import SpecError, TraceError, UsageError
from gpcheck.spec.load import bundled_models
from gpcheck.traces.format import Event, TraceHeader, open_trace
from gpcheck.traces.event_source import EventSource, file_source

FORMATS = ("gpcheck", "itf")


def detect_format(path: str, fmt: str | None = None) -> str:
    """`fmt` when given, else `itf` for `*.itf.json` / `*.itf`, else `gpcheck`."""
    if fmt:
        if fmt not in FORMATS:
            raise UsageError(f"unknown trace format {fmt!r} (formats: {', '.join(FORMATS)})")
        return fmt
    return "itf" if path.endswith((".itf.json", ".itf")) else "gpcheck"


@dataclass
class TraceInfo:
    """What a trace says about itself before a model is chosen."""

    path: str
    format: str
    model: str | None
    constants: dict[str, int] = field(default_factory=dict)


def peek(path: str, fmt: str | None = None) -> TraceInfo:
    """Read only what is needed to choose the model: the header (gpcheck) or `#meta` (ITF)."""
    f = detect_format(path, fmt)
    if f == "gpcheck":
        with open_trace(path) as tr:
            return TraceInfo(path, f, tr.header.model, dict(tr.header.constants))
    from gpcheck.traces.itf import load_itf_object

    obj = load_itf_object(path)
    meta = obj.get("#meta") if isinstance(obj.get("#meta"), dict) else {}
    consts = meta.get("constants") if isinstance(meta.get("constants"), dict) else {}
    model = meta.get("model") if isinstance(meta.get("model"), str) else None
    return TraceInfo(path, f, model, {k: v for k, v in consts.items() if isinstance(v, int) and not isinstance(v, bool)})


def model_for(info: TraceInfo, spec: str | None, cli_consts: Mapping[str, int]) -> tuple[ir.Model, list[str]]:
    """The model instance to check `info`'s trace against: `spec` (or the bundled model the
    trace names), with the trace's constants overridden by `cli_consts`; plus warnings."""
    warnings: list[str] = []
    if spec is None:
        if info.model and info.model in bundled_models():
            spec = info.model
        else:
            named = f"it names model '{info.model}', which is not bundled" if info.model else "it names no model"
            where = f"{info.path}:1" if info.format == "gpcheck" else f"{info.path}: #meta"
            raise UsageError(f"{where}: {named}: give the model to check the trace against with --model SPEC")
    first = load_spec(spec, dict(cli_consts))
    declared = {c.name: c.value for c in first.constants}
    unknown = sorted(k for k in info.constants if k not in declared)
    if unknown:
        warnings.append(f"the trace sets constant(s) {', '.join(unknown)} that {first.name} does not declare (ignored)")
    merged = {k: v for k, v in info.constants.items() if k in declared and k not in cli_consts}
    if any(declared[k] != v for k, v in merged.items()):
        try:
            return load_spec(spec, {**merged, **cli_consts}), warnings
        except SpecError as e:
            where = f"{info.path}:1" if info.format == "gpcheck" else f"{info.path}: #meta"
            vals = ", ".join(f"{k}={v}" for k, v in merged.items())
            msg = e.first.message.replace("--const ", "")
            raise TraceError(f"{where}: the trace's constants ({vals}) make no valid instance of {first.name}: "
                             f"{e.first.span or spec}: {msg}") from None
    return first, warnings


def open_source(info: TraceInfo, model: ir.Model) -> EventSource:
    """An EventSource for replay (re-openable)."""
    if info.format == "gpcheck":
        return file_source(info.path)
    from gpcheck.traces.itf import itf_events

    def open_() -> tuple[TraceHeader, Iterator[Event]]:
        return itf_events(info.path, model)  # type: ignore[return-value]

    return open_


def check_readable(info: TraceInfo) -> None:
    """Raise TraceError early when the trace file is not there."""
    import os

    if not os.path.exists(info.path):
        raise TraceError(f"{info.path}: no such trace file")

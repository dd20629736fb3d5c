"""The Python API for traces: replay a trace against a model, check an observation trace.

Thin wrappers over traces/ (replay.py, sources.py, observe.py) that resolve files, formats and
model instances exactly as `gpcheck replay` and `gpcheck check TRACE` do, so that a test and the
command line agree. traces/ is imported inside the functions: gpcheck.checker.engines.replay.search imports
gpcheck.checker.core.verdict, so importing it while `checker` itself initialises would be circular."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping

from gpcheck.spec import ir
from gpcheck.spec.errors import UsageError

if TYPE_CHECKING:
    from gpcheck.traces.format import Event, TraceHeader
    from gpcheck.traces.observe import ObservationReport, ObserveOptions
    from gpcheck.traces.replay_report import ReplayReport

def replay(
    trace: str | Path | tuple[TraceHeader, Iterable[Event]],
    model: str | Path | ir.Model | None = None,
    consts: Mapping[str, int] | None = None,
    *,
    max_hidden: int | None = None,
    max_candidates: int | None = None,
    format: str | None = None,
    timing: bool = True,
) -> ReplayReport:
    """Is `trace` a behaviour of `model`, and do the model's invariants and transition
    properties hold on it? As `gpcheck replay TRACE --model SPEC`.

    `trace` is a file (gpcheck JSON Lines, `.jsonl.gz`, or ITF `*.itf.json`; `format` forces
    `gpcheck` or `itf`) or a `(TraceHeader, events)` pair held in memory.

    `model` is a spec path, a bundled model name or a loaded `ir.Model`; None means the bundled
    model the trace's header names. The trace's constants apply unless `consts` overrides them.
    `max_hidden` bounds the internal steps inserted before each event (default: 0 when the trace
    logs internal actions, else 32); `max_candidates` bounds the candidate states before replay
    stops undecided. A timed model's time bounds are held against the trace's stamps unless
    `timing` is False (the untimed abstraction only; the report warns). Returns a `gpcheck.traces.replay_report.ReplayReport` (`conforms`, `divergence`,
    `results`, `exit_code`)."""
    report, _ = replay_with_model(trace, model, consts, max_hidden=max_hidden,
                                  max_candidates=max_candidates, format=format, timing=timing)
    return report


def replay_with_model(
    trace: str | Path | tuple[TraceHeader, Iterable[Event]],
    model: str | Path | ir.Model | None = None,
    consts: Mapping[str, int] | None = None,
    *,
    max_hidden: int | None = None,
    max_candidates: int | None = None,
    format: str | None = None,
    timing: bool = True,
) -> tuple[ReplayReport, ir.Model]:
    """`replay`, also returning the model instance the trace was checked against (for ITF
    output of a counterexample)."""
    from gpcheck.checker.engines.replay.search import (
        DEFAULT_MAX_CANDIDATES,
        ReplayOptions,
        memory_source,
    )
    from gpcheck.traces.sources import TraceInfo, model_for, open_source, peek

    if max_hidden is not None and max_hidden < 0:
        raise UsageError("max_hidden must be >= 0")
    if max_candidates is not None and max_candidates < 1:
        raise UsageError("max_candidates must be >= 1")
    if isinstance(trace, tuple):
        header, events = trace
        name = "<memory>"
        info = TraceInfo(name, "gpcheck", header.model, dict(header.constants))
        source = memory_source(header, events, name)
    else:
        name = str(trace)
        info = peek(name, format)
        source = None
    warnings: list[str] = []
    if isinstance(model, ir.Model):
        if consts:
            raise UsageError("constants cannot be overridden on an already loaded model; pass its path")
        inst = model
        differ = sorted(k for k, v in info.constants.items() if inst.const_values.get(k, v) != v)
        if differ:
            warnings.append(f"the trace sets constant(s) {', '.join(differ)} to other values than "
                            f"the model instance given (the model's are used)")
    else:
        inst, warnings = model_for(info, str(model) if model is not None else None, dict(consts or {}))
    if source is None:
        source = open_source(info, inst)
    options = ReplayOptions(max_hidden=max_hidden,
                            max_candidates=max_candidates if max_candidates is not None else DEFAULT_MAX_CANDIDATES,
                            timing=timing)
    from gpcheck.checker.engines.replay.timed import replayer_for  # NOTE(timed-replay)

    report = replayer_for(inst, options).replay(source, name)
    report.warnings = warnings + report.warnings
    return report, inst


def check_trace(
    trace: str | Path | tuple[TraceHeader, Iterable[Event]],
    properties: Iterable[str] | None = None,
    *,
    max_inversion_ns: int | None = None,
    max_gap_ns: int | None = None,
    gap_threshold_ns: int | None = None,
    overlap_tolerance_ns: int | None = None,
    max_delay_ns: int | None = None,
    max_blocking_ns: int | None = None,
) -> ObservationReport:
    """Check the model-free observation properties of an observation trace (an imported or
    recorded kernel trace: `launch`/`start`/`end` events), as `gpcheck check TRACE`.

    `properties` chooses among `exactly_once`, `stream_order`, `priority_inversion`,
    `timeslice`, `launch_delay` and `blocking` (default all). Inversion windows, switched-out
    gaps, delays and blocking are informational unless `max_inversion_ns` / `max_gap_ns` /
    `max_delay_ns` / `max_blocking_ns` is set; `gap_threshold_ns` is the shortest gap reported.
    Returns a `gpcheck.traces.observe.ObservationReport` (`results`: one `PropertyResult` each, with
    `status` ok / violated / info / unknown, `summary`, `findings`; `exit_code`)."""
    from gpcheck.traces.observe import observe, observe_events

    opts = observe_options(max_inversion_ns=max_inversion_ns, max_gap_ns=max_gap_ns,
                           gap_threshold_ns=gap_threshold_ns, overlap_tolerance_ns=overlap_tolerance_ns,
                           max_delay_ns=max_delay_ns, max_blocking_ns=max_blocking_ns)
    props = list(properties) if properties is not None else None
    if isinstance(trace, tuple):
        header, events = trace
        return observe_events(header, events, "<memory>", props, opts)
    return observe(str(trace), props, opts)


def observe_options(**given: int | None) -> ObserveOptions:
    """gpcheck.traces.observe.ObserveOptions with the thresholds that are not None; the rest default."""
    from gpcheck.traces.observe import ObserveOptions

    return ObserveOptions(**{k: v for k, v in given.items() if v is not None})

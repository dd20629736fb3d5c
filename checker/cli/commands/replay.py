"""`gpcheck replay TRACE --model SPEC`: is a recorded trace a behaviour of the model, and do the
model's properties hold on it? Exit 0 conforms and every property holds, 1 divergence or a
violated property, 2 bad input, 3 undecided (see checker/engines/replay/search.py)."""

from __future__ import annotations

import argparse
from typing import Any, Callable

from gpcheck.checker.core import budget
from gpcheck.checker.cli.commands.common import add_const_flag, consts_of, write_out
from gpcheck.checker.cli.commands.flags import add_timeout_flag, count, non_negative
from gpcheck.checker.cli.outputs import plan_outputs
from gpcheck.checker.cli.commands.corpus import add_corpus_arguments, inputs_of, run_replay_corpus
from gpcheck.checker.distributed.corpus import is_corpus
from gpcheck.spec import ir
from gpcheck.checker.engines.replay.search import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MAX_HIDDEN,
    EventSource,
    ReplayOptions,
    Replayer,
)
from gpcheck.traces.replay_report import ReplayReport, render_text
from gpcheck.traces.sources import FORMATS, TraceInfo, model_for, open_source, peek


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("replay", parents=[common], help="check that a trace is a behaviour of a model",
                       description="Replay a trace (gpcheck JSON Lines or ITF) against a model: every logged "
                                   "event must match an action instance and the observed state; internal "
                                   "actions may be inserted between events. Then evaluate the model's "
                                   "invariants and transition properties on the reconstructed behaviour.")
    p.add_argument("trace", metavar="TRACE", help="trace file (.jsonl, .jsonl.gz, or .itf.json)")
    p.add_argument("--model", metavar="SPEC", default=None,
                   help="the .gpspec file or bundled model (default: the bundled model the trace names)")
    add_const_flag(p)
    p.add_argument("--map", metavar="FILE", nargs="?", const="", default=None,
                   help="replay through an event mapping (docs/event-mapping.md): the recorded events "
                        "become steps of the model as FILE says; --map alone uses MODEL.map.toml beside "
                        "the model's spec")
    p.add_argument("--max-hidden", type=non_negative, default=None, metavar="K",
                   help=f"at most K internal steps before each event, searched exhaustively (default: "
                        f"any number, searched lazily; 0 when the trace logs internal actions; "
                        f"--engine exhaustive alone uses {DEFAULT_MAX_HIDDEN})")
    p.add_argument("--max-candidates", type=count, default=DEFAULT_MAX_CANDIDATES, metavar="N",
                   help="candidate states beyond which replay stops undecided (default %(default)s)")
    p.add_argument("--engine", choices=("auto", "lazy", "exhaustive"), default="auto",
                   help="how hidden internal steps are searched: lazy (any number per event, fired only "
                        "where the next event needs them), exhaustive (every split, up to K); auto: "
                        "lazy unless --max-hidden is given or the trace logs internal actions")
    p.add_argument("--no-timing", action="store_true",
                   help="a timed spec: replay its untimed abstraction only, without holding the trace's "
                        "time stamps against its time bounds (the report says so; docs/timed.md)")
    p.add_argument("--no-progress", action="store_true",
                   help="print no progress on stderr (by default a long replay shows a live bar on a "
                        "terminal, else a line every few seconds)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="trace format (default: itf for *.itf.json, else gpcheck)")
    p.add_argument("--perfetto", metavar="FILE", default=None,
                   help="also export the trace as Chrome trace-event JSON for ui.perfetto.dev (when it "
                        "conforms: the reconstructed behaviour, every variable and the hidden steps)")
    p.add_argument("--itf", metavar="FILE", default=None,
                   help="also write the reconstructed behaviour (hidden steps filled in) as ITF")
    add_timeout_flag(p, "the replay")
    add_corpus_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if is_corpus(inputs_of(args, args.trace)):
        return run_replay_corpus(args, inputs_of(args, args.trace), trace_outcome)
    budget.limit_time(args.timeout)
    info = peek(args.trace, args.format)
    plan_outputs(args, info, [("--perfetto", args.perfetto), ("--itf", args.itf)])
    progress = None
    if not args.no_progress:
        import sys

        from gpcheck.traces.progress import ReplayProgress, count_events

        live = sys.stderr.isatty()
        progress = ReplayProgress(count_events(args.trace) if live and info.format == "gpcheck" else None, live=live)
    replayer, source, model, warnings = _prepare(args, info, progress)
    # a stop (signal, --timeout, --max-memory) ends the replay undecided and still prints the report
    with budget.cooperative():
        try:
            report = replayer.replay(source, args.trace)
            if getattr(replayer, "mapping", None) is not None:
                from gpcheck.checker.engines.replay.mapped import annotate

                annotate(report, replayer, info)
        finally:
            if progress is not None:
                progress.close()
        report.warnings = warnings + report.warnings
        if budget.stopped():
            if args.perfetto or args.itf:
                report.warnings.append(f"{budget.stopped()}: no output file written")
        else:
            _write_outputs(args, report, replayer, source, model)
        _print(args, report)
    return report.exit_code


def trace_outcome(args: argparse.Namespace, trace: str) -> tuple[dict[str, Any], int]:
    """One trace of `gpcheck replay TRACE...` on a cluster worker: the report that
    `gpcheck replay TRACE --json` prints with the same flags (`args`), and its exit code. Both
    build the model instance and the replay options in `_prepare` from the same `args`, so a
    flag cannot reach one and not the other (checker/distributed/corpus.py TraceJob)."""
    info = peek(trace, args.format)
    replayer, source, _, warnings = _prepare(args, info, None)
    with budget.cooperative():
        report = replayer.replay(source, trace)
        if getattr(replayer, "mapping", None) is not None:
            from gpcheck.checker.engines.replay.mapped import annotate

            annotate(report, replayer, info)
    report.warnings = warnings + report.warnings
    return report.to_json(), report.exit_code


def _prepare(args: argparse.Namespace, info: TraceInfo,
             progress: Callable[[int, int, int], None] | None) -> tuple[Replayer, EventSource, ir.Model, list[str]]:
    """The model instance (--model, --const or the trace's header), compiled, the trace opened
    against it, and the replayer with every replay flag: what a single run and a corpus row share."""
    if getattr(args, "map", None) is not None:
        from gpcheck.checker.engines.replay.mapped import prepare_mapped

        return prepare_mapped(info, args.model, args.map, consts_of(args),
                              ReplayOptions(max_hidden=args.max_hidden, max_candidates=args.max_candidates,
                                            engine=args.engine, progress=progress,
                                            timing=not args.no_timing))
    model, warnings = model_for(info, args.model, consts_of(args))
    source = open_source(info, model)
    options = ReplayOptions(max_hidden=args.max_hidden, max_candidates=args.max_candidates,
                            engine=args.engine, progress=progress, timing=not args.no_timing)
    from gpcheck.checker.engines.replay.timed import replayer_for  # NOTE(timed-replay)

    return replayer_for(model, options), source, model, warnings


def _write_outputs(args: argparse.Namespace, report: ReplayReport, replayer: Replayer,
                   source: EventSource, model: ir.Model) -> None:
    if args.perfetto:
        from gpcheck.traces.perfetto import export_trace

        header, _ = source()
        export_trace(args.perfetto, header, source, model, replayer if report.conforms else None, args.trace)
    if args.itf:
        from gpcheck.traces.itf import write_itf

        behaviour = replayer.reconstruct(source) if report.conforms else None
        if behaviour is None:
            report.warnings.append(f"--itf {args.itf}: not written, no behaviour was reconstructed")
        else:
            write_itf(behaviour, model, args.itf, description=f"behaviour reconstructed from {args.trace}")


def _print(args: argparse.Namespace, report: ReplayReport) -> None:
    if args.json:
        import orjson

        out = report.to_json()
        if hasattr(report, "timings"):
            from gpcheck.traces.timing import series_json

            out["timings"] = [series_json(s, b) for s, b in report.timings]
        write_out(orjson.dumps(out))
    else:
        text = render_text(report)
        if getattr(report, "timings", None):
            from gpcheck.traces.timing import series_text

            text += "\n" + "\n".join(series_text(s, b) for s, b in report.timings)
        for r in report.results:
            if r.counterexample is not None:
                from gpcheck.checker.report.render import counterexample_lines

                text += f"\ncounterexample of {r.property} (a behaviour of the model matching the trace up to the violation):\n"
                text += "\n".join(counterexample_lines(r.counterexample))
        write_out(text + "\n")

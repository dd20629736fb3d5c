"""`gpcheck export TRACE (--perfetto FILE | --itf FILE)`: convert a trace for other tools.

`--perfetto` needs no model (track kinds then come from the JSON values); with one (`--model`, or
the bundled model the trace names) and a conforming trace it shows the reconstructed behaviour:
every variable, and the hidden internal steps. `--itf` replays the trace against the model to fill
in unobserved values and hidden internal steps."""

from __future__ import annotations

import argparse

from gpcheck.checker.core import budget
from gpcheck.checker.cli.commands.common import add_const_flag, consts_of, write_out
from gpcheck.checker.cli.commands.flags import add_timeout_flag, non_negative
from gpcheck.checker.cli.outputs import plan_outputs
from gpcheck.gpmodel import compile_model
from gpcheck.spec.errors import UsageError
from gpcheck.checker.engines.replay.search import ReplayOptions, Replayer
from gpcheck.traces.sources import FORMATS, TraceInfo, model_for, open_source, peek


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("export", parents=[common], help="convert a trace to Perfetto/Chrome JSON or ITF",
                       description="Convert a trace (gpcheck JSON Lines or ITF) to Chrome trace-event JSON "
                                   "(ui.perfetto.dev) or to ITF.")
    p.add_argument("trace", metavar="TRACE", help="a gpcheck trace (.jsonl, .jsonl.gz) or an ITF file")
    p.add_argument("--model", metavar="SPEC", default=None,
                   help="the model (needed for --itf and for ITF input; default: the bundled model the trace names)")
    add_const_flag(p)
    p.add_argument("--format", choices=FORMATS, default=None, help="input format (default: by extension)")
    p.add_argument("--perfetto", metavar="FILE", default=None,
                   help="write Chrome trace-event JSON for ui.perfetto.dev (actions as slices, variables as tracks)")
    p.add_argument("--itf", metavar="FILE", default=None,
                   help="write ITF (Apalache/Quint's Informal Trace Format) JSON")
    p.add_argument("--max-hidden", type=non_negative, default=None, metavar="K",
                   help="with a model: hidden internal steps replay may insert before each event when it "
                        "reconstructs the full states (as for replay)")
    add_timeout_flag(p, "the export")
    p.set_defaults(run=run)


def _maybe_model(info: TraceInfo, args: argparse.Namespace, needed: bool):  # type: ignore[no-untyped-def]
    if args.model is None and not needed:
        from gpcheck.spec.load import bundled_models

        if not (info.model and info.model in bundled_models()):
            return None, []
    return model_for(info, args.model, consts_of(args))


def run(args: argparse.Namespace) -> int:
    if not args.perfetto and not args.itf:
        raise UsageError("export: give --perfetto FILE and/or --itf FILE")
    budget.limit_time(args.timeout)
    info = peek(args.trace, args.format)
    plan_outputs(args, info, [("--perfetto", args.perfetto), ("--itf", args.itf)])
    model, warnings = _maybe_model(info, args, needed=bool(args.itf) or info.format == "itf")
    out: dict[str, object] = {"trace": args.trace}
    if args.perfetto:
        from gpcheck.traces.perfetto import export_trace

        if model is not None:
            source = open_source(info, model)
            replayer = Replayer(compile_model(model), ReplayOptions(max_hidden=args.max_hidden))
        else:
            from gpcheck.checker.engines.replay.search import file_source

            source, replayer = file_source(args.trace), None
        header, _ = source()
        n, rebuilt = export_trace(args.perfetto, header, source, model, replayer, args.trace)
        out["perfetto"] = {"file": args.perfetto, "steps": n, "reconstructed": rebuilt}
        if model is not None and not rebuilt:
            warnings.append(f"{args.trace} does not replay against {model.name}: the Perfetto file shows the events as logged")
    code = 0
    if args.itf:
        from gpcheck.traces.itf import write_itf

        assert model is not None
        replayer = Replayer(compile_model(model), ReplayOptions(max_hidden=args.max_hidden))
        behaviour = replayer.reconstruct(open_source(info, model))
        if behaviour is None:
            warnings.append(f"{args.trace} is not a behaviour of {model.name} (see gpcheck replay); no ITF written")
            code = 1
        else:
            write_itf(behaviour, model, args.itf, description=f"behaviour reconstructed from {args.trace}")
            out["itf"] = {"file": args.itf, "states": len(behaviour.steps)}
    out["warnings"] = warnings
    if args.json:
        import orjson

        write_out(orjson.dumps(out))
    else:
        lines = [f"wrote {v['file']}" for k, v in out.items() if isinstance(v, dict)]  # type: ignore[index]
        lines += [f"warning: {w}" for w in warnings]
        write_out("\n".join(lines) + "\n")
    return code

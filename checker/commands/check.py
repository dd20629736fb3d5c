"""`gpcheck check FILE`: parse and type-check a spec (nothing is explored), or, for a trace
file, check its model-free observation properties."""

from __future__ import annotations

import argparse

from spec import load_spec
from checker.commands.observe_cmd import add_observation_flags, options_of, run_observation_check
from checker import budget
from checker.commands.flags import add_timeout_flag
from checker.commands.common import add_const_flag, consts_of, write_out
from checker.report import to_json_bytes


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("check", parents=[common], help="type-check a spec, or check a trace's observations",
                       description="Parse and type-check a .gpspec file (reporting every error), or check "
                                   "the observation properties of a recorded trace.")
    p.add_argument("file", metavar="FILE", help="a .gpspec file, a bundled model name, or a trace")
    add_const_flag(p)
    p.add_argument("--property", action="append", default=None, metavar="NAME",
                   help="(traces) check only this observation property")
    add_observation_flags(p)
    add_timeout_flag(p, "the trace check")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    budget.limit_time(args.timeout)
    if _is_trace(args.file):
        return run_observation_check(args.file, args.property, args.json, options_of(args))
    model = load_spec(args.file, consts_of(args))
    summary = {
        "model": model.name,
        "file": model.file,
        "ok": True,
        "constants": model.const_values,
        "variables": len(model.vars),
        "slots": model.slot_total,
        "actions": [a.name for a in model.actions],
        "properties": model.property_names(),
    }
    if args.json:
        write_out(to_json_bytes(summary))
    else:
        write_out(f"ok: model {model.name}: {len(model.vars)} variables ({model.slot_total} slots), "
                  f"{len(model.actions)} actions, {len(model.property_names())} properties\n")
    return 0


def _is_trace(name: str) -> bool:
    lowered = name.lower()
    return any(lowered.endswith(ext) for ext in (".jsonl", ".jsonl.gz", ".ndjson", ".trace"))

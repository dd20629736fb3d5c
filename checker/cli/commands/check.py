"""`gpcheck check FILE`: parse and type-check a spec (nothing is explored), or, for a trace
file, check its model-free observation properties."""

from __future__ import annotations

import argparse

from gpcheck.spec import load_spec
from gpcheck.spec.errors import UsageError
from typing import Any

from gpcheck.checker.cli.commands.observe_cmd import (
    add_observation_flags,
    observation_report,
    options_of,
    run_observation_check,
)
from gpcheck.checker.core import budget
from gpcheck.checker.cli.commands.flags import add_timeout_flag
from gpcheck.checker.cli.commands.common import add_const_flag, consts_of, write_out
from gpcheck.checker.cli.commands.corpus import add_corpus_arguments, inputs_of, run_check_corpus
from gpcheck.checker.distributed.corpus import is_corpus
from gpcheck.checker.report.render import to_json_bytes


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("check", parents=[common], help="type-check a spec, or check a trace's observations",
                       description="Parse and type-check a .gpspec file (reporting every error), or check "
                                   "the observation properties of a recorded trace.")
    p.add_argument("file", metavar="FILE", help="a .gpspec file, a bundled model name, or a trace")
    add_const_flag(p)
    p.add_argument("--property", action="append", default=None, metavar="NAME",
                   help="(traces only) check only this observation property (repeatable); for a spec's "
                        "properties use `gpcheck verify SPEC --property NAME`")
    add_observation_flags(p)
    add_timeout_flag(p, "the trace check")
    add_corpus_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if is_corpus(inputs_of(args, args.file)):  # --timeout is then each trace's (checker/distributed/corpus.py)
        return run_check_corpus(args, inputs_of(args, args.file), trace_outcome)
    budget.limit_time(args.timeout)
    if _is_trace(args.file):
        return run_observation_check(args.file, args.property, args.json, options_of(args))
    _refuse_json(args.file)
    if args.property:
        raise UsageError("--property names observation properties of a trace; `check SPEC` only parses and "
                         "type-checks (check a spec's properties with `gpcheck verify SPEC --property NAME`)")
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


def trace_outcome(args: argparse.Namespace, trace: str) -> tuple[dict[str, Any], int]:
    """One trace of `gpcheck check TRACE...` on a cluster worker: the report that
    `gpcheck check TRACE --json` prints with the same flags (`args`), and its exit code. The
    single command and every corpus row go through `observation_report` with `options_of(args)`,
    so a flag cannot reach one and not the other (checker/distributed/corpus.py TraceJob)."""
    report = observation_report(trace, args.property, options_of(args))
    return report.to_json(), report.exit_code


def _refuse_json(name: str) -> None:
    """A JSON file is not a spec: an ITF file (a model's behaviour) goes to `replay`, any other
    JSON (a profiler's export) to `import`; say so instead of a syntax error at `{`."""
    lowered = name.lower()
    head = b""
    if not lowered.endswith(".gpspec"):
        try:
            with open(name, "rb") as f:
                head = f.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
        except OSError:
            return  # a bundled model's name, or a missing file: load_spec says which
    if not (lowered.endswith(".json") or head[:1] in (b"{", b"[")):
        return
    if lowered.endswith(".itf.json") or b'"#meta"' in head or b'"states"' in head:
        raise UsageError(f"{name}: an ITF file (a model's behaviour), not a spec or an observed trace: "
                         f"replay it with `gpcheck replay {name} --model SPEC`")
    raise UsageError(f"{name}: a JSON file, not a gpspec spec or a gpcheck trace: import a profiler's export "
                     f"first (`gpcheck import {name} --format FORMAT --out TRACE.jsonl`), then check that trace")


def _is_trace(name: str) -> bool:
    lowered = name.lower()
    return any(lowered.endswith(ext) for ext in (".jsonl", ".jsonl.gz", ".ndjson", ".trace"))

"""`gpcheck verify [SPEC|MODEL]`: check a spec's properties, or with no argument the whole
bundled model library."""

from __future__ import annotations

import argparse
import sys

from gpcheck.checker.core import budget
from gpcheck.checker.api.model_api import CORES, ENGINES, SYMMETRY, load, verify
from gpcheck.checker.cli.commands.common import Progress, add_const_flag, consts_of, write_out
from gpcheck.checker.cli.commands.flags import add_timeout_flag, count, non_negative
from gpcheck.checker.regression.expectations import judge
from gpcheck.checker.regression.library import render_matrix, verify_library
from gpcheck.checker.core.verdict import Verdict
from gpcheck.checker.engines.explicit.explicit import select_properties
from gpcheck.checker.cli.outputs import OutputPlan
from gpcheck.spec import resolve_spec_path
from gpcheck.spec.errors import UsageError
from gpcheck.checker.report.render import render_text, to_json_bytes
from gpcheck.checker.api.smt_dispatch import DEFAULT_DEPTH, DEFAULT_MAX_K


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("verify", parents=[common], help="check a model's properties",
                       description="Check every property of a spec (or of a bundled model), or with no "
                                   "argument the whole bundled library.")
    p.add_argument("spec", nargs="?", metavar="SPEC", help="a .gpspec file or a bundled model name")
    add_const_flag(p)
    p.add_argument("--property", action="append", default=None, metavar="NAME",
                   help="check only this property (repeatable; 'deadlock' and 'range' included)")
    p.add_argument("--engine", choices=ENGINES, default=None,
                   help="explicit (default for a spec), bmc, kind, pdr or auto")
    p.add_argument("--core", choices=CORES, default="auto",
                   help="how the explicit engine runs: python (the reference), compiled (bit-packed states, "
                        "numba; compiles once per model and constants, cached in ~/.cache/gpcheck/jit), or auto "
                        "(default: python for small models, compiled past 200,000 states)")
    p.add_argument("--workers", type=_workers, default="auto", metavar="N|auto",
                   help="compiled core: expand each BFS level on N threads, merged in order (the same states, "
                        "verdicts and counterexamples as one); auto (default): one thread on a machine with "
                        "fewer than 4 idle cores, else one per idle core up to 16, and only while the frontier "
                        "is large")
    p.add_argument("--fingerprint", action="store_true",
                   help="compiled core: keep 64-bit fingerprints of states instead of the states (less memory); "
                        "holding properties are then holds_to_bound, with TLC's collision probability")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                   help="explicit engine: cpu (default), or cuda: the search on an NVIDIA GPU through CuPy "
                        "(a timed spec's untimed abstraction, the zone engine deciding the rest on the CPU; "
                        "docs/device.md)")
    p.add_argument("--symmetry", choices=SYMMETRY, default="auto",
                   help="symmetry reduction of the explicit engine by the model's 'symmetric' types: on, off, "
                        "or auto (default: on when the model declares one and no liveness property is checked; "
                        "the reduced search runs on the python core); 'on' also reduces over identical named "
                        "instances the model treats alike")
    p.add_argument("--max-states", type=count, default=None, metavar="N",
                   help="explicit engine: stop after N distinct states (the verdicts not decided by then: unknown)")
    add_timeout_flag(p, "the check (per model for the whole library)")
    p.add_argument("--depth", type=non_negative, default=None, metavar="K", help=f"bound for bmc (default {DEFAULT_DEPTH} steps) and k-induction "
                        f"(default: k up to {DEFAULT_MAX_K})")
    p.add_argument("--for-all", metavar="NAME[,NAME...]", default=None,
                   help="prove invariants and transition properties for every value of these constants "
                        "(each >= 1; NAME>=K for another lower bound)")
    p.add_argument("--no-progress", action="store_true", help="no progress display on stderr")
    p.add_argument("--ignore-expect", action="store_true",
                   help="ignore the model's `expect` lines: exit with the plain verdicts (by default a verdict "
                        "that meets its expect line does not fail the run, and one that contradicts it exits 1, "
                        "in a single-model run as in the library run)")
    p.add_argument("--itf", metavar="FILE", default=None,
                   help="write the counterexample of each violated property as ITF (several: FILE gets the property name; "
                        "nothing is written when no property is violated)")
    p.add_argument("--perfetto", metavar="FILE", default=None,
                   help="write the counterexample of each violated property as Chrome trace-event JSON for "
                        "ui.perfetto.dev (named as with --itf)")
    p.set_defaults(run=run)


def _workers(text: str) -> int | str:
    """--workers: 'auto' or an integer >= 1."""
    return "auto" if text == "auto" else count(text)


def run(args: argparse.Namespace) -> int:
    if args.spec is None:
        if args.device != "cpu":
            raise UsageError("--device cuda needs a SPEC or MODEL (the library runs on the CPU)")
        if args.itf or args.perfetto:
            raise UsageError("--itf and --perfetto need a SPEC or MODEL (the library writes no counterexamples)")
        return run_library_command(args)
    budget.limit_time(args.timeout)
    plan = OutputPlan().read("spec", resolve_spec_path(args.spec))
    for flag, path in (("--itf", args.itf), ("--perfetto", args.perfetto)):
        if path:
            plan.claim(flag, path)
    model = load(args.spec, consts_of(args))
    if args.for_all is not None:
        return _for_all(args, model)
    if args.itf or args.perfetto:
        from gpcheck.traces.export import counterexample_paths

        wanted = select_properties(model, args.property)
        for flag, path in (("--itf", args.itf), ("--perfetto", args.perfetto)):
            if path:
                plan.claim_all(flag, counterexample_paths(path, wanted))
    progress = Progress(not args.no_progress and not args.json)
    # a stop (signal, --timeout, --max-memory) ends the engines with a partial report, printed here
    with budget.cooperative():
        try:
            report = verify(model, None, args.property, args.engine or "explicit",
                            args.max_states, args.timeout, args.depth, progress, core=args.core,
                            workers=args.workers, fingerprint=args.fingerprint, symmetry=args.symmetry,
                            device=args.device)
        finally:
            progress.close()
        judged = judge(model, report) if not args.ignore_expect else None
        if args.json:
            doc = report.to_json()
            doc["expectations"] = judged.to_json() if judged is not None and judged.applied else None
            doc["exit_code"] = judged.exit_code if judged is not None else report.exit_code
            write_out(to_json_bytes(doc))
        else:
            text = render_text(report)
            if judged is not None and judged.lines():
                text += "\n".join(judged.lines()) + "\n"
            write_out(text)
        if args.itf or args.perfetto:
            from gpcheck.traces.export import export_counterexamples

            written = export_counterexamples(report.results, model, args.itf, args.perfetto)
            for path, prop in written:
                sys.stderr.write(f"wrote the counterexample of {prop} to {path}\n")
            if not written:
                sys.stderr.write("no counterexample to write: no property is violated\n")
    return judged.exit_code if judged is not None else report.exit_code


def _for_all(args: argparse.Namespace, model: object) -> int:
    from gpcheck.checker.engines.param import parse_for_all
    from gpcheck.checker.api.for_all import verify_for_all

    if args.engine not in (None, "pdr"):
        from gpcheck.spec.errors import UsageError

        raise UsageError("--for-all has its own engine (checker/engines/param); leave --engine out")
    names, lower = parse_for_all(args.for_all, model)  # type: ignore[arg-type]
    report = verify_for_all(args.spec, names, lower, consts_of(args), args.property, args.timeout)
    if args.json:  # the same keys as every other engine's report (docs/schema/report.schema.json)
        write_out(to_json_bytes({**report.to_json(), "expectations": None, "exit_code": report.exit_code}))
    else:
        write_out(render_text(report))
    return report.exit_code


def run_library_command(args: argparse.Namespace, models: list[str] | None = None) -> int:
    """`gpcheck verify` with no SPEC (or a bundled model name via `models`): the matrix, or JSON."""
    from gpcheck.checker.cli.commands.common import write_out
    from gpcheck.checker.report.render import to_json_bytes

    if getattr(args, "const", None):
        raise UsageError("--const needs a SPEC or MODEL: the library runs every model at its defaults")
    rep = verify_library(args.engine or "explicit", models, getattr(args, "property", None),
                         getattr(args, "timeout", None), getattr(args, "max_states", None))
    write_out(to_json_bytes(rep.to_json()) if args.json else render_matrix(rep))
    if getattr(args, "ignore_expect", False):  # the plain verdicts: 1 violated, else 3 unknown, else 0
        cells = [c for r in rep.rows for c in r.cells]
        if any(c.verdict is Verdict.VIOLATED for c in cells):
            return 1
        return 3 if any(r.error for r in rep.rows) or any(c.verdict is Verdict.UNKNOWN and c.kind != "cover"
                                                          for c in cells) else 0
    return rep.exit_code

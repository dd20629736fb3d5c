"""`gpcheck sweep SPEC --const NAME=VALUES ...`: verify every combination of constant values in
parallel, on an embedded local cluster or an existing one (checker/distributed/sweep.py, checker/distributed/cluster.py).

Output: the table of combinations x properties (or `--json`: {"runs": [...]}, each run's
`results` exactly `gpcheck verify --json`'s), progress lines on stderr as combinations finish,
and with `--html FILE` a heat map. Exit code as `gpcheck verify`'s over all runs; 130 when
interrupted, after printing every combination that had finished."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from gpcheck.checker.api.model_api import ENGINES
from gpcheck.checker.cli.commands.common import write_out
from gpcheck.checker.cli.commands.flags import count, non_negative, seconds
from gpcheck.checker.cli.commands.fanout import add_cluster_flags, interrupted_exit_code, run_fanned_out
from gpcheck.checker.report.render import to_json_bytes
from gpcheck.checker.distributed.sweep import (
    Instance,
    Run,
    combined_exit_code,
    parse_values,
    plan_sweep,
    run_sweep,
)
from gpcheck.checker.distributed.sweep_report import progress_line
from gpcheck.spec.errors import UsageError
from gpcheck.checker.api.smt_dispatch import DEFAULT_DEPTH, DEFAULT_MAX_K


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("sweep", parents=[common], help="verify every combination of constant values, in parallel",
                       description="Verify a spec at every combination of the given constant values, each "
                                   "combination a separate run on an embedded local cluster (one worker "
                                   "per core) or on an existing Dask cluster (--cluster).")
    p.add_argument("spec", metavar="SPEC", help="a .gpspec file or a bundled model name")
    p.add_argument("--const", action="append", default=[], metavar="NAME=VALUES",
                   help="values of a constant: 1,2,4 or 2..6 or a mixture (repeatable; every combination is checked)")
    p.add_argument("--property", action="append", default=None, metavar="NAME",
                   help="check only this property (repeatable)")
    p.add_argument("--engine", choices=ENGINES, default="explicit", help="as for verify (default %(default)s)")
    p.add_argument("--max-states", type=count, default=None, metavar="N",
                   help="explicit engine: stop each run after N distinct states (unknown)")
    p.add_argument("--timeout", type=seconds, default=None, metavar="SECONDS", help="per combination")
    p.add_argument("--depth", type=non_negative, default=None, metavar="K", help=f"bound for bmc (default {DEFAULT_DEPTH} steps) and k-induction "
                        f"(default: k up to {DEFAULT_MAX_K})")
    add_cluster_flags(p)
    p.add_argument("--html", metavar="FILE", default=None, help="also write the sweep as a self-contained heat map")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    grid: dict[str, list[int]] = {}
    for item in args.const:
        name, values = parse_values(item)
        if name in grid:
            raise UsageError(f"--const {name} given twice")
        grid[name] = values
    if args.html:
        _check_output(Path(args.html), Path(args.spec))
    instances = plan_sweep(args.spec, grid, args.property, args.engine, args.max_states, args.timeout, args.depth)

    def emit(runs: list[Run | None], where: str, seconds: float, interrupted: bool) -> None:
        _emit(args, instances, runs, where, seconds, interrupted)

    runs, interrupted = run_fanned_out(args, len(instances), "combinations",
                                       lambda cluster: run_sweep(cluster, instances), progress_line, emit)
    if interrupted:
        return interrupted_exit_code()
    return combined_exit_code([r.exit_code for r in runs if r is not None])


def _check_output(out: Path, spec: Path) -> None:
    if str(out) == "-":
        raise UsageError("--html '-': give a file name (the heat map is written to a file)")
    if not out.parent.is_dir() and str(out.parent):
        raise UsageError(f"--html {out}: no such directory {out.parent}")
    if spec.exists() and out.exists() and out.resolve() == spec.resolve():
        raise UsageError(f"--html {out}: that is the spec itself; give another file")
    from gpcheck.checker.cli.outputs import check_target

    check_target("--html", str(out))  # a directory, a device, a read-only folder, a name too long


def _emit(args: argparse.Namespace, instances: Sequence[Instance], runs: list[Run | None], where: str,
          seconds: float, interrupted: bool) -> None:
    finished = [r for r in runs if r is not None]
    model = next((r.report.get("model") for r in finished if r.report.get("model")), None) or instances[0].file
    file = instances[0].file
    if args.json:
        doc = {"model": model, "file": file, "engine": args.engine, "combinations": len(instances),
               "seconds": round(seconds, 4), "interrupted": interrupted, "runs": [r.to_json() for r in finished]}
        if interrupted:
            doc["not_run"] = [inst.constants for inst, r in zip(instances, runs) if r is None]
        write_out(to_json_bytes(doc))
    else:
        from gpcheck.checker.distributed.sweep_report import render_sweep_text

        title = f"model {model} ({file})  engine {args.engine}  on {where}, {seconds:.1f} s"
        text = render_sweep_text(title, runs)
        if interrupted:
            text += f"interrupted: {len(instances) - len(finished)} combinations not checked\n"
        write_out(text)
    if args.html:
        from gpcheck.checker.distributed.html_report import render_html, write_html

        write_html(args.html, render_html(f"gpcheck sweep of {model} ({args.engine})", runs))
        sys.stderr.write(f"wrote {args.html}\n")

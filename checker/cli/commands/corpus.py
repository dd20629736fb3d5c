"""`gpcheck check TRACE...` and `gpcheck replay TRACE...` over many traces (several files, a
folder, a glob): one row per trace in a summary table, or `--json`:
{"traces": [{"trace", "exit_code", "seconds", "report" | "error"}...]}, each `report` exactly the
single-trace command's `--json`. The checks run on the same engine as `gpcheck sweep`.

check.py and replay.py call `add_corpus_arguments` on their parsers and hand over to
`run_check_corpus` / `run_replay_corpus` when `checker.corpus.is_corpus` says so."""

from __future__ import annotations

import argparse
import io
from collections import Counter
from typing import Any, Sequence

from rich.console import Console
from rich.table import Table

from gpcheck.checker.report import textout
from gpcheck.checker.cli.commands.common import consts_of, write_out
from gpcheck.checker.cli.commands.fanout import add_cluster_flags, interrupted_exit_code, run_fanned_out
from gpcheck.checker.distributed.corpus import (
    OBSERVATION_SUFFIXES,
    REPLAY_SUFFIXES,
    TraceJob,
    TraceOutcome,
    TraceRun,
    corpus_exit_code,
    expand_traces,
    job_flags,
    run_corpus,
)
from gpcheck.checker.report.render import to_json_bytes
from gpcheck.spec.errors import UsageError


def add_corpus_arguments(p: argparse.ArgumentParser) -> None:
    """More traces after the first, and where to check them."""
    p.add_argument("more", nargs="*", metavar="MORE",
                   help="more traces; with several, a folder or a quoted glob ('runs/**/*.jsonl') every "
                        "trace is checked in parallel on a cluster, with every flag of the single command "
                        "(--timeout is each trace's), and summarised in one table")
    add_cluster_flags(p)


def inputs_of(args: argparse.Namespace, first: str) -> list[str]:
    return [first, *args.more]


def run_check_corpus(args: argparse.Namespace, inputs: Sequence[str], outcome: TraceOutcome) -> int:
    """`gpcheck check` of many observation traces; `outcome` is check.py's per-trace function."""
    specs = [i for i in inputs if i.endswith(".gpspec")]
    if specs:
        raise UsageError(f"{specs[0]}: a spec; with several inputs `gpcheck check` takes traces "
                         "(type-check specs one at a time)")
    traces = expand_traces(inputs, OBSERVATION_SUFFIXES)
    flags = job_flags(args, "file")
    return _run(args, "check", [TraceJob("check", t, flags, outcome) for t in traces])


def run_replay_corpus(args: argparse.Namespace, inputs: Sequence[str], outcome: TraceOutcome) -> int:
    """`gpcheck replay` of many traces, each against --model or the model its header names;
    `outcome` is replay.py's per-trace function."""
    for flag in ("perfetto", "itf"):
        if getattr(args, flag, None):
            raise UsageError(f"--{flag} writes one file: give it with a single trace")
    consts_of(args)  # a malformed --const is a usage error before any cluster starts
    traces = expand_traces(inputs, REPLAY_SUFFIXES)
    flags = job_flags(args, "trace")
    return _run(args, "replay", [TraceJob("replay", t, flags, outcome) for t in traces])


def _run(args: argparse.Namespace, mode: str, jobs: list[TraceJob]) -> int:
    def emit(runs: list[TraceRun | None], where: str, seconds: float, interrupted: bool) -> None:
        if args.json:
            doc: dict[str, Any] = {"command": mode, "traces": [r.to_json() for r in runs if r is not None],
                                   "seconds": round(seconds, 4), "interrupted": interrupted}
            if interrupted:
                doc["not_run"] = [j.trace for j, r in zip(jobs, runs) if r is None]
            write_out(to_json_bytes(doc))
        else:
            write_out(render_corpus_text(mode, runs, f"gpcheck {mode}: {len(jobs)} traces on {where}, {seconds:.1f} s"))

    runs, interrupted = run_fanned_out(args, len(jobs), "traces", lambda c: run_corpus(c, jobs), _progress, emit)
    if interrupted:
        return interrupted_exit_code()
    return corpus_exit_code([r.exit_code for r in runs if r is not None])


def _progress(done: int, total: int, run: TraceRun) -> str:
    secs = f"{run.seconds:.2f} s" if run.seconds is not None else "failed"
    return f"[{done}/{total}] {run.trace}  {_verdict(run)}  {secs}"


def _verdict(run: TraceRun) -> str:
    """The trace's verdict: replay's conforms / diverges / unknown, check's ok / violated /
    unknown (a property the trace cannot decide), or why there is none."""
    if run.report is None:
        return "bad input" if run.exit_code == 2 else "unknown"
    if "verdict" in run.report:
        return str(run.report["verdict"])
    return {1: "violated", 3: "unknown"}.get(run.exit_code, "ok")


def render_corpus_text(mode: str, runs: Sequence[TraceRun | None], title: str, width: int | None = None) -> str:
    """One row per finished trace: its verdict and, by name, its properties that do not hold
    (observation properties by status); then the errors and a count. One summary column rather
    than a column per property keeps the table inside the terminal."""
    from gpcheck.checker.distributed.sweep_report import results_summary

    buf = io.StringIO()
    width = width if width is not None else textout.width(160)
    console = Console(file=buf, width=width, force_terminal=False, color_system=None, highlight=False)
    console.print(title, markup=False)
    done = [r for r in runs if r is not None]
    table = Table(show_edge=False, box=None, pad_edge=False)
    table.add_column("trace", overflow="fold")
    if mode == "replay":
        table.add_column("model")
    table.add_column("verdict")
    table.add_column("properties")
    table.add_column("time", justify="right")
    for r in done:
        results = (r.report or {}).get("results", [])
        row = [r.trace] + ([(r.report or {}).get("model", "-")] if mode == "replay" else []) + [_verdict(r)]
        if r.report is None:
            row.append("-")
        elif mode == "check":
            row.append(", ".join(f"{res['property']} {res['status']}" for res in results
                                 if res["status"] != "ok") or "all ok")
        else:
            row.append(results_summary(results))
        row.append(f"{r.seconds:.2f}s" if r.seconds is not None else "-")
        table.add_row(*row, style={1: "bold red", 2: "magenta", 3: "magenta"}.get(r.exit_code))
    console.print(table)
    for r in done:
        if r.error:
            console.print(r.error if r.error.startswith(r.trace) else f"{r.trace}: {r.error}", markup=False)
    counts = Counter(_verdict(r) for r in done)
    summary = ", ".join(f"{n} {w}" for w, n in sorted(counts.items()))
    if mode == "replay":
        broken = sum(1 for r in done if r.exit_code == 1 and _verdict(r) == "conforms")
        summary += f"; {broken} conforming with a violated property" if broken else ""
    console.print(f"{len(done)} of {len(runs)} traces checked: {summary}", markup=False)
    return buf.getvalue()

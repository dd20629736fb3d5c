"""Trace corpora: `gpcheck check` and `gpcheck replay` over many traces (a folder, a glob or a
list), each trace an independent check on a cluster (checker/distributed/cluster.py).

Why: operators check every trace a fleet records; the traces are independent, so they spread
over cores and machines like a sweep's combinations. Each trace's report is exactly what the
single-trace command prints with `--json`; a trace that is bad input (unreadable, malformed)
is reported in its row with the message and does not stop the others.

Workers open the traces by path: a remote cluster's workers must see the same files."""

from __future__ import annotations

import argparse
import glob
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from gpcheck.checker.distributed.cluster import Cluster
from gpcheck.spec.errors import GpcheckError, SpecError, UsageError

# What a folder contributes, per command (gpcheck JSON Lines for both; ITF only for replay).
OBSERVATION_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".trace")
REPLAY_SUFFIXES = OBSERVATION_SUFFIXES + (".itf.json",)
_GLOB_CHARS = ("*", "?", "[")


def is_corpus(inputs: Sequence[str]) -> bool:
    """More than one input, a folder, or a glob pattern (quoted, so the shell left it alone)."""
    return len(inputs) > 1 or any(os.path.isdir(i) or _is_pattern(i) for i in inputs)


def _is_pattern(text: str) -> bool:
    return any(c in text for c in _GLOB_CHARS) and not os.path.exists(text)


def expand_traces(inputs: Sequence[str], suffixes: Sequence[str]) -> list[str]:
    """Files in input order; a folder gives its traces (recursively, sorted), a pattern its
    matches (`**` recursive, sorted). UsageError when a folder or pattern gives none."""
    out: list[str] = []
    for item in inputs:
        if os.path.isdir(item):
            found = sorted(str(p) for p in Path(item).rglob("*") if p.is_file() and p.name.endswith(tuple(suffixes)))
            if not found:
                raise UsageError(f"{item}: no traces in this folder (looked for {', '.join(suffixes)})")
        elif _is_pattern(item):
            found = sorted(p for p in glob.glob(item, recursive=True) if os.path.isfile(p))
            if not found:
                raise UsageError(f"{item}: no file matches this pattern")
        else:
            found = [item]
        out.extend(found)
    return list(dict.fromkeys(out))


# NOTE(corpus-flags): a corpus run is the single runs side by side. A job carries the command's
# parsed flags whole (`flags`: every argparse destination but the few in CORPUS_LEVEL_FLAGS, which
# shape the corpus run itself) and the single command's own per-trace function (`outcome`), which
# the single command calls too; so a flag added to `check` or `replay` reaches every trace's job
# without anyone listing it here. tests/unit/test_corpus_flags.py compares each row with the single
# command's --json for every flag of both parsers.
CORPUS_LEVEL_FLAGS = frozenset({
    "run", "command", "more",  # argparse's own: the handler, the subcommand, the traces after the first
    "json", "width", "no_progress",  # how the corpus run prints (each row's report is JSON anyway)
    "cluster", "workers",  # where the jobs run
    "max_memory",  # the command's process (workers are separate processes with their own memory)
    "perfetto", "itf",  # output files of one trace: refused with several (checker/cli/commands/corpus.py)
})

TraceOutcome = Callable[[argparse.Namespace, str], tuple[dict[str, Any], int]]
"""A command's per-trace function: (flags, trace) -> (its --json report, its exit code); raises
GpcheckError on bad input."""


@dataclass(frozen=True)
class TraceJob:
    """One trace to check: `mode` is `check` (observation properties) or `replay` (against a
    model); `flags` the single-trace command's parsed flags, `outcome` its per-trace function
    (a module-level function, sent to workers by reference). `flags["timeout"]` is this trace's
    limit, as for the single command."""

    mode: str
    trace: str
    flags: Mapping[str, Any]
    outcome: TraceOutcome


def job_flags(args: argparse.Namespace, first: str) -> dict[str, Any]:
    """The flags of `args` that every trace's job gets (all but CORPUS_LEVEL_FLAGS and the
    positional `first`, whose destination names the trace)."""
    return {k: v for k, v in vars(args).items() if k not in CORPUS_LEVEL_FLAGS and k != first}


@dataclass
class TraceRun:
    """One trace's outcome; `report` is the single-trace command's JSON, or `error` says why
    there is none (bad input: exit code 2; the cluster failed twice: 3)."""

    trace: str
    exit_code: int
    seconds: float | None
    report: dict[str, Any] | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"trace": self.trace, "exit_code": self.exit_code,
                               "seconds": None if self.seconds is None else round(self.seconds, 4)}
        if self.report is not None:
            out["report"] = self.report
        if self.error:
            out["error"] = self.error
        return out


def check_job(job: TraceJob) -> TraceRun:
    """Run on a worker: one trace, as the single-trace command with the same flags and `--json`.
    The trace's --timeout holds on the worker as on the command line (budget.task_limit): replay
    ends undecided with its partial report; a check that has none is exit 3 with the reason."""
    from gpcheck.checker.core import budget

    started = time.monotonic()
    flags = argparse.Namespace(**job.flags)
    try:
        with budget.task_limit(job.flags.get("timeout")):
            report, code = job.outcome(flags, job.trace)
            stopped = budget.stopped() if job.mode == "check" else None
    except budget.Stop as e:
        return TraceRun(job.trace, e.exit_code, time.monotonic() - started, error=e.text)
    except SpecError as e:
        return TraceRun(job.trace, 2, time.monotonic() - started, error=e.render())
    except GpcheckError as e:
        return TraceRun(job.trace, 2, time.monotonic() - started, error=str(e))
    if stopped:
        return TraceRun(job.trace, 3, time.monotonic() - started, error=stopped)  # as `Stop`: unknown
    return TraceRun(job.trace, code, time.monotonic() - started, report)


def run_corpus(cluster: Cluster, jobs: Sequence[TraceJob]) -> Iterator[tuple[int, TraceRun]]:
    """Check every trace on `cluster`; yield (position, run) as each finishes."""
    for outcome in cluster.run(check_job, jobs):
        run = outcome.value
        if run is None:
            run = TraceRun(jobs[outcome.index].trace, 3, None, error=outcome.error or "no result")
        yield outcome.index, run


def corpus_exit_code(codes: Sequence[int]) -> int:
    """1 a trace violates or diverges; else 2 a trace was bad input; else 3 a trace is
    undecided (or could not be checked); else 0."""
    for code in (1, 2, 3):
        if code in codes:
            return code
    return 0

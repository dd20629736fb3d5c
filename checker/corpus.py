"""Trace corpora: `gpcheck check` and `gpcheck replay` over many traces (a folder, a glob or a
list), each trace an independent check on a cluster (checker/cluster.py).

Why: operators check every trace a fleet records; the traces are independent, so they spread
over cores and machines like a sweep's combinations. Each trace's report is exactly what the
single-trace command prints with `--json`; a trace that is bad input (unreadable, malformed)
is reported in its row with the message and does not stop the others.

Workers open the traces by path: a remote cluster's workers must see the same files."""

from __future__ import annotations

import glob
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from gpcheck.checker.cluster import Cluster
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


@dataclass(frozen=True)
class TraceJob:
    """One trace to check: `mode` is `check` (observation properties) or `replay` (against a
    model); the options are those of the single-trace command."""

    mode: str
    trace: str
    properties: tuple[str, ...] | None = None
    observe: Mapping[str, int | None] = field(default_factory=dict)  # check_trace thresholds
    model: str | None = None
    constants: Mapping[str, int] = field(default_factory=dict)
    max_hidden: int | None = None
    max_candidates: int | None = None
    format: str | None = None


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
    """Run on a worker: one trace, as `gpcheck check TRACE --json` or `gpcheck replay TRACE --json`."""
    from gpcheck.checker.trace_api import check_trace, replay

    started = time.monotonic()
    try:
        if job.mode == "check":
            obs = check_trace(job.trace, job.properties, **job.observe)
            report, code = obs.to_json(), obs.exit_code
        else:
            rep = replay(job.trace, job.model, dict(job.constants), max_hidden=job.max_hidden,
                         max_candidates=job.max_candidates, format=job.format)
            report, code = rep.to_json(), rep.exit_code
    except SpecError as e:
        return TraceRun(job.trace, 2, time.monotonic() - started, error=e.render())
    except GpcheckError as e:
        return TraceRun(job.trace, 2, time.monotonic() - started, error=str(e))
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

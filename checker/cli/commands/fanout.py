"""What `gpcheck sweep` and the multi-trace `check` / `replay` share: the cluster flags, and the
loop that runs the checks on the cluster, prints a progress line as each finishes, and prints
the results (on an interrupt, everything that had finished) before the cluster is shut down,
which can take seconds."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, Iterator, TypeVar

from gpcheck.checker.core import budget
from gpcheck.checker.distributed.cluster import Cluster
from gpcheck.checker.cli.commands.flags import count

R = TypeVar("R")

EXIT_INTERRUPTED = 130


def add_cluster_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", metavar="ADDRESS", default=None,
                   help="an existing Dask scheduler (e.g. tcp://10.0.0.5:8786) instead of a local cluster")
    p.add_argument("--workers", type=count, default=None, metavar="N",
                   help="worker processes of the local cluster (default: one per core)")
    if "--no-progress" not in p._option_string_actions:  # replay has its own, for one long trace
        p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")


def interrupted_exit_code() -> int:
    """The exit code of a fanned-out run that ended early: 128 + the signal (130 for Ctrl-C, 143
    for SIGTERM), 3 (unknown) when the command's memory limit stopped it."""
    if budget.stopped() and budget.reason() != budget.INTERRUPTED:
        return budget.exit_code_for(budget.reason(), None)
    return budget.signal_exit_code() or EXIT_INTERRUPTED


def run_fanned_out(args: argparse.Namespace, total: int, what: str,
                   start: Callable[[Cluster], Iterator[tuple[int, R]]],
                   progress: Callable[[int, int, R], str],
                   emit: Callable[[list[R | None], str, float, bool], None]) -> tuple[list[R | None], bool]:
    """Run `start(cluster)` (which yields (position, result) as checks finish) on the cluster the
    flags name; call `emit(results, where, seconds, interrupted)` exactly once, with None for a
    check not finished. Returns the results and whether the user interrupted."""
    from gpcheck.checker.distributed.cluster import open_cluster, unauthenticated_warning

    insecure = unauthenticated_warning(args.cluster)
    if insecure:
        sys.stderr.write(f"warning: {insecure}\n")
    results: list[R | None] = [None] * total
    where = "the cluster"
    interrupted = False
    once = _Once()
    started = time.monotonic()
    try:
        with open_cluster(args.cluster, args.workers) as cluster:
            where = f"{cluster.where} ({cluster.workers} worker{'s' if cluster.workers != 1 else ''})"
            _note(args, f"checking {total} {what} on {where}")
            try:
                for done, (i, result) in enumerate(start(cluster), 1):
                    results[i] = result
                    _note(args, progress(done, total, result))
            except (KeyboardInterrupt, budget.Stop):  # Ctrl-C or SIGTERM (checker/core/budget.py)
                interrupted = True
            # before the cluster shuts down, which can take seconds
            once.emit(emit, results, where, started, interrupted)
    except (KeyboardInterrupt, budget.Stop):  # while the cluster started or shut down
        interrupted = True
    once.emit(emit, results, where, started, interrupted)
    return results, interrupted


class _Once:
    """Calls `emit` exactly once, whole. After a stop the budget raises `Stop` again every
    GRACE seconds; one raised while the rows were being printed lost them (exit 130, nothing on
    standard output), so the printing runs in `budget.writing_report()`, where none is raised.
    A `Stop` raised just before that region began is retried (nothing was written yet); one
    raised just after it ended finds the rows printed."""

    def __init__(self) -> None:
        self.begun = self.done = False

    def emit(self, emit: Callable[[list[R | None], str, float, bool], None], results: list[R | None],
             where: str, started: float, interrupted: bool) -> None:
        while not self.done:
            try:
                with budget.writing_report():
                    self.begun = True
                    emit(results, where, time.monotonic() - started, interrupted)
                    self.done = True
            except (KeyboardInterrupt, budget.Stop):
                if self.begun and not self.done:  # a Ctrl-C with no budget active (the API): not ours to retry
                    raise


def _note(args: argparse.Namespace, line: str) -> None:
    if not args.no_progress:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

"""Many independent checks at once, on Dask's distributed engine: an embedded local cluster
(one single-threaded worker process per core) or an existing cluster given by its address.

Why Dask (`distributed`) and not Ray: measured on this work with
tests/bench/bench_sweep_engines.py on a 2-core machine, a local cluster of two workers starts
in 2-4 s against Ray's 12-20 s, holds about 160 MB against 700 MB, and installs 44 MB of
pure-Python wheels against 258 MB. Ray schedules tiny tasks faster, which matters less than its
start-up, paid by every `gpcheck sweep`, for sweeps of tens to hundreds of checks. README.md
("Sweeps and trace corpora") gives the numbers.

This is the only module that imports dask/distributed (tests/unit/test_layers.py); it is imported
only by the commands that fan out, so `gpcheck verify` does not pay for it.

NOTE(one-retry): a check whose task fails (an exception, or its worker process died: killed, out
of memory) is submitted once more; a second failure is reported to the caller with the reason and
the check is never silently dropped. The embedded cluster's scheduler gives up on a task at the
first worker death (`allowed-failures` 0) so that this one retry is the only one; an existing
cluster's scheduler may retry more by its own configuration before we see the failure."""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Generic, Iterator, Sequence, TypeVar

from gpcheck.spec.errors import UsageError

T = TypeVar("T")
R = TypeVar("R")

CONNECT_TIMEOUT_S = 10


@dataclass(frozen=True)
class Outcome(Generic[R]):
    """The end of one check: its position in the submitted list, and its value or, after the
    retry, why it failed."""

    index: int
    value: R | None
    error: str | None = None
    attempts: int = 1


@dataclass
class Cluster:
    """A connected Dask client and a description of where the work runs."""

    client: Any  # distributed.Client
    where: str
    workers: int

    def run(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[Outcome[R]]:
        """Run `fn(item)` for every item on the cluster; yield each outcome as it finishes
        (NOTE(one-retry)). Closing the iterator early (an interrupt) cancels what is pending."""
        from distributed import as_completed

        attempt: dict[Any, tuple[int, int]] = {}
        futures = []
        for i, item in enumerate(items):
            fut = self.client.submit(fn, item, pure=False)
            attempt[fut.key] = (i, 1)
            futures.append(fut)
        pending = as_completed(futures, loop=self.client.loop)
        live = {f.key: f for f in futures}
        try:
            for fut in pending:
                i, n = attempt.pop(fut.key)
                live.pop(fut.key, None)
                if fut.status == "finished":
                    yield Outcome(i, fut.result(), attempts=n)
                    continue
                reason = _failure(fut)
                if n == 1:
                    again = self.client.submit(fn, items[i], pure=False)
                    attempt[again.key] = (i, 2)
                    live[again.key] = again
                    pending.add(again)
                else:
                    yield Outcome(i, None, f"failed twice on the cluster: {reason}", attempts=n)
        finally:
            if live:
                self.client.cancel(list(live.values()))


def _failure(fut: Any) -> str:
    if fut.status == "cancelled":
        return "the task was cancelled by the cluster"
    try:
        exc = fut.exception()
    except Exception as e:  # the future's own failure to report (connection lost)
        exc = e
    return f"{type(exc).__name__}: {exc}"


@contextmanager
def open_cluster(address: str | None = None, workers: int | None = None) -> Iterator[Cluster]:
    """The cluster at `address` (e.g. `tcp://10.0.0.5:8786`; its workers must have gpcheck
    installed and see the same files), or an embedded local one with `workers` processes
    (default: one per core). Closed on exit; UsageError when it cannot be reached."""
    import dask
    from distributed import Client, LocalCluster

    for name in ("distributed", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    if workers is not None and workers < 1:
        raise UsageError("--workers must be >= 1")
    local = None
    # One task at a time per single-threaded worker, so that a worker's death fails only the
    # task it was running, not others queued behind it.
    with dask.config.set({"distributed.scheduler.allowed-failures": 0,
                          "distributed.scheduler.worker-saturation": 1.0}):
        if address:
            _check_address(address)
            try:
                client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
            except (OSError, TimeoutError, ValueError) as e:
                raise UsageError(f"--cluster {address}: cannot connect: {e}") from None
            try:
                client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError) as e:
                client.close()
                raise UsageError(f"--cluster {address}: no worker joined in {CONNECT_TIMEOUT_S} s ({e})") from None
            where = f"cluster at {address}"
        else:
            n = workers or os.cpu_count() or 1
            try:
                local = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                     dashboard_address=None, silence_logs=logging.CRITICAL)
            except (OSError, RuntimeError) as e:
                raise UsageError(f"cannot start a local cluster of {n} workers: {e}") from None
            client = Client(local, set_as_default=False)
            where = "local cluster"
    cluster = Cluster(client, where, len(client.nthreads()))
    try:
        yield cluster
    finally:
        _close(client, local)


def _check_address(address: str) -> None:
    # Checked before a Client exists: one that fails to parse its address leaves a half-built
    # client whose finaliser prints a traceback 40 s later.
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme in ("tcp", "tls"):
            parse_host_port(location)
    except ValueError as e:
        raise UsageError(f"--cluster {address}: not a scheduler address such as tcp://HOST:8786 ({e})") from None


def _close(client: Any, local: Any) -> None:
    # Shutting down after an interrupt may meet workers that the same Ctrl-C already stopped;
    # what was computed is already out, so a failure to close cleanly is not the user's concern.
    for thing in (client, local):
        if thing is None:
            continue
        try:
            thing.close()
        except Exception:  # noqa: BLE001 (see above)
            pass

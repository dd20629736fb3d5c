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
cluster's scheduler may retry more by its own configuration before we see the failure.

NOTE(private-cluster): the embedded cluster speaks TLS with credentials made for this run alone
(`Security.temporary()`: a key and certificate held in memory and handed to the worker
processes, never written to disk), and every connection must present them: another local user
who finds the scheduler's port on 127.0.0.1 cannot submit work to it. An existing cluster
(`--cluster tls://HOST:PORT`) takes its credentials from Dask's configuration: the environment
variables DASK_DISTRIBUTED__COMM__TLS__CA_FILE, DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT and
DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY (or the same keys in a Dask YAML file); a `tcp://`
address is unauthenticated (docs/fail-safe.md says so).

NOTE(bounded-cluster): a run always ends. Each task checks first that the worker runs the same
gpcheck as the client (`code_fingerprint`; a worker without gpcheck fails to load the task):
otherwise the task fails with the reason, and is retried once, then reported. While nothing
finishes, the client looks at the cluster every POLL_S seconds: with no worker, or no
scheduler, for STALL_S seconds in a row, every check not finished is reported failed with that
reason (the commands show it as `unknown`, exit 3), and the cluster is closed."""

from __future__ import annotations

import gc
import hashlib
import importlib.util
import logging
import os
import queue
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Generic, Iterator, Sequence, TypeVar

from gpcheck.spec.errors import UsageError

T = TypeVar("T")
R = TypeVar("R")

CONNECT_TIMEOUT_S = 10
POLL_S = 1.0  # how often a run with nothing finished looks at the cluster (NOTE(bounded-cluster))
STALL_S = 30.0  # how long a run waits with no worker or no scheduler before it gives up ($GPCHECK_CLUSTER_STALL)
CLOSE_TIMEOUT_S = 10  # shutting down: then the processes are left to the local cluster's own kill
NO_WORKER = "the cluster has no worker (they died or left: one that cannot import gpcheck leaves at its first task)"


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 of gpcheck's own source: every module file of its packages, by its path inside
    the package (a checkout and a wheel of the same code agree), and the version."""
    import gpcheck

    h = hashlib.sha256(gpcheck.__version__.encode())
    for pkg in ("spec", "gpmodel", "checker", "traces"):
        spec = importlib.util.find_spec(f"gpcheck.{pkg}")
        if spec is None or not spec.submodule_search_locations:
            continue
        root = Path(list(spec.submodule_search_locations)[0])
        for file in sorted(root.rglob("*.py")):
            h.update(f"\0{pkg}/{file.relative_to(root).as_posix()}\0".encode())
            h.update(file.read_bytes())
    return h.hexdigest()


class WrongGpcheck(RuntimeError):
    """A worker runs another gpcheck than the client."""


def checked_call(fn: Callable[[T], R], item: T, fingerprint: str) -> R:
    """Run on a worker: `fn(item)`, once the worker's gpcheck is the client's."""
    here = code_fingerprint()
    if here != fingerprint:
        raise WrongGpcheck(f"this worker runs another gpcheck (code {here[:12]}, the client's {fingerprint[:12]})")
    return fn(item)


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
    stall_s: float = -1.0  # STALL_S, or $GPCHECK_CLUSTER_STALL (seconds) when set

    def __post_init__(self) -> None:
        if self.stall_s < 0:
            try:
                self.stall_s = max(0.0, float(os.environ.get("GPCHECK_CLUSTER_STALL", STALL_S)))
            except ValueError:
                self.stall_s = STALL_S

    def run(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[Outcome[R]]:
        """Run `fn(item)` for every item on the cluster; yield each outcome as it finishes
        (NOTE(one-retry), NOTE(bounded-cluster)). Closing the iterator early (an interrupt)
        cancels what is pending."""
        fingerprint = code_fingerprint()
        attempt: dict[Any, tuple[int, int]] = {}
        live: dict[Any, Any] = {}
        finished: queue.SimpleQueue[Any] = queue.SimpleQueue()  # futures, put by Dask's callback thread

        def submit(i: int, n: int) -> None:
            fut = self.client.submit(checked_call, fn, items[i], fingerprint, pure=False)
            attempt[fut.key] = (i, n)
            live[fut.key] = fut
            fut.add_done_callback(finished.put)

        for i in range(len(items)):
            submit(i, 1)
        stalled_since: float | None = None
        try:
            while live:
                done = []
                try:
                    done.append(finished.get(timeout=POLL_S))
                    while True:
                        done.append(finished.get_nowait())
                except queue.Empty:
                    pass
                done = [f for f in done if f.key in live]
                for fut in sorted(done, key=lambda f: attempt[f.key]):
                    i, n = attempt.pop(fut.key)
                    live.pop(fut.key, None)
                    if fut.status == "finished":
                        try:
                            value = fut.result(timeout=CONNECT_TIMEOUT_S)
                        except Exception as e:  # noqa: BLE001 - the result was lost with its worker
                            yield Outcome(i, None, f"its result was lost: {type(e).__name__}: {e}", attempts=n)
                            continue
                        yield Outcome(i, value, attempts=n)
                    elif n == 1:
                        submit(i, 2)
                    else:
                        yield Outcome(i, None, f"failed twice on the cluster: {_failure(fut)}", attempts=n)
                if done:
                    stalled_since = None
                    continue
                problem = self.problem()
                if problem is None:
                    stalled_since = None
                    continue
                now = time.monotonic()
                stalled_since = now if stalled_since is None else stalled_since
                if now - stalled_since >= self.stall_s:
                    for key in sorted(live, key=lambda k: attempt[k]):
                        i, n = attempt.pop(key)
                        yield Outcome(i, None, f"not checked: {problem} for {self.stall_s:g} s", attempts=n)
                    self.cancel(list(live.values()))
                    live.clear()
        finally:
            if live:
                self.cancel(list(live.values()))

    def problem(self) -> str | None:
        """Why nothing can finish now (no scheduler, no worker), or None."""
        if self.client.status != "running":
            return "the scheduler went away"
        try:
            info = self.client.scheduler_info(n_workers=-1)
        except Exception as e:  # noqa: BLE001 - a scheduler that does not answer
            return f"the scheduler does not answer ({type(e).__name__})"
        if not info.get("workers"):
            return NO_WORKER
        return None

    def cancel(self, futures: list[Any]) -> None:
        """Cancel futures, without waiting on a scheduler that may be gone."""
        try:
            self.client.cancel(futures, asynchronous=False) if self.client.status == "running" else None
        except Exception:  # noqa: BLE001 - nothing left to cancel on
            pass


def _failure(fut: Any) -> str:
    if fut.status == "cancelled":
        return "the task was cancelled by the cluster"
    try:
        exc = fut.exception(timeout=CONNECT_TIMEOUT_S)
    except Exception as e:  # the future's own failure to report (connection lost)
        exc = e
    text = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    if "deserializ" in text:  # Dask's words for "this process cannot import what the task needs"
        text += " (the scheduler or a worker cannot load gpcheck's task: is the same gpcheck installed there?)"
    return text


@contextmanager
def open_cluster(address: str | None = None, workers: int | None = None) -> Iterator[Cluster]:
    """The cluster at `address` (e.g. `tls://10.0.0.5:8786` with the credentials in Dask's
    configuration, NOTE(private-cluster); its workers must run the same gpcheck and see the same
    files), or an embedded local one with `workers` processes (default: one per core) that only
    this process can use. Closed on exit; UsageError when it cannot be reached."""
    import dask
    import distributed  # noqa: F401 - its configuration's defaults, before config.set below (whose exit would drop them)

    for name in ("distributed", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    if workers is not None and workers < 1:
        raise UsageError("--workers must be >= 1")
    # One task at a time per single-threaded worker, so that a worker's death fails only the
    # task it was running, not others queued behind it. No dashboard: a sweep has no use for
    # one, and Dask would warn when its port is taken.
    with dask.config.set({"distributed.scheduler.allowed-failures": 0,
                          "distributed.scheduler.worker-saturation": 1.0,
                          "distributed.comm.timeouts.connect": f"{CONNECT_TIMEOUT_S}s"}):
        client, local, where = _connect(address, workers)
        cluster = Cluster(client, where, len(client.nthreads()))
        try:
            yield cluster
        finally:
            _close(client, local)


def _connect(address: str | None, workers: int | None) -> tuple[Any, Any, str]:
    from distributed import Client, LocalCluster

    local = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Dask's advice on ports and dashboards: not the user's concern
        if address:
            _check_address(address)
            try:
                client = _client(Client, address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
            except (OSError, TimeoutError, ValueError) as e:
                raise UsageError(f"--cluster {address}: cannot connect: {e}") from None
            try:
                client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError) as e:
                _close(client, None)
                raise UsageError(f"--cluster {address}: no worker joined in {CONNECT_TIMEOUT_S} s ({e})") from None
            where = f"cluster at {address}"
        else:
            n = workers or os.cpu_count() or 1
            try:
                from distributed.security import Security

                security = Security.temporary()  # NOTE(private-cluster)
            except ImportError as e:
                raise UsageError(f"cannot start a private local cluster: {e}") from None
            try:
                local = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                                     protocol="tls://", security=security, dashboard_address=None,
                                     worker_dashboard_address=None, silence_logs=logging.CRITICAL)
            except (OSError, RuntimeError) as e:
                raise UsageError(f"cannot start a local cluster of {n} workers: {e}") from None
            client = _client(Client, local, set_as_default=False)
            where = "local cluster"
    return client, local, where


def _client(make: Any, *args: Any, **kwargs: Any) -> Any:
    """A Dask Client made with the garbage collector off, and a collection after it failed: a
    Client left half made by a failed connection, finalised inside another Client's start, closes
    its loop runner under the lock that start holds (distributed's LoopRunner), a deadlock
    (tests/unit/test_cluster_faults.py hung on it)."""
    gc.disable()
    try:
        return make(*args, **kwargs)
    except BaseException:
        gc.enable()
        gc.collect()
        raise
    finally:
        gc.enable()


def unauthenticated_warning(address: str | None) -> str | None:
    """A warning for a `--cluster` address whose connection nobody authenticates (`tcp://`, or
    no scheme, which Dask reads as tcp): whoever reaches that scheduler runs code as its workers'
    user and sees the specs and traces sent (NOTE(private-cluster)); None for tls:// and others."""
    if not address:
        return None
    from distributed.comm.addressing import parse_address

    try:
        scheme, _ = parse_address(address)
    except ValueError:
        return None  # _check_address reports it
    if scheme != "tcp":
        return None
    return (f"--cluster {address}: an unauthenticated connection: anyone who can reach this scheduler can run "
            "code as its workers' user; use tls:// with credentials (docs/fail-safe.md)")


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
    # Bounded: a scheduler that went away is not waited for.
    for thing in (client, local):
        if thing is None:
            continue
        try:
            thing.close(timeout=CLOSE_TIMEOUT_S)
        except Exception:  # noqa: BLE001 (see above)
            pass

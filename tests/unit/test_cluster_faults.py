"""A private cluster that always ends (issue 36; NOTE(private-cluster), NOTE(bounded-cluster) in
checker/distributed/cluster.py): the embedded cluster refuses clients without this run's credentials; a run
whose cluster has no worker or no scheduler ends within a bound with every unfinished check
failed with the reason; a worker with another gpcheck or none fails its tasks with the reason.
The fast tests drive `Cluster.run` with a stand-in client; the real kills are `long` (and in
tests/quality/fault_inject.py)."""

from __future__ import annotations

import gc
import os
import random
import socket
import ssl
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from gpcheck.checker.distributed import cluster as C

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "quality"))
import fault_inject as F  # noqa: E402


class _Future:
    def __init__(self, key: int, value: object = None, status: str = "pending"):
        self.key, self.value, self.status = key, value, status
        self.callbacks: list = []

    def add_done_callback(self, fn) -> None:
        self.callbacks.append(fn)
        if self.status != "pending":
            fn(self)

    def result(self, timeout=None):
        return self.value

    def exception(self):
        return RuntimeError("boom")


class _Client:
    """Finishes the items listed in `finish` at once; the rest never finish."""

    def __init__(self, finish: set[int], workers: dict, status: str = "running"):
        self.finish, self.workers, self.status = finish, workers, status
        self.submitted: list[tuple] = []
        self.cancelled: list = []

    def submit(self, fn, *args, pure=True):
        fn_, item, fingerprint = args
        self.submitted.append(args)
        done = item in self.finish
        return _Future(len(self.submitted), fn_(item) if done else None, "finished" if done else "pending")

    def scheduler_info(self, n_workers=0):
        return {"workers": self.workers}

    def cancel(self, futures, asynchronous=False):
        self.cancelled += futures


@pytest.mark.parametrize("case", ["no_worker", "scheduler_gone"])
def test_a_stalled_cluster_ends_with_every_unfinished_check_failed(case):
    client = _Client({0, 2}, {} if case == "no_worker" else {"w": {}}, "running" if case == "no_worker" else "closed")
    started = time.monotonic()
    outcomes = list(C.Cluster(client, "test", 1, stall_s=0.3).run(lambda x: x * 10, [0, 1, 2, 3]))
    assert time.monotonic() - started < 5
    by = {o.index: o for o in outcomes}
    assert sorted(by) == [0, 1, 2, 3]
    assert (by[0].value, by[2].value) == (0, 20)
    reason = C.NO_WORKER if case == "no_worker" else "the scheduler went away"
    for i in (1, 3):
        assert by[i].value is None and by[i].error == f"not checked: {reason} for 0.3 s"
    assert len(client.cancelled) == (2 if case == "no_worker" else 0)  # a gone scheduler is not waited on
    assert all(fp == C.code_fingerprint() for _, _, fp in client.submitted)


def test_a_healthy_cluster_is_waited_for():
    import threading

    client = _Client(set(), {"w": {}})
    run = C.Cluster(client, "test", 1, stall_s=0.2).run(lambda x: x, [0])
    box: list = []
    t = threading.Thread(target=lambda: box.extend(run), daemon=True)
    t.start()
    t.join(2.5)
    assert t.is_alive() and not box  # a slow check on a live cluster is not given up
    client.status = "closed"  # then the scheduler goes: the run ends
    t.join(5)
    assert not t.is_alive() and box[0].error == "not checked: the scheduler went away for 0.2 s"


def _one_trace(flags, trace):
    return {"trace": trace}, 0


class _FirstOnly(_Client):
    """Finishes the first item submitted at once; the rest never finish (jobs are not hashable)."""

    def submit(self, fn, *args, pure=True):
        fn_, item, fingerprint = args
        self.submitted.append(args)
        done = len(self.submitted) == 1
        return _Future(len(self.submitted), fn_(item) if done else None, "finished" if done else "pending")


def test_a_corpus_trace_the_cluster_loses_is_unknown_with_the_reason():
    """run_corpus's row for a trace whose check the cluster never finished (its worker killed:
    quality/test_fault_inject_slice.py's corpus trial, slow): exit 3 with the reason, the other
    rows the single command's; the corpus's exit code is then 3."""
    from gpcheck.checker.distributed.corpus import TraceJob, corpus_exit_code, run_corpus

    client = _FirstOnly(set(), {}, "running")  # the first trace is checked, then the worker is gone
    jobs = [TraceJob("replay", f"t{i}.jsonl", {"timeout": None}, _one_trace) for i in range(2)]
    rows = dict(run_corpus(C.Cluster(client, "test", 1, stall_s=0.3), jobs))
    assert (rows[0].exit_code, rows[0].report, rows[0].error) == (0, {"trace": "t0.jsonl"}, None)
    assert (rows[1].trace, rows[1].exit_code, rows[1].report) == ("t1.jsonl", 3, None)
    assert rows[1].error == f"not checked: {C.NO_WORKER} for 0.3 s"
    assert corpus_exit_code([r.exit_code for r in rows.values()]) == 3


def test_a_worker_with_another_gpcheck_refuses_the_task():
    assert C.checked_call(lambda x: x + 1, 1, C.code_fingerprint()) == 2
    with pytest.raises(C.WrongGpcheck, match="another gpcheck"):
        C.checked_call(lambda x: x + 1, 1, "0" * 64)


def test_the_stall_bound_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("GPCHECK_CLUSTER_STALL", "7.5")
    assert C.Cluster(None, "x", 1).stall_s == 7.5
    monkeypatch.setenv("GPCHECK_CLUSTER_STALL", "soon")
    assert C.Cluster(None, "x", 1).stall_s == C.STALL_S


@contextmanager
def _no_collection_inside() -> Iterator[None]:
    """No garbage collection while a Client starts, and one after: a refused Client is left half
    made, and if the collector finalises it inside the next Client's start, its `__del__` closes
    its loop runner under the lock that start holds (distributed's LoopRunner): the test hung."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


def test_the_embedded_cluster_refuses_clients_without_its_credentials():
    from distributed import Client
    from distributed.security import Security

    with C.open_cluster(None, 1) as cl:
        address = cl.client.scheduler.address
        assert address.startswith("tls://127.0.0.1:")
        host, port = address.removeprefix("tls://").rsplit(":", 1)
        for attempt in ({"security": None}, {"security": Security.temporary()}, {"tcp": True}):
            with _no_collection_inside(), pytest.raises(Exception):  # noqa: B017 - refused one way or another
                if attempt.pop("tcp", False):  # plain TCP: the TLS server closes the connection
                    c = Client(f"tcp://{host}:{port}", timeout=5, set_as_default=False)
                else:
                    c = Client(address, timeout=5, set_as_default=False, **attempt)
                c.close()
        # A raw TLS client with no certificate: the handshake or the first read fails.
        ctx = ssl.create_default_context()
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
        with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
            with socket.create_connection((host, int(port)), timeout=5) as raw:
                with ctx.wrap_socket(raw) as tls:
                    tls.sendall(b"\0" * 64)
                    if not tls.recv(1):
                        raise ConnectionError("closed")
        # ... while this run's own client works.
        assert [o.value for o in cl.run(abs, [-3])] == [3]


# ------------------------------------------------------------------------------ real processes
@pytest.mark.long
@pytest.mark.parametrize("kind", F.CLUSTER_FAULTS)
def test_killed_workers_or_scheduler_give_honest_unknowns(kind, tmp_path):
    ok, what, seconds = F.cluster_trial(tmp_path, kind, random.Random(kind))
    assert ok, what
    assert seconds < 150


@pytest.mark.long
@pytest.mark.parametrize("where", ["worker", "scheduler_and_worker"])
def test_a_worker_without_gpcheck_gives_unknowns_with_the_reason(where, tmp_path):
    stub = tmp_path / "stub" / "gpcheck"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("raise ImportError('gpcheck is not installed on this worker')\n")
    stubbed = {**os.environ, "PYTHONPATH": str(tmp_path / "stub")}
    plain = {**os.environ, "PYTHONPATH": str(ROOT)}
    scheduler, worker, address = F._start_cluster(tmp_path, stubbed if where != "worker" else plain, stubbed)
    try:
        spec = tmp_path / "grid.gpspec"
        spec.write_text(F.GRID)
        started = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "gpcheck", "sweep", str(spec), "--const", "N=1..3", "--cluster",
                            address, "--json", "--no-progress"], env={**F.env_for(tmp_path / "cache")},
                           capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert time.monotonic() - started < 200
        import json

        doc = json.loads(r.stdout)
        assert r.returncode == 3, r.stderr
        assert ("unauthenticated" in r.stderr) == address.startswith("tcp://"), r.stderr
        assert len(doc["runs"]) == 3
        for run in doc["runs"]:
            assert all(res["verdict"] == "unknown" and res["reason"] for res in run["results"])
            assert "gpcheck" in run["error"], run["error"]
    finally:
        F._kill_group(worker)
        F._kill_group(scheduler)


@pytest.mark.long
def test_a_worker_with_another_gpcheck_gives_unknowns_with_the_reason(tmp_path):
    import json
    import shutil

    copy = tmp_path / "other-gpcheck"
    copy.mkdir()
    for name in ("gpcheck", "spec", "gpmodel", "checker", "traces"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__", "corpus", "record"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    with open(copy / "checker" / "core" / "verdict.py", "a") as f:
        f.write("\n# another version\n")
    plain = {**os.environ, "PYTHONPATH": str(ROOT)}
    scheduler, worker, address = F._start_cluster(tmp_path, plain, {**os.environ, "PYTHONPATH": str(copy)})
    try:
        spec = tmp_path / "grid.gpspec"
        spec.write_text(F.GRID)
        r = subprocess.run([sys.executable, "-m", "gpcheck", "sweep", str(spec), "--const", "N=1..2", "--cluster",
                            address, "--json", "--no-progress"], env=F.env_for(tmp_path / "cache"),
                           capture_output=True, text=True, timeout=300, cwd=tmp_path)
        doc = json.loads(r.stdout)
        assert r.returncode == 3, r.stderr
        for run in doc["runs"]:
            assert all(res["verdict"] == "unknown" for res in run["results"])
            assert "WrongGpcheck: this worker runs another gpcheck" in run["error"], run["error"]
    finally:
        F._kill_group(worker)
        F._kill_group(scheduler)


def test_an_unauthenticated_cluster_address_is_warned_about():
    from gpcheck.checker.distributed.cluster import unauthenticated_warning

    for address in ("tcp://10.0.0.5:8786", "10.0.0.5:8786"):
        warning = unauthenticated_warning(address)
        assert warning and "unauthenticated" in warning and address in warning
    for address in ("tls://10.0.0.5:8786", None, ""):
        assert unauthenticated_warning(address) is None

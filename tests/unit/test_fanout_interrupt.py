"""A Ctrl-C on a fanned-out run (`gpcheck sweep`, `check`/`replay` of many traces) prints every
row that had finished, whole, even when the machine is so loaded that printing them takes longer
than the budget's grace period (checker/cli/commands/fanout.py, `budget.writing_report`).

The failure this pins: after a stop the budget raises `Stop` in the main thread again every
`GRACE` seconds; one landing while the rows were printed lost them (exit 130, nothing on
standard output: tests/unit/test_sweep.py's interrupt test failed so under load). Here the
grace period is shortened and the printing made slow, in process, so the second `Stop` falls
inside it every time instead of now and then."""

from __future__ import annotations

import argparse
import os
import signal
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import pytest

from gpcheck.checker.cli.commands import fanout
from gpcheck.checker.core import budget
from gpcheck.checker.distributed import cluster as cluster_mod

GRACE = 0.02  # seconds: the budget re-raises `Stop` this often after a stop
SLOW = 0.3  # seconds the printing takes: many grace periods, well under the 3 s hard exit


@dataclass
class _FakeCluster:
    where: str = "fake cluster"
    workers: int = 1


def _spin(seconds: float) -> None:
    """Busy for `seconds`: a Python loop, where a signal handler runs at every bytecode."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


@pytest.fixture
def fast_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "GRACE", GRACE)

    @contextmanager
    def open_cluster(address: str | None = None, workers: int | None = None) -> Iterator[_FakeCluster]:
        yield _FakeCluster()

    monkeypatch.setattr(cluster_mod, "open_cluster", open_cluster)


def _run(emit_seconds: float) -> tuple[list[tuple[list[str | None], bool]], bool]:
    def start(cluster: _FakeCluster) -> Iterator[tuple[int, str]]:
        yield 0, "a"
        yield 1, "b"
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the other two still run
        _spin(5.0)  # the budget's Stop ends this at once
        raise AssertionError("the SIGINT did not stop the run")

    printed: list[tuple[list[str | None], bool]] = []

    def emit(results: list[str | None], where: str, seconds: float, interrupted: bool) -> None:
        _spin(emit_seconds)  # printing on a loaded machine
        printed.append((list(results), interrupted))

    args = argparse.Namespace(cluster=None, workers=None, no_progress=True)
    with budget.activate():
        _, interrupted = fanout.run_fanned_out(args, 4, "combinations", start, lambda d, t, r: "", emit)
        code = fanout.interrupted_exit_code()
    assert code == 130
    return printed, interrupted


def test_an_interrupt_prints_the_finished_rows_whole_even_when_printing_is_slow(fast_grace: None) -> None:
    printed, interrupted = _run(SLOW)
    assert interrupted
    assert printed == [(["a", "b", None, None], True)]


def test_an_interrupt_prints_the_finished_rows_once(fast_grace: None) -> None:
    printed, interrupted = _run(0.0)
    assert interrupted
    assert printed == [(["a", "b", None, None], True)]


def test_no_stop_is_raised_while_a_report_is_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "GRACE", GRACE)
    with budget.activate():
        budget.request_stop(budget.INTERRUPTED, "interrupted (test)", signal.SIGINT)
        with budget.writing_report():
            _spin(SLOW)  # a Stop here would fail the test with it
        with pytest.raises(budget.Stop):  # and after the region, the stop is enforced again
            _spin(SLOW)

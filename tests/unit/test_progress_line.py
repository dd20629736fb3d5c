"""Issue 33: on a terminal the redrawn progress line is erased before the report is printed (the
report's first line was glued to a stale frame), and the explicit engine names its phases."""

from __future__ import annotations

import io
import sys

import pytest

from gpcheck.checker.core import progress
from gpcheck.checker.cli.commands.common import write_out


class _Tape(io.StringIO):
    def __init__(self, log: list[tuple[str, str]], name: str, tty: bool):
        super().__init__()
        self.log, self.name, self.tty = log, name, tty

    def write(self, text: str) -> int:  # type: ignore[override]
        self.log.append((self.name, text))
        return len(text)

    def isatty(self) -> bool:
        return self.tty


def test_the_report_erases_the_progress_line_first(monkeypatch: pytest.MonkeyPatch) -> None:
    log: list[tuple[str, str]] = []
    err, out = _Tape(log, "err", True), _Tape(log, "out", True)
    monkeypatch.setattr(sys, "stdout", out)
    with progress.reporting(stream=err):
        reporter = progress._active
        assert reporter is not None
        with reporter.lock:  # as if a frame of 20 columns had been drawn
            reporter.drawn = 20
        write_out("model x: report\n")
    erase = log.index(("err", "\r" + " " * 20 + "\r"))
    report = next(i for i, (name, text) in enumerate(log) if name == "out" and "report" in text)
    assert erase < report
    assert progress._active is None


def test_explicit_phases_are_named() -> None:
    from gpcheck.checker.api.model_api import verify

    seen: list[str] = []
    original = progress.note

    def spy(**kw):  # type: ignore[no-untyped-def]
        if kw.get("phase"):
            seen.append(kw["phase"])
        original(**kw)

    progress.note = spy  # type: ignore[assignment]
    try:
        # the phases of one search (the runs that attribute assumptions would only repeat them)
        from gpcheck.checker.engines.timed import untimed
        from gpcheck.spec import load_spec

        # cwsr's untimed abstraction: the explicit engine's phases (the timed cwsr's go to the zone engine)
        verify(untimed(load_spec("cwsr")), properties=["no_starvation", "rt_preempt_latency"], core="python",
               assumption_use=False)
    finally:
        progress.note = original  # type: ignore[assignment]
    assert "search" in seen
    assert any(p.startswith("liveness") for p in seen) and any(p.startswith("latency") for p in seen)

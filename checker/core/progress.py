"""Progress of the running engine, for people: on a terminal a line on stderr redrawn four times a
second (after the first second), otherwise one plain line every `GPCHECK_PROGRESS_INTERVAL`
seconds (default 10; a log or CI job sees that a long run is alive). Each shows the engine and
its phase, the states found and states per second (explicit search), the depth or the bound
(BMC, k-induction, lasso search, PDR's counterexample search), the property being worked on,
the process's resident memory and the time so far.

Why a meter and a thread: engines only *write* their numbers (`note(...)`: a few attribute
stores, cheap enough for hot loops that already poll the budget), and a daemon thread owned by
the command (`reporting`) decides when and how to show them. So every engine reports the same
way without knowing about terminals, the Z3 engines included (a Z3 call releases the GIL, so
the line keeps moving while Z3 works), and a library caller that never starts the reporter pays
only the stores. Nothing is printed on stdout."""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Iterator

TERMINAL_TICK = 0.25  # seconds between redraws on a terminal
TERMINAL_DELAY = 1.0  # nothing is drawn for runs shorter than this
DEFAULT_INTERVAL = 10.0  # seconds between plain lines when stderr is not a terminal


@dataclass
class Status:
    """What the running engine last said about itself."""

    engine: str = ""
    phase: str = ""
    states: int | None = None
    depth: int | None = None  # BFS depth (explicit)
    bound: int | None = None  # unrolling depth / k (bmc, kind, lasso, pdr's counterexample search)
    frontier: int | None = None
    prop: str | None = None
    started: float = field(default_factory=time.monotonic)


_status: Status | None = None


def begin(engine: str, phase: str = "") -> None:
    """A new engine run starts: its numbers replace the previous ones."""
    global _status
    _status = Status(engine=engine, phase=phase)


def note(*, engine: str | None = None, phase: str | None = None, states: int | None = None,
         depth: int | None = None, bound: int | None = None, frontier: int | None = None,
         prop: str | None = None) -> None:
    """Record the running engine's numbers (only those given change)."""
    global _status
    s = _status
    if s is None or (engine is not None and engine != s.engine):
        s = _status = Status(engine=engine or "")
    if phase is not None:
        s.phase = phase
    if states is not None:
        s.states = states
    if depth is not None:
        s.depth = depth
    if bound is not None:
        s.bound = bound
    if frontier is not None:
        s.frontier = frontier
    if prop is not None:
        s.prop = prop


def current() -> Status | None:
    return _status


def describe(s: Status, now: float | None = None, memory: int | None = None) -> str:
    """One status as text: `explicit: 1,234 states, 5,678 states/s, depth 12, memory 80 MB, 3 s`."""
    from gpcheck.checker.core.budget import format_bytes

    now = time.monotonic() if now is None else now
    elapsed = max(0.0, now - s.started)
    parts = []
    head = s.engine + (f" ({s.phase})" if s.phase else "")
    if s.states is not None:
        parts.append(f"{s.states:,} states")
        if elapsed > 0 and s.engine == "explicit":  # a search's rate (pdr's sample is done by then)
            parts.append(f"{s.states / elapsed:,.0f} states/s")
    if s.depth is not None:
        parts.append(f"depth {s.depth}")
    if s.frontier:
        parts.append(f"frontier {s.frontier:,}")
    if s.bound is not None:
        parts.append(f"bound {s.bound}")
    if s.prop:
        parts.append(f"property {s.prop}")
    if memory is not None:
        parts.append(f"memory {format_bytes(memory)}")
    parts.append(f"{elapsed:,.0f} s")
    return f"{head}: " + ", ".join(parts)


def interval() -> float:
    """Seconds between plain progress lines ($GPCHECK_PROGRESS_INTERVAL, default 10)."""
    text = os.environ.get("GPCHECK_PROGRESS_INTERVAL", "")
    try:
        value = float(text)
    except ValueError:
        return DEFAULT_INTERVAL
    return value if value > 0 and value == value and value != float("inf") else DEFAULT_INTERVAL


_active: "_Reporter | None" = None  # the reporter drawing now, if any


def clear() -> None:
    """Stop drawing and erase the redrawn line, before a report goes to the terminal (stdout and
    stderr share it: the report's first line would otherwise be glued to a stale frame)."""
    reporter = _active
    if reporter is not None:
        reporter.stop()


class _Reporter(threading.Thread):
    def __init__(self, stream: IO[str], terminal: bool, every: float):
        super().__init__(name="gpcheck-progress", daemon=True)
        self.stream = stream
        self.terminal = terminal
        self.every = every
        self.halt = threading.Event()
        self.drawn = 0  # width of the line on the terminal
        self.lock = threading.Lock()  # one writer of the line at a time: a redraw, or the erase

    def run(self) -> None:
        from gpcheck.checker.core.budget import resident_memory

        start = time.monotonic()
        last_line = start
        while not self.halt.wait(TERMINAL_TICK if self.terminal else min(self.every, 0.5)):
            s = _status
            now = time.monotonic()
            if s is None:
                continue
            try:
                if self.terminal:
                    if now - start < TERMINAL_DELAY:
                        continue
                    text = describe(s, now, resident_memory())[:_columns() - 1]
                    with self.lock:
                        if self.halt.is_set():
                            return
                        pad = " " * max(0, self.drawn - len(text))
                        self.stream.write("\r" + text + pad)
                        self.stream.flush()
                        self.drawn = len(text)
                elif now - last_line >= self.every:
                    last_line = now
                    self.stream.write(f"gpcheck: progress: {describe(s, now, resident_memory())}\n")
                    self.stream.flush()
            except (OSError, ValueError):  # stderr closed or gone: stop reporting, keep working
                return

    def stop(self) -> None:
        with self.lock:
            self.halt.set()
            if self.terminal and self.drawn:
                try:
                    self.stream.write("\r" + " " * self.drawn + "\r")
                    self.stream.flush()
                except (OSError, ValueError):
                    pass
                self.drawn = 0
        if self is not threading.current_thread():
            self.join(timeout=1.0)


def _columns() -> int:
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 100


@contextmanager
def reporting(enabled: bool = True, stream: IO[str] | None = None) -> Iterator[None]:
    """Show the meter on `stream` (stderr) while the block runs; nothing when not `enabled`."""
    global _status
    _status = None
    if not enabled:
        yield
        return
    out = stream if stream is not None else sys.stderr
    try:
        terminal = out.isatty()
    except (AttributeError, ValueError):
        terminal = False
    global _active
    reporter = _Reporter(out, terminal, interval())
    reporter.start()
    _active = reporter
    try:
        yield
    finally:
        _active = None
        reporter.stop()
        _status = None

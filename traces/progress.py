"""Progress of a long replay on stderr: events done (of how many, when known), events per second,
candidate states now and at the peak.

On a terminal it is a live `rich` bar; otherwise (a pipe, a CI log) one plain line every few
seconds. Nothing is shown for a replay that ends within `delay` seconds, so short replays and the
test suite print nothing. The replay loop calls the object every few hundred events
(checker/engines/replay/search.py `ReplayOptions.progress`); it keeps no reference to the events.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


class ReplayProgress:
    """A callable `progress(events, candidates, peak)` (see module doc); `close()` at the end."""

    def __init__(self, total: int | None = None, stream: TextIO | None = None, interval: float = 3.0,
                 delay: float = 2.0, live: bool | None = None, clock: Any = time.monotonic):
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.delay = delay
        self.clock = clock
        self.live = self.stream.isatty() if live is None else live
        self.t0 = clock()
        self._next = self.t0 + delay
        self._bar: Any = None
        self._task: Any = None
        self.lines = 0  # plain lines written

    def __call__(self, events: int, candidates: int, peak: int) -> None:
        now = self.clock()
        if now < self._next:
            return
        rate = events / max(now - self.t0, 1e-9)
        if self.live:
            self._update_bar(events, candidates, peak, rate)
            self._next = now + 0.2
            return
        of = f"/{self.total}" if self.total else ""
        pct = f" ({100 * events / self.total:.0f}%)" if self.total else ""
        self.stream.write(f"replay: {events}{of} events{pct}, {rate:,.0f} events/s, "
                          f"{candidates} candidate state(s), peak {peak}\n")
        self.stream.flush()
        self.lines += 1
        self._next = now + self.interval

    def _update_bar(self, events: int, candidates: int, peak: int, rate: float) -> None:
        if self._bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("replay"), BarColumn(), MofNCompleteColumn(), TextColumn("events"),
                                 TextColumn("{task.fields[rate]}"), TextColumn("{task.fields[cands]}"),
                                 TimeElapsedColumn(), console=Console(file=self.stream), transient=True)
            self._bar.start()
            self._task = self._bar.add_task("replay", total=self.total, rate="", cands="")
        self._bar.update(self._task, completed=events, rate=f"{rate:,.0f}/s",
                         cands=f"candidates {candidates} (peak {peak})")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def count_events(path: str) -> int | None:
    """Event lines of a gpcheck trace (for the bar's total): non-blank lines after the header.
    None when the file cannot be read that way (ITF, unreadable): the bar then has no total."""
    import gzip

    try:
        opener = gzip.open if path.endswith(".gz") else open
        n = 0
        with opener(path, "rb") as f:  # type: ignore[operator]
            for raw in f:
                if raw.strip():
                    n += 1
        return max(n - 1, 0)
    except (OSError, EOFError, ValueError):
        return None

"""Where replay and export read events from: an `EventSource` opens a trace (a file, or events
held in memory) and gives its header and its events; `ANY_ACTION` is the action of an event that
may be any (ITF states without action names)."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from gpcheck.traces.format import Event, TraceHeader


ANY_ACTION = "*"  # an event that may be any action (ITF states without action names)
EventSource = Callable[[], tuple[TraceHeader, Iterator[Event]]]


def file_source(path: str) -> EventSource:
    """An EventSource reading a gpcheck trace file (`.gz` too)."""
    from gpcheck.traces.format import open_trace

    def open_() -> tuple[TraceHeader, Iterator[Event]]:
        tr = open_trace(path)
        return tr.header, _closing(tr)

    return open_


class _closing:
    """Iterates a TraceReader and closes it at the end; exposes `path` for messages."""

    def __init__(self, tr: Any):
        self.tr = tr
        self.path = tr.path

    def __iter__(self) -> Iterator[Event]:
        try:
            yield from self.tr.events(check_state=False)  # the Observer validates observations
        finally:
            self.tr.close()


def memory_source(header: TraceHeader, events: Iterable[Event], name: str = "<memory>") -> EventSource:
    """An EventSource over events held in memory. Events without a line number (`line == 0`)
    are numbered as in a file: the header is line 1, the i-th event (from 0) line i + 2."""
    evs = [e if e.line else e._replace(line=i + 2) for i, e in enumerate(events)]

    class _It:
        path = name

        def __iter__(self) -> Iterator[Event]:
            return iter(evs)

    return lambda: (header, _It())  # type: ignore[return-value]

"""NOTE(replay-z3): what replay (checker/engines/replay/search.py) hands to its Z3 fallback when the
candidate set outgrows `max_candidates` (checker/engines/smt/tracefill.py), and the answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpcheck.spec import ir
from gpcheck.traces.format import TraceHeader
from gpcheck.traces.event_source import EventSource
from gpcheck.gpmodel import State


@dataclass(frozen=True)
class SymbolicRequest:
    """NOTE(replay-z3): what replay hands to the Z3 fallback when the candidate set outgrows
    `max_candidates`. The fallback must decide whether the events from line `from_line` on
    can be matched starting from one of `start` (the explicit candidates just before that
    event; None: every initial state the model and `header.init` allow), with up to
    `max_hidden` internal steps before each event, unobserved slots left to the solver; the
    events before `from_line` are already matched. It reopens the trace with `source`."""

    model: ir.Model
    header: TraceHeader
    source: EventSource
    start: tuple[State, ...] | None
    from_line: int
    max_hidden: int


@dataclass(frozen=True)
class SymbolicOutcome:
    """The fallback's answer: conforms True/False/None (None: it could not decide, `reason`
    says why); for False, `line` and `event` name the first event no completion matches."""

    conforms: bool | None
    line: int | None = None
    event: dict[str, Any] | None = None
    reason: str = ""

"""What `gpcheck replay` established about one trace, and its text and JSON rendering.

Kept apart from the search in checker/engines/replay/search.py so that the engine returns plain data and the
command line (or the Python API) chooses how to show it; library code never prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpcheck.checker.core.verdict import Result, Verdict
from gpcheck.spec.show import show


@dataclass(frozen=True)
class Attempt:
    """Why one instance of the logged action did not produce a matching state from a candidate.

    `outcome` is `require` (the instance is disabled: `require_*` say which guard), `state` (it
    is enabled but the next state disagrees with the observation: `mismatches` lists
    `(path, observed, model value)`), or `error` (a modelling error, `message`)."""

    instance: str
    outcome: str
    require_ordinal: int | None = None
    require_line: int | None = None
    require_text: str | None = None
    mismatches: tuple[tuple[str, Any, Any], ...] = ()
    message: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"instance": self.instance, "outcome": self.outcome}
        if self.outcome == "require":
            out["require"] = {"ordinal": self.require_ordinal, "line": self.require_line, "text": self.require_text}
        if self.mismatches:
            out["mismatches"] = [{"path": p, "observed": o, "model": v} for p, o, v in self.mismatches]
        if self.message:
            out["message"] = self.message
        return out

    def describe(self, spec_file: str) -> str:
        if self.outcome == "require":
            return f"{self.instance}: require #{(self.require_ordinal or 0) + 1} failed ({spec_file}:{self.require_line}: {self.require_text})"
        if self.outcome == "state":
            diffs = ", ".join(f"{p} observed {_fmt(o)} but the model gives {_fmt(v)}" for p, o, v in self.mismatches[:6])
            more = f" (+{len(self.mismatches) - 6} more)" if len(self.mismatches) > 6 else ""
            return f"{self.instance}: enabled, but {diffs}{more}"
        return f"{self.instance}: modelling error: {self.message}"


def _fmt(v: Any) -> str:
    return show(v)  # gpspec syntax (spec/show.py): true/false, [a, b], {f: v}


@dataclass(frozen=True)
class Candidate:
    """One state the system may have been in just before the diverging event."""

    state: dict[str, Any]  # decoded (gpmodel layout)
    attempts: tuple[Attempt, ...]
    hidden_states: int = 0  # states reachable from it by internal actions, also tried

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "attempts": [a.to_json() for a in self.attempts],
            "hidden_states": self.hidden_states,
        }


@dataclass(frozen=True)
class Divergence:
    """The first event that no candidate state can produce."""

    line: int
    event: dict[str, Any]
    reason: str
    candidates: tuple[Candidate, ...]
    total_candidates: int

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "event": self.event,
            "reason": self.reason,
            "total_candidates": self.total_candidates,
            "candidates": [c.to_json() for c in self.candidates],
        }


@dataclass
class ReplayReport:
    """The outcome of replaying one trace against one model instance.

    `conforms` is True (the trace is a behaviour prefix of the model), False (`divergence` says
    where), or None (undecided: `reason` says why, e.g. the candidate limit). `results` hold
    the model's invariants and transition properties evaluated on every reconstructed behaviour
    (on the conforming prefix when the trace diverges); `skipped` names properties that a
    finite trace cannot decide (liveness)."""

    trace: str
    model: str
    spec_file: str
    constants: dict[str, int]
    events: int = 0
    conforms: bool | None = None
    divergence: Divergence | None = None
    results: list[Result] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    candidates: int = 0  # candidate states after the last event replayed
    peak_candidates: int = 0
    max_hidden: int | None = 0  # None: any number (the lazy search, NOTE(lazy-replay))
    reason: str | None = None
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    unit: str = "line"  # how `line` numbers read: file lines, or ITF state indexes ("state")

    def where(self, line: int) -> str:
        """A location in the trace: `file:line`, or `file state N` for ITF traces."""
        return f"{self.trace} state {line}" if self.unit == "state" else f"{self.trace}:{line}"

    @property
    def exit_code(self) -> int:
        """0 conforms and every property holds, 1 divergence or violated property, 3 undecided."""
        if self.conforms is False or any(r.verdict is Verdict.VIOLATED for r in self.results):
            return 1
        if self.conforms is None or any(r.verdict is Verdict.UNKNOWN for r in self.results):
            return 3
        return 0

    @property
    def verdict(self) -> str:
        return {True: "conforms", False: "diverges", None: "unknown"}[self.conforms]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "trace": self.trace,
            "model": self.model,
            "file": self.spec_file,
            "constants": self.constants,
            "verdict": self.verdict,
            "unit": self.unit,
            "events": self.events,
            "candidates": self.candidates,
            "peak_candidates": self.peak_candidates,
            "max_hidden": self.max_hidden,
            "engine": "lazy" if self.max_hidden is None else "exhaustive",
            "seconds": round(self.seconds, 4),
            "divergence": self.divergence.to_json() if self.divergence else None,
            "results": [r.to_json() for r in self.results],
            "skipped": self.skipped,
        }
        if self.reason:
            out["reason"] = self.reason
        if self.warnings:
            out["warnings"] = self.warnings
        return out


def _hidden_words(k: int | None) -> str:
    if k is None:
        return "any number of hidden internal steps per event, fired lazily"
    return f"up to {k} hidden internal steps per event"


def render_text(rep: ReplayReport) -> str:
    """The human report printed by `gpcheck replay`."""
    lines: list[str] = []
    head = f"{rep.trace}: {rep.events} events against {rep.model} ({rep.spec_file})"
    if rep.constants:
        head += " with " + " ".join(f"{k}={v}" for k, v in rep.constants.items())
    lines.append(head)
    if rep.conforms:
        lines.append(
            f"conforms: the trace is a behaviour of the model "
            f"({rep.candidates} candidate state{'s' if rep.candidates != 1 else ''} at the end, "
            f"peak {rep.peak_candidates}, {_hidden_words(rep.max_hidden)})"
        )
        if rep.reason:  # e.g. the rest of the trace was matched by the Z3 fallback (NOTE(replay-z3))
            lines.append(f"  {rep.reason}")
    elif rep.conforms is None:
        lines.append(f"unknown: {rep.reason}")
    else:
        d = rep.divergence
        assert d is not None
        lines.append(f"diverges at {rep.where(d.line)}: {d.reason}")
        lines.append(f"  event: {_event_text(d.event)}")
        lines.append(
            f"  {d.total_candidates} candidate state{'s' if d.total_candidates != 1 else ''} just before it"
            + (f" (showing {len(d.candidates)})" if len(d.candidates) < d.total_candidates else "")
            + ":"
        )
        for i, c in enumerate(d.candidates, 1):
            lines.append(f"  [{i}] {_state_text(c.state)}")
            if c.hidden_states:
                lines.append(f"      (and {c.hidden_states} state(s) reachable from it by internal actions, also tried)")
            for a in c.attempts:
                lines.append(f"      {a.describe(rep.spec_file)}")
    for r in rep.results:
        where = ""
        if r.detail.get("line") is not None:
            where = f" (first at {rep.where(r.detail['line'])})"
        text = f"  {r.kind} {r.property}: {r.verdict.value}{where}"
        if r.reason and r.verdict is not Verdict.HOLDS_TO_BOUND:
            text += f": {r.reason}"
        lines.append(text)
    for name in rep.skipped:
        lines.append(f"  liveness {name}: not evaluated (a finite trace cannot decide a liveness property)")
    for w in rep.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def _event_text(ev: dict[str, Any]) -> str:
    args = ev.get("args") or {}
    s = ev.get("action", "?")
    if args:
        s += "(" + ", ".join(f"{k}={_fmt(v)}" for k, v in args.items()) + ")"
    if ev.get("state"):
        s += " state " + ", ".join(f"{k}={_fmt(v)}" for k, v in ev["state"].items())
    return s


def _state_text(state: dict[str, Any]) -> str:
    return ", ".join(f"{k}={_fmt(v)}" for k, v in state.items())

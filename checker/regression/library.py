"""The bundled model library as one regression run: every model in `spec/models/` at its default
constants, every property, one engine; a matrix of mechanisms × properties in which each verdict
is compared with the model's `expect` declarations.

Why: the library's verdicts are the project's findings (CWSR proved exactly-once, the kernel_offset
rewind re-executes, ...). A change to a model, an engine or the language that flips one of them
must be visible as a *surprise* and make `gpcheck verify` (no argument) exit non-zero.

NOTE(expectations): `holds` accepts proved or holds_to_bound; every other expectation must match
the verdict exactly. `deadlock` and `range` carry an implicit `holds`: a model of the library must
not deadlock outside its terminal states nor write out of range. A property without an `expect`
is shown as `?` and never fails the run (the unit tests require every property to have one)."""

from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, overload

from rich.console import Console
from rich.table import Table

from gpcheck.checker.report import textout
from gpcheck.checker.api.model_api import verify
from gpcheck.checker.core.verdict import Report, Result, Verdict
from gpcheck.spec import bundled_models, load_spec
from gpcheck.spec.errors import UsageError

# Columns of the matrix, in order: the shared property vocabulary (DOMAIN.md / issue 4).
SHARED = ("no_reexecution", "no_loss", "ring_integrity", "ring_kept", "bounded_inversion", "no_starvation")
IMPLICIT = {"deadlock": "holds", "range": "holds"}
# The shared latency properties (issue 15, NOTE(latency)), shown side by side in their own table;
# every timed model states its durations in microseconds.
LATENCIES = ("rt_preempt_latency", "be_resume_delay")


def expectation_met(expected: str, verdict: Verdict) -> bool:
    """NOTE(expectations)."""
    if expected == "holds":
        return verdict.holds
    return expected == verdict.value


@dataclass(frozen=True)
class Cell:
    """One property of one model: its verdict, who decided it, and how it compares to `expect`."""

    model: str
    property: str
    kind: str
    verdict: Verdict
    engine: str
    bound: int | None = None
    cex_length: int | None = None
    lasso: bool = False
    reason: str | None = None
    expected: str | None = None
    low: int | None = None  # latency: the least measurement (NOTE(latency))
    high: int | None = None  # latency: the greatest, None when unbounded or not computed
    assumptions: tuple[str, ...] | None = None  # NOTE(assumption-use) in checker/api/assumptions.py
    vacuous: str | None = None  # NOTE(vacuity)

    @property
    def met(self) -> bool | None:
        """True/False against the expectation; None when the model states none."""
        return None if self.expected is None else expectation_met(self.expected, self.verdict)

    @property
    def surprise(self) -> bool:
        return self.met is False

    def text(self) -> str:
        """Short cell text: proved / violated (26) / holds to 12 / unknown."""
        if self.kind == "latency":
            return f"{self.verdict.value} [{self.span_text()}]"
        if self.verdict is Verdict.VIOLATED:
            return f"violated ({self.cex_length}{', lasso' if self.lasso else ''})"
        if self.verdict is Verdict.REACHED:
            return f"reached ({self.cex_length})"
        if self.verdict is Verdict.HOLDS_TO_BOUND:
            return f"holds to {self.bound}" if self.bound is not None else "holds to bound"
        return self.verdict.value

    def span_text(self) -> str:
        """A latency's least and greatest measurement: `3 .. 7`, `3 .. unbounded`, `-`."""
        if self.verdict is Verdict.UNKNOWN or (self.low is None and self.high is None and not self.lasso):
            return "-"
        lo = "-" if self.low is None else f"{self.low:,}"
        hi = "unbounded" if self.high is None else f"{self.high:,}"
        return f"{lo} .. {hi}"

    def to_json(self) -> dict[str, Any]:
        out = {
            "property": self.property, "kind": self.kind, "verdict": self.verdict.value,
            "engine": self.engine, "bound": self.bound, "counterexample_length": self.cex_length,
            "lasso": self.lasso, "reason": self.reason, "expected": self.expected, "met": self.met,
        }
        if self.kind == "latency":
            out.update(min=self.low, max=self.high)
        if self.assumptions is not None:
            out["assumptions"] = list(self.assumptions)
        if self.vacuous is not None:
            out["vacuous"] = self.vacuous
        return out


@dataclass
class ModelRow:
    """One model's line of the matrix."""

    name: str
    description: str
    constants: dict[str, int]
    cells: list[Cell]
    states: int | None
    seconds: float
    error: str | None = None  # the model could not be checked at all (load or engine failure)
    assumptions: tuple[str, ...] = ()  # the model's declared assumptions (NOTE(assumptions))

    def cell(self, prop: str) -> Cell | None:
        return next((c for c in self.cells if c.property == prop), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.name, "description": self.description, "constants": self.constants,
            "states": self.states, "seconds": round(self.seconds, 3), "error": self.error,
            **({"assumptions": list(self.assumptions)} if self.assumptions else {}),
            "results": [c.to_json() for c in self.cells],
        }


@dataclass
class LibraryReport:
    engine: str
    rows: list[ModelRow] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def surprises(self) -> list[Cell]:
        return [c for r in self.rows for c in r.cells if c.surprise]

    @property
    def unexpected(self) -> list[Cell]:
        """Cells of properties with no `expect` declaration."""
        return [c for r in self.rows for c in r.cells if c.expected is None]

    @property
    def ok(self) -> bool:
        return not self.surprises and not any(r.error for r in self.rows)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def to_json(self) -> dict[str, Any]:
        met = sum(1 for r in self.rows for c in r.cells if c.met)
        return {
            "engine": self.engine, "seconds": round(self.seconds, 3), "ok": self.ok,
            "expectations_met": met, "surprises": [f"{c.model}.{c.property}" for c in self.surprises],
            "models": [r.to_json() for r in self.rows],
        }


def _cell(model: str, r: Result, expected: str | None) -> Cell:
    cex = r.counterexample
    return Cell(
        model=model, property=r.property, kind=r.kind, verdict=r.verdict, engine=r.engine,
        bound=r.bound, cex_length=cex.length if cex is not None else None,
        lasso=cex is not None and cex.loop is not None, reason=r.reason,
        # a property the engine does not check (liveness under kind/pdr) meets no expectation
        # and is no surprise either
        expected=None if r.detail.get("not_checked") else expected,
        low=r.detail.get("min") if r.kind == "latency" else None,
        high=r.detail.get("max") if r.kind == "latency" else None,
        assumptions=r.assumptions, vacuous=r.vacuous,
    )


def check_model(name: str, engine: str = "explicit", properties: Iterable[str] | None = None,
                timeout: float | None = None, max_states: int | None = None) -> ModelRow:
    """Verify one bundled model at its defaults and compare with its expectations."""
    model = load_spec(name)
    expected = {e.property: e.verdict for e in model.expectations}
    wanted = list(properties) if properties is not None else None
    if wanted is not None:
        wanted = [p for p in wanted if p in model.property_names() or p in IMPLICIT]
        if not wanted:
            return ModelRow(name, model.description, model.const_values, [], None, 0.0)
    report: Report = verify(model, properties=wanted, engine=engine, timeout=timeout, max_states=max_states)
    cells = [_cell(name, r, expected.get(r.property, IMPLICIT.get(r.property))) for r in report.results]
    return ModelRow(name, model.description, model.const_values, cells, report.states, report.seconds,
                    assumptions=tuple(report.assumptions))


def library_names() -> list[str]:
    return list(bundled_models())


@overload
def verify_library(engine: str = ..., models: Iterable[str] | None = ..., properties: Iterable[str] | None = ...,
                   timeout: float | None = ..., max_states: int | None = ...,
                   json: Literal[False] = ...) -> LibraryReport: ...
@overload
def verify_library(engine: str = ..., models: Iterable[str] | None = ..., properties: Iterable[str] | None = ...,
                   timeout: float | None = ..., max_states: int | None = ...,
                   json: Literal[True] = ...) -> dict[str, Any]: ...


def verify_library(engine: str = "explicit", models: Iterable[str] | None = None,
                   properties: Iterable[str] | None = None, timeout: float | None = None,
                   max_states: int | None = None, json: bool = False) -> LibraryReport | dict[str, Any]:
    """Run the bundled library (or the named models of it) with one engine.

    Returns the `LibraryReport`, or its JSON form when `json=True`. `timeout` applies per model."""
    names = library_names()
    chosen = list(models) if models is not None else names
    for n in chosen:
        if n not in names:
            raise UsageError(f"{n}: not a bundled model (bundled: {', '.join(names)})")
    started = time.monotonic()
    out = LibraryReport(engine)
    for n in chosen:
        out.rows.append(check_model(n, engine, properties, timeout, max_states))
    out.seconds = time.monotonic() - started
    return out.to_json() if json else out


# ------------------------------------------------------------------ rendering


def _mark(c: Cell) -> str:
    if c.met is None:
        return " ?"
    return "" if c.met else f" ! expected {c.expected}"


def render_matrix(rep: LibraryReport, width: int | None = None) -> str:
    """The matrix for people: shared properties as columns, the mechanism-specific ones below."""
    buf = io.StringIO()
    width = width if width is not None else textout.width(160)
    console = Console(file=buf, width=width, force_terminal=False, color_system=None, highlight=False)
    console.print(f"gpcheck model library: {len(rep.rows)} models, engine {rep.engine}, {rep.seconds:.1f} s")
    table = Table(show_edge=False, box=None, pad_edge=False)
    table.add_column("model")
    table.add_column("states", justify="right")
    for p in SHARED:
        table.add_column(p)
    table.add_column("assumptions")
    for r in rep.rows:
        cells = []
        for p in SHARED:
            c = r.cell(p)
            cells.append("-" if c is None else c.text() + _mark(c) + _engine_note(c, rep.engine))
        states = f"{r.states:,}" if r.states is not None else "-"
        table.add_row(r.name, states, *cells, ", ".join(r.assumptions) or "none")
    console.print(table)
    timed = [r for r in rep.rows if any(c.kind == "latency" for c in r.cells)]
    if timed:
        console.print("\nlatencies (microseconds of model time: min .. max over every behaviour, NOTE(latency)):")
        lat = Table(show_edge=False, box=None, pad_edge=False)
        lat.add_column("model")
        for p in LATENCIES:
            lat.add_column(p)
        for r in timed:
            row = []
            for p in LATENCIES:
                c = r.cell(p)
                row.append("-" if c is None else c.text() + _mark(c) + _engine_note(c, rep.engine))
            lat.add_row(r.name, *row)
        console.print(lat)
    console.print("\nmechanism-specific properties:")
    for r in rep.rows:
        extra = [c for c in r.cells if c.property not in SHARED and c.property not in IMPLICIT
                 and c.property not in LATENCIES]
        if extra:
            items = "; ".join(f"{c.property} {c.text()}{_mark(c)}{_engine_note(c, rep.engine)}" for c in extra)
            console.print(f"  {r.name}: {items}", markup=False)
    _assumption_lines(console, rep)
    sanity = [c for r in rep.rows for c in r.cells if c.property in IMPLICIT and c.surprise]
    for c in sanity:
        console.print(f"  {c.model}: {c.property} {c.text()} (a modelling error)", markup=False)
    met = sum(1 for r in rep.rows for c in r.cells if c.met)
    console.print(f"\n{met} expectations met; violated (N) = shortest counterexample of N steps; "
                  "'!' marks a surprise, '?' a property without an expect line.", markup=False)
    if rep.surprises:
        console.print("SURPRISES:", markup=False)
        for c in rep.surprises:
            console.print(f"  {c.model}.{c.property}: expected {c.expected}, got {c.text()} ({c.engine})"
                          + (f": {c.reason}" if c.reason else ""), markup=False)
    for r in rep.rows:
        if r.error:
            console.print(f"  {r.name}: not checked: {r.error}", markup=False)
    console.print("all expectations met" if rep.ok else "expectations NOT met", markup=False)
    return buf.getvalue()


def _assumption_lines(console: Console, rep: LibraryReport) -> None:
    """What each model's proofs rest on (NOTE(assumption-use)), and the vacuous results (NOTE(vacuity))."""
    rows = [r for r in rep.rows if r.assumptions or any(c.vacuous for c in r.cells)]
    if not rows:
        return
    console.print("\nassumptions the proofs used (a proof that needs none is not listed) and vacuous results:")
    for r in rows:
        for a in r.assumptions:
            props = [c.property for c in r.cells if c.assumptions and a in c.assumptions
                     and c.verdict in (Verdict.PROVED, Verdict.UNREACHABLE)]
            console.print(f"  {r.name}: {a}: " + (", ".join(props) if props else "no proof uses it"), markup=False)
        for c in r.cells:
            if c.vacuous:
                console.print(f"  {r.name}: {c.property} holds vacuously: {c.vacuous}", markup=False)


def _engine_note(c: Cell, engine: str) -> str:
    return "" if c.engine == engine else f" [{c.engine}]"



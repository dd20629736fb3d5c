"""Rendering of a sweep for people: the table of combinations x properties, the progress line
printed as each combination finishes, and the cells that the HTML heat map shares.

A cell is read from a result's JSON (what `gpcheck verify --json` gives) into the library
matrix's `Cell`, so that a sweep and `gpcheck verify` of the library word verdicts alike."""

from __future__ import annotations

import io
from typing import Any, Sequence

from rich.console import Console
from rich.table import Table

from gpcheck.checker.report import textout
from gpcheck.checker.regression.library import Cell
from gpcheck.checker.report.render import _STYLE
from gpcheck.checker.distributed.sweep import Run
from gpcheck.checker.core.verdict import Verdict


def cell_of(result: dict[str, Any]) -> Cell:
    """A result of `verify --json` as a matrix cell (verdict, bound, counterexample length)."""
    cex = result.get("counterexample")
    return Cell(model="", property=result["property"], kind=result["kind"],
                verdict=Verdict(result["verdict"]), engine=result["engine"], bound=result.get("bound"),
                cex_length=len(cex["steps"]) - 1 if cex else None,
                lasso=bool(cex and cex.get("loop") is not None), reason=result.get("reason"),
                low=result.get("min"), high=result.get("max"))  # a latency's (NOTE(latency))


def constants_text(constants: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in constants.items())


def property_order(runs: Sequence[Run]) -> list[str]:
    """Property columns in verify's order, as the finished runs give them."""
    names: dict[str, None] = {}
    for run in runs:
        for r in run.results:
            names.setdefault(r["property"], None)
    return list(names)


def results_summary(results: Sequence[dict[str, Any]]) -> str:
    """`no_reexecution violated (9); 3 hold`: what does not hold by name, the rest counted."""
    cells = [cell_of(r) for r in results]
    bad = [f"{c.property} {c.text()}" for c in cells if not c.verdict.holds]
    good = sum(1 for c in cells if c.verdict.holds)
    return "; ".join(bad + ([f"{good} hold"] if good else [])) or "no property checked"


def progress_line(done: int, total: int, run: Run) -> str:
    """`[3/24] N=4 CAP=2  no_reexecution violated (9); 3 hold  0.41 s`"""
    secs = f"{run.seconds:.2f} s" if run.seconds is not None else "failed"
    return f"[{done}/{total}] {constants_text(run.constants)}  {results_summary(run.results)}  {secs}"


def render_sweep_text(title: str, runs: Sequence[Run | None], width: int | None = None) -> str:
    """The sweep table (rows in combination order; None is a combination not finished), then
    the reasons of unknown cells and a one-line summary."""
    buf = io.StringIO()
    width = width if width is not None else textout.width(140)
    console = Console(file=buf, width=width, force_terminal=False, color_system=None, highlight=False)
    console.print(title, markup=False)
    done = [r for r in runs if r is not None]
    props = property_order(done)
    names = list(done[0].constants) if done else []
    table = Table(show_edge=False, box=None, pad_edge=False)
    for n in names:
        table.add_column(n, justify="right")
    for p in props:
        table.add_column(p)
    table.add_column("time", justify="right")
    reasons: dict[str, list[str]] = {}
    for run in done:
        by_name = {r["property"]: cell_of(r) for r in run.results}
        row = [str(run.constants[n]) for n in names]
        for p in props:
            c = by_name.get(p)
            row.append(c.text() if c else "-")
            if c is not None and c.verdict is Verdict.UNKNOWN and c.reason:
                reasons.setdefault(c.reason, []).append(f"{constants_text(run.constants)} {p}")
        row.append(f"{run.seconds:.2f}s" if run.seconds is not None else "-")
        worst = _worst(by_name.values())
        table.add_row(*row, style=_STYLE.get(worst) if worst else None)
    console.print(table)
    for reason, where in reasons.items():
        shown = ", ".join(where[:4]) + (f" and {len(where) - 4} more" if len(where) > 4 else "")
        console.print(f"unknown: {reason} ({shown})", markup=False)
    console.print(summary_line(runs), markup=False)
    return buf.getvalue()


def _worst(cells: Any) -> Verdict | None:
    verdicts = {c.verdict for c in cells}
    for v in (Verdict.VIOLATED, Verdict.UNKNOWN):
        if v in verdicts:
            return v
    return None


def summary_line(runs: Sequence[Run | None]) -> str:
    """How many combinations were checked, and how many have a violated / an unknown verdict."""
    done = [r for r in runs if r is not None]
    verdicts = [{r["verdict"] for r in run.results} for run in done]
    violated = sum(1 for v in verdicts if Verdict.VIOLATED.value in v)
    unknown = sum(1 for v in verdicts if Verdict.UNKNOWN.value in v)
    holding = sum(1 for v in verdicts if v <= {Verdict.PROVED.value, Verdict.HOLDS_TO_BOUND.value})
    return (f"{len(done)} of {len(runs)} combinations checked: {violated} with a violation, "
            f"{unknown} with an unknown verdict, {holding} where everything holds")

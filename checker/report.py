"""Rendering of reports for people (rich tables, counterexamples as changed variables) and
for programs (one JSON object). Only the command line prints what these return."""

from __future__ import annotations

import io
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from checker.verdict import Counterexample, Report, Result, Verdict

_STYLE = {
    Verdict.PROVED: "green",
    Verdict.HOLDS_TO_BOUND: "yellow",
    Verdict.VIOLATED: "bold red",
    Verdict.UNKNOWN: "magenta",
}


def flatten_value(value: Any, prefix: str, out: dict[str, Any]) -> dict[str, Any]:
    """Decoded state values → {"waves_run[0]": 1, "q[Waiting].rptr": 0, ...}."""
    if isinstance(value, dict) and prefix and not _is_record(value):
        for k, v in value.items():
            flatten_value(v, f"{prefix}[{k}]", out)
    elif isinstance(value, dict):
        for k, v in value.items():
            flatten_value(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            flatten_value(v, f"{prefix}[{i}]", out)
    else:
        out[prefix] = value
    return out


def _is_record(d: dict[str, Any]) -> bool:
    # Enum/bool-indexed arrays decode to dicts too; struct fields are lower-case identifiers by
    # convention while enum members are capitalised, which is all a display needs.
    return not any(k[:1].isupper() or k in ("true", "false") for k in d)


def fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def verdict_text(r: Result) -> str:
    if r.verdict is Verdict.VIOLATED and r.counterexample is not None:
        suffix = f", lasso at {r.counterexample.loop}" if r.counterexample.loop is not None else ""
        return f"violated ({r.counterexample.length} steps{suffix})"
    if r.verdict is Verdict.HOLDS_TO_BOUND:
        return f"holds to bound {r.bound}" if r.bound is not None else "holds to bound"
    return r.verdict.value


def latency_text(r: Result) -> str:
    """A latency result's numbers (NOTE(latency)): `min 3, max 7 (within 10)`, or why the
    greatest measurement is unbounded, or that no step enters the 'from' predicate."""
    d = r.detail
    if r.verdict is Verdict.UNKNOWN and d.get("max") is None:
        return r.reason or ""
    if d.get("starts") == 0:
        return "no reachable step enters the 'from' predicate"
    lo = "-" if d.get("min") is None else str(d["min"])
    hi = "unbounded" if d.get("unbounded") else str(d.get("max"))
    text = f"min {lo}, max {hi}" + (f" (within {d['within']})" if d.get("within") is not None else "")
    if d.get("unbounded"):
        text += f": {d['unbounded']}"
    if d.get("bounded"):  # bmc: over an unrolling (checker/smt/latency.py)
        text += f" {d['bounded']}"
    if r.verdict is Verdict.UNKNOWN and r.reason:
        text += f"; {r.reason}"
    return text


def counterexample_lines(cex: Counterexample) -> list[str]:
    """Step by step: the action with its arguments and only the variables that changed."""
    lines = []
    prev: dict[str, Any] = {}
    for k, step in enumerate(cex.steps):
        flat = flatten_value(step.state, "", {})
        if step.action is None:
            lines.append(f"  {k:>3}  initial state")
            lines.append("         " + "  ".join(f"{n}={fmt(v)}" for n, v in flat.items()))
        else:
            args = ", ".join(f"{a}={fmt(v)}" for a, v in step.args.items())
            label = f"{step.action}({args})" if args else step.action
            changed = [f"{n}: {fmt(prev.get(n))} -> {fmt(v)}" for n, v in flat.items() if prev.get(n) != v]
            lines.append(f"  {k:>3}  {label}")
            lines.append("         " + ("  ".join(changed) if changed else "(no variable changed)"))
        prev = flat
    if cex.loop is not None:
        last = len(cex.steps) - 1
        if cex.loop == last:
            lines.append(f"       ... and stays in state {last} forever (no fair action is enabled there)")
        else:
            lines.append(f"       ... then back to state {cex.loop}, and round the loop forever")
    return lines


def render_text(report: Report, width: int = 110) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None, highlight=False)
    consts = " ".join(f"{k}={v}" for k, v in report.constants.items())
    console.print(f"model {report.model} ({report.file})" + (f"  constants: {consts}" if consts else ""))
    if report.states is not None:
        states = f"{report.states:,} distinct states"
    elif any(r.engine == "explicit" for r in report.results):
        states = "state count unknown (search incomplete)"
    else:
        states = "no explicit search (symbolic engines count no states)"
    console.print(f"{states}, {report.seconds:.2f} s")
    table = Table(show_edge=False, box=None, pad_edge=False)
    for col in ("property", "kind", "verdict", "engine", "states", "time", "detail"):
        table.add_column(col, justify="right" if col in ("states", "time") else "left")
    for r in report.results:
        detail = r.reason or ""
        if r.detail.get("error"):
            detail = f"{r.detail['error']} at {r.detail.get('location', '?')}"
        if r.kind == "latency":
            detail = latency_text(r)
        if r.detail.get("k") is not None and r.verdict is Verdict.PROVED:
            detail = detail or f"k = {r.detail['k']}"
        n = r.detail.get("states", report.states if r.engine == "explicit" else None)
        secs = r.detail.get("seconds", report.seconds)
        table.add_row(r.property, r.kind, verdict_text(r), r.engine, f"{n:,}" if n is not None else "-",
                      f"{secs:.2f}s", detail, style=_STYLE.get(r.verdict))
    console.print(table)
    for r in report.results:
        if r.verdict is Verdict.VIOLATED and r.counterexample is not None:
            console.print(f"\ncounterexample for {r.property} ({r.kind}):")
            for line in counterexample_lines(r.counterexample):
                console.print(line, markup=False)
            if r.kind == "range" and r.detail.get("action"):
                args = ", ".join(f"{a}={fmt(v)}" for a, v in r.detail.get("args", {}).items())
                console.print(f"  then {r.detail['action']}({args}) fails: {r.detail['error']} "
                              f"at {r.detail.get('location')}", markup=False)
        if r.detail.get("invariant"):
            console.print(f"\ninductive invariant found for {r.property}:\n  {r.detail['invariant']}", markup=False)
    if report.coverage:
        cov = "  ".join(f"{a} {n:,}" for a, n in report.coverage.items())
        console.print(f"\ncoverage (transitions per action): {cov}", markup=False)
    for w in report.warnings:
        console.print(f"warning: {w}", markup=False)
    return buf.getvalue()


def to_json_bytes(obj: Any) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)

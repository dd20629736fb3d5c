"""Rendering of reports for people (rich tables, counterexamples as changed variables) and
for programs (one JSON object). Only the command line prints what these return."""

from __future__ import annotations

import io
import re
import uuid
from typing import Any

import orjson
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gpcheck.checker.report import textout
from gpcheck.checker.core.verdict import Counterexample, Report, Result, Verdict
from gpcheck.spec.show import show, wrap_items, wrap_text

_STYLE = {
    Verdict.PROVED: "green",
    Verdict.HOLDS_TO_BOUND: "yellow",
    Verdict.VIOLATED: "bold red",
    Verdict.UNKNOWN: "magenta",
    Verdict.REACHED: "cyan",
    Verdict.UNREACHABLE: "cyan",
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
    """A value in gpspec syntax (spec/show.py): true/false, enum names, [a, b], {f: v}."""
    return show(v)


def verdict_text(r: Result) -> str:
    if r.verdict is Verdict.REACHED and r.counterexample is not None:
        return f"reached ({r.counterexample.length} steps)"
    if r.verdict is Verdict.VIOLATED and r.counterexample is not None:
        suffix = f", lasso at {r.counterexample.loop}" if r.counterexample.loop is not None else ""
        return f"violated ({r.counterexample.length} steps{suffix})"
    if r.verdict is Verdict.UNKNOWN and r.detail.get("not_checked"):
        return "not checked"
    if r.verdict is Verdict.HOLDS_TO_BOUND:
        return f"holds to bound {r.bound}" if r.bound is not None else "holds to bound"
    return r.verdict.value


def assumptions_text(r: Result) -> str:
    """The assumptions column: the names, `none`, or `-` where not computed."""
    if r.assumptions is None:
        return "-"
    odd = r.detail.get("assumptions_undecided") or {}  # used, or the run without it decided nothing
    return ", ".join(a + ("?" if a in odd else "") for a in r.assumptions) if r.assumptions else "none"


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
    if r.verdict is Verdict.UNKNOWN and r.reason:
        text += f"; {r.reason}"
    return text


def counterexample_lines(cex: Counterexample, width: int | None = None) -> list[str]:
    """Step by step: the action with its arguments and only the variables that changed; the
    initial state in full, as `name = value` in gpspec syntax; long lines wrapped at `width`
    (default: checker/report/textout.py) and indented under their step."""
    cols = width if width is not None else textout.width()
    indent = " " * 9
    lines = []
    prev: dict[str, Any] = {}
    for k, step in enumerate(cex.steps):
        flat = flatten_value(step.state, "", {})
        at = "" if step.time is None else f"  @ t={step.time}"  # NOTE(timed): the step's time stamp
        if step.action is None:
            lines.append(f"  {k:>3}  initial state{at}")
            lines += wrap_items([f"{n} = {show(v)}" for n, v in step.state.items()], cols, indent)
        else:
            args = ", ".join(f"{a}={fmt(v)}" for a, v in step.args.items())
            label = f"{step.action}({args})" if args else step.action
            changed = [f"{n}: {fmt(prev.get(n))} -> {fmt(v)}" for n, v in flat.items() if prev.get(n) != v]
            lines.append(f"  {k:>3}  {label}{at}")
            lines += wrap_items(changed, cols, indent) if changed else [indent + "(no variable changed)"]
        prev = flat
    if cex.loop is not None:
        last = len(cex.steps) - 1
        if cex.loop == last and cex.steps[last].time is not None:
            lines.append(f"       ... and stays in state {last} forever while time passes")
        elif cex.loop == last:
            lines.append(f"       ... and stays in state {last} forever (no fair action is enabled there)")
        else:
            lines.append(f"       ... then back to state {cex.loop}, and round the loop forever")
    return lines


_SHARED_PARTS = (("explore_seconds", "exploration"), ("mine_seconds", "mining"), ("houdini_seconds", "Houdini"),
                 ("counterexample_search_seconds", "counterexample search"), ("certificate_seconds", "certificate"))


def _shared_line(report: Report) -> str | None:
    """The pdr engine's work shared by every property (NOTE(pdr-seconds)): the time column then
    holds each property's own seconds."""
    r = next((r for r in report.results if "shared_seconds" in r.detail), None)
    if r is None:
        return None
    stats = r.detail.get("lemmas")
    if not isinstance(stats, dict):  # --for-all's `lemmas` is the count its proof used, not pdr's breakdown
        stats = {}
    parts = ", ".join(f"{label} {stats[k]:.2f} s" for k, label in _SHARED_PARTS if isinstance(stats.get(k), (int, float)))
    return (f"{r.engine}: {r.detail['shared_seconds']:.2f} s shared by every property" + (f" ({parts})" if parts else "")
            + "; the time column is each property's own")


LONG_DETAIL = 200  # characters: a detail this long, shared by several rows, is printed once


def render_text(report: Report, width: int | None = None) -> str:
    """The report for people: a header, one table row per property, then each counterexample.
    `width`: the columns to fit (default: the terminal's, checker/report/textout.py)."""
    width = width if width is not None else textout.width()
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None, highlight=False)
    consts = " ".join(f"{k}={v}" for k, v in report.constants.items())
    console.print(f"model {report.model} ({report.file})" + (f"  constants: {consts}" if consts else ""))
    if report.states is not None and report.symmetry is not None:
        types = ", ".join(f"{n} ({k} values)" for n, k in report.symmetry["types"].items())
        per = "one per orbit" if report.symmetry.get("one_per_orbit", True) else "at least one per orbit"
        states = f"{report.states:,} states up to symmetry (reduced: {per} under the permutations of {types})"
    elif report.timed is not None and report.timed.get("zones") is None:  # NOTE(timed): no zone graph needed
        states = f"{report.timed['untimed_states']:,} states of the untimed abstraction, no zone graph needed"
    elif report.timed is not None:  # NOTE(timed): the zone graph's discrete states and zones
        t = report.timed
        states = (f"{t['discrete_states']:,} distinct states, {t['zones']:,} zones ({t['clocks']} clocks)"
                  if t["complete"] else f"search incomplete after {t['zones']:,} zones")
    elif report.states is not None:
        states = f"{report.states:,} distinct states"
    elif any(r.engine == "explicit" for r in report.results):
        states = "state count unknown (search incomplete)"
    else:
        states = "no explicit search (symbolic engines count no states)"
    console.print(f"{states}, {report.seconds:.2f} s")
    shared = _shared_line(report)
    if shared:
        console.print("\n".join(wrap_text(shared, width, "  ")), markup=False, soft_wrap=True)
    rows = []
    for r in report.results:
        detail = r.reason or ""
        if r.detail.get("error"):
            detail = f"{r.detail['error']} at {r.detail.get('location', '?')}"
        if r.kind == "latency":
            detail = latency_text(r)
        if r.detail.get("time") and r.verdict is not Verdict.UNKNOWN:  # NOTE(timed): how time was handled
            detail = f"{detail}; {r.detail['time']}" if detail else r.detail["time"]
        if r.detail.get("k") is not None and r.verdict is Verdict.PROVED:
            detail = detail or f"k = {r.detail['k']}"
        n = r.detail.get("states", report.states if r.engine == "explicit" else None)
        secs = r.detail.get("seconds", report.seconds)
        cells = [r.property, r.kind, verdict_text(r), r.engine, f"{n:,}" if n is not None else "-", f"{secs:.2f}s"]
        if report.assumptions:  # NOTE(assumptions): what a proof used, else what is in force
            cells.insert(3, assumptions_text(r))
        rows.append((cells, detail, _STYLE.get(r.verdict)))
    # a long detail shared by several properties (a for-all run that stopped for all of them at
    # once) is printed once, under the table, and each row points at it
    notes: list[tuple[str, list[str]]] = []
    for text in dict.fromkeys(d for _, d, _ in rows):
        owners = [cells[0] for cells, d, _ in rows if d == text]
        if len(text) > LONG_DETAIL and len(owners) > 1:
            notes.append((text, owners))
    if notes:
        index = {text: i for i, (text, _) in enumerate(notes, 1)}
        rows = [(cells, f"see note {index[d]} below" if d in index else d, style) for cells, d, style in rows]
    heads: tuple[str, ...] = ("property", "kind", "verdict", "engine", "states", "time")
    if report.assumptions:
        heads = heads[:3] + ("assumptions",) + heads[3:]
    longest = [max([len(h)] + [len(cells[i]) for cells, _, _ in rows]) for i, h in enumerate(heads)]
    # the detail goes in a last column, wrapped inside it, when that column gets at least 30
    # of the width; otherwise under the table, one wrapped paragraph per property. With no detail
    # at all the (empty) column is shown only where its heading fits whole.
    room = width - sum(longest) - 2 * len(heads)
    need = 30 if any(d for _, d, _ in rows) else len("detail")
    inline = room >= need
    table = Table(show_edge=False, box=None, pad_edge=False)
    for i, col in enumerate(heads):
        table.add_column(col, justify="right" if col in ("states", "time") else "left",
                         min_width=longest[i], no_wrap=True)
    if report.assumptions and not any(d for _, d, _ in rows):
        inline = False  # no detail column at all (the assumptions column leaves it no room)
    if inline:
        table.add_column("detail", overflow="fold")
    for cells, detail, style in rows:
        table.add_row(*cells, *([escape(detail)] if inline else []), style=style)  # a reason is text, not markup
    # a table wider than the width is printed whole (lines get long) rather than cut
    console.print(table, width=max(width, sum(longest) + 2 * (len(heads) - 1) + (need if inline else 0)), crop=False)
    if not inline:
        for (cells, detail, _) in rows:
            if detail:
                console.print("\n".join(wrap_text(f"{cells[0]}: {detail}", width, "  ")), markup=False, soft_wrap=True)
    for i, (text, owners) in enumerate(notes, 1):
        console.print("\n".join(wrap_text(f"note {i} ({', '.join(owners)}): {text}", width, "  ")), markup=False,
                      soft_wrap=True)
    for r in report.results:
        if r.verdict is Verdict.REACHED and r.counterexample is not None:
            console.print(f"\nwitness for cover {r.property}:")
            for line in counterexample_lines(r.counterexample, width):
                console.print(line, markup=False, soft_wrap=True)
        if r.verdict is Verdict.VIOLATED and r.counterexample is not None:
            console.print(f"\ncounterexample for {r.property} ({r.kind}):")
            for line in counterexample_lines(r.counterexample, width):
                console.print(line, markup=False, soft_wrap=True)
            if r.kind == "range" and r.detail.get("action"):
                args = ", ".join(f"{a}={fmt(v)}" for a, v in r.detail.get("args", {}).items())
                console.print(f"  then {r.detail['action']}({args}) fails: {r.detail['error']} "
                              f"at {r.detail.get('location')}", markup=False)
        if r.detail.get("invariant"):
            console.print(f"\ninductive invariant found for {r.property}:\n  {r.detail['invariant']}", markup=False)
    if report.coverage:
        console.print("\ncoverage (transitions per action):", markup=False)
        for line in wrap_items([f"{a} {n:,}" for a, n in report.coverage.items()], width, "  "):
            console.print(line, markup=False, soft_wrap=True)
    if report.fingerprint is not None:  # worded as TLC words it
        p = report.fingerprint["collision_probability"]
        console.print("\nstates kept as 64-bit fingerprints. Estimates of the probability that the search did not "
                      "check all reachable states because two distinct states had the same fingerprint:\n"
                      f"  calculated (optimistic):  val = {p['calculated']:.1E}\n"
                      f"  based on the actual fingerprints:  val = {p['actual']:.1E}", markup=False)
    if report.assumptions:
        hows = list(dict.fromkeys(r.detail["assumptions_how"] for r in report.results if r.detail.get("assumptions_how")))
        text = (f"assumptions: {', '.join(report.assumptions)}; a proved or unreachable result lists those its "
                f"proof used ({'; or '.join(hows) or 'none proved'}; 'A?': the run without A decided nothing, so the "
                f"proof may rest on it), any other those in force")
        console.print("\n" + "\n".join(wrap_text(text, width, "  ")), markup=False, soft_wrap=True)
    for r in report.results:
        if r.vacuous:
            console.print("\n".join(wrap_text(f"warning: {r.property} holds vacuously: {r.vacuous}", width, "  ")),
                          markup=False, soft_wrap=True)
    for w in report.warnings:
        console.print(f"warning: {w}", markup=False)
    return textout.strip_lines(buf.getvalue())


def to_json_bytes(obj: Any) -> bytes:
    """`obj` as indented JSON. NOTE(json-bigint): the language's integers are unbounded (a
    latency's `max`, a value of an unbounded variable), orjson writes only those of 64 bits:
    a larger one is written as a plain JSON number with all its digits (exact; Python's json
    reads it back as the same int; readers limited to doubles round it, as they do any number
    past 2^53). docs/trace-format.md says so."""
    try:
        return orjson.dumps(obj, option=_JSON_OPTIONS)
    except TypeError as e:
        if "64-bit" not in str(e):
            raise
    marker = f"bigint-{uuid.uuid4().hex}:"  # a fresh marker: no string of `obj` can contain it
    text = orjson.dumps(_mark_bigints(obj, marker), option=_JSON_OPTIONS)
    return re.sub(rb'"' + re.escape(marker.encode()) + rb'(-?[0-9]+)"', rb"\1", text)


_JSON_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
_INT64 = (-(1 << 63), (1 << 64) - 1)  # what orjson writes itself (signed and unsigned 64-bit)


def _mark_bigints(obj: Any, marker: str) -> Any:
    """A copy of `obj` with each integer orjson cannot write replaced by `marker` + its digits."""
    if isinstance(obj, bool):
        return obj
    if isinstance(obj, int):
        return obj if _INT64[0] <= obj <= _INT64[1] else f"{marker}{obj}"
    if isinstance(obj, dict):
        return {(str(k) if isinstance(k, int) and not isinstance(k, bool) else k): _mark_bigints(v, marker)
                for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_mark_bigints(v, marker) for v in obj]
    return obj

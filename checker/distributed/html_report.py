"""`gpcheck sweep --html FILE`: the sweep as a heat map in one self-contained HTML file (inline
CSS, no script, no fonts or styles fetched), viewable offline and attachable to a report.

What it shows: a matrix of combinations x properties coloured by verdict, violated cells shaded
by counterexample length (darker: longer) and labelled with it, plus each run's time on a blue
scale; and, when two or more constants vary, one grid per property with the first two varying
constants as axes (one grid per value of any further varying constant), which is where a
boundary such as "re-executes from CAP = 2 on" is seen at a glance."""

from __future__ import annotations

import itertools
from html import escape
from pathlib import Path
from typing import Sequence

from gpcheck.checker.regression.library import Cell
from gpcheck.checker.distributed.sweep import Run
from gpcheck.checker.distributed.sweep_report import cell_of, constants_text, property_order, summary_line
from gpcheck.checker.core.verdict import Verdict

_COLOURS = {Verdict.PROVED: "#2e7d32", Verdict.HOLDS_TO_BOUND: "#9ccc65", Verdict.UNKNOWN: "#b0a0c8"}
_VIOLATED_LIGHT, _VIOLATED_DARK = (0xF4, 0x9A, 0x8F), (0x8B, 0x10, 0x10)
_TIME_LIGHT, _TIME_DARK = (0xE3, 0xF2, 0xFD), (0x0D, 0x47, 0xA1)

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table.hm { border-collapse: collapse; margin: 0.5em 0 1.5em; }
table.hm th, table.hm td { border: 1px solid #fff; padding: 3px 8px; text-align: center; }
table.hm th { background: #eee; font-weight: 600; }
td.v { min-width: 3.2em; }
.legend span { display: inline-block; padding: 2px 8px; margin-right: 6px; }
h2 { font-size: 1.1em; margin-top: 1.4em; }
.note { color: #555; }
"""


def render_html(title: str, runs: Sequence[Run | None]) -> str:
    """The whole page for the finished runs (None: a combination not checked)."""
    done = [r for r in runs if r is not None]
    props = property_order(done)
    lengths = [c.cex_length for r in done for c in map(cell_of, r.results) if c.cex_length is not None]
    scale = (min(lengths, default=0), max(lengths, default=0))
    slowest = max((r.seconds or 0.0 for r in done), default=0.0)
    parts = [f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{escape(title)}</title>",
             f"<style>{_CSS}</style></head><body>", f"<h1>{escape(title)}</h1>",
             f"<p>{escape(summary_line(runs))}</p>", _legend(scale)]
    parts.append("<h2>Verdicts by combination</h2>")
    parts.append(_matrix(done, props, scale, slowest))
    varying = _varying(done)
    if len(varying) >= 2:
        holding = [p for p in props if all(cell_of(r).verdict.holds for run in done for r in run.results
                                           if r["property"] == p)]
        shown = [p for p in props if p not in holding]
        parts.append(_grids(done, shown, varying, scale))
        if holding:
            parts.append(f"<p class=note>{escape(', '.join(holding))}: hold in every combination "
                         f"(no grid drawn).</p>")
    parts.append("</body></html>\n")
    return "".join(parts)


def write_html(path: str | Path, text: str) -> None:
    """Write the page whole or not at all (traces/atomic.py: a temporary file beside it, renamed
    over it; TraceError, exit 2, when it cannot be written: a full disk, a file-size limit)."""
    from gpcheck.traces.atomic import write_atomic

    write_atomic(str(path), text.encode("utf-8"))


def _legend(scale: tuple[int, int]) -> str:
    items = [("proved", _COLOURS[Verdict.PROVED], "#fff"), ("holds to bound", _COLOURS[Verdict.HOLDS_TO_BOUND], "#000"),
             (f"violated (shortest counterexample: {scale[0]} steps)", _hex(_VIOLATED_LIGHT), "#000"),
             (f"violated (longest: {scale[1]} steps)", _hex(_VIOLATED_DARK), "#fff"),
             ("unknown", _COLOURS[Verdict.UNKNOWN], "#000")]
    spans = "".join(f'<span style="background:{bg};color:{fg}">{escape(t)}</span>' for t, bg, fg in items)
    return (f'<p class=legend>{spans}</p><p class=note>A violated cell shows its counterexample length '
            f"in steps (a lasso is marked ↺); hover a cell for the verdict and reason.</p>")


def _matrix(runs: Sequence[Run], props: list[str], scale: tuple[int, int], slowest: float) -> str:
    names = list(runs[0].constants) if runs else []
    head = "".join(f"<th>{escape(n)}</th>" for n in names) + "".join(f"<th>{escape(p)}</th>" for p in props)
    rows = [f"<table class=hm><tr>{head}<th>seconds</th></tr>"]
    for run in runs:
        cells = {r["property"]: cell_of(r) for r in run.results}
        tds = "".join(f"<th>{run.constants[n]}</th>" for n in names)
        tds += "".join(_td(cells.get(p), scale, constants_text(run.constants)) for p in props)
        rows.append(f"<tr>{tds}{_time_td(run, slowest)}</tr>")
    rows.append("</table>")
    return "".join(rows)


def _grids(runs: Sequence[Run], props: list[str], varying: list[str], scale: tuple[int, int]) -> str:
    x, y, rest = varying[0], varying[1], varying[2:]
    xs = _values(runs, x)
    ys = _values(runs, y)
    index = {tuple(sorted(r.constants.items())): r for r in runs}
    fixed = {k: v for k, v in runs[0].constants.items() if k not in varying}
    out = [f"<h2>Properties that do not always hold, over {escape(x)} (across) and {escape(y)} (down)</h2>"]
    for facet in itertools.product(*(_values(runs, n) for n in rest)):
        extra = dict(zip(rest, facet))
        label = constants_text(extra)
        for p in props:
            out.append(f"<h3>{escape(p)}{(' at ' + escape(label)) if label else ''}</h3>")
            out.append(f"<table class=hm><tr><th>{escape(y)} \\ {escape(x)}</th>"
                       + "".join(f"<th>{v}</th>" for v in xs) + "</tr>")
            for yv in ys:
                tds = []
                for xv in xs:
                    consts = {**fixed, **extra, x: xv, y: yv}
                    run = index.get(tuple(sorted(consts.items())))
                    cell = None
                    if run is not None:
                        cell = next((cell_of(r) for r in run.results if r["property"] == p), None)
                    tds.append(_td(cell, scale, constants_text(consts)))
                out.append(f"<tr><th>{yv}</th>{''.join(tds)}</tr>")
            out.append("</table>")
    return "".join(out)


def _varying(runs: Sequence[Run]) -> list[str]:
    names = list(runs[0].constants) if runs else []
    return [n for n in names if len(_values(runs, n)) > 1]


def _values(runs: Sequence[Run], name: str) -> list[int]:
    return list(dict.fromkeys(r.constants[name] for r in runs))


def _td(cell: Cell | None, scale: tuple[int, int], where: str) -> str:
    if cell is None:
        return '<td class=v style="background:#f5f5f5" title="not checked">·</td>'
    tip = f"{where}: {cell.property} {cell.text()}" + (f" ({cell.reason})" if cell.reason else "")
    if cell.verdict is Verdict.VIOLATED:
        lo, hi = scale
        frac = ((cell.cex_length or 0) - lo) / (hi - lo) if hi > lo else 1.0
        bg = _hex(_mix(_VIOLATED_LIGHT, _VIOLATED_DARK, frac))
        fg = "#fff" if frac > 0.45 else "#000"
        text = f"{cell.cex_length}{' ↺' if cell.lasso else ''}"
    else:
        bg = _COLOURS[cell.verdict]
        fg = "#fff" if cell.verdict is Verdict.PROVED else "#000"
        text = {Verdict.PROVED: "✓", Verdict.UNKNOWN: "?"}.get(cell.verdict, f"≤{cell.bound}" if cell.bound is not None else "bounded")
    return f'<td class=v style="background:{bg};color:{fg}" title="{escape(tip)}">{escape(text)}</td>'


def _time_td(run: Run, slowest: float) -> str:
    if run.seconds is None:
        return f'<td title="{escape(run.error or "")}">failed</td>'
    frac = run.seconds / slowest if slowest else 0.0
    bg = _hex(_mix(_TIME_LIGHT, _TIME_DARK, frac))
    fg = "#fff" if frac > 0.5 else "#000"
    return f'<td style="background:{bg};color:{fg}">{run.seconds:.2f}</td>'


def _mix(a: tuple[int, int, int], b: tuple[int, int, int], t: float) -> tuple[int, int, int]:
    t = min(max(t, 0.0), 1.0)
    return (round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t))


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#%02x%02x%02x" % rgb

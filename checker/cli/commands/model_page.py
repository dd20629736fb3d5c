"""One bundled model as a documentation page (Markdown): what it models, its constants with the
sources they cite, its properties with their expected and actual verdicts and the comment that
explains each, its latency figures, and the comment block that cites the code it follows.

Generated from the model itself (the typed IR, its source file's comments and one explicit-engine
run at the default constants), so the page cannot drift from the model: `gpcheck models MODEL
--markdown` prints it and the documentation site builds its model pages with it."""

from __future__ import annotations

from pathlib import Path

from gpcheck.spec import bundled_models, ir

# said by `gpcheck models` and at the end of every model page
SOURCES = ("file:line citations in a model's documentation refer to the upstream code named on its "
           "\"Code modelled\" line (repository @ commit), which is public; \"seeds 002 4.2.x\" (or 4.1.x) is a row "
           "of the seed analysis's tables that `gpcheck verify-claims` prints and checks row by row; "
           "research/*.md are the project's code studies of that upstream code (not shipped with gpcheck: each "
           "one's facts are cited again here as the upstream file and line)")


def _source_lines(file: str) -> list[str]:
    """A spec's source lines (a bundled model's file is its name, not a path); [] if unreadable."""
    path = bundled_models().get(file) or Path(file)
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []


def _source_of(prop: object) -> tuple[list[str], int, int]:
    """(the lines of the file that declares `prop`, its first and last line), or ([], 0, 0)."""
    span = getattr(prop, "span", None)
    if span is None or span.line <= 0:
        return [], 0, 0
    lines = _source_lines(span.file)
    if span.line > len(lines):
        return [], 0, 0
    return lines, span.line, max(span.end_line, span.line)


def _comment_above(lines: list[str], line: int) -> str:
    """The `#` comment lines right above source line `line` (1-based), joined; '' if none."""
    out: list[str] = []
    i = line - 2
    while i >= 0 and lines[i].lstrip().startswith("#"):
        out.append(lines[i].lstrip()[1:].strip())
        i -= 1
    return " ".join(reversed(out))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ") or " "


def _rests_on(r: object) -> str:
    """The model assumptions a proved result's proof used (NOTE(assumptions)); '-' otherwise."""
    used = getattr(r, "assumptions", None)
    if r is None or used is None or getattr(r, "verdict", None) is None or not r.verdict.holds:  # type: ignore[attr-defined]
        return "-"
    return ", ".join(f"`{a}`" for a in used) or "none"


def _properties(model: ir.Model) -> list[tuple[str, str, object]]:
    props: list[tuple[str, str, object]] = [(p.name, "invariant", p) for p in model.invariants]
    props += [(p.name, "transition", p) for p in model.transitions]
    props += [(p.name, "liveness", p) for p in model.liveness]
    props += [(p.name, "latency", p) for p in model.latencies]
    props += [(p.name, "cover", p) for p in getattr(model, "covers", ())]
    return props


def model_page(model: ir.Model, run: bool = True) -> str:
    """The Markdown page of `model` (at the constants it was loaded with). With `run`, the
    explicit engine checks every property and the page shows each verdict and latency."""
    expected = {e.property: e.verdict for e in model.expectations}
    results = {}
    states = None
    if run:
        from gpcheck.checker.api.model_api import verify  # the engines only when the page shows results

        report = verify(model)
        results = {r.property: r for r in report.results}
        states = report.states
    out = [f"# `{model.name}`", "", model.description, ""]
    out += ["```text", f"gpcheck verify {model.name}", f"gpcheck models {model.name}", "```", ""]
    out += ["## Constants", "", "| constant | default | meaning and source |", "|---|---|---|"]
    for c in model.constants:
        out.append(f"| `{c.name}` | {c.default} | {_cell(c.doc)} |")
    out += ["", "## Properties", ""]
    if states is not None:
        out += [f"Checked by the explicit engine at the default constants: {states:,} states.", ""]
    out += ["| property | kind | expected | verdict | rests on | what it says |", "|---|---|---|---|---|---|"]
    for name, kind, prop in _properties(model):
        lines, first, _ = _source_of(prop)
        why = _comment_above(lines, first) if lines else ""
        r = results.get(name)
        verdict = "-" if r is None else r.verdict.value
        if r is not None and kind == "latency":
            lo, hi = r.detail.get("min"), r.detail.get("max")
            verdict += f" [{'-' if lo is None else f'{lo:,}'} .. {'unbounded' if hi is None else f'{hi:,}'}]"
        elif r is not None and r.counterexample is not None:
            verdict += f" ({len(r.counterexample.steps) - 1} steps)"
        if r is not None and getattr(r, "vacuous", None):
            why = f"**vacuous**: {r.vacuous}. {why}"
        out.append(f"| `{name}` | {kind} | {expected.get(name, '-')} | {verdict} | {_rests_on(r)} | {_cell(why)} |")
    for name in ir.BUILTIN_PROPERTIES:
        r = results.get(name)
        if r is not None:
            out.append(f"| `{name}` | built-in | {expected.get(name, 'holds')} | {r.verdict.value} | {_rests_on(r)} | "
                       f"{'no reachable state without a step, outside the terminal states' if name == 'deadlock' else 'every value stays in its declared range'} |")
    defs = []
    for _, _, prop in _properties(model):
        lines, first, last = _source_of(prop)
        defs += lines[first - 1:last] if lines else []
    if defs:
        out += ["", "## Definitions", "", "```text", *defs, "```"]
    if model.doc:

        out += ["", "## The code it follows", "", "The model's own comment block, verbatim:", "", "```text",
                *model.doc.splitlines(), "```", "", f"Citations: {SOURCES}."]
    return "\n".join(out) + "\n"

"""`expect PROPERTY: VERDICT` lines in a single-model run (`gpcheck verify SPEC|MODEL`), judged
as the library run judges them (NOTE(expectations) in checker/regression/library.py): a verdict that
meets its expectation is what the model is known to do, so an expected `violated` does not fail
the run; a verdict that contradicts it is a *surprise* and exits 1.

Two choices, both because a single run is often a different run from the library's:
- Expectations describe the model as written. With a `--const` that changes a constant from
  its default they are not applied (the report says so): a violation that needs N >= 3 says
  nothing about N = 2.
- An `unknown` (a timeout, a limit, an engine that cannot decide) stays `unknown`, exit 3,
  unless `unknown` is what the line expects: the run did not contradict the expectation, it
  did not get to it. (The library matrix counts it as a surprise: it is a regression run at
  known-good limits.)
`--ignore-expect` reports the plain verdicts and exit code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpcheck.checker.regression.library import expectation_met
from gpcheck.checker.core.verdict import Report, Verdict
from gpcheck.spec import ir


@dataclass
class Judgement:
    """How a report fares against the model's expect lines."""

    applied: bool  # False: no expect lines, or constants differ from the defaults
    why_not: str | None = None
    met: list[tuple[str, str, str]] = field(default_factory=list)  # (property, expected, verdict)
    surprises: list[tuple[str, str, str]] = field(default_factory=list)
    exit_code: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "applied": self.applied, "why_not": self.why_not,
            "met": [{"property": p, "expected": e, "verdict": v} for p, e, v in self.met],
            "surprises": [{"property": p, "expected": e, "verdict": v} for p, e, v in self.surprises],
        }

    def lines(self) -> list[str]:
        if not self.applied:
            return [f"expect lines not applied: {self.why_not}"] if self.why_not else []
        out = [f"expectations (expect lines): {len(self.met)} met"
               + (f", {len(self.surprises)} NOT met" if self.surprises else "")
               + ("; an expected verdict does not fail the run (--ignore-expect: plain verdicts)" if self.met else "")]
        for p, e, v in self.surprises:
            out.append(f"  SURPRISE: {p}: expected {e}, got {v}")
        return out


def judge(model: ir.Model, report: Report) -> Judgement:
    """The report against `model.expectations`; `report.exit_code` stands where none apply."""
    if not model.expectations:
        return Judgement(False, None, exit_code=report.exit_code)
    changed = [c.name for c in model.constants if c.value != c.default]
    if changed:
        return Judgement(False, f"the constants differ from the model's defaults ({', '.join(changed)}); "
                                "the expect lines describe the model as written",
                         exit_code=report.exit_code)
    expected = {e.property: e.verdict for e in model.expectations}
    j = Judgement(True)
    code = 0
    for r in report.results:
        e = expected.get(r.property)
        if r.verdict is Verdict.UNKNOWN and r.detail.get("not_checked"):
            continue
        if e is None:
            if r.kind != "cover":  # a cover without an expect line is a question (NOTE(covers))
                code = max(code, _raw(r.verdict), key=_rank)
        elif expectation_met(e, r.verdict):
            j.met.append((r.property, e, r.verdict.value))
        elif r.verdict is Verdict.UNKNOWN:
            code = max(code, 3, key=_rank)
        else:
            j.surprises.append((r.property, e, r.verdict.value))
            code = 1
    j.exit_code = code
    return j


def _raw(v: Verdict) -> int:
    return 1 if v is Verdict.VIOLATED else 3 if v is Verdict.UNKNOWN else 0


def _rank(code: int) -> int:
    return {0: 0, 3: 1, 1: 2}[code]

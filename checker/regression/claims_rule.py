"""The checks a row of `gpcheck verify-claims` runs, and the rule that turns them into the row's
outcome (NOTE(claims-rule)).

A row's outcome is not written by hand: it is derived from three kinds of check, each saying whether
it agrees with the seeds' claim.

- A live check (`Evidence`): a model property at stated constants, and the verdict the claim
  predicts for it. Its role says where the check stands: `claim` at the setting the claim
  describes, `scope` at a setting the claim does not mention (another mechanism, a fault, a
  variant), `worst` at the worst case of a claim about the typical or best case, `detail` a verdict
  the row's text quotes but which does not bear on the claim (a tightness check, a number's source).
- A measurement (`Measure`): a number the claim states, as a range in microseconds (or a count),
  against the least and greatest value a model computes now.
- A code reading (`Code`): a file and line, and what it shows for the claim: `agrees`,
  `disagrees`, `narrows` (true only in part: of one path, one mechanism, one reason) or
  `undecided` (nothing settles it: a design without code, a constant the models copy).

NOTE(claims-rule), applied in this order:
  1. refuted: a `claim` check or a `claim` measurement disagrees, or a code reading disagrees;
  2. confirmed only in the best case: a `worst` check disagrees, or a measurement's least value
     agrees and its greatest does not;
  3. confirmed only under stated parameters: a `scope` check disagrees, or a code reading narrows;
  4. confirmed: some `claim` check, measurement or code reading agrees;
  5. not decided by a model: nothing bears on the claim (only details and undecided readings).
The text of a row argues one outcome (`Row.stated`); when the rule derives another, or a `detail`
check comes out otherwise than the text quotes, the row is reported as `evidence changed` and the
command exits 1 (NOTE(claims-evidence)): the prose cannot drift from the evidence silently."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from gpcheck.checker.core.verdict import Verdict

RULE = ("refuted if a check at the claim's own setting, a measurement or a code reading disagrees; "
        "best case only if the worst case disagrees; under stated parameters if a check at another "
        "setting disagrees or a code reading narrows; confirmed if something agrees; otherwise not decided")


class Outcome(enum.Enum):
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    UNDER = "confirmed only under stated parameters"
    BEST_CASE = "confirmed only in the best case"
    NOT_DECIDED = "not decided by a model"
    CHANGED = "evidence changed"


ROLES = ("claim", "scope", "worst", "detail")


@dataclass(frozen=True)
class Evidence:
    """One live check: a model property at stated constants, the verdict the claim predicts (for a
    `detail`, the verdict the row's text quotes) and where the check stands (ROLES)."""

    model: str
    prop: str
    consts: tuple[tuple[str, int], ...]
    want: str  # "holds", "proved" or "violated"
    verdict: Verdict | None = None
    engine: str = ""
    cex_length: int | None = None
    lasso: bool = False
    low: int | None = None  # a latency property's least and greatest measurement (NOTE(latency))
    high: int | None = None
    latency: bool = False
    witness: tuple[str, ...] = ()  # the counterexample (a latency's greatest-measurement behaviour), as action labels
    role: str = "detail"
    # NOTE(assumption-use): the model assumptions the check rests on: a proof's, those it used; any
    # other verdict's, those in force (its counterexample or bound holds under them)
    assumptions: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        if self.verdict is None:
            return False
        return self.verdict.holds if self.want == "holds" else self.verdict.value == self.want

    def text(self) -> str:
        c = " ".join(f"{k}={v}" for k, v in self.consts)
        v = "?" if self.verdict is None else self.verdict.value
        if self.latency and self.verdict is not None and self.verdict is not Verdict.UNKNOWN:
            v += f" [min {self.low}, max {'unbounded' if self.high is None else self.high}]"
        if self.cex_length is not None:
            what = "-step witness" if self.latency and self.verdict is not Verdict.VIOLATED else " steps"
            v += f" ({self.cex_length}{what}{', lasso' if self.lasso else ''})"
        rests = f"; assumes {', '.join(self.assumptions)}" if self.assumptions else ""
        return f"{self.model}.{self.prop}{f' [{c}]' if c else ''}: {v}, {self.engine}{rests}"

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "property": self.prop, "constants": dict(self.consts), "needs": self.want,
                "role": self.role, "verdict": self.verdict.value if self.verdict else None, "engine": self.engine,
                "counterexample_length": self.cex_length, "ok": self.ok, "assumptions": list(self.assumptions),
                "witness": list(self.witness), **({"min": self.low, "max": self.high} if self.latency else {})}


@dataclass(frozen=True)
class Measure:
    """A number the claim states ([claim_lo, claim_hi]) against what a model computes now ([lo, hi]);
    `source` names the model property or computation it comes from."""

    what: str
    claim_lo: int
    claim_hi: int
    lo: int
    hi: int | None  # None: unbounded
    source: str
    role: str = "claim"  # "claim" or "scope" (ROLES)

    @property
    def best_agrees(self) -> bool:
        return self.claim_lo <= self.lo <= self.claim_hi

    @property
    def all_agree(self) -> bool:
        return self.best_agrees and self.hi is not None and self.claim_lo <= self.hi <= self.claim_hi

    def text(self) -> str:
        claim = f"{self.claim_lo}" if self.claim_lo == self.claim_hi else f"{self.claim_lo}..{self.claim_hi}"
        hi = "unbounded" if self.hi is None else self.hi
        how = "agrees" if self.all_agree else "best case only" if self.best_agrees else "disagrees"
        return f"{self.what}: claim {claim}, computed {self.lo}..{hi} ({self.source}): {how}"

    def to_json(self) -> dict[str, Any]:
        return {"what": self.what, "claim": [self.claim_lo, self.claim_hi], "computed": [self.lo, self.hi],
                "source": self.source, "agrees": self.all_agree, "best_case_agrees": self.best_agrees}


@dataclass(frozen=True)
class Code:
    """A code reading: where (file:line, repository@commit given in the row's text or the model's
    header) and what it shows for the claim."""

    where: str
    shows: str  # "agrees", "disagrees", "narrows" or "undecided"
    note: str = ""

    def text(self) -> str:
        return f"code reading {self.where}: {self.shows}" + (f" ({self.note})" if self.note else "")

    def to_json(self) -> dict[str, Any]:
        return {"where": self.where, "shows": self.shows, "note": self.note}


@dataclass
class Row:
    ident: str  # "4.1.13"
    side: str  # "GPreempt" or "AMD"
    topic: str
    claim: str  # the seeds' words (translated)
    stated: Outcome  # the outcome the text argues; the reported one is derived (NOTE(claims-rule))
    why: str
    evidence: list[Evidence] = field(default_factory=list)
    numbers: dict[str, Any] = field(default_factory=dict)
    code: list[Code] = field(default_factory=list)
    measures: list[Measure] = field(default_factory=list)
    outcome: Outcome = Outcome.CHANGED
    derived: Outcome = Outcome.NOT_DECIDED

    @property
    def live(self) -> bool:
        return bool(self.evidence)

    @property
    def assumptions(self) -> dict[str, list[str]]:
        """NOTE(assumption-use): each model assumption the row's live checks rest on, with the
        checks (`model.property`) that rest on it; empty when none does."""
        out: dict[str, list[str]] = {}
        for e in self.evidence:
            for a in e.assumptions:
                checks = out.setdefault(f"{e.model}.{a}", [])
                if f"{e.model}.{e.prop}" not in checks:
                    checks.append(f"{e.model}.{e.prop}")
        return out

    def to_json(self) -> dict[str, Any]:
        return {"row": self.ident, "side": self.side, "topic": self.topic, "claim": self.claim,
                "outcome": self.outcome.value, "derived": self.derived.value, "why": self.why,
                "evidence": [e.to_json() for e in self.evidence], "measures": [m.to_json() for m in self.measures],
                "code": [c.to_json() for c in self.code], "numbers": self.numbers,
                "assumptions": self.assumptions}


def derive(row: Row) -> Outcome:
    """NOTE(claims-rule)."""
    checks = [e for e in row.evidence if e.role != "detail"]
    shows = {c.shows for c in row.code}
    own = [m for m in row.measures if m.role == "claim"]
    if (any(e.role == "claim" and not e.ok for e in checks) or "disagrees" in shows
            or any(not m.best_agrees for m in own)):
        return Outcome.REFUTED
    if any(e.role == "worst" and not e.ok for e in checks) or any(not m.all_agree for m in own):
        return Outcome.BEST_CASE
    if (any(e.role == "scope" and not e.ok for e in checks) or "narrows" in shows
            or any(m.role == "scope" and not m.all_agree for m in row.measures)):
        return Outcome.UNDER
    if any(e.role == "claim" for e in checks) or own or "agrees" in shows:
        return Outcome.CONFIRMED
    return Outcome.NOT_DECIDED


def settle(row: Row) -> Row:
    """The row's outcome by NOTE(claims-rule), or `evidence changed` when the text no longer matches
    it (NOTE(claims-evidence))."""
    for x in [*row.evidence, *row.measures]:
        assert x.role in ROLES, x.role
    row.derived = derive(row)
    bad = [e for e in row.evidence if e.role == "detail" and not e.ok]
    if bad:
        row.why = "the text quotes " + "; ".join(f"{e.model}.{e.prop} {e.want}" for e in bad) + ". " + row.why
        row.outcome = Outcome.CHANGED
    elif row.derived is not row.stated:
        row.why = f"the rule derives '{row.derived.value}', the text argues '{row.stated.value}'. " + row.why
        row.outcome = Outcome.CHANGED
    else:
        row.outcome = row.derived
    return row

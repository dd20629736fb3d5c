"""Verdicts, per-property results and counterexamples: what every engine returns.

NOTE(honest-verdicts): `PROVED` only when an engine established the property for every
reachable state of the instance (complete exploration without a constraint, or an unbounded
proof); `HOLDS_TO_BOUND` when it was checked to `bound` steps or inside a `constraint`;
`VIOLATED` always carries a counterexample that replays through gpmodel; `UNKNOWN` always
carries a reason."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Verdict(enum.Enum):
    PROVED = "proved"
    HOLDS_TO_BOUND = "holds_to_bound"
    VIOLATED = "violated"
    UNKNOWN = "unknown"
    # a `cover`'s answers (NOTE(covers) in checker/api/assumptions.py): a state satisfying it is
    # reachable (the counterexample field holds the witness), or none is (proved by an engine)
    REACHED = "reached"
    UNREACHABLE = "unreachable"

    @property
    def holds(self) -> bool:
        return self in (Verdict.PROVED, Verdict.HOLDS_TO_BOUND)


@dataclass(frozen=True)
class Step:
    """One state of a behaviour and the action instance that produced it (None for step 0)."""

    action: str | None
    args: dict[str, Any]
    state: dict[str, Any]  # decoded, see gpcheck.gpmodel.layout.Layout.decode
    # NOTE(timed): the time at which the step happens (step 0: 0) in a timed spec's behaviour;
    # None in an untimed one (and then left out of the JSON)
    time: int | None = None
    # NOTE(timed): for a step of a timed instance, the time its timer started (when it became
    # enabled, or last fired and stayed enabled): the step is the end of a duration since..time
    since: int | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"action": self.action, "args": self.args, "state": self.state}
        if self.time is not None:
            out["time"] = self.time
        if self.since is not None:
            out["since"] = self.since
        return out


@dataclass(frozen=True)
class Counterexample:
    """A finite behaviour, or a lasso when `loop` is set: after the last step the behaviour
    continues at step `loop` (loop == len(steps) - 1 means it stutters in the last state)."""

    steps: tuple[Step, ...]
    loop: int | None = None

    @property
    def length(self) -> int:
        """Number of transitions (steps after the initial state)."""
        return len(self.steps) - 1

    def to_json(self) -> dict[str, Any]:
        return {"steps": [s.to_json() for s in self.steps], "loop": self.loop}


@dataclass(frozen=True)
class Result:
    property: str
    kind: str  # invariant | transition | liveness | deadlock | range
    verdict: Verdict
    engine: str
    bound: int | None = None
    reason: str | None = None
    counterexample: Counterexample | None = None
    detail: dict[str, Any] = field(default_factory=dict)  # engine extras: k, invariant, coverage...

    # NOTE(assumptions): for a proved (or unreachable) result, the model assumptions its proof
    # used; for any other, those in force; None where not computed (a result built by hand)
    assumptions: tuple[str, ...] | None = None
    vacuous: str | None = None  # why the result holds vacuously (NOTE(vacuity)), else None

    def __post_init__(self) -> None:
        assert self.verdict not in (Verdict.VIOLATED, Verdict.REACHED) or self.counterexample is not None, self
        assert self.verdict is not Verdict.UNKNOWN or self.reason, self

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "property": self.property,
            "kind": self.kind,
            "verdict": self.verdict.value,
            "engine": self.engine,
            "bound": self.bound,
            "reason": self.reason,
            "counterexample": self.counterexample.to_json() if self.counterexample else None,
        }
        if self.assumptions is not None:
            out["assumptions"] = list(self.assumptions)
        if self.vacuous is not None:
            out["vacuous"] = self.vacuous
        detail = self.detail
        if self.kind == "latency":  # NOTE(latency): the least and greatest measurement, and B
            detail = dict(detail)
            for key in ("min", "max", "within"):
                out[key] = detail.pop(key, None)
        out["detail"] = detail
        if detail:
            for key in ("for_all", "instance"):  # --for-all: the constants proved over / refuted at
                if key in detail:
                    out[key] = detail[key]
        return out


@dataclass
class Report:
    """Everything one `verify` run established about one model instance."""

    model: str
    file: str
    constants: dict[str, int]
    results: list[Result]
    states: int | None = None  # distinct reachable states, when an exhaustive search completed
    seconds: float = 0.0
    coverage: dict[str, int] | None = None  # action name -> times fired (explicit engine)
    warnings: list[str] = field(default_factory=list)
    # --fingerprint: {"bits": 64, "collision_probability": {"calculated": p, "actual": q}} (TLC's estimates)
    fingerprint: dict[str, Any] | None = None
    # Set when the explicit search was reduced by symmetric types (NOTE(symmetry)): `states`
    # then counts orbits (canonical states), not distinct states. {"reduced", "types", "group"}
    symmetry: dict[str, Any] | None = None
    assumptions: list[str] = field(default_factory=list)  # the model's declared assumptions (NOTE(assumptions))
    # NOTE(timed): a timed spec's zone graph: {"discrete_states", "zones", "clocks", "complete"}
    timed: dict[str, Any] | None = None

    def result(self, prop: str) -> Result:
        for r in self.results:
            if r.property == prop:
                return r
        raise KeyError(prop)

    @property
    def exit_code(self) -> int:
        """1 something violated, else 3 something unknown, else 0. A property the engine does
        not check (`detail["not_checked"]`: liveness under kind/pdr, not asked for by name) is
        reported but changes nothing; neither does a `cover` (a question, not an obligation:
        NOTE(covers) in checker/api/assumptions.py; an `expect` line makes it count)."""
        if any(r.verdict is Verdict.VIOLATED for r in self.results):
            return 1
        if any(r.verdict is Verdict.UNKNOWN and not r.detail.get("not_checked") and r.kind != "cover"
               for r in self.results):
            return 3
        return 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "model": self.model,
            "file": self.file,
            "constants": self.constants,
            "states": self.states,
            "seconds": round(self.seconds, 4),
            "results": [r.to_json() for r in self.results],
            # every key always present, null where the engine has none (docs/schema/report.schema.json)
            "symmetry": self.symmetry,
            "coverage": self.coverage,
            "warnings": list(self.warnings),
            "fingerprint": self.fingerprint,
            "assumptions": self.assumptions,  # the model's declared assumptions ([] when none)
            "timed": self.timed,  # NOTE(timed): a timed spec's zone graph, else null
        }
        return out

"""Invariants and transition properties checked along one behaviour (`gpcheck simulate`), as
TLC's and Quint's simulators do: each state of a random behaviour against every invariant,
each step against every transition property, stopping at the first violation.

A predicate that fails to evaluate (a modelling error: an index out of range, a division by
zero) counts as false for its own property (NOTE(predicate-errors) in spec/ir.py), and the
violation says so."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection

from gpcheck.gpmodel.model import CompiledModel, State
from gpcheck.gpmodel.runtime import ModelError


@dataclass(frozen=True)
class Violation:
    """The first property a behaviour broke: at `step` (0 = the initial state; a transition
    property on the step into state `step`)."""

    property: str
    kind: str  # invariant | transition
    step: int
    error: str | None = None  # the modelling error that made the predicate false, if any

    def text(self) -> str:
        where = "in the initial state" if self.step == 0 else f"at step {self.step}"
        why = f" (evaluating it fails: {self.error})" if self.error else ""
        return f"{self.kind} {self.property} violated {where}{why}"


class Monitor:
    """The invariants and transition properties named in `wanted` (all when None)."""

    def __init__(self, cm: CompiledModel, wanted: Collection[str] | None = None):
        keep = (lambda name: True) if wanted is None else (lambda name: name in wanted)
        self.invariants = [(p.name, fn) for p, fn in cm.invariants if keep(p.name)]
        self.transitions = [(p.name, fn) for p, fn in cm.transitions if keep(p.name)]

    @property
    def names(self) -> list[str]:
        return [n for n, _ in self.invariants] + [n for n, _ in self.transitions]

    def check(self, step: int, prev: State | None, state: State) -> Violation | None:
        """The first violation in `state` (reached at `step` from `prev`; prev is None for the
        initial state), or None."""
        if prev is not None:
            for name, fn in self.transitions:
                v = _evaluate(fn, prev, state)
                if v is not True:
                    return Violation(name, "transition", step, v or None)
        for name, fn in self.invariants:
            v = _evaluate(fn, state)
            if v is not True:
                return Violation(name, "invariant", step, v or None)
        return None


def _evaluate(fn: object, *states: State) -> bool | str:
    """True, False, or the message of the modelling error that stopped the evaluation."""
    try:
        return bool(fn(*states))  # type: ignore[operator]
    except ModelError as e:
        return str(e) or "modelling error"

"""Z3 models back to solver-neutral behaviours: slot tuples, action instances, Counterexample.

A path read from a model is a `RawPath`: the slot tuple of every state and the
(action index, parameter slot values) that produced each state after the first. Engines turn
it into a `gpcheck.checker.core.verdict.Counterexample` with `to_counterexample`, whose states are decoded
by gpmodel's layout exactly as the explicit engine decodes them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import z3

from gpcheck.gpmodel.layout import Layout
from gpcheck.spec import ir
from gpcheck.checker.engines.smt.encode import Encoder, State
from gpcheck.checker.engines.smt.terms import slot_value
from gpcheck.checker.core.verdict import Counterexample, Step

Instance = tuple[int, tuple[int, ...]]


@dataclass(frozen=True)
class RawPath:
    states: tuple[tuple[int, ...], ...]
    instances: tuple[Instance, ...]  # instances[i] takes states[i] to states[i + 1]


def read_state(m: z3.ModelRef, s: State) -> tuple[int, ...]:
    return tuple(slot_value(t, m.eval(t, model_completion=True)) for t in s)


def read_instance(m: z3.ModelRef, enc: Encoder, step: int, tag: str = "") -> Instance:
    ai = int(m.eval(enc.act(step, tag), model_completion=True).as_long())  # type: ignore[attr-defined]
    args = enc.params(ai, step, tag)
    return ai, tuple(slot_value(a, m.eval(a, model_completion=True)) for a in args)


def read_path(m: z3.ModelRef, enc: Encoder, path: Sequence[State], tag: str = "") -> RawPath:
    states = tuple(read_state(m, s) for s in path)
    insts = tuple(read_instance(m, enc, i, tag) for i in range(len(path) - 1))
    return RawPath(states, insts)


def format_args(model: ir.Model, inst: Instance) -> dict[str, Any]:
    a = model.actions[inst[0]]
    return {p.name: ir.format_scalar(p.type, v) for p, v in zip(a.params, inst[1])}  # type: ignore[arg-type]


def to_counterexample(model: ir.Model, raw: RawPath, layout: Layout | None = None) -> Counterexample:
    layout = layout or Layout(model)
    steps = [Step(None, {}, layout.decode(raw.states[0]))]
    for inst, st in zip(raw.instances, raw.states[1:]):
        steps.append(Step(model.actions[inst[0]].name, format_args(model, inst), layout.decode(st)))
    return Counterexample(tuple(steps))

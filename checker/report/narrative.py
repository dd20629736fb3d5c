"""A counterexample as a story: each step's action (with the comment the model gives it), the
variables it changed, and the parameters that made the step possible.

Why: a GPU-systems reader of `gpcheck explain reef_rewind no_reexecution` wants to know *which
knob* (flag-ignoring kernels, the read-index rule, a nop) a finding depends on, not only the trace.

How a parameter is blamed (NOTE(counterfactual)): for each constant we build the model again with
one alternative value (its default when overridden; for a switch, each other value its
documentation lists) and, when the state layout is unchanged, replay every step of the
counterexample from the same state with the same action instance. If the step is disabled under
the alternative, the constant *enabled* it; if it leads elsewhere, the constant *shaped* it. Steps
no alternative changes are blamed on nothing: they happen under every setting tried."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpcheck.checker.report.render import flatten_value
from gpcheck.checker.core.verdict import Counterexample
from gpcheck.gpmodel import CompiledModel, ModelError, compile_model
from gpcheck.spec import ir, load_spec, resolve_spec_path
from gpcheck.spec.errors import SpecError


@dataclass(frozen=True)
class Blame:
    """One constant that mattered for one step."""

    name: str
    value: int
    alternative: int
    effect: str  # "enabled" (disabled under the alternative) or "shaped" (another next state)
    doc: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "alternative": self.alternative,
                "effect": self.effect, "doc": self.doc}


@dataclass(frozen=True)
class StoryStep:
    index: int
    action: str | None
    args: dict[str, Any]
    note: str  # the comment above the action in the model source
    changed: dict[str, tuple[Any, Any]]
    blame: tuple[Blame, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "action": self.action, "args": self.args, "note": self.note,
                "changed": {k: [a, b] for k, (a, b) in self.changed.items()},
                "made_possible_by": [b.to_json() for b in self.blame]}


def action_notes(model: ir.Model, spec: str | Path) -> dict[str, str]:
    """The comment block right above each action declaration, joined into one line."""
    try:
        main_path = resolve_spec_path(spec)
        lines = main_path.read_text(encoding="utf-8").splitlines()
    except (OSError, SpecError):
        return {}
    files: dict[str, list[str]] = {str(main_path): lines}
    out: dict[str, str] = {}
    for a in model.actions:
        if a.span.file and a.span.file != str(main_path) and a.span.file != str(spec):
            # an action of a module the model `use`s (spec/compose.py): its comment is in that file
            if a.span.file not in files:
                try:
                    files[a.span.file] = Path(a.span.file).read_text(encoding="utf-8").splitlines()
                except OSError:
                    files[a.span.file] = []
            lines = files[a.span.file]
        else:
            lines = files[str(main_path)]
        i = a.span.line - 2
        block: list[str] = []
        while i >= 0 and lines[i].lstrip().startswith("#"):
            block.insert(0, lines[i].lstrip()[1:].strip())
            i -= 1
        out[a.name] = " ".join(b for b in block if not b.startswith("---"))
    return out


_SWITCH = re.compile(r"^-?\d+[: ]")
_OPTION = re.compile(r"(?:^|[;,]\s*)(-?\d+)[: ]")


def _alternatives(c: ir.Constant) -> list[int]:
    """NOTE(counterfactual): the default of an overridden constant; for a switch (a constant whose
    documentation starts by listing its values, "0 off; 1 ...") every other documented value.
    Sizes and bounds are not blamed: they scale the instance rather than enable a behaviour."""
    if c.overridden and c.value != c.default:
        return [c.default]
    if _SWITCH.match(c.doc):
        return sorted({int(v) for v in _OPTION.findall(c.doc)} - {c.value})
    return []


def _instance_ids(cm: CompiledModel) -> dict[tuple[str, tuple[int, ...]], int]:
    return {(inst.action.name, inst.args): i for i, inst in enumerate(cm.instances)}


def _variants(spec: str | Path, model: ir.Model) -> list[tuple[ir.Constant, int, CompiledModel]]:
    """Compiled alternatives, one per (constant, alternative value), with the same slot names."""
    base_consts = {c.name: c.value for c in model.constants if c.overridden}
    base_layout = compile_model(model).layout.slot_names
    out = []
    for c in model.constants:
        for alt in _alternatives(c):
            try:
                m = load_spec(spec, {**base_consts, c.name: alt})
                cm = compile_model(m)
            except (SpecError, ModelError):
                continue
            if cm.layout.slot_names == base_layout:
                out.append((c, alt, cm))
    return out


def blame_steps(spec: str | Path, model: ir.Model, cex: Counterexample) -> list[tuple[Blame, ...]]:
    """NOTE(counterfactual): for each step (index ≥ 1) the constants that enabled or shaped it."""
    base = compile_model(model)
    states = [base.layout.encode(s.state) for s in cex.steps]
    base_ids = _instance_ids(base)
    labels = []
    for s in cex.steps[1:]:
        iid = base_ids.get((s.action or "", tuple(_arg_values(base, s.action, s.args))))
        labels.append(None if iid is None else (base.instances[iid].action.name, base.instances[iid].args))
    per_step: list[list[Blame]] = [[] for _ in labels]
    for c, alt, cm in _variants(spec, model):
        ids = _instance_ids(cm)
        for k, label in enumerate(labels):
            if label is None or label not in ids:
                continue
            prev, nxt = states[k], states[k + 1]
            try:
                got = cm.step(ids[label], prev)
            except ModelError:
                got = -1
            if isinstance(got, int):
                per_step[k].append(Blame(c.name, c.value, alt, "enabled", c.doc))
            elif got != nxt:
                per_step[k].append(Blame(c.name, c.value, alt, "shaped", c.doc))
    return [tuple(_dedupe(b)) for b in per_step]


def _dedupe(blames: list[Blame]) -> list[Blame]:
    seen: dict[str, Blame] = {}
    for b in blames:
        if b.name not in seen or (b.effect == "enabled" and seen[b.name].effect != "enabled"):
            seen[b.name] = b
    return list(seen.values())


def _arg_values(cm: CompiledModel, action: str | None, args: dict[str, Any]) -> list[int]:
    a = cm.model.action(action or "")
    if a is None:
        return []
    out = []
    for p in a.params:
        v = args[p.name]
        if isinstance(p.type, ir.EnumType):
            out.append(p.type.members.index(v))
        elif isinstance(v, bool):
            out.append(int(v))
        else:
            out.append(int(v))
    return out


def story(spec: str | Path, model: ir.Model, cex: Counterexample, blame: bool = True) -> list[StoryStep]:
    """The counterexample step by step, with notes, changes and (optionally) blamed constants."""
    notes = action_notes(model, spec)
    blames = blame_steps(spec, model, cex) if blame else [()] * (len(cex.steps) - 1)
    out: list[StoryStep] = []
    prev: dict[str, Any] = {}
    for k, s in enumerate(cex.steps):
        flat = flatten_value(s.state, "", {})
        changed = {n: (prev.get(n), v) for n, v in flat.items() if k > 0 and prev.get(n) != v}
        out.append(StoryStep(k, s.action, dict(s.args), notes.get(s.action or "", ""), changed,
                             blames[k - 1] if k > 0 else ()))
        prev = flat
    return out

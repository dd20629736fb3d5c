"""`gpcheck explain MODEL PROPERTY`: a property's counterexample told as a story: each step's
action and what the model says about it, the variables it changed, and which parameter made the
step possible (NOTE(counterfactual) in checker/report/narrative.py). A property that holds is reported
with its verdict and the engine that decided it."""

from __future__ import annotations

import argparse
from typing import Any

from gpcheck.checker.api.model_api import ENGINES, load, verify
from gpcheck.checker.core import budget
from gpcheck.checker.cli.commands.flags import add_timeout_flag
from gpcheck.checker.cli.commands.common import add_const_flag, consts_of, write_out
from gpcheck.checker.report.narrative import StoryStep, story
from gpcheck.checker.report.render import fmt, to_json_bytes, verdict_text
from gpcheck.checker.core.verdict import Result, Verdict
from gpcheck.spec import ir, resolve_spec_path
from gpcheck.spec.errors import UsageError


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("explain", parents=[common], help="tell a property's counterexample as a story",
                       description="Check one property and print its counterexample step by step: the "
                                   "action, the changed variables, and the parameters the step depends on.")
    p.add_argument("model", metavar="MODEL", help="a bundled model name or a .gpspec file")
    p.add_argument("property", metavar="PROPERTY", help="the property whose counterexample to tell")
    add_const_flag(p)
    p.add_argument("--engine", choices=ENGINES, default="explicit",
                   help="engine that finds the counterexample (default %(default)s)")
    p.add_argument("--no-blame", action="store_true", help="skip the parameter analysis (faster)")
    add_timeout_flag(p, "the check")
    p.add_argument("--no-progress", action="store_true", help="no progress display on stderr")
    p.set_defaults(run=run)


def _source_of(model: ir.Model, spec: str, prop: str) -> str:
    for p in (*model.invariants, *model.transitions, *model.liveness, *model.latencies):
        if p.name == prop:
            try:
                return resolve_spec_path(spec).read_text(encoding="utf-8").splitlines()[p.span.line - 1].strip()
            except (OSError, IndexError):
                return ""
    return ""


def render(model: ir.Model, r: Result, steps: list[StoryStep], source: str) -> str:
    out = [f"{model.name}.{r.property} ({r.kind}): {verdict_text(r)}, decided by {r.engine}"]
    if source:
        out.append(f"  {source}")
    consts = [c for c in model.constants]
    out.append("parameters: " + "  ".join(f"{c.name}={c.value}{'*' if c.overridden else ''}" for c in consts))
    if r.verdict is not Verdict.VIOLATED or r.counterexample is None:
        if r.reason:
            out.append(f"  {r.reason}")
        out.append("no counterexample: nothing to explain")
        return "\n".join(out) + "\n"
    out.append("")
    for s in steps:
        if s.action is None:
            out.append("step 0: initial state")
            continue
        args = ", ".join(f"{a}={fmt(v)}" for a, v in s.args.items())
        out.append(f"step {s.index}: {s.action}({args})" if args else f"step {s.index}: {s.action}")
        if s.note:
            out.append(f"    {s.note}")
        changes = "  ".join(f"{n}: {fmt(a)} -> {fmt(b)}" for n, (a, b) in s.changed.items())
        out.append(f"    changed: {changes or '(nothing)'}")
        for b in s.blame:
            how = "possible only because" if b.effect == "enabled" else "shaped by"
            out.append(f"    {how} {b.name}={b.value} (with {b.name}={b.alternative} it would "
                       f"{'be disabled' if b.effect == 'enabled' else 'lead elsewhere'}): {b.doc}")
    if not any(s.blame for s in steps):
        out.append("no switch of this model had to be set for any step: the behaviour happens under "
                   "every setting of its documented switches")
    loop = r.counterexample.loop
    if loop is not None:
        last = len(r.counterexample.steps) - 1
        out.append(f"... and stays in step {last} forever" if loop == last else f"... then back to step {loop}, forever")
    elif r.kind == "invariant":
        out.append(f"step {len(steps) - 1} violates {r.property}")
    elif r.kind == "transition":
        out.append(f"the last step violates {r.property}")
    return "\n".join(out) + "\n"


def run(args: argparse.Namespace) -> int:
    budget.limit_time(args.timeout)
    model = load(args.model, consts_of(args))
    if args.property not in model.property_names() and args.property not in ("deadlock", "range"):
        raise UsageError(f"{args.property}: no such property of {model.name} "
                         f"(properties: {', '.join(model.property_names())})")
    report = verify(args.model, consts_of(args), [args.property], args.engine)
    r = report.result(args.property)
    steps: list[StoryStep] = []
    if r.verdict is Verdict.VIOLATED and r.counterexample is not None:
        steps = story(args.model, model, r.counterexample, blame=not args.no_blame)
    if args.json:
        data: dict[str, Any] = {"model": model.name, "constants": model.const_values, **r.to_json()}
        data.pop("counterexample", None)
        data["length"] = r.counterexample.length if r.counterexample else None
        data["loop"] = r.counterexample.loop if r.counterexample else None
        data["steps"] = [s.to_json() for s in steps]
        write_out(to_json_bytes(data))
    else:
        write_out(render(model, r, steps, _source_of(model, args.model, args.property)))
    return {Verdict.VIOLATED: 1, Verdict.UNKNOWN: 3}.get(r.verdict, 0)

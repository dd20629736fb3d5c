"""The Python API: load a spec, run an engine, get a `Report` of verdict objects.

    from checker import verify
    report = verify("ring.gpspec", consts={"N": 8})
    assert report.result("no_reexecution").verdict is Verdict.PROVED
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from pathlib import Path
from typing import Iterable, Mapping

from spec import ir, load_spec
from spec.errors import UsageError
from gpmodel import CompiledModel, compile_model
from checker import budget, explicit, liveness
from checker.explicit import ENGINE, Limits, ProgressFn
from checker.verdict import Counterexample, Report, Result, Verdict

ENGINES = ("explicit", "bmc", "kind", "pdr", "auto")


def load(spec: str | Path | ir.Model, consts: Mapping[str, int] | None = None) -> ir.Model:
    """A model instance from a path, a bundled model name, or an already loaded model."""
    if isinstance(spec, ir.Model):
        if consts:
            raise UsageError("constants cannot be overridden on an already loaded model; pass its path")
        return spec
    return load_spec(spec, consts)


def verify(
    spec: str | Path | ir.Model,
    consts: Mapping[str, int] | None = None,
    properties: Iterable[str] | None = None,
    engine: str = "explicit",
    max_states: int | None = None,
    timeout: float | None = None,
    depth: int | None = None,
    progress: ProgressFn | None = None,
) -> Report:
    """Check the properties of one model instance with one engine (or `auto`)."""
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r} (engines: {', '.join(ENGINES)})")
    _check_limits(max_states, timeout, depth)
    model = load(spec, consts)
    wanted = explicit.select_properties(model, properties)
    started = time.monotonic()
    with budget.cooperative():  # a stop (signal, memory) ends the engine with a partial report
        if engine == "explicit":
            report = run_explicit(model, wanted, Limits(max_states, timeout, progress))
        else:
            from checker.engines import run_engine  # the Z3 engines load z3 only when asked for

            results = run_engine(engine, model, sorted(wanted), depth=depth, timeout=timeout,
                                 max_states=max_states, progress=progress)
            report = Report(model.name, model.file, model.const_values, results)
            states = [r.detail.get("states") for r in results if r.engine == ENGINE and r.detail.get("states")]
            report.states = states[0] if states else None
    report.results = stopped_reasons(report.results)
    report.seconds = time.monotonic() - started
    return report


def _check_limits(max_states: int | None, timeout: float | None, depth: int | None) -> None:
    """The same ranges as the command line's flags (checker/commands/flags.py)."""
    if max_states is not None and (isinstance(max_states, bool) or not isinstance(max_states, int) or max_states < 1):
        raise UsageError(f"max_states={max_states!r}: expected an integer >= 1")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 0):
        raise UsageError(f"depth={depth!r}: expected a non-negative integer")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not math.isfinite(timeout) or timeout <= 0):
        raise UsageError(f"timeout={timeout!r}: expected a positive, finite number of seconds")


def stopped_reasons(results: list[Result]) -> list[Result]:
    """After the command's budget stopped (checker/budget.py), an engine cut short reports it
    as a timeout (Z3 says "canceled" or "timeout"): name the real reason instead."""
    why = budget.stopped()
    if why is None:
        return results
    out = []
    for r in results:
        if r.verdict is Verdict.UNKNOWN and r.reason and any(w in r.reason for w in ("timeout", "cancel", "interrupt")):
            if why not in r.reason:
                r = replace(r, reason=why)
        out.append(r)
    return out


def run_explicit(model: ir.Model, wanted: set[str], limits: Limits, cm: CompiledModel | None = None) -> Report:
    cm = cm or compile_model(model)
    res = explicit.search(cm, wanted, limits)
    results = explicit.safety_results(cm, res, wanted)
    results += liveness_results(cm, res, wanted)
    order = {n: i for i, n in enumerate(model.property_names() + ["deadlock", "range"])}
    results.sort(key=lambda r: order.get(r.property, len(order)))
    coverage: dict[str, int] = {}
    for inst, n in zip(cm.instances, res.fired):
        coverage[inst.action.name] = coverage.get(inst.action.name, 0) + n
    warnings = [f"action '{a}' never fired" for a, n in coverage.items() if n == 0 and res.complete]
    return Report(
        model.name, model.file, model.const_values, results,
        states=len(res.parent) if res.complete else None,
        coverage=coverage, warnings=warnings,
    )


def liveness_results(cm: CompiledModel, res: explicit.Search, wanted: set[str]) -> list[Result]:
    props = [p for p in cm.model.liveness if p.name in wanted]
    if not props:
        return []
    if not res.complete:
        return [Result(p.name, "liveness", Verdict.UNKNOWN, ENGINE, bound=res.depth,
                       reason=res.stop_reason or "incomplete search") for p in props]
    outside = set()
    if res.pruned:
        outside = {s for s in res.parent if not cm.in_constraints(s)}
    try:
        return _liveness_checks(cm, res, props, outside)
    except budget.Stop as stop:  # a signal or --max-memory: the safety results of the search stand
        return [Result(p.name, "liveness", Verdict.UNKNOWN, ENGINE, reason=stop.text) for p in props]


def _liveness_checks(cm: CompiledModel, res: explicit.Search, props: list[ir.Liveness], outside: set) -> list[Result]:  # type: ignore[type-arg]
    graph = liveness.build_graph(cm, res.parent, outside.__contains__)
    out = []
    for p in props:
        lasso = liveness.check(cm, graph, p)
        if lasso is not None:
            states = [graph.states[i] for i in lasso.states]
            cex = Counterexample(explicit.make_steps(cm, states, lasso.iids), loop=lasso.loop)
            out.append(Result(p.name, "liveness", Verdict.VIOLATED, ENGINE, counterexample=cex))
        elif res.pruned:
            names = ", ".join(c.name for c in cm.model.constraints)
            out.append(Result(p.name, "liveness", Verdict.HOLDS_TO_BOUND, ENGINE, bound=res.depth,
                              reason=f"explored only inside constraint {names}"))
        else:
            out.append(Result(p.name, "liveness", Verdict.PROVED, ENGINE))
    return out

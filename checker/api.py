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
from gpmodel import CompiledModel, compile_model, jit
from checker import budget, explicit, liveness
from checker.explicit import ENGINE, Limits, ProgressFn
from checker.verdict import Counterexample, Report, Result, Verdict

ENGINES = ("explicit", "bmc", "kind", "pdr", "auto")
CORES = ("auto", "python", "compiled")  # how the explicit engine runs (see run_explicit)
AUTO_PYTHON_STATES = 200_000  # core auto: the Python search first; past this many states, the compiled one
AUTO_PYTHON_STATES_CACHED = 20_000  # ... and past this many when the compiled code is already cached


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
    core: str = "auto",
) -> Report:
    """Check the properties of one model instance with one engine (or `auto`); `core` says how
    the explicit engine runs: `python`, `compiled` (numba) or `auto` (see run_explicit)."""
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r} (engines: {', '.join(ENGINES)})")
    if core not in CORES:
        raise UsageError(f"unknown explicit core {core!r} (cores: {', '.join(CORES)})")
    _check_limits(max_states, timeout, depth)
    model = load(spec, consts)
    wanted = explicit.select_properties(model, properties)
    started = time.monotonic()
    with budget.cooperative():  # a stop (signal, memory) ends the engine with a partial report
        if engine == "explicit":
            report = run_explicit(model, wanted, Limits(max_states, timeout, progress), core=core)
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


def run_explicit(model: ir.Model, wanted: set[str], limits: Limits, cm: CompiledModel | None = None,
                 core: str = "auto") -> Report:
    """The explicit engine. `core` python: the reference search of checker/explicit.py;
    compiled: checker/fast_explicit.py (numba; same states, order and verdicts); auto: the
    Python search first, and the compiled one when the model turns out larger than
    AUTO_PYTHON_STATES (AUTO_PYTHON_STATES_CACHED if its compiled code is cached already), so
    small models start at once (without even importing numba) and large ones pay the compile
    time once."""
    cm = cm or compile_model(model)
    started = time.monotonic()
    res, graph = None, None
    if core == "python":
        res = explicit.search(cm, wanted, limits)
    elif core == "auto":
        res = _auto_python_search(cm, wanted, limits)
    if res is None:
        from checker import fast_explicit

        why = compiled_unsupported(cm, wanted)
        if why is not None:
            raise UsageError(f"{model.file}: the compiled explicit core cannot run this model: {why}")
        left = None if limits.timeout is None else max(0.0, limits.timeout - (time.monotonic() - started))
        try:
            res, graph = fast_explicit.search(cm, wanted, Limits(limits.max_states, left, limits.progress))
        except budget.Stop as stop:  # stopped while the compiled code was being built: nothing explored
            res, graph = explicit.Search({}, complete=False, pruned=False, depth=0, stop_reason=stop.text,
                                         fired=[0] * len(cm.instances)), None
    if graph is not None:
        states = graph.n if res.complete else None
        live = fast_explicit.liveness_results(cm, res, graph, wanted)
    else:
        states = len(res.parent) if res.complete else None
        live = liveness_results(cm, res, wanted)
    results = explicit.safety_results(cm, res, wanted) + live + _latencies(cm, res, graph, wanted)
    order = {n: i for i, n in enumerate(model.property_names() + ["deadlock", "range"])}
    results.sort(key=lambda r: order.get(r.property, len(order)))
    coverage: dict[str, int] = {}
    for inst, n in zip(cm.instances, res.fired):
        coverage[inst.action.name] = coverage.get(inst.action.name, 0) + n
    warnings = [f"action '{a}' never fired" for a, n in coverage.items() if n == 0 and res.complete]
    return Report(model.name, model.file, model.const_values, results, states=states, coverage=coverage,
                  warnings=warnings)


def _latencies(cm: CompiledModel, res: explicit.Search, packed: object, wanted: set[str]) -> list[Result]:
    """The latency properties asked for (checker/latency.py), on the explored graph: the Python
    search's, or the compiled one's decoded (`packed`, a fast_explicit.PackedGraph)."""
    props = [p for p in cm.model.latencies if p.name in wanted]
    if not props:
        return []
    from checker.latency import latency_results

    graph = None
    if packed is not None and res.complete:
        from checker import fast_explicit

        try:
            graph = fast_explicit.latency_graph(cm, res, packed)  # type: ignore[arg-type]
        except budget.Stop as stop:
            return [Result(p.name, "latency", Verdict.UNKNOWN, ENGINE, reason=stop.text) for p in props]
    return latency_results(cm, res, graph, props)


def compiled_unsupported(cm: CompiledModel, wanted: set[str]) -> str | None:
    """Why the compiled core cannot check `wanted` on this model, or None. Besides
    `jit.unsupported`: a predicate that can fail to evaluate. Only the Python search implements
    NOTE(predicate-errors) in full (liveness predicates, every predicate when `range` is
    checked, the BFS layer finished for a shorter action error); no bundled model has one."""
    why = jit.unsupported(cm)
    states, steps = cm.fallible(wanted)
    if why is None and (states or steps):
        why = "a property, constraint or terminal predicate can fail to evaluate (a dynamic index or a division)"
    return why


def _auto_python_search(cm: CompiledModel, wanted: set[str], limits: Limits) -> explicit.Search | None:
    """Core auto: the Python search, or None when the compiled one should run instead (the
    model has more states than the switch point and the compiled core can run it). The
    Python search runs to AUTO_PYTHON_STATES_CACHED states first; past that, if the compiled
    code is not cached, on to AUTO_PYTHON_STATES (starting over: a fraction of a second)."""
    points = [AUTO_PYTHON_STATES_CACHED, AUTO_PYTHON_STATES]
    for k, switch in enumerate(points):
        if limits.max_states is not None and limits.max_states <= switch:
            break
        res = explicit.search(cm, wanted, Limits(switch, limits.timeout, limits.progress))
        if res.complete or res.fault is not None or len(res.parent) <= switch:
            return res  # finished, stopped at a modelling error, or timed out
        if compiled_unsupported(cm, wanted) is not None:
            break
        if k == len(points) - 1 or jit.is_cached(cm):
            return None
    return explicit.search(cm, wanted, limits)


def liveness_results(cm: CompiledModel, res: explicit.Search, wanted: set[str]) -> list[Result]:
    props = [p for p in cm.model.liveness if p.name in wanted]
    if not props or not res.complete:
        return liveness.verdicts(cm.model, res, props, lambda p: None)
    outside = set()
    if res.pruned:
        outside = {s for s in res.parent if not cm.in_constraints(s)}
    try:
        return _liveness_checks(cm, res, props, outside)
    except budget.Stop as stop:  # a signal or --max-memory: the safety results of the search stand
        return [Result(p.name, "liveness", Verdict.UNKNOWN, ENGINE, reason=stop.text) for p in props]


def _liveness_checks(cm: CompiledModel, res: explicit.Search, props: list[ir.Liveness], outside: set) -> list[Result]:  # type: ignore[type-arg]
    graph = liveness.build_graph(cm, res.parent, outside.__contains__)

    def find(p: ir.Liveness) -> Counterexample | None:
        lasso = liveness.check(cm, graph, p)
        if lasso is None:
            return None
        states = [graph.states[i] for i in lasso.states]
        return Counterexample(explicit.make_steps(cm, states, lasso.iids), loop=lasso.loop)

    return liveness.verdicts(cm.model, res, props, find)

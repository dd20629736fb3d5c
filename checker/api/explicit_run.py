"""The explicit engine as the API runs it: the python or compiled core (chosen by size), symmetry
reduction, then the liveness pass on the explored graph (`run_explicit`); latencies are elapsed
time, decided by the zone engine (checker/api/untimed_latency.py).

Below model_api and smt_dispatch (`--engine auto` starts with it), so that neither imports the other."""

from __future__ import annotations

import time
from dataclasses import replace

from gpcheck.spec import ir
from gpcheck.spec.errors import UsageError
from gpcheck.gpmodel import CompiledModel, compile_model, jit
from gpcheck.checker.api import assumptions, untimed_latency
from gpcheck.checker.core import budget
from gpcheck.checker.engines.explicit import explicit, liveness
from gpcheck.checker.core import progress as meter
from gpcheck.checker.engines.explicit.explicit import ENGINE, Limits
from gpcheck.gpmodel.symmetry import Symmetry
from gpcheck.checker.core.verdict import Counterexample, Report, Result, Verdict


# --symmetry auto with --core auto: a reduction by fewer permutations than this gives way to the
# compiled core (unreduced) once the model outgrows the Python core's switch points, as the
# compiled core is then faster (tests/bench/bench_symmetry.py: cwsr Q=2, 4 permutations, 3.9x
# fewer states: reduced Python 49 s, compiled 9 s; nvidia_streams S=4, 24 permutations, 21x
# fewer states: reduced Python 14 s, compiled 39 s)
AUTO_SYMMETRY_GROUP = 24
AUTO_PYTHON_STATES = 200_000  # core auto: the Python search first; past this many states, the compiled one
AUTO_PYTHON_STATES_CACHED = 20_000  # ... and past this many when the compiled code is already cached


def _check_compiled_options(core: str, workers: int | str, fingerprint: bool) -> None:
    """`workers` and `fingerprint` apply to the compiled core only, and not together;
    `workers="auto"` (fast_explicit.auto_workers) goes with anything."""
    if workers == "auto":
        workers = 1
    elif isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise UsageError(f"workers={workers!r}: expected an integer >= 1 or 'auto'")
    if core == "python" and (workers > 1 or fingerprint):
        raise UsageError("--workers and --fingerprint apply to the compiled core; the python core is the "
                         "single-threaded reference with exact states")
    if workers > 1 and fingerprint:
        raise UsageError("--fingerprint runs on one worker (leave --workers out)")


def run_explicit(model: ir.Model, wanted: set[str], limits: Limits, cm: CompiledModel | None = None,
                 core: str = "auto", workers: int | str = "auto", fingerprint: bool = False,
                 symmetry: str = "off") -> Report:
    """The explicit engine. `core` python: the reference search of checker/engines/explicit/explicit.py;
    compiled: checker/engines/explicit/fast_explicit.py (numba; same states, order and verdicts); auto: the
    Python search first, and the compiled one when the model turns out larger than
    AUTO_PYTHON_STATES (AUTO_PYTHON_STATES_CACHED if its compiled code is cached already), so
    small models start at once (without even importing numba) and large ones pay the compile
    time once. The compiled core runs on `workers` threads (NOTE(parallel-bfs) in
    gpmodel/jit_parallel.py: the same results; "auto": as many as fast_explicit.auto_workers
    finds idle cores for, on large frontiers only) and with `fingerprint` keeps 64-bit
    fingerprints instead of exact states (NOTE(fingerprint-bfs)): then a property that holds
    in every state found is `holds_to_bound`, not `proved` (a collision may have hidden
    states), and the report carries TLC's estimates of that probability.

    `symmetry` (NOTE(symmetry)): `on` searches the quotient by the model's symmetric types
    (gpmodel/symmetry.py) on the Python core (the compiled core does not canonicalise; a
    warning says so when it was asked for), and answers liveness `unknown`; `auto` does so
    when the model has a symmetric type of two or more values, no liveness property is
    checked and the compiled core was not asked for, except that with core `auto` and fewer
    than AUTO_SYMMETRY_GROUP permutations a model that outgrows the Python core's switch
    points goes to the compiled core unreduced; `off` (the default here) never."""
    _check_compiled_options(core, workers, fingerprint)
    meter.note(engine=ENGINE, phase="search")
    cm = cm or compile_model(model)
    collision: dict[str, float] | None = None
    started = time.monotonic()
    res, graph = None, None
    asked_workers = workers != "auto" and int(workers) > 1
    sym, live_refused, notes = _symmetry_choice(model, wanted, core, symmetry, asked_workers or fingerprint)
    if sym is not None and symmetry == "auto" and core == "auto" and sym.group_size < AUTO_SYMMETRY_GROUP:
        res = _auto_python_search(cm, wanted, limits, sym)
        if res is None:
            notes.append(f"symmetry reduction not used: by {sym.group_size} permutations only, the compiled "
                         f"core's unreduced search is faster on a model this large (--symmetry on forces it)")
    elif sym is not None:
        res = explicit.search(cm, wanted, limits, symmetry=sym)
    elif core == "python":
        res = explicit.search(cm, wanted, limits)
    elif core == "auto":
        res = _auto_python_search(cm, wanted, limits)
    if res is None:
        from gpcheck.checker.engines.explicit import fast_explicit

        why = compiled_unsupported(cm, wanted)
        if why is not None:
            raise UsageError(f"{model.file}: the compiled explicit core cannot run this model: {why}")
        left = None if limits.timeout is None else max(0.0, limits.timeout - (time.monotonic() - started))
        try:
            res, graph = fast_explicit.search(cm, wanted, Limits(limits.max_states, left, limits.progress),
                                              workers=workers, fingerprint=fingerprint)
            if fingerprint:
                generated = len(cm.initial_states()) + sum(res.fired)
                collision = fast_explicit.collision_probability(graph, generated)
        except budget.Stop as stop:  # stopped while the compiled code was being built: nothing explored
            res, graph = explicit.Search({}, complete=False, pruned=False, depth=0, stop_reason=stop.text,
                                         fired=[0] * len(cm.instances)), None
    if any(p.name in wanted for p in model.liveness):
        meter.note(engine=ENGINE, phase="liveness (fair cycles over the state graph)")
    if graph is not None:
        states = graph.n if res.complete else None
        live = fast_explicit.liveness_results(cm, res, graph, wanted)
    elif live_refused:
        states = len(res.parent) if res.complete else None
        live = [Result(p.name, "liveness", Verdict.UNKNOWN, ENGINE, reason=live_refused)
                for p in model.liveness if p.name in wanted]
    else:
        states = len(res.parent) if res.complete else None
        live = liveness_results(cm, res, wanted)
    if any(p.name in wanted for p in model.latencies):  # NOTE(latency): elapsed time, on the zone graph
        meter.note(engine=ENGINE, phase="latency (zone graph)")
    lat = untimed_latency.latency_results(cm, wanted, limits, started)
    results = explicit.safety_results(cm, res, wanted) + live + lat
    if res.symmetry is not None and not isinstance(res.symmetry, Symmetry):  # NOTE(instance-symmetry)
        from gpcheck.checker.engines.explicit.unpermute import instance_images

        results = instance_images(cm, res.symmetry, results)  # type: ignore[arg-type]
    if collision is not None:
        results = [_not_proved(r, collision, res.depth) for r in results]
    order = {n: i for i, n in enumerate(model.property_names() + ["deadlock", "range"])}
    results.sort(key=lambda r: order.get(r.property, len(order)))
    coverage: dict[str, int] = {}
    for inst, n in zip(cm.instances, res.fired):
        coverage[inst.action.name] = coverage.get(inst.action.name, 0) + n
    warnings = [f"action '{a}' never fired" for a, n in coverage.items() if n == 0 and res.complete]
    report = Report(model.name, model.file, model.const_values, results, states=states, coverage=coverage,
                    warnings=notes + warnings + untimed_latency.warning(model, wanted))
    if res.complete and res.symmetry is None and collision is None and not res.pruned:
        # NOTE(assumption-use): what a run without an assumption compares its graph with
        report.explored = assumptions.Explored(cm, res, graph)  # type: ignore[attr-defined]
    if collision is not None:
        report.fingerprint = {"bits": 64, "collision_probability": collision}
    if res.symmetry is not None:
        types = res.symmetry.describe() if not isinstance(res.symmetry, Symmetry) else \
            {t.symmetric: t.size() for t in res.symmetry.types}  # NOTE(instance-symmetry): the instance groups
        report.symmetry = {"reduced": True, "types": types, "group": res.symmetry.group_size}
        if not res.symmetry.exact:  # gpmodel/symmetry.py MAX_CANDIDATES: some orbit may count twice
            report.symmetry["one_per_orbit"] = False
    return report


def _not_proved(r: Result, collision: dict[str, float], depth: int) -> Result:
    """A fingerprint search proves nothing: what held in every state it found holds to its
    depth, with the chance that a collision hid a state (TLC's estimates)."""
    if r.verdict not in (Verdict.PROVED, Verdict.HOLDS_TO_BOUND):
        return r
    why = f"64-bit fingerprints: a collision may have hidden a state (probability {collision['calculated']:.1e}, TLC's estimate)"
    if r.verdict is Verdict.PROVED:
        return replace(r, verdict=Verdict.HOLDS_TO_BOUND, bound=depth, reason=why)
    return replace(r, reason=f"{r.reason}; {why}" if r.reason else why)


def _symmetry_choice(model: ir.Model, wanted: set[str], core: str, setting: str,
                     compiled_options: bool = False) -> tuple[Symmetry | None, str | None, list[str]]:
    """The symmetry reduction to search under (or None), the reason liveness is not checked
    (or None), and warnings for the report. `compiled_options`: --workers or --fingerprint
    were asked for, which only the compiled core has; `auto` then gives way to them as it does
    to `--core compiled`."""
    if setting == "on" and not model.symmetric:  # NOTE(instance-symmetry): identical named instances
        from gpcheck.gpmodel.instance_symmetry import find

        isym, why_not = find(model)
        notes = [f"no symmetry reduction over {w}" for w in why_not]
        if isym is None:
            return None, None, notes
        sym = isym  # type: ignore[assignment]
    elif setting == "off" or not model.symmetric:
        return None, None, []
    else:
        sym = Symmetry(model)
    if not sym.active:
        return None, None, []
    live = [p.name for p in model.liveness if p.name in wanted]  # latencies: the zone engine's own search
    if setting == "auto" and (live or core == "compiled" or compiled_options):
        return None, None, []
    notes = [] if isinstance(sym, Symmetry) else notes
    if core == "compiled" or compiled_options:
        notes.append("symmetry reduction runs on the Python core: the compiled core does not canonicalise states")
    why = None
    if live:
        why = ("not checked under symmetry reduction: a fair cycle of the quotient graph need not be a fair "
               "cycle of the model (weak fairness is per action instance, and instances are renamed along "
               "it); run with --symmetry off (or auto)")
    return sym, why, notes


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


def _auto_python_search(cm: CompiledModel, wanted: set[str], limits: Limits,
                        symmetry: Symmetry | None = None) -> explicit.Search | None:
    """Core auto: the Python search, or None when the compiled one should run instead (the
    model has more states than the switch point and the compiled core can run it). The
    Python search runs to AUTO_PYTHON_STATES_CACHED states first; past that, if the compiled
    code is not cached, on to AUTO_PYTHON_STATES (starting over: a fraction of a second)."""
    points = [AUTO_PYTHON_STATES_CACHED, AUTO_PYTHON_STATES]
    for k, switch in enumerate(points):
        if limits.max_states is not None and limits.max_states <= switch:
            break
        res = explicit.search(cm, wanted, Limits(switch, limits.timeout, limits.progress), symmetry=symmetry)
        if res.complete or res.fault is not None or len(res.parent) <= switch:
            return res  # finished, stopped at a modelling error, or timed out
        if compiled_unsupported(cm, wanted) is not None:
            break
        if k == len(points) - 1 or jit.is_cached(cm):
            return None
    return explicit.search(cm, wanted, limits, symmetry=symmetry)


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

"""The Python API: load a spec, run an engine, get a `Report` of verdict objects.

    from gpcheck.checker import verify
    report = verify("ring.gpspec", consts={"N": 8})
    assert report.result("no_reexecution").verdict is Verdict.PROVED
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from pathlib import Path
from typing import Iterable, Mapping

from gpcheck.spec import ir, load_spec
from gpcheck.spec.errors import UsageError
from gpcheck.gpmodel import CompiledModel, compile_model, jit
from gpcheck.checker.api import assumptions
from gpcheck.checker.core import budget
from gpcheck.checker.engines.explicit import explicit, liveness
from gpcheck.checker.core import progress as meter
from gpcheck.checker.engines.explicit.explicit import ENGINE, Limits, ProgressFn
from gpcheck.gpmodel.symmetry import Symmetry
from gpcheck.checker.core.verdict import Counterexample, Report, Result, Verdict

ENGINES = ("explicit", "bmc", "kind", "pdr", "auto")
CORES = ("auto", "python", "compiled")  # how the explicit engine runs (see run_explicit)
SYMMETRY = ("auto", "on", "off")  # symmetry reduction of the explicit engine (see run_explicit)
# --symmetry auto with --core auto: a reduction by fewer permutations than this gives way to the
# compiled core (unreduced) once the model outgrows the Python core's switch points, as the
# compiled core is then faster (tests/bench/bench_symmetry.py: cwsr Q=2, 4 permutations, 3.9x
# fewer states: reduced Python 49 s, compiled 9 s; nvidia_streams S=4, 24 permutations, 21x
# fewer states: reduced Python 14 s, compiled 39 s)
AUTO_SYMMETRY_GROUP = 24
AUTO_PYTHON_STATES = 200_000  # core auto: the Python search first; past this many states, the compiled one
AUTO_PYTHON_STATES_CACHED = 20_000  # ... and past this many when the compiled code is already cached
RERUN_STATES_FACTOR = 50  # NOTE(assumption-use): the explicit runs without one assumption, at most this
RERUN_STATES_MIN = 500_000  # many times the states of the run with every assumption, and at least these


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
    workers: int | str = "auto",
    fingerprint: bool = False,
    symmetry: str = "auto",
    assumption_use: bool = True,
) -> Report:
    """Check the properties of one model instance with one engine (or `auto`); `core` says how
    the explicit engine runs: `python`, `compiled` (numba) or `auto` (see run_explicit);
    `workers` and `fingerprint` how the compiled core runs, and `symmetry` whether it reduces
    by the model's symmetric types: `on`, `off`, or `auto` (on when the model has one and no
    liveness property is checked; see run_explicit). `assumption_use`: say which model
    assumptions each proof used (NOTE(assumption-use): one more run per declared assumption); an
    internal caller that only looks for violations (--for-all's small instances) leaves it out."""
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r} (engines: {', '.join(ENGINES)})")
    if core not in CORES:
        raise UsageError(f"unknown explicit core {core!r} (cores: {', '.join(CORES)})")
    if symmetry not in SYMMETRY:
        raise UsageError(f"unknown symmetry setting {symmetry!r} (one of: {', '.join(SYMMETRY)})")
    _check_limits(max_states, timeout, depth)
    _check_compiled_options(core, workers, fingerprint)
    model = load(spec, consts)
    wanted = explicit.select_properties(model, properties)
    started = time.monotonic()

    def run_once(m: ir.Model, names: set[str], meter: ProgressFn | None, rerun: bool = False) -> Report:
        # a run without an assumption (NOTE(assumption-use)) gets what is left of the time limit,
        # and the explicit engine at most RERUN_STATES_FACTOR times the states of the run with it
        # (at least RERUN_STATES_MIN): a relaxed model can be much larger (kfd_monitor without
        # copy_save: 620 -> 3.5 million states); past that, what it did not decide is undecided
        limit = timeout if timeout is None or not rerun else max(0.001, timeout - (time.monotonic() - started))
        cap = max_states
        if rerun and cap is None and report is not None and report.states is not None:
            cap = max(RERUN_STATES_FACTOR * report.states, RERUN_STATES_MIN)
        if m.has_time:  # NOTE(timed): only the zone engine knows time
            return run_timed_spec(m, names, engine, Limits(cap, limit, meter))
        if engine == "explicit":
            return run_explicit(m, names, Limits(cap, limit, meter), core=core, workers=workers,
                                fingerprint=fingerprint, symmetry=symmetry)
        from gpcheck.checker.api.smt_dispatch import run_engine  # the Z3 engines load z3 only when asked for

        results = run_engine(engine, m, sorted(names), depth=depth, timeout=limit,
                             max_states=max_states, progress=meter)
        rep = Report(m.name, m.file, m.const_values, results)
        states = [r.detail.get("states") for r in results if r.engine == ENGINE and r.detail.get("states")]
        rep.states = states[0] if states else None
        return rep

    # covers and vacuity probes run as invariants; each proof's assumptions (checker/api/assumptions.py)
    pl = assumptions.plan(model, wanted)
    report: Report | None = None
    with budget.cooperative():  # a stop (signal, memory) ends the engine with a partial report
        report = run_once(pl.model, pl.wanted, progress)
        use = assumptions.used(pl.model, report.results, lambda m, names: run_once(m, names, None, True).results) \
            if assumption_use else None
    report.results = assumptions.finish(model, pl, stopped_reasons(report.results), use)
    report.assumptions = [a.name for a in model.assumptions]
    if properties is not None:  # a liveness property the user named counts, checked or not
        named = set(properties)
        report.results = [replace(r, detail={k: v for k, v in r.detail.items() if k != "not_checked"})
                          if r.property in named and r.detail.get("not_checked") else r for r in report.results]
    report.seconds = time.monotonic() - started
    return report


TIMED_ENGINES = ("explicit", "auto")  # the engines that run the zone engine on a timed spec


def run_timed_spec(model: ir.Model, wanted: set[str], engine: str, limits: Limits) -> Report:
    """NOTE(timed): a timed spec goes to the zone engine (checker/engines/timed/) under `explicit` and
    `auto`; any other engine does not know time and answers every property `unknown`, saying
    why, rather than checking the untimed model."""
    if engine in TIMED_ENGINES:
        from gpcheck.checker.engines.timed.engine import run_timed

        return run_timed(model, wanted, limits)
    why = (f"{engine} does not handle time: this spec is timed (`time`/`urgent`), and only the zone engine "
           f"(--engine explicit or auto) decides it; checking it untimed would ignore its deadlines")
    kinds = {p.name: k for k, ps in (("invariant", model.invariants), ("transition", model.transitions),
                                     ("liveness", model.liveness), ("latency", model.latencies)) for p in ps}
    results = [Result(n, kinds.get(n, n), Verdict.UNKNOWN, engine, reason=why) for n in sorted(wanted)]
    order = {n: i for i, n in enumerate(model.property_names() + ["deadlock", "range"])}
    results.sort(key=lambda r: order.get(r.property, len(order)))
    return Report(model.name, model.file, model.const_values, results)


def _check_limits(max_states: int | None, timeout: float | None, depth: int | None) -> None:
    """The same ranges as the command line's flags (checker/cli/commands/flags.py)."""
    if max_states is not None and (isinstance(max_states, bool) or not isinstance(max_states, int) or max_states < 1):
        raise UsageError(f"max_states={max_states!r}: expected an integer >= 1")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 0):
        raise UsageError(f"depth={depth!r}: expected a non-negative integer")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not math.isfinite(timeout) or timeout <= 0):
        raise UsageError(f"timeout={timeout!r}: expected a positive, finite number of seconds")


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


def stopped_reasons(results: list[Result]) -> list[Result]:
    """After the command's budget stopped (checker/core/budget.py), an engine cut short reports it
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
    if live_refused:  # NOTE(symmetry): latencies read the full graph's fairness and successors too
        lat = [Result(p.name, "latency", Verdict.UNKNOWN, ENGINE, reason=live_refused)
               for p in model.latencies if p.name in wanted]
    else:
        if any(p.name in wanted for p in model.latencies):
            meter.note(engine=ENGINE, phase="latency (shortest and longest paths)")
        lat = _latencies(cm, res, graph, wanted)
    results = explicit.safety_results(cm, res, wanted) + live + lat
    if collision is not None:
        results = [_not_proved(r, collision, res.depth) for r in results]
    order = {n: i for i, n in enumerate(model.property_names() + ["deadlock", "range"])}
    results.sort(key=lambda r: order.get(r.property, len(order)))
    coverage: dict[str, int] = {}
    for inst, n in zip(cm.instances, res.fired):
        coverage[inst.action.name] = coverage.get(inst.action.name, 0) + n
    warnings = [f"action '{a}' never fired" for a, n in coverage.items() if n == 0 and res.complete]
    report = Report(model.name, model.file, model.const_values, results, states=states, coverage=coverage,
                    warnings=notes + warnings)
    if collision is not None:
        report.fingerprint = {"bits": 64, "collision_probability": collision}
    if res.symmetry is not None:
        report.symmetry = {"reduced": True, "types": {t.symmetric: t.size() for t in res.symmetry.types},
                           "group": res.symmetry.group_size}
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
    if setting == "off" or not model.symmetric:
        return None, None, []
    sym = Symmetry(model)
    if not sym.active:
        return None, None, []
    # latency properties (NOTE(latency)) ask what liveness asks (fair cycles, the full graph)
    live = [p.name for p in model.liveness if p.name in wanted] + [p.name for p in model.latencies if p.name in wanted]
    if setting == "auto" and (live or core == "compiled" or compiled_options):
        return None, None, []
    notes = []
    if core == "compiled" or compiled_options:
        notes.append("symmetry reduction runs on the Python core: the compiled core does not canonicalise states")
    why = None
    if live:
        why = ("not checked under symmetry reduction: a fair cycle of the quotient graph need not be a fair "
               "cycle of the model (weak fairness is per action instance, and instances are renamed along "
               "it); run with --symmetry off (or auto)")
    return sym, why, notes


def _latencies(cm: CompiledModel, res: explicit.Search, packed: object, wanted: set[str]) -> list[Result]:
    """The latency properties asked for, on the explored graph: the Python search's
    (checker/engines/latency/latency.py), or the compiled one's compact graph (`packed`, a
    fast_explicit.PackedGraph; checker/engines/latency/fast_latency.py, the same results)."""
    props = [p for p in cm.model.latencies if p.name in wanted]
    if not props:
        return []
    from gpcheck.checker.engines.latency.latency import latency_results

    if packed is not None and res.complete:  # the compiled core: on its compact graph (checker/engines/latency/fast_latency.py)
        from gpcheck.checker.engines.explicit import fast_explicit
        from gpcheck.checker.engines.latency import fast_latency

        try:
            return fast_latency.latency_results(cm, res, packed, props)  # type: ignore[arg-type]
        except fast_explicit.MissedState as missed:
            return [Result(p.name, "latency", Verdict.UNKNOWN, ENGINE, reason=str(missed)) for p in props]
    return latency_results(cm, res, None, props)


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

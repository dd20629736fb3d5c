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
from gpcheck.checker.api import assumptions
from gpcheck.checker.core import budget
from gpcheck.checker.engines.explicit import explicit
from gpcheck.checker.engines.explicit.explicit import ENGINE, Limits, ProgressFn
from gpcheck.checker.core.verdict import Report, Result, Verdict
from gpcheck.gpmodel import compile_model
from gpcheck.checker.api.explicit_run import (
    _check_compiled_options,
    _symmetry_choice,
    compiled_unsupported,
    run_explicit,
)

ENGINES = ("explicit", "bmc", "kind", "pdr", "auto")
CORES = ("auto", "python", "compiled")  # how the explicit engine runs (see run_explicit)
INDUCTION_ENGINES = ("kind", "pdr")  # NOTE(refinement-induction): these check `refines` by induction
SYMMETRY = ("auto", "on", "off")  # symmetry reduction of the explicit engine (see run_explicit)
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
    device: str = "cpu",
) -> Report:
    """Check the properties of one model instance with one engine (or `auto`); `core` says how
    the explicit engine runs: `python`, `compiled` (numba) or `auto` (see run_explicit);
    `workers` and `fingerprint` how the compiled core runs, and `symmetry` whether it reduces
    by the model's symmetric types: `on`, `off`, or `auto` (on when the model has one and no
    liveness property is checked; see run_explicit). `assumption_use`: say which model
    assumptions each proof used (NOTE(assumption-use): one more run per declared assumption); an
    internal caller that only looks for violations (--for-all's small instances) leaves it out.
    `device`: `cpu`, or `cuda` for the explicit engine's safety search on a GPU
    (checker/api/device_run.py)."""
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r} (engines: {', '.join(ENGINES)})")
    if core not in CORES:
        raise UsageError(f"unknown explicit core {core!r} (cores: {', '.join(CORES)})")
    if symmetry not in SYMMETRY:
        raise UsageError(f"unknown symmetry setting {symmetry!r} (one of: {', '.join(SYMMETRY)})")
    _check_limits(max_states, timeout, depth)
    _check_compiled_options(core, workers, fingerprint)
    model = load(spec, consts)
    if device != "cpu":
        from gpcheck.checker.api.device_run import check_device_options

        check_device_options(model, device, engine, core, workers, fingerprint, symmetry)
    # NOTE(refinement): `refines` is checked apart from the engines' properties (checker/engines/explicit/refinement.py)
    refines = model.refinement is not None and (properties is None or "refines" in set(properties))
    if model.refinement is not None and properties is not None:
        properties = [p for p in properties if p != "refines"]
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
        if m.has_time and rerun and engine in TIMED_ENGINES:  # NOTE(timed-assumption-use)
            from gpcheck.checker.api.timed_assumptions import rerun_without, zone_cap

            zcap = zone_cap(report) if max_states is None else min(max_states, zone_cap(report))
            return rerun_without(m, names, Limits(cap, limit, meter), core=core, zone_cap=zcap)
        if m.has_time:  # NOTE(timed): the zone engine, or an untimed engine on the untimed abstraction
            return run_timed_spec(m, names, engine, Limits(cap, limit, meter), depth=depth, core=core, device=device,
                                  symmetry=symmetry)
        if engine == "explicit":
            cm = None
            if rerun and report is not None and not fingerprint:
                cm = compile_model(m)
                dropped = next(a.name for a in pl.model.assumptions if a.name not in {b.name for b in m.assumptions})
                if assumptions.same_graph(getattr(report, "explored", None), cm, dropped):  # NOTE(assumption-use)
                    return _same_results(report, names)
            if device != "cpu":
                from gpcheck.checker.api.device_run import run_device

                return run_device(m, names, Limits(cap, limit, meter), cm=cm, device=device)
            rep = run_explicit(m, names, Limits(cap, limit, meter), cm=cm, core=core, workers=workers,
                               fingerprint=fingerprint, symmetry=symmetry)
            return rep
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
    if refines and engine in INDUCTION_ENGINES:  # NOTE(refinement-induction)
        from gpcheck.checker.engines.smt import refine

        report.results.append(refine.run(model, depth=depth, timeout=timeout))
    elif refines:
        from gpcheck.checker.engines.explicit import refinement

        report.results.append(refinement.run(model, explicit.Limits(max_states, timeout)))
    report.seconds = time.monotonic() - started
    return report


def _same_results(report: Report, names: set[str]) -> Report:
    """NOTE(assumption-use): the run without an assumption whose state graph is the run's with it:
    the same results (the search, liveness and latencies read nothing else)."""
    rep = Report(report.model, report.file, report.constants, [r for r in report.results if r.property in names],
                 states=report.states)
    return rep


TIMED_ENGINES = ("explicit", "auto")  # the engines that run the zone engine on a timed spec


def run_timed_spec(model: ir.Model, wanted: set[str], engine: str, limits: Limits, depth: int | None = None,
                   core: str = "auto", device: str = "cpu", symmetry: str = "auto") -> Report:
    """NOTE(timed): a timed spec goes to the zone engine (checker/engines/timed/) under `explicit` and
    `auto`, after the explicit search of its untimed abstraction proved what it can
    (checker/api/timed_explicit.py; `core` and `symmetry` are that search's, `device` where it runs); bmc, kind and pdr check its untimed abstraction (checker/api/timed_abstraction.py): what
    they prove there holds for every timing, a violation is confirmed with a timing or `unknown`,
    liveness and latencies are `unknown`, saying why. Any other engine answers `unknown`."""
    if engine in TIMED_ENGINES:
        from gpcheck.checker.api.timed_explicit import run_timed_explicit

        return run_timed_explicit(model, wanted, limits, core=core, device=device, symmetry=symmetry)
    if engine in ("bmc", "kind", "pdr"):
        from gpcheck.checker.api import timed_abstraction
        from gpcheck.checker.api.smt_dispatch import run_engine

        results = run_engine(engine, timed_abstraction.untimed(model), sorted(wanted), depth=depth,
                             timeout=limits.timeout, max_states=limits.max_states, progress=limits.progress)
        return Report(model.name, model.file, model.const_values, timed_abstraction.lift(model, results, engine))
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



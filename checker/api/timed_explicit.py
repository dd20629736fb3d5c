"""The explicit engine on a timed spec (NOTE(timed) in spec/ir.py, docs/timed.md "The explicit
engine on a timed spec"): the safety properties and deadlock first on the untimed abstraction
(checker/api/timed_abstraction.py) with the explicit engine's fast search, then the zone engine
(checker/engines/timed/) only for what is left.

A safety property, deadlock-freedom or (when no time bound can fail) `range` that the
abstraction's complete search proves holds for every timing: `proved`, without the zone graph.
Everything else (a violation to confirm or refute, a property the abstraction only bounds,
liveness, latencies) goes to the zone engine, whose verdicts stand. Each result says which path
decided it (`detail["decided_by"]`).

With `device` "cuda" (`--device cuda`; "host": the same generated code on the CPU, for tests)
the abstraction's search runs on the GPU (checker/api/device_run.py) instead of the compiled
core, unreduced by symmetry; everything after it is the same code, on the host (docs/device.md
"Timed specs"). A model the device cannot run stops with a UsageError (exit 2), never a silent
fall-back to the CPU."""

from __future__ import annotations

import time
from dataclasses import replace

from gpcheck.spec import ir
from gpcheck.spec.errors import UsageError
from gpcheck.gpmodel import CompiledModel, compile_model
from gpcheck.checker.api import timed_abstraction
from gpcheck.checker.api.explicit_run import run_explicit
from gpcheck.checker.core import budget
from gpcheck.checker.core.verdict import Report, Result, Verdict
from gpcheck.checker.engines.explicit.explicit import Limits

BY_ABSTRACTION = "untimed abstraction (explicit search): proved for every timing"
BY_ZONES = "zone graph"
BY_PATH = "untimed abstraction (explicit search): a path with a timing (checker/engines/timed/path.py)"


def run_timed_explicit(model: ir.Model, wanted: set[str], limits: Limits, core: str = "auto",
                       device: str = "cpu", symmetry: str = "auto") -> Report:
    """Every wanted property of the timed spec `model` (module docstring); `core` and `symmetry`
    are the abstraction's CPU search's, `device` where that search runs ("cpu", "cuda", "host")."""
    from gpcheck.checker.engines.timed.engine import run_timed

    started = time.monotonic()
    cm = compile_model(model)
    first = _safety_names(cm, wanted)
    proved: list[Result] = []
    untimed_states: int | None = None
    never: list[str] = []
    if first:
        try:
            rep = _search_abstraction(model, first, limits, cm, core, device, symmetry)
        except UsageError:  # the compiled core cannot run it: the zones decide; the device says why (exit 2)
            if device != "cpu":
                raise
            rep = None
        except budget.Stop:  # the budget stopped: the zones decide
            rep = None
        if rep is not None:
            untimed_states = rep.states
            proved = [replace(r, engine="timed", detail={"decided_by": BY_ABSTRACTION,
                                                                     "time": timed_abstraction.PROVED_NOTE})
                      for r in rep.results if r.verdict is Verdict.PROVED]
            if rep.states is not None:  # an action the abstraction never fires never fires in time either
                never = [w for w in rep.warnings if w.startswith("action '") and w.endswith("' never fired")]
            proved += _probes_reached(cm, rep.results)
    rest = wanted - {r.property for r in proved}
    if not rest:
        report = Report(model.name, model.file, model.const_values, [], warnings=never)
        report.timed = {"discrete_states": None, "zones": None, "clocks": None, "complete": True,
                        "untimed_states": untimed_states}
    else:
        left = limits if limits.timeout is None else \
            Limits(limits.max_states, max(0.001, limits.timeout - (time.monotonic() - started)), limits.progress)
        report = run_timed(model, rest, left, cm=cm)
        report.results = [replace(r, detail={**r.detail, "decided_by": BY_ZONES}) for r in report.results]
        if report.timed is not None:
            report.timed["untimed_states"] = untimed_states
    order = {n: i for i, n in enumerate(model.property_names() + ["deadlock", "range"])}
    report.results = sorted(proved + report.results, key=lambda r: order.get(r.property, len(order)))
    return report


def _search_abstraction(model: ir.Model, first: set[str], limits: Limits, cm: CompiledModel, core: str,
                        device: str, symmetry: str) -> Report:
    """The explicit search of the untimed abstraction for `first`, on the CPU or on `device`."""
    abstraction = timed_abstraction.untimed(model)
    if device == "cpu":
        # the compiled model is the abstraction's: its successors never read `time` (bounds.py does)
        return run_explicit(abstraction, first, limits, cm=cm, core=core, symmetry=symmetry)
    from gpcheck.checker.api.device_run import run_device  # noqa: PLC0415 - numpy and the C build only when asked for

    # the device refuses a timed compiled model (device_search.unsupported): the abstraction's own,
    # the same layout and successors, so its counterexamples' states are the timed model's
    return run_device(abstraction, first, limits, cm=compile_model(abstraction), device=device)


def _safety_names(cm: CompiledModel, wanted: set[str]) -> set[str]:
    """The wanted properties the abstraction may prove: invariants, transition properties,
    deadlock, and `range` when no time bound can fail (timed_abstraction.bounds_may_fail)."""
    model = cm.model
    names = timed_abstraction.state_safety_names(model)
    if "range" in wanted and timed_abstraction.bounds_may_fail(cm) is None:
        names.add("range")
    return names & wanted


def _probes_reached(cm: CompiledModel, results: list[Result]) -> list[Result]:
    """Vacuity probes (NOTE(vacuity)) the abstraction reached along a path that has a timing
    (path.py): reached in the timed semantics too, without the zone graph. Only a probe's verdict
    is read (its witness is dropped), so this changes no reported counterexample."""
    from gpcheck.checker.api.assumptions import PROBE

    out = []
    for r in results:
        if PROBE in r.property and r.verdict is Verdict.VIOLATED and r.counterexample is not None:
            got = timed_abstraction.confirm(cm, r)
            if got.verdict is Verdict.VIOLATED:
                out.append(replace(got, engine="timed", detail={**got.detail, "decided_by": BY_PATH}))
    return out


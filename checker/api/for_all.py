"""`--for-all` as the API runs it: covers, vacuity probes and the assumptions each proof used
(checker/api/assumptions.py) around the for-all prover of checker/engines/param/, which runs on the
untimed abstraction of a timed spec (checker/api/timed_abstraction.py: its proofs hold for every
timing, its violations are confirmed with one). The prover samples small instances with `model_api.verify`,
passed in (`check_instance`), so that the engines never import the API."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Mapping, Sequence

from gpcheck.spec import ir
from gpcheck.checker.api import timed_abstraction
from gpcheck.checker.api.model_api import verify
from gpcheck.gpmodel import CompiledModel, compile_model
from gpcheck.checker.core.verdict import Report, Result, Verdict
from gpcheck.checker.engines.param.where import locate


def verify_for_all(spec: str | Path, names: Sequence[str], lower: Mapping[str, int],
                   consts: Mapping[str, int] | None = None, properties: Sequence[str] | None = None,
                   timeout: float | None = None) -> Report:
    """The model's invariants and transition properties and `range` (or those named) for every
    value of the constants `names` (each at least its `lower` bound; the other constants as
    given)."""
    from gpcheck.spec import load_spec
    from gpcheck.checker.engines.param.forall_run import verify_for_all as run

    from gpcheck.checker.api import assumptions
    from gpcheck.checker.engines.explicit.explicit import select_properties

    fixed = {k: v for k, v in (consts or {}).items() if k not in names}
    started = time.monotonic()
    timed = load_spec(spec, dict(consts or {}))
    abstract = timed.has_time  # NOTE(timed): the prover runs on the untimed abstraction (timed_abstraction.py)
    # covers, vacuity probes and the assumptions each proof used, as api.verify does
    # (checker/api/assumptions.py): the probes and covers are invariants of every instance loaded
    first = load_spec(spec, fixed)
    wanted = select_properties(first, properties)
    wanted = {n for n in wanted if n not in {p.name for p in first.liveness} | {p.name for p in first.latencies}} \
        if properties is None else wanted
    pl = assumptions.plan(first, wanted)
    asked = sorted(pl.wanted) if (pl.probes or pl.covers or properties is not None) else None

    def once(drop: str | None, props: Sequence[str] | None) -> tuple[ir.Model, list[Result]]:
        def load(c: Mapping[str, int]) -> ir.Model:
            m = assumptions.plan(load_spec(spec, c), wanted).model
            m = timed_abstraction.untimed(m) if abstract else m
            return assumptions.without(m, drop) if drop is not None else m
        # a run without an assumption (NOTE(assumption-use)) gets at most as long as the run with
        # them all took, and what is left of the time limit: a --for-all proof is minutes, and a
        # rerun that cannot decide in that time leaves the assumption listed, marked undecided
        if drop is None:
            return run(load, names, fixed, lower, props, timeout, check_instance=verify)
        left = first_seconds if timeout is None else min(first_seconds, timeout - (time.monotonic() - started))
        return run(load, names, fixed, lower, props, max(1.0, left), check_instance=verify)

    model, results = once(None, asked)
    first_seconds = time.monotonic() - started

    def rerun(m: ir.Model, props: set[str]) -> list[Result]:
        dropped = next(a.name for a in first.assumptions if a.name not in {b.name for b in m.assumptions})
        return once(dropped, sorted(props))[1]

    results = assumptions.finish(first, pl, results, assumptions.used(pl.model, results, rerun, inert_skip=False))
    results = [replace(r, reason=locate(first, r.reason)) if r.verdict is Verdict.UNKNOWN and r.reason else r
               for r in results]
    if abstract:
        def instance(r: Result) -> CompiledModel:  # a violation's sampled instance, timed
            return compile_model(load_spec(spec, {**fixed, **r.detail.get("instance", {})}))

        results = timed_abstraction.lift(timed, results, "for-all", instance)
    report = Report(model.name, model.file, {k: v for k, v in model.const_values.items() if k not in names},
                    results)
    report.assumptions = [a.name for a in first.assumptions]
    report.seconds = time.monotonic() - started
    return report

"""`--for-all`: properties proved for every value of some constants (parameterised verification).

    extract.py  symbolic constants recovered by aligning a few instances' IRs (affine fits, or degree
                two: `NB * BLEN + 1`, NOTE(product-fit))
    encode.py   the model over SMT arrays with the sizes symbolic; ghost counters for sum/count
    mine.py     quantified candidates (`all x in 0..N-1: ...`) from small instances' states; product
                columns (`BLEN * done[x]`) where the model multiplies two constants
    widen.py    richer templates for a second round on what the first left unknown
    pointer.py  second round: counts/sums of containers holding an item by value (`slot[i] == x`)
    affine.py   second round: linear equalities of three to five counters (circuits of the rows)
    guards.py   second round: the model's guard comparisons (`launched[0] < NB`) as conditions
    threshold.py  the second round's thresholds (`live < P`) and pointer-anchored facts (`x == kc and ...`)
    counters.py the arrays over a symbolic index range as counters of rows per value (`for i in 0..S-1`
                loops that accumulate into other arrays), where the array encoding is outside the fragment
    symvalue.py a counted component whose value range grows with the constants (`prog: 0..BLEN`): an SMT
                array of rows per value and exact moments, NOTE(symbolic-values)
    refs.py     second round: nullable references (`held: 0..N`, N for none): "x is none of them" as a
                condition, and equalities with `(if held != N then 1 else 0)` terms under "it holds an item"
    triple.py   second round: facts under three enum conditions (`sched == Poll and task[x] == .. and rt == ..`)
    errors.py   the `range` result: every step's modelling error excluded for all sizes (NOTE(for-all-errors))
    prove.py    Houdini with the sizes symbolic, relative induction, violations at small sizes (and at
                the second round's larger ones)

Only `checker/engines/param/` and `checker/engines/smt/` import z3 (ARCHITECTURE.md)."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Mapping, Sequence

from gpcheck.spec import ir
from gpcheck.spec.errors import UsageError
from gpcheck.checker.core.verdict import Report, Result, Verdict
from gpcheck.checker.engines.param.where import locate


def parse_for_all(text: str, model: ir.Model) -> tuple[list[str], dict[str, int]]:
    """`N,B` or `N>=2,B`: the constants and their lower bounds (1 unless given)."""
    names: list[str] = []
    lower: dict[str, int] = {}
    known = {c.name for c in model.constants}
    for item in text.split(","):
        item = item.strip()
        name, sep, bound = item.partition(">=")
        name = name.strip()
        if name not in known:
            raise UsageError(f"--for-all {text}: the model has no constant {name!r} "
                             f"(constants: {', '.join(sorted(known)) or 'none'})")
        if name in names:
            raise UsageError(f"--for-all {text}: {name} named twice")
        try:
            lower[name] = int(bound) if sep else 1
        except ValueError:
            raise UsageError(f"--for-all {text}: {bound.strip()!r} is not an integer lower bound") from None
        names.append(name)
    return names, lower


def verify_for_all(spec: str | Path, names: Sequence[str], lower: Mapping[str, int],
                   consts: Mapping[str, int] | None = None, properties: Sequence[str] | None = None,
                   timeout: float | None = None) -> Report:
    """The model's invariants and transition properties and `range` (or those named) for every
    value of the constants `names` (each at least its `lower` bound; the other constants as
    given)."""
    from gpcheck.spec import load_spec
    from gpcheck.checker.engines.param.prove import verify_for_all as run

    from gpcheck.checker.api import assumptions
    from gpcheck.checker.engines.explicit.explicit import select_properties

    fixed = {k: v for k, v in (consts or {}).items() if k not in names}
    started = time.monotonic()
    timed = load_spec(spec, dict(consts or {}))
    if timed.has_time:  # NOTE(timed): the for-all engine has no time: it says so, never checks untimed
        from gpcheck.checker.api.model_api import run_timed_spec
        from gpcheck.checker.engines.explicit.explicit import Limits

        report = run_timed_spec(timed, select_properties(timed, properties), "for-all", Limits())
        report.constants = {k: v for k, v in timed.const_values.items() if k not in names}
        report.seconds = time.monotonic() - started
        return report
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
            return assumptions.without(m, drop) if drop is not None else m
        # a run without an assumption (NOTE(assumption-use)) gets at most as long as the run with
        # them all took, and what is left of the time limit: a --for-all proof is minutes, and a
        # rerun that cannot decide in that time leaves the assumption listed, marked undecided
        if drop is None:
            return run(load, names, fixed, lower, props, timeout)
        left = first_seconds if timeout is None else min(first_seconds, timeout - (time.monotonic() - started))
        return run(load, names, fixed, lower, props, max(1.0, left))

    model, results = once(None, asked)
    first_seconds = time.monotonic() - started

    def rerun(m: ir.Model, props: set[str]) -> list[Result]:
        dropped = next(a.name for a in first.assumptions if a.name not in {b.name for b in m.assumptions})
        return once(dropped, sorted(props))[1]

    results = assumptions.finish(first, pl, results, assumptions.used(pl.model, results, rerun))
    results = [replace(r, reason=locate(first, r.reason)) if r.verdict is Verdict.UNKNOWN and r.reason else r
               for r in results]
    report = Report(model.name, model.file, {k: v for k, v in model.const_values.items() if k not in names},
                    results)
    report.assumptions = [a.name for a in first.assumptions]
    report.seconds = time.monotonic() - started
    return report

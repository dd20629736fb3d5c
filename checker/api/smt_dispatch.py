"""Engine selection for `--engine bmc|kind|pdr|auto`: one Result per requested property.

`bmc`, `kind` and `pdr` are the Z3 engines of `checker/engines/smt/` for safety properties
(invariants, transition properties, `range`, `deadlock`); `bmc` also looks for fair lasso
counterexamples of liveness properties (checker/engines/smt/lasso.py; it never proves one), `kind`
and `pdr` answer `unknown` for them. `auto` runs the explicit search first under a state
limit; if it completes, its verdicts stand (liveness included); otherwise its counterexamples
stand, every other safety property goes to pdr, then kind, then bmc, and liveness to lasso
BMC, each Result naming the engine that decided it."""

from __future__ import annotations

import time
from typing import Sequence

from gpcheck.spec import ir
from gpcheck.spec.errors import UsageError
from gpcheck.checker.core import budget
from gpcheck.checker.core.verdict import Result, Verdict

DEFAULT_DEPTH = 30  # bmc bound when --depth is not given
DEFAULT_MAX_K = 60  # the largest k of kind when --depth is not given
AUTO_MAX_STATES = 200_000  # explicit search limit in `auto` when --max-states is not given
AUTO_ENGINE_SECONDS = 60.0  # pdr's and kind's budget per property in `auto` without --timeout
SMT_ENGINES = ("bmc", "kind", "pdr")


def _order(model: ir.Model) -> dict[str, int]:
    return {n: i for i, n in enumerate(model.property_names() + ["deadlock", "range"])}


def _liveness_unknown(model: ir.Model, names: Sequence[str], engine: str, why: str) -> list[Result]:
    live = {p.name for p in model.liveness}
    return [Result(n, "liveness", Verdict.UNKNOWN, engine, reason=why) for n in names if n in live]


NOT_CHECKED = "not checked by this engine"


def _not_checked_liveness(model: ir.Model, names: Sequence[str], engine: str) -> list[Result]:
    """Liveness properties an engine does not check (kind, pdr): `unknown` with the reason
    "not checked by this engine" and `detail["not_checked"]`, which keeps them out of the exit
    code unless the user named them (checker/api/model_api.py `verify`; issue 17)."""
    live = {p.name for p in model.liveness}
    why = (f"{NOT_CHECKED} ({engine} proves safety properties only; liveness: --engine explicit, or bmc "
           "for fair lasso counterexamples)")
    return [Result(n, "liveness", Verdict.UNKNOWN, engine, reason=why, detail={"not_checked": True})
            for n in names if n in live]
def _latency_unknown(model: ir.Model, names: Sequence[str], engine: str, why: str | None = None) -> list[Result]:
    """NOTE(latency): the Z3 engines do not compute latencies (elapsed time in the timed
    semantics, which only the zone engine decides); they say so (never a verdict), marked
    `not_checked` like the liveness kind and pdr skip (issue 17: out of the exit code unless
    named). With `why` (the budget stopped) the latency was asked for and not answered."""
    detail = {} if why else {"not_checked": True}
    why = why or (f"{NOT_CHECKED} ({engine} does not compute latencies: a latency is elapsed time in the timed "
                  "semantics, which the zone engine decides exactly; --engine explicit, or auto when its search "
                  "completes)")
    lat = {p.name for p in model.latencies}
    return [Result(n, "latency", Verdict.UNKNOWN, engine, reason=why, detail=dict(detail)) for n in names if n in lat]


def run_smt(name: str, model: ir.Model, names: Sequence[str], *, depth: int | None, timeout: float | None) -> list[Result]:
    """One of the Z3 engines on the named safety properties (one Result each, liveness
    names answered `unknown`)."""
    from gpcheck.checker.engines.smt.props import safety_properties
    from gpcheck.checker.engines.smt.session import Deadline

    deadline = Deadline(timeout)
    wanted_lat = [p for p in model.latencies if p.name in set(names)]
    lat = _latency_unknown(model, names, name)
    names = [n for n in names if n not in {p.name for p in model.latencies}]
    props = safety_properties(model, list(names))
    if lat and not props and not any(p.name in set(names) for p in model.liveness):
        return lat
    why = budget.stopped() or ""
    if not budget.stopped():  # signal or --max-memory (checker/core/budget.py): no encoding work left to do
        try:
            # NOTE(time-limit): the engine's phases outside Z3 (encoding, mining) poll the
            # budget and this limit, so that `timeout` bounds them through the Python API too
            with budget.time_limit(timeout):
                results = []
                if props or any(p.name in set(names) for p in model.liveness):
                    results = _run_smt(name, model, names, props, deadline, depth)
                return results + lat
        except budget.Stop as stop:  # the budget stopped, or the time limit passed, in a phase of no partial result
            why = budget.stopped() or stop.text
        except Exception:
            # once the budget stopped, Z3 answers any call with a 'canceled' error, also outside
            # a solver check (lemma mining, certificates), and the stop itself may be raised from
            # any Z3 call the main thread is in (a Z3 API call runs the signal handler):
            # the stop, not a bug in gpcheck
            if not budget.stopped():
                raise
            why = budget.stopped() or ""
    return [Result(p.name, p.kind, Verdict.UNKNOWN, name, reason=why) for p in props] \
        + _liveness_unknown(model, names, name, why) + _latency_unknown(model, [p.name for p in wanted_lat], name, why)


def _run_smt(name: str, model: ir.Model, names: Sequence[str], props: list, deadline: object,  # type: ignore[type-arg]
             depth: int | None) -> list[Result]:
    from gpcheck.checker.engines.smt import bmc, kind, pdr

    k = DEFAULT_DEPTH if depth is None else depth
    max_k = DEFAULT_MAX_K if depth is None else max(1, depth)
    # all properties in one call: bmc and kind's base case share one unrolling (which never
    # requires a path to go on past the depth asked about: bmc.Unroller), pdr one set of clauses;
    # each Result's detail says when it was decided ("seconds")
    if name == "bmc":
        out = bmc.run_bmc(model, props, depth=k, deadline=deadline)
        live = [p for p in model.liveness if p.name in set(names)]
        if live:
            from gpcheck.checker.engines.smt.lasso import run_lasso

            out += run_lasso(model, live, depth=k, deadline=deadline)
        return out
    elif name == "kind":
        out = kind.run_kind(model, props, max_k=max_k, deadline=deadline)
    elif name == "pdr":
        out = pdr.run_pdr(model, props, deadline=deadline)
    else:
        raise UsageError(f"unknown engine {name!r}")
    out += _not_checked_liveness(model, names, name)
    return out


def check_witnesses(model: ir.Model, results: list[Result]) -> list[Result]:
    """Replay every Z3 counterexample through gpmodel (NOTE(honest-verdicts)): a range
    violation gets the interpreter's error message and location; a counterexample that does
    not replay (an encoding bug) turns the verdict into `unknown`, saying so."""
    from dataclasses import replace

    from gpcheck.gpmodel import compile_model
    from gpcheck.checker.engines.smt.witness import check_witness, error_detail, range_error, replay_states

    smt = [r for r in results if r.engine in SMT_ENGINES and r.verdict is Verdict.VIOLATED]
    if not smt:
        return results
    cm = compile_model(model)
    out = []
    for r in results:
        if r in smt:
            problem = check_witness(cm, r)
            if problem is None and r.kind == "range":
                assert r.counterexample is not None
                states, _, _ = replay_states(cm, r.counterexample)
                err, _ = range_error(cm, r, states)
                assert err is not None  # check_witness found it
                r.detail.update(error_detail(cm, err))
            if problem is not None:
                r = replace(r, verdict=Verdict.UNKNOWN, reason=f"internal error: the {r.engine} counterexample "
                            f"does not replay through the interpreter ({problem})")
        out.append(r)
    return out


def run_engine(
    name: str,
    model: ir.Model,
    properties: Sequence[str] | None,
    *,
    depth: int | None = None,
    timeout: float | None = None,
    max_states: int | None = None,
    progress: object = None,
) -> list[Result]:
    """Run engine `name` (bmc, kind, pdr or auto) on `properties` (None: every property,
    including the implicit `range` and, without `allow deadlock`, `deadlock`)."""
    every = model.property_names() + ["range"] + ([] if model.allow_deadlock else ["deadlock"])
    if properties is None:
        names = every
    else:
        names = list(properties)
        unknown = sorted(set(names) - set(every))
        if unknown:
            raise UsageError(f"{model.file}: no property {', '.join(unknown)} (properties: {', '.join(every)})")
    if name in SMT_ENGINES:
        out = run_smt(name, model, names, depth=depth, timeout=timeout)
    elif name == "auto":
        out = _auto(model, names, depth=depth, timeout=timeout, max_states=max_states, progress=progress)
    else:
        raise UsageError(f"unknown engine {name!r} (engines: {', '.join(SMT_ENGINES + ('auto',))})")
    out = check_witnesses(model, out)
    order = _order(model)
    out.sort(key=lambda r: order.get(r.property, len(order)))
    return out


def _auto(
    model: ir.Model,
    names: Sequence[str],
    *,
    depth: int | None,
    timeout: float | None,
    max_states: int | None,
    progress: object,
) -> list[Result]:
    from gpcheck.checker.api.explicit_run import run_explicit
    from gpcheck.checker.engines.explicit.explicit import Limits

    start = time.monotonic()
    limit = max_states if max_states is not None else AUTO_MAX_STATES
    share = None if timeout is None else timeout / 3
    report = run_explicit(model, set(names), Limits(limit, share, progress))  # type: ignore[arg-type]
    decided: dict[str, Result] = {}
    for r in report.results:
        if r.verdict is not Verdict.UNKNOWN:
            if report.states is not None:
                r.detail["states"] = report.states
            decided[r.property] = r
    rest = [n for n in names if n not in decided]
    live = {p.name for p in model.liveness}
    out = list(decided.values())
    lat = {p.name for p in model.latencies}
    # NOTE(latency): a latency the zone engine left undecided stays so (no Z3 engine computes one)
    out += [next(x for x in report.results if x.property == n) for n in rest if n in lat]
    rest = [n for n in rest if n not in lat]
    safety = [n for n in rest if n not in live]
    liveness = [n for n in rest if n in live]
    if liveness:  # explicit search did not finish: look for fair lassos by BMC
        for r in run_smt("bmc", model, liveness, depth=depth, timeout=_slice(left_at(start, timeout), 2)):
            if r.verdict is Verdict.UNKNOWN:
                r = next(x for x in report.results if x.property == r.property)
            out.append(r)

    def left() -> float | None:
        return left_at(start, timeout)

    for n in safety:
        r = run_smt("pdr", model, [n], depth=depth, timeout=_slice(left(), 2))[0]
        if r.verdict is Verdict.UNKNOWN:
            r2 = run_smt("kind", model, [n], depth=depth, timeout=_slice(left(), 2))[0]
            if r2.verdict is not Verdict.UNKNOWN and r2.verdict is not Verdict.HOLDS_TO_BOUND:
                r = r2
            else:
                r3 = run_smt("bmc", model, [n], depth=depth, timeout=left())[0]
                r = r3 if r3.verdict is not Verdict.UNKNOWN else (r2 if r2.verdict is not Verdict.UNKNOWN else r)
        out.append(r)
    return out


def left_at(start: float, timeout: float | None) -> float | None:
    return None if timeout is None else max(0.0, timeout - (time.monotonic() - start))


def _slice(remaining: float | None, parts: int) -> float:
    """A share of the remaining time for one engine of `auto` (a fixed budget if unlimited)."""
    return AUTO_ENGINE_SECONDS if remaining is None else remaining / parts

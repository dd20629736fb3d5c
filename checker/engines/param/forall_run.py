"""One for-all run (NOTE(fresh-context)): small instances sampled and checked for violations
(with the API's `verify`, passed in), the encoder built, prove.py's Houdini and relative
induction run on the sizes symbolic, a second, wider round on what is left, and every property
answered (`unknown` with the reason where the run was cut short)."""

from __future__ import annotations

import itertools
import time
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator, Mapping, Sequence

from gpcheck.spec import ir
from gpcheck.checker.engines.param.beyond import DEADLOCK, OTHER_KINDS, not_decided, prove_deadlock
from gpcheck.checker.engines.param.encode import ParamEncoder
from gpcheck.checker.engines.param.extract import ParamModel, Unsupported, extract
from gpcheck.checker.engines.smt.session import Deadline
from gpcheck.checker.core.verdict import Report, Result, Verdict
from gpcheck.checker.engines.param import candidates
from gpcheck.checker.engines.param.prove import RANGE, _Support, _at, _kind, _prove, _unknown, _wanted, mine


SAMPLE_STATES = 20_000  # explicit states per small instance


SIZES_ABOVE = 2


WIDE_ABOVE = 3  # the second round's instance: each named constant at most this far above its lower bound


CHECK_ABOVE = 2  # the second round drops candidates false in the instances this far above its own  # small instances go up to lower bound + this, one constant at a time


def small_points(names: Sequence[str], lower: Mapping[str, int], fixed: Mapping[str, int]) -> list[dict[str, int]]:
    """Each named constant at its lower bound, then one at a time up to SIZES_ABOVE above it,
    then all one above."""
    base = {n: lower[n] for n in names}
    pts = [dict(fixed, **base)]
    for n in names:
        for k in range(1, SIZES_ABOVE + 1):
            pts.append(dict(fixed, **dict(base, **{n: base[n] + k})))
    pts.append(dict(fixed, **{n: base[n] + 1 for n in names}))
    out: list[dict[str, int]] = []
    for p in pts:
        if p not in out:
            out.append(p)
    return out


def verify_for_all(load: "callable", names: Sequence[str], fixed: Mapping[str, int], lower: Mapping[str, int],
                   properties: Sequence[str] | None, timeout: float | None,
                   check_instance: Callable[..., Report]) -> tuple[ir.Model, list[Result]]:
    """Results for the model's invariants and transition properties (or those named).
    `check_instance` is the API's `verify` (checker/api/for_all.py passes it: the engines do not
    import the API), which looks for violations in small instances.

    The run has a Z3 context of its own, its term names start from zero and Python's cyclic
    garbage collector runs only where the run says, so it proves and prints what the same run
    in a fresh process does, whatever ran before in this process (NOTE(fresh-context) in
    checker/engines/smt/session.py). `timeout` bounds the whole run, its
    phases outside Z3 included (NOTE(time-limit) in checker/core/budget.py): what it cuts short is
    `unknown` with reason `timeout`."""
    from gpcheck.checker.core import budget
    from gpcheck.checker.engines.param.encode import reset_names
    from gpcheck.checker.engines.smt.session import fresh_context, no_automatic_gc

    from gpcheck.checker.engines.explicit.explicit import select_properties

    if properties is not None:  # a name the model does not have: a usage error, as in every engine
        select_properties(load(dict(fixed)), properties)
    run = _Run()
    token = _CHECK_INSTANCE.set(check_instance)
    with fresh_context(), no_automatic_gc(), budget.time_limit(timeout), _reset(token):
        candidates._QVARS = itertools.count()  # Candidate.formula's names start from zero
        reset_names()
        deadline = Deadline(timeout)
        t0 = time.monotonic()
        try:
            _verify(run, load, names, fixed, lower, properties, deadline)
        except budget.Stop as stop:  # a phase outside Z3 polled past the time limit, or the budget stopped
            why = budget.stopped() or stop.text
            if run.model is None:  # stopped before the model was loaded: load it outside the limit
                run.model = load(dict(fixed))
                run.wanted = _wanted(run.model, properties)
            for n in run.wanted:
                if n not in run.out:
                    run.out[n] = _unknown(n, run.model, names, f"{why} (the run was cut short)")
        if timeout is not None and time.monotonic() - t0 >= timeout and not budget.stopped():
            # the user's wall clock ran out: say so on what it left undecided
            for n, r in run.out.items():
                if r.verdict is Verdict.UNKNOWN and not r.reason.startswith("timeout"):
                    run.out[n] = replace(r, reason=f"timeout after {timeout:g} s; {r.reason}")
    assert run.model is not None
    return run.model, [_inside_constraints(run.model, run.out[n]) for n in run.wanted]


def _inside_constraints(model: ir.Model, r: Result) -> Result:
    """NOTE(honest-verdicts): the encoding steps only from states inside the `constraint`s
    (encode.py `trans`), so what it proves holds of the states the constraints let through, as
    the explicit engine's search inside them: HOLDS_TO_BOUND, saying so, like every engine."""
    if r.verdict is not Verdict.PROVED or not model.constraints:
        return r
    names = ", ".join(c.name for c in model.constraints)
    return replace(r, verdict=Verdict.HOLDS_TO_BOUND, reason=f"{r.reason}, inside constraint {names}")


# The API's `verify` during a run of verify_for_all (set there, read by _violations, deep below)
_CHECK_INSTANCE: ContextVar[Callable[..., Report]] = ContextVar("check_instance")


@contextmanager
def _reset(token: Token[Callable[..., Report]]) -> Iterator[None]:
    try:
        yield
    finally:
        _CHECK_INSTANCE.reset(token)


@dataclass
class _Run:
    """What a for-all run has so far: a stop (the time limit) answers the rest `unknown`."""

    model: ir.Model | None = None
    wanted: list[str] = field(default_factory=list)
    out: dict[str, Result] = field(default_factory=dict)


def _verify(run: _Run, load: "callable", names: Sequence[str], fixed: Mapping[str, int], lower: Mapping[str, int],
            properties: Sequence[str] | None, deadline: Deadline) -> None:
    """`verify_for_all`'s work, its results put in `run` as they are decided."""
    from gpcheck.checker.core import budget
    from gpcheck.checker.engines.smt.mining import sample_states
    from gpcheck.gpmodel import compile_model

    from gpcheck.spec.errors import GpcheckError

    started = time.monotonic()
    try:
        pm = extract(load, names, fixed, lower)
        budget.poll()  # NOTE(time-limit): the phases before mining, each seconds on a large model
    except (Unsupported, GpcheckError) as e:
        run.model = model = load(dict(fixed))
        run.wanted = _wanted(model, properties)
        why = f"the constants cannot be made symbolic: {e}"
        run.out.update({n: _unknown(n, model, names, why) for n in run.wanted})
        return
    run.model = model = pm.model
    run.wanted = wanted = _wanted(model, properties)
    out = run.out
    # small instances: counterexamples (modelling errors included: `range`, NOTE(for-all-errors)),
    # and the states that propose candidates
    samples: list[tuple[dict[str, int], list[dict]]] = []
    for point in small_points(names, pm.lower, fixed):
        inst = load(point)
        budget.poll()
        unsettled = [n for n in _with_range(wanted) if n not in out]
        safety = [n for n in unsettled if _kind(model, n) not in OTHER_KINDS]
        for part in (safety, [n for n in unsettled if n not in safety]):  # apart: liveness turns symmetry off
            for name, r in _violations(inst, point, names, part, deadline).items():
                out.setdefault(name, r)
        cm = compile_model(inst)
        states, _ = sample_states(cm, SAMPLE_STATES, deadline)
        budget.poll()
        samples.append(({n: point[n] for n in names}, [cm.layout.decode(s) for s in states]))
    others = [n for n in wanted if n not in out and _kind(model, n) in OTHER_KINDS]  # checker/engines/param/beyond.py
    todo = [n for n in wanted if n not in out and n != RANGE and n not in others]
    if RANGE in out:  # an error at a small instance: the explicit search stops there (NOTE(for-all-errors))
        try:  # no proof follows; what the encoding could not have handled is still worth saying
            _encoder(pm, todo)
            beyond = ""
        except Unsupported as e:
            beyond = f"; outside the parameterised fragment: {e}"
        out.update({n: replace(r, reason=r.reason + beyond) for n in todo + others
                    for r in [_stopped_at_error(model, n, names, out[RANGE])]})
        return
    elif todo or RANGE in wanted or DEADLOCK in others:
        support = _Support()
        try:
            enc = _encoder(pm, todo)
            proofs = _prove(enc, load, samples, todo + [RANGE], deadline, started, support=support)
            left = [n for n in todo + [RANGE] if proofs[n].verdict is Verdict.UNKNOWN]
            if left and not deadline.expired:
                proofs.update(_widen(enc, load, samples, left, proofs, fixed, deadline, started, support))
            if proofs[RANGE].detail.get("deferred"):  # no second round came (a larger size the model refuses)
                proofs.update(_prove(enc, load, samples, [RANGE], deadline, started, support=support))
            out.update(proofs)
            if DEADLOCK in others and not deadline.expired:  # a safety property too (checker/engines/param/beyond.py)
                got = prove_deadlock(enc, support.lemmas + [c for u in support.used.values() for c in u],
                                     [p for p in model.invariants if p.name in support.used], deadline)
                if got is not None:
                    out[DEADLOCK] = got
            _settle_errors(model, names, out)
            _cores(enc, support, out, deadline)
        except Unsupported as e:
            proofs = {n: _unknown(n, model, names, f"outside the parameterised fragment: {e}") for n in todo + [RANGE]}
            # no proof can come, but the second round's larger instances may still refute
            wide = _wide_point(load, fixed, names, pm.lower)
            proofs.update(_larger_violations(load, fixed, names, wide, todo + [RANGE], deadline))
            out.update(proofs)
    left = [n for n in others if n not in out]
    if left:  # deadlock (not proved), liveness, latency: violated at a size, or unknown saying why
        wide = _wide_point(load, fixed, names, pm.lower)
        found = _larger_violations(load, fixed, names, wide, left, deadline)
        sizes = [{n: p[n] for n in names} for p in small_points(names, pm.lower, fixed)]
        sizes += [{n: wide[n] + k for n in names} for k in range(CHECK_ABOVE + 1)]
        sizes = [p for k, p in enumerate(sizes) if p not in sizes[:k]]
        out.update({n: found.get(n) or _unknown(n, model, names, not_decided(model, n, names, sizes))
                    for n in left})


def _cores(enc: ParamEncoder, support: _Support, out: dict[str, Result], deadline: Deadline) -> None:
    """NOTE(for-all-core): the assumptions each proof used, from its inductive argument
    (checker/engines/param/proofcore.py); none where the model declares none or nothing is
    `proved` (under a `constraint`, nothing is). A relaxed encoding outside the fragment
    leaves the proofs without cores (the API then runs the proof again without each one)."""
    from gpcheck.checker.engines.param.proofcore import assumption_cores

    if not enc.model.assumptions or enc.model.constraints or deadline.expired:
        return
    lemmas = support.lemmas + [c for u in support.used.values() for c in u]  # what prove_deadlock was given
    try:
        assumption_cores(enc, support.used, support.range_lemmas, lemmas, out, deadline)
    except Unsupported:
        return


def _with_range(names: Sequence[str]) -> list[str]:
    return list(names) if RANGE in names else list(names) + [RANGE]


def _stopped_at_error(model: ir.Model, name: str, names: Sequence[str], error: Result) -> Result:
    """A property a small instance's explicit search could not settle: it stopped at a
    modelling error (NOTE(for-all-errors)), as the explicit engine reports it."""
    return _unknown(name, model, names, f"the search stopped at a modelling error (see the range result: "
                                        f"{error.reason})")


def _settle_errors(model: ir.Model, names: Sequence[str], out: dict[str, Result]) -> None:
    """NOTE(for-all-errors): a property proved over the error-free steps stays `proved` only
    when `range` is proved too (no modelling error reachable, for every size)."""
    err = out.get(RANGE)
    if err is None or err.verdict is Verdict.PROVED:
        return
    for n, r in list(out.items()):
        if n == RANGE or r.verdict is not Verdict.PROVED:
            continue
        if err.verdict is Verdict.VIOLATED:
            why = f"{_stopped_at_error(model, n, names, err).reason}; without the failing steps: {r.reason}"
        else:
            why = f"{err.reason} (the range result); over the steps that do not fail: {r.reason}"
        out[n] = replace(r, verdict=Verdict.UNKNOWN, reason=why)


def _violations(inst: ir.Model, point: Mapping[str, int], names: Sequence[str], props: Sequence[str],
                deadline: Deadline) -> dict[str, Result]:
    """The properties among `props` the explicit engine finds violated in the instance `inst`
    (the constants `point`), each with the instance and its counterexample; only violations
    count (a bounded exploration proves nothing)."""
    verify_instance = _CHECK_INSTANCE.get()
    if not props:
        return {}
    rep = verify_instance(inst, properties=list(props), engine="explicit", max_states=SAMPLE_STATES,
                          timeout=deadline.remaining(), assumption_use=False)
    out: dict[str, Result] = {}
    for r in rep.results:
        if r.verdict is Verdict.VIOLATED and r.property not in out:
            at = ", ".join(f"{n}={point[n]}" for n in names)
            why = r.reason or r.detail.get("error")  # a `range` violation's message is its detail's error
            out[r.property] = replace(r, reason=f"violated at {at}" + (f": {why}" if why else ""),
                                      detail=dict(r.detail, instance={n: point[n] for n in names},
                                                  for_all=list(names)))
    return out


def _wide_point(load: "callable", fixed: Mapping[str, int], names: Sequence[str], lower: Mapping[str, int]
                ) -> dict[str, int]:
    """The second round's instance: each named constant at its declared value, at least its
    lower bound + 1 and at most WIDE_ABOVE above it."""
    declared = load(dict(fixed)).const_values
    return {n: min(max(declared[n], lower[n] + 1), lower[n] + WIDE_ABOVE) for n in names}


def _larger_violations(load: "callable", fixed: Mapping[str, int], names: Sequence[str], wide: Mapping[str, int],
                       props: Sequence[str], deadline: Deadline) -> dict[str, Result]:
    """The properties among `props` violated at the second round's instance `wide` or the
    CHECK_ABOVE instances above it (every named constant moved at once): a bound that fails
    only where two constants are both beyond the small instances' (nvidia_tsg's
    bounded_inversion needs NB >= 2 and BLEN >= 3 together). Instances the model does not
    allow are skipped."""
    from gpcheck.checker.core import budget
    from gpcheck.spec.errors import GpcheckError

    found: dict[str, Result] = {}
    for point in [dict(wide)] + [{n: wide[n] + k for n in names} for k in range(1, CHECK_ABOVE + 1)]:
        unsettled = [n for n in props if n not in found]
        if not unsettled or deadline.expired:
            break
        budget.poll()
        try:
            inst = load(dict(fixed, **point))
        except GpcheckError:
            break
        found.update(_violations(inst, point, names, unsettled, deadline))
    return found


def _encoder(pm: "ParamModel", todo: Sequence[str]) -> ParamEncoder:
    """The model over SMT arrays; where that is outside the fragment, with the arrays over the
    symbolic index range encoded by counters per row value (checker/engines/param/counters.py), which
    is exact when the rows are interchangeable; Unsupported naming what neither encodes."""
    try:
        enc = ParamEncoder(pm)
        enc.probe(todo)
        return enc
    except Unsupported as e:
        first = e
    try:
        counted = ParamEncoder(pm, counters=True)
        counted.probe(todo)
        return counted
    except Unsupported as e:
        raise Unsupported(f"{first}; as counters of the rows: {e}") from None


def _widen(enc: ParamEncoder, load: "callable", samples: list[tuple[dict[str, int], list[dict]]],
           left: list[str], first: dict[str, Result], fixed: Mapping[str, int], deadline: Deadline,
           started: float, support: _Support | None = None) -> dict[str, Result]:
    """The second round, for the properties the first left unknown: the richer templates of
    checker/engines/param/widen.py, mined from the small instances and one more at the model's own
    sizes (each named constant at its declared value, at least its lower bound + 1 and at
    most WIDE_ABOVE above it), which is also the fixed size of the pre-filter and of the
    property-directed cores. A bound such as reef_rewind's CAP+1 = 3 says nothing at N <= 3,
    where the first round looks. Candidates false in the instances up to CHECK_ABOVE beyond
    are dropped before the fixed-size Houdini. Its verdicts replace the first round's only when proved;
    otherwise the reason says what both rounds tried."""
    from gpcheck.checker.engines.smt.mining import sample_states
    from gpcheck.gpmodel import compile_model

    names, lower = enc.pm.names, enc.pm.lower
    wide = _wide_point(load, fixed, names, lower)

    def sample(point: dict[str, int]) -> tuple[dict[str, int], list[dict]]:
        cm = compile_model(load(dict(fixed, **point)))
        states, _ = sample_states(cm, SAMPLE_STATES, deadline)
        return dict(point), [cm.layout.decode(s) for s in states]

    from gpcheck.spec.errors import GpcheckError

    try:
        more = list(samples)
        if all(wide != pt for pt, _ in samples):
            more.append(sample(wide))
        checks = [sample({n: wide[n] + k for n in names}) for k in range(1, CHECK_ABOVE + 1)]
    except GpcheckError as e:  # a larger instance the model does not allow: no second round
        return {n: replace(first[n], reason=f"{first[n].reason}; no second round ({e})") for n in left}
    second = _prove(enc, load, more, left, deadline, started, wide=wide, checks=checks,
                       keep=mine(enc, more, False, checks), support=support)
    # the larger instances of this round may show a violation the small ones could not (a
    # bound that fails only beyond each constant's lower bound + SIZES_ABOVE, one at a time)
    found = _larger_violations(load, fixed, names, wide, [n for n in left if second[n].verdict is not Verdict.PROVED],
                               deadline)
    out: dict[str, Result] = {}
    for n in left:
        r = second[n]
        if n in found:
            out[n] = found[n]
        elif r.verdict is Verdict.PROVED:
            out[n] = replace(r, reason=f"{r.reason}; second round at {_at(wide, names)}, richer templates",
                             detail=dict(r.detail, round=2))
        elif first[n].detail.get("deferred"):  # range, decided only in this round
            out[n] = replace(r, reason=f"second round at {_at(wide, names)}: {r.reason}")
        else:
            out[n] = replace(first[n], reason=f"{first[n].reason}; second round at {_at(wide, names)} "
                                              f"with richer templates: {r.reason}")
    return out

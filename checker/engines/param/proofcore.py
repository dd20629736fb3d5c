"""Proof cores of `--for-all` proofs: the model assumptions each one used (NOTE(for-all-core)).

NOTE(for-all-core): a for-all proof is an inductive argument with the sizes symbolic: the lemmas
its proof used (`_Support.used`), initial and inductive, and the property initial and inductive
relative to them (`range`: every error condition excluded by its lemmas and the proved
invariants; `deadlock`: no state where they hold is stuck). Its proof core is found as for kind
and pdr (NOTE(proof-core) in checker/engines/smt/proofcore.py), over a second encoding of the model
in which each declared assumption's guards and initial-state filter sit behind an indicator
literal (`ParamEncoder(relax=...)`); a set of assumptions is its members' literals asserted true
and the others' false (the encoder's `facts`), i.e. the model without the others. For one set,
the argument is re-checked: the lemmas go through Houdini (what needed a dropped assumption falls
out), the property's initiation, then its consecution relative to the survivors (Z3's unsat core
over the lemmas, as in the proof). The set with every assumption is checked first; then each
assumption is dropped in turn, in declaration order, when the argument survives without it. A
re-check Z3 does not answer keeps the assumption (the proof may need it); when the argument does
not re-check with every assumption in force, there is no core and the API falls back on running
the for-all proof again without each assumption (NOTE(assumption-use) in checker/api/assumptions.py);
the result then says why in `detail["assumption_core_missing"]` (the relaxed encoding refused its
lemmas, or what Houdini kept of them and how the property's checks answered), so that a proof
that never gets a core (nvidia_tsg's `--for-all S,NB` no_loss, issue 30) shows where it stops.
Dropping assumptions only adds behaviours, so an argument that holds without some holds with
them all. A deadlock is the model's own (NOTE(proof-core)): its "stuck" is the encoding with every
guard in force; only the lemmas and invariants it rests on are re-checked in the relaxed model.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.core import budget
from gpcheck.checker.core.verdict import Result, Verdict
from gpcheck.checker.engines.param.candidates import Candidate
from gpcheck.checker.engines.param.encode import ParamEncoder
from gpcheck.checker.engines.param.extract import Unsupported
from gpcheck.checker.engines.smt.session import Deadline

CORE_STEPS = 120_000_000  # one re-check (a Houdini and the property's checks) of one set (NOTE(step-limits))


def assumption_cores(enc: ParamEncoder, used: Mapping[str, list[Candidate]], range_lemmas: list[Candidate] | None,
                     deadlock_lemmas: list[Candidate], out: dict[str, Result], deadline: Deadline) -> None:
    """Each proved result in `out` whose argument re-checks with every assumption in force gets
    `detail["assumption_core"]`: the assumptions its proof used, in declaration order
    (NOTE(for-all-core)). `used`: per proved property, the lemmas its proof used; `range_lemmas`
    those `range` rested on; `deadlock_lemmas` those a deadlock proof was given."""
    model = enc.model
    names = [a.name for a in model.assumptions]
    if not names:
        return
    lits = {n: z3.Bool(f"assume!{n}") for n in names}
    relaxed = ParamEncoder(enc.pm, counters=enc.counters is not None, relax=lits)
    base = list(relaxed.facts)

    def under(on: frozenset[str]) -> None:
        relaxed.facts = base + [lits[n] if n in on else z3.Not(lits[n]) for n in names]

    cores: dict[str, frozenset[str] | None] = {}
    missing: dict[str, str] = {}  # why a proved property got no core
    props = {p.name: p for p in model.invariants} | {p.name: p for p in model.transitions}

    def core_of(name: str) -> frozenset[str] | None:
        """The property's core, found once; None without one."""
        r = out.get(name)
        if name not in cores:
            cores[name] = None
            if r is not None and r.verdict is Verdict.PROVED and name in props and name in used \
                    and not deadline.expired:
                notes: list[str] = []

                def holds(on: frozenset[str]) -> bool | None:
                    under(on)
                    return _property(relaxed, used[name], props[name], deadline, notes)

                try:
                    relaxed.facts = base  # every literal free: the unsat cores say which ones the argument needs
                    first = _unsat_cores(relaxed, lits, used[name], props[name], deadline)
                    if first is None:
                        notes.append("the unsat cores of initiation and consecution gave no answer")
                    cores[name] = _core(names, holds, first)
                except Unsupported as e:  # its lemmas outside the relaxed encoding: this property has no core
                    notes.append(f"the encoding with the assumptions behind literals refuses its lemmas: {e}")
                if cores[name] is None:
                    missing[name] = ("no proof core: " + "; ".join(notes) if notes else
                                     "no proof core: the argument was not re-checked (time)")
        return cores[name]

    for name in out:
        if "~" not in name:  # the API's vacuity probes (NOTE(vacuity)) need a core only where range or deadlock use them
            core_of(name)

    def invariants(on: frozenset[str], which: Sequence[str]) -> list[ir.Invariant]:
        """The proved invariants among `which` whose cores lie inside `on` (one without a core is
        left out: fewer hypotheses only make the re-check harder)."""
        return [p for p in model.invariants if p.name in which and (c := core_of(p.name)) is not None and c <= on]

    rng = out.get("range")
    if rng is not None and rng.verdict is Verdict.PROVED and range_lemmas is not None and not deadline.expired:
        which = list(rng.detail.get("invariants") or [])

        def range_holds(on: frozenset[str]) -> bool | None:
            invs = invariants(on, which)  # (their cores first: each re-check sets the encoder's facts)
            under(on)
            return _range(relaxed, range_lemmas, invs, deadline)

        got = _core_or_why(names, range_holds, "range", missing)
        if got is not None:
            cores["range"] = got
    dl = out.get("deadlock")
    if dl is not None and dl.verdict is Verdict.PROVED and not deadline.expired:
        which = [p.name for p in model.invariants if p.name in used]

        def deadlock_free(on: frozenset[str]) -> bool | None:
            invs = invariants(on, which)
            under(on)
            return _deadlock(enc, relaxed, deadlock_lemmas, invs, deadline)

        got = _core_or_why(names, deadlock_free, "deadlock", missing)
        if got is not None:
            cores["deadlock"] = got
    for name in out:
        core = cores.get(name)
        if core is not None:
            out[name].detail["assumption_core"] = [n for n in names if n in core]
        elif name in missing:
            out[name].detail["assumption_core_missing"] = missing[name]


def _core_or_why(names: list[str], proves: Callable[[frozenset[str]], bool | None], name: str,
                 missing: dict[str, str]) -> frozenset[str] | None:
    """`_core` of `range` or `deadlock`; where the relaxed encoding refuses the lemmas that result
    rests on, None, and `missing` says so (the properties' own cores stand: issue 30)."""
    try:
        return _core(names, proves)
    except Unsupported as e:
        missing[name] = f"no proof core: the encoding with the assumptions behind literals refuses its lemmas: {e}"
        return None


def _core(names: list[str], proves: Callable[[frozenset[str]], bool | None],
          first: frozenset[str] | None = None) -> frozenset[str] | None:
    """Every assumption in force (or those of `first`, a set the argument is known to hold
    with), then each dropped in turn where the argument survives without it; None when it does
    not re-check with them all."""
    on = frozenset(names) if first is None else first
    if first is None and proves(on) is not True:
        return None
    for a in names:
        if a not in on:
            continue
        budget.poll()  # NOTE(time-limit)
        if proves(on - {a}) is True:
            on = on - {a}
    return on


def _unsat_cores(enc: ParamEncoder, lits: Mapping[str, z3.BoolRef], lemmas: list[Candidate],
                 prop: ir.Invariant | ir.TransitionProperty, deadline: Deadline) -> frozenset[str] | None:
    """The assumptions in the unsat cores of the proof's initiation and consecution (the lemmas
    and the property together, each assumption's literal a hypothesis, `enc.facts` leaving
    every literal free): the argument holds in the model with those alone. None without an
    answer (the caller then re-checks with every assumption in force)."""
    from gpcheck.checker.engines.param.prove import MBQI, MBQI_RETRY_STEPS, _shared_skolems
    from gpcheck.checker.engines.param.induct import Consecution

    capped = deadline.limited(CORE_STEPS)
    names = list(lits)
    s, t = enc.state("qcs."), enc.state("qct.")
    inv = prop if isinstance(prop, ir.Invariant) else None
    # initiation: every lemma and the property hold in every initial state
    bad0 = [c.formula(enc, s, [z3.Int(f"qsk{k}_{n}") for n in c.view.names]) for k, c in enumerate(lemmas)]
    if inv is not None:
        bad0.append(z3.Not(enc.holds(inv.expr, s)))
    used: set[str] = set()
    if bad0:
        sol = z3.Solver()
        sol.set("core.minimize", True)
        capped.apply(sol)  # NOTE(step-limits)
        sol.add(*enc.facts, enc.init(s), z3.Or(*bad0))
        r = capped.trusted(sol.check(*lits.values()))  # NOTE(stale-interrupt)
        if r != z3.unsat:
            return None
        ids = {c.get_id() for c in sol.unsat_core()}
        used |= {n for n in names if lits[n].get_id() in ids}
    # consecution: a step from a state where they all hold keeps them (one action at a time)
    goal = [c.formula(enc, t, _shared_skolems(c.view)) for c in lemmas]
    if inv is not None:
        fixed, goal = [enc.holds(inv.expr, s)], goal + [z3.Not(enc.holds(inv.expr, t))]
    else:
        fixed, goal = [], goal + [z3.Not(enc.holds(prop.expr, s, t))]
    hyps = [c.formula(enc, s) for c in lemmas] + [lits[n] for n in names]
    cons = Consecution(enc, s, t, hyps, z3.Or(*goal), fixed=fixed, mbqi=MBQI, tag="qcore",
                       retry_steps=MBQI_RETRY_STEPS)
    ans = cons.check(range(len(hyps)), capped)
    if ans.verdict != "unsat":
        return None
    used |= {names[k - len(lemmas)] for k in ans.core if k >= len(lemmas)}
    return frozenset(used)


def _houdini(enc: ParamEncoder, lemmas: list[Candidate], deadline: Deadline) -> list[Candidate] | None:
    from gpcheck.checker.engines.param.prove import houdini

    if not lemmas:
        return []
    kept, _ = houdini(enc, lemmas, deadline.limited(CORE_STEPS))
    return None if kept is None else [lemmas[k] for k in kept]


def _property(enc: ParamEncoder, lemmas: list[Candidate], prop: ir.Invariant | ir.TransitionProperty,
              deadline: Deadline, notes: list[str] | None = None) -> bool | None:
    """The property initial and inductive relative to what Houdini keeps of `lemmas` in the
    model `enc.facts` selects: True, False, or None (no answer); `notes` gets what each step
    answered where it is not True."""
    notes = [] if notes is None else notes
    from gpcheck.checker.engines.param.prove import MBQI, MBQI_RETRY_STEPS
    from gpcheck.checker.engines.param.induct import Consecution

    kept = _houdini(enc, lemmas, deadline)
    if kept is None:
        notes.append(f"Houdini over its {len(lemmas)} lemmas gave no answer")
        return None
    capped = deadline.limited(CORE_STEPS)
    s, t = enc.state("pcs."), enc.state("pct.")
    if isinstance(prop, ir.Invariant):
        r = _check(capped, *enc.facts, enc.init(s), z3.Not(enc.holds(prop.expr, s)))
        if r is not True:
            notes.append("initiation " + ("fails" if r is False else "gave no answer"))
            return r
        fixed, goal = [enc.holds(prop.expr, s)], z3.Not(enc.holds(prop.expr, t))
    else:
        fixed, goal = [], z3.Not(enc.holds(prop.expr, s, t))
    cons = Consecution(enc, s, t, [c.formula(enc, s) for c in kept], goal, fixed=fixed, mbqi=MBQI, tag="pcore",
                       retry_steps=MBQI_RETRY_STEPS)
    ans = cons.check(range(len(kept)), capped)
    if ans.verdict != "unsat":
        notes.append(f"consecution relative to the {len(kept)} of {len(lemmas)} lemmas Houdini kept: {ans.verdict}")
    return True if ans.verdict == "unsat" else (False if ans.verdict == "sat" else None)


def _range(enc: ParamEncoder, lemmas: list[Candidate], invs: list[ir.Invariant], deadline: Deadline) -> bool | None:
    """No modelling error reachable in the model `enc.facts` selects: the lemmas Houdini keeps
    and the invariants proved there exclude every error condition (NOTE(for-all-errors))."""
    from gpcheck.checker.engines.param.errors import exclude_errors

    kept = _houdini(enc, lemmas, deadline)
    if kept is None:
        return None
    return True if exclude_errors(enc, kept, invs, deadline.limited(CORE_STEPS)).excluded else None


def _deadlock(enc: ParamEncoder, relaxed: ParamEncoder, lemmas: list[Candidate], invs: list[ir.Invariant],
              deadline: Deadline) -> bool | None:
    """No state where what Houdini keeps of `lemmas` in the relaxed model (and the invariants
    proved there) holds is stuck, "stuck" with every guard in force (`enc`)."""
    from gpcheck.checker.engines.param.beyond import prove_deadlock

    kept = _houdini(relaxed, lemmas, deadline)
    if kept is None:
        return None
    return True if prove_deadlock(enc, kept, invs, deadline.limited(CORE_STEPS)) is not None else None


def _check(deadline: Deadline, *facts: z3.BoolRef) -> bool | None:
    """True: unsat; False: sat; None: no answer."""
    sol = z3.Solver()
    deadline.apply(sol)  # NOTE(step-limits)
    sol.add(*facts)
    r = deadline.trusted(sol.check())  # NOTE(stale-interrupt)
    return True if r == z3.unsat else (False if r == z3.sat else None)

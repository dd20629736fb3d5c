"""`--for-all`: a property proved for every value of some constants, or refuted at one size.

1. `extract` makes the named constants symbolic; `ParamEncoder` writes init, the transition
   relation and the properties over SMT arrays (checker/engines/param/encode.py).
2. Small instances (each named constant at its lower bound and a little above) are explored
   explicitly; a property violated in one of them is `violated` with that instance's
   constants and its counterexample (the explicit engine's, replayable).
3. Their states propose quantified candidates (checker/engines/param/mine.py), filtered by Houdini at
   one fixed size (checker/engines/param/finite.py); Houdini keeps those Z3 shows hold initially and
   are preserved by every action *with the sizes symbolic* (one action at a time, the
   candidates instantiated at the action's index terms: checker/engines/param/induct.py): a
   counterexample to induction names, through shared skolem indices, the candidates it
   breaks. With more than GLOBAL_MAX candidates the search is per property (`_refine`): the
   lemmas its proof at the fixed size uses, then those of them that hold for every size.
4. A property is `proved` for all sizes only when Z3 shows `Init => P` and `L and P and T =>
   P'` (a transition property: `L and T => P`) with the constants symbolic. The lemmas its
   proof used are printed in gpspec syntax. Anything else is `unknown`, saying what was tried;
   small instances alone never prove anything."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np
import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.param.beyond import DEADLOCK
from gpcheck.checker.engines.param.encode import ParamEncoder, PState
from gpcheck.checker.engines.param.extract import Unsupported
from gpcheck.checker.engines.param.induct import Consecution
from gpcheck.checker.engines.param.mine import View, mine_view, view_rows, views
from gpcheck.checker.engines.smt.mining import AtomTable
from gpcheck.checker.engines.smt.session import DEFAULT_SEED, Deadline
from gpcheck.checker.core.verdict import Result, Verdict
from gpcheck.checker.engines.param.candidates import ENGINE, Candidate, render_lemmas

if TYPE_CHECKING:
    from gpcheck.checker.engines.param.finite import FixedSize

ATOMS_PER_VIEW = 400
MBQI = False  # E-matching only: fast unsat answers; `unknown` gives a candidate model
MBQI_RETRY_STEPS = 40_000_000  # a property's final check that E-matching leaves unknown: once more with MBQI
# Z3 step budgets (rlimit, NOTE(step-limits) in checker/engines/smt/session.py): deterministic, so the
# same command proves the same properties with the same lemmas under any load (they were wall
# seconds, and reef_rewind's bound came out proved with 82 lemmas, with 90, or unknown)
# (at about 4 M steps per CPU second of these phases: checker/engines/smt/session.py)
FILTER_STEPS = 360_000_000  # the fixed-size Houdini pre-filter, and one fixed-size core (was 90 s)
GLOBAL_MAX = 80  # one symbolic Houdini over all candidates only up to this many
MAX_ROUNDS = 8  # property-directed refinement rounds (_refine)
SYMBOLIC_STEPS = 120_000_000  # one symbolic Houdini run (was 30 s)
WIDE_ATOMS_PER_VIEW = 2000  # the second round's extra templates (checker/engines/param/widen.py), per view
WIDE_FILTER_STEPS = 960_000_000  # the second round's fixed-size Houdini (more candidates, a larger instance; was
# 240 s; reef_rewind's takes 72.8 M)
AFFINE_ATOMS_PER_VIEW = 200  # the second round's linear equalities of 3+ counters (checker/engines/param/affine.py)
GUARDED_ATOMS_PER_VIEW = 400  # the second round's bounds under a model guard (checker/engines/param/guards.py)
THRESHOLD_ATOMS_PER_VIEW = 600  # the second round's threshold and anchored templates (checker/engines/param/threshold.py), per view
REF_ATOMS_PER_VIEW = 600  # the second round's nullable-reference templates (checker/engines/param/refs.py), per view
TRIPLE_ATOMS_PER_VIEW = 200  # the second round's facts under three enum conditions (checker/engines/param/triple.py)


def filter_points(names: Sequence[str], lower: Mapping[str, int], fixed: Mapping[str, int]) -> list[dict[str, int]]:
    """The instances of the pre-filter: every named constant one above its lower bound."""
    return [dict(fixed, **{n: lower[n] + 1 for n in names})]


def _shared_skolems(view: View) -> list[z3.ArithRef]:
    """One skolem index per (range, occurrence in the view): every view's violation uses the
    same few, so instantiation over them stays small (a disjunction of violations needs only
    one to hold, at its own indices: sharing the names loses nothing)."""
    out: list[z3.ArithRef] = []
    seen: dict[str, int] = {}
    for d in view.domains:
        n = seen.get(d.key, 0)
        seen[d.key] = n + 1
        out.append(z3.Int(f"skv!{d.key}!{n}"))
    return out


def _cap(deadline: Deadline, steps: int) -> Deadline:
    """At most `steps` more Z3 steps, and the run's own deadline (NOTE(step-limits))."""
    return deadline.limited(steps)


def houdini(enc: ParamEncoder, cands: list[Candidate], deadline: Deadline, seed: int = DEFAULT_SEED
            ) -> tuple[list[int] | None, str]:
    """The candidates Z3 shows hold initially and are inductive for every size, or None."""
    s, t = enc.state("s."), enc.state("t.")
    lits = [z3.Bool(f"cand!{k}") for k in range(len(cands))]
    viol_s = [c.formula(enc, s, [z3.Int(f"sk{k}_{n}") for n in c.view.names]) for k, c in enumerate(cands)]
    viol_t = [c.formula(enc, t, [z3.Int(f"sk{k}_{n}") for n in c.view.names]) for k, c in enumerate(cands)]
    active = list(range(len(cands)))
    checks = 0

    def solver() -> z3.Solver:
        sol = z3.Solver()
        sol.set("random_seed", seed)
        sol.set("mbqi", MBQI)
        deadline.apply(sol)  # NOTE(step-limits)
        return sol

    def drop(model: z3.ModelRef, viol: list[z3.BoolRef]) -> list[int]:
        broken = [k for k in active if z3.is_true(model.eval(viol[k], model_completion=True))]
        return [k for k in active if k not in broken] if broken else active

    init = z3.And(*enc.facts, enc.init(s))
    while active:
        sol = solver()
        sol.add(init, z3.Or(*[viol_s[k] for k in active]))
        checks += 1
        r = deadline.trusted(sol.check())  # NOTE(stale-interrupt)
        if r == z3.unsat:
            break
        if r != z3.sat and not _candidate_model(sol):
            return None, f"z3 gave no answer on initiation ({sol.reason_unknown()}) after {checks} checks"
        kept = drop(sol.model(), viol_s)
        if len(kept) == len(active):
            return None, "a counterexample to initiation that breaks no candidate (model evaluation)"
        active = kept
    # consecution, one action at a time, the candidates instantiated (checker/engines/param/induct.py);
    # the violations share one skolem index per range position, so the terms stay few
    shared = [c.formula(enc, t, _shared_skolems(c.view)) for c in cands]
    cons = Consecution(enc, s, t, [c.formula(enc, s) for c in cands],
                       z3.Or(*[z3.And(lits[k], shared[k]) for k in range(len(cands))]), seed=seed, tag="hc",
                       lits=lits)  # the goal's literals are the hypotheses' (a dropped candidate is neither)
    while active:
        checks += 1
        ans = cons.check(active, deadline)
        if ans.verdict == "unsat":
            break
        if ans.model is None:
            return None, f"z3 gave no answer on consecution ({ans.reason}) after {checks} checks"
        broken = [k for k in active if ans.true(shared[k])]
        kept = [k for k in active if k not in broken]
        if not broken:
            return None, "a counterexample to induction that breaks no candidate (model evaluation)"
        active = kept
    return active, f"{checks} checks"


def _candidate_model(sol: z3.Solver) -> bool:
    """Without model-based instantiation Z3 answers `unknown` where a quantified hypothesis
    might hold: its candidate model still names broken candidates, and dropping candidates
    is always sound (only unsat answers prove anything)."""
    if "incomplete" not in sol.reason_unknown():
        return False
    try:
        sol.model()
    except z3.Z3Exception:
        return False
    return True


RANGE = "range"  # the implicit property of modelling errors (NOTE(for-all-errors) in checker/engines/param/errors.py)


@dataclass
class _Support:
    """What the proofs of a run rest on, for the error checks (NOTE(for-all-errors)): the
    lemmas each symbolic Houdini kept (inductive for all sizes on their own) and, per proved
    property, the lemmas its proof used (inductive with it)."""

    lemmas: list[Candidate] = field(default_factory=list)
    used: dict[str, list[Candidate]] = field(default_factory=dict)
    negated: bool = False  # the error checks' own candidates (errors.error_candidates) were tried
    range_lemmas: list[Candidate] | None = None  # the lemmas `range`'s proof used (checker/engines/param/proofcore.py)


def _prove_range(enc: ParamEncoder, support: "_Support", fixed: "_Sub | None", point: dict[str, int],
                 cands: list[Candidate], samples: list[tuple[dict[str, int], list[dict]]], deadline: Deadline
                 ) -> tuple[Result | None, str]:
    """NOTE(for-all-errors): `range` in one round: every error condition excluded by the
    lemmas the proofs so far rest on and the invariants proved so far (checker/engines/param/errors.py);
    failing that (once per run), with the error checks' own candidates (errors.error_candidates)
    that a symbolic Houdini keeps; failing that, property-directed as a property's `_refine`:
    the candidates that exclude the errors at the round's fixed size, those of them inductive
    for every size, checked again. The result when proved, else None and why not."""
    from gpcheck.checker.engines.param.errors import exclude_errors

    model, names = enc.model, enc.pm.names
    pool: dict[int, Candidate] = {}
    for c in support.lemmas + [c for used in support.used.values() for c in used]:
        pool.setdefault(id(c), c)
    lemmas = list(pool.values())
    invs = [p for p in model.invariants if p.name in support.used]
    t0 = time.monotonic()
    ex = exclude_errors(enc, lemmas, invs, deadline)
    note = f"from {len(lemmas)} lemmas and {len(invs)} proved invariants: {ex.why}" if not ex.excluded else ""
    if not ex.excluded and not deadline.expired:  # the model's other invariants (not asked for) may help
        more = _helper_invariants(enc, lemmas, [p for p in model.invariants if p not in invs], deadline)
        if more:
            invs += [p for p, _ in more]
            for _, used in more:
                for c in used:
                    if id(c) not in pool:
                        pool[id(c)] = c
                        lemmas.append(c)
            ex = exclude_errors(enc, lemmas, invs, deadline)
            note += f"; with the model's invariants {', '.join(p.name for p, _ in more)} proved too: {ex.why}"
    if not ex.excluded and not support.negated and not deadline.expired:  # once per run: bounds under `e != v`
        from gpcheck.checker.engines.param.errors import error_candidates

        support.negated = True
        extra = error_candidates(enc, samples)
        kept, how = houdini(enc, extra, _cap(deadline, SYMBOLIC_STEPS)) if extra else ([], "none")
        if kept:  # inductive on their own: hypotheses from here on
            lemmas += [extra[k] for k in kept]
            pool.update({id(extra[k]): extra[k] for k in kept})
            e = exclude_errors(enc, lemmas, invs, deadline)
            if e.excluded:
                ex = e
        note += (f"; {len(extra)} bounds under a negated condition, Houdini with the sizes symbolic: "
                 + (how if kept is None else f"{len(kept)} inductive for all sizes"))
    if not ex.excluded and fixed is not None and not deadline.expired:
        got: list = []

        def relative(more: list[Candidate]) -> tuple[list[Candidate] | None, str]:
            e = exclude_errors(enc, lemmas + [c for c in more if id(c) not in pool], invs, deadline)
            got.append(e)
            return (e.lemmas, "") if e.excluded else (None, e.why)

        fixed.assumed = [p.name for p in invs]
        used, why, more_note = _refine(fixed, enc, point, cands, RANGE, deadline, relative)
        note += more_note
        if used is not None:
            ex = got[-1]
    if not ex.excluded:
        return None, note
    if deadline.out_of_time:  # NOTE(wall-clock-cut)
        return None, "timeout: the time limit ran out before the modelling errors were excluded"
    support.range_lemmas = lemmas + [c for c in ex.lemmas if all(c is not d for d in lemmas)]  # all it rested on
    used_text = (f"{len(ex.lemmas)} lemmas" + (f" and the proved invariants {', '.join(ex.invariants)}"
                                               if ex.invariants else ""))
    return Result(RANGE, RANGE, Verdict.PROVED, ENGINE,
                  reason=f"no step fails with a modelling error for any {', '.join(names)}: every error "
                         f"condition is excluded by {used_text} ({ex.checks} checks)",
                  detail={"for_all": list(names), "invariant": render_lemmas(enc, ex.lemmas) if ex.lemmas else None,
                          "lemmas": len(ex.lemmas), "invariants": ex.invariants,
                          "seconds": round(time.monotonic() - t0, 3)}), ""


def _helper_invariants(enc: ParamEncoder, lemmas: list[Candidate], invs: list[ir.Invariant],
                       deadline: Deadline) -> list[tuple[ir.Invariant, list[Candidate]]]:
    """Those of the model's invariants `invs` (not asked for, or not proved) that hold
    initially and are inductive relative to `lemmas` with the sizes symbolic, each with the
    lemmas its proof uses: hypotheses for the error checks (a run asked for one property
    still needs `queue_bound` to keep nvidia_streams' `ready[s] + 1` inside `0..Q`)."""
    out = []
    for inv in invs:
        s = enc.state("hs.")
        if deadline.expired or not _unsat(deadline, *enc.facts, enc.init(s), z3.Not(enc.holds(inv.expr, s))):
            continue
        used, _ = _relative(enc, lemmas, inv, deadline)
        if used is not None:
            out.append((inv, used))
    return out


def _wanted(model: ir.Model, properties: Sequence[str] | None) -> list[str]:
    """Every property the model declares (liveness and latency included), `deadlock` (unless
    `allow deadlock`) and `range` (modelling errors, as pdr and the explicit engine report
    them: NOTE(for-all-errors)), or those named; in the explicit engine's order. Each gets a
    result, decided or `unknown` saying why (issue 38: none is dropped)."""
    names = model.property_names() + ([] if model.allow_deadlock else [DEADLOCK]) + [RANGE]
    return names if properties is None else [n for n in names if n in properties]


def _kind(model: ir.Model, name: str) -> str:
    if name in (RANGE, DEADLOCK):
        return name
    if any(p.name == name for p in model.liveness):
        return "liveness"
    if any(p.name == name for p in model.latencies):
        return "latency"
    return "invariant" if any(p.name == name for p in model.invariants) else "transition"


def _unknown(name: str, model: ir.Model, names: Sequence[str], why: str) -> Result:
    return Result(name, _kind(model, name), Verdict.UNKNOWN, ENGINE, reason=why, detail={"for_all": list(names)})


def _prove(enc: ParamEncoder, load: "callable", samples: list[tuple[dict[str, int], list[dict]]],
           todo: list[str], deadline: Deadline, started: float, wide: dict[str, int] | None = None,
           checks: list[tuple[dict[str, int], list[dict]]] | None = None, keep: list[Candidate] | None = None,
           support: _Support | None = None) -> dict[str, Result]:
    """Mine, pre-filter at a fixed size, Houdini with the sizes symbolic, relative induction;
    a property the global lemma set does not settle gets a second try with the small set its
    proof uses at the fixed size (`FixedSize.core`), checked symbolically on its own. With
    `wide` (the second round, `_widen`): only the richer templates of checker/engines/param/widen.py
    are mined, `keep` (the first round's templates over the wider samples) join them, and the
    fixed size is the point
    `wide`."""
    from gpcheck.checker.engines.param.finite import FixedSize

    model, names = enc.model, enc.pm.names
    mined = (keep or []) + mine(enc, samples, wide is not None, checks)
    t_mine = time.monotonic() - started
    # sound pre-filter: what is inductive for all sizes is inductive at each one
    cands = mined
    point = (filter_points(names, enc.pm.lower, {c.name: c.value for c in model.constants})[0] if wide is None
             else dict({c.name: c.value for c in model.constants}, **wide))
    fixed = FixedSize(enc, load, point, cands)
    got = fixed.survivors(range(len(cands)), _cap(deadline, FILTER_STEPS if wide is None else WIDE_FILTER_STEPS))
    filtered = got is not None
    survivors = sorted(got) if got is not None else []
    if got is not None:
        cands = [cands[k] for k in survivors]
    if len(cands) <= GLOBAL_MAX:
        kept, how = houdini(enc, cands, _cap(deadline, SYMBOLIC_STEPS))
    else:  # too many for one symbolic Houdini in time: per property, from its fixed-size proof
        kept, how = None, f"not run on {len(cands)} (more than {GLOBAL_MAX})"
    tried = (f"{len(mined)} candidates mined from {len(samples)} small instances"
             + (f", {len(cands)} inductive at {_at(point, names)}" if filtered else "")
             + ", Houdini with the sizes symbolic: ")
    tried += how if kept is None else f"{len(kept)} lemmas inductive for all sizes ({how})"
    lemmas = [] if kept is None else [cands[k] for k in kept]
    if support is not None:
        support.lemmas += lemmas
    shared_seconds = time.monotonic() - started
    out: dict[str, Result] = {}
    for name in todo:
        t0 = time.monotonic()
        if name == RANGE:  # last in `todo`: the invariants this round proved may serve it (NOTE(for-all-errors))
            if wide is None and any(out[n].verdict is not Verdict.PROVED for n in todo if n != RANGE):
                # a second round follows: decided there (its Z3 work here would change the terms that
                # round's proofs see: NOTE(fresh-context) in checker/engines/smt/session.py)
                out[name] = replace(_unknown(name, model, names, "left to the second round"),
                                    detail={"for_all": list(names), "deferred": True})
                continue
            got, why = _prove_range(enc, support or _Support(), _Sub(fixed, survivors) if filtered else None,
                                    point, cands, samples, deadline)
            out[name] = got or _unknown(name, model, names, f"a modelling error could not be excluded for all "
                                                            f"sizes ({tried}; {why})")
            continue
        prop = next((p for p in model.invariants if p.name == name), None) or \
            next(p for p in model.transitions if p.name == name)
        inv = prop if isinstance(prop, ir.Invariant) else None
        if inv is not None and not _unsat(deadline, *enc.facts, enc.init(enc.state("is.")),
                                           z3.Not(enc.holds(inv.expr, enc.state("is.")))):
            out[name] = _unknown(name, model, names, "Z3 could not show it holds initially for all sizes")
            continue
        used, why = _relative(enc, lemmas, prop, deadline) if kept is not None else (None, "no lemma set")
        note = tried
        if used is None and filtered:
            used, why2, note2 = _refine(_Sub(fixed, survivors), enc, point, cands, prop, deadline,
                                          steps=FILTER_STEPS if wide is None else WIDE_FILTER_STEPS)
            note += note2
            why = why2 or why
        if used is None:
            out[name] = _unknown(name, model, names, f"{note}; the property is {why}")
            continue
        if deadline.out_of_time:  # NOTE(wall-clock-cut): which lemmas it kept may depend on the clock
            out[name] = _unknown(name, model, names, "timeout: the time limit ran out before its proof was "
                                 f"complete ({note})")
            continue
        text = render_lemmas(enc, used)
        if support is not None:
            support.used[name] = used
        out[name] = Result(name, _kind(model, name), Verdict.PROVED, ENGINE,
                           reason=f"inductive for all {', '.join(names)} relative to {len(used)} lemmas ({note})",
                           detail={"for_all": list(names), "invariant": text if used else None, "lemmas": len(used),
                                   "candidates": len(mined), "mine_seconds": round(t_mine, 3),
                                   "shared_seconds": round(shared_seconds, 3),
                                   "seconds": round(time.monotonic() - t0, 3)})
    return out


def mine(enc: ParamEncoder, samples: list[tuple[dict[str, int], list[dict]]], wide: bool = False,
         checks: list[tuple[dict[str, int], list[dict]]] | None = None) -> list[Candidate]:
    """The candidates the sampled states propose, view by view; with `wide`, those of the
    richer templates of checker/engines/param/widen.py instead, and only those that also hold in the states
    of `checks` (larger instances: a candidate false in a reachable state of some size is no
    invariant, so dropping it loses no proof, and it spares the fixed-size Houdini)."""
    from gpcheck.checker.engines.param.affine import affine_atoms
    from gpcheck.checker.engines.param.guards import guard_columns, guarded_bounds
    from gpcheck.checker.engines.param.pointer import enrich
    from gpcheck.checker.engines.param.refs import ref_atoms, ref_fills, ref_view
    from gpcheck.checker.engines.param.threshold import threshold_atoms, threshold_columns
    from gpcheck.checker.engines.param.triple import triple_atoms
    from gpcheck.checker.engines.param.widen import order_columns, wide_atoms

    out: list[Candidate] = []
    guards = guard_columns(enc) if wide else []
    for plain in views(enc):
        if wide:
            v = order_columns(plain)
            groups = [(v, wide_atoms(v, view_rows(enc, v, samples, DEFAULT_SEED), WIDE_ATOMS_PER_VIEW))]
            typed = any(d.tname is not None for d in plain.domains)  # over an enum: no pointer or reference columns
            rich = plain if typed else enrich(enc, plain)  # aggregate and position columns (checker/engines/param/pointer.py)
            rows = view_rows(enc, rich, samples, DEFAULT_SEED)
            new = set(range(len(plain.columns), len(rich.columns)))
            got = [a for a in mine_view(rich, rows, WIDE_ATOMS_PER_VIEW) if a.slots() & new and len(a.cond) <= 1]
            groups.append((rich, got + affine_atoms(rich, rows, AFFINE_ATOMS_PER_VIEW)))
            if plain.names and guards:  # the model's guards as conditions (checker/engines/param/guards.py)
                gv = View(plain.domains, plain.names, plain.columns + guards, plain.distinct)
                at = list(range(len(plain.columns), len(gv.columns)))
                groups.append((gv, guarded_bounds(gv, view_rows(enc, gv, samples, DEFAULT_SEED), at,
                                                  GUARDED_ATOMS_PER_VIEW)))
            tv = threshold_columns(plain)  # thresholds and anchors (checker/engines/param/threshold.py)
            if tv is not plain:
                groups.append((tv, threshold_atoms(tv, view_rows(enc, tv, samples, DEFAULT_SEED),
                                                   THRESHOLD_ATOMS_PER_VIEW)))
            rv, valid = (plain, {}) if typed else ref_view(enc, plain)  # nullable references (checker/engines/param/refs.py)
            if rv.columns != plain.columns:
                rrows = view_rows(enc, rv, samples, DEFAULT_SEED)
                groups.append((rv, ref_atoms(rv, valid, ref_fills(enc, rv), rrows, REF_ATOMS_PER_VIEW)))
            groups.append((plain, triple_atoms(plain, view_rows(enc, plain, samples, DEFAULT_SEED),
                                               TRIPLE_ATOMS_PER_VIEW)))  # checker/engines/param/triple.py
        else:
            groups = [(plain, mine_view(plain, view_rows(enc, plain, samples, DEFAULT_SEED), ATOMS_PER_VIEW))]
        for v, got in groups:
            if checks and got:
                more = view_rows(enc, v, checks, DEFAULT_SEED)
                ok = AtomTable(got).holds_all(more, np.arange(len(got)))  # numpy: Atom.holds on every row
                got = [a for a, keep in zip(got, ok.tolist()) if keep]
            out += [Candidate(v, a) for a in got]
    if enc.counters is not None:  # over counted rows, only what the counters express (counters.row_formula)
        probe = enc.state("cand.")
        out = [c for c in out if not any(d.key == enc.counters.key for d in c.view.domains)
               or _expressible(enc, c, probe)]
    return out


def _expressible(enc: ParamEncoder, c: Candidate, s: PState) -> bool:
    try:
        c.formula(enc, s)
        return True
    except Unsupported:
        return False


def _refine(fixed: "_Sub", enc: ParamEncoder, point: dict[str, int], cands: list[Candidate],
            prop: ir.Invariant | ir.TransitionProperty | str, deadline: Deadline,
            relative: "callable | None" = None, steps: int = FILTER_STEPS
            ) -> tuple[list[Candidate] | None, str, str]:
    """Property-directed: the candidates the property's proof at the fixed size `point` uses
    (`FixedSize.core`), Houdini on them with the sizes symbolic, relative induction; what
    symbolic Houdini drops (true at `point`, not for every size) leaves the pool, the pool is
    closed under induction at `point` again, and the next core is taken. Dropping a
    candidate is always sound; a proof still needs Z3 with the sizes symbolic. `prop` may be
    RANGE with `relative` the check of the error conditions (NOTE(for-all-errors)). `steps`
    bounds each fixed-size core and closing (the second round's are its filter's: its
    instance and its candidates are larger)."""
    if relative is None:
        def relative(lemmas: list[Candidate]) -> tuple[list[Candidate] | None, str]:
            return _relative(enc, lemmas, prop, deadline)  # type: ignore[arg-type]
    names = enc.pm.names
    pool = list(range(len(cands)))
    note, why = "", ""
    for round_ in range(1, MAX_ROUNDS + 1):
        core, why_not = fixed.core(pool, prop, _cap(deadline, steps))
        if core is None:  # FixedSize.core says which: not inductive there, or out of steps / time
            note += (f"; round {round_}: no proof at {_at(point, names)} relative to the {len(pool)} candidates "
                     f"left: {why_not}")
            return None, why, note
        small = sorted(core)
        kept, how = houdini(enc, [cands[k] for k in small], _cap(deadline, SYMBOLIC_STEPS))
        note += (f"; round {round_}: the {len(small)} lemmas its proof at {_at(point, names)} uses: "
                 + (how if kept is None else f"{len(kept)} inductive for all sizes"))
        if kept is None:
            return None, why, note
        used, why = relative([cands[small[k]] for k in kept])
        if used is not None:
            return used, "", note
        dropped = set(small) - {small[k] for k in kept}
        if not dropped or deadline.expired:
            return None, why, note
        got = fixed.survivors([k for k in pool if k not in dropped], _cap(deadline, steps))
        if got is None:
            return None, why, note + "; no answer closing the rest at the fixed size"
        pool = sorted(got)
    return None, why, note + f"; stopped after {MAX_ROUNDS} rounds"


class _Sub:
    """A FixedSize seen through a sub-list of its candidates (positions in `index`)."""

    def __init__(self, fixed: "FixedSize", index: list[int], assumed: Sequence[str] = ()) -> None:
        self.fixed, self.index, self.assumed = fixed, index, assumed  # assumed: proved invariants (range's core)

    def survivors(self, active: Sequence[int], deadline: Deadline) -> list[int] | None:
        got = self.fixed.survivors([self.index[k] for k in active], deadline)
        back = {v: k for k, v in enumerate(self.index)}
        return None if got is None else [back[k] for k in got]

    def core(self, active: Sequence[int], prop: ir.Invariant | ir.TransitionProperty | str,
             deadline: Deadline) -> tuple[list[int] | None, str]:
        got, why = self.fixed.core([self.index[k] for k in active], prop, deadline, self.assumed)
        back = {v: k for k, v in enumerate(self.index)}
        return (None, why) if got is None else ([back[k] for k in got], "")


def _at(point: Mapping[str, int], names: Sequence[str]) -> str:
    return ", ".join(f"{n}={point[n]}" for n in names)


def _unsat(deadline: Deadline, *formulas: z3.BoolRef) -> bool:
    sol = z3.Solver()
    deadline.apply(sol)  # NOTE(step-limits)
    sol.add(*formulas)
    return deadline.trusted(sol.check()) == z3.unsat  # NOTE(stale-interrupt)


def _relative(enc: ParamEncoder, lemmas: list[Candidate], prop: ir.Invariant | ir.TransitionProperty,
              deadline: Deadline) -> tuple[list[Candidate] | None, str]:
    """`L and P and T => P'` (a transition property: `L and T => P`) with the sizes
    symbolic, one action at a time (checker/engines/param/induct.py): the lemmas the proof uses
    (closed under induction), or None and why not."""
    s, t = enc.state("ps."), enc.state("pt.")
    inv = prop if isinstance(prop, ir.Invariant) else None
    if inv is not None:
        fixed, goal = [enc.holds(inv.expr, s)], z3.Not(enc.holds(inv.expr, t))
    else:
        fixed, goal = [], z3.Not(enc.holds(prop.expr, s, t))
    cons = Consecution(enc, s, t, [c.formula(enc, s) for c in lemmas], goal, fixed=fixed, mbqi=MBQI, tag="rel",
                       retry_steps=MBQI_RETRY_STEPS)
    ans = cons.check(range(len(lemmas)), deadline)
    if ans.verdict != "unsat":
        return None, ("not inductive relative to them" if ans.verdict == "sat"
                      else f"undecided (z3: {ans.reason})")
    used = [lemmas[k] for k in sorted(ans.core)]
    return _close(enc, used, lemmas, inv, deadline), ""


def _close(enc: ParamEncoder, used: list[Candidate], lemmas: list[Candidate], inv: ir.Invariant | None,
           deadline: Deadline) -> list[Candidate]:
    """Grow `used` by unsat cores until it is inductive on its own (with the property)."""
    s, t = enc.state("cs."), enc.state("ct.")
    fixed = [enc.holds(inv.expr, s)] if inv is not None else []
    hyps = [c.formula(enc, s) for c in lemmas]
    chosen = {id(c) for c in used}
    while True:
        cur = [c for c in lemmas if id(c) in chosen]
        if not cur:
            return cur
        goal = z3.Or(*[c.formula(enc, t, _shared_skolems(c.view)) for c in cur])  # few skolems
        cons = Consecution(enc, s, t, hyps, goal, fixed=fixed, tag="close")
        ans = cons.check(range(len(lemmas)), deadline)
        if ans.verdict != "unsat":
            return lemmas  # no answer: the whole inductive set
        grown = chosen | {id(lemmas[k]) for k in ans.core}
        if grown == chosen:
            return cur
        chosen = grown


# ------------------------------------------------------------------------------------ rendering



"""A `--for-all` run's deadlock, liveness and latency properties (issue 38: none is dropped).

NOTE(for-all-kinds): a for-all run answers every property the model declares or the run names.
Invariants, transition properties and `range` are proved for all sizes (prove.py); the other
kinds are refuted where the explicit engine finds them violated at some size (the small instances
of the first round, then the second round's instance and those above it: prove.py
`_larger_violations`), each violation with that size's replayable counterexample. Beyond that:

* `deadlock` is a safety property (a reachable state inside the constraints, not terminal, where
  no action instance is enabled or fails). It is `proved` for all sizes when Z3 shows, with the
  sizes symbolic, that no state where the run's inductive lemmas and proved invariants hold is
  stuck (`prove_deadlock`): those lemmas hold initially and are preserved by every step (the
  same argument as the `range` result's, NOTE(for-all-errors)), so no reachable state is stuck.
  Like every for-all proof it stays `proved` only when `range` is proved too (`_settle_errors`).
* liveness and latency properties are never proved for all sizes: `unknown`, saying at which
  sizes the explicit engine found no violation and what to run instead (`not_decided`). They
  count in the exit code (3), as any unknown does."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Mapping, Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.param.encode import ParamEncoder
from gpcheck.checker.engines.smt.session import DEFAULT_SEED, Deadline
from gpcheck.checker.core.verdict import Result, Verdict

if TYPE_CHECKING:
    from gpcheck.checker.engines.param.candidates import Candidate

DEADLOCK = "deadlock"
OTHER_KINDS = (DEADLOCK, "liveness", "latency")  # the kinds prove.py's lemma machinery does not prove
DEADLOCK_STEPS = 40_000_000
MBQI_RETRY_STEPS = 10_000_000
SEARCHED = 20_000  # prove.py SAMPLE_STATES: the explicit search per size  # Z3 steps for the deadlock check (NOTE(step-limits))


def stuck(enc: ParamEncoder, s: object) -> tuple[list[z3.BoolRef], list[tuple[list[z3.ExprRef], z3.BoolRef]]] | None:
    """`s` is a deadlock, with the sizes symbolic: inside the constraints, not terminal (the
    first list), and for every action and every value of its parameters neither enabled nor
    failing (the second: per action its parameter constants and "it moves" over them, to be
    read as `for all params: not moves`); None where an action's parameter is a counted row
    (checker/engines/param/counters.py), which this does not quantify over."""
    model = enc.model
    params: dict[str, list[z3.ExprRef] | None] = {}
    errors: list[tuple[str, z3.BoolRef]] = []
    steps = enc.steps(s, errors, params)  # type: ignore[arg-type]
    if any(v is None for v in params.values()):
        return None
    live: dict[str, list[z3.BoolRef]] = {}
    for name, guard, _ in steps:
        live.setdefault(name, []).append(guard)
    for name, err in errors:
        live.setdefault(name, []).append(err)
    moves = [(list(params.get(name) or []), z3.Or(*conds)) for name, conds in live.items()]
    cons = [enc.holds(c.expr, s) for c in model.constraints]  # type: ignore[arg-type]
    terminal = [enc.holds(e, s) for e in model.terminals]  # type: ignore[arg-type]
    return cons + ([z3.Not(z3.Or(*terminal))] if terminal else []), moves


def _instances(xs: list[z3.ExprRef], moves: z3.BoolRef, pool: list[z3.ExprRef]) -> z3.BoolRef:
    """`for all xs: not moves`, weakened to its instances at the ground terms `pool` (each
    parameter at every term of its sort; a term outside the parameter's domain gives a true
    instance, the domain being part of `moves`), or kept quantified past MAX_INSTANCES."""
    if not xs:
        return z3.Not(moves)
    choices = [[t for t in pool if t.sort() == x.sort()] or [x] for x in xs]
    count = 1
    for c in choices:
        count *= len(c)
    if count > MAX_INSTANCES or any(c == [x] for c, x in zip(choices, xs)):
        return z3.Not(z3.Exists(xs, moves))
    return z3.And(*[z3.Not(z3.substitute(moves, *zip(xs, combo))) for combo in itertools.product(*choices)])


def prove_deadlock(enc: ParamEncoder, lemmas: Sequence["Candidate"], invariants: Sequence[ir.Invariant],
                   deadline: Deadline) -> Result | None:
    """The `deadlock` result when Z3 shows no state where `lemmas` and `invariants` hold is
    stuck, with the sizes symbolic; None otherwise (the caller vouches that they hold initially
    and are inductive over the error-free steps: NOTE(for-all-kinds)). The query is weakened to
    instances (checker/engines/param/instantiate.py): "not terminal" skolemized, each action's "no
    parameter value moves" instantiated at the ground terms of the query and at the values of
    a parameter's small constant range, the quantified hypotheses at the query's index terms;
    an instance is implied by what it instantiates, so `unsat` proves the deadlock check."""
    from gpcheck.checker.engines.param.instantiate import Instantiator, skolemize
    from gpcheck.checker.engines.param.candidates import ENGINE, render_lemmas
    from gpcheck.checker.engines.smt.terms import subterms

    s = enc.state("dl.")
    got = stuck(enc, s)
    if got is None:
        return None
    here, moves = got
    here += [z3.Not(m) for xs, m in moves if not xs]
    here = [skolemize(z3.And(*here), "dlsk")]  # at once: one fresh constant per quantifier
    pool: dict[int, z3.ExprRef] = {}
    for e in subterms(here):  # ground integer terms: the skolems and what the state reads at them
        if z3.is_int(e) and not z3.is_quantifier(e) and _ground(e) and e.get_id() not in pool:
            pool[e.get_id()] = e
    terms_list = list(pool.values())[:MAX_POOL] + [z3.BoolVal(True), z3.BoolVal(False)]
    for v in _small_values(enc):  # a parameter's small constant range: every value
        if all(not v.eq(t) for t in terms_list):
            terms_list.append(v)
    rest = z3.And(*[_instances(xs, m, terms_list) for xs, m in moves if xs])
    inst = Instantiator(enc, [s])
    index = inst.index_terms(here + [rest])
    goal = here + [rest]  # (not skolemized: its instances share subterms, and the rewrite would not)
    used_pool: dict[int, "Candidate"] = {}
    for c in lemmas:
        used_pool.setdefault(id(c), c)
    used = list(used_pool.values())
    hyps = [inst.expand(c.formula(enc, s), index) for c in used] + [enc.holds(p.expr, s) for p in invariants]
    lits = [z3.Bool(f"dl!h{k}") for k in range(len(hyps))]
    sol = z3.Solver()
    sol.set("random_seed", DEFAULT_SEED)
    sol.set("mbqi", False)
    sol.set("core.minimize", True)
    capped = deadline.limited(DEADLOCK_STEPS)
    capped.apply(sol)  # NOTE(step-limits)
    sol.add(*enc.facts, inst.expand(enc.in_range(s), index), *goal)
    for lit, h in zip(lits, hyps):
        sol.add(z3.Implies(lit, h))
    answer = capped.trusted(sol.check(*lits))  # NOTE(stale-interrupt)
    if answer == z3.unknown and "incomplete quantifiers" in sol.reason_unknown() and not capped.expired:
        retry = capped.limited(MBQI_RETRY_STEPS)  # a quantifier left (a large or symbolic range): once with MBQI
        sol.set("mbqi", True)
        retry.apply(sol)
        answer = retry.trusted(sol.check(*lits))
    if answer != z3.unsat or deadline.out_of_time:  # only unsat proves; NOTE(wall-clock-cut)
        return None
    ids = {c.get_id() for c in sol.unsat_core()}
    core = [k for k, lit in enumerate(lits) if lit.get_id() in ids]
    n = len(used)
    kept = [used[k] for k in core if k < n]
    invs = [invariants[k - n].name for k in core if k >= n]
    names = enc.pm.names
    what = f"{len(kept)} lemmas" + (f" and the proved invariants {', '.join(invs)}" if invs else "")
    return Result(DEADLOCK, DEADLOCK, Verdict.PROVED, ENGINE,
                  reason=f"no reachable state is stuck for any {', '.join(names)}: every state where {what} "
                         f"hold has an enabled action or is terminal",
                  detail={"for_all": list(names), "invariant": render_lemmas(enc, kept) if kept else None,
                          "lemmas": len(kept), "invariants": invs})


MAX_INSTANCES = 512  # instances of one action's "no parameter value moves"; past that it stays quantified
MAX_POOL = 64  # ground terms a parameter is instantiated at
SMALL_RANGE = 8  # a parameter's constant range up to this many values: each value is a term


def _ground(e: z3.ExprRef) -> bool:
    from gpcheck.checker.engines.param.instantiate import _ground as ground

    return ground(e)


def _small_values(enc: ParamEncoder) -> list[z3.ExprRef]:
    """The values of the actions' parameter ranges whose bounds are numbers (not sizes) of
    at most SMALL_RANGE values (nvidia_streams' `priority: 0..P-1` with P fixed)."""
    out: list[z3.ExprRef] = []
    for a in enc.model.actions:
        for p in a.params:
            if isinstance(p.type, ir.BoolType):
                continue
            lo, hi = (z3.simplify(b) for b in enc.bounds(p.type))
            if z3.is_int_value(lo) and z3.is_int_value(hi):
                a_, b_ = lo.as_long(), hi.as_long()  # type: ignore[attr-defined]
                if b_ - a_ + 1 <= SMALL_RANGE:
                    out += [z3.IntVal(v) for v in range(a_, b_ + 1)]
    return out


def not_decided(model: ir.Model, name: str, names: Sequence[str], sizes: Sequence[Mapping[str, int]]) -> str:
    """Why a deadlock, liveness or latency property of a for-all run is `unknown`; `sizes`: the
    instances the explicit engine searched for a violation."""
    kind = "latency" if any(p.name == name for p in model.latencies) else "liveness"
    if name == DEADLOCK:
        how = "no inductive invariant found shows that every reachable state has an enabled action or is terminal"
    else:
        how = f"--for-all does not prove {kind} for all sizes"
    at = "; ".join(", ".join(f"{n}={p[n]}" for n in names) for p in sizes)
    return (f"{how}; not violated where the explicit engine looked ({at}; at most {SEARCHED:,} states each); "
            f"run the explicit engine at a size (gpcheck verify SPEC --const {names[0]}=K)")

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

from typing import TYPE_CHECKING, Mapping, Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.param.encode import ParamEncoder
from gpcheck.checker.smt.session import DEFAULT_SEED, Deadline
from gpcheck.checker.verdict import Result, Verdict

if TYPE_CHECKING:
    from gpcheck.checker.param.prove import Candidate

DEADLOCK = "deadlock"
OTHER_KINDS = (DEADLOCK, "liveness", "latency")  # the kinds prove.py's lemma machinery does not prove
DEADLOCK_STEPS = 40_000_000
SEARCHED = 20_000  # prove.py SAMPLE_STATES: the explicit search per size  # Z3 steps for the deadlock check (NOTE(step-limits))


def stuck(enc: ParamEncoder, s: object) -> z3.BoolRef | None:
    """`s` is a deadlock, with the sizes symbolic: inside the constraints, not terminal, and
    for every action and every value of its parameters neither enabled nor failing; None where
    an action's parameter is a counted row (checker/param/counters.py), which this does not
    quantify over."""
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
    none_moves = []
    for name, conds in live.items():
        xs = params.get(name) or []
        some = z3.Or(*conds)
        none_moves.append(z3.Not(z3.Exists(xs, some)) if xs else z3.Not(some))
    cons = [enc.holds(c.expr, s) for c in model.constraints]  # type: ignore[arg-type]
    terminal = [enc.holds(e, s) for e in model.terminals]  # type: ignore[arg-type]
    return z3.And(*cons, z3.Not(z3.Or(*terminal)) if terminal else z3.BoolVal(True), *none_moves)


def prove_deadlock(enc: ParamEncoder, lemmas: Sequence["Candidate"], invariants: Sequence[ir.Invariant],
                   deadline: Deadline) -> Result | None:
    """The `deadlock` result when Z3 shows no state where `lemmas` and `invariants` hold is
    stuck, with the sizes symbolic; None otherwise (the caller vouches that they hold initially
    and are inductive over the error-free steps: NOTE(for-all-kinds))."""
    from gpcheck.checker.param.prove import ENGINE, render_lemmas

    s = enc.state("dl.")
    goal = stuck(enc, s)
    if goal is None:
        return None
    pool: dict[int, "Candidate"] = {}
    for c in lemmas:
        pool.setdefault(id(c), c)
    used = list(pool.values())
    hyps = [c.formula(enc, s) for c in used] + [enc.holds(p.expr, s) for p in invariants]
    lits = [z3.Bool(f"dl!h{k}") for k in range(len(hyps))]
    sol = z3.Solver()
    sol.set("random_seed", DEFAULT_SEED)
    sol.set("mbqi", True)  # the goal's `for every parameter value` needs model-based instantiation
    sol.set("core.minimize", True)
    capped = deadline.limited(DEADLOCK_STEPS)
    capped.apply(sol)  # NOTE(step-limits)
    sol.add(*enc.facts, enc.in_range(s), goal)
    for lit, h in zip(lits, hyps):
        sol.add(z3.Implies(lit, h))
    if capped.trusted(sol.check(*lits)) != z3.unsat:  # NOTE(stale-interrupt); only unsat proves
        return None
    if deadline.out_of_time:  # NOTE(wall-clock-cut)
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

"""Consecution with the sizes symbolic, one action at a time, hypotheses instantiated.

`Consecution` holds one Z3 solver per action of the model: the size facts, `s` in range, the
action's step `s -> t`, the hypotheses (each behind a literal, so a check names the subset
it assumes and an unsat core says which were used) and a goal to satisfy (a violation in
`t`). Universal quantifiers in the hypotheses are replaced by their instances at the
action's and the goal's index terms (checker/engines/param/instantiate.py): the queries become
(nearly) quantifier-free, which Z3 decides where E-matching over the whole transition
relation did not answer. `unsat` for every action proves the goal unreachable in one step;
a `sat` model may be spurious (a missing instance) and only ever drops candidates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import z3

from gpcheck.checker.engines.param.encode import ParamEncoder, PState
from gpcheck.checker.engines.param.instantiate import Instantiator, skolemize
from gpcheck.checker.engines.smt.session import DEFAULT_SEED, Deadline


TRIM_ROUNDS = 3  # re-checks that shrink a core where Z3 does not minimise it (Consecution._trim)


@dataclass
class Answer:
    verdict: str  # "unsat" | "sat" | "unknown"
    core: set[int]  # unsat: the hypotheses used (indices)
    model: z3.ModelRef | None = None  # sat, or unknown with a candidate model
    reason: str = ""
    subst: list[tuple[z3.ExprRef, z3.ExprRef]] | None = None  # t -> the action's next state

    def true(self, f: z3.BoolRef) -> bool:
        """`f` (over s and t) is true in the model (t read through the action's step)."""
        assert self.model is not None
        g = z3.substitute(f, *self.subst) if self.subst else f
        return z3.is_true(self.model.eval(g, model_completion=True))


class Consecution:
    def __init__(self, enc: ParamEncoder, s: PState, t: PState, hyps: Sequence[z3.BoolRef],
                 goal: z3.BoolRef, fixed: Sequence[z3.BoolRef] = (), mbqi: bool = False,
                 seed: int = DEFAULT_SEED, tag: str = "sk", lits: Sequence[z3.BoolRef] | None = None,
                 retry_steps: int | None = None) -> None:
        """`hyps` over `s` (behind `lits`, fresh ones unless given: the goal may use them
        too), `fixed` over `s` (always assumed), `goal` over `s` and `t` (skolemized here).
        With `retry_steps` (and `mbqi` off), an action's check that E-matching leaves
        `unknown` (incomplete quantifiers) is asked once more with model-based
        instantiation on, within that many Z3 steps: sound, since only its `unsat` counts."""
        self.mbqi, self.retry_steps = mbqi, retry_steps
        # Z3's core minimisation runs outside the check, where neither the deadline nor a step
        # limit reaches (checker/engines/smt/lemmas.py); over the products of a symbolic-valued counted
        # component (checker/engines/param/symvalue.py) it ran for minutes. There the cores are trimmed
        # by ordinary checks instead (`_trim`).
        self.minimize = enc.counters is None or not enc.counters.symbolic_values()
        self.lits = list(lits) if lits is not None else [z3.Bool(f"{tag}!h{k}") for k in range(len(hyps))]
        inst = Instantiator(enc, [s, t])
        goal = skolemize(goal, tag)
        self.solvers: list[tuple[str, z3.Solver, list[tuple[z3.ExprRef, z3.ExprRef]]]] = []
        for name, guard, nxt in enc.steps(s):
            # t replaced by the action's next state; simplify beta-reduces selects of lambdas
            branch = guard
            goal_b = z3.simplify(z3.substitute(goal, *enc.substitution(t, nxt)))
            if z3.is_false(z3.simplify(guard)) or z3.is_false(goal_b):
                continue
            terms = inst.index_terms([branch, goal_b])
            sol = z3.Solver()
            sol.set("random_seed", seed)
            sol.set("mbqi", mbqi)
            sol.set("core.minimize", self.minimize)
            sol.add(*enc.facts, inst.expand(enc.in_range(s), terms), inst.expand(branch, terms), goal_b)
            sol.add(*[inst.expand(f, terms) for f in fixed])
            for lit, h in zip(self.lits, hyps):
                sol.add(z3.Implies(lit, inst.expand(h, terms)))
            self.solvers.append((name, sol, enc.substitution(t, nxt)))

    def check(self, on: set[int] | Sequence[int], deadline: Deadline) -> Answer:
        """Is the goal reachable by one step from a state satisfying the hypotheses `on`?"""
        on = set(on)
        assume = [lit if k in on else z3.Not(lit) for k, lit in enumerate(self.lits)]
        core: set[int] = set()
        for name, sol, subst in self.solvers:
            deadline.apply(sol)  # NOTE(step-limits)
            r = deadline.trusted(sol.check(*assume))  # NOTE(stale-interrupt)
            first = ""  # E-matching's reason, when MBQI was asked again
            if r == z3.unknown and self.retry_steps and not self.mbqi and not deadline.expired \
                    and "incomplete quantifiers" in sol.reason_unknown():
                first = sol.reason_unknown()
                r = self._retry(sol, assume, deadline)
            if r == z3.unsat:
                ids = {c.get_id() for c in sol.unsat_core()}
                if not self.minimize:
                    ids = self._trim(sol, assume, ids, deadline)
                core |= {k for k, lit in enumerate(self.lits) if lit.get_id() in ids}
                continue
            if r == z3.sat:
                return Answer("sat", set(), sol.model(), name, subst)
            why = deadline.why() if deadline.expired else sol.reason_unknown()
            if first:
                why = f"{first}; with MBQI: {why or 'unknown'}"
            model = None
            if "incomplete" in why:
                try:
                    model = sol.model()
                except z3.Z3Exception:
                    model = None
            return Answer("unknown", set(), model, f"{name}: {why}", subst)
        return Answer("unsat", core)

    def _trim(self, sol: z3.Solver, assume: list[z3.BoolRef], ids: set[int], deadline: Deadline) -> set[int]:
        """The core re-checked under its own assumptions while that shrinks it (each an ordinary
        check under the deadline; a check without `unsat` keeps the core in hand)."""
        for _ in range(TRIM_ROUNDS):
            deadline.apply(sol)
            if deadline.trusted(sol.check(*[a for a in assume if a.get_id() in ids])) != z3.unsat:
                break
            smaller = {c.get_id() for c in sol.unsat_core()}
            if len(smaller) >= len(ids):
                break
            ids = smaller
        return ids

    def _retry(self, sol: z3.Solver, assume: list[z3.BoolRef], deadline: Deadline) -> z3.CheckSatResult:
        """One check again with MBQI on, within `retry_steps` more Z3 steps (NOTE(step-limits))."""
        capped = deadline.limited(self.retry_steps or 0)
        sol.set("mbqi", True)
        try:
            capped.apply(sol)
            return capped.trusted(sol.check(*assume))  # NOTE(stale-interrupt)
        finally:
            sol.set("mbqi", False)

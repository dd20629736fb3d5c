"""The `range` result of a `--for-all` run: no step fails with a modelling error, for every size.

NOTE(for-all-errors): the encoding's steps (encode.py `steps`) leave out an action instance that
fails with a modelling error (`_Exec.fail_if` makes it not alive), so what is proved over them
holds on every path up to its first error. The explicit engine stops at that error and reports
it as a `range` violation, and so does pdr; before, `--for-all` said nothing of it, and a
property was `proved` for all N in a model whose steps write out of range once N >= 5. Now a
for-all property is `proved` only when the errors are shown unreachable for every size as
well: every action's error condition (encode.py `errors`), every state predicate's evaluation
error in a state and every transition property's on a step is unsatisfiable, with the sizes
symbolic, together with an inductive invariant. That invariant is the conjunction of the
lemmas Houdini kept for all sizes and of the proved properties with the lemmas of their proofs:
each of these sets holds initially and is inductive over the steps without errors, so their
conjunction holds in every state reached before an error; a state where it holds takes no
erroneous step and fails no predicate, so no error is reachable. Where this check does not
succeed, `range` is `violated` at an instance where the explicit engine finds an error, else
`unknown` saying which error could not be excluded, and a property proved over the error-free
steps is `unknown` (prove.py `_settle_errors`)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np
import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.param.encode import ParamEncoder, PState
from gpcheck.checker.engines.param.instantiate import Instantiator, skolemize
from gpcheck.checker.engines.param.mine import View
from gpcheck.checker.engines.smt.mining import SMALL_DOMAIN, Atom
from gpcheck.checker.engines.smt.session import DEFAULT_SEED, Deadline

if TYPE_CHECKING:
    from gpcheck.checker.engines.param.mine import Column
    from gpcheck.checker.engines.param.candidates import Candidate

EXCLUDE_STEPS = 120_000_000  # Z3 steps for all the error checks of one run (NOTE(step-limits))
MBQI_RETRY_STEPS = 40_000_000  # one check E-matching leaves unknown, once more with MBQI (only unsat counts)


@dataclass
class Exclusion:
    """The answer: `excluded` with the lemmas and proved invariants the checks used, or why not."""

    excluded: bool
    lemmas: list["Candidate"] = field(default_factory=list)
    invariants: list[str] = field(default_factory=list)
    why: str = ""
    checks: int = 0


def error_goals(enc: ParamEncoder, s: PState, t: PState) -> list[tuple[str, z3.BoolRef]]:
    """Every way a step from `s` can meet a modelling error (NOTE(predicate-errors) in
    spec/ir.py), each as (what fails, a formula over `s` and action parameters)."""
    model = enc.model
    out = [(f"action {name}", err) for name, err in enc.errors(s)]
    labels = {id(p.expr): f"invariant {p.name}" for p in model.invariants}
    for owner, e in model.state_predicates():
        err = z3.simplify(enc.fails(e, s))
        if not z3.is_false(err):
            out.append((labels.get(id(e)) or (f"a predicate of {owner}" if owner else "a constraint"), err))
    if model.transitions:
        for name, guard, nxt in enc.steps(s):
            sub = enc.substitution(t, nxt)
            for tp in model.transitions:
                err = z3.simplify(enc.fails(tp.expr, s, t))
                if not z3.is_false(err):
                    out.append((f"transition {tp.name} on {name}", z3.And(guard, z3.substitute(err, *sub))))
    return out


def exclude_errors(enc: ParamEncoder, lemmas: Sequence["Candidate"], invariants: Sequence[ir.Invariant],
                   deadline: Deadline, seed: int = DEFAULT_SEED) -> Exclusion:
    """Is every error goal unsatisfiable in a state (inside the value ranges) where `lemmas`
    and `invariants` hold, with the sizes symbolic? The caller vouches that they are, together,
    an inductive invariant over the error-free steps that holds initially. Quantified
    hypotheses are instantiated at each goal's index terms (checker/engines/param/instantiate.py: a
    weakening, so `unsat` proves and `sat` only fails to)."""
    s, t = enc.state("es."), enc.state("et.")
    goals = error_goals(enc, s, t)
    if not goals:
        return Exclusion(True)
    hyps = [c.formula(enc, s) for c in lemmas] + [enc.holds(p.expr, s) for p in invariants]
    lits = [z3.Bool(f"err!h{k}") for k in range(len(hyps))]
    facts = ghost_bounds(enc, s)
    inst = Instantiator(enc, [s, t])
    budget = deadline.limited(EXCLUDE_STEPS)
    core: set[int] = set()
    checks = 0
    for label, goal in goals:
        g = _skolem_exists(skolemize(goal, "errsk"))
        terms = inst.index_terms([g])
        sol = z3.Solver()
        sol.set("random_seed", seed)
        sol.set("mbqi", False)
        sol.set("core.minimize", True)
        sol.add(*enc.facts, inst.expand(enc.in_range(s), terms), g, *[inst.expand(f, terms) for f in facts])
        for lit, h in zip(lits, hyps):
            sol.add(z3.Implies(lit, inst.expand(h, terms)))
        checks += 1
        budget.apply(sol)  # NOTE(step-limits)
        r = budget.trusted(sol.check(*lits))  # NOTE(stale-interrupt)
        if r == z3.unknown and "incomplete quantifiers" in sol.reason_unknown() and not budget.expired:
            retry = budget.limited(MBQI_RETRY_STEPS)
            sol.set("mbqi", True)
            retry.apply(sol)
            r = retry.trusted(sol.check(*lits))
        if r == z3.unsat:
            ids = {c.get_id() for c in sol.unsat_core()}
            core |= {k for k, lit in enumerate(lits) if lit.get_id() in ids}
            continue
        what = (f"{label} can fail in a state where the {len(hyps)} lemmas and proved invariants hold"
                if r == z3.sat else f"{label}: undecided (z3: {budget.why() if budget.expired else sol.reason_unknown()})")
        return Exclusion(False, why=what, checks=checks)
    n = len(lemmas)
    return Exclusion(True, [lemmas[k] for k in sorted(core) if k < n],
                     [invariants[k - n].name for k in sorted(core) if k >= n], checks=checks)


def _skolem_exists(f: z3.BoolRef) -> z3.BoolRef:
    """`f` with its existential quantifiers in positive positions (under `and`/`or` only)
    replaced by fresh constants: equisatisfiable, and the constants become index terms (an
    `all` fold's error, `exists x in range: x indexes past the array`)."""
    counter = itertools.count()

    def go(e: z3.ExprRef) -> z3.ExprRef:
        if z3.is_quantifier(e) and e.is_exists():
            consts = [z3.Const(f"errex!{next(counter)}_{e.var_name(i)}", e.var_sort(i)) for i in range(e.num_vars())]
            return go(z3.substitute_vars(e.body(), *reversed(consts)))
        if z3.is_and(e):
            return z3.And(*[go(c) for c in e.children()])
        if z3.is_or(e):
            return z3.Or(*[go(c) for c in e.children()])
        return e

    return go(f)  # type: ignore[return-value]


def ghost_bounds(enc: ParamEncoder, s: PState) -> list[z3.BoolRef]:
    """For each exact `sum`/`count` ghost counter whose terms are never negative (and never fail
    inside its range): the counter is
    at least each of its terms, `all x in lo..hi: ghost >= f(a[x])` (true in every reachable
    state, where the counter is exact: encode.py `Ghost`). The encoding keeps the counter as one
    integer, so without this `free + (sum s: held[s]) == SLOTS` says nothing of one `held[s]`,
    and a write `held[s] = held[s] + 1` under `free > 0` could not be shown inside `0..SLOTS`."""
    from gpcheck.checker.engines.param.encode import range_binder

    out: list[z3.BoolRef] = []
    for k, g in enc.ghosts.items():
        arr = s.vals.get(g.var)
        if not g.exact_init or not isinstance(arr, z3.ExprRef):
            continue
        elem_t = enc.model.vars[g.var].type.elem  # type: ignore[attr-defined]
        probe = z3.Solver()
        probe.set("rlimit", 1_000_000)
        probe.add(*enc.facts, g.lo <= g.binder, g.binder <= g.hi,
                  enc.in_type(elem_t, z3.Select(g.arr, g.binder)), z3.Or(g.body < 0, g.err))  # type: ignore[operator]
        if probe.check() != z3.unsat:
            continue
        x = range_binder("gx", g.lo, g.hi)
        term = z3.substitute(g.body, (g.arr, arr), (g.binder, x))
        out.append(z3.ForAll([x], z3.Implies(z3.And(g.lo <= x, x <= g.hi), s.ghosts[k] >= term)))
    return out


NEGATED_ATOMS_PER_VIEW = 200  # error_candidates: bounds under `e != v`, per view


def error_candidates(enc: ParamEncoder, samples: list[tuple[dict[str, int], list[dict]]],
                     seed: int = DEFAULT_SEED) -> list["Candidate"]:
    """Candidates the error checks may need and the property templates do not propose:
    difference bounds of two int columns (a named constant among them) under an element
    that is *not* some value, `ws[x][y] != Pending implies rptr[x] - cp_wptr[x] <= -1` (a
    dispatched wave's queue has a packet at its read index, so `ops[q][rptr[q]][w]` stays
    inside the array: cwsr's `step`). The templates' conditions are equalities, and the three
    equalities Live, Saved, Done are each not inductive alone. Only proposals: Z3 decides."""
    from gpcheck.checker.engines.param.mine import view_rows, views
    from gpcheck.checker.engines.param.candidates import Candidate

    out: list[Candidate] = []
    for plain in views(enc):
        if not plain.names:
            continue
        base = list(plain.columns)
        everywhere = frozenset(range(len(plain.names)))
        negs: list[tuple[int, int]] = []  # (column, value) of each new negation column
        cols = list(base)
        rows = view_rows(enc, plain, samples, seed)
        if len(rows) == 0:
            continue
        for i, c in enumerate(base):
            vals = np.unique(rows[:, i])
            if c.kind != "elem" or c.uses != everywhere or c.consts or not isinstance(c.type, ir.EnumType) \
                    or not 2 < len(vals) <= SMALL_DOMAIN:
                continue
            for v in vals.tolist():
                cols.append(_negation(c, int(v)))
                negs.append((i, int(v)))
        if not negs:
            continue
        view = View(plain.domains, plain.names, cols, plain.distinct)
        extra = np.stack([(rows[:, i] != v).astype(np.int64) for i, v in negs], axis=1)
        allrows = np.concatenate([rows, extra], axis=1)
        ints = [i for i, c in enumerate(base) if isinstance(c.type, ir.IntType) and c.kind in ("elem", "scalar", "const")]
        got: list[Atom] = []
        for k in range(len(negs)):
            g = len(base) + k
            sub = allrows[allrows[:, g] == 1]
            if len(sub) == 0:
                continue
            for a, b in itertools.permutations(ints, 2):
                if base[a].kind == "const" or not (base[a].uses or base[b].uses):
                    continue
                d, glob = sub[:, a] - sub[:, b], allrows[:, a] - allrows[:, b]
                k_ = int(d.max())
                if k_ < int(glob.max()) and abs(k_) <= 1:
                    got.append(Atom(((g, 1),), "le", ((1, a), (-1, b)), k_))
        out += [Candidate(view, a) for a in got[:NEGATED_ATOMS_PER_VIEW]]
    return out


def _negation(c: "Column", v: int) -> "Column":
    """A bool column `c != v` (an enum element column, `v` a member's number)."""
    from gpcheck.checker.engines.param.mine import Column

    member = ir.format_scalar(c.type, v)  # type: ignore[arg-type]
    text = f"{c.name} != {member}"

    def eq_text(val: int, positive: bool) -> str:
        return text if bool(val) == positive else f"{c.name} == {member}"

    return Column(text, ir.BoolType(), "guard", lambda s, xs: z3.Not(c.term(s, xs) == v),
                  lambda d, consts, ix: int(c.value(d, consts, ix) != v), eq_text,
                  concrete=(lambda consts, ix, slot: z3.Not(c.concrete(consts, ix, slot) == v))  # type: ignore[misc]
                  if c.concrete is not None else None, uses=c.uses)

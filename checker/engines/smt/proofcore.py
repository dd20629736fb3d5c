"""Proof cores: the model assumptions an inductive proof used (NOTE(proof-core)).

NOTE(proof-core): every SMT proof is, in the end, an inductive argument: pdr's invariant (the
property with the mined lemmas it is inductive relative to, the reachable-set certificate, or
Spacer's invariant, each strengthened by the lemmas) and k-induction's (the property
k-inductive relative to the auxiliary invariants and the properties proved before it). The
proof core of such a proof is the smallest set of declared assumptions (NOTE(assumptions) in
spec/ir.py) under which the same argument still goes through. It is found over one encoding of
the model where each assumption's guards and initial-state filter sit behind an indicator
literal (`Encoder(relax=...)`): a set of assumptions is the literals of its members true and the
others false, i.e. the model without the others. For one set, the argument is re-checked:

  * the candidates (the proof's lemmas, certificate or invariant) go through Houdini: the
    largest subset that is initial and inductive in that model (a candidate that needed a dropped
    assumption falls out, and with it only what needs it); one Houdini per set of assumptions and
    candidates, shared by the properties whose proofs rest on the same candidates;
  * the property is then k-inductive relative to the survivors for the proof's k (k = 1 for
    pdr): its base cases (no violation within k-1 steps of an initial state) and its inductive
    step (a loop-free path of k steps where the survivors and the property hold, then a
    violation), with the properties proved before it assumed where their own cores lie inside
    the set (k-induction's lemmas).

Dropping assumptions only adds behaviours, so an argument that holds without some of them holds
for the model with all of them: for invariants, transition properties, `range` and covers. Not
for `deadlock`: a dropped guard enables more steps, so the model without it may lack a deadlock
the model has. A deadlock is therefore always the model's own (every assumption's guards in force
in the deadlock predicate), and only the reachable states are those of the model without the
dropped assumptions.

Each assumption is dropped in turn, in declaration order, when the argument survives without
it; what remains is the core: each of its members is needed by this proof (the argument fails
without it, the others kept), and a proof that needs none gets an empty core. A re-check that
Z3 does not answer within the core's step budget keeps the assumption (it may be needed); when
the argument cannot be re-checked with every assumption in force (a k-induction proof whose
simple-path argument Z3 does not answer again in budget), there is no core and the caller falls
back on running the engine again without each assumption (NOTE(assumption-use)).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.core import budget
from gpcheck.checker.engines.smt.encode import Encoder, State
from gpcheck.checker.engines.smt.props import SafetyProp, bad, ok
from gpcheck.checker.engines.smt.session import Deadline
from gpcheck.checker.engines.smt.terms import mk_and, mk_not, mk_or

TAG = "pdr."  # the pdr system's state symbols: pdr's lemmas, certificate and invariants read them as they are
CORE_STEPS = 40_000_000  # one proof core's re-checks (NOTE(step-limits)): about 5 s of Z3


@dataclass
class ProofCore:
    """The relaxed encoding of one model, shared by the cores of all its properties."""

    model: ir.Model
    lits: dict[str, z3.BoolRef] = field(init=False)
    enc: Encoder = field(init=False)
    _houdini: dict[tuple[frozenset[str], tuple[int, ...]], list[int] | None] = field(init=False, default_factory=dict)
    _frames_cache: dict[tuple[object, ...], tuple[z3.Solver, z3.Solver]] = field(init=False, default_factory=dict)
    _keep: list[object] = field(init=False, default_factory=list)  # the cached keys' terms, kept alive

    def __post_init__(self) -> None:
        self.lits = {a.name: z3.Bool(f"assume!{a.name}") for a in self.model.assumptions}
        self.enc = Encoder(self.model, relax=self.lits)

    def state(self, j: int) -> State:
        return self.enc.state(j, TAG)

    def _facts(self, on: frozenset[str]) -> list[z3.BoolRef]:
        """The model with the assumptions `on` and without the others."""
        return [lit if name in on else mk_not(lit) for name, lit in self.lits.items()]

    def core(self, p: SafetyProp, candidates: Sequence[z3.BoolRef], deadline: Deadline, k: int = 1,
             lemmas: Sequence[tuple[SafetyProp, frozenset[str]]] = ()) -> list[str] | None:
        """NOTE(proof-core): the assumptions the proof of `p` uses: k-induction at `k` relative to
        the `candidates` (formulas over `state(0)`) that stay inductive, and to the `lemmas` (each
        with the core it was proved under). None when the argument does not re-check with every
        assumption in force."""
        names = [a.name for a in self.model.assumptions]
        share = deadline.limited(CORE_STEPS)
        # the candidates alone (shared by every property of the proof: one Houdini per set of
        # assumptions); the property itself is then inductive relative to the survivors
        cands = _conjuncts(candidates)
        on = frozenset(names)
        if self._proves(p, cands, on, k, lemmas, share) is not True:
            return None
        for a in names:
            budget.poll()  # NOTE(time-limit)
            if self._proves(p, cands, on - {a}, k, lemmas, share) is True:
                on = on - {a}
        return [a for a in names if a in on]

    def _proves(self, p: SafetyProp, cands: list[z3.BoolRef], on: frozenset[str], k: int,
                lemmas: Sequence[tuple[SafetyProp, frozenset[str]]], deadline: Deadline) -> bool | None:
        kept = self.houdini(cands, on, deadline)
        if kept is None:
            return None
        inv = [cands[i] for i in kept]
        usable = [q for q, used in lemmas if used <= on]
        return self._k_inductive(p, inv, on, k, usable, deadline)

    def houdini(self, cands: list[z3.BoolRef], on: frozenset[str], deadline: Deadline) -> list[int] | None:
        """The positions of the largest subset of `cands` initial and inductive in the model with
        the assumptions `on` only; None without an answer."""
        key = (on, tuple(c.get_id() for c in cands))
        if key in self._houdini:
            return self._houdini[key]
        self._keep.append(cands)
        s0, s1 = self.state(0), self.state(1)
        facts = self._facts(on)
        active = list(range(len(cands)))
        sol = _solver(deadline, *facts, self.enc.in_range(s0), *self.enc.init_slots(s0))
        out: list[int] | None = None
        while active:  # initiation
            r = _check(sol, deadline, mk_or(*(mk_not(cands[i]) for i in active)))
            if r is None:
                self._houdini[key] = None
                return None
            if r is True:
                break
            active = [i for i in active if z3.is_true(r.eval(cands[i], model_completion=True))]
        nxt = [z3.substitute(c, *zip(s0, s1)) for c in cands]
        ind = [z3.Bool(f"core!{i}") for i in range(len(cands))]
        sol = _solver(deadline, *facts, self.enc.in_range(s0), self.enc.in_range(s1),
                      self.enc.trans(s0, s1, 0, TAG), *(z3.Implies(ind[i], cands[i]) for i in range(len(cands))),
                      mk_or(*(mk_and(ind[i], mk_not(nxt[i])) for i in range(len(cands)))))
        while active:  # consecution
            budget.poll()  # NOTE(time-limit)
            on_ = set(active)
            deadline.apply(sol)  # NOTE(step-limits)
            r0 = deadline.trusted(sol.check(*(ind[i] if i in on_ else mk_not(ind[i]) for i in range(len(cands)))))
            if r0 == z3.unsat:
                break
            if r0 != z3.sat:
                self._houdini[key] = None
                return None
            m = sol.model()
            kept = [i for i in active if z3.is_true(m.eval(nxt[i], model_completion=True))]
            assert len(kept) < len(active), "a counterexample to induction that drops nothing"
            active = kept
        out = active
        self._houdini[key] = out
        return out

    def _k_inductive(self, p: SafetyProp, inv: list[z3.BoolRef], on: frozenset[str], k: int,
                     lemmas: Sequence[SafetyProp], deadline: Deadline) -> bool | None:
        """`p`'s base cases to depth k-1 and its inductive step at k, in the model with the
        assumptions `on`, the invariants `inv` (over state 0) and `lemmas` assumed in every
        state of the step: True proved, False not, None no answer."""
        enc = self.enc
        path = [self.state(j) for j in range(k + 1)]
        on_step = p.kind == "transition" or (p.kind == "range" and bool(self.model.transitions))
        base, step = self._frames(on, inv, k, on_step)
        # base cases: no violation within k-1 steps of an initial state (the invariants hold there)
        r = _check(base, deadline, mk_or(*(self._bad(p, path, j) for j in range(k))))
        if r is not True:
            return None if r is None else False
        # the inductive step: a loop-free path of k steps, p and the invariants holding, then a violation
        extra = [self._ok(q, path, j) for q in lemmas for j in range(k + 1) if j >= q.first]
        extra += [self._ok(p, path, j) for j in range(p.first, k)]
        r = _check(step, deadline, mk_and(*extra, self._bad(p, path, k)))
        return None if r is None else (r is True)

    def _frames(self, on: frozenset[str], inv: list[z3.BoolRef], k: int, on_step: bool) -> tuple[z3.Solver, z3.Solver]:
        """The base-case and inductive-step solvers of one set of assumptions, invariants, k and
        path shape, built once and shared by the properties (each checks in its own frame)."""
        key = (on, tuple(f.get_id() for f in inv), k, on_step)
        hit = self._frames_cache.get(key)
        if hit is not None:
            return hit
        self._keep.append(inv)
        enc = self.enc
        facts = self._facts(on)
        path = [self.state(j) for j in range(k + 1)]
        at = [inv] + [[z3.substitute(f, *zip(path[0], path[j])) for f in inv] for j in range(1, k + 1)]
        base = [*facts, *enc.init_slots(path[0]), *(enc.in_range(s) for s in path[:k])]
        base += [enc.trans(path[j], path[j + 1], j, TAG) for j in range(k - 1)]
        base += [f for j in range(k) for f in at[j]]
        step = [*facts, *(enc.in_range(s) for s in path)]
        step += [enc.trans(path[j], path[j + 1], j, TAG) for j in range(k)]
        step += [f for j in range(k + 1) for f in at[j]]
        last = k if on_step else k + 1  # a step property's violation may step back to an earlier state
        step += [mk_not(enc.equal_states(path[i], path[j])) for j in range(last) for i in range(j)]
        out = (_solver(Deadline(None), *base), _solver(Deadline(None), *step))
        self._frames_cache[key] = out
        return out

    def _bad(self, p: SafetyProp, path: Sequence[State], j: int) -> z3.BoolRef:
        """`p` violated at position j. A deadlock is one of the model with every assumption in
        force: dropping a guard enables more steps, so a model without an assumption may be free
        of a deadlock the model has; only its reachable states may grow (which is sound to
        over-approximate), never its deadlocks shrink."""
        f = bad(self.enc, p, path, j)
        return self._all_guards(f) if p.kind == "deadlock" else f

    def _ok(self, p: SafetyProp, path: Sequence[State], j: int) -> z3.BoolRef:
        f = ok(self.enc, p, path, j)
        return self._all_guards(f) if p.kind == "deadlock" else f

    def _all_guards(self, f: z3.BoolRef) -> z3.BoolRef:
        return z3.substitute(f, *((lit, z3.BoolVal(True)) for lit in self.lits.values())) if self.lits else f


def _conjuncts(fs: Sequence[z3.BoolRef]) -> list[z3.BoolRef]:
    """The formulas split at their top-level `and`s (Houdini keeps what it can of each), each once."""
    out: dict[int, z3.BoolRef] = {}
    todo = list(reversed(fs))
    while todo:
        f = todo.pop()
        if z3.is_and(f):
            todo.extend(reversed(f.children()))  # type: ignore[arg-type]
        elif not z3.is_true(f):
            out.setdefault(f.get_id(), f)
    return list(out.values())


def _solver(deadline: Deadline, *facts: z3.BoolRef) -> z3.Solver:
    sol = z3.Solver()
    deadline.apply(sol)  # NOTE(step-limits)
    sol.add(*facts)
    return sol


def _check(sol: z3.Solver, deadline: Deadline, goal: z3.BoolRef) -> "bool | z3.ModelRef | None":
    """True: `goal` is unsat with what `sol` holds; a model where it holds; None: no answer."""
    budget.poll()  # NOTE(time-limit)
    deadline.apply(sol)
    sol.push()
    try:
        sol.add(goal)
        r = deadline.trusted(sol.check())
        if r == z3.unsat:
            return True
        return sol.model() if r == z3.sat else None
    finally:
        sol.pop()

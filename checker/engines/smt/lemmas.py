"""Invariants mined from the explicit reachable states and proved inductive by Z3 (Houdini).

Spacer and k-induction spend most of their time rediscovering facts a breadth-first search
shows at a glance: `pc <= B`, `busy implies rptr >= 1`, `rptr == 1 and ws[0] == Live implies
ops[1][0] == pc[0]`. This module

1. explores the instance explicitly (gpmodel, capped: a partial sample only weakens the
   filter, never soundness),
2. enumerates candidate atoms over the state slots that hold in every sampled state: ranges,
   excluded values, differences and sums of two counters, and the same under one or two
   conditions `slot == value` (`checker/engines/smt/mining.py`),
3. keeps the largest subset that Z3 shows holds initially and is closed under every action
   path (Houdini: a counterexample to induction drops every candidate false in its
   successor; repeated until the check is unsat),

and then proves each property *relative to* that invariant L: an invariant P when `Init => P`
and `L and P and T => P'` are unsat-checked by Z3, a transition property when `L and T =>
prop`, `range` when no path fails from an L-state, `deadlock` when no L-state is stuck. Each
property is its own proof obligation; only Z3's answers decide (the sample never does).
The printed invariant is the property with the lemmas its proof used (unsat cores, closed
under induction), so a user can paste it into the model and re-check it."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, Collection, Sequence

import numpy as np

import z3

from gpcheck.checker.core import budget
from gpcheck.checker.engines.smt.mining import Atom, AtomTable, mine_atoms, render_atom
from gpcheck.checker.engines.smt.session import DEFAULT_SEED, Deadline
from gpcheck.checker.engines.smt.terms import mk_and, mk_eq, mk_not, mk_or, slot_value

if TYPE_CHECKING:
    from gpcheck.checker.engines.smt.pdr import _System

MAX_CANDIDATES = 30_000
# NOTE(hopeless-houdini): a Houdini that cannot finish within its step budget leaves no lemmas
# (the active set is not inductive until the end), so its steps are lost: reef_rewind's pdr spent
# its whole 4 M (2.4 s of its 6 s of CPU) before the certificate proved every property anyway.
# Houdini's steps grow with candidates x action paths; measured on the library (fresh processes,
# whole Houdini): 17 (nv_query_group) to 90 (cwsr) steps per candidate and path, reef_rewind 20
# (11.7 M for 4,333 x 138). One that needs more than its budget even at HOUDINI_MIN_STEPS_PER_CELL
# (about half the fewest measured) is not started: the same "no lemmas" as running out, without
# spending the budget first. Deterministic (counts, no clock). reef_rewind: 6.0 M at the least
# against 4 M; the next largest, nvidia_tsg, 1.2 M (it finishes in 3.6 M).
HOUDINI_MIN_STEPS_PER_CELL = 10
FORWARD_STATES = 256  # Houdini: states explored from each counterexample to induction
MUTATE = 32  # Houdini: one-slot mutants of a counterexample to induction explored from, at most
MUTANT_FORWARD = 8  # states explored from each such mutant
MUTANT_VALUES = 16  # a slot's every value is tried up to this many; beyond, its ends and s's neighbours


class _Checker:
    """One solver over (s, t): `Trans(s, t)` is some action path from s to t; each atom is
    assumed in s behind an indicator literal, so the checks differ only in assumptions."""

    def __init__(self, system: "_System", atoms: list[Atom], seed: int,
                 within: "tuple[_Checker, Sequence[int]] | None" = None) -> None:
        """`within`: another checker of the same system and some of its atoms' positions,
        whose terms (and transition relation) are reused instead of built again."""
        self.system = system
        self.seed = seed
        enc = system.enc
        self.s = system.s
        self.t = enc.state(1, "lem.")
        self.atoms = atoms
        self.lits = [z3.Bool(f"lem!{k}") for k in range(len(atoms))]
        if within is not None:
            base, keep = within
            self.now = [base.now[k] for k in keep]
            self.nxt = [base.nxt[k] for k in keep]
        else:
            self.now = [a.z3(self.s) for a in atoms]
            rename = _renamer(self.s, self.t)
            self.nxt = [rename(f) for f in self.now]  # the same terms as a.z3(self.t), built in C
        self.solver = z3.Solver()
        self.solver.set("random_seed", seed)
        rng = mk_and(*system.slot_rng)
        self.solver.add(rng)
        for lit, f in zip(self.lits, self.now):
            self.solver.add(z3.Implies(lit, f))
        self.trans = within[0].trans if within is not None else mk_or(
            *(mk_and(c.guard, *(mk_eq(tv, nv) for tv, nv in zip(self.t, c.next)))
              for c in system.clauses if not z3.is_false(c.guard)))

    def assumptions(self, active: Sequence[int]) -> list[z3.BoolRef]:
        on = set(active)
        return [lit if k in on else mk_not(lit) for k, lit in enumerate(self.lits)]

    def check(self, deadline: Deadline, extra: Sequence[z3.BoolRef], active: Sequence[int]) -> z3.CheckSatResult:
        deadline.apply(self.solver)  # NOTE(step-limits)
        self.solver.push()
        try:
            for f in extra:
                self.solver.add(f)
            r = deadline.trusted(self.solver.check(*self.assumptions(active)))
            self._core = set(self.solver.unsat_core()) if r == z3.unsat else None
            return r
        finally:
            self.solver.pop()

    def core(self) -> set[int]:
        assert self._core is not None
        ids = {lit.get_id(): k for k, lit in enumerate(self.lits)}
        return {ids[c.get_id()] for c in self._core if c.get_id() in ids}


def _renamer(src: Sequence[z3.ExprRef], dst: Sequence[z3.ExprRef]) -> "Callable[[z3.BoolRef], z3.BoolRef]":
    """f -> f with src[i] replaced by dst[i], the pairs marshalled once (z3.substitute
    re-marshals every pair on every call)."""
    n = len(src)
    frm, to = (z3.Ast * n)(), (z3.Ast * n)()
    for i, (a, b) in enumerate(zip(src, dst)):
        frm[i], to[i] = a.as_ast(), b.as_ast()
    ctx = src[0].ctx if n else z3.main_ctx()

    def rename(f: z3.BoolRef) -> z3.BoolRef:
        if not n:
            return f
        return z3.BoolRef(z3.Z3_substitute(ctx.ref(), f.as_ast(), n, frm, to), ctx)

    return rename


def houdini(ck: _Checker, candidates: list[int], deadline: Deadline,
            successors: "Callable[[tuple[int, ...]], list[tuple[int, ...]]]",
            *, known: "Collection[tuple[int, ...]]" = (), forward: int = 0,
            table: "AtomTable | None" = None) -> "list[int] | None":
    """The largest subset of `candidates` that holds initially and is inductive; None when Z3
    does not answer in time (then none of them is assumed). A counterexample to induction
    (s, t) drops the candidates false in t, and in every state the interpreter's `successors`
    lead to from s, up to `forward` of them breadth-first (at least s's own successors),
    skipping the `known` states (reachable ones, where every candidate holds). That is exact,
    not a heuristic: s satisfies every active candidate, so it satisfies the largest
    inductive subset F, and then so does every state reachable from s; a candidate false in
    one of them is not in F. The same holds for any state that satisfies every active
    candidate: with `forward`, s's one-slot mutants that do (numpy, `AtomTable`) are explored
    from too. Each Z3 round so drops what many rounds of single CTIs would (reef_rewind: 421
    rounds became about 70, the same 590 lemmas). `table` evaluates the atoms in bulk
    (`holds_all`, `rows_satisfying`); by default an AtomTable when they are all `Atom`s."""
    atoms = ck.atoms
    if table is None and all(isinstance(a, Atom) for a in atoms):
        table = AtomTable(atoms)  # type: ignore[arg-type]

    def surviving(active: list[int], posts: list[tuple[int, ...]]) -> list[int]:
        if table is None:
            return [k for k in active if all(atoms[k].holds(t) for t in posts)]
        which = np.asarray(active, dtype=np.int64)
        ok = table.holds_all(np.asarray(posts, dtype=np.int64), which)
        return [int(k) for k in which[ok]]

    active = list(candidates)
    # initiation (its own solver: the checker's lits imply the atoms in s)
    init = mk_and(*ck.system.init, *ck.system.slot_rng)
    while active:
        budget.poll()  # NOTE(time-limit)
        solver = _solver(ck.seed, deadline)
        solver.add(init, mk_or(*(mk_not(ck.now[k]) for k in active)))
        r = deadline.trusted(solver.check())
        if r == z3.unsat:
            break
        if r != z3.sat:
            return None
        active = surviving(active, [_state(solver.model(), ck.s)])
    # consecution: one incremental solver, the candidates switched by assumptions
    solver = _solver(ck.seed, deadline)
    solver.add(*ck.system.slot_rng, ck.trans)
    for k in candidates:
        solver.add(z3.Implies(ck.lits[k], ck.now[k]))
    solver.add(mk_or(*(mk_and(ck.lits[k], mk_not(ck.nxt[k])) for k in candidates)))
    on = set(active)
    solver.add(*(mk_not(ck.lits[k]) for k in candidates if k not in on))  # dropped at initiation
    while active:
        budget.poll()  # NOTE(time-limit)
        deadline.apply(solver)  # NOTE(step-limits)
        r = deadline.trusted(_check_lits(solver, [ck.lits[k] for k in active]))
        if r == z3.unsat:
            break
        if r != z3.sat:
            return None
        model = solver.model()
        cti = _state(model, ck.s)
        posts = [_state(model, ck.t)] + _forward(cti, successors, known, forward)
        if table is not None and forward and MUTATE:  # more states where every active candidate holds
            muts = _mutants(cti, ck.system.enc.slots)
            good = muts[table.rows_satisfying(muts, np.asarray(active, dtype=np.int64))]
            for row in good[:MUTATE]:
                u = tuple(int(x) for x in row)
                if u not in known:
                    posts += _forward(u, successors, known, MUTANT_FORWARD)
        kept = surviving(active, posts)
        assert len(kept) < len(active), "a counterexample to induction that drops nothing"
        gone = set(active).difference(kept)
        solver.add(*(mk_not(ck.lits[k]) for k in sorted(gone)))  # dropped for good
        active = kept
    return active


def _mutants(s: tuple[int, ...], slots: Sequence[object]) -> np.ndarray:
    """Every state that differs from s in one slot (within the slot's type)."""
    from gpcheck.spec import ir

    rows = []
    for i, sl in enumerate(slots):
        t = sl.type  # type: ignore[attr-defined]
        if isinstance(t, ir.IntType):
            if not t.bounded:
                continue
            dom: "Sequence[int]" = range(t.lo, t.hi + 1)
            if len(dom) > MUTANT_VALUES:  # a wide range: its ends and the neighbours of s's value
                dom = sorted({t.lo, t.hi, max(t.lo, s[i] - 1), min(t.hi, s[i] + 1)})
        else:
            dom = range(2) if isinstance(t, ir.BoolType) else range(len(t.members))
        for v in dom:
            if v != s[i]:
                r = list(s)
                r[i] = v
                rows.append(r)
    return np.asarray(rows, dtype=np.int64).reshape(len(rows), len(s))


def _forward(s: tuple[int, ...], successors: "Callable[[tuple[int, ...]], list[tuple[int, ...]]]",
             known: "Collection[tuple[int, ...]]", limit: int) -> list[tuple[int, ...]]:
    """The states reachable from s in one or more steps, breadth-first: all of s's successors,
    then more until `limit` states were collected; `known` states are neither kept nor
    expanded."""
    out: list[tuple[int, ...]] = []
    seen = {s}
    frontier = [s]
    first = True
    while frontier and (first or len(out) < limit):
        nxt = []
        for u in frontier:
            for v in successors(u):
                if v in seen or v in known:
                    continue
                seen.add(v)
                out.append(v)
                nxt.append(v)
            if not first and len(out) >= limit:
                break
        frontier, first = nxt, False
    return out


def _check_lits(solver: z3.Solver, lits: Sequence[z3.BoolRef]) -> z3.CheckSatResult:
    """`solver.check(*lits)` for Boolean constants, without z3py's per-assumption sort cast
    (with thousands of candidates' literals it was a tenth of Houdini's time)."""
    arr = (z3.Ast * len(lits))()
    for i, lit in enumerate(lits):
        arr[i] = lit.as_ast()
    return z3.CheckSatResult(z3.Z3_solver_check_assumptions(solver.ctx.ref(), solver.solver, len(lits), arr))


def _solver(seed: int, deadline: Deadline) -> z3.Solver:
    solver = z3.Solver()
    solver.set("random_seed", seed)
    deadline.apply(solver)  # NOTE(step-limits)
    return solver


def _state(model: z3.ModelRef, terms: Sequence[z3.ExprRef]) -> tuple[int, ...]:
    return tuple(slot_value(t, model.eval(t, model_completion=True)) for t in terms)


def _successors(cm: object) -> "Callable[[tuple[int, ...]], list[tuple[int, ...]]]":
    """Every successor the interpreter gives a state (instances failing with a modelling
    error skipped; a state outside the constraints has none)."""
    from gpcheck.gpmodel import ModelError

    def succ(s: tuple[int, ...]) -> list[tuple[int, ...]]:
        try:
            if cm.model.constraints and not cm.in_constraints(s):  # type: ignore[attr-defined]
                return []
            return [t for _, t in cm.successors(s)]  # type: ignore[attr-defined]
        except ModelError:
            out = []
            for iid in range(len(cm.instances)):  # type: ignore[attr-defined]
                try:
                    t = cm.step(iid, s)  # type: ignore[attr-defined]
                except ModelError:
                    continue
                if not isinstance(t, int):
                    out.append(t)
            return out

    return succ


def closed_core(ck: _Checker, active: Sequence[int], seed: set[int], assumed: list[z3.BoolRef],
                deadline: Deadline, trim: int = 0) -> "list[int] | None":
    """A subset of the active lemmas containing `seed` that is inductive on its own (with the
    `assumed` property): grown by the unsat cores of its own consecution check; None when Z3
    gives no answer. Each core is minimised (`small_core` with `trim` rounds first)."""
    used = set(seed)
    while True:
        keep = sorted(used)
        if not keep:
            return keep
        bad_next = mk_or(*(mk_not(ck.nxt[k]) for k in keep))
        core = small_core(ck, deadline, [*assumed, ck.trans, bad_next], active, trim)
        if core is None:
            return None
        grown = used | core
        if grown == used:
            return keep
        used = grown


TRIM_ROUNDS = 4  # --for-all's fixed-size cores: re-checks under the last core alone before minimising


def small_core(ck: _Checker, deadline: Deadline, extra: Sequence[z3.BoolRef], active: Sequence[int],
               trim: int = TRIM_ROUNDS) -> "set[int] | None":
    """The lemmas of `active` an unsat check of `extra` uses, made small (smaller printed
    invariants), or None without an unsat answer. With `trim`, first re-checked under its own
    core alone while that shrinks it (each one ordinary check), then one check with Z3's core
    minimisation: minimising costs about one check per lemma of the core it starts from,
    and its time is spent outside the check, where neither a timeout nor a step limit
    reaches (reef_rewind --for-all: 44 % of the run, minimising cores of the whole active
    set). Without (pdr's few hundred lemmas), one minimising check, as before."""
    if not trim:
        ck.solver.set("core.minimize", True)
        try:
            return ck.core() if ck.check(deadline, extra, active) == z3.unsat else None
        finally:
            ck.solver.set("core.minimize", False)
    if ck.check(deadline, extra, active) != z3.unsat:
        return None
    core = ck.core()
    for _ in range(trim):
        if ck.check(deadline, extra, sorted(core)) != z3.unsat:
            return core  # no answer on the smaller question: the core in hand is still a core
        smaller = ck.core()
        if len(smaller) >= len(core):
            break
        core = smaller
    ck.solver.set("core.minimize", True)
    try:
        if ck.check(deadline, extra, sorted(core)) != z3.unsat:
            return core
        return ck.core()
    finally:
        ck.solver.set("core.minimize", False)


class LemmaProver:
    """Mined lemmas for one pdr system, and relative-induction proofs of its properties."""

    def __init__(self, system: "_System", cm: object, states: Sequence[tuple[int, ...]], deadline: Deadline,
                 seed: int = DEFAULT_SEED) -> None:
        self.system = system
        self.seed = seed
        started = time.monotonic()
        mined = mine_atoms(system.enc.slots, states, MAX_CANDIDATES, max_conditions=1)
        t_mine = time.monotonic() - started
        self.lemmas: list[Atom] = []
        self.active: list[int] = []
        self.last_used: list[z3.BoolRef] = []  # the lemmas (over s) of the last prove_invariant's invariant
        self.checker: _Checker | None = None
        size = len(mined) * sum(1 for c in system.clauses if not z3.is_false(c.guard))
        left = deadline.steps_left()
        hopeless = left is not None and size * HOUDINI_MIN_STEPS_PER_CELL > left  # NOTE(hopeless-houdini)
        if states and not hopeless:
            ck = _Checker(system, mined, seed)
            got = houdini(ck, list(range(len(mined))), deadline, _successors(cm),
                          known=set(states), forward=FORWARD_STATES)
            if got is not None:
                self.lemmas = [mined[k] for k in got]
                self.checker = _Checker(system, self.lemmas, seed, within=(ck, got))  # the proof checker: lemmas only
                self.active = list(range(len(self.lemmas)))
        self.stats: dict[str, object] = {
            "candidates": len(mined), "lemmas": len(self.lemmas), "mine_seconds": round(t_mine, 3),
            "houdini_seconds": round(time.monotonic() - started - t_mine, 3)}
        if hopeless:
            self.stats["houdini_skipped"] = (f"{len(mined)} candidates x {size // max(1, len(mined))} action paths "
                                             f"need at least {size * HOUDINI_MIN_STEPS_PER_CELL:,} Z3 steps, "
                                             f"{left:,} left")

    @property
    def t(self) -> tuple[z3.ExprRef, ...]:
        """The successor-state symbols of the relative-induction checks."""
        assert self.checker is not None
        return self.checker.t

    @property
    def usable(self) -> bool:
        return self.checker is not None

    def formula(self) -> z3.BoolRef:
        """The lemmas' conjunction over the system's state symbols."""
        assert self.checker is not None
        return mk_and(*self.checker.now)

    # -- relative induction ------------------------------------------------------------------

    def prove_invariant(self, holds_s: z3.BoolRef, holds_t: z3.BoolRef, deadline: Deadline) -> "str | None":
        """`Init => P` and `L and P and T => P'`: the invariant text (P's lemmas) or None."""
        ck = self.checker
        assert ck is not None
        init = mk_and(*self.system.init)
        if ck.check(deadline, [init, mk_not(holds_s)], []) != z3.unsat:
            return None
        if ck.check(deadline, [holds_s, ck.trans, mk_not(holds_t)], self.active) != z3.unsat:
            return None
        used = self._closed_core(ck.core(), [holds_s], deadline)
        self.last_used = [ck.now[k] for k in (used if used is not None else self.active)]
        return self._render(used)

    def prove_step(self, bad_step: z3.BoolRef, deadline: Deadline, *, with_trans: bool) -> "str | None":
        """`L(s) and [T(s, t)] and bad` unsat: the text of the lemmas it used, or None."""
        ck = self.checker
        assert ck is not None
        extra = [ck.trans, bad_step] if with_trans else [bad_step]
        if ck.check(deadline, extra, self.active) != z3.unsat:
            return None
        used = self._closed_core(ck.core(), [], deadline)
        return self._render(used)

    def _closed_core(self, seed: set[int], assumed: list[z3.BoolRef], deadline: Deadline) -> "list[int] | None":
        assert self.checker is not None
        return closed_core(self.checker, self.active, seed, assumed, deadline)

    def _render(self, used: "list[int] | None") -> str:
        if used is None:
            used = self.active
        slots = self.system.enc.slots
        lines = [render_atom(self.checker.atoms[k], slots) for k in used]  # type: ignore[union-attr]
        return "\nand ".join(lines) if lines else "true"

"""The explicit reachable set of an instance as a formula, checked inductive by Z3.

When the breadth-first search of an instance completes, its state set R is the strongest
invariant there is. Written as a decision diagram over the slots (one node per distinct
(slot, set of state suffixes), identical sub-diagrams shared: Z3 hash-conses equal terms), R
is small even for large sets: nvidia_streams' 47,401 states are 88 nodes, cwsr's 2,534 are
771. Z3 then checks `Init => R` and `R and T => R'` over the same path clauses as Spacer, and
each property relative to R. The proof is Z3's, against the encoding of the model, so a
mismatch between interpreter and encoding shows up as a failed check, never as a proof; the
search only proposes the invariant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import z3

from gpcheck.checker import budget
from gpcheck.checker.smt.encode import Slot
from gpcheck.checker.smt.session import Deadline
from gpcheck.checker.smt.terms import INT, Num, mk_and, mk_eq, mk_not, mk_or, scalar_lit, true

if TYPE_CHECKING:
    from gpcheck.checker.smt.pdr import _System


def state_set_formula(slots: Sequence[Slot], terms: Sequence[z3.ExprRef],
                      states: Sequence[tuple[int, ...]], num: Num = INT) -> tuple[z3.BoolRef, int]:
    """`terms` is one of `states`, as a shared decision diagram; and its number of nodes. Built
    bottom-up with an explicit stack: the diagram is as deep as the state has slots, thousands
    for a large array, past Python's recursion limit."""
    if not states:
        return z3.BoolVal(False), 0
    memo: dict[tuple[int, frozenset[tuple[int, ...]]], z3.BoolRef] = {}
    n = len(terms)

    def split(suffixes: frozenset[tuple[int, ...]]) -> list[tuple[int, frozenset[tuple[int, ...]]]]:
        by_value: dict[int, list[tuple[int, ...]]] = {}
        for sf in suffixes:
            by_value.setdefault(sf[0], []).append(sf[1:])
        return [(v, frozenset(rest)) for v, rest in sorted(by_value.items())]

    def below(i: int, rest: frozenset[tuple[int, ...]]) -> z3.BoolRef:
        return true() if i == n else memo[(i, rest)]

    root = (0, frozenset(states))
    if n == 0:
        return true(), 0
    pending: dict[tuple[int, frozenset[tuple[int, ...]]], list[tuple[int, frozenset[tuple[int, ...]]]]] = {}
    stack = [root]
    while stack:
        key = stack[-1]
        if key in memo:
            stack.pop()
            continue
        i, suffixes = key
        kids = pending.get(key)
        if kids is None:  # first visit: its children first
            budget.poll()  # NOTE(time-limit)
            kids = pending[key] = split(suffixes)
            if i + 1 < n:
                stack.extend((i + 1, rest) for _, rest in kids if (i + 1, rest) not in memo)
            continue
        stack.pop()
        del pending[key]
        memo[key] = mk_or(*(mk_and(mk_eq(terms[i], scalar_lit(slots[i].type, v, num)), below(i + 1, rest))
                            for v, rest in kids))
    return memo[root], len(memo)


class ReachCertificate:
    """R over the pdr system's symbols, with its initiation and consecution checked."""

    def __init__(self, system: "_System", states: Sequence[tuple[int, ...]], deadline: Deadline) -> None:
        self.system = system
        enc = system.enc
        self.t = enc.state(1, "cert.")
        self.now, self.nodes = state_set_formula(enc.slots, system.s, states, enc.num)
        self.nxt = z3.substitute(self.now, *zip(system.s, self.t))  # R over t: a rename, not a second build
        self.states = len(states)
        self.trans = mk_or(*(mk_and(c.guard, *(mk_eq(tv, nv) for tv, nv in zip(self.t, c.next)))
                             for c in system.clauses if not z3.is_false(c.guard)))
        init = mk_and(*system.init, *system.slot_rng)
        self.inductive = (self._unsat(deadline, init, mk_not(self.now))
                          and self._unsat(deadline, self.now, self.trans, mk_not(self.nxt)))
        self._solver: z3.Solver | None = None  # R asserted once, each property's check in a frame

    def _unsat(self, deadline: Deadline, *formulas: z3.BoolRef) -> bool:
        solver = z3.Solver()
        deadline.apply(solver)  # NOTE(step-limits)
        solver.add(*formulas)
        return deadline.trusted(solver.check()) == z3.unsat

    def check(self, bad: z3.BoolRef, deadline: Deadline, *, with_trans: bool) -> "bool | None":
        """True: no R-state (step) is `bad`; False: some is; None: Z3 did not answer."""
        if self._solver is None:
            self._solver = z3.Solver()
            self._solver.add(self.now)
        solver = self._solver
        deadline.apply(solver)  # NOTE(step-limits)
        solver.push()
        try:
            solver.add(bad)
            if with_trans:
                solver.add(self.trans)
            r = deadline.trusted(solver.check())
        finally:
            solver.pop()
        return True if r == z3.unsat else (False if r == z3.sat else None)

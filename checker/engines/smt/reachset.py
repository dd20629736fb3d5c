"""The explicit reachable set of an instance as a formula, checked inductive by Z3.

When the breadth-first search of an instance completes, its state set R is the strongest
invariant there is. Written as a decision diagram over the slots (one node per distinct
(slot, set of state suffixes), identical sub-diagrams shared: Z3 hash-conses equal terms), R
is small even for large sets, more so with the slots in `slot_order`: nvidia_streams' 47,401
states are 72 nodes, cwsr's 9,992 (Q=2) are 143. Z3 then checks `Init => R` and `R and T =>
R'` (one action path at a time) over the same path clauses as Spacer, and each property
relative to R. The proof is Z3's, against the encoding of the model, so a
mismatch between interpreter and encoding shows up as a failed check, never as a proof; the
search only proposes the invariant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import z3

from gpcheck.checker.core import budget
from gpcheck.checker.engines.smt.encode import Slot
from gpcheck.checker.engines.smt.session import Deadline
from gpcheck.checker.engines.smt.terms import INT, Num, mk_and, mk_eq, mk_not, mk_or, scalar_lit, true

if TYPE_CHECKING:
    from gpcheck.checker.engines.smt.pdr import _System


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


ORDER_CELLS = 50_000_000  # slot_order: slots^2 x states cells at most (else the layout's order)


def slot_order(states: Sequence[tuple[int, ...]]) -> list[int]:
    """An order of the slots under which the decision diagram of `states` is small: greedily,
    the slot that splits the states' prefixes into the fewest classes comes next, so slots
    that the slots before them determine (a counter's copy, a flag set with a phase) add no
    branching, and the sub-diagrams below are shared more. cwsr's 9,992 states (Q=2) are 143
    nodes instead of 1,014, nvidia_tsg's 3,429 are 1,187 instead of 3,106, and Z3's
    consecution check is that much smaller. Ties go to the lower slot (deterministic); past
    ORDER_CELLS of work (thousands of slots) the layout's order."""
    import numpy as np

    if not states:
        return []
    arr = np.asarray(states, dtype=np.int64)
    n = arr.shape[1]
    if n * n * len(arr) > ORDER_CELLS:
        return list(range(n))
    arr = arr - arr.min(axis=0)
    width = arr.max(axis=0) + 1
    cls = np.zeros(len(arr), dtype=np.int64)  # each state's prefix class under the order so far
    order: list[int] = []
    rest = list(range(n))
    while rest:
        budget.poll()  # NOTE(time-limit)
        best: tuple[int, int, np.ndarray] | None = None
        for j in rest:
            classes, inverse = np.unique(cls * width[j] + arr[:, j], return_inverse=True)
            if best is None or len(classes) < best[0]:
                best = (len(classes), j, inverse)
        assert best is not None
        order.append(best[1])
        rest.remove(best[1])
        cls = best[2].reshape(-1).astype(np.int64)
    return order


class ReachCertificate:
    """R over the pdr system's symbols, with its initiation and consecution checked.

    Consecution is checked one action path (clause) at a time, `R(s) and guard(s) and not
    R(next(s))`, in one solver that holds R: the same question as `R and T and not R'` (T is
    the clauses' disjunction), without the successor symbols and without Z3 choosing a
    clause: cwsr's check took 13.2 M Z3 steps at once and 0.3 M so (with `slot_order`)."""

    def __init__(self, system: "_System", states: Sequence[tuple[int, ...]], deadline: Deadline) -> None:
        self.system = system
        enc = system.enc
        self.t = enc.state(1, "cert.")
        order = slot_order(states)
        self.now, self.nodes = state_set_formula([enc.slots[i] for i in order], [system.s[i] for i in order],
                                                 [tuple(st[i] for i in order) for st in states], enc.num)
        self.states = len(states)
        self.trans = mk_or(*(mk_and(c.guard, *(mk_eq(tv, nv) for tv, nv in zip(self.t, c.next)))
                             for c in system.clauses if not z3.is_false(c.guard)))
        self._solver = z3.Solver()  # R asserted once: consecution's and each property's checks in frames
        self._solver.add(self.now)
        init = mk_and(*system.init, *system.slot_rng)
        self.inductive = self._unsat(deadline, init, mk_not(self.now)) and self._consecution(deadline)

    def _unsat(self, deadline: Deadline, *formulas: z3.BoolRef) -> bool:
        solver = z3.Solver()
        deadline.apply(solver)  # NOTE(step-limits)
        solver.add(*formulas)
        return deadline.trusted(solver.check()) == z3.unsat

    def _consecution(self, deadline: Deadline) -> bool:
        """Every clause leads from R into R (Z3 unsat for each)."""
        s = self.system.s
        solver = self._solver
        for c in self.system.clauses:
            if z3.is_false(c.guard) or not c.writes:  # a path that changes nothing stays in R
                continue
            budget.poll()  # NOTE(time-limit)
            deadline.apply(solver)  # NOTE(step-limits)
            solver.push()
            try:
                solver.add(c.guard, mk_not(z3.substitute(self.now, *((s[i], c.next[i]) for i in sorted(c.writes)))))
                if deadline.trusted(solver.check()) != z3.unsat:
                    return False
            finally:
                solver.pop()
        return True

    def check(self, bad: z3.BoolRef, deadline: Deadline, *, with_trans: bool) -> "bool | None":
        """True: no R-state (step) is `bad`; False: some is; None: Z3 did not answer."""
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

"""Dead ends of replay's lazy hidden-step search, proved by Z3 (NOTE(lazy-dead-ends)).

Before a logged event E, the lazy search (checker/engines/replay/hidden.py) explores states reached by internal
steps, looking for those where E is enabled. A state r where a conjunct c of E's `require`s is
false is a *dead end* when no sequence of internal steps from r can make c true again: then E is
disabled (or fails) in the whole hidden closure of r, and nothing there can ever match E, so the
search need not expand r. Exploring such a region is what made replay slow on recorders' traces:
a stream's more urgent neighbour has a kernel visible, so the event `start` of the less urgent
stream waits for a logged `start` of the other one, and the search enumerated every split of the
unobserved queue counters (thousands of states per event) to find nothing.

The proof is an inductive invariant of the internal steps: with F the slots that no internal
action assigns (they keep r's values in the hidden closure of r), the set

    D(r) = { s : s agrees with r on F, and c evaluates in s, without error, to false }

is closed under every internal action instance h: there is no s in D(r) (every slot within its
type) where h completes and leads outside D(r). Z3 checks this (unsat = closed) over *every*
state of the types, reachable or not, so the answer does not depend on the model's reachable set
or on any commuting argument. An unknown answer (timeout) counts as "not a dead end", which only
costs time. Answers are cached per (event instance, conjunct, values of F).
"""

from __future__ import annotations

from typing import Sequence

import z3

from gpcheck.checker.engines.smt.session import trusted  # a stopped budget, e.g. Ctrl-C, interrupts the running check
from gpcheck.checker.engines.smt.encode import Encoder, EncodingError
from gpcheck.checker.engines.smt.terms import mk_and, mk_eq, mk_not, mk_or, scalar_lit
from gpcheck.spec import ir

DEAD_END_STEPS = 16_000_000  # Z3 steps per query (about 2 s here; NOTE(step-limits): a clock made
# replay's search, and so what it reaches within its limits, depend on the load); unknown is "not a dead end"
CACHE_LIMIT = 1 << 14


def assigned_vars(actions: Sequence[ir.Action]) -> set[int]:
    """Indices of the variables some statement of these actions assigns (any slot of them)."""
    out: set[int] = set()
    for a in actions:
        for st in ir.iter_stmts(a.body):
            if isinstance(st, ir.Assign):
                t: ir.Expr = st.target
                while isinstance(t, (ir.Index, ir.Field)):
                    t = t.base
                assert isinstance(t, ir.VarRef), t
                out.add(t.var)
    return out


class DeadEnds:
    """Decides, for a state r and a conjunct that is false there, whether the conjunct stays
    false after any number of internal steps (see module doc). `internal` lists the internal
    action instances as (action index in `model.actions`, argument slot values)."""

    def __init__(self, model: ir.Model, internal: Sequence[tuple[int, tuple[int, ...]]]):
        self.enc = Encoder(model)
        self.internal = list(internal)
        moved = assigned_vars([model.actions[a] for a, _ in internal])
        self.frozen = [i for i, sl in enumerate(self.enc.slots) if sl.var not in moved]
        self._cache: dict[tuple[object, ...], bool] = {}
        self._steps: list[tuple[z3.BoolRef, tuple[z3.ExprRef, ...]]] | None = None
        self.broken: str | None = None  # why the prover gave up (an encoding it lacks): never a dead end then
        self.queries = 0  # Z3 checks made (for the benchmarks and tests)

    def _step_terms(self) -> list[tuple[z3.BoolRef, tuple[z3.ExprRef, ...]]]:
        """Each internal instance from the symbolic state: (completes, next state)."""
        if self._steps is None:
            s = self.enc.state(0, "dead.")
            out = []
            for a, args in self.internal:
                st = self.enc.step(a, s, self.enc.instance_args(a, args))
                out.append((mk_and(st.enabled, mk_not(st.error)), st.next))
            self._steps = out
        return self._steps

    def stays_false(self, key: object, conj: ir.Expr, r: Sequence[int]) -> bool:
        """True when `conj` (a closed boolean expression: the event's parameters already
        substituted), false at state `r`, is false in every state reached from `r` by internal
        steps. `key` names the conjunct for the cache (e.g. (instance id, conjunct index))."""
        if self.broken is not None:
            return False
        fvals = tuple(r[i] for i in self.frozen)
        ck = (key, fvals)
        hit = self._cache.get(ck)
        if hit is not None:
            return hit
        enc = self.enc
        s = enc.state(0, "dead.")

        def inside(t: Sequence[z3.ExprRef]) -> z3.BoolRef:
            val, err = enc.predicate(conj, tuple(t))
            pinned = [mk_eq(t[i], scalar_lit(enc.slots[i].type, v, enc.num)) for i, v in zip(self.frozen, fvals)]
            return mk_and(*pinned, mk_not(err), mk_not(val))

        try:
            leaves = [mk_and(ok, mk_not(inside(nxt))) for ok, nxt in self._step_terms()]
            solver = z3.Solver()
            solver.set("rlimit", DEAD_END_STEPS)
            solver.add(enc.in_range(s), inside(s), mk_or(*leaves))
            self.queries += 1
            closed = trusted(solver.check()) == z3.unsat  # NOTE(stale-interrupt)
        except (EncodingError, z3.Z3Exception) as e:  # the search goes on without dead ends
            self.broken = f"{type(e).__name__}: {e}"
            return False
        if len(self._cache) > CACHE_LIMIT:
            self._cache.clear()
        self._cache[ck] = closed
        return closed

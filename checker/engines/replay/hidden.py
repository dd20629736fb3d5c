"""Lazy hidden steps for replay: which internal steps to fire before a logged event.

NOTE(lazy-replay). The exhaustive replay (checker/engines/replay/search.py `_advance`) lets every internal
action fire up to K times before each event and keeps every state it reaches. Recorders that
log only launch/start/end leave counters unobserved (how many launched kernels the front end has
seen, how many slots a kernel holds), so the candidate set holds every split of them, multiplied
across streams. This module fires internal steps *lazily*: before event E, from state r,

- where E is enabled at r (and agrees with the observation), a hidden step h is postponed past E
  when it commutes with E at r (h(E(r)) == E(h(r)), and each instance of E is enabled at h(r)
  exactly when at r) and with every other enabled hidden step at r (diamonds), and adds no
  property violation: the state E(h(r)) is then reached from the kept E(r) by the same h in the
  next gap, so keeping it would only duplicate a candidate (subsumption); the property masks of
  both ways must agree;
- where E is disabled at r, a hidden step is postponed when it changes none of the conjuncts of
  E's `require`s (it does not bring E closer), commutes with the other enabled hidden steps, and
  adds no property violation, provided some other hidden step does change one (else every hidden
  step is fired: E may need several steps that each change nothing visible). Every other
  hidden step is fired.

In both cases the postponed step must also enable no hidden step that was disabled at r, so the
steps after it could run without it, and it can be moved past them one state at a time (at each
explored state it is again either postponed by these checks or fired).

NOTE(lazy-dead-ends). A state where the event is disabled is not expanded at all when, for each
instance of the event, a conjunct of its requires is false there and Z3 proves it stays false after
any number of internal steps (an invariant over the slots no internal action writes:
checker/engines/smt/deadend.py, via checker/engines/replay/search.py). This pruning is exact by itself (nothing in the
hidden closure of such a state can match the event); it is what keeps a recorder's trace linear:
a logged `start` of a stream waiting behind a more urgent visible kernel otherwise enumerated every
split of the unobserved queue counters to find nothing.

A postponed step simply happens later, so the hidden steps before one event are not bounded by
K here: the lazy search decides "is the trace a behaviour when any number of internal steps may
precede each event". The checks above are local (at r), so they are a sound reduction only for
models whose hidden steps keep commuting along the postponed path. Two safeguards: before it
reports a divergence, replay tries the event once more from the whole hidden closure of every
candidate (checker/engines/replay/search.py), and `tests/quality/lazy_agreement.py` (a fast slice in
`tests/unit/test_replay_lazy.py`) compares the lazy search with the exhaustive one (any number
of hidden steps) on the corpus and thousands of randomly thinned simulated traces: verdict,
divergence line and property verdicts.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from typing import Any, Callable

from gpcheck.gpmodel import CompiledModel, ModelError
from gpcheck.spec import ir

State = tuple[int, ...]
DEAD_END_AFTER = 4096  # hidden states explored before dead ends are looked for (NOTE(lazy-dead-ends))
HPath = tuple[tuple[int, State], ...]
Outcome = tuple[State, int, int, HPath]  # next state, property mask of the path, instance, hidden path


def _substitute(e: Any, env: dict[int, ir.Lit]) -> Any:
    """`e` with every reference to an action parameter (symbol id in `env`) replaced by its value."""
    if isinstance(e, ir.LocalRef):
        return env.get(e.sym.id, e)
    if not dataclasses.is_dataclass(e) or isinstance(e, (ir.Lit, ir.VarRef, ir.Symbol)):
        return e
    changes = {}
    for f in dataclasses.fields(e):
        v = getattr(e, f.name)
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            nv = _substitute(v, env)
            if nv is not v:
                changes[f.name] = nv
    return dataclasses.replace(e, **changes) if changes else e


def _conjuncts(e: ir.Expr) -> list[ir.Expr]:
    if isinstance(e, ir.Binary) and e.op is ir.BinOp.AND:
        return _conjuncts(e.lhs) + _conjuncts(e.rhs)
    return [e]


class HiddenSearch:
    """The lazy hidden-step search for one compiled model (see module doc). `stepc`, `inv_mask`
    and `trans_mask` are the replayer's cached step and property functions."""

    def __init__(self, cm: CompiledModel, stepc: Callable[[int, State], Any], inv_mask: Callable[[State], int],
                 trans_mask: Callable[[State, State], int], internal: list[int],
                 stays_false: Callable[[object, ir.Expr, State], bool] | None = None):
        self.cm = cm
        self.stepc = stepc
        self.inv_mask = inv_mask
        self.trans_mask = trans_mask
        self.internal = internal
        # NOTE(lazy-dead-ends): stays_false(key, conjunct, r) proves that a conjunct false at r
        # stays false after any number of internal steps (checker/engines/smt/deadend.py)
        self.stays_false = stays_false
        self._guards: dict[int, list[Callable[[State], bool]] | None] = {}
        self._guard_exprs: dict[int, list[ir.Expr]] = {}
        self.explored = 0  # hidden states visited, for the benchmarks
        self.dead_ends = 0  # states not expanded because they are dead ends
        # NOTE(lazy-dead-ends): the prover (Z3, ~0.4 s to load and encode) is consulted only once
        # this many hidden states were explored, so that short replays never pay for it
        self.dead_end_after = DEAD_END_AFTER

    # ------------------------------------------------------------------ E's guards
    def guards(self, iid: int) -> list[Callable[[State], bool]] | None:
        """The conjuncts of the instance's `require`s as compiled predicates, when all of them
        come before any other statement (else None: no conjunct-level signature)."""
        if iid in self._guards:
            return self._guards[iid]
        inst = self.cm.instances[iid]
        env = {p.id: ir.Lit(v, p.type) for p, v in zip(inst.action.params, inst.args)}  # type: ignore[arg-type]
        preds: list[Callable[[State], bool]] | None = []
        exprs: list[ir.Expr] = []
        seen_other = False
        for st in inst.action.body:
            if isinstance(st, ir.Require):
                if seen_other:
                    preds = None
                    break
                for c in _conjuncts(st.cond):
                    exprs.append(_substitute(c, env))
                    preds.append(self.cm.predicate(exprs[-1]))  # type: ignore[union-attr]
            else:
                seen_other = True
                if any(isinstance(x, ir.Require) for x in ir.iter_stmts((st,))):
                    preds = None
                    break
        self._guards[iid] = preds
        self._guard_exprs[iid] = exprs
        return preds

    def dead_end(self, iids: list[int], r: State, sig: tuple[Any, ...] | None) -> bool:
        """NOTE(lazy-dead-ends): whether no sequence of internal steps from r can enable any
        instance of the event: for each instance, a conjunct of its requires is false at r
        (`sig`, from `signature`) and provably stays false. Only for events disabled at r."""
        if sig is None or self.stays_false is None or self.explored < self.dead_end_after:
            return False
        for iid, entry in zip(iids, sig):
            if type(self.stepc(iid, r)) is not int:
                return False  # enabled (its next state disagrees with the observation) or failing
            exprs = self._guard_exprs.get(iid)
            if exprs is None or len(exprs) != len(entry):
                return False
            for k, v in enumerate(entry):
                if v is False and self.stays_false((iid, k), exprs[k], r):
                    break
            else:
                return False
        return True

    def signature(self, iids: list[int], r: State) -> tuple[Any, ...] | None:
        """How the event fares at r, per instance: the truth of each conjunct of its requires
        when disabled, the next state when enabled; None when that cannot be told."""
        out: list[Any] = []
        for iid in iids:
            t = self.stepc(iid, r)
            if type(t) is tuple:
                out.append(t)
            elif isinstance(t, ModelError):
                return None
            else:
                g = self.guards(iid)
                if g is None:
                    return None
                vals = []
                for p in g:
                    try:
                        vals.append(p(r))
                    except ModelError:
                        vals.append(None)
                out.append(tuple(vals))
        return tuple(out)

    # ------------------------------------------------------------------ the search
    def outcomes(self, s: State, iids: list[int], check: Callable[[State], bool] | None) -> list[Outcome]:
        """Every kept (next state, mask, instance, hidden path) of the event from `s` (see module
        doc); `check(t)` says whether a next state agrees with the observation (None: no
        observation)."""
        stepc, inv_mask, trans_mask = self.stepc, self.inv_mask, self.trans_mask
        out: list[Outcome] = []
        seen: set[tuple[State, int]] = {(s, 0)}
        queue: deque[tuple[State, int, HPath]] = deque([(s, 0, ())])
        while queue:
            r, pm, path = queue.popleft()
            self.explored += 1
            here: dict[int, tuple[State, int]] = {}
            for iid in iids:
                t = stepc(iid, r)
                if type(t) is tuple and (check is None or check(t)):
                    mt = pm | inv_mask(t) | trans_mask(r, t)
                    here[iid] = (t, mt)
                    out.append((t, mt, iid, path))
            kids: list[tuple[int, State, int]] = []
            for h in self.internal:
                r2 = stepc(h, r)
                if type(r2) is not tuple:
                    continue
                kids.append((h, r2, pm | inv_mask(r2) | trans_mask(r, r2)))
            sig: tuple[Any, ...] | None = None
            if not here and kids:
                sig = self.signature(iids, r)
                if self.dead_end(iids, r, sig):
                    self.dead_ends += 1
                    continue
            enabled = {h for h, _, _ in kids}
            state = (kids, [g for g in self.internal if g not in enabled], {})
            fire = [(h, r2, pm2) for h, r2, pm2 in kids
                    if not self._postponable(h, r, r2, pm, pm2, state, iids, check, here, sig)]
            if not here and not fire:
                fire = kids  # nothing brings E closer on its own: no ground to postpone anything
            for h, r2, pm2 in fire:
                if (r2, pm2) in seen:
                    continue
                seen.add((r2, pm2))
                queue.append((r2, pm2, path + ((h, r2),)))
        return out

    def _postponable(self, h: int, r: State, r2: State, pm: int, pm2: int,
                     state: tuple[list[tuple[int, State, int]], list[int], dict[tuple[int, int], bool]],
                     iids: list[int], check: Callable[[State], bool] | None, here: dict[int, tuple[State, int]],
                     sig: tuple[Any, ...] | None) -> bool:
        """Whether hidden step h (r -> r2, path masks pm -> pm2) may wait until after the event
        (module doc). `state` is what the caller computed once for r: the enabled hidden steps
        with their successors, the disabled ones, and a memo of the pairs found to commute."""
        stepc = self.stepc
        if here:
            for iid in iids:
                t2 = stepc(iid, r2)
                ok2 = type(t2) is tuple and (check is None or check(t2))
                got = here.get(iid)
                if got is None:
                    if ok2:
                        return False
                    continue
                if not ok2:
                    return False
                t, mt = got
                if stepc(h, t) != t2:
                    return False
                if pm2 | self.inv_mask(t2) | self.trans_mask(r2, t2) != mt:
                    return False
                if (self.inv_mask(t2) | self.trans_mask(t, t2)) & ~mt:
                    return False
        elif pm2 != pm or sig is None or self.signature(iids, r2) != sig:
            return False
        kids, disabled, memo = state
        for g in disabled:  # h enables no hidden step: what follows it could run without it
            if type(stepc(g, r2)) is tuple:
                return False
        for g, rg, _ in kids:  # h commutes with every other enabled hidden step
            if g == h:
                continue
            pair = (g, h) if g < h else (h, g)
            ok = memo.get(pair)
            if ok is None:
                a = stepc(g, r2)
                ok = memo[pair] = type(a) is tuple and a == stepc(h, rg)
            if not ok:
                return False
        return True

"""The pieces of replay's Z3 fallback (NOTE(replay-z3), checker/engines/smt/tracefill.py drives them):
an event's template over a step's terms, a set of candidate states as one formula, the records
of a segment being filled (events, hidden gaps, origins, the witness trail) and the answer types."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import z3

from gpcheck.checker.engines.smt.encode import Encoder, State
from gpcheck.checker.engines.smt.session import Session
from gpcheck.checker.engines.smt.terms import all_of, mk_and, mk_eq, mk_not, mk_or, scalar_lit, scalar_sort, true
from gpcheck.checker.core.verdict import Counterexample, Step
from gpcheck.gpmodel import CompiledModel
from gpcheck.spec import ir
from gpcheck.traces.format import Event
from gpcheck.traces.observation import Match
from gpcheck.checker.engines.smt.fallback import SymbolicOutcome


PIN_FIRST = 16  # events in a segment before the first attempt to enumerate its current states
ConcreteState = tuple[int, ...]


@dataclass(frozen=True)
class WitnessStep:
    """One step of a filled-in behaviour: instance id (`cm.instances`), the state after it, the
    trace line of the event it belongs to, and whether it is a hidden internal step."""

    iid: int
    state: ConcreteState
    line: int
    hidden: bool


@dataclass(frozen=True)
class Witness:
    """A behaviour of the model matching the events from `from_line` on: the state before the
    first of them, then every step (hidden internal ones included)."""

    start: ConcreteState
    steps: tuple[WitnessStep, ...]

    def to_counterexample(self, cm: CompiledModel) -> Counterexample:
        """The behaviour as a solver-neutral, decoded `Counterexample` (for reports and exports)."""
        out = [Step(None, {}, cm.layout.decode(self.start))]
        for st in self.steps:
            inst = cm.instances[st.iid]
            out.append(Step(inst.action.name, inst.arg_dict(), cm.layout.decode(st.state)))
        return Counterexample(tuple(out))


@dataclass(frozen=True)
class FillResult:
    """The fallback's full answer: `conforms` True/False/None as in SymbolicOutcome, the
    diverging `line` and `event`, the `reason`, the filled-in `witness` (only when asked for and
    the trace conforms), the number of events matched, and solver statistics."""

    conforms: bool | None
    line: int | None = None
    event: dict[str, Any] | None = None
    reason: str = ""
    witness: Witness | None = None
    events: int = 0
    checks: int = 0
    segments: int = 1

    def outcome(self) -> SymbolicOutcome:
        return SymbolicOutcome(self.conforms, self.line, self.event, self.reason)


def _scalar(t: ir.Type) -> ir.ScalarType:
    assert isinstance(t, (ir.BoolType, ir.IntType, ir.EnumType)), t
    return t


@dataclass(frozen=True)
class _Template:
    """A formula over template constants: `pre`/`post` states, `params` per action, and any
    extra constants (`on`, `prev_on`, `sel`) named by the user of the template."""

    formula: z3.BoolRef
    params: dict[int, tuple[z3.ExprRef, ...]]


class _Templates:
    """Step formulas of one model over template constants (see module doc)."""

    def __init__(self, enc: Encoder, internal: list[int]) -> None:
        self.enc = enc
        self.num = enc.num
        self.internal = internal
        sorts = [scalar_sort(sl.type, enc.num) for sl in enc.slots]
        self.pre: State = tuple(z3.Const(f"tpl:{sl.name}", so) for sl, so in zip(enc.slots, sorts))
        self.post: State = tuple(z3.Const(f"tpl:{sl.name}'", so) for sl, so in zip(enc.slots, sorts))
        self.on = z3.Bool("tpl:on")
        self.prev_on = z3.Bool("tpl:prev_on")
        self.sel = z3.Const("tpl:sel", enc.num.sort)
        self._params = {
            ai: tuple(z3.Const(f"tpl:arg:{a.name}.{p.name}", scalar_sort(_scalar(p.type), enc.num)) for p in a.params)
            for ai, a in enumerate(enc.model.actions)
        }
        self._hidden: _Template | None = None
        self._events: dict[Any, _Template] = {}

    def _step(self, ai: int, args: tuple[int, ...] | None) -> z3.BoolRef:
        """Action `ai` is enabled at `pre` and leads to `post`: with template parameters (args
        None, ranging over their domains) or with literal arguments."""
        if args is None:
            ps = self._params[ai]
            se = self.enc.step(ai, self.pre, ps)
            dom = self.enc.param_domain(ai, ps)
        else:
            se = self.enc.step(ai, self.pre, self.enc.instance_args(ai, args))
            dom = true()
        return mk_and(dom, se.enabled, self.enc.equal_states(self.post, se.next))

    def _choice(self, n: int) -> Callable[[int], z3.BoolRef]:
        lits = [self.num.lit(j) for j in range(n)]
        return (lambda j: true()) if n == 1 else (lambda j: self.sel == lits[j])

    def hidden(self) -> _Template:
        """One hidden slot: off (post = pre) or one internal action; off after off."""
        if self._hidden is None:
            pick = self._choice(len(self.internal))
            conds = [
                z3.Implies(self.on, self.prev_on),
                z3.Implies(mk_not(self.on), self.enc.equal_states(self.post, self.pre)),
            ]
            for j, ai in enumerate(self.internal):
                conds.append(z3.Implies(mk_and(self.on, pick(j)), self._step(ai, None)))
            if len(self.internal) > 1:
                conds.append(z3.Implies(self.on, mk_or(*(pick(j) for j in range(len(self.internal))))))
            self._hidden = _Template(all_of(conds), {ai: self._params[ai] for ai in self.internal})
        return self._hidden

    def event(self, key: Any, acts: list[int], given: dict[int, tuple[int | None, ...]]) -> _Template:
        """An event that is one of `acts` with the `given` argument values (None: free)."""
        t = self._events.get(key)
        if t is None:
            pick = self._choice(len(acts))
            branches: list[z3.BoolRef] = []
            params: dict[int, tuple[z3.ExprRef, ...]] = {}
            for j, ai in enumerate(acts):
                a = self.enc.model.actions[ai]
                want = given[ai]
                if any(w is not None and w not in ir.domain_values(_scalar(p.type)) for w, p in zip(want, a.params)):
                    continue  # no instance has these arguments
                if all(w is not None for w in want):
                    f = self._step(ai, tuple(w for w in want if w is not None))
                else:
                    ps = params[ai] = self._params[ai]
                    fixed = [mk_eq(p, scalar_lit(_scalar(sp.type), w, self.num))
                             for p, sp, w in zip(ps, a.params, want) if w is not None]
                    f = mk_and(self._step(ai, None), *fixed)
                branches.append(mk_and(pick(j), f))
            t = self._events[key] = _Template(mk_or(*branches), params)
        return t

    def instantiate(self, t: _Template, pre: State, post: State, params: dict[int, tuple[z3.ExprRef, ...]],
                    extra: Sequence[tuple[z3.ExprRef, z3.ExprRef]] = ()) -> z3.BoolRef:
        if z3.is_true(t.formula) or z3.is_false(t.formula):
            return t.formula
        pairs = list(zip(self.pre, pre)) + list(zip(self.post, post)) + list(extra)
        for ai, ps in params.items():
            pairs += list(zip(t.params[ai], ps))
        return z3.substitute(t.formula, *pairs)  # type: ignore[no-any-return]


def _set_formula(enc: Encoder, s: Sequence[z3.ExprRef], states: Sequence[ConcreteState]) -> z3.BoolRef:
    """`s` is one of `states`, compactly: slots with one value are equalities; slots independent
    of the others (the set is their values × the rest) are memberships; the rest is a trie
    (one disjunction per shared prefix), so a product of unobserved values stays small."""
    assert states
    slots = enc.slots
    n = len(slots)

    def lit(i: int, v: int) -> z3.ExprRef:
        return scalar_lit(slots[i].type, v, enc.num)

    def member(i: int, vals: set[int]) -> z3.BoolRef:
        return mk_or(*(mk_eq(s[i], lit(i, v)) for v in sorted(vals)))

    conds: list[z3.BoolRef] = []
    rest: list[int] = []
    for i in range(n):
        vals = {st[i] for st in states}
        if len(vals) == 1:
            conds.append(mk_eq(s[i], lit(i, next(iter(vals)))))
        else:
            rest.append(i)
    tuples = {tuple(st[i] for i in rest) for st in states}
    # peel off independent slots: |set| == |values of slot| * |projection on the others|
    j = 0
    while j < len(rest) and len(rest) > 1:
        vals = {t[j] for t in tuples}
        others = {t[:j] + t[j + 1:] for t in tuples}
        if len(vals) * len(others) == len(tuples):
            conds.append(member(rest[j], vals))
            rest.pop(j)
            tuples = others
        else:
            j += 1
    if len(rest) == 1:
        conds.append(member(rest[0], {t[0] for t in tuples}))
    elif rest:
        conds.append(_trie(s, rest, sorted(tuples), lit))
    return all_of(conds)


def _trie(s: Sequence[z3.ExprRef], rest: list[int], tuples: list[tuple[int, ...]], lit: Any) -> z3.BoolRef:
    """Disjunction over `tuples` (sorted) of slot equalities, sharing common prefixes."""

    def build(depth: int, lo: int, hi: int) -> z3.BoolRef:
        if depth == len(rest):
            return true()
        branches: list[z3.BoolRef] = []
        i = lo
        while i < hi:
            v = tuples[i][depth]
            j = i
            while j < hi and tuples[j][depth] == v:
                j += 1
            branches.append(mk_and(mk_eq(s[rest[depth]], lit(rest[depth], v)), build(depth + 1, i, j)))
            i = j
        return mk_or(*branches)

    return build(0, 0, len(tuples))


@dataclass
class _Hidden:
    """One hidden slot of a gap: on/off, which internal action (`sel`, None when there is one),
    its parameters per internal action, and the state after it."""

    on: z3.BoolRef
    sel: z3.ExprRef | None
    params: dict[int, tuple[z3.ExprRef, ...]]
    state: State


@dataclass
class _Gap:
    """The hidden steps before one event: from `pre` (the state after the previous event) through
    `slots` to `out` (the state the event starts from). `lit`, while the gap is shallower than
    max_hidden, is the assumption that ties `out` to the last slot (NOTE(tracefill-depth))."""

    pre: State
    out: State
    slots: list[_Hidden] = field(default_factory=list)
    lit: z3.BoolRef | None = None


@dataclass
class _EventRec:
    """One logged event in the unrolling: its gap, the actions it may be (`sel` chooses, None
    when there is one), symbolic parameters of those with free ones, the given argument values,
    the state after it, its observation and the literals guarding its step and observation."""

    event: Event
    gap: _Gap
    actions: list[int]
    sel: z3.ExprRef | None
    params: dict[int, tuple[z3.ExprRef, ...]]
    given: dict[int, tuple[int | None, ...]]
    state: State
    match: Match | None
    step_lit: z3.BoolRef
    obs_lit: z3.BoolRef


@dataclass(frozen=True)
class _Trail:
    """A kept witness up to a segment's start: the request-level start state and the steps, as
    a chain of per-segment chunks (linking, not copying: restarts stay linear in the trace)."""

    start: ConcreteState
    steps: tuple[WitnessStep, ...]
    prev: "_Trail | None" = None

    def flatten(self) -> Witness:
        chunks: list[tuple[WitnessStep, ...]] = []
        t: _Trail | None = self
        while t is not None:
            chunks.append(t.steps)
            start, t = t.start, t.prev
        return Witness(start, tuple(st for c in reversed(chunks) for st in c))


Origins = dict[ConcreteState, "_Trail | None"]


@dataclass
class _Segment:
    """One solver run: from a start set through the events added so far (see module doc).
    `origins` maps each allowed start state to the witness that reached it (None: the request's
    own start set; a None value: witnesses are not kept)."""

    sess: Session
    start: State
    start_ok: Callable[[ConcreteState], bool]
    origins: Origins | None
    cur: State
    gaps: list[_Gap] = field(default_factory=list)
    recs: list[_EventRec] = field(default_factory=list)
    committed: int = 0
    model: z3.ModelRef | None = None
    next_pin: int = PIN_FIRST


class _Divergence(Exception):
    """The first event no completion matches (raised out of the batch loop)."""

    def __init__(self, line: int, event: dict[str, Any], reason: str) -> None:
        super().__init__(reason)
        self.line, self.event, self.reason = line, event, reason


class _Undecided(Exception):
    """The solver could not decide, or a witness did not re-check (the message says which)."""

# over 600 lines: one class (Replayer): its search and its report/counterexample methods to split after the others' edits (issue 34)
"""Replay: is a recorded trace a behaviour of a model, and do the model's properties hold on it?

The method is TLA+ trace validation (Cirstea et al. 2024) done with gpmodel's step functions
instead of a model checker: keep the set of *candidate* states the system may be in after each
logged event (unobserved variables stay unknown, so an initial `any` slot that is not observed
gives one candidate per value), and advance it event by event:

1. from every candidate, the internal actions may fire first: up to `max_hidden` of them
   (breadth first, each distinct state kept once per depth bound);
2. the logged event must then be one instance of the named action, with the logged argument
   values, that is enabled and whose next state agrees with every observed slot.

Step 1 is the exhaustive search (`_advance`, used with `--max-hidden K` and for traces that log
their internal actions). By default the hidden steps are searched lazily instead
(`_advance_lazy`, checker/engines/replay/hidden.py, NOTE(lazy-replay)): any number may precede an event, and a
step that commutes with the event is postponed rather than multiplied into the candidate set.

The trace conforms when some candidate survives every event. NOTE(replay-masks): each
candidate also carries a bit mask of the properties (invariants, then transition properties)
violated along the behaviour that reached it, and a candidate is the pair (state, mask): all
behaviours merged into one candidate violate exactly the same properties, so at the end a
property is violated on *every* reconstruction (verdict violated), on none (holds on the trace)
or on some (unknown: it depends on values the trace did not observe). Liveness is not evaluated:
a finite trace cannot decide it.

Memory is constant in the trace length: the first pass keeps only the candidate set and
bounded caches. Counterexamples (for a violated property) come from a second pass that keeps
parent links up to the line of the first violation (a window of `HISTORY_WINDOW` events).

When the candidate set grows past `max_candidates`, the enumeration stops and replay hands the
rest of the trace to a symbolic fallback (Z3 fills in the unknown values); see
`_symbolic_fallback` (NOTE(replay-z3)).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from gpcheck.checker.core import budget
from gpcheck.checker.core.verdict import Counterexample, Result, Step, Verdict
from gpcheck.gpmodel import CompiledModel, ModelError, truth
from gpcheck.spec import ir
from gpcheck.spec.errors import GpcheckError, TraceError
from gpcheck.traces.format import Event, TraceHeader
from gpcheck.checker.engines.replay.hidden import HiddenSearch
from gpcheck.traces.observation import Match, Observer
from gpcheck.traces.replay_report import Attempt, Candidate, Divergence, ReplayReport
from gpcheck.traces.event_source import ANY_ACTION, EventSource, file_source, memory_source
from gpcheck.checker.engines.smt.fallback import SymbolicOutcome, SymbolicRequest

DEFAULT_MAX_HIDDEN = 32
UNBOUNDED = 1 << 30  # "any number of hidden steps": the exhaustive closure stops at its fixpoint
DEFAULT_MAX_CANDIDATES = 100_000
CACHE_LIMIT = 1 << 18  # entries per cache before it is cleared (bounded memory)
MASK_CACHE_LIMIT = 1 << 14  # property masks per cache, and (lazy search) successors per event:
LAZY_SUCC_CACHE_LIMIT = 1 << 13  # filled within a few thousand kernels of an imported trace, so that
# peak memory stops growing with the trace early (issue 12: 100,000 kernels in the memory of 10,000)
DECODE_CACHE_LIMIT = 1 << 15  # decoded states kept for whole-state comparisons
SUCC_CACHE_LIMIT = 1 << 14  # (state, event) -> successors after hidden steps
HISTORY_WINDOW = 200_000  # events of parent links kept by the counterexample pass
SHOW_CANDIDATES = 5

State = tuple[int, ...]
Key = tuple[State, int]  # (state, violated-properties mask), NOTE(replay-masks)


INITIAL_FILTER_MAX = 1 << 20  # initial candidates enumerated before a state assumption filters them


@dataclass(frozen=True)
class ReplayOptions:
    """`max_hidden=None` means: 0 when the header says internal actions are logged
    (`"logs_internal": true`, written by `gpcheck simulate`), else DEFAULT_MAX_HIDDEN."""

    max_hidden: int | None = None
    max_candidates: int = DEFAULT_MAX_CANDIDATES
    show_candidates: int = SHOW_CANDIDATES
    counterexamples: bool = True
    engine: str = "auto"  # "lazy", "exhaustive", or "auto": lazy unless K is given or internals are logged
    progress: Callable[[int, int, int], None] | None = None  # (events, candidates, peak), traces/progress.py
    timing: bool = True  # a timed spec: check the trace's time stamps too (NOTE(timed-replay)); False: the untimed abstraction only, said in the report


"""Opens the trace (again): replay reads it twice when it needs a counterexample."""

SYMBOLIC_MODULE = "gpcheck.checker.engines.smt.tracefill"  # NOTE(replay-z3): provides replay_symbolic(request)


class _Node:
    """A history link of the counterexample pass: state, instance that produced it, parent."""

    __slots__ = ("state", "iid", "parent", "line", "depth")

    def __init__(self, state: State, iid: int | None, parent: "_Node | None", line: int, depth: int):
        self.state = state
        self.iid = iid
        self.parent = parent
        self.line = line
        self.depth = depth


@dataclass
class _Pass:
    """The outcome of one pass over the events."""

    frontier: dict[Key, _Node | None]
    events: int = 0
    peak: int = 0
    divergence: Divergence | None = None
    undecided: str | None = None
    first_line: dict[int, int] = field(default_factory=dict)  # property bit -> first line violated
    # NOTE(replay-violation-line): property bit -> the first line after which EVERY candidate has
    # it: no behaviour explains the trace up to there without the violation (first_line: some does)
    all_line: dict[int, int] = field(default_factory=dict)
    symbolic: "SymbolicRequest | None" = None  # set with `undecided`: what the Z3 fallback gets
    stop_frontier: dict[Key, _Node | None] | None = None  # frontier right after `stop_line`


class Replayer:
    """Replays traces against one compiled model instance (see module doc)."""

    def __init__(self, cm: CompiledModel, options: ReplayOptions | None = None):
        self.cm = cm
        self.model: ir.Model = cm.model
        self.opt = options or ReplayOptions()
        self.obs = Observer(self.model)
        self.step = cm.step
        self.internal = [i for i, inst in enumerate(cm.instances) if inst.action.internal]
        self.inv_fns = [fn for _, fn in cm.invariants]
        self.trans_fns = [fn for _, fn in cm.transitions]
        self.prop_names = [p.name for p, _ in cm.invariants] + [p.name for p, _ in cm.transitions]
        self.prop_kinds = ["invariant"] * len(cm.invariants) + ["transition"] * len(cm.transitions)
        self.prop_spans = [p.span for p, _ in cm.invariants] + [p.span for p, _ in cm.transitions]
        self._ninv = len(cm.invariants)
        self._by_action: dict[str, list[int]] = {}
        for i, inst in enumerate(cm.instances):
            self._by_action.setdefault(inst.action.name, []).append(i)
        self._actions = {a.name: a for a in self.model.actions}
        self._var_names = {v.name for v in self.model.vars}
        self._reset_caches()
        self._dead: Any = None
        self.hidden = HiddenSearch(cm, self._stepc, self._inv_mask, self._trans_mask, self.internal,
                                   self._stays_false)
        self.retries = 0  # events the lazy search matched only with the whole hidden closure
        self.warnings: list[str] = []
        self._source_lines: list[str] | None = None

    # ------------------------------------------------------------------ caches
    def _reset_caches(self) -> None:
        self._step_cache: list[dict[State, State | int | ModelError]] = [dict() for _ in self.cm.instances]
        self._step_count = 0
        self._inv_cache: dict[State, int] = {}
        self._trans_cache: dict[tuple[State, State], int] = {}
        self._closure_cache: dict[tuple[State, int], list[tuple[State, int, tuple[tuple[int, State], ...]]]] = {}
        self._event_cache: dict[Any, tuple[list[int], ir.Action | None]] = {}
        self._decode_cache: dict[State, dict[str, Any]] = {}
        self._hot: list[dict[State, Any]] = [dict() for _ in self.cm.instances]
        self._hot_count = 0
        self._hot_k: dict[tuple[State, int, int], list[tuple[State, dict[str, Any], int]]] = {}
        self._succ_cache: dict[tuple[State, int, int], Any] = {}

    def _stepc(self, iid: int, s: State) -> State | int | ModelError:
        c = self._step_cache[iid]
        r = c.get(s)
        if r is None:
            try:
                r = self.step(iid, s)
            except ModelError as e:
                r = e
            self._step_count += 1
            if self._step_count > CACHE_LIMIT:
                for d in self._step_cache:
                    d.clear()
                self._step_count = 0
            c[s] = r
        return r

    def _inv_mask(self, s: State) -> int:
        m = self._inv_cache.get(s)
        if m is None:
            m = 0
            for b, fn in enumerate(self.inv_fns):
                try:
                    ok = fn(s)
                except ModelError as e:
                    self._warn(f"invariant {self.prop_names[b]}: modelling error in a reached state: {e}")
                    ok = False
                if not ok:
                    m |= 1 << b
            if len(self._inv_cache) > MASK_CACHE_LIMIT:
                self._inv_cache.clear()
            self._inv_cache[s] = m
        return m

    def _trans_mask(self, s: State, t: State) -> int:
        if not self.trans_fns:
            return 0
        key = (s, t)
        m = self._trans_cache.get(key)
        if m is None:
            m = 0
            for b, fn in enumerate(self.trans_fns):
                try:
                    ok = fn(s, t)
                except ModelError as e:
                    self._warn(f"transition {self.prop_names[self._ninv + b]}: modelling error: {e}")
                    ok = False
                if not ok:
                    m |= 1 << (self._ninv + b)
            if len(self._trans_cache) > MASK_CACHE_LIMIT:
                self._trans_cache.clear()
            self._trans_cache[key] = m
        return m

    def _stays_false(self, key: object, conj: ir.Expr, r: State) -> bool:
        """NOTE(lazy-dead-ends): the Z3 proof that `conj`, false at r, stays false after any
        internal steps (checker/engines/smt/deadend.py, built on first use: Z3 loads only when needed)."""
        if self._dead is None:
            from gpcheck.checker.engines.smt.deadend import DeadEnds

            acts = {id(a): i for i, a in enumerate(self.model.actions)}
            self._dead = DeadEnds(self.model, [(acts[id(self.cm.instances[i].action)], self.cm.instances[i].args)
                                               for i in self.internal])
        return bool(self._dead.stays_false(key, conj, r))

    def _warn(self, msg: str) -> None:
        if msg not in self.warnings and len(self.warnings) < 20:
            self.warnings.append(msg)

    def _closure(self, s: State, k: int) -> list[tuple[State, int, tuple[tuple[int, State], ...]]]:
        """States reachable from `s` by 0..k internal steps, with the mask of properties violated
        on the way (not counting `s` itself) and one path; one entry per (state, mask)."""
        hit = self._closure_cache.get((s, k))
        if hit is not None:
            return hit
        out: list[tuple[State, int, tuple[tuple[int, State], ...]]] = [(s, 0, ())]
        seen: set[Key] = {(s, 0)}
        level = out[:]
        for _ in range(k):
            nxt: list[tuple[State, int, tuple[tuple[int, State], ...]]] = []
            for r, pm, path in level:
                for iid in self.internal:
                    u = self._stepc(iid, r)
                    if type(u) is not tuple:
                        if isinstance(u, ModelError):
                            self._warn(f"modelling error in an internal step, that path is dropped: {u}")
                        continue
                    pm2 = pm | self._inv_mask(u) | self._trans_mask(r, u)
                    key = (u, pm2)
                    if key not in seen:
                        seen.add(key)
                        item = (u, pm2, path + ((iid, u),))
                        nxt.append(item)
                        out.append(item)
            if not nxt:
                break
            level = nxt
        if len(self._closure_cache) > CACHE_LIMIT // 16:
            self._closure_cache.clear()
        self._closure_cache[(s, k)] = out
        return out

    # ------------------------------------------------------------------ events
    def _event_instances(self, ev: Event, where_fn: Callable[[], str]) -> tuple[list[int], ir.Action | None]:
        """Instance ids that the event may be (name and given arguments), cached."""
        key = (ev.action, *ev.args.items()) if ev.args else ev.action
        hit = self._event_cache.get(key)
        if hit is not None:
            return hit
        where = where_fn()
        if ev.action == ANY_ACTION:
            if ev.args:
                raise TraceError(f"{where}: an event with action \"*\" (any action) cannot give arguments")
            res: tuple[list[int], ir.Action | None] = (list(range(len(self.cm.instances))), None)
        else:
            action = self._actions.get(ev.action)
            if action is None:
                names = ", ".join(a.name for a in self.model.actions)
                raise TraceError(f"{where}: unknown action '{ev.action}' (the model's actions: {names})")
            want = self.obs.arg_values(action, ev.args, where)
            iids = [
                i
                for i in self._by_action.get(action.name, [])
                if all(w is None or w == a for w, a in zip(want, self.cm.instances[i].args))
            ]
            res = (iids, action)
        self._event_cache[key] = res
        return res

    def _initial(self, header: TraceHeader, where: str, history: bool) -> dict[Key, _Node | None] | str:
        """Initial candidates consistent with the header's `init` observation (or a reason
        string when the observation contradicts the declarations, or when too many)."""
        observed = self.obs.slots_of(header.init, where) if header.init else {}
        choices: list[list[int]] = []
        slot = 0
        for v in self.model.vars:
            for (_, st), init in zip(ir.leaf_paths(v.type), v.init):
                if slot in observed:
                    o = observed[slot]
                    if init is not None and init != o:
                        name = self.obs.slot_names[slot]
                        return f"the initial state observes {name} = {ir.format_scalar(st, o)}, the model declares {ir.format_scalar(st, init)}"
                    if not ir.scalar_in_range(st, o):
                        return f"the initial state observes {self.obs.slot_names[slot]} = {o}, outside {st}"
                    choices.append([o])
                elif init is None:
                    choices.append(list(_domain(st)))
                else:
                    choices.append([init])
                slot += 1
        total = 1
        for c in choices:
            total *= len(c)
        inside = self.model.initial_assumptions  # NOTE(assumptions): outside a state assumption, no initial state
        if total > (INITIAL_FILTER_MAX if inside else self.opt.max_candidates):
            return f"__too_many__{total}"
        frontier: dict[Key, _Node | None] = {}
        states: list[State] = [()]
        for c in choices:
            states = [s + (v,) for s in states for v in c]
        if inside:
            preds = [self.cm.predicate(e) for e in inside]
            states = [s for s in states if all(truth(fn, s) for fn in preds)]
            if len(states) > self.opt.max_candidates:
                return f"__too_many__{len(states)}"
        for s in states:
            key = (s, self._inv_mask(s))
            frontier[key] = _Node(s, None, None, 1, 0) if history else None
        return frontier

    def is_lazy(self, header: TraceHeader) -> bool:
        """NOTE(lazy-replay): the lazy hidden-step search (checker/engines/replay/hidden.py) replaces the
        exhaustive one unless a bound K was given, the trace logs its internal actions, or the
        model has none."""
        if not self.internal:
            return False
        if self.opt.engine != "auto":
            return self.opt.engine == "lazy"
        return self.opt.max_hidden is None and header.extra.get("logs_internal") is not True

    def _max_hidden(self, header: TraceHeader) -> int:
        if self.opt.max_hidden is not None:
            return self.opt.max_hidden
        if header.extra.get("logs_internal") is True:
            return 0
        return DEFAULT_MAX_HIDDEN if self.internal else 0

    def _pass(self, source: EventSource, *, history: bool, stop_line: int | None = None,
              window: int | None = HISTORY_WINDOW) -> tuple[_Pass, TraceHeader]:
        """One pass over the events (see module doc); `history` keeps parent links."""
        header, events = source()
        path = f"{getattr(events, 'path', '')}"
        unit = getattr(events, "unit", "line")
        self.unit = unit

        def loc(line: int) -> str:
            return f"{path}: states[{line}]" if unit == "state" else f"{path}:{line}"

        k = self._max_hidden(header)
        lazy = self.is_lazy(header)
        advance = self._advance_lazy if lazy else self._advance
        init = self._initial(header, loc(0 if unit == "state" else 1), history)
        if isinstance(init, str):
            if init.startswith("__too_many__"):
                n = int(init[len("__too_many__"):])
                p = _Pass({}, undecided=self._fallback_reason(1, n))
                p.symbolic = SymbolicRequest(self.model, header, source, None, 1, k) if k < UNBOUNDED else None
            else:
                p = _Pass({}, divergence=Divergence(1, {"action": "(initial state)", "args": {}, "state": header.init}, init, (), 0))
            return p, header
        p = _Pass(init, peak=len(init))
        nbits = len(self.prop_names)
        both = -1
        for key in init:
            self._note_bits(p, key[1], 1, nbits)
            both &= key[1]
        for b in range(nbits):
            if init and both >> b & 1:
                p.all_line[b] = 1
        if stop_line is not None and stop_line <= 1:
            p.stop_frontier = init
            return p, header
        frontier = init
        event_cache = self._event_cache
        var_names = self._var_names
        fast_ok = not history
        hot, hot_k = self._hot, self._hot_k
        max_cand = self.opt.max_candidates
        stop = stop_line if stop_line is not None else -1
        n_events, peak = 0, p.peak
        progress = None if history else self.opt.progress
        for ev in events:
            action, args, obs, _, _, line = ev
            if not n_events & 0x3F and stop < 0 and budget.stopped():  # checker/core/budget.py: signal, timeout, memory
                p.undecided = f"{budget.stopped()} at line {line}, after {n_events} events"
                break
            hit = event_cache.get((action, *args.items()) if args else action)
            iids = hit[0] if hit is not None else self._event_instances(ev, lambda: loc(line))[0]
            match: Match | None = None
            if fast_ok and not lazy and len(frontier) == 1 and (not obs or obs.keys() == var_names):
                # Hot path of a fully observed trace (one candidate, no hidden steps), inlined:
                # a whole-state observation in decoded form is compared with the decoded next
                # state (dict equality in C). Exact except that 1/0 pass for true/false and 3.0
                # for 3 (docs/trace-format.md); any other spelling (a list for an enum-indexed
                # array, ...) matches nothing here and is decided by the slot-exact path below.
                ((s, m),) = frontier
                new = {}
                if k:
                    # every (next state, decoded, mask of the hidden path and step) reachable by
                    # hidden steps then the event, cached per (state, event)
                    ents = hot_k.get((s, id(iids), k))
                    if ents is None:
                        ents = self._hot_closure(s, iids, k)
                    for t, d, mm in ents:
                        if not obs or d == obs:
                            new[(t, m | mm)] = None
                else:
                    for iid in iids:
                        # (next state, its decoded form, property mask of the step), or False when
                        # the instance is disabled at s: one lookup per instance in the common case
                        ent = hot[iid].get(s)
                        if ent is None:
                            ent = self._hot_entry(iid, s)
                        if ent is False:
                            continue
                        if obs and ent[1] != obs:
                            continue
                        new[(ent[0], m | ent[2])] = None
                if not new and obs:
                    match = self.obs.fast(obs, lambda: loc(line))
                    new = advance(frontier, iids, k, history, line, match)
            elif not obs:
                new = advance(frontier, iids, k, history, line, None)
            else:
                match = self.obs.fast(obs, lambda: loc(line))
                new = advance(frontier, iids, k, history, line, match)
            if not new and lazy:
                # NOTE(lazy-replay): before reporting a divergence, the event is tried from the whole
                # hidden closure of every candidate (what the exhaustive search would try)
                if obs and match is None:
                    match = self.obs.fast(obs, lambda: loc(line))
                new = self._advance(frontier, iids, UNBOUNDED, history, line, match)
                if new:
                    self.retries += 1
            if not new:
                if obs and match is None:
                    match = self.obs.fast(obs, lambda: loc(line))
                p.divergence = self._diagnose(ev, line, frontier, iids, match, UNBOUNDED if lazy else k, loc(line))
                p.frontier, p.events, p.peak = frontier, n_events, peak
                return p, header
            n_events += 1
            previous = frontier
            if len(new) > peak:
                peak = len(new)
            if nbits:
                both = -1
                for key in new:
                    both &= key[1]
                    if key[1]:
                        self._note_bits(p, key[1], line, nbits)
                if both:
                    for b in range(nbits):
                        if both >> b & 1 and b not in p.all_line:
                            p.all_line[b] = line
            frontier = new
            if progress is not None and not n_events & 255:
                progress(n_events, len(frontier), peak)
            if history and window and n_events % window == 0:
                _cut_history(frontier, n_events - window)
            if line == stop or (stop > 0 and line > stop):
                p.stop_frontier = frontier
                break
            if len(frontier) > max_cand:
                p.undecided = self._fallback_reason(line, len(frontier))
                p.symbolic = (SymbolicRequest(self.model, header, source, tuple(sorted({s for s, _ in previous})), line, k)
                              if k < UNBOUNDED else None)
                break
        p.frontier, p.events, p.peak = frontier, n_events, peak
        return p, header

    def _advance(
        self,
        frontier: dict[Key, _Node | None],
        iids: list[int],
        k: int,
        history: bool,
        line: int,
        obs: Match | dict[str, Any] | None,
    ) -> dict[Key, _Node | None]:
        """The candidates after one event: from each candidate, up to `k` hidden internal steps,
        then one of `iids` whose next state agrees with `obs` (a Match, a decoded whole state,
        or None for no observation)."""
        new: dict[Key, _Node | None] = {}
        stepc = self._stepc
        inv_mask = self._inv_mask
        trans_mask = self._trans_mask
        full = obs.values if type(obs) is Match and obs.full else None
        check: Callable[[State], bool] | None = None
        if full is not None or obs is None:
            pass
        elif type(obs) is Match:
            getter = self.obs.slot_getter(obs.slots)
            vals = obs.values
            check = lambda t: getter(t) == vals  # noqa: E731
        else:
            decoded, whole = self._decoded, obs
            check = lambda t: decoded(t) == whole  # noqa: E731
        succ_cache = self._succ_cache
        for (s, m), node in frontier.items():
            ck = (s, id(iids), k)
            hit = succ_cache.get(ck)
            if hit is None:
                # every (next state, mask of the path, instance, hidden path) from s, and the same
                # indexed by next state: cached, as a trace revisits states with the same events
                outs: list[tuple[State, int, int, tuple[tuple[int, State], ...]]] = []
                starts = self._closure(s, k) if k else ((s, 0, ()),)
                for r, pm, hpath in starts:
                    for iid in iids:
                        t = stepc(iid, r)
                        if type(t) is tuple:
                            outs.append((t, pm | inv_mask(t) | trans_mask(r, t), iid, hpath))  # type: ignore[arg-type]
                by_t: dict[State, list[tuple[State, int, int, tuple[tuple[int, State], ...]]]] = {}
                for o in outs:
                    by_t.setdefault(o[0], []).append(o)
                if len(succ_cache) > SUCC_CACHE_LIMIT:
                    succ_cache.clear()
                hit = succ_cache[ck] = (outs, by_t)
            if full is not None:
                # a whole-state observation pins the next state: one lookup
                outs = hit[1].get(full, [])  # type: ignore[arg-type]
                ok = None
            else:
                outs, ok = hit[0], check
            for t, mm, iid, hpath in outs:
                if ok is not None and not ok(t):
                    continue
                key = (t, m | mm)
                if key in new:
                    continue
                if history:
                    prev = node
                    for hid, hs in hpath:
                        prev = _Node(hs, hid, prev, line, prev.depth if prev else 0)
                    new[key] = _Node(t, iid, prev, line, (prev.depth if prev else 0) + 1)
                else:
                    new[key] = None
        return new

    def _advance_lazy(
        self,
        frontier: dict[Key, _Node | None],
        iids: list[int],
        k: int,
        history: bool,
        line: int,
        obs: Match | None,
    ) -> dict[Key, _Node | None]:
        """Like `_advance`, with the hidden steps fired lazily (NOTE(lazy-replay), checker/engines/replay/hidden.py;
        `k` is not used: postponed steps happen in a later gap)."""
        new: dict[Key, _Node | None] = {}
        check: Callable[[State], bool] | None = None
        okey: Any = None
        if obs is not None:
            getter = self.obs.slot_getter(obs.slots)
            vals = obs.values
            check = lambda t: getter(t) == vals  # noqa: E731
            okey = (obs.slots, vals)
        succ_cache = self._succ_cache
        for (s, m), node in frontier.items():
            ck = ("lazy", s, id(iids), okey)
            outs = succ_cache.get(ck)
            if outs is None:
                outs = self.hidden.outcomes(s, iids, check)
                if len(succ_cache) > LAZY_SUCC_CACHE_LIMIT:
                    succ_cache.clear()
                succ_cache[ck] = outs
            for t, mm, iid, hpath in outs:
                key = (t, m | mm)
                if key in new:
                    continue
                if history:
                    prev = node
                    for hid, hs in hpath:
                        prev = _Node(hs, hid, prev, line, prev.depth if prev else 0)
                    new[key] = _Node(t, iid, prev, line, (prev.depth if prev else 0) + 1)
                else:
                    new[key] = None
        return new

    def _hot_entry(self, iid: int, s: State) -> tuple[State, dict[str, Any], int] | bool:
        """Instance `iid` applied at `s` for the inlined hot path of `_pass` (bounded cache)."""
        t = self._stepc(iid, s)
        ent: tuple[State, dict[str, Any], int] | bool
        if type(t) is tuple:
            ent = (t, self._decoded(t), self._inv_mask(t) | self._trans_mask(s, t))
        else:
            ent = False
        self._hot_count += 1
        if self._hot_count > DECODE_CACHE_LIMIT:
            for d in self._hot:
                d.clear()
            self._hot_count = 0
        self._hot[iid][s] = ent
        return ent

    def _hot_closure(self, s: State, iids: list[int], k: int) -> list[tuple[State, dict[str, Any], int]]:
        """For the inlined hot path with hidden steps: every distinct (next state, mask) after up to
        `k` internal steps from `s` and then one of `iids`, with the decoded next state (cached)."""
        seen: dict[tuple[State, int], None] = {}
        for r, pm, _ in self._closure(s, k):
            for iid in iids:
                t = self._stepc(iid, r)
                if type(t) is tuple:
                    seen[(t, pm | self._inv_mask(t) | self._trans_mask(r, t))] = None  # type: ignore[arg-type]
        ents = [(t, self._decoded(t), mm) for t, mm in seen]
        if len(self._hot_k) > SUCC_CACHE_LIMIT:
            self._hot_k.clear()
        self._hot_k[(s, id(iids), k)] = ents
        return ents

    def _decoded(self, s: State) -> dict[str, Any]:
        """`layout.decode(s)`, cached (bounded)."""
        d = self._decode_cache.get(s)
        if d is None:
            if len(self._decode_cache) > DECODE_CACHE_LIMIT:
                self._decode_cache.clear()
            d = self._decode_cache[s] = self.cm.layout.decode(s)
        return d

    @staticmethod
    def _note_bits(p: _Pass, mask: int, line: int, nbits: int) -> None:
        for b in range(nbits):
            if mask >> b & 1 and b not in p.first_line:
                p.first_line[b] = line

    def _fallback_reason(self, line: int, n: int) -> str:
        """NOTE(replay-z3): the symbolic fallback is not wired yet (see `_symbolic_fallback`)."""
        return _symbolic_fallback(self.model, line, n, self.opt.max_candidates)

    # ------------------------------------------------------------------ diagnosis
    def _require_text(self, action: ir.Action, ordinal: int) -> tuple[int | None, str]:
        try:
            req = self.cm.require_of(action, ordinal)
        except KeyError:
            return None, f"require #{ordinal + 1}"
        line = req.span.line or None
        if self._source_lines is None:
            try:
                # a bundled model's `file` is its name: read the shipped file (spec/models/)
                from gpcheck.spec import resolve_spec_path

                with open(resolve_spec_path(self.model.file), encoding="utf-8") as f:
                    self._source_lines = f.read().splitlines()
            except (OSError, GpcheckError):
                self._source_lines = []
        text = ""
        if line and line <= len(self._source_lines):
            text = self._source_lines[line - 1].strip()
        return line, text or f"require #{ordinal + 1}"

    def _diagnose(
        self,
        ev: Event,
        line: int,
        frontier: dict[Key, _Node | None],
        iids: list[int],
        match: Match | None,
        k: int,
        where: str,
    ) -> Divergence:
        if match is not None and ev.state:
            # Validate the observation fully: a wrong kind of value is bad input, not divergence.
            match = self.obs.compile(ev.state, where)
        states = sorted({s for s, _ in frontier})
        shown: list[Candidate] = []
        for s in states[: self.opt.show_candidates]:
            attempts: list[Attempt] = []
            for iid in iids[:16]:
                inst = self.cm.instances[iid]
                r = self._stepc(iid, s)
                label = inst.label()
                if isinstance(r, ModelError):
                    attempts.append(Attempt(label, "error", message=str(r)))
                elif type(r) is int:
                    ln, text = self._require_text(inst.action, r)  # type: ignore[arg-type]
                    attempts.append(Attempt(label, "require", r, ln, text))  # type: ignore[arg-type]
                else:
                    assert match is not None
                    mism = tuple(
                        (self.obs.slot_names[i], ir.format_scalar(self.obs.slot_types[i], o), ir.format_scalar(self.obs.slot_types[i], v))
                        for i, o, v in match.mismatches(r)  # type: ignore[arg-type]
                    )
                    attempts.append(Attempt(label, "state", mismatches=mism))
            hidden = len(self._closure(s, k)) - 1 if k else 0
            shown.append(Candidate(self.cm.layout.decode(s), tuple(attempts), hidden))
        if not iids:
            action = self._actions.get(ev.action)
            params = ", ".join(f"{p.name}: {p.type}" for p in action.params) if action else ""
            reason = f"no instance of '{ev.action}' has the arguments {ev.args} (parameters: {params})"
        elif any(a.outcome == "state" for c in shown for a in c.attempts):
            reason = f"'{ev.action}' cannot produce the observed state from any candidate"
        elif all(a.outcome == "error" for c in shown for a in c.attempts):
            reason = f"'{ev.action}' hits a modelling error in every candidate state"
        else:
            reason = f"'{ev.action}' is not enabled in any candidate state"
        if k >= UNBOUNDED:
            reason += " (also after any number of internal steps)"
        elif k:
            reason += f" (also after up to {k} internal steps)"
        event = {"action": ev.action, "args": ev.args}
        if ev.state:
            event["state"] = ev.state
        return Divergence(line, event, reason, tuple(shown), len(states))

    # ------------------------------------------------------------------ the whole replay
    def replay(self, source: EventSource, trace_name: str) -> ReplayReport:
        """Replay the trace that `source` opens; see module doc."""
        t0 = time.perf_counter()
        p, header = self._pass(source, history=False)
        lazy = self.is_lazy(header)
        rep = ReplayReport(
            trace=trace_name,
            model=self.model.name,
            spec_file=self.model.file,
            constants=self.model.const_values,
            events=p.events,
            candidates=len(p.frontier),
            peak_candidates=p.peak,
            max_hidden=None if lazy else self._max_hidden(header),
            unit=getattr(self, "unit", "line"),
        )
        if header.extra.get("loop") is not None:
            self._warn(f"the trace is a lasso (it loops back to state {header.extra['loop']}); replay checks its finite prefix")
        if header.model is not None and header.model != self.model.name:
            self._warn(f"the trace names model '{header.model}', replayed against '{self.model.name}'")
        rep.skipped = [lv.name for lv in self.model.liveness]
        if p.undecided is not None:
            rep.conforms, rep.reason = None, p.undecided
            outcome = run_symbolic(p.symbolic) if p.symbolic is not None else None
            if outcome is not None:
                rep.conforms = outcome.conforms
                rep.reason = outcome.reason or None
                if outcome.conforms is False:
                    rep.divergence = Divergence(outcome.line or 0, outcome.event or {}, outcome.reason or "no completion of the unobserved values matches this event (Z3)", (), 0)
                rep.results = [
                    Result(n, k, Verdict.UNKNOWN, "replay", reason="not evaluated: past the candidate limit the trace was replayed symbolically")
                    for n, k in zip(self.prop_names, self.prop_kinds)
                ]
                rep.skipped = [lv.name for lv in self.model.liveness]
                rep.warnings = list(self.warnings)
                rep.seconds = time.perf_counter() - t0
                return rep
        elif p.divergence is not None:
            rep.conforms, rep.divergence = False, p.divergence
        else:
            rep.conforms = True
        rep.results = self._results(p, source)
        self._source_missing(header, rep)
        rep.warnings = list(self.warnings)
        rep.seconds = time.perf_counter() - t0
        return rep

    def _source_missing(self, header: TraceHeader, rep: ReplayReport) -> None:
        """What the trace's source did not record (NOTE(source-missing)): each as a warning, and a
        property that holds only on values the importer made up (a stream priority: every stream
        at level 0) is unknown, with the reason and what would supply them."""
        from dataclasses import replace

        from gpcheck.traces.preconditions import FILLED_ARG, header_missing, tainted_properties, warning_lines

        missing = header_missing(header.extra)
        for line in warning_lines(missing):
            self._warn(line)
        for m in missing:
            arg = FILLED_ARG.get(str(m.get("field")))
            if arg is None or m.get("partial"):
                continue
            reads = tainted_properties(self.model, arg)
            if reads and rep.conforms:
                self._warn(f"conformance was decided with the '{arg}' the importer filled in ({m.get('reason')})")
            for i, r in enumerate(rep.results):
                if r.property in reads and r.verdict is Verdict.HOLDS_TO_BOUND:
                    rep.results[i] = replace(r, verdict=Verdict.UNKNOWN, bound=None, reason=(
                        f"holds on the reconstructed behaviours, but reads {', '.join(reads[r.property])}, set from "
                        f"the events' '{arg}', which the source did not record: {m.get('reason')}; "
                        f"{m.get('remedy')}"))

    def _results(self, p: _Pass, source: EventSource) -> list[Result]:
        """Property verdicts over the final candidates (NOTE(replay-masks))."""
        masks = [m for _, m in p.frontier]
        out: list[Result] = []
        need: dict[int, int] = {}
        for b, name in enumerate(self.prop_names):
            hit = sum(1 for m in masks if m >> b & 1)
            if masks and hit == len(masks):
                need[b] = p.all_line.get(b, p.first_line[b])
        cexs = self._counterexamples(source, need) if need and self.opt.counterexamples else {}
        for b, name in enumerate(self.prop_names):
            hit = sum(1 for m in masks if m >> b & 1)
            line = p.first_line.get(b)
            if masks and hit == len(masks) and b in p.all_line:
                # NOTE(replay-violation-line): violated on every behaviour: the line from which no
                # behaviour explains the trace without it; `earliest_line`: where one first has it
                line = p.all_line[b]
            detail: dict[str, Any] = {"line": line} if line is not None else {}
            if line is not None and p.first_line.get(b, line) != line:
                detail["earliest_line"] = p.first_line[b]
            kind = self.prop_kinds[b]
            if not masks:
                out.append(Result(name, kind, Verdict.UNKNOWN, "replay", reason="no behaviour was reconstructed"))
            elif hit == 0:
                out.append(Result(name, kind, Verdict.HOLDS_TO_BOUND, "replay", bound=p.events,
                                  reason="holds on every behaviour reconstructed from the trace"))
            elif hit == len(masks):
                cx = cexs.get(b)
                if cx is None:
                    out.append(Result(name, kind, Verdict.UNKNOWN, "replay",
                                      reason="violated on every reconstructed behaviour; no counterexample was built",
                                      detail=detail))
                else:
                    cx_obj, window = cx
                    if window is not None:
                        detail["window_start_line"] = window
                    out.append(Result(name, kind, Verdict.VIOLATED, "replay", bound=p.events,
                                      reason="violated on every behaviour reconstructed from the trace",
                                      counterexample=cx_obj, detail=detail))
            else:
                out.append(Result(name, kind, Verdict.UNKNOWN, "replay", bound=p.events,
                                  reason=f"violated on {hit} of {len(masks)} reconstructed behaviours: it depends on values the trace does not observe",
                                  detail=detail))
        return out

    def _counterexamples(self, source: EventSource, need: dict[int, int]) -> dict[int, tuple[Counterexample, int | None]]:
        """Second pass with parent links, up to the last first-violation line needed."""
        p, _ = self._pass(source, history=True, stop_line=max(need.values()))
        # The frontier at a given line is gone once passed, so rebuild per distinct line.
        out: dict[int, tuple[Counterexample, int | None]] = {}
        by_line: dict[int, list[int]] = {}
        for b, ln in need.items():
            by_line.setdefault(ln, []).append(b)
        for ln, bits in sorted(by_line.items()):
            if ln == max(need.values()):
                q = p
            else:
                q, _ = self._pass(source, history=True, stop_line=ln)
            fr = q.stop_frontier or {}
            for b in bits:
                for (s, m), node in sorted(fr.items(), key=lambda kv: kv[0]):
                    if m >> b & 1 and node is not None:
                        out[b] = self._to_counterexample(node, b)
                        break
        return out

    def reconstruct(self, source: EventSource) -> Counterexample | None:
        """One full behaviour of the model that the trace is a record of (hidden internal steps
        included; the first candidate in state order), or None when the trace does not conform.
        Memory grows with the trace: for exports, not for long replays."""
        p, _ = self._pass(source, history=True, window=None)
        if p.divergence is not None or p.undecided is not None or not p.frontier:
            return None
        _, node = min(p.frontier.items(), key=lambda kv: kv[0])
        assert node is not None
        return self._behaviour(_chain(node))

    def reconstruct_steps(self, source: EventSource) -> list[tuple[str | None, dict[str, Any], dict[str, Any], int, bool]] | None:
        """Like `reconstruct`, with each step's trace line and whether replay inserted it (a
        hidden internal step): `(action, args, decoded state, line, hidden)`, the first step
        being `(None, {}, initial state, 1, False)`. For timeline exports."""
        p, _ = self._pass(source, history=True, window=None)
        if p.divergence is not None or p.undecided is not None or not p.frontier:
            return None
        _, node = min(p.frontier.items(), key=lambda kv: kv[0])
        assert node is not None
        out: list[tuple[str | None, dict[str, Any], dict[str, Any], int, bool]] = []
        for nd in _chain(node):
            state = self.cm.layout.decode(nd.state)
            if nd.iid is None:
                out.append((None, {}, state, nd.line, False))
            else:
                inst = self.cm.instances[nd.iid]
                # an event's own step ends a depth; hidden steps before it keep the previous depth
                hidden = nd.parent is not None and nd.depth == nd.parent.depth
                out.append((inst.action.name, inst.arg_dict(), state, nd.line, hidden))
        return out

    def _to_counterexample(self, node: _Node, bit: int) -> tuple[Counterexample, int | None]:
        chain = _chain(node)
        # Truncate at the first state where the property is violated.
        end = len(chain)
        for i, nd in enumerate(chain):
            bad = self._inv_mask(nd.state)
            if i > 0:
                bad |= self._trans_mask(chain[i - 1].state, nd.state)
            if bad >> bit & 1:
                end = i + 1
                break
        chain = chain[:end]
        window = chain[0].line if chain[0].iid is not None else None  # a cut history (HISTORY_WINDOW)
        return self._behaviour(chain), window

    def _behaviour(self, chain: list[_Node]) -> Counterexample:
        steps = []
        for i, nd in enumerate(chain):
            if i == 0 or nd.iid is None:
                steps.append(Step(None, {}, self.cm.layout.decode(nd.state)))
            else:
                inst = self.cm.instances[nd.iid]
                steps.append(Step(inst.action.name, inst.arg_dict(), self.cm.layout.decode(nd.state)))
        return Counterexample(tuple(steps))


def _chain(node: _Node) -> list[_Node]:
    """The history links from the oldest kept one to `node`."""
    chain: list[_Node] = []
    n: _Node | None = node
    while n is not None:
        chain.append(n)
        n = n.parent
    chain.reverse()
    return chain


def _cut_history(frontier: dict[Key, _Node | None], depth: int) -> None:
    """Drop parent links older than `depth` events (bounded memory for the second pass)."""
    for node in frontier.values():
        n = node
        while n is not None and n.parent is not None:
            if n.parent.depth <= depth:
                n.parent = None
                break
            n = n.parent


def _domain(t: ir.ScalarType) -> range:
    if isinstance(t, ir.IntType):
        assert t.lo is not None and t.hi is not None
        return range(t.lo, t.hi + 1)
    return ir.domain_values(t)


def _symbolic_fallback(model: ir.Model, line: int, n: int, limit: int) -> str:
    """The undecided reason when the candidate set outgrows `limit` (NOTE(replay-z3))."""
    return (
        f"at line {line} the set of candidate states reached {n} (limit {limit}, --max-candidates); "
        f"the Z3 fallback that would fill in the unobserved values is not available yet, so the trace "
        f"is undecided. Observe more variables, or raise --max-candidates"
    )


def run_symbolic(request: SymbolicRequest) -> SymbolicOutcome | None:
    """NOTE(replay-z3): the hook to the Z3 fallback. Past the candidate limit, replay calls
    `replay_symbolic(request) -> SymbolicOutcome` of module SYMBOLIC_MODULE (checker/engines/smt/tracefill.py,
    checker/engines/smt being the only place that imports z3). Without that module this returns None and
    replay reports the trace as undecided (exit 3) instead of guessing."""
    import importlib

    try:
        mod = importlib.import_module(SYMBOLIC_MODULE)
    except ImportError:
        return None
    fn = getattr(mod, "replay_symbolic", None)
    if fn is None:
        return None
    return fn(request)  # type: ignore[no-any-return]


def replay_events(
    cm: CompiledModel,
    source: EventSource,
    trace_name: str,
    options: ReplayOptions | None = None,
) -> ReplayReport:
    """Replay the events `source` opens against `cm` (the Python API of `gpcheck replay`)."""
    return Replayer(cm, options).replay(source, trace_name)



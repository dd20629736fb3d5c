"""Breadth-first exhaustive search over the compiled successor function.

BFS gives shortest counterexamples for invariants, transition properties, deadlocks and
modelling errors. The visited dict maps each state to its BFS parent, so a counterexample is
the parent chain; the action instances along it are recovered by re-running the successor
function on each parent (NOTE(cex-recovery)). Liveness is checked afterwards on the explored
graph (checker/engines/explicit/liveness.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Protocol

from gpcheck.spec import ir
from gpcheck.spec.errors import UsageError
from gpcheck.gpmodel import CompiledModel, ModelError, State, truth
from gpcheck.gpmodel.model import first_error
from gpcheck.gpmodel.runtime import Fault
from gpcheck.gpmodel.symmetry import Symmetry
from gpcheck.checker.core import budget
from gpcheck.checker.core import progress as meter
from gpcheck.checker.core.verdict import Counterexample, Result, Step, Verdict

ENGINE = "explicit"
ProgressFn = Callable[[int, int, int, float], None]  # states, depth, frontier, seconds


@dataclass(frozen=True)
class Limits:
    max_states: int | None = None
    timeout: float | None = None
    progress: ProgressFn | None = None


@dataclass
class Search:
    """What one BFS established; engines and reports read it."""

    parent: dict[State, State | None]
    complete: bool  # every reachable state (inside the constraints) was expanded
    pruned: bool  # some state lay outside a constraint and was not expanded
    depth: int
    stop_reason: str | None
    fired: list[int]
    invariant_cex: dict[int, State] = field(default_factory=dict)  # invariant index -> bad state
    transition_cex: dict[int, tuple[State, int, State]] = field(default_factory=dict)
    deadlock: State | None = None
    fault: ModelError | None = None  # the first modelling error, with its state
    fault_step: tuple[State, int, State] | None = None  # set when a transition property's evaluation failed
    # The symmetry reduction the search ran under (gpcheck.gpmodel.symmetry.Symmetry), or None: `parent`
    # then holds one canonical state per orbit and counterexamples are un-permuted (NOTE(symmetry)).
    symmetry: Symmetry | None = None


def select_properties(model: ir.Model, names: Iterable[str] | None) -> set[str]:
    """The property names to check; UsageError for a name the model does not have."""
    allp = set(model.property_names()) | {"range"} | (set() if model.allow_deadlock else {"deadlock"})
    if names is None:
        return allp
    chosen = set(names)
    unknown = chosen - allp
    if unknown:
        raise UsageError(
            f"{model.file}: no property {', '.join(sorted(unknown))} (properties: {', '.join(sorted(allp))})"
        )
    return chosen


def search(cm: CompiledModel, wanted: set[str], limits: Limits = Limits(),
           symmetry: Symmetry | None = None) -> Search:
    """BFS from the initial states. Every predicate the selected properties need (all of them
    when `range` is selected) is evaluated for modelling errors in every state and on every
    step reached (NOTE(predicate-errors)); the search stops at the first modelling error, at the
    end of the BFS layer where a predicate's is found (a shorter action error may still turn
    up in that layer). With `symmetry` every state reached is replaced by its orbit's canonical
    state before it is looked up (NOTE(symmetry)): the search covers the quotient."""
    model = cm.model
    canon = symmetry.canonical if symmetry is not None and symmetry.active else None
    succ = cm.raw_successors
    invs = [(i, fn) for i, (inv, fn) in enumerate(cm.invariants) if inv.name in wanted]
    trans = [(i, fn) for i, (tp, fn) in enumerate(cm.transitions) if tp.name in wanted]
    state_checks, step_checks = cm.fallible(wanted)
    check_deadlock = "deadlock" in wanted and not model.allow_deadlock
    constrained = bool(model.constraints)
    in_constraints = cm.in_constraints
    is_terminal = cm.is_terminal
    fired = [0] * len(cm.instances)

    init = cm.initial_states()
    if canon is not None:  # the initial states are closed under the permutations (spec/symmetry.py)
        init = list(dict.fromkeys(canon(s) for s in init))
    parent: dict[State, State | None] = dict.fromkeys(init)
    res = Search(parent, complete=False, pruned=False, depth=0, stop_reason=None, fired=fired,
                 symmetry=symmetry if canon is not None else None)
    stopped = "the search stopped at a modelling error (see the range result)"

    def check_invariants(s: State) -> None:
        nonlocal invs
        try:
            bad = [i for i, fn in invs if not fn(s)]
        except ModelError:  # one fails to evaluate: it counts as false
            bad = [i for i, fn in invs if not truth(fn, s)]
        if bad:
            for i in bad:
                res.invariant_cex[i] = s
            invs = [(i, fn) for i, fn in invs if i not in res.invariant_cex]

    def check_state(s: State) -> bool:
        """Evaluate the predicates in a newly reached state; whether it is expanded."""
        if state_checks and res.fault is None:
            res.fault = first_error(state_checks, s)
        if invs:
            check_invariants(s)
        if constrained and not in_constraints(s):
            res.pruned = True
            return False
        return True

    start = time.monotonic()
    frontier = [s for s in init if check_state(s)]
    if res.fault is not None:
        res.stop_reason = stopped
        return res

    max_states = limits.max_states
    timeout = limits.timeout
    progress = limits.progress
    meter.begin("explicit")
    tick = 0
    while frontier:
        nxt: list[State] = []
        for s in frontier:
            tick += 1
            if tick & 0xFFF == 0:
                elapsed = time.monotonic() - start
                meter.note(states=len(parent), depth=res.depth, frontier=len(frontier))  # checker/core/progress.py
                if progress is not None:
                    progress(len(parent), res.depth, len(frontier), elapsed)
                if timeout is not None and elapsed > timeout:
                    res.stop_reason = f"timeout after {timeout:g} s (every state to depth {res.depth} checked)"
                    return res
                if budget.stopped():  # SIGINT/SIGTERM, --max-memory (checker/core/budget.py)
                    res.stop_reason = f"{budget.stopped()} (every state to depth {res.depth} checked)"
                    return res
            try:
                succs = succ(s)
            except Fault as f:  # shorter than a predicate's error found in this layer
                res.fault = cm.fault(f, s)
                res.fault_step = None
                res.stop_reason = stopped
                return res
            if not succs:
                if check_deadlock and res.deadlock is None and not is_terminal(s):
                    res.deadlock = s
                continue
            for iid, t in succs:
                fired[iid] += 1
                if trans:
                    try:
                        bad = [i for i, fn in trans if not fn(s, t)]
                    except ModelError:  # one fails to evaluate: it counts as false
                        bad = [i for i, fn in trans if not truth(fn, s, t)]
                    if bad:
                        for i in bad:
                            res.transition_cex[i] = (s, iid, t)
                        trans = [(i, fn) for i, fn in trans if i not in res.transition_cex]
                if step_checks and res.fault is None:
                    res.fault = first_error(step_checks, s, t)
                    if res.fault is not None:
                        res.fault_step = (s, iid, t)
                if canon is not None and t not in parent:  # a key of parent is canonical already
                    t = canon(t)
                if t not in parent:  # check_state(t), inlined: the hot path
                    parent[t] = s
                    if state_checks and res.fault is None:
                        res.fault = first_error(state_checks, t)
                    if invs:
                        check_invariants(t)
                    if constrained and not in_constraints(t):
                        res.pruned = True
                        continue
                    nxt.append(t)
            if max_states is not None and len(parent) > max_states:
                res.stop_reason = f"state limit {max_states} reached (every state to depth {res.depth} checked)"
                return res
        if res.fault is not None:
            res.stop_reason = stopped
            return res
        if nxt:
            res.depth += 1
        frontier = nxt
    res.complete = True
    if progress is not None:
        progress(len(parent), res.depth, 0, time.monotonic() - start)
    return res


# ---------------------------------------------------------------------------- counterexamples
def path_to(parent: dict[State, State | None], s: State) -> list[State]:
    out = [s]
    while True:
        p = parent[out[-1]]
        if p is None:
            break
        out.append(p)
    out.reverse()
    return out


def edge_instance(cm: CompiledModel, s: State, t: State) -> int:
    """NOTE(cex-recovery): the first instance (in declaration order) that steps s to t."""
    for iid, u in cm.successors(s):
        if u == t:
            return iid
    raise AssertionError("no instance leads from a state to its BFS child")


def make_steps(cm: CompiledModel, states: list[State], iids: list[int | None] | None = None) -> tuple[Step, ...]:
    """Decoded steps of a state sequence; instances are recovered where not given."""
    steps = []
    for k, s in enumerate(states):
        if k == 0:
            steps.append(Step(None, {}, cm.layout.decode(s)))
            continue
        iid = iids[k] if iids is not None and iids[k] is not None else edge_instance(cm, states[k - 1], s)
        inst = cm.instances[iid]  # type: ignore[index]
        steps.append(Step(inst.action.name, inst.arg_dict(), cm.layout.decode(s)))
    return tuple(steps)


def counterexample_to(cm: CompiledModel, parent: dict[State, State | None], s: State) -> Counterexample:
    return Counterexample(make_steps(cm, path_to(parent, s)))


def _path_steps(cm: CompiledModel, res: Search, s: State, last: tuple[int, State] | None = None,
                accept: Callable[[State, State], bool] | None = None) -> tuple[Step, ...]:
    """The steps to `s` (then the step `last` from it): the BFS path, or under symmetry a
    concrete behaviour through the same orbits (checker/engines/explicit/unpermute.py)."""
    if res.symmetry is None:
        states = path_to(res.parent, s) + ([last[1]] if last else [])
        iids: list[int | None] = [None] * len(states)
        if last:
            iids[-1] = last[0]
        return make_steps(cm, states, iids)
    from gpcheck.checker.engines.explicit.unpermute import concrete_path

    states, iids = concrete_path(cm, res.symmetry, path_to(res.parent, s), last, accept)
    return make_steps(cm, states, iids)


# ---------------------------------------------------------------------------- verdicts
def safety_results(cm: CompiledModel, res: Search, wanted: set[str]) -> list[Result]:
    """One Result per selected invariant, transition property, deadlock and range check."""
    model = cm.model
    out: list[Result] = []
    holds = _holding_verdict(model, res)

    for i, (inv, _) in enumerate(cm.invariants):
        if inv.name not in wanted:
            continue
        if i in res.invariant_cex:
            cex = Counterexample(_path_steps(cm, res, res.invariant_cex[i]))
            out.append(Result(inv.name, "invariant", Verdict.VIOLATED, ENGINE, counterexample=cex))
        else:
            out.append(holds(inv.name, "invariant"))
    for i, (tp, _) in enumerate(cm.transitions):
        if tp.name not in wanted:
            continue
        if i in res.transition_cex:
            s, iid, t = res.transition_cex[i]
            fn = cm.transitions[i][1]
            cex = Counterexample(_path_steps(cm, res, s, (iid, t), lambda a, b, fn=fn: not truth(fn, a, b)))
            out.append(Result(tp.name, "transition", Verdict.VIOLATED, ENGINE, counterexample=cex))
        else:
            out.append(holds(tp.name, "transition"))
    if "deadlock" in wanted and not model.allow_deadlock:
        if res.deadlock is not None:
            cex = Counterexample(_path_steps(cm, res, res.deadlock))
            out.append(Result("deadlock", "deadlock", Verdict.VIOLATED, ENGINE, counterexample=cex,
                              detail={"message": "no action is enabled and no terminal predicate holds"}))
        else:
            out.append(holds("deadlock", "deadlock"))
    if "range" in wanted:
        if res.fault is not None:
            e = res.fault
            assert e.state is not None
            if res.fault_step is not None:
                s, iid, t = res.fault_step
                state_checks, step_checks = cm.fallible(wanted)
                cex = Counterexample(_path_steps(cm, res, s, (iid, t),
                                                 lambda a, b: first_error(step_checks, a, b) is not None))
            else:
                cex = Counterexample(_path_steps(cm, res, e.state))
                if res.symmetry is not None and e.site.instance is not None:
                    from gpcheck.checker.engines.explicit.unpermute import concrete_fault

                    e = concrete_fault(cm, cex, e)
            detail = {"error": e.message, "kind": e.site.kind, "location": str(e.site.span)}
            if e.site.instance is not None:
                inst = cm.instances[e.site.instance]
                detail["action"] = inst.action.name
                detail["args"] = inst.arg_dict()  # type: ignore[assignment]
            out.append(Result("range", "range", Verdict.VIOLATED, ENGINE, counterexample=cex, detail=detail))
        else:
            out.append(holds("range", "range"))
    return out


class SearchOutcome(Protocol):
    """How far a search got: the explicit search's `Search`, the zone engine's `SafetySearch`."""

    complete: bool
    pruned: bool
    depth: int
    stop_reason: str | None


def _holding_verdict(model: ir.Model, res: SearchOutcome, engine: str = ENGINE) -> Callable[[str, str], Result]:
    """The verdict of a property that was not violated, by how complete the search was."""

    def make(name: str, kind: str) -> Result:
        if res.complete and not res.pruned:
            return Result(name, kind, Verdict.PROVED, engine)
        if res.complete:
            names = ", ".join(c.name for c in model.constraints)
            return Result(name, kind, Verdict.HOLDS_TO_BOUND, engine, bound=res.depth,
                          reason=f"explored only inside constraint {names}")
        return Result(name, kind, Verdict.UNKNOWN, engine, bound=res.depth, reason=res.stop_reason or "incomplete")

    return make

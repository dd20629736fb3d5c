"""Breadth-first exhaustive search over the compiled successor function.

BFS gives shortest counterexamples for invariants, transition properties, deadlocks and
modelling errors. The visited dict maps each state to its BFS parent, so a counterexample is
the parent chain; the action instances along it are recovered by re-running the successor
function on each parent (NOTE(cex-recovery)). Liveness is checked afterwards on the explored
graph (checker/liveness.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from spec import ir
from spec.errors import UsageError
from gpmodel import CompiledModel, ModelError, State
from gpmodel.runtime import Fault
from checker import budget
from checker.verdict import Counterexample, Result, Step, Verdict

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


def search(cm: CompiledModel, wanted: set[str], limits: Limits = Limits()) -> Search:
    model = cm.model
    succ = cm.raw_successors
    invs = [(i, fn) for i, (inv, fn) in enumerate(cm.invariants) if inv.name in wanted]
    trans = [(i, fn) for i, (tp, fn) in enumerate(cm.transitions) if tp.name in wanted]
    check_deadlock = "deadlock" in wanted and not model.allow_deadlock
    constrained = bool(model.constraints)
    in_constraints = cm.in_constraints
    is_terminal = cm.is_terminal
    fired = [0] * len(cm.instances)

    init = cm.initial_states()
    parent: dict[State, State | None] = dict.fromkeys(init)
    res = Search(parent, complete=False, pruned=False, depth=0, stop_reason=None, fired=fired)

    def check_invariants(s: State) -> None:
        nonlocal invs
        bad = [i for i, fn in invs if not fn(s)]
        if bad:
            for i in bad:
                res.invariant_cex[i] = s
            invs = [(i, fn) for i, fn in invs if i not in res.invariant_cex]

    start = time.monotonic()
    frontier: list[State] = []
    try:
        for s in init:
            check_invariants(s)
            if constrained and not in_constraints(s):
                res.pruned = True
            else:
                frontier.append(s)
    except ModelError as e:
        res.fault = e
        res.stop_reason = "a modelling error in a property or constraint"
        return res

    max_states = limits.max_states
    timeout = limits.timeout
    progress = limits.progress
    tick = 0
    while frontier:
        nxt: list[State] = []
        for s in frontier:
            tick += 1
            if tick & 0xFFF == 0:
                elapsed = time.monotonic() - start
                if progress is not None:
                    progress(len(parent), res.depth, len(frontier), elapsed)
                if timeout is not None and elapsed > timeout:
                    res.stop_reason = f"timeout after {timeout:g} s (every state to depth {res.depth} checked)"
                    return res
                if budget.stopped():  # SIGINT/SIGTERM, --max-memory (checker/budget.py)
                    res.stop_reason = f"{budget.stopped()} (every state to depth {res.depth} checked)"
                    return res
            try:
                succs = succ(s)
            except Fault as f:
                res.fault = cm.fault(f, s)
                res.stop_reason = "the search stopped at a modelling error (see the range result)"
                return res
            if not succs:
                if check_deadlock and res.deadlock is None and not is_terminal(s):
                    res.deadlock = s
                continue
            for iid, t in succs:
                fired[iid] += 1
                if trans:
                    for i, fn in trans:
                        if not fn(s, t):
                            res.transition_cex[i] = (s, iid, t)
                    trans = [(i, fn) for i, fn in trans if i not in res.transition_cex]
                if t not in parent:
                    parent[t] = s
                    try:
                        if invs:
                            check_invariants(t)
                        if constrained and not in_constraints(t):
                            res.pruned = True
                            continue
                    except ModelError as e:
                        res.fault = e
                        res.stop_reason = "a modelling error in an invariant or constraint"
                        return res
                    nxt.append(t)
            if max_states is not None and len(parent) > max_states:
                res.stop_reason = f"state limit {max_states} reached (every state to depth {res.depth} checked)"
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
            cex = counterexample_to(cm, res.parent, res.invariant_cex[i])
            out.append(Result(inv.name, "invariant", Verdict.VIOLATED, ENGINE, counterexample=cex))
        else:
            out.append(holds(inv.name, "invariant"))
    for i, (tp, _) in enumerate(cm.transitions):
        if tp.name not in wanted:
            continue
        if i in res.transition_cex:
            s, iid, t = res.transition_cex[i]
            states = path_to(res.parent, s) + [t]
            iids: list[int | None] = [None] * (len(states) - 1) + [iid]
            cex = Counterexample(make_steps(cm, states, iids))
            out.append(Result(tp.name, "transition", Verdict.VIOLATED, ENGINE, counterexample=cex))
        else:
            out.append(holds(tp.name, "transition"))
    if "deadlock" in wanted and not model.allow_deadlock:
        if res.deadlock is not None:
            cex = counterexample_to(cm, res.parent, res.deadlock)
            out.append(Result("deadlock", "deadlock", Verdict.VIOLATED, ENGINE, counterexample=cex,
                              detail={"message": "no action is enabled and no terminal predicate holds"}))
        else:
            out.append(holds("deadlock", "deadlock"))
    if "range" in wanted:
        if res.fault is not None:
            e = res.fault
            assert e.state is not None
            cex = counterexample_to(cm, res.parent, e.state) if e.state in res.parent else Counterexample(
                (Step(None, {}, cm.layout.decode(e.state)),))
            detail = {"error": e.message, "kind": e.site.kind, "location": str(e.site.span)}
            if e.site.instance is not None:
                inst = cm.instances[e.site.instance]
                detail["action"] = inst.action.name
                detail["args"] = inst.arg_dict()  # type: ignore[assignment]
            out.append(Result("range", "range", Verdict.VIOLATED, ENGINE, counterexample=cex, detail=detail))
        else:
            out.append(holds("range", "range"))
    return out


def _holding_verdict(model: ir.Model, res: Search) -> Callable[[str, str], Result]:
    """The verdict of a property that was not violated, by how complete the search was."""

    def make(name: str, kind: str) -> Result:
        if res.complete and not res.pruned:
            return Result(name, kind, Verdict.PROVED, ENGINE)
        if res.complete:
            names = ", ".join(c.name for c in model.constraints)
            return Result(name, kind, Verdict.HOLDS_TO_BOUND, ENGINE, bound=res.depth,
                          reason=f"explored only inside constraint {names}")
        return Result(name, kind, Verdict.UNKNOWN, ENGINE, bound=res.depth, reason=res.stop_reason or "incomplete")

    return make

"""Replays an engine's counterexample (the README's JSON shape) through the reference
semantics, step by step, and says what is wrong with it, if anything.

A counterexample is valid when step 0 is an initial state, every later step is the named action
instance enabled in the previous state (which must lie inside the constraints) and yielding
exactly the state shown, and the end shows the violation its property kind needs:
- invariant: the invariant is false (or fails to evaluate) in the last state;
- transition: the property is false (or fails to evaluate) on the last step;
- deadlock: the last state is inside the constraints, no instance is enabled there, and neither
  `allow deadlock` nor a terminal predicate covers it;
- range: in the last state an instance hits a modelling error, or a state predicate fails to
  evaluate, or a transition property fails to evaluate on the last step;
- liveness: a lasso. `loop = k` below the last index n means some instance steps from state n back
  to state k (or state n equals state k); `loop = n` means state n repeats forever. The loop must be
  fair (every fair instance disabled somewhere on it or taken on one of its steps, the closing one
  included) and `q` must be false where the property kind needs it."""

from __future__ import annotations

from typing import Any, Mapping

from tests.reference.explore import changing_successor
from tests.reference.semantics import Model, ModellingError, State, from_json, holds, step


def check_counterexample(m: Model, kind: str, name: str, cex: Mapping[str, Any] | None) -> str | None:
    """None when `cex` is a valid counterexample for property `name` of `kind`, else why not."""
    if not cex or not cex.get("steps"):
        return "no counterexample"
    instances = m.instances()
    try:
        states = [from_json(m, st["state"]) for st in cex["steps"]]
    except (KeyError, ValueError, TypeError) as err:
        return f"malformed state: {err}"
    if cex["steps"][0].get("action") is not None:
        return "step 0 names an action"
    if states[0] not in m.initial_states():
        return "step 0 is not an initial state"
    taken: list[int] = []
    for n in range(1, len(states)):
        st = cex["steps"][n]
        prev = states[n - 1]
        if not _inside(m, prev):
            return f"step {n} leaves state {n - 1}, which is outside a constraint"
        match = [i for i, (a, args) in enumerate(instances)
                 if a.name == st.get("action") and _args(a, args) == (st.get("args") or {})]
        if len(match) != 1:
            return f"step {n}: no action instance {st.get('action')}{st.get('args')}"
        a, args = instances[match[0]]
        try:
            nxt = step(m, a, args, prev)
        except ModellingError as err:
            return f"step {n}: {a.name} hits a modelling error ({err})"
        if nxt is None:
            return f"step {n}: {a.name}{st.get('args')} is not enabled"
        if nxt != states[n]:
            return f"step {n}: {a.name} yields a different state"
        taken.append(match[0])
    last = states[-1]
    loop = cex.get("loop")
    names = {"invariant": dict(m.invariants), "transition": dict(m.transitions),
             "liveness": {x[0]: x for x in m.liveness}}
    if kind in names and name not in names[kind]:
        return f"the model has no {kind} named {name}"
    if kind == "liveness":
        return _check_lasso(m, name, states, taken, loop, instances)
    if loop is not None:
        return "a safety counterexample with a loop"
    if kind == "invariant":
        e = dict(m.invariants)[name]
        return _false(m, e, last, None, "invariant")
    if kind == "transition":
        if len(states) < 2:
            return "a transition counterexample without a step"
        return _false(m, dict(m.transitions)[name], states[-2], last, "transition property")
    if kind == "deadlock":
        if not _inside(m, last):
            return "deadlock state outside a constraint"
        if m.allow_deadlock or any(_truth(m, e, last) for e in m.terminals):
            return "deadlock state is allowed (allow deadlock / terminal)"
        for a, args in instances:
            try:
                if step(m, a, args, last) is not None:
                    return f"{a.name}{args} is enabled in the deadlock state"
            except ModellingError:
                return f"{a.name}{args} is enabled (and hits a modelling error) in the deadlock state"
        return None
    if kind == "range":
        return None if _has_error(m, states, instances) else "no modelling error at the end"
    return f"unknown property kind {kind}"


def _args(a: Any, args: tuple) -> dict[str, Any]:
    return {p: v for (p, _), v in zip(a.params, args)}


def _inside(m: Model, s: State) -> bool:
    return all(_truth(m, e, s) for _, e in m.constraints)


def _truth(m: Model, e: Any, s: State, t: State | None = None) -> bool:
    try:
        return holds(m, e, s, t)
    except ModellingError:
        return False


def _false(m: Model, e: Any, s: State, t: State | None, what: str) -> str | None:
    try:
        return None if not holds(m, e, s, t) else f"the {what} holds at the end"
    except ModellingError:
        return None  # failing to evaluate counts as false for the predicate's own property


def _has_error(m: Model, states: list[State], instances: list) -> bool:
    last = states[-1]
    preds = [e for _, e in m.invariants] + m.terminals + [e for _, e in m.constraints]
    preds += [e for _, _, p, q in m.liveness for e in (p, q) if e is not None]
    for e in preds:
        try:
            holds(m, e, last)
        except ModellingError:
            return True
    if len(states) >= 2:
        for _, e in m.transitions:
            try:
                holds(m, e, states[-2], last)
            except ModellingError:
                return True
    if _inside(m, last):
        for a, args in instances:
            try:
                step(m, a, args, last)
            except ModellingError:
                return True
    return False


def _check_lasso(m: Model, name: str, states: list[State], taken: list[int], loop: Any, instances: list) -> str | None:
    n = len(states) - 1
    if not isinstance(loop, int) or not 0 <= loop <= n:
        return f"liveness counterexample with loop {loop!r}"
    loop_states = states[loop:]
    loop_steps = taken[loop:]  # steps loop+1 .. n (taken[j-1] is step j)
    if loop < n:
        closing = [i for i in range(len(instances)) if _step_to(m, instances, i, states[n]) == states[loop]]
        if not closing and states[n] != states[loop]:
            return f"no instance steps from state {n} back to state {loop}"
        if not _inside(m, states[n]):
            return "the loop leaves a state outside a constraint"
    else:
        closing = []
    for i, (a, _) in enumerate(instances):
        if not a.fair:
            continue
        disabled = any(changing_successor(m, instances, i, s) is None for s in loop_states)
        if not (disabled or i in loop_steps or i in closing):
            return f"unfair loop: fair {a.name}{instances[i][1]} stays enabled and is never taken"
    _, kind, p, q = next(x for x in m.liveness if x[0] == name)
    if kind == "eventually":
        need = states
    elif kind == "always eventually":
        need = loop_states
    else:
        starts = [j for j, s in enumerate(states) if _truth(m, p, s)]
        if not starts:
            return "p never holds on the lasso"
        for j in starts:  # any p-position from which q stays false for ever will do
            cand = states[min(j, loop):]
            if not any(_truth(m, q, s) for s in cand):
                return None
        return "q holds after every p-state of the lasso"
    if any(_truth(m, q, s) for s in need):
        return "q holds where the lasso needs it false"
    return None


def _step_to(m: Model, instances: list, i: int, s: State) -> State | None:
    a, args = instances[i]
    try:
        return step(m, a, args, s)
    except ModellingError:
        return None

"""Re-execute a counterexample through gpmodel: the check that every SMT verdict `violated`
is a real behaviour of the interpreter (STYLE "Cross-check engines", NOTE(honest-verdicts)).

`check_witness(cm, result)` returns None when the counterexample replays: its first state is
initial, each step's action instance (found by name and arguments) takes the previous state to
the next one under `cm.step`, and the last step shows the violation (an invariant false, a
transition property false on the last step, no enabled instance and no terminal predicate, or
the `range` result's failing instance raising a modelling error, or a predicate failing to
evaluate in the last state or on the last step). A predicate that fails to evaluate counts as
false for its own property, and an instance failing with a modelling error as disabled
(NOTE(predicate-errors), NOTE(step-semantics)). Otherwise it returns what went wrong, for the
message of an UNKNOWN verdict or a failing test."""

from __future__ import annotations

from gpcheck.spec import ir
from gpcheck.gpmodel import CompiledModel, ModelError, truth
from gpcheck.checker.core.verdict import Counterexample, Result, Verdict

State = tuple[int, ...]


def replay_states(cm: CompiledModel, cex: Counterexample) -> tuple[list[State], list[int], str | None]:
    """The slot tuples and instance ids of a counterexample's steps, or where they fail."""
    states: list[State] = []
    iids: list[int] = []
    try:
        states = [cm.layout.encode(step.state) for step in cex.steps]
    except ValueError as e:
        return [], [], f"a state does not decode: {e}"
    if states[0] not in set(cm.initial_states()):
        return states, iids, "step 0 is not an initial state"
    for k in range(1, len(states)):
        step = cex.steps[k]
        assert step.action is not None
        iid = cm.find_instance(step.action, step.args)
        if iid is None:
            return states, iids, f"step {k}: no instance {step.action}{step.args}"
        iids.append(iid)
        if not cm.in_constraints(states[k - 1]):
            return states, iids, f"step {k}: state {k - 1} lies outside the constraints"
        try:
            nxt = cm.step(iid, states[k - 1])
        except ModelError as e:
            return states, iids, f"step {k}: {step.action} fails with a modelling error: {e}"
        if isinstance(nxt, int):
            return states, iids, f"step {k}: {step.action} is disabled (require #{nxt} fails)"
        if nxt != states[k]:
            return states, iids, f"step {k}: {step.action} leads to {cm.layout.decode(nxt)}, not {step.state}"
    return states, iids, None


def check_witness(cm: CompiledModel, r: Result) -> str | None:
    """None if `r`'s counterexample is a behaviour of `cm` that violates `r.property`."""
    if r.verdict is not Verdict.VIOLATED or r.counterexample is None:
        return "not a violation with a counterexample"
    states, _, problem = replay_states(cm, r.counterexample)
    if problem is not None:
        return problem
    last = states[-1]
    model = cm.model
    if r.kind == "invariant":
        for inv, fn in cm.invariants:
            if inv.name == r.property:
                try:
                    return None if not fn(last) else "the invariant holds in the last state"
                except ModelError:
                    return None  # evaluating it fails: the encodings count that as a violation
        return f"no invariant {r.property}"
    if r.kind == "transition":
        if len(states) < 2:
            return "a transition counterexample needs a step"
        for tp, fn in cm.transitions:
            if tp.name == r.property:
                return None if not truth(fn, states[-2], last) else "the property holds on the last step"
        return f"no transition property {r.property}"
    if r.kind == "deadlock":
        if model.allow_deadlock or cm.is_terminal(last) or not cm.in_constraints(last):
            return "the last state is terminal or not expanded"
        try:
            succ = cm.successors(last)
        except ModelError:
            return "the last state has a modelling error, not a deadlock"
        return None if not succ else "the last state has successors"
    if r.kind == "range":
        return range_error(cm, r, states)[1]
    if r.kind == "liveness":
        return _check_lasso(cm, r, states)
    return f"cannot check a {r.kind} counterexample"


def _check_lasso(cm: CompiledModel, r: Result, states: list[State]) -> str | None:
    """A fair lasso that stays in ¬q where the property needs it (checker/engines/explicit/liveness.py)."""
    assert r.counterexample is not None
    prop = next((p for p in cm.model.liveness if p.name == r.property), None)
    if prop is None:
        return f"no liveness property {r.property}"
    loop = r.counterexample.loop
    if loop is None or not 0 <= loop < len(states):
        return "a liveness counterexample needs a loop"
    pred = cm.predicate(prop.q)
    _, iids, _ = replay_states(cm, r.counterexample)

    def q(s: State) -> bool:
        return truth(pred, s)

    if not _fair_loop_or_stutter(cm, states, iids, loop):
        return "the loop is neither a fair cycle nor a fair stutter"
    on_loop = states[loop:]
    if any(q(s) for s in on_loop):
        return "q holds on the loop"
    if prop.kind is ir.LivenessKind.EVENTUALLY and any(q(s) for s in states):
        return "q holds on the path"
    if prop.kind is ir.LivenessKind.LEADS_TO:
        assert prop.p is not None
        p_pred = cm.predicate(prop.p)
        if not any(truth(p_pred, states[i]) and not any(q(s) for s in states[i:]) for i in range(len(states))):
            return "no p-state is followed by ¬q forever"
    return None


def _fair_loop_or_stutter(cm: CompiledModel, states: list[State], iids: list[int], loop: int) -> bool:
    """Whether the lasso closing at `loop` is a fair cycle (it closes back with a transition and
    discharges every fair instance) or a fair stutter (no fair instance enabled in the last state)."""
    last = states[-1]
    fair = {iid for iid, inst in enumerate(cm.instances) if inst.action.fair}

    def enabled(s: State) -> set[int]:  # an instance failing with a modelling error is not enabled
        return {iid for iid, _ in cm.enabled_steps(s)} if cm.in_constraints(s) else set()

    closing = [iid for iid, t in cm.enabled_steps(last) if t == states[loop]] if cm.in_constraints(last) else []
    fair_loop = bool(closing) and all(
        any(f not in enabled(states[j]) for j in range(loop, len(states)))
        or any(iids[j - 1] == f for j in range(loop + 1, len(states))) or f in closing
        for f in fair)
    stutter = loop == len(states) - 1 and cm.in_constraints(last) and not (enabled(last) & fair)
    return fair_loop or stutter


def range_error(cm: CompiledModel, r: Result, states: list[State]) -> tuple[ModelError | None, str | None]:
    """The modelling error the `range` counterexample `states` ends in: the failing instance
    `detail` names; else, in the explicit search's order, a transition property on the last
    step, a state predicate in the last state (NOTE(predicate-errors)), any instance there;
    or why there is none."""
    last = states[-1]
    error = r.detail.get("error")
    named = error if isinstance(error, dict) else r.detail
    action, args = named.get("action"), named.get("args", {})
    first = cm.find_instance(action, args) if isinstance(action, str) else None
    expanded = cm.in_constraints(last)

    def instance_error(iids: list[int]) -> ModelError | None:
        for iid in iids if expanded else []:
            try:
                cm.step(iid, last)
            except ModelError as e:
                return e
        return None

    e = instance_error([first]) if first is not None else None
    if e is None and len(states) >= 2:
        e = cm.predicate_error(states[-2], last)
    e = e or cm.predicate_error(last) or instance_error(list(range(len(cm.instances))))
    if e is not None:
        return e, None
    return None, "no modelling error in the last state or on the last step"


def error_detail(cm: CompiledModel, e: ModelError) -> dict[str, object]:
    """The `detail` of a range violation, as the explicit engine writes it."""
    detail: dict[str, object] = {"error": e.message, "kind": e.site.kind, "location": str(e.site.span)}
    if e.site.instance is not None:
        inst = cm.instances[e.site.instance]
        detail["action"] = inst.action.name
        detail["args"] = inst.arg_dict()
    return detail

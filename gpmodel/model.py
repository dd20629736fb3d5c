"""`CompiledModel`: the executable semantics of one model instance (see ARCHITECTURE.md)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable, Collection, Sequence

from gpcheck.spec import ir
from gpcheck.gpmodel.compile import Compiler, build
from gpcheck.gpmodel.layout import Layout
from gpcheck.gpmodel.runtime import Fault, ModelError

State = tuple[int, ...]


@dataclass(frozen=True)
class Instance:
    """An action with one value per parameter; its position in `CompiledModel.instances` is its id."""

    action: ir.Action
    args: tuple[int, ...]

    def arg_dict(self) -> dict[str, Any]:
        return {p.name: ir.format_scalar(p.type, v) for p, v in zip(self.action.params, self.args)}  # type: ignore[arg-type]

    def label(self) -> str:
        if not self.args:
            return self.action.name
        return f"{self.action.name}({', '.join(f'{k}={v}' for k, v in self.arg_dict().items())})"


class CompiledModel:
    def __init__(self, model: ir.Model):
        self.model = model
        self.layout = Layout(model)
        self._compiler = Compiler(model)
        self.instances = [Instance(a, args) for a, args in self._compiler.instances()]
        self.source = self._compiler.successor_source()
        self._succ: Callable[[State], list[tuple[int, State]]] = build(self.source, ["succ"])["succ"]  # type: ignore[assignment]
        # NOTE(predicate-errors): the predicates whose evaluation can fail (the others compile
        # to code without a fault site), with the property each belongs to (Model.state_predicates)
        compiled: dict[int, tuple[Callable[..., bool], bool]] = {}
        for e in [e for _, e in model.state_predicates()]:
            compiled.setdefault(id(e), self._compile_predicate(e))
        self.fallible_states: list[tuple[str | None, Callable[[State], bool]]] = [
            (owner, compiled[id(e)][0]) for owner, e in model.state_predicates() if compiled[id(e)][1]]
        self.fallible_steps: list[tuple[str, Callable[[State, State], bool]]] = []
        self.invariants = [(inv, compiled[id(inv.expr)][0]) for inv in model.invariants]
        self._terminals = [compiled[id(e)][0] for e in model.terminals]
        self._constraints = [compiled[id(c.expr)][0] for c in model.constraints]
        self.transitions: list[tuple[ir.TransitionProperty, Callable[[State, State], bool]]] = []
        for tp in model.transitions:
            fn, fallible = self._compile_predicate(tp.expr, two_state=True)
            self.transitions.append((tp, fn))
            if fallible:
                self.fallible_steps.append((tp.name, fn))
        self._steps: dict[int, Callable[[State], State | int]] = {}

    # ------------------------------------------------------------------ predicates
    def predicate(self, expr: ir.Expr) -> Callable[[State], bool]:
        """A compiled state predicate; modelling errors in it raise ModelError."""
        return self._compile_predicate(expr)[0]  # type: ignore[return-value]

    def value(self, expr: ir.Expr) -> Callable[[State], int]:
        """A compiled scalar expression: its slot value in a state (a bool as 0/1, an enum member
        as its ordinal); modelling errors in it raise ModelError (NOTE(refinement): the mapping)."""
        return self._compile_predicate(expr, cast=int)[0]  # type: ignore[return-value]

    def _compile_predicate(self, expr: ir.Expr, two_state: bool = False,
                           cast: Callable[[object], object] = bool) -> tuple[Callable[..., bool], bool]:
        """(the predicate, whether its evaluation can fail)."""
        sites = len(self._compiler.faults)
        name = "pred2" if two_state else "pred"
        fn = build(self._compiler.predicate_source(name, expr, two_state=two_state), [name])[name]
        faults = self._compiler.faults

        def guarded(s: State, *t: State) -> bool:
            try:
                return cast(fn(s, *t))  # type: ignore[return-value]
            except Fault as f:
                raise ModelError(faults[f.site], f.value, s) from None

        return guarded, len(faults) > sites

    def fallible(self, wanted: Collection[str] | None = None) -> tuple[list[Callable[[State], bool]], list[Callable[[State, State], bool]]]:
        """The state and the transition predicates whose evaluation can fail: all of them, or
        (with `wanted`, unless it holds `range`) the constraints and those of the properties
        named."""
        every = wanted is None or "range" in wanted
        states = [fn for owner, fn in self.fallible_states if every or owner is None or owner in wanted]  # type: ignore[operator]
        steps = [fn for owner, fn in self.fallible_steps if every or owner in wanted]  # type: ignore[operator]
        return states, steps

    def predicate_error(self, s: State, t: State | None = None) -> ModelError | None:
        """The first modelling error in evaluating the model's state predicates in `s`, or
        with `t` its transition properties on `s -> t` (NOTE(predicate-errors))."""
        states, steps = self.fallible()
        return first_error(states, s) if t is None else first_error(steps, s, t)

    def is_terminal(self, s: State) -> bool:
        return self.model.allow_deadlock or any(truth(t, s) for t in self._terminals)

    def in_constraints(self, s: State) -> bool:
        return all(truth(c, s) for c in self._constraints)

    # ------------------------------------------------------------------ states and steps
    def initial_states(self) -> list[State]:
        choices: list[Sequence[int]] = []
        for v in self.model.vars:
            for (path, st), init in zip(ir.leaf_paths(v.type), v.init):
                if init is None:
                    choices.append(_scalar_domain(st))
                else:
                    choices.append((init,))
        states = [tuple(c) for c in itertools.product(*choices)]
        if self.model.initial_assumptions:  # NOTE(assumptions): outside a state assumption, no initial state
            inside = [self._compile_predicate(e)[0] for e in self.model.initial_assumptions]
            states = [s for s in states if all(truth(fn, s) for fn in inside)]
        return states

    def successors(self, s: State) -> list[tuple[int, State]]:
        """Every enabled instance and its next state; ModelError on a modelling error."""
        try:
            return self._succ(s)
        except Fault as f:
            raise ModelError(self._compiler.faults[f.site], f.value, s) from None

    @property
    def raw_successors(self) -> Callable[[State], list[tuple[int, State]]]:
        """The generated function itself (raises gpcheck.gpmodel.runtime.Fault): for engines' hot loops."""
        return self._succ

    def fault(self, f: Fault, s: State) -> ModelError:
        return ModelError(self._compiler.faults[f.site], f.value, s)

    def enabled_steps(self, s: State) -> list[tuple[int, State]]:
        """Every instance that completes a step from `s`, with its next state: `successors`
        without raising, an instance that fails with a modelling error counting as disabled
        (as in the Z3 encoding's transition relation)."""
        out = []
        for iid in range(len(self.instances)):
            try:
                t = self.step(iid, s)
            except ModelError:
                continue
            if not isinstance(t, int):
                out.append((iid, t))
        return out

    def step(self, iid: int, s: State) -> State | int:
        """Apply one instance: the next state, or the ordinal of the `require` that failed."""
        fn = self._steps.get(iid)
        if fn is None:
            src = self._compiler.step_source(iid)
            fn = build(src, [f"step_{iid}"])[f"step_{iid}"]  # type: ignore[assignment]
            self._steps[iid] = fn  # type: ignore[assignment]
        try:
            return fn(s)  # type: ignore[misc]
        except Fault as f:
            raise ModelError(self._compiler.faults[f.site], f.value, s) from None

    def require_of(self, action: ir.Action, ordinal: int) -> ir.Require:
        for st in ir.iter_stmts(action.body):
            if isinstance(st, ir.Require) and st.ordinal == ordinal:
                return st
        raise KeyError(ordinal)

    def instance_ids(self, action: str) -> list[int]:
        return [i for i, inst in enumerate(self.instances) if inst.action.name == action]

    def find_instance(self, action: str, args: dict[str, Any]) -> int | None:
        """The id of `action` with these argument values (user values), or None."""
        for i, inst in enumerate(self.instances):
            if inst.action.name == action and inst.arg_dict() == args:
                return i
        return None


def first_error(preds: Sequence[Callable[..., bool]], *states: State) -> ModelError | None:
    """The modelling error of the first predicate that fails to evaluate on `states`, if any."""
    for fn in preds:
        try:
            fn(*states)
        except ModelError as e:
            return e
    return None


def truth(pred: Callable[..., bool], *states: State) -> bool:
    """The predicate's value on `states`; false where it fails to evaluate (NOTE(predicate-errors))."""
    try:
        return pred(*states)
    except ModelError:
        return False


def _scalar_domain(t: ir.ScalarType) -> Sequence[int]:
    if isinstance(t, ir.IntType):
        assert t.lo is not None and t.hi is not None
        return range(t.lo, t.hi + 1)
    return ir.domain_values(t)


def compile_model(model: ir.Model) -> CompiledModel:
    """Compile one IR instance into its executable semantics."""
    return CompiledModel(model)

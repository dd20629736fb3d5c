"""`CompiledModel`: the executable semantics of one model instance (see ARCHITECTURE.md)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from spec import ir
from gpmodel.compile import Compiler, build
from gpmodel.layout import Layout
from gpmodel.runtime import Fault, ModelError

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
        self.invariants = [(inv, self.predicate(inv.expr)) for inv in model.invariants]
        self.transitions = [(tp, self._two_state(tp.expr)) for tp in model.transitions]
        self._terminals = [self.predicate(e) for e in model.terminals]
        self._constraints = [self.predicate(c.expr) for c in model.constraints]
        self._steps: dict[int, Callable[[State], State | int]] = {}

    # ------------------------------------------------------------------ predicates
    def predicate(self, expr: ir.Expr) -> Callable[[State], bool]:
        """A compiled state predicate; modelling errors in it raise ModelError."""
        fn = build(self._compiler.predicate_source("pred", expr), ["pred"])["pred"]
        faults = self._compiler.faults

        def guarded(s: State) -> bool:
            try:
                return bool(fn(s))
            except Fault as f:
                raise ModelError(faults[f.site], f.value, s) from None

        return guarded

    def _two_state(self, expr: ir.Expr) -> Callable[[State, State], bool]:
        fn = build(self._compiler.predicate_source("pred2", expr, two_state=True), ["pred2"])["pred2"]
        faults = self._compiler.faults

        def guarded(s: State, t: State) -> bool:
            try:
                return bool(fn(s, t))
            except Fault as f:
                raise ModelError(faults[f.site], f.value, s) from None

        return guarded

    def is_terminal(self, s: State) -> bool:
        return self.model.allow_deadlock or any(t(s) for t in self._terminals)

    def in_constraints(self, s: State) -> bool:
        return all(c(s) for c in self._constraints)

    # ------------------------------------------------------------------ states and steps
    def initial_states(self) -> list[State]:
        choices: list[Sequence[int]] = []
        for v in self.model.vars:
            for (path, st), init in zip(ir.leaf_paths(v.type), v.init):
                if init is None:
                    choices.append(_scalar_domain(st))
                else:
                    choices.append((init,))
        return [tuple(c) for c in itertools.product(*choices)]

    def successors(self, s: State) -> list[tuple[int, State]]:
        """Every enabled instance and its next state; ModelError on a modelling error."""
        try:
            return self._succ(s)
        except Fault as f:
            raise ModelError(self._compiler.faults[f.site], f.value, s) from None

    @property
    def raw_successors(self) -> Callable[[State], list[tuple[int, State]]]:
        """The generated function itself (raises gpmodel.runtime.Fault): for engines' hot loops."""
        return self._succ

    def fault(self, f: Fault, s: State) -> ModelError:
        return ModelError(self._compiler.faults[f.site], f.value, s)

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


def _scalar_domain(t: ir.ScalarType) -> Sequence[int]:
    if isinstance(t, ir.IntType):
        assert t.lo is not None and t.hi is not None
        return range(t.lo, t.hi + 1)
    return ir.domain_values(t)


def compile_model(model: ir.Model) -> CompiledModel:
    """Compile one IR instance into its executable semantics."""
    return CompiledModel(model)

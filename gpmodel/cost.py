"""Action costs (NOTE(latency) in spec/ir.py) compiled to Python: the time one step of an
action instance takes, evaluated in the step's pre-state.

Kept apart from the successor function: only latency properties need costs, so the search's
hot loop never evaluates them. A cost that fails to evaluate (a bad index, a division by zero)
or comes out negative raises `CostError`, which names the instance, the state and the source
position of the `cost` expression."""

from __future__ import annotations

from typing import Callable

from gpcheck.spec import ir
from gpcheck.gpmodel.compile import _Ctx, build
from gpcheck.gpmodel.model import CompiledModel, State
from gpcheck.gpmodel.runtime import Fault, FaultSite, ModelError


class CostError(ModelError):
    """A cost that fails to evaluate, or is negative, in a reachable pre-state."""

    def __init__(self, err: ModelError, instance: str, negative: int | None = None):
        super().__init__(err.site, err.value, err.state)
        self.instance = instance
        self.negative = negative

    @property
    def message(self) -> str:
        if self.negative is not None:
            return f"the cost of {self.instance} is {self.negative}: a cost cannot be negative"
        return f"the cost of {self.instance} fails to evaluate: {self.site.message.format(value=self.value)}"


CostFn = Callable[[int, State], int]


def compile_costs(cm: CompiledModel) -> CostFn:
    """`cost(iid, s)`: the cost of instance `iid` stepping from `s` (0 for an action without
    `cost`); raises CostError."""
    compiler = cm._compiler  # the model's fault table: sites added here are numbered after the others
    fns: dict[str, Callable[..., int]] = {}
    spans: dict[str, object] = {}
    for k, action in enumerate(cm.model.actions):
        if action.cost is None:
            continue
        ctx = _Ctx(mode="ro")
        names = [f"p{j}" for j in range(len(action.params))]
        for sym, name in zip(action.params, names):
            ctx.locals[sym.id] = name
        code = compiler.expr(action.cost, ctx)
        fname = f"cost_{k}"
        src = f"def {fname}(s{''.join(', ' + n for n in names)}):\n    return {code}\n"
        fns[action.name] = build(src, [fname])[fname]  # type: ignore[assignment]
        spans[action.name] = action.cost.span
    faults = compiler.faults
    table: list[tuple[Callable[..., int] | None, tuple[int, ...], str, object]] = [
        (fns.get(inst.action.name), inst.args, inst.label(), spans.get(inst.action.name)) for inst in cm.instances
    ]

    def cost(iid: int, s: State) -> int:
        fn, args, label, span = table[iid]
        if fn is None:
            return 0
        try:
            v = int(fn(s, *args))
        except Fault as f:
            raise CostError(ModelError(faults[f.site], f.value, s), label) from None
        if v < 0:
            site = FaultSite(None, "cost", "negative cost {value}", span)  # type: ignore[arg-type]
            raise CostError(ModelError(site, v, s), label, negative=v)
        return v

    return cost


def cost_source(cm: CompiledModel, iid: int) -> tuple[str, dict[str, int]] | None:
    """The Python text of instance `iid`'s cost (`def cost(s, p0, ...): return ...`, printed
    from the IR as compile_costs prints it) and its parameters' values; None without a cost.
    gpmodel/vector_pred.py evaluates it over many pre-states at once."""
    inst = cm.instances[iid]
    action = inst.action
    if action.cost is None:
        return None
    ctx = _Ctx(mode="ro")
    names = [f"p{j}" for j in range(len(action.params))]
    for sym, name in zip(action.params, names):
        ctx.locals[sym.id] = name
    code = cm._compiler.expr(action.cost, ctx)
    values = dict(zip(names, (int(a) for a in inst.args)))
    return f"def cost(s{''.join(', ' + n for n in names)}):\n    return {code}\n", values

"""The `time L..U` bounds of the action instances (NOTE(timed) in spec/ir.py), compiled to Python.

Like gpmodel/cost.py for costs: kept apart from the successor function. A bound is evaluated in
the state where its instance becomes enabled (or fires and stays enabled); a bound that fails to
evaluate, comes out negative, or an upper bound below the lower one raises `BoundError`, a
ModelError naming the instance, the state and the source position of the `time` clause."""

from __future__ import annotations

from typing import Callable

from gpcheck.gpmodel.compile import _Ctx, build
from gpcheck.gpmodel.model import CompiledModel, State
from gpcheck.gpmodel.runtime import Fault, FaultSite, ModelError

Bounds = tuple[int, int | None]  # (L, U); U None: no deadline


class BoundError(ModelError):
    """A time bound that fails to evaluate, is negative, or gives U < L, in a reachable state."""

    def __init__(self, err: ModelError, instance: str, why: str | None = None):
        super().__init__(err.site, err.value, err.state)
        self.instance = instance
        self.why = why

    @property
    def message(self) -> str:
        if self.why is not None:
            return f"the time bounds of {self.instance}: {self.why}"
        return f"the time bounds of {self.instance} fail to evaluate: {self.site.message.format(value=self.value)}"


BoundsFn = Callable[[int, State], Bounds]


def timed_instances(cm: CompiledModel) -> list[int]:
    """The ids of the instances whose action has `time` (each gets a clock)."""
    return [iid for iid, inst in enumerate(cm.instances) if inst.action.time is not None]


def compile_bounds(cm: CompiledModel) -> BoundsFn:
    """`bounds(iid, s)`: (L, U) of a timed instance in state `s`; raises BoundError."""
    compiler = cm._compiler  # the model's fault table (as gpmodel/cost.py)
    fns: dict[str, Callable[..., tuple[int, int | None]]] = {}
    spans: dict[str, object] = {}
    for k, action in enumerate(cm.model.actions):
        t = action.time
        if t is None:
            continue
        ctx = _Ctx(mode="ro")
        names = [f"p{j}" for j in range(len(action.params))]
        for sym, name in zip(action.params, names):
            ctx.locals[sym.id] = name
        lo = compiler.expr(t.lower, ctx)
        hi = "None" if t.upper is None else (lo if t.upper is t.lower else compiler.expr(t.upper, ctx))
        fname = f"bounds_{k}"
        src = f"def {fname}(s{''.join(', ' + n for n in names)}):\n    return ({lo}), ({hi})\n"
        fns[action.name] = build(src, [fname])[fname]  # type: ignore[assignment]
        spans[action.name] = t.span
    faults = compiler.faults
    table = [(fns.get(inst.action.name), inst.args, inst.label(), spans.get(inst.action.name))
             for inst in cm.instances]

    def bounds(iid: int, s: State) -> Bounds:
        fn, args, label, span = table[iid]
        if fn is None:
            return 0, None
        try:
            lo, hi = fn(s, *args)
        except Fault as f:
            raise BoundError(ModelError(faults[f.site], f.value, s), label) from None
        lo = int(lo)
        hi = None if hi is None else int(hi)
        why = None
        if lo < 0:
            why = f"the lower bound is {lo}: a duration cannot be negative"
        elif hi is not None and hi < lo:
            why = f"the upper bound {hi} is below the lower bound {lo}"
        if why is not None:
            site = FaultSite(None, "time", why, span)  # type: ignore[arg-type]
            raise BoundError(ModelError(site, lo, s), label, why)
        return lo, hi

    return bounds

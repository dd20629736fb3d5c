"""Behaviours of a compiled model written as gpcheck traces (simulate, tests, benchmarks).

Why here: gpmodel produces behaviours as (instance id, slot tuple) pairs and must not depend on
the trace format; this module is the one place that turns them into events, with the three
observation levels `gpcheck simulate --observe` offers:

- `full`: every event carries the whole decoded state (`layout.decode`), the header the initial one;
- `changed`: only the slots that changed since the previous written event (or the initial
  state), hidden internal steps included, as dotted keys (`waves_run.3`);
- `none`: no state at all (replay must reconstruct everything from action names and arguments).

Internal actions are written unless `internal=False`; the header then records
`"logs_internal": false` so that replay inserts hidden internal steps."""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from gpcheck.gpmodel import CompiledModel
from gpcheck.gpmodel.model import State
from gpcheck.spec import ir
from gpcheck.traces.format import Event, TraceHeader, TraceWriter

OBSERVE_LEVELS = ("full", "changed", "none")


def header_for(cm: CompiledModel, init: State, *, observe: str = "full", internal: bool = True, **extra: Any) -> TraceHeader:
    """The header of a trace of `cm` starting in `init`."""
    assert observe in OBSERVE_LEVELS, observe
    x: dict[str, Any] = {"logs_internal": internal, "observe": observe}
    x.update(extra)
    return TraceHeader(
        model=cm.model.name,
        constants=cm.model.const_values,
        init=cm.layout.decode(init) if observe != "none" else None,
        extra=x,
    )


def events_of(
    cm: CompiledModel, behaviour: Iterable[tuple[int | None, State] | tuple[int | None, State, dict[str, Any]]], *, observe: str = "full", internal: bool = True
) -> Iterator[Event]:
    """The events of a behaviour whose first pair is `(None, initial state)` (consumed here). An
    item may carry a third element, the event's `meta` (a timed behaviour's time stamps)."""
    names = [""] * cm.layout.size
    types: list[ir.ScalarType] = []
    if observe == "changed":
        flat = cm.layout.flatten(tuple(0 for _ in range(cm.layout.size)))
        names = list(flat)
        types = [st for v in cm.model.vars for _, st in ir.leaf_paths(v.type)]
    prev: State | None = None
    args_cache: dict[int, dict[str, Any]] = {}
    for item in behaviour:
        iid, s = item[0], item[1]
        meta = item[2] if len(item) > 2 else None  # NOTE(timed): a timed behaviour's {"time", "since"}
        if iid is None:
            prev = s
            continue
        inst = cm.instances[iid]
        if not internal and inst.action.internal:
            continue
        args = args_cache.get(iid)
        if args is None:
            args = args_cache[iid] = inst.arg_dict()
        if observe == "full":
            state: dict[str, Any] | None = cm.layout.decode(s)
        elif observe == "changed":
            assert prev is not None
            state = {names[i]: ir.format_scalar(types[i], v) for i, (u, v) in enumerate(zip(prev, s)) if u != v}
        else:
            state = None
        prev = s
        yield Event(inst.action.name, args, state, meta=meta)


def write_behaviour(
    path: str,
    cm: CompiledModel,
    behaviour: Iterable[tuple[int | None, State] | tuple[int | None, State, dict[str, Any]]],
    *,
    observe: str = "full",
    internal: bool = True,
    **extra: Any,
) -> int:
    """Write one behaviour as a trace file (atomically); returns the number of events."""
    it = iter(behaviour)
    first = next(it)
    assert first[0] is None, "a behaviour starts with (None, initial state)"
    header = header_for(cm, first[1], observe=observe, internal=internal, **extra)

    def chained() -> Iterator[tuple[int | None, State]]:
        yield first
        yield from it

    with TraceWriter(path, header) as w:
        for ev in events_of(cm, chained(), observe=observe, internal=internal):
            w.write(ev.action, ev.args, ev.state, meta=ev.meta)
        return w.count

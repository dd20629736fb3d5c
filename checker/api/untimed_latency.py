"""Latencies of a spec without `time` (NOTE(latency) in spec/ir.py; docs/timed.md, "A latency on
an untimed spec"): decided in the one timed semantics, by the zone engine.

With `cost` retired (NOTE(retired-cost)) a latency is elapsed time, and an action without `time` is
`0..`: it may fire at once or wait forever. On a spec with no `time` at all the zone engine has no
clock, so its graph is the discrete state graph and its answer is exact and cheap: `max` is 0
where every measurement starts in a `to`-state and null otherwise (a lasso that stays in the
start's state while time passes), `min` is 0 where a `to`-state can be reached from a start. The
explicit engine (both cores, the device path) reports exactly the zone engine's results, so every
engine that decides a latency agrees with the timed specs' answer; the report adds a warning that
says why the numbers are degenerate and how to give the actions durations."""

from __future__ import annotations

import time
from dataclasses import replace

from gpcheck.spec import ir
from gpcheck.gpmodel import CompiledModel
from gpcheck.checker.core import budget
from gpcheck.checker.core.verdict import Result, Verdict
from gpcheck.checker.engines.explicit.explicit import Limits

DECIDED_BY = "zone graph (the spec has no `time`: every action is 0.., no clock)"


def warning(model: ir.Model, wanted: set[str]) -> list[str]:
    """The report's warning when a latency of a spec without `time` is checked (else none)."""
    names = [p.name for p in model.latencies if p.name in wanted]
    if model.has_time or not names:
        return []
    return [f"latency {', '.join(names)}: the spec has no `time`, so every action may wait forever (0..) and "
            f"time can pass in every state: a latency is unbounded wherever it can start outside its `to` "
            f"predicate; give the actions durations with `time` (gpcheck docs timed)"]


def latency_results(cm: CompiledModel, wanted: set[str], limits: Limits, started: float | None = None) -> list[Result]:
    """The wanted latencies of the untimed spec `cm.model`, as the zone engine decides them
    (module docstring); `started`: when the command's run began (the time limit is shared)."""
    from gpcheck.checker.engines.timed.engine import run_timed

    model = cm.model
    props = [p for p in model.latencies if p.name in wanted]
    if not props:
        return []
    left = limits.timeout
    if left is not None and started is not None:
        left = max(0.001, left - (time.monotonic() - started))
    try:
        rep = run_timed(model, {p.name for p in props}, Limits(limits.max_states, left, limits.progress), cm=cm)
    except budget.Stop as stop:  # a signal or --max-memory: the other results stand
        return [Result(p.name, "latency", Verdict.UNKNOWN, "timed", reason=stop.text) for p in props]
    return [replace(r, detail={**r.detail, "decided_by": DECIDED_BY}) for r in rep.results if r.kind == "latency"]

"""The timed engine (NOTE(timed) in spec/ir.py): zones over one clock per timed action instance.

dbm.py (difference-bound matrices), bounds.py (the `time L..U` bounds compiled to Python),
zones.py (the zone graph and the safety search), timeline.py (concrete time stamps for a path of
the zone graph, and the check that a timed behaviour is one of the model's), latency.py (exact
min/max latencies with a measuring clock), engine.py (the Result/Report of a timed run)."""

from __future__ import annotations

from dataclasses import replace

from gpcheck.spec import ir


def untimed(model: ir.Model) -> ir.Model:
    """The untimed abstraction: the same model with every action's `time` (and `urgent`) dropped.
    It has every behaviour of the timed spec; the engines without clocks and replay's discrete
    pass run on it (docs/timed.md)."""
    if not model.has_time:
        return model
    return replace(model, actions=tuple(replace(a, time=None) if a.time is not None else a for a in model.actions))

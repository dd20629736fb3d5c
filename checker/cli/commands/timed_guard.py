"""The commands that have no clocks refuse a timed spec (NOTE(timed) in spec/ir.py) with a usage
error, instead of running its guarded commands untimed: a replayed behaviour of a timed spec must
respect its deadlines and lower bounds, which `replay` cannot check. `verify` (the zone engine)
and `sweep` (which runs `verify`) decide timed specs; `simulate` runs them in integer time
(checker/engines/timed/simulate.py)."""

from __future__ import annotations

from gpcheck.spec import ir
from gpcheck.spec.errors import UsageError


def refuse_timed(model: ir.Model, command: str) -> None:
    """Raise a UsageError (exit 2) naming why when `model` is timed."""
    if not model.has_time:
        return
    timed = [a.name for a in model.actions if a.time is not None]
    shown = ", ".join(timed[:3]) + (", ..." if len(timed) > 3 else "")
    raise UsageError(f"{model.file or model.name}: a timed spec (`time`/`urgent` on {shown}; docs/timed.md): "
                     f"`gpcheck {command}` has no clocks and would run it untimed, ignoring every deadline "
                     f"and lower bound; decide it with `gpcheck verify` (the zone engine) or `gpcheck sweep`")

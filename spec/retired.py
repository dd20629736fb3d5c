"""NOTE(retired-cost): the messages for language features that were retired, in one place (the
type checker and the composer report them).

`cost EXPR` was the legacy sequential-cost duration of a step: time was the sum of the costs along
one interleaving, so concurrent work never overlapped and a zero-cost step could wait forever
behind costed ones (issue 29). It is retired for the one timed semantics (NOTE(timed) in
spec/ir.py, docs/timed.md): the parser still reads the clause so that the error can point at it."""

from __future__ import annotations

COST_HINT = ("write `time E` instead: the action fires E time units after it becomes enabled, and the "
             "durations of actions enabled together overlap (`time L..U` for a range, `urgent action` for "
             "0); see `gpcheck docs timed` (docs/timed.md, \"Migrating from cost\")")


def retired_cost(action: str) -> str:
    """The located error for `cost` on action `action`: what replaced it and how to rewrite."""
    return f"action '{action}': `cost` is retired (one notion of time, issue 29); {COST_HINT}"

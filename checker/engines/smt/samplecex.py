"""Shortest counterexamples for the pdr engine from a breadth-first search of the instance.

pdr explores the instance explicitly to mine lemmas (checker/engines/smt/lemmas.py). When a property
is not proved relative to them, the same kind of search, with the properties evaluated in every
state and on every step (checker/engines/explicit/explicit.py), shows at once whether a reachable state violates
it, and its BFS parent chain is a shortest counterexample. Before, every violation was shown by
BMC, unrolled depth by depth up to the counterexample's length: most of the pdr engine's time on
the bundled library (reef_rewind's `reexec_idempotent_only`: 69 s of a 104 s run).

A violation found this way is a behaviour of the interpreter, and the engines' caller replays it
once more through gpmodel like every SMT counterexample (engines.check_witnesses). Only
violations are taken from here: a property the search does not refute goes on to the pdr
engine's Z3 proofs, which alone say `proved`."""

from __future__ import annotations

from typing import Sequence

from gpcheck.gpmodel import CompiledModel
from gpcheck.checker.engines.explicit.explicit import Limits, safety_results, search
from gpcheck.checker.engines.smt.props import SafetyProp
from gpcheck.checker.engines.smt.session import Deadline
from gpcheck.checker.core.verdict import Result, Verdict

FOUND_BY = "the explicit search of the pdr engine's exploration (breadth-first: a shortest counterexample)"


def sample_violations(cm: CompiledModel, props: Sequence[SafetyProp], max_states: int, deadline: Deadline,
                      engine: str) -> dict[str, Result]:
    """The violated ones among `props`, each with its shortest counterexample, found by a BFS of
    at most `max_states` states within the deadline (a BFS cut short still gives shortest
    counterexamples for what it found: every shallower state was expanded). Property names are
    the explicit engine's (`range` and `deadlock` included)."""
    wanted = {p.name for p in props}
    remaining = deadline.remaining()
    res = search(cm, wanted, Limits(max_states=max_states, timeout=remaining))
    out: dict[str, Result] = {}
    for r in safety_results(cm, res, wanted):
        if r.verdict is not Verdict.VIOLATED:
            continue
        assert r.counterexample is not None
        detail = dict(r.detail, found_by=FOUND_BY)
        out[r.property] = Result(r.property, r.kind, Verdict.VIOLATED, engine, bound=len(r.counterexample.steps) - 1,
                                 counterexample=r.counterexample, detail=detail)
    return out

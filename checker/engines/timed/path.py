"""Timed feasibility of a fixed discrete path (NOTE(timed) in spec/ir.py): does the timed
semantics of docs/timed.md admit this sequence of action instances, optionally with some steps'
time stamps fixed, and if so one concrete integer timing?

An engine that does not know time (the explicit core on the untimed abstraction, bmc, kind,
pdr, the for-all prover) finds a counterexample as a discrete path; this module decides whether
some timing makes it a behaviour of the timed spec. The decision is the zone engine's own: the
path's timing constraints are the difference constraints of checker/engines/timed/timeline.py
(t_k - t_r >= L when an instance whose timer started at step r fires at k, t_k - t_r <= U while an
instance with a deadline is enabled, t_{k-1} <= t_k), solved by shortest paths; a fixed stamp
t_k = c adds t_k - t_0 <= c and t_0 - t_k <= -c. The system is feasible iff its constraint graph
has no negative cycle, and then the earliest solution is integral (every constant is an
integer), so an admitted path always has an integer timing (digitization, docs/timed.md).
`zone_walk` follows the same path through the zone graph (zones.py's DBMs) instead: the tests
check that both agree."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from gpcheck.gpmodel import CompiledModel, ModelError, State
from gpcheck.checker.core.verdict import Counterexample, Step
from gpcheck.checker.engines.timed.bounds import BoundsFn, compile_bounds
from gpcheck.checker.engines.timed.timeline import NotABehaviour, path_constraints
from gpcheck.checker.engines.explicit.explicit import make_steps


@dataclass
class PathTiming:
    """The answer for one path: `feasible`, and then `times` (one stamp per step, step 0 at 0)
    and `since` (for a step of a timed instance, when its timer started; None otherwise), the
    earliest timing that fits; else `reason`, saying why no timing fits."""

    states: list[State]
    iids: list[int | None]
    feasible: bool
    times: list[int] = field(default_factory=list)
    since: list[int | None] = field(default_factory=list)
    reason: str | None = None

    def steps(self, cm: CompiledModel) -> tuple[Step, ...]:
        """The decoded steps with their time stamps (a feasible path only)."""
        assert self.feasible
        plain = make_steps(cm, self.states, self.iids)
        return tuple(Step(s.action, s.args, s.state, t, r) for s, t, r in zip(plain, self.times, self.since))


def replay_path(cm: CompiledModel, start: State, iids: Sequence[int]) -> list[State]:
    """The states of the discrete path from `start` through the instances `iids`
    (NotABehaviour when one is not enabled where it is taken)."""
    states = [start]
    for k, iid in enumerate(iids, 1):
        try:
            t = cm.step(iid, states[-1])
        except ModelError as e:
            raise NotABehaviour(f"step {k} ({cm.instances[iid].label()}) fails: {e.message}") from None
        if isinstance(t, int):
            raise NotABehaviour(f"step {k} ({cm.instances[iid].label()}) is not enabled where it is taken")
        states.append(t)
    return states


def path_timing(cm: CompiledModel, start: State, iids: Sequence[int], fixed: Mapping[int, int] | None = None,
                bounds: BoundsFn | None = None) -> PathTiming:
    """Whether the timed semantics admits the path from initial state `start` through the
    instances `iids` (step k takes iids[k-1]), with step k at time fixed[k] for each k in
    `fixed` (step 0 is at time 0); the earliest integer timing when it does."""
    bounds = bounds or compile_bounds(cm)
    try:
        states = replay_path(cm, start, iids)
    except NotABehaviour as why:
        return PathTiming([start], [None, *iids], False, reason=str(why))
    seq: list[int | None] = [None, *iids]
    bad = [k for k in (fixed or {}) if not 0 <= k < len(states)]
    if bad:
        raise ValueError(f"fixed time stamps for steps {bad}: the path has steps 0..{len(states) - 1}")
    try:
        con = path_constraints(cm, bounds, states, seq)
    except NotABehaviour as why:
        return PathTiming(states, seq, False, reason=str(why))
    except ModelError as e:  # a bound that fails to evaluate along the path: a modelling error there
        return PathTiming(states, seq, False, reason=f"a modelling error along the path: {e.message}")
    for k, c in (fixed or {}).items():
        con.add(0, k, c)
        con.add(k, 0, -c)
    try:
        times = con.earliest()
    except NotABehaviour:
        why = "no timing satisfies the path's time bounds"
        if fixed:
            why += " with the fixed time stamps"
        return PathTiming(states, seq, False, reason=why)
    since = [None if r is None else times[r] for r in con.started]
    return PathTiming(states, seq, True, times, since)


def counterexample_path(cm: CompiledModel, cex: Counterexample) -> tuple[State, list[int]]:
    """The initial state and instances of a counterexample's steps (ValueError when a step
    names no instance of this model or its first state is not a full state)."""
    start = cm.layout.encode(cex.steps[0].state)
    iids = []
    for k, st in enumerate(cex.steps[1:], 1):
        iid = cm.find_instance(st.action, st.args) if st.action is not None else None
        if iid is None:
            raise ValueError(f"step {k} names no action instance of the model ({st.action} {st.args})")
        iids.append(iid)
    return start, iids


def timed_counterexample(cm: CompiledModel, cex: Counterexample,
                         bounds: BoundsFn | None = None) -> tuple[Counterexample | None, str | None]:
    """A discrete counterexample of the untimed abstraction, stamped: (the timed behaviour, None)
    when a timing admits it, else (None, why not). Its states must be the model's (checked).
    A lasso is not stamped here (its loop would need a timing that repeats)."""
    if cex.loop is not None:
        return None, "a lasso: its loop's timing is not checked here"
    try:
        start, iids = counterexample_path(cm, cex)
    except ValueError as why:
        return None, str(why)
    pt = path_timing(cm, start, iids, bounds=bounds)
    if pt.feasible and [cm.layout.decode(s) for s in pt.states] != [s.state for s in cex.steps]:
        return None, "the counterexample's states do not follow from its actions"
    if not pt.feasible:
        return None, pt.reason
    return Counterexample(pt.steps(cm), loop=cex.loop), None


def zone_walk(cm: CompiledModel, start: State, iids: Sequence[int]) -> bool:
    """Whether the zone graph (zones.py) has the path: the same question as path_timing without
    fixed stamps, answered with the DBMs (Extra_M preserves the steps a path can take)."""
    from gpcheck.checker.engines.timed import zones

    g = zones.ZoneGraph(cm)
    node = g.initial(start)
    if node is None:
        return False
    for iid in iids:
        t = cm.step(iid, node.s)
        if isinstance(t, int) or iid not in {i for i, _ in g.enabled(node.s)}:
            return False
        nxt = g.post(node, iid, t)
        if nxt is None:
            return False
        node = zones.Node(t, nxt[0], nxt[1], -1, iid)
    return True

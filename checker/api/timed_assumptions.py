"""Which assumptions a timed spec's proofs use, decided on the untimed abstraction where that is
sound (NOTE(timed-assumption-use)).

NOTE(timed-assumption-use): NOTE(assumption-use) (checker/api/assumptions.py) runs the engine
again on the model without each assumption, and an assumption is used by a proved result when
that result is no longer proved without it. On a timed spec the run without an assumption is a
run of the zone engine, whose graph may be far larger than the run with it (cwsr at the
library's size without `copy_save`: 277,790 zones, minutes of CPU). Here the run without an
assumption `a` is answered from the *untimed abstraction* of the relaxed model M-a (every `time`
dropped: checker/engines/timed/untimed) wherever the answer carries over, and the zone engine runs
only for what is left, under a budget:

* M-a's abstraction has every behaviour of timed M-a (a timing only removes behaviours). So an
  invariant, transition property or deadlock-freedom (covers answered `unreachable` included)
  that the abstraction's complete explicit search proves holds for timed M-a: `a` is **not
  used**. A violation found there is a discrete path; when checker/engines/timed/path.py finds
  a timing for it, timed M-a violates the property: `a` is **used**. A path no timing admits
  decides nothing (another path may be timed): the zone engine decides.
* `range`: the abstraction's search proves the variables stay in range, and every time bound of
  every instance enabled in a state the abstraction reaches evaluates with 0 <= L <= U; the timed
  reachable states are among those, and a bound is evaluated only where its instance is
  enabled: **not used**. Otherwise the zone engine decides.
* Liveness: a liveness property is violated in the timed semantics iff some time-divergent,
  weakly fair behaviour avoids the goal (docs/timed.md). Such a behaviour is a weakly fair
  behaviour of the abstraction (the same `fair` instances; staying in a state for ever is timed
  only where no fair instance is enabled, which the abstraction's stutter also requires), so a
  proof on the abstraction is a timed proof: **not used**. The abstraction's counterexample
  confirms a timed violation when it is a path that stutters in its last state (a deadlock or a
  state with no fair instance enabled), the path has a timing (path.py), and no instance enabled
  in that state has a deadline: time then passes there for ever, a time-divergent fair behaviour
  that avoids the goal: **used**. A lasso with a loop goes to the zone engine (its loop would
  need a timing that repeats).
* Latency (without `within`): proved means its maximum is bounded, which fails iff a
  time-divergent behaviour avoids the target for ever after a start. On the abstraction's
  graph, take the *region*: the non-target states reachable from a start (an initial 'from'
  state, or the target of a step from a non-'from' state into a 'from' state) without passing a
  target state. When the region has no cycle and every state in it has an enabled instance with
  a deadline (an upper bound, or `urgent`), every behaviour leaves the region after at most as
  many steps as it has states, each sojourn bounded by the largest deadline: the timed maximum
  is bounded: **not used**. Anything else (a cycle, a state where time may stop forever,
  `within B`) goes to the zone engine.
* What cannot depend on some variables is decided, the same way, on M-a with those variables
  frozen (NOTE(irrelevant-vars) in checker/api/irrelevant.py: the same verdicts on a smaller graph,
  e.g. kfd_monitor without copy_save with its 3^8 `lp_ops` values frozen for bounded_inversion,
  deadlock, range and rt_preempt_latency). NOTE(slice-first): the results a slice keeps are asked
  of its abstraction before the whole M-a's, which then searches only for the others: where both
  decide, both say the same (the bisimulation), and the slice's graph is the smaller one.
* NOTE(violations-first) (`_violations_first`): an abstraction search asked only safety
  properties stops after the Python search's first PROBE_STATES states when that finished or
  found every property asked violated.
* What is left runs on the zone engine with at most ZONE_RERUN_FACTOR times the zones of the run
  with every assumption (at least ZONE_RERUN_MIN), or the user's --max-states; past that the
  result is `unknown` ("not determined: the run without `a` passed N zones"), which
  NOTE(assumption-use) lists as used and undecided, with that reason: never a wrong name.

Each result says which path decided it (`detail["decided_by"]`)."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from gpcheck.spec import ir
from gpcheck.spec.errors import UsageError
from gpcheck.gpmodel import CompiledModel, ModelError, State, compile_model
from gpcheck.checker.api.explicit_run import AUTO_PYTHON_STATES_CACHED, run_explicit
from gpcheck.checker.api.timed_abstraction import state_safety_names
from gpcheck.checker.core import budget
from gpcheck.checker.core.verdict import Counterexample, Report, Result, Verdict
from gpcheck.checker.engines.explicit.explicit import Limits
from gpcheck.checker.engines.timed import untimed

ZONE_RERUN_FACTOR = 4  # the zone engine's run without an assumption: at most this many times the zones
PROBE_STATES = AUTO_PYTHON_STATES_CACHED  # NOTE(violations-first): the Python search's states before the whole one
ZONE_RERUN_MIN = 20_000  # of the run with every assumption, and at least these many
BY_ABSTRACTION = "untimed abstraction of the model without the assumption (NOTE(timed-assumption-use))"
BY_ZONES = "zone graph of the model without the assumption"
NOT_USED_SAFETY = "proved on the untimed abstraction: holds for every timing"
USED_TIMED = "violated: the abstraction's counterexample has a timing (checker/engines/timed/path.py)"


class _Graph:
    """The abstraction's explored graph: its states, initial state indexes, and its edges as CSR
    arrays (state i's edges are offsets[i]..offsets[i+1]-1, each an instance and a target)."""

    def __init__(self, states: list[State], initial: list[int], offsets: np.ndarray, iids: np.ndarray,
                 targets: np.ndarray):
        self.states, self.initial = states, initial
        self.offsets, self.iids, self.targets = offsets, iids, targets
        self.sources = np.repeat(np.arange(len(states), dtype=np.int64), np.diff(offsets))

    def edges(self, i: int) -> list[tuple[int, int]]:
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        return list(zip(self.iids[a:b].tolist(), self.targets[a:b].tolist()))


def rerun_without(relaxed: ir.Model, names: set[str], limits: Limits, core: str = "auto",
                  zone_cap: int | None = None) -> Report:
    """The results of the timed spec `relaxed` (a model without one assumption) for the proved
    properties `names`, each decided on the untimed abstraction where that is sound, else on
    the zone graph with at most `zone_cap` zones (module docstring). What cannot depend on some
    variables is decided, the same way, on the model with those frozen (NOTE(irrelevant-vars)):
    a far smaller graph where they take every combination. The slices' abstractions answer
    first, the whole model's abstraction what they leave (NOTE(slice-first)), then the slices'
    and the whole model's zone graphs the rest."""
    from gpcheck.checker.api.irrelevant import split

    cm = compile_model(relaxed)
    results: list[Result] = []
    # per frozen slice (the variables frozen fix the slice: irrelevant.slice_for): the slice, compiled,
    # and the names its abstraction was asked
    tried: dict[tuple[str, ...], tuple[ir.Model, CompiledModel, set[str]]] = {}
    for part, model, frozen in split(relaxed, names):  # NOTE(slice-first)
        if frozen:
            cm_part = compile_model(model)
            got = list(_by_abstraction(model, cm_part, part, limits, core).values())
            tried[tuple(frozen)] = (model, cm_part, set(part))
            results += _frozen(got, frozen)
    decided = {r.property for r in results}
    results += _by_abstraction(relaxed, cm, names - decided, limits, core).values()
    decided = {r.property for r in results}
    zones: int | None = None
    cap = limits.max_states if zone_cap is None else zone_cap
    for part, model, frozen in split(relaxed, names - decided) if names - decided else ():
        got = []
        cm_part = cm
        if frozen:
            model, cm_part, asked = tried.get(tuple(frozen)) or (model, compile_model(model), set())
            again = part - asked  # the same slice decides the same again
            got = list(_by_abstraction(model, cm_part, again, limits, core).values()) if again else []
            part = part - {r.property for r in got}
        if part:
            more, z = _by_zones(model, cm_part, part, limits, cap)
            got += more
            zones = z if zones is None else max(zones, z or 0)
        results += _frozen(got, frozen)
    out = Report(relaxed.name, relaxed.file, relaxed.const_values, [r for r in results if r.property in names])
    out.timed = {"zones": zones}
    return out


def _frozen(got: list[Result], frozen: list[str]) -> list[Result]:
    """Results decided with the variables `frozen` frozen, saying so (where one is undecided, in its
    reason too)."""
    if not frozen:
        return got
    why = f"with {', '.join(frozen)} frozen: no result asked for reads them (NOTE(irrelevant-vars))"
    return [replace(r, detail={**r.detail, "frozen": why},
                    reason=f"{r.reason}; {why}" if r.verdict is Verdict.UNKNOWN and r.reason else r.reason)
            for r in got]


def _by_abstraction(model: ir.Model, cm: CompiledModel, names: set[str], limits: Limits,
                    core: str) -> dict[str, Result]:
    """The results among `names` the untimed abstraction of `model` decides (module docstring)."""
    inv = state_safety_names(model)
    live = {p.name: p for p in model.liveness}
    lats = {p.name: p for p in model.latencies}
    ask = (names & inv) | (names & set(live)) | ({"range"} & names)
    decided: dict[str, Result] = {}
    if ask or names & set(lats):
        try:
            started = time.monotonic()
            rep = _violations_first(model, cm, ask, limits, core) if ask <= inv and not names & set(lats) else None
            if rep is None:
                if limits.timeout is not None:  # what the first 20,000 states took is spent
                    limits = replace(limits, timeout=max(0.001, limits.timeout - (time.monotonic() - started)))
                rep = run_explicit(untimed(model), ask, limits, cm=cm, core=core, symmetry="off")
        except (budget.Stop, ModelError, UsageError):  # stopped, or a core that cannot run it: the zones decide
            rep = None
        if rep is not None:
            explored = getattr(rep, "explored", None)
            graph = _graph_of(cm, explored) if explored is not None else None
            for r in rep.results:
                if r.property in names:
                    got = _judge(cm, r, graph)
                    if got is not None:
                        decided[r.property] = got
            if graph is not None:
                for name in names & set(lats):
                    got = _latency(cm, graph, lats[name])
                    if got is not None:
                        decided[name] = got
    return decided


def _violations_first(model: ir.Model, cm: CompiledModel, ask: set[str], limits: Limits, core: str) -> Report | None:
    """NOTE(violations-first): safety properties only (no latency wants the graph): the Python
    search of the abstraction to PROBE_STATES first. Where it finishes, or finds every property
    asked violated, that is the run's answer: the whole search gives the same verdicts (a
    violation found is one; a finished search is the whole search, core auto's own first stage),
    and breadth-first counterexamples of the same, shortest length, found where core auto's
    first stage (the same Python search to these states) finds them. Else None:
    the whole search runs. Without this, a relaxed model of millions of states whose properties
    left are all violated at a shallow depth (kfd_monitor without copy_save: no_loss and
    no_reexecution) had core auto compile it (20 s of CPU the first time) to search on to its
    state cap and decide nothing more."""
    if core != "auto" or (limits.max_states is not None and limits.max_states <= PROBE_STATES):
        return None
    rep = run_explicit(untimed(model), ask, replace(limits, max_states=PROBE_STATES), cm=cm, core="python",
                       symmetry="off")
    done = rep.states is not None or all(r.verdict is Verdict.VIOLATED for r in rep.results if r.property in ask)
    return rep if done else None


def _by_zones(model: ir.Model, cm: CompiledModel, names: set[str], limits: Limits,
              cap: int | None) -> tuple[list[Result], int | None]:
    """The results `names` on the zone graph of `model`, at most `cap` zones; past it `unknown`."""
    from gpcheck.checker.engines.timed.engine import run_timed

    inv = state_safety_names(model)
    results: list[Result] = []
    zones = None
    # the safety properties left are violations of the abstraction no timing was found for: the zone
    # search stops once each is violated; liveness and latencies need the whole graph
    for part, early in ((names & inv, True), (names - inv, False)):
        if not part:
            continue
        rep2 = run_timed(model, part, Limits(cap, limits.timeout, None), cm=cm, early=early)
        zones = max(zones or 0, (rep2.timed or {}).get("zones") or 0)
        for r in rep2.results:
            if r.verdict is not Verdict.VIOLATED and r.verdict is not Verdict.PROVED:
                r = replace(r, verdict=Verdict.UNKNOWN, reason=f"not determined: the run without the assumption "
                            f"passed {cap:,} zones ({r.reason})" if cap is not None else r.reason)
            results.append(replace(r, detail={**r.detail, "decided_by": BY_ZONES}))
    return results, zones


def _graph_of(cm: CompiledModel, explored: object) -> _Graph | None:
    """The explored graph of a complete explicit search (Python or compiled core)."""
    g = getattr(explored, "graph", None)
    search = getattr(explored, "search", None)
    if g is None:
        from gpcheck.checker.engines.explicit.liveness import build_graph

        lg = build_graph(cm, search.parent, lambda s: False)  # type: ignore[union-attr]
        offsets = np.zeros(len(lg.states) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(e) for e in lg.edges])
        flat = [x for e in lg.edges for x in e]
        iids = np.array([x[0] for x in flat], dtype=np.int64)
        targets = np.array([x[1] for x in flat], dtype=np.int64)
        return _Graph(lg.states, lg.initial, offsets, iids, targets)
    if getattr(g, "via", None) is not None:
        return None
    from gpcheck.checker.engines.explicit.fast_explicit import _csr_graph

    csr = _csr_graph(cm, search, g)  # type: ignore[arg-type]
    initial = np.flatnonzero(g.parent[:g.n] == -1).tolist()
    m = int(csr.offsets[g.n])
    return _Graph(g.all_states(), initial, csr.offsets[:g.n + 1].astype(np.int64),
                  csr.iids[:m].astype(np.int64), csr.targets[:m].astype(np.int64))


def _proved(r: Result, why: str) -> Result:
    return Result(r.property, r.kind, Verdict.PROVED, "timed", detail={"decided_by": BY_ABSTRACTION, "time": why})


def _judge(cm: CompiledModel, r: Result, graph: _Graph | None) -> Result | None:
    """The timed verdict of M-a for one of the abstraction's results, or None: the zones decide."""
    from gpcheck.checker.engines.timed.path import timed_counterexample

    if r.verdict is Verdict.PROVED:
        if r.kind == "range":
            return _range(cm, r, graph)
        return _proved(r, NOT_USED_SAFETY)
    if r.verdict is not Verdict.VIOLATED or r.counterexample is None:
        return None
    cex = r.counterexample
    if r.kind == "liveness":
        if cex.loop is None or cex.loop != len(cex.steps) - 1:
            return None
        stem = Counterexample(cex.steps, loop=None)
        timed, _ = timed_counterexample(cm, stem)
        if timed is None or _deadline_enabled(cm, cex.steps[-1].state):
            return None
        return Result(r.property, r.kind, Verdict.VIOLATED, "timed", counterexample=Counterexample(timed.steps, cex.loop),
                      detail={"decided_by": BY_ABSTRACTION, "time": "a timed path to a state where time passes for "
                              "ever and no fair instance is enabled"})
    if r.kind == "range":
        return None  # the abstraction never evaluates the bounds: the zones decide
    timed, _ = timed_counterexample(cm, cex)
    if timed is None:
        return None
    return Result(r.property, r.kind, Verdict.VIOLATED, "timed", counterexample=timed,
                  detail={"decided_by": BY_ABSTRACTION, "time": USED_TIMED})


def _deadline(cm: CompiledModel) -> list[bool]:
    """Per instance: its action has a deadline (an upper bound; `urgent` is time 0..0)."""
    return [inst.action.time is not None and inst.action.time.upper is not None for inst in cm.instances]


def _deadline_enabled(cm: CompiledModel, decoded: object) -> bool:
    """Some instance enabled in the (decoded) state has a deadline: time cannot pass for ever there."""
    s = cm.layout.encode(decoded)
    has = _deadline(cm)
    return any(has[iid] for iid, _ in cm.successors(s))


def _range(cm: CompiledModel, r: Result, graph: _Graph | None) -> Result | None:
    """`range` proved on the abstraction carries over when every bound of every instance enabled
    in a state it reaches evaluates (bounds.py raises BoundError otherwise)."""
    from gpcheck.checker.engines.timed.bounds import BoundError, compile_bounds

    if graph is None:
        return None
    bounds = compile_bounds(cm)
    states0 = [graph.states[i] for i in graph.initial[:1]]
    reads: list[bool] = []  # per instance: its bounds read the state (else: evaluated once, below)
    for iid, inst in enumerate(cm.instances):
        t = inst.action.time
        exprs = [] if t is None else [t.lower] + ([] if t.upper is None else [t.upper])
        reads.append(any(isinstance(e, ir.VarRef) for x in exprs for e in ir.walk_expr(x)))
    once = {int(i) for i in np.unique(graph.iids).tolist() if not reads[int(i)]}
    try:
        for iid in once:  # bounds that read no state: the same in every state
            if cm.instances[iid].action.time is not None and states0:
                bounds(iid, states0[0])
    except BoundError:
        return None
    dep = np.array(reads or [False], dtype=bool)
    pick = dep[graph.iids] if len(graph.iids) else np.zeros(0, dtype=bool)
    for k, (i, iid) in enumerate(zip(graph.sources[pick].tolist(), graph.iids[pick].tolist())):
        if not k & 0xFFF:
            budget.check()
        try:
            bounds(iid, graph.states[i])
        except BoundError:
            return None
    return _proved(r, "the abstraction stays in range and every time bound evaluates in every state it reaches")


def _latency(cm: CompiledModel, graph: _Graph, p: ir.Latency) -> Result | None:
    """`proved` (bounded) when the measuring region of the abstraction is acyclic and has a
    deadline in every state; None otherwise (the zones decide)."""
    if p.within is not None:
        return None
    try:
        P = _truths(cm, graph, p.p)
        Q = _truths(cm, graph, p.q)
    except ModelError:
        return None
    n = len(graph.states)
    src, dst = graph.sources, graph.targets
    start = np.zeros(n, dtype=bool)
    start[[i for i in graph.initial if P[i]]] = True
    start[dst[~P[src] & P[dst]]] = True
    keep = ~Q[dst]  # the steps that stay out of the target
    region = start & ~Q
    frontier = region.copy()
    while frontier.any():  # breadth first, a level of the CSR at a time
        budget.check()
        step = frontier[src] & keep
        nxt = np.zeros(n, dtype=bool)
        nxt[dst[step]] = True
        frontier = nxt & ~region
        region |= nxt
    has = np.array(_deadline(cm) or [False], dtype=bool)
    deadline = np.zeros(n, dtype=bool)
    deadline[src[has[graph.iids]]] = True
    if (region & ~deadline).any():
        return None  # time may stop in a region state (or it is a deadlock): the zones decide
    inside = region[src] & region[dst] & keep
    if not _acyclic(n, src[inside], dst[inside], region):
        return None
    return Result(p.name, "latency", Verdict.PROVED, "timed",
                  detail={"decided_by": BY_ABSTRACTION,
                          "time": f"bounded: the abstraction's measuring region ({int(region.sum()):,} states) has "
                                  f"no cycle and a deadline in every state"})


def _truths(cm: CompiledModel, graph: _Graph, e: ir.Expr) -> np.ndarray:
    fn = cm.predicate(e)
    out = np.zeros(len(graph.states), dtype=bool)
    for lo in range(0, len(graph.states), 1 << 14):
        budget.check()
        out[lo:lo + (1 << 14)] = [bool(fn(s)) for s in graph.states[lo:lo + (1 << 14)]]
    return out


def _acyclic(n: int, src: np.ndarray, dst: np.ndarray, region: np.ndarray) -> bool:
    """No cycle among the region's states over the steps src -> dst (Kahn's algorithm, a level
    at a time: peel the states with no step into them until none is left or none can go)."""
    alive = region.copy()
    live_edge = np.ones(len(src), dtype=bool)
    while alive.any():
        budget.check()
        indeg = np.bincount(dst[live_edge], minlength=n)
        free = alive & (indeg == 0)
        if not free.any():
            return False
        alive &= ~free
        live_edge &= ~free[src]
    return True


def zone_cap(first: Report | None) -> int:
    """The zones a run without an assumption may explore: ZONE_RERUN_FACTOR times the first run's
    (at least ZONE_RERUN_MIN)."""
    zones = ((first.timed or {}).get("zones") if first is not None else None) or 0
    return max(ZONE_RERUN_FACTOR * zones, ZONE_RERUN_MIN)

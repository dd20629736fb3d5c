"""Covers, vacuity and the assumptions each proof used: what `api.verify` adds around one engine run.

NOTE(covers): `cover C: P` asks whether a state satisfying P is reachable. Every engine answers
it as the invariant `not P` (so each engine decides it exactly as it decides an invariant, with
the same limits): violated means `reached`, and the counterexample is the witness; proved means
`unreachable` (an engine proved no reachable state satisfies P: the explicit engine after a
complete search, kind/pdr/--for-all by an inductive invariant); anything less (a bound, a
constraint that stopped the search, a limit) is `unknown`, with the reason. A cover is a
question, not an obligation: on its own it never changes the exit code; `expect C: reached`
(or `unreachable`) makes it one, judged like any expect line.

NOTE(vacuity): a property that holds only because what it talks about never happens is
reported with a warning (`Result.vacuous`, the reason). The engine decides, alongside the
properties, hidden covers ("probes") of: the antecedent A of an invariant `A implies B` (at its
top level), the trigger P of `P leads_to Q`, the 'from' predicate of a latency property, and,
when the model has state assumptions or constraints, a state inside all its constraints (with
no constraint: any state). A probe proved unreachable makes its property vacuous (the last
makes every result vacuous: no initial state lies inside the assumptions and constraints, so
the model has no behaviour). A probe that holds up to a bound (bmc: not reached within K steps)
gives the same warning, saying "within the bound checked (K steps)": the property holds to that
bound vacuously. A probe reached, or not decided, says nothing.

NOTE(assumption-use): every result says which model assumptions (NOTE(assumptions) in
spec/ir.py) it rests on. A proved (or unreachable) result lists those its proof used. A proof
by kind or pdr comes with its proof core (NOTE(proof-core) in checker/engines/smt/proofcore.py): the
assumptions its inductive argument needs. For any other proof (the explicit engine's, and a
Z3 proof whose core was not found) the engine is run again on the model without each assumption in turn (its guards dropped, its
initial-state filter too), for the proved results only, and an assumption is used when the
result is no longer proved without it (violated, or not decided by the same engine within the
same limits: then the proof at hand needs it; such an undecided one is marked as such). This
costs one more run per declared assumption, and none for a model that declares none; the runs
share the time limit, and the explicit engine's are capped (api.RERUN_STATES_FACTOR times the
states of the run with every assumption, at least api.RERUN_STATES_MIN), as a model without an
assumption can be far larger (kfd_monitor without copy_save: 620 -> 3.5 million states). Every other result lists the assumptions in force
(all of them): its counterexample or bound holds under them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from gpcheck.checker.api import inert
from gpcheck.checker.core.verdict import Result, Verdict
from gpcheck.spec import ir

PROBE = "~vacuity"  # probe names: no user property can contain '~'


@dataclass
class Plan:
    """The model an engine runs (covers and probes as invariants) and what to ask it."""

    model: ir.Model
    wanted: set[str]
    covers: set[str]
    probes: dict[str, tuple[str | None, str]]  # probe name -> (its property, None: every one; why)


def plan(model: ir.Model, wanted: set[str]) -> Plan:
    """Covers and vacuity probes as invariants `not P` of the model the engine will run."""
    extra: list[ir.Invariant] = []
    covers = {c.name for c in model.covers if c.name in wanted}
    extra += [ir.Invariant(c.name, _not(c.expr), c.span) for c in model.covers if c.name in covers]
    probes: dict[str, tuple[str | None, str]] = {}

    def probe(owner: str | None, expr: ir.Expr, why: str) -> None:
        name = f"{owner or 'model'}{PROBE}{len(probes)}"
        probes[name] = (owner, why)
        extra.append(ir.Invariant(name, _not(expr)))

    for inv in model.invariants:
        if inv.name in wanted and isinstance(inv.expr, ir.Binary) and inv.expr.op is ir.BinOp.IMPLIES:
            probe(inv.name, inv.expr.lhs, "the antecedent of the implication holds in no reachable state")
    for lv in model.liveness:
        if lv.name in wanted and lv.kind is ir.LivenessKind.LEADS_TO and lv.p is not None:
            probe(lv.name, lv.p, "the trigger never happens: no reachable state satisfies the left side of leads_to")
    for lat in model.latencies:
        if lat.name in wanted:
            probe(lat.name, lat.p, "no behaviour starts a measurement: no reachable state satisfies the 'from' predicate")
    if model.initial_assumptions or model.constraints:
        inside: ir.Expr = ir.Lit(1, ir.BOOL)
        for c in model.constraints:
            inside = ir.Binary(ir.BinOp.AND, inside, c.expr, ir.BOOL)
        what = [f"assume {a.name}" for a in model.assumptions if a.kind == "state"]
        what += [f"constraint {c.name}" for c in model.constraints]
        probe(None, inside, f"no initial state lies inside {', '.join(what)}: the model has no behaviour")
    run_model = replace(model, invariants=model.invariants + tuple(extra), covers=())
    return Plan(run_model, (set(wanted) | set(probes)), covers, probes)


def _not(e: ir.Expr) -> ir.Expr:
    return ir.Unary(ir.UnOp.NOT, e, ir.BOOL, e.span)


def without(model: ir.Model, name: str) -> ir.Model:
    """The model with one assumption dropped: its guards, and its initial-state filter."""
    def strip(body: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for s in body:
            if isinstance(s, ir.Require) and s.assumption == name:
                continue
            if isinstance(s, ir.If):
                s = replace(s, then=strip(s.then), else_=strip(s.else_))
            elif isinstance(s, ir.For):
                s = replace(s, body=strip(s.body))
            out.append(s)
        return tuple(out)

    def renumber(body: tuple[ir.Stmt, ...], counter: list[int]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for s in body:
            if isinstance(s, ir.Require):
                s = replace(s, ordinal=counter[0])
                counter[0] += 1
            elif isinstance(s, ir.If):
                then = renumber(s.then, counter)
                s = replace(s, then=then, else_=renumber(s.else_, counter))
            elif isinstance(s, ir.For):
                s = replace(s, body=renumber(s.body, counter))
            out.append(s)
        return tuple(out)

    actions = tuple(replace(a, body=renumber(strip(a.body), [0])) for a in model.actions)
    return replace(model, actions=actions, assumptions=tuple(a for a in model.assumptions if a.name != name))


@dataclass
class Use:
    """The assumptions each proved result used (by the engine's result names), those of them
    the run without it left undecided (with why), and how this was found."""

    used: dict[str, tuple[str, ...]]
    undecided: dict[str, dict[str, str]]
    how: dict[str, str]  # per result: a proof core, or the runs without each assumption


def used(model: ir.Model, results: list[Result], rerun: Callable[[ir.Model, set[str]], list[Result]],
         inert_skip: bool = True) -> Use:
    """NOTE(assumption-use): one `rerun` of the engine per declared assumption, for the proved
    results. Not proved without it: used; where the run without it decided nothing (a limit, or
    a modelling error that stopped the explicit search) the assumption counts as used, since the
    proof at hand may rest on it, and `undecided` says why. `inert_skip`: the results an inert
    assumption cannot change are not re-run (NOTE(inert-assumption) in checker/api/inert.py;
    --for-all leaves it out: one of its instances may have no behaviour where another has)."""
    names = [a.name for a in model.assumptions]
    proved = {r.property for r in results if r.verdict is Verdict.PROVED and PROBE not in r.property}
    # an inductive proof that comes with its proof core (kind, pdr: NOTE(proof-core) in checker/engines/smt/proofcore.py)
    cores = {r.property: tuple(r.detail["assumption_core"]) for r in results
             if r.property in proved and isinstance(r.detail.get("assumption_core"), list)}
    how: dict[str, str] = {p: CORE_HOW for p in cores}
    proved -= set(cores)
    out: dict[str, list[str]] = {p: [] for p in proved}
    undecided: dict[str, dict[str, str]] = {}
    if not names or not proved:
        return Use({**{p: () for p in proved}, **cores}, {}, how)
    # a behaviour exists (a counterexample, or a reached probe): an inert assumption is satisfiable
    inhabited = inert_skip and any(r.verdict is Verdict.VIOLATED for r in results)
    for a in names:
        same = inert.unaffected(model, a, proved) if inhabited else set()
        need = proved - same
        again = {r.property: r for r in rerun(without(model, a), need)} if need else {}
        for p in need:
            r = again.get(p)
            if r is not None and r.verdict is Verdict.PROVED:
                continue
            out[p].append(a)
            if r is None or r.verdict in (Verdict.UNKNOWN, Verdict.HOLDS_TO_BOUND):
                why = "not checked" if r is None else (r.reason or r.verdict.value)
                undecided.setdefault(p, {})[a] = f"without it: {r.verdict.value if r else 'unknown'} ({why})"
    how.update({p: RERUN_HOW for p in proved})
    return Use({**{p: tuple(v) for p, v in out.items()}, **cores}, undecided, how)


CORE_HOW = ("proof core: the assumptions the engine's inductive argument (its lemmas, certificate or invariant, "
            "and the induction at its k) needs: each dropped in turn where the argument re-checks without it")
RERUN_HOW = "the engine run again without each assumption: one is used when the result is no longer proved without it"


def finish(model: ir.Model, pl: Plan, results: list[Result], use: Use | None) -> list[Result]:
    """The engine's results for the user: covers as covers, probes turned into vacuity warnings
    on their properties (and dropped), and the assumptions of each result."""
    in_force = tuple(a.name for a in model.assumptions)
    vacuous: dict[str | None, str] = {}
    out: list[Result] = []
    for r in results:
        if r.property in pl.probes:
            owner, why = pl.probes[r.property]
            if r.verdict is Verdict.PROVED:
                vacuous[owner] = why
            elif r.verdict is Verdict.HOLDS_TO_BOUND and r.engine == "bmc" and r.bound is not None:  # vacuous up to its bound
                vacuous.setdefault(owner, f"{why}, within the bound checked ({r.bound} steps; a deeper state may)")
            continue
        out.append(r)
    final = []
    for r in out:
        proved = r.verdict is Verdict.PROVED
        if r.property in pl.covers:
            r = _cover(r)
        why = vacuous.get(None) or vacuous.get(r.property)
        if why is not None and r.kind != "cover" and r.verdict is not Verdict.VIOLATED:
            r = replace(r, vacuous=why)
        if use is not None:
            if proved and r.property in use.used:
                extra: dict[str, object] = {"assumptions_how": use.how[r.property]} if r.property in use.how else {}
                if r.property in use.undecided:
                    extra["assumptions_undecided"] = use.undecided[r.property]
                detail = {k: v for k, v in r.detail.items() if k != "assumption_core"}
                r = replace(r, assumptions=use.used[r.property], detail={**detail, **extra})
            else:
                r = replace(r, assumptions=in_force)
        final.append(r)
    return final


def _cover(r: Result) -> Result:
    """An engine's verdict on `not P` as the verdict of `cover P` (NOTE(covers))."""
    if r.verdict is Verdict.VIOLATED:
        return replace(r, kind="cover", verdict=Verdict.REACHED)
    if r.verdict is Verdict.PROVED:
        return replace(r, kind="cover", verdict=Verdict.UNREACHABLE)
    if r.verdict is Verdict.HOLDS_TO_BOUND:
        why = f"not reached within {r.bound} steps" if r.bound is not None else "not reached"
        return replace(r, kind="cover", verdict=Verdict.UNKNOWN, reason=f"{why}: {r.reason}" if r.reason else why)
    return replace(r, kind="cover")


@dataclass
class Explored:
    """A complete explicit search (no symmetry reduction, no fingerprints, nothing pruned): its
    compiled model and states, for `same_graph`."""

    cm: Any  # gpmodel.CompiledModel
    search: Any  # explicit.Search (the Python core's states)
    graph: Any = None  # fast_explicit.PackedGraph (the compiled core's), or None

    def states(self) -> Any:
        if self.graph is None:
            return self.search.parent.keys()
        if getattr(self.graph, "via", None) is not None:
            return None  # states kept as paths: not worth rebuilding
        return self.graph.all_states()


def same_graph(explored: Explored | None, relaxed: Any, dropped: str) -> bool:
    """NOTE(assumption-use): the model without the assumption `dropped` (`relaxed`, compiled) has
    the same state graph as the run with it: the same initial states and, in every state that run
    reached, no step the assumption blocked that the model without it takes (dropping a guard
    changes nothing else: a step taken is the same step). Then every result of a run without it is
    the run's own, and that run is skipped. Only the instances of the actions that carry one of
    its guards are tried (every action, for a state or step assumption); False at the first step
    it blocked (or a modelling error there), found early where the assumption matters."""
    if explored is None:
        return False
    cm = explored.cm
    if sorted(relaxed.initial_states()) != sorted(cm.initial_states()):
        return False
    states = explored.states()
    if states is None:
        return False
    acts = {a.name for a in cm.model.actions if _carries(a.body, dropped)}
    iids = [i for i, inst in enumerate(cm.instances) if inst.action.name in acts]
    for s in states:
        for i in iids:
            try:
                if isinstance(cm.step(i, s), int) and not isinstance(relaxed.step(i, s), int):
                    return False  # blocked with the assumption, taken without it
            except Exception:  # a modelling error (gpmodel.ModelError): the run without it decides
                return False
    return True


def _carries(body: tuple[ir.Stmt, ...], name: str) -> bool:
    """Some `require` of the body (at any depth) is a guard of the assumption `name`."""
    for st in body:
        if isinstance(st, ir.Require) and st.assumption == name:
            return True
        if isinstance(st, ir.If) and (_carries(st.then, name) or _carries(st.else_, name)):
            return True
        if isinstance(st, ir.For) and _carries(st.body, name):
            return True
    return False

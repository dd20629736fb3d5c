"""The timed engine's run (NOTE(timed) in spec/ir.py): the zone graph's safety search and the
exact latencies, as the explicit engine's Report and Results, every counterexample step with
its time stamp (checker/engines/timed/timeline.py); liveness on the exact zone graph with tick edges
(checker/engines/timed/liveness.py)."""

from __future__ import annotations

from gpcheck.spec import ir
from gpcheck.gpmodel import CompiledModel, State, compile_model, truth
from gpcheck.checker.engines.explicit.explicit import Limits, _holding_verdict, make_steps
from gpcheck.checker.engines.timed import zones
from gpcheck.checker.engines.timed.timeline import NotABehaviour
from gpcheck.checker.core.verdict import Counterexample, Report, Result, Verdict
from gpcheck.checker.engines.timed.timeline import timed_steps

ENGINE = "timed"


def run_timed(model: ir.Model, wanted: set[str], limits: Limits = Limits(),
              cm: CompiledModel | None = None, early: bool = False) -> Report:
    """Every wanted property of a timed spec, decided on its zone graph. `early`: only
    violations are of interest (zones.search); the search stops once every wanted safety
    property is violated."""
    cm = cm or compile_model(model)
    g = zones.ZoneGraph(cm)
    res = zones.search(g, wanted, limits, early=early)
    results = _safety(cm, g, res, wanted)
    results += _liveness(cm, res, [p for p in model.liveness if p.name in wanted], limits)
    lat = [p for p in model.latencies if p.name in wanted]
    if lat:
        from gpcheck.checker.engines.timed.latency import latency_results

        results += latency_results(cm, res, lat, limits)
    order = {n: i for i, n in enumerate(model.property_names() + ["deadlock", "range"])}
    results.sort(key=lambda r: order.get(r.property, len(order)))
    coverage: dict[str, int] = {}
    for iid, inst in enumerate(cm.instances):
        coverage[inst.action.name] = coverage.get(inst.action.name, 0) + res.fired.get(iid, 0)
    warnings = [f"action '{a}' never fired" for a, n in coverage.items() if n == 0 and res.complete]
    report = Report(model.name, model.file, model.const_values, results,
                    states=res.discrete if res.complete else None, coverage=coverage, warnings=warnings)
    report.timed = {"discrete_states": res.discrete, "zones": len(res.nodes), "clocks": len(g.timed),
                    "complete": res.complete}
    return report


def _liveness(cm: CompiledModel, res: zones.SafetySearch, props: list[ir.Liveness], limits: Limits) -> list[Result]:
    """Liveness in the timed semantics (checker/engines/timed/liveness.py): one exact zone graph with
    tick edges for every property."""
    from gpcheck.checker.core import budget
    from gpcheck.checker.engines.timed import liveness

    def unknown(p: ir.Liveness, why: str) -> Result:
        return Result(p.name, "liveness", Verdict.UNKNOWN, ENGINE, reason=why)

    if not props:
        return []
    if res.fault is not None:
        return [unknown(p, f"a modelling error stops the search: {res.fault[0].message}") for p in props]
    if not res.complete:
        return [unknown(p, res.stop_reason or "incomplete search") for p in props]
    if res.pruned:
        return [unknown(p, "the zone graph was explored only inside a constraint") for p in props]
    try:
        tg = liveness.build(cm, limits)
    except (liveness.TooLarge, budget.Stop) as why:
        return [unknown(p, getattr(why, "text", None) or str(why)) for p in props]
    out = []
    for p in props:
        try:
            lasso = liveness.check(cm, tg, p)
        except budget.Stop as stop:
            out.append(unknown(p, stop.text))
            continue
        if lasso is None:
            out.append(Result(p.name, "liveness", Verdict.PROVED, ENGINE, detail={"zones": len(tg.nodes)}))
            continue
        states, iids, loop = lasso
        pin = (loop, len(states) - 1, 1, "max") if loop < len(states) - 1 else None
        try:
            cex = Counterexample(timed_steps(cm, tg_bounds(cm), states, iids, pin), loop=loop)
        except NotABehaviour as why:
            out.append(unknown(p, f"internal error: the timed lasso does not replay ({why})"))
            continue
        out.append(Result(p.name, "liveness", Verdict.VIOLATED, ENGINE, counterexample=cex,
                          detail={"message": "a time-divergent fair behaviour avoids the goal forever",
                                  "zones": len(tg.nodes)}))
    return out


def tg_bounds(cm: CompiledModel) -> object:
    from gpcheck.checker.engines.timed.bounds import compile_bounds

    return compile_bounds(cm)


def _cex(cm: CompiledModel, g: zones.ZoneGraph, res: zones.SafetySearch, k: int,
         last: tuple[int, State] | None = None) -> Counterexample:
    states, iids = zones.node_path(res.nodes, k)
    if last is not None:
        states.append(last[1])
        iids.append(last[0])
    return Counterexample(timed_steps(cm, g.bounds_fn, states, iids))


def _safety(cm: CompiledModel, g: zones.ZoneGraph, res: zones.SafetySearch, wanted: set[str]) -> list[Result]:
    model = cm.model
    out: list[Result] = []

    holds = _holding_verdict(model, res, ENGINE)

    def violated(name: str, kind: str, make: object, detail: dict | None = None) -> Result:  # type: ignore[type-arg]
        try:
            cex = make()  # type: ignore[operator]
        except NotABehaviour as why:  # the zone graph and the path's own timing disagree: a bug
            return Result(name, kind, Verdict.UNKNOWN, ENGINE, reason=f"internal error: the timed counterexample "
                          f"does not replay ({why})")
        return Result(name, kind, Verdict.VIOLATED, ENGINE, counterexample=cex, detail=detail or {})

    for i, (inv, _) in enumerate(cm.invariants):
        if inv.name in wanted:
            k = res.invariant_cex.get(i)
            out.append(holds(inv.name, "invariant") if k is None else
                       violated(inv.name, "invariant", lambda k=k: _cex(cm, g, res, k)))
    for i, (tp, _) in enumerate(cm.transitions):
        if tp.name in wanted:
            hit = res.transition_cex.get(i)
            out.append(holds(tp.name, "transition") if hit is None else
                       violated(tp.name, "transition", lambda h=hit: _cex(cm, g, res, h[0], (h[1], h[2]))))
    if "deadlock" in wanted and not model.allow_deadlock:
        if res.deadlock is not None:
            out.append(violated("deadlock", "deadlock", lambda: _cex(cm, g, res, res.deadlock),  # type: ignore[arg-type]
                                {"message": "no action is enabled and no terminal predicate holds"}))
        else:
            out.append(holds("deadlock", "deadlock"))
    if "range" in wanted:
        if res.fault is not None:
            e, k, last = res.fault
            detail = {"error": e.message, "kind": e.site.kind, "location": str(e.site.span)}
            if e.site.instance is not None:
                inst = cm.instances[e.site.instance]
                detail["action"] = inst.action.name
                detail["args"] = inst.arg_dict()  # type: ignore[assignment]
            if res.nodes[k].zone == ():  # an initial state's bounds failed
                cex = Counterexample((make_steps(cm, [res.nodes[k].s])[0],))
                out.append(Result("range", "range", Verdict.VIOLATED, ENGINE, counterexample=cex, detail=detail))
            else:
                out.append(violated("range", "range", lambda: _cex(cm, g, res, k, last), detail))
        else:
            out.append(holds("range", "range"))
    return out


__all__ = ["run_timed", "timed_steps", "ENGINE", "truth"]

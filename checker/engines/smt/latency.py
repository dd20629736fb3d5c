"""Latency properties on a bounded unrolling (NOTE(latency)): Z3 Optimize over the paths of at
most `depth` steps, for `--engine bmc` (and `auto` when the explicit search does not finish).

The unrolling is s_0 .. s_k with I(s_0), and T(s_j, s_j+1) for every j below the window's end b;
the window starts at a (a P-state entered from a non-P state, or an initial P-state), ends at b
(the first Q-state after a), and its measurement is the summed cost of the steps a+1 .. b.
Z3 maximises (and separately minimises) that sum. What it establishes is bounded:

* a window with a measurement above `within` is a real behaviour: `violated`, with the witness
  (replayed through gpmodel like every Z3 counterexample, checker/engines/smt/witness.py);
* otherwise no window that fits in k steps exceeds `within`: `holds_to_bound`, bound k; a longer
  behaviour may still (and an unbounded greatest measurement, a cycle, is never looked for);
* without `within` the property claims a bounded latency, which an unrolling cannot show:
  `unknown`, with the bounded numbers in `detail`.

`min` and `max` are over the windows that fit in k steps: `max` is a lower bound of the exact
greatest measurement, `min` an upper bound of the least (the explicit engine computes both
exactly). A cost that can fail to evaluate makes the result `unknown` (use the explicit engine)."""

from __future__ import annotations

from typing import Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.core import budget
from gpcheck.checker.core import progress as meter
from gpcheck.checker.engines.smt.decode import read_path, to_counterexample
from gpcheck.checker.engines.smt.encode import Encoder, State, _Exec
from gpcheck.checker.engines.smt.session import Deadline, trusted
from gpcheck.checker.core.verdict import Result, Verdict

KIND = "latency"


def run_latency(model: ir.Model, props: Sequence[ir.Latency], depth: int, deadline: Deadline,
                engine: str = "bmc") -> list[Result]:
    """One Result per latency property, over paths of at most `depth` steps."""
    if not props:
        return []
    enc = Encoder(model)
    k = max(0, depth)
    path = [enc.state(j) for j in range(k + 1)]
    costs, fallible = _costs(enc, path)
    if fallible:
        why = (f"{engine} does not bound latencies whose costs can fail to evaluate (a dynamic index or a "
               f"division in a cost): the explicit engine computes them exactly")
        return [Result(p.name, KIND, Verdict.UNKNOWN, engine, reason=why) for p in props]
    out = []
    for p in props:
        meter.note(engine=engine, phase="latency", bound=k, prop=p.name)  # checker/core/progress.py
        out.append(_one(enc, p, path, costs, k, deadline, engine))
    return out


def _costs(enc: Encoder, path: list[State]) -> tuple[list[z3.ArithRef], bool]:
    """The cost of the step taken at each position j (selected by act@j) as an Int term, and
    whether some cost can fail to evaluate."""
    model = enc.model
    out: list[z3.ArithRef] = []
    fallible = False
    for j in range(len(path) - 1):
        budget.poll()  # NOTE(time-limit)
        term: z3.ArithRef = z3.IntVal(0)
        for ai in reversed(range(len(model.actions))):
            a = model.actions[ai]
            if a.cost is None:
                v: z3.ArithRef = z3.IntVal(0)
            else:
                ex = _Exec(enc, list(path[j]))
                for sym, arg in zip(a.params, enc.params(ai, j)):
                    ex.locals[sym.id] = arg
                val, err = ex.eval(a.cost)
                if not z3.is_false(z3.simplify(err)):
                    fallible = True
                v = val  # type: ignore[assignment]
            term = z3.If(enc.act(j) == enc.num.lit(ai), v, term)  # type: ignore[assignment]
        out.append(term)
    return out, fallible


def _one(enc: Encoder, p: ir.Latency, path: list[State], costs: list[z3.ArithRef], k: int,
         deadline: Deadline, engine: str) -> Result:
    a, b = z3.Int(f"lat.{p.name}.start"), z3.Int(f"lat.{p.name}.end")
    P = [enc.holds(p.p, s) for s in path]
    Q = [enc.holds(p.q, s) for s in path]
    opt = z3.Optimize()
    ms = deadline.ms()
    if ms is not None:
        opt.set(timeout=max(1, ms))
    opt.add(enc.in_range(path[0]), enc.init(path[0]), 0 <= a, a <= b, b <= k)
    for j in range(k):
        opt.add(enc.in_range(path[j + 1]), z3.Implies(j < b, enc.trans(path[j], path[j + 1], j)))
        opt.add(z3.Implies(z3.And(a <= j, j < b), costs[j] >= 0))
    opt.add(z3.Or([z3.And(a == i, P[i], z3.BoolVal(True) if i == 0 else z3.Not(P[i - 1])) for i in range(k + 1)]))
    opt.add(z3.Or([z3.And(b == i, Q[i]) for i in range(k + 1)]))
    for m in range(k + 1):
        opt.add(z3.Implies(z3.And(a <= m, m < b), z3.Not(Q[m])))
    total = z3.Sum([z3.If(z3.And(a <= j, j < b), costs[j], 0) for j in range(k)]) if k else z3.IntVal(0)

    def solve(maximise: bool) -> tuple[str, z3.ModelRef | None]:
        opt.push()
        (opt.maximize if maximise else opt.minimize)(total)
        try:
            ans = trusted(opt.check())  # NOTE(stale-interrupt)
            return str(ans), (opt.model() if ans == z3.sat else None)
        finally:
            opt.pop()

    hi_ans, hi_model = solve(True)
    if hi_ans == "unknown":
        return Result(p.name, KIND, Verdict.UNKNOWN, engine, bound=k, reason=f"z3 optimize: {opt.reason_unknown()}",
                      detail={"min": None, "max": None, "within": p.within})
    if hi_model is None:  # no window fits in k steps
        detail: dict[str, object] = {"min": None, "max": None, "within": p.within, "starts": 0}
        if p.within is None:
            return Result(p.name, KIND, Verdict.UNKNOWN, engine, bound=k, detail=detail,
                          reason=f"no measurement fits in {k} steps; a bounded latency is not shown by an unrolling")
        return Result(p.name, KIND, Verdict.HOLDS_TO_BOUND, engine, bound=k, detail=detail,
                      reason=f"no measurement (P entered, then Q) fits in {k} steps")
    hi = hi_model.eval(total, model_completion=True).as_long()  # type: ignore[attr-defined]
    lo_ans, lo_model = solve(False)
    lo = lo_model.eval(total, model_completion=True).as_long() if lo_model is not None else None  # type: ignore[attr-defined]
    start = hi_model.eval(a, model_completion=True).as_long()  # type: ignore[attr-defined]
    end = hi_model.eval(b, model_completion=True).as_long()  # type: ignore[attr-defined]
    cex = to_counterexample(enc.model, read_path(hi_model, enc, path[: end + 1]))
    detail = {"min": lo, "max": hi, "within": p.within, "start": start,
              "bounded": f"over the behaviours of at most {k} steps: max is a lower bound, min an upper bound"}
    if p.within is not None and hi > p.within:
        return Result(p.name, KIND, Verdict.VIOLATED, engine, bound=k, counterexample=cex, detail=detail)
    if p.within is None:
        return Result(p.name, KIND, Verdict.UNKNOWN, engine, bound=k, counterexample=cex, detail=detail,
                      reason="a bounded latency is not shown by an unrolling (the explicit engine computes it exactly)")
    return Result(p.name, KIND, Verdict.HOLDS_TO_BOUND, engine, bound=k, counterexample=cex, detail=detail,
                  reason=f"no measurement that fits in {k} steps exceeds {p.within}")

"""Liveness by lasso-shaped BMC under per-instance weak fairness.

A liveness property fails iff some fair behaviour eventually stays in ¬q forever
(checker/engines/explicit/liveness.py states the same semantics on the explicit graph). At depth k the
unrolling s_0 .. s_k of `bmc.Unroller` is closed into a lasso in a frame, in one of two ways:

* loop: one more transition from s_k to a state c with c == s_l for a chosen l <= k (loop
  selectors L_l); every fair instance is, somewhere on the loop s_l .. s_k, disabled in a
  state or taken on a step (the closing step included);
* stutter: no fair instance is enabled in s_k (inside the constraints), and the behaviour
  repeats s_k forever, as TLA+ allows.

and ¬q holds where the property needs it: on every state (`eventually q`), on the loop
(`always eventually q`), or from some p-state s_i on, the loop included (`p leads_to q`).
Depths are tried in order, on an unrolling of its own per property, so the lasso found is one
with the fewest states. No lasso up to the
bound gives `holds_to_bound`: BMC never proves a liveness property."""

from __future__ import annotations

import time

import z3

from gpcheck.spec import ir
from gpcheck.checker.core import budget
from gpcheck.checker.core import progress as meter
from gpcheck.checker.engines.smt.bmc import ENGINE, Unroller, unknown_result
from gpcheck.checker.engines.smt.decode import read_path, to_counterexample
from gpcheck.checker.engines.smt.encode import Encoder, State, bv_encoder
from gpcheck.checker.engines.smt.props import SafetyProp
from gpcheck.checker.engines.smt.session import Deadline, Sat, Unknown
from gpcheck.checker.engines.smt.terms import mk_and, mk_not, mk_or
from gpcheck.checker.core.verdict import Counterexample, Result, Verdict

CLOSE = "lasso."  # symbols of the closing transition


def _fair_instances(enc: Encoder) -> list[tuple[int, tuple[int, ...]]]:
    return [(ai, vals) for ai, vals in enc.instances() if enc.model.actions[ai].fair]


def _enabled(enc: Encoder, ai: int, vals: tuple[int, ...], s: State) -> z3.BoolRef:
    def build(ts: State, _: State) -> z3.BoolRef:
        return enc.step(ai, ts, enc.instance_args(ai, vals)).enabled

    return mk_and(enc.in_constraints(s), enc._instantiate(("enabled", ai, vals), build, s))


def _taken(enc: Encoder, ai: int, vals: tuple[int, ...], step: int, tag: str) -> z3.BoolRef:
    args = enc.params(ai, step, tag)
    return mk_and(enc.act(step, tag) == enc.num.lit(ai), *(a == v for a, v in zip(args, enc.instance_args(ai, vals))))


def lasso_constraint(enc: Encoder, prop: ir.Liveness, path: list[State], k: int) -> tuple[z3.BoolRef, list[z3.BoolRef], z3.BoolRef]:
    """(constraint, loop selectors L_0..L_k, stutter selector) closing `path[:k+1]` into a
    fair lasso that violates `prop`."""
    s = path[: k + 1]
    loops = [z3.Bool(f"{CLOSE}loop{l}@{k}") for l in range(k + 1)]
    stutter = z3.Bool(f"{CLOSE}stutter@{k}")
    c = enc.state(k + 1, CLOSE)
    fair = _fair_instances(enc)
    in_loop = [mk_or(*loops[: j + 1]) for j in range(k + 1)]
    looping = mk_or(*loops)
    parts: list[z3.BoolRef] = [mk_or(looping, stutter)]
    # loop mode: the closing transition and fairness on the loop
    parts.append(z3.Implies(looping, mk_and(enc.in_range(c), enc.trans(s[k], c, k, CLOSE))))
    for l in range(k + 1):
        parts.append(z3.Implies(loops[l], enc.equal_states(c, s[l])))
    for ai, vals in fair:
        taken = [_taken(enc, ai, vals, j, "" if j < k else CLOSE) for j in range(k + 1)]
        served = mk_or(*(mk_and(in_loop[j], mk_or(mk_not(_enabled(enc, ai, vals, s[j])), taken[j]))
                         for j in range(k + 1)))
        parts.append(z3.Implies(looping, served))
    # stutter mode: s_k is expanded and no fair instance is enabled there
    parts.append(z3.Implies(stutter, mk_and(enc.in_constraints(s[k]),
                                            *(mk_not(_enabled(enc, ai, vals, s[k])) for ai, vals in fair))))
    notq = [mk_not(enc.holds(prop.q, s[j])) for j in range(k + 1)]
    on_loop = mk_and(*(z3.Implies(mk_or(in_loop[j], mk_and(stutter, z3.BoolVal(j == k))), notq[j])
                       for j in range(k + 1)))
    if prop.kind is ir.LivenessKind.EVENTUALLY:
        parts.append(mk_and(*notq))
    elif prop.kind is ir.LivenessKind.ALWAYS_EVENTUALLY:
        parts.append(on_loop)
    else:
        assert prop.p is not None
        starts = [mk_and(enc.holds(prop.p, s[i]), *notq[i:]) for i in range(k + 1)]
        parts.append(mk_and(mk_or(*starts), on_loop))
    return mk_and(*parts), loops, stutter


def run_lasso(model: ir.Model, props: list[ir.Liveness], *, depth: int, deadline: Deadline) -> list[Result]:
    """A shortest fair lasso violating each property, up to `depth` transitions."""
    start = time.monotonic()
    enc = bv_encoder(model)
    out: dict[str, Result] = {}
    for prop in props:
        try:
            un = Unroller(enc, deadline, reusable=False)
            out[prop.name] = _one(enc, un, prop, depth)
        except budget.Stop as stop:  # a lasso's encoding cut short (NOTE(time-limit))
            out[prop.name] = unknown_result(SafetyProp(prop.name, "liveness"), ENGINE, stop.text, None)
        out[prop.name].detail.setdefault("seconds", round(time.monotonic() - start, 4))
    return [out[p.name] for p in props]


def _one(enc: Encoder, un: Unroller, prop: ir.Liveness, depth: int) -> Result:
    stub = SafetyProp(prop.name, "liveness")
    for k in range(depth + 1):
        meter.note(engine="bmc", phase="fair lassos", bound=k, prop=prop.name)  # checker/core/progress.py
        un.extend_to(k)
        constraint, loops, stutter = lasso_constraint(enc, prop, un.path, k)
        ans = un.check_at(k, constraint)
        if isinstance(ans, Sat):
            return Result(prop.name, "liveness", Verdict.VIOLATED, ENGINE, bound=k,
                          counterexample=_decode(enc, un, ans.model, k, loops))
        if isinstance(ans, Unknown):
            return unknown_result(stub, ENGINE, f"{ans.reason} at depth {k}", k - 1 if k else None)
    return Result(prop.name, "liveness", Verdict.HOLDS_TO_BOUND, ENGINE, bound=depth,
                  reason=f"no fair lasso violating it within {depth} steps (BMC does not prove liveness)")


def _decode(enc: Encoder, un: Unroller, m: z3.ModelRef, k: int, loops: list[z3.BoolRef]) -> Counterexample:
    raw = read_path(m, enc, un.path[: k + 1])
    loop = next((l for l, sel in enumerate(loops) if z3.is_true(m.eval(sel, model_completion=True))), k)
    cex = to_counterexample(enc.model, raw)
    return Counterexample(cex.steps, loop=loop)


"""Unbounded proofs with Z3's Spacer (PDR/IC3 over constrained Horn clauses).

One uninterpreted relation `Reach` over the slots (Int encoding: Spacer's lemmas are linear
integer arithmetic) and the clauses

    Reach(s)                      <- Init(s)
    Reach(t)                      <- Reach(s) ∧ s inside constraints ∧ action a from s to t   (per action)
    Bad                           <- Reach(s) ∧ (the property fails at s, or on s -> t)

The query `Bad` is unsat exactly when the property holds in every reachable state; Spacer then
gives an inductive invariant over-approximating `Reach`, which is rendered in gpspec syntax.
When `Bad` is derivable the property is violated, and the shortest counterexample is found by
BMC (which Spacer's answer bounds), decoded and replayed like every other."""

from __future__ import annotations

import z3

from spec import ir
from checker.smt.bmc import Unroller, proved_result, unknown_result
from checker.smt.encode import Encoder, PathLimit, State, bv_encoder, step_paths
from checker.smt.props import SafetyProp, bad
from checker.smt.render import render_invariant
from checker.smt.session import DEFAULT_SEED, Deadline, Sat, Unknown
from checker.smt.terms import TRUE, mk_and, mk_not
from checker.verdict import Result

ENGINE = "pdr"
TAG = "pdr."
CEX_MAX_DEPTH = 10_000
PATH_LIMIT = 256  # execution paths per action before falling back to one ite-encoded clause


def run_pdr(
    model: ir.Model,
    props: list[SafetyProp],
    *,
    deadline: Deadline,
    seed: int = DEFAULT_SEED,
    options: dict[str, object] | None = None,
) -> list[Result]:
    """Prove or refute each property with Spacer, within the shared deadline (`options` are
    extra Fixedpoint parameters, for tuning experiments)."""
    enc = Encoder(model)
    return [_pdr_one(enc, p, deadline, seed, options or {}) for p in props]


def _fixedpoint(deadline: Deadline, seed: int, options: dict[str, object]) -> z3.Fixedpoint:
    fp = z3.Fixedpoint()
    fp.set(engine="spacer")
    fp.set("spacer.random_seed", seed)
    for k, v in options.items():
        fp.set(k, v)
    ms = deadline.ms()
    if ms is not None:
        fp.set("timeout", ms)
    return fp


def _pdr_one(enc: Encoder, p: SafetyProp, deadline: Deadline, seed: int, options: dict[str, object]) -> Result:
    if deadline.expired:
        return unknown_result(p, ENGINE, "timeout", None)
    model = enc.model
    options = dict(options)
    use_paths = bool(options.pop("_paths", True))
    direct_head = bool(options.pop("_direct", False))
    no_rng = bool(options.pop("_norng", False))
    fp = _fixedpoint(deadline, seed, options)
    s, t = enc.state(0, TAG), enc.state(1, TAG)
    sorts = [x.sort() for x in s]
    reach = z3.Function("Reach", *sorts, z3.BoolSort())
    fail = z3.Function("Bad", z3.BoolSort())
    fp.register_relation(reach, fail)
    variables: list[z3.ExprRef] = list(s) + list(t)
    for ai in range(len(model.actions)):
        variables += list(enc.params(ai, 0, TAG))
    fp.declare_var(*variables)

    fp.rule(reach(*s), [enc.in_range(s), enc.init(s)])
    cons = enc.in_constraints(s)
    rng = TRUE if no_rng else enc.in_range(s)
    steps: list[tuple[z3.BoolRef, z3.BoolRef, State]] = []  # (guard, error, next) per clause
    for ai in range(len(model.actions)):
        args = enc.params(ai, 0, TAG)
        dom = mk_and(cons, enc.param_domain(ai, args))
        try:
            if not use_paths:
                raise PathLimit("off")
            paths = [(pe.enabled, pe.error, pe.next) for pe in step_paths(enc, ai, s, args, PATH_LIMIT)]
        except PathLimit:
            st = enc.step(ai, s, args)
            paths = [(st.enabled, st.error, st.next)]
        for enabled, error, nxt in paths:
            steps.append((mk_and(dom, enabled), mk_and(dom, error), nxt))
    for guard, _, nxt in steps:
        if not z3.is_false(guard):
            if direct_head:
                fp.rule(reach(*nxt), [reach(*s), rng, guard])
            else:
                fp.rule(reach(*t), [reach(*s), rng, guard, enc.equal_states(t, nxt)])

    if p.kind == "transition":
        assert p.expr is not None
        prop_ok = enc.holds(p.expr, s, t)
        for guard, _, nxt in steps:
            if not z3.is_false(guard):
                fp.rule(fail(), [reach(*s), guard, enc.equal_states(t, nxt), mk_not(prop_ok)])
    elif p.kind == "range":
        for _, error, _ in steps:
            if not z3.is_false(error):
                fp.rule(fail(), [reach(*s), error])
        err = enc.property_errors(s)
        if not z3.is_false(err):
            fp.rule(fail(), [reach(*s), err])
    else:
        fp.rule(fail(), [reach(*s), bad(enc, p, [s], 0)])

    try:
        r = fp.query(fail())
    except z3.Z3Exception as e:  # Spacer reports an expired timeout as a 'canceled' exception
        reason = "timeout" if deadline.expired else f"spacer: {e}"
        return unknown_result(p, ENGINE, reason, None)
    if r == z3.unsat:
        inv = fp.get_cover_delta(-1, reach)
        text = render_invariant(enc, inv, s)
        return proved_result(model, p, ENGINE, "Spacer found an inductive invariant", invariant=text)
    if r == z3.sat:
        return _counterexample(model, p, deadline)
    reason = fp.reason_unknown() or "unknown"
    if deadline.expired:
        reason = "timeout"
    return unknown_result(p, ENGINE, f"spacer: {reason}", None)


def _counterexample(model: ir.Model, p: SafetyProp, deadline: Deadline) -> Result:
    """Spacer proved `Bad` derivable; BMC finds the shortest such path to show it."""
    un = Unroller(bv_encoder(model), deadline)
    for k in range(CEX_MAX_DEPTH + 1):
        ans = un.check_bad(p, k)
        if isinstance(ans, Sat):
            r = un.violation(p, k, ans, ENGINE)
            r.detail["found_by"] = "spacer; shortest counterexample by bmc"
            return r
        if isinstance(ans, Unknown):
            return unknown_result(p, ENGINE, f"spacer found a violation; bmc could not show it ({ans.reason} at depth {k})", None)
    return unknown_result(p, ENGINE, f"spacer found a violation; none within {CEX_MAX_DEPTH} steps", None)


"""k-induction with simple-path constraints.

For k = 1, 2, ...: the base case asks BMC whether the property fails within k-1 steps of an
initial state (a shortest counterexample when it does); the inductive step asks whether some
loop-free path s_0 .. s_k from *any* in-range state, with the property holding at s_0 ..
s_{k-1}, violates it at s_k. Unsat means the property is k-inductive, hence proved. Properties
already proved are assumed at every position of later inductive steps (they hold in every
reachable state, so this is sound and often shortens k)."""

from __future__ import annotations

import time
from typing import Sequence

from gpcheck.spec import ir
from gpcheck.checker import budget
from gpcheck.checker import progress as meter
from gpcheck.checker.smt.bmc import Unroller, proved_result, unknown_result
from gpcheck.checker.smt.encode import BV_LOGIC, Encoder, State, bv_encoder
from gpcheck.checker.smt.props import SafetyProp, bad, ok, safety_properties
from gpcheck.checker.smt.session import Deadline, Sat, Session, Unknown, Unsat
from gpcheck.checker.smt.terms import mk_not
from gpcheck.checker.verdict import Result, Verdict

ENGINE = "kind"
STEP_TAG = "ind."


class _StepPath:
    """An unconstrained loop-free path for the inductive step, with properties assumed.

    With `open_end` the last state may repeat an earlier one: a shortest violation of a
    transition property is loop-free only up to the violating step's source (its target may
    be any earlier state, itself included), so the last state joins the distinctness
    constraints only when the path grows past it."""

    def __init__(self, enc: Encoder, deadline: Deadline, lemmas: list[SafetyProp], open_end: bool = False) -> None:
        self.enc = enc
        self.open_end = open_end
        self.sess = Session(deadline, logic=BV_LOGIC if enc.num.width else None)
        self.lemmas = lemmas
        s0 = enc.state(0, STEP_TAG)
        self.path: list[State] = [s0]
        self.sess.add(enc.in_range(s0))
        self._assume_lemmas(0)

    def _assume_lemmas(self, j: int) -> None:
        for lem in self.lemmas:
            if j >= lem.first:
                self.sess.add(ok(self.enc, lem, self.path, j))

    def extend(self) -> None:
        budget.poll()  # NOTE(time-limit)
        j = len(self.path) - 1
        nxt = self.enc.state(j + 1, STEP_TAG)
        self.sess.add(self.enc.in_range(nxt), self.enc.trans(self.path[j], nxt, j, STEP_TAG))
        if self.open_end:  # the old end is now inside the path
            for i in range(j):
                self.sess.add(mk_not(self.enc.equal_states(self.path[i], self.path[j])))
        else:
            for i in range(j + 1):
                self.sess.add(mk_not(self.enc.equal_states(self.path[i], nxt)))
        self.path.append(nxt)
        self._assume_lemmas(j + 1)


def run_kind(
    model: ir.Model,
    props: list[SafetyProp],
    *,
    max_k: int,
    deadline: Deadline,
    enc: Encoder | None = None,
    lemmas: Sequence[str] = (),
) -> list[Result]:
    """Prove or refute each property by k-induction for k up to `max_k`; `lemmas` names
    invariants already proved, assumed in the inductive steps."""
    enc = enc or bv_encoder(model)
    base = Unroller(enc, deadline)
    known = safety_properties(model, list(lemmas))
    lemmas_used: list[SafetyProp] = [p for p in known if p.kind == "invariant"]
    out: list[Result] = []
    # invariants first: once proved they strengthen the inductive steps of the rest
    order = sorted(range(len(props)), key=lambda i: props[i].kind != "invariant")
    results: dict[int, Result] = {}
    for i in order:
        started = time.monotonic()
        try:
            r = _kind_one(enc, props[i], base, lemmas_used, max_k, deadline)
        except budget.Stop as stop:  # the inductive step's encoding cut short (NOTE(time-limit))
            r = unknown_result(props[i], ENGINE, stop.text, None)
        r.detail.setdefault("seconds", round(time.monotonic() - started, 4))
        results[i] = r
        if r.verdict is Verdict.PROVED or (r.verdict is Verdict.HOLDS_TO_BOUND and r.detail.get("k")):
            lemmas_used.append(props[i])
    out = [results[i] for i in range(len(props))]
    return out


def _kind_one(
    enc: Encoder, p: SafetyProp, base: Unroller, lemmas: list[SafetyProp], max_k: int, deadline: Deadline
) -> Result:
    # a violation on a step (a transition property, or range's error in evaluating one) may be
    # a step back to an earlier state, a self-loop included: the path's end stays open for it
    on_step = p.kind == "transition" or (p.kind == "range" and bool(enc.model.transitions))
    step = _StepPath(enc, deadline, list(lemmas), open_end=on_step)
    for k in range(1, max_k + 1):
        meter.note(engine=ENGINE, bound=k, prop=p.name)  # checker/progress.py
        # base case: no violation at depth k-1 from an initial state
        ans = base.check_bad(p, k - 1)
        if isinstance(ans, Sat):
            return base.violation(p, k - 1, ans, ENGINE)
        if isinstance(ans, Unknown):
            return unknown_result(p, ENGINE, f"{ans.reason} in the base case at depth {k - 1}", k - 2 if k > 1 else None)
        # inductive step: property at positions 0..k-1 of a loop-free path implies it at k
        if k - 1 >= p.first:
            step.sess.add(ok(enc, p, step.path, k - 1))
        step.extend()
        with step.sess.frame():
            step.sess.add(bad(enc, p, step.path, k))
            ans = step.sess.check()
        if isinstance(ans, Unsat):
            return proved_result(enc.model, p, ENGINE, f"{k}-inductive", k=k)
        if isinstance(ans, Unknown):
            return unknown_result(p, ENGINE, f"{ans.reason} in the inductive step at k={k}", k - 1)
    return Result(
        p.name, p.kind, Verdict.HOLDS_TO_BOUND, ENGINE, bound=max_k - 1,
        reason=f"not k-inductive for k <= {max_k}",
    )

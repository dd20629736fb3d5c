"""k-induction with simple-path constraints.

For k = 1, 2, ...: the base case asks BMC whether the property fails within k-1 steps of an
initial state (a shortest counterexample when it does); the inductive step asks whether some
loop-free path s_0 .. s_k from *any* in-range state, with the property holding at s_0 ..
s_{k-1}, violates it at s_k. Unsat means the property is k-inductive, hence proved. Properties
already proved are assumed at every position of later inductive steps (they hold in every
reachable state, so this is sound and often shortens k). So are auxiliary invariants: the
lemmas pdr mines from the instance's explicit states and Z3 proves inductive (NOTE(kind-aux)).
Each property gets its own budget of Z3 steps, small in a first pass and large in a second for
what ran out of the first, so one that is not k-inductive does not starve the others. NOTE(kind-clock): what k-induction proves and prints does not depend on the wall
clock. Before, each property got an equal share of the *time* left, the auxiliary invariants'
Houdini half of it, and none were mined with less than 10 s left: whether a step ran out of
time decided which helper invariants were kept and which properties were proved (and so
assumed by the later ones), so a loaded machine printed other results. Now every internal
choice is a deterministic budget of Z3 steps (NOTE(step-limits) in checker/engines/smt/session.py), and
the wall clock (`--timeout`) only cuts a result to `unknown` (timeout): a proof finished after
the clock ran out is `unknown` too, as in NOTE(wall-clock-cut)."""

from __future__ import annotations

import time
from typing import Sequence

from gpcheck.spec import ir
from gpcheck.checker.core import budget
from gpcheck.checker.core import progress as meter
from gpcheck.checker.engines.smt.bmc import Unroller, proved_result, unknown_result
from gpcheck.checker.engines.smt.encode import BV_LOGIC, Encoder, State, bv_encoder
from gpcheck.checker.engines.smt.mining import Atom
from gpcheck.checker.engines.smt.props import SafetyProp, bad, ok, safety_properties
from gpcheck.checker.engines.smt.session import Deadline, Sat, Session, Unknown, Unsat
from gpcheck.checker.engines.smt.terms import mk_not
from gpcheck.checker.core.verdict import Result, Verdict

ENGINE = "kind"
FIRST_STEPS = 40_000_000  # one property's base cases and inductive steps, first pass (NOTE(kind-clock))
PROPERTY_STEPS = 400_000_000  # the same, second pass, for what the first left out of steps (about 50 s of Z3)
STEP_TAG = "ind."


class _StepPath:
    """An unconstrained loop-free path for the inductive step, with properties assumed.

    With `open_end` the last state may repeat an earlier one: a shortest violation of a
    transition property is loop-free only up to the violating step's source (its target may
    be any earlier state, itself included), so the last state joins the distinctness
    constraints only when the path grows past it."""

    def __init__(self, enc: Encoder, deadline: Deadline, lemmas: list[SafetyProp], open_end: bool = False,
                 aux: Sequence[Atom] = ()) -> None:
        self.enc = enc
        self.open_end = open_end
        self.sess = Session(deadline, logic=BV_LOGIC if enc.num.width else None)
        self.lemmas = lemmas
        self.aux = list(aux)
        s0 = enc.state(0, STEP_TAG)
        self.path: list[State] = [s0]
        self.sess.add(enc.in_range(s0))
        self._assume_lemmas(0)

    def _assume_lemmas(self, j: int) -> None:
        for lem in self.lemmas:
            if j >= lem.first:
                self.sess.add(ok(self.enc, lem, self.path, j))
        for atom in self.aux:  # NOTE(kind-aux): invariants Z3 proved inductive, true in every reachable state
            self.sess.add(atom.z3(self.path[j]))

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
    auxiliary: bool = True,
) -> list[Result]:
    """Prove or refute each property by k-induction for k up to `max_k`; `lemmas` names
    invariants already proved, assumed in the inductive steps. With `auxiliary`, invariants mined
    from the instance's explicit states and proved inductive by Z3 (pdr's Houdini,
    checker/engines/smt/lemmas.py) are assumed too (NOTE(kind-aux))."""
    enc = enc or bv_encoder(model)
    aux: list[Atom] = []
    aux_stats: dict[str, object] = {}
    if auxiliary and props:
        started = time.monotonic()
        aux, aux_stats = _auxiliary_invariants(model, deadline)
        aux_stats["seconds"] = round(time.monotonic() - started, 3)
        meter.note(engine=ENGINE, phase="")
        if deadline.out_of_time:  # NOTE(kind-clock): the invariants Houdini kept may depend on the clock
            return [unknown_result(p, ENGINE, "timeout: the time limit ran out while the auxiliary invariants "
                                   "were mined", None) for p in props]
    base = Unroller(enc, deadline)
    known = safety_properties(model, list(lemmas))
    lemmas_used: list[SafetyProp] = [p for p in known if p.kind == "invariant"]
    out: list[Result] = []
    # invariants first: once proved they strengthen the inductive steps of the rest
    order = sorted(range(len(props)), key=lambda i: props[i].kind != "invariant")
    results: dict[int, Result] = {}
    decided: list[int] = []  # in the order decided: a proof assumes the properties proved before it
    # two passes, each property with its own step budget (NOTE(kind-clock)): the first a small
    # one (what is k-inductive for a small k, most properties relative to the auxiliary
    # invariants), the second a large one for what climbed k past the first; so one that is
    # not k-inductive for any small k does not leave the later ones no time, whatever the clock
    passes = [(i, FIRST_STEPS) for i in order]
    while passes:
        i, steps = passes.pop(0)
        started = time.monotonic()
        share = deadline.limited(steps)
        base.sess.deadline = share
        try:
            r = _kind_one(enc, props[i], base, lemmas_used, max_k, share, aux)
        except budget.Stop as stop:  # the inductive step's encoding cut short (NOTE(time-limit))
            r = unknown_result(props[i], ENGINE, stop.text, None)
        base.sess.deadline = deadline
        if steps == FIRST_STEPS and r.verdict is Verdict.UNKNOWN and share.out_of_steps and not deadline.out_of_time:
            passes.append((i, PROPERTY_STEPS))  # after every property's first pass
            continue
        if deadline.out_of_time and r.verdict is not Verdict.VIOLATED and not (r.reason or "").startswith("timeout"):
            # NOTE(kind-clock): a check the clock cut may have decided this result (and what the
            # later properties assume); a violation found is one whatever the clock
            r = unknown_result(props[i], ENGINE, f"timeout: the time limit ran out before its result was "
                               f"complete ({r.reason or r.verdict.value})", r.bound)
        r.detail.setdefault("seconds", round(time.monotonic() - started, 4))
        if aux_stats:
            r.detail["auxiliary"] = dict(aux_stats)
            r.detail["shared_seconds"] = aux_stats["seconds"]  # NOTE(pdr-seconds)
        results[i] = r
        decided.append(i)
        if r.verdict is Verdict.PROVED or (r.verdict is Verdict.HOLDS_TO_BOUND and r.detail.get("k")):
            lemmas_used.append(props[i])
    if model.assumptions:  # NOTE(proof-core)
        _attach_cores(model, [(props[i], results[i]) for i in decided], known, aux, deadline)
    out = [results[i] for i in range(len(props))]
    return out


def _attach_cores(model: ir.Model, decided: list[tuple[SafetyProp, Result]], known: list[SafetyProp],
                  aux: Sequence[Atom], deadline: Deadline) -> None:
    """NOTE(proof-core) in checker/engines/smt/proofcore.py: each proved result's assumptions, as
    `detail["assumption_core"]`: its k-induction at the k it was proved at, relative to the
    auxiliary invariants and to the properties proved before it (each usable where its own core
    is in force; the caller's `known` lemmas, whose proofs are not at hand, only with every
    assumption). After every property was decided: the cores never change a verdict."""
    from gpcheck.checker.engines.smt.proofcore import ProofCore

    every = frozenset(a.name for a in model.assumptions)
    pc: ProofCore | None = None
    lemmas: list[tuple[SafetyProp, frozenset[str]]] = [(q, every) for q in known if q.kind == "invariant"]
    for p, r in decided:
        if r.verdict is Verdict.HOLDS_TO_BOUND and r.detail.get("k"):  # assumed by the later ones, as run_kind does
            lemmas.append((p, every))
        if r.verdict is not Verdict.PROVED:
            continue
        core = None
        if not deadline.expired:
            pc = pc or ProofCore(model)
            try:
                core = pc.core(p, [a.z3(pc.state(0)) for a in aux], deadline, k=int(r.detail.get("k", 1)),
                               lemmas=list(lemmas))
            except budget.Stop:  # NOTE(time-limit): the result stands, without its core
                core = None
        if core is not None:
            r.detail["assumption_core"] = core
        lemmas.append((p, frozenset(core) if core is not None else every))


def _auxiliary_invariants(model: ir.Model, deadline: Deadline) -> tuple[list[Atom], dict[str, object]]:
    """NOTE(kind-aux): k-induction with auxiliary invariants (as Kind 2 generates them): pdr's
    mined lemmas, the largest subset of candidates that Z3 showed initial and inductive (Houdini
    over pdr's path clauses). Being invariants, they may be assumed in every state of an
    inductive step, which then proves at k = 1 what plain k-induction needs a large k for, or
    never proves (a property true but not k-inductive for any k). Houdini out of time gives none."""
    from gpcheck.gpmodel import compile_model
    from gpcheck.checker.engines.smt import pdr
    from gpcheck.checker.engines.smt.lemmas import LemmaProver
    from gpcheck.checker.engines.smt.mining import sample_states

    meter.begin(ENGINE, "auxiliary invariants (Houdini)")
    own = deadline.limited(pdr.HOUDINI_STEPS)  # NOTE(kind-clock): steps, not a share of the time left
    system = pdr._System(Encoder(model))
    cm = compile_model(model)
    states, complete = sample_states(cm, pdr.MAX_SAMPLE, own)
    prover = LemmaProver(system, cm, states, own)
    return list(prover.lemmas), dict(prover.stats, sampled_states=len(states))


def _kind_one(
    enc: Encoder, p: SafetyProp, base: Unroller, lemmas: list[SafetyProp], max_k: int, deadline: Deadline,
    aux: Sequence[Atom] = (),
) -> Result:
    # a violation on a step (a transition property, or range's error in evaluating one) may be
    # a step back to an earlier state, a self-loop included: the path's end stays open for it
    on_step = p.kind == "transition" or (p.kind == "range" and bool(enc.model.transitions))
    step = _StepPath(enc, deadline, list(lemmas), open_end=on_step, aux=aux)
    for k in range(1, max_k + 1):
        meter.note(engine=ENGINE, bound=k, prop=p.name)  # checker/core/progress.py
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
            why = f"{k}-inductive" + (f" relative to {len(aux)} auxiliary invariants" if aux else "")
            return proved_result(enc.model, p, ENGINE, why, k=k)
        if isinstance(ans, Unknown):
            return unknown_result(p, ENGINE, f"{ans.reason} in the inductive step at k={k}", k - 1)
    return Result(
        p.name, p.kind, Verdict.HOLDS_TO_BOUND, ENGINE, bound=max_k - 1,
        reason=f"not k-inductive for k <= {max_k}",
    )

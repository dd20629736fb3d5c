"""Unbounded proofs with Z3's Spacer (PDR/IC3 over constrained Horn clauses).

One uninterpreted relation `Reach` over state slots (Int encoding: Spacer's lemmas are linear
integer arithmetic) and the clauses

    Reach(s)              <- Init(s)
    Reach(next_p(s))      <- Reach(s) ∧ s inside constraints ∧ guard_p(s)     (per path p)
    Bad                   <- Reach(s) ∧ the property fails at s (or on s -> next_p(s))

where the paths are the actions' execution paths with every `if` and dynamic index decided
(`encode.step_paths`): Spacer generalises far better over such small static updates than over
ite-chains. `Bad` unsat means the property holds in every reachable state, and Spacer's
interpretation of `Reach` is an inductive invariant, rendered in gpspec syntax.

Invariants are proved conjunct by conjunct (`props.conjuncts`: `and`, and `all` folds split
per binder value), each over a localisation abstraction: `Reach` keeps only the slots the
conjunct reads, the other slots are free in every step (an over-approximation, so a proof is
sound); when Spacer finds an abstract counterexample the kept set grows by one step of the cone
of influence, until it is closed. Each conjunct's proof is small (a few lemmas over a few
slots) where the monolithic proof of `all k: waves_run[k] <= B` needs all of them at once:
ring.gpspec at N=16 goes from about 60 s to under a second. If a conjunct is not proved the
whole property is given to the monolithic query, whose answer decides; a violation's shortest
counterexample is then found by BMC and decoded like every other.

Before Spacer, each property tries, in order (`run_pdr`): induction relative to the lemmas mined
from the explicit states (checker/engines/smt/lemmas.py; every property's before anything else:
NOTE(lemmas-first)); the violations a breadth-first search of the
instance finds, with their shortest counterexamples (checker/engines/smt/samplecex.py: violations only,
it never proves); the reachable-set certificate when the exploration completed
(checker/engines/smt/reachset.py).

NOTE(pdr-seconds): every result's `detail.seconds` is that property's own work and
`detail.shared_seconds` the model's shared work (exploration, mining, Houdini, the counterexample
search, the certificate; broken down in `detail.lemmas`), the same for every property of the run.
A property's cost alone is the sum: the first property that needs a shared part pays for all."""

from __future__ import annotations

import time
from typing import Sequence
from dataclasses import dataclass

import z3

from gpcheck.spec import ir
from gpcheck.checker.core import budget
from gpcheck.checker.core import progress as meter
from gpcheck.checker.engines.smt.bmc import Unroller, proved_result, unknown_result
from gpcheck.checker.engines.smt.lemmas import LemmaProver
from gpcheck.checker.engines.smt.mining import sample_states
from gpcheck.checker.engines.smt.reachset import ReachCertificate
from gpcheck.checker.engines.smt.samplecex import sample_violations
from gpcheck.checker.engines.smt.encode import Encoder, PathLimit, State, bv_encoder, step_paths
from gpcheck.checker.engines.smt.props import SafetyProp, bad, conjuncts
from gpcheck.checker.engines.smt.render import render_invariant
from gpcheck.checker.engines.smt.session import DEFAULT_SEED, Deadline, Sat, Unknown
from gpcheck.checker.engines.smt.terms import in_type, mk_and, mk_not, mk_or, true
from gpcheck.checker.core.verdict import Result, Verdict

ENGINE = "pdr"
TAG = "pdr."
CEX_MAX_DEPTH = 10_000
SPACER_OPTIONS: dict[str, object] = {}  # extra Fixedpoint parameters (tuning experiments)
PATH_LIMIT = 256  # execution paths per action before falling back to one ite-encoded clause
MAX_SAMPLE = 100_000  # explicit states explored to propose invariants (a state count: no clock)
# Z3 step budgets (rlimit, NOTE(step-limits)): deterministic, so the same command proves the same
# things with the same invariants under any load; sized from the old time caps at the rates
# measured in checker/engines/smt/session.py (8 M steps per Z3 second, 2 M per CPU second of Houdini)
PART_STEPS = 80_000_000  # one part's abstract Spacer query before the monolithic query (was 10 s)
CERTIFICATE_STEPS = 240_000_000  # the reachable-set certificate's two checks (was 30 s)
HOUDINI_STEPS = 16_000_000  # mining lemmas (was 6 s; out of steps leaves no lemmas: the set would not be
# inductive); reef_rewind's whole Houdini takes 11.7 M (kind's auxiliary invariants use this budget)
HOUDINI_STEPS_BACKED = 4_000_000  # the same when the exploration completed, the certificate backing it up
# (was 2.5 s; cwsr 1.5 M, kfd_sched 2.1 M, nvidia_tsg 3.6 M finish; reef_rewind's would need 11.7 M, so
# it is not started: NOTE(hopeless-houdini) in checker/engines/smt/lemmas.py)
RELATIVE_STEPS = 80_000_000  # one property's relative-induction checks (was 10 s)


@dataclass(frozen=True)
class _Clause:
    """One execution path of one action: when it steps, when it fails, where it goes."""

    guard: z3.BoolRef  # inside constraints, parameters in domain, path taken, requires hold
    error: z3.BoolRef  # inside constraints, parameters in domain, path taken, modelling error
    next: State
    writes: frozenset[int]  # slots whose next term is not the slot itself
    reads: frozenset[int]  # slots the guard or a written slot's next term reads
    parts: tuple[tuple[z3.BoolRef, frozenset[int]], ...]  # the guard's conjuncts, each with its slots


class _Answer:
    PROVED, REFUTED, UNKNOWN = "proved", "refuted", "unknown"


class _System:
    """The clauses of one model, built once and shared by every query."""

    def __init__(self, enc: Encoder) -> None:
        self.enc = enc
        model = enc.model
        self.s = enc.state(0, TAG)
        self.index = {t.get_id(): i for i, t in enumerate(self.s)}
        self._reads_cache: dict[int, tuple[z3.ExprRef, frozenset[int]]] = {}
        self.slot_rng = [self._slot_range(i) for i in range(len(self.s))]
        self.init = enc.init_slots(self.s)
        self.params: list[z3.ExprRef] = []
        cons = enc.in_constraints(self.s)
        self.cons_reads = self.reads(cons)
        self.clauses: list[_Clause] = []
        self.last_invariant: z3.BoolRef = true()  # the last query's proved invariant (NOTE(proof-core))
        self.pending_cores: list[tuple[Result, SafetyProp, list[z3.BoolRef]]] = []  # with_core
        self.clause_actions: list[int] = []  # the action each clause is a path of
        for ai in range(len(model.actions)):
            budget.poll()  # NOTE(time-limit)
            args = enc.params(ai, 0, TAG)
            self.params += list(args)
            dom = mk_and(cons, enc.param_domain(ai, args))
            try:
                paths = [(pe.enabled, pe.error, pe.next) for pe in step_paths(enc, ai, self.s, args, PATH_LIMIT)]
            except PathLimit:
                st = enc.step(ai, self.s, args)
                paths = [(st.enabled, st.error, st.next)]
            for enabled, error, nxt in paths:
                guard = mk_and(dom, enabled)
                if z3.is_false(guard):  # a path that always fails: only its error matters
                    nxt = self.s
                writes = frozenset(i for i, (a, b) in enumerate(zip(nxt, self.s)) if not a.eq(b))
                reads = self.reads(guard).union(*(self.reads(nxt[i]) for i in writes))
                parts = tuple((g, self.reads(g)) for g in _conjuncts(guard))
                self.clauses.append(_Clause(guard, mk_and(dom, error), nxt, writes, reads, parts))
                self.clause_actions.append(ai)

    def _slot_range(self, i: int) -> z3.BoolRef:
        return in_type(self.enc.slots[i].type, self.s[i])

    def reads(self, e: z3.ExprRef) -> frozenset[int]:
        """The slots a term mentions (an iterative walk: an ite-chain over a large array's
        elements nests thousands deep, past Python's recursion limit)."""
        cache = self._reads_cache
        todo: list[tuple[z3.ExprRef, bool]] = [(e, False)]
        steps = 0
        while todo:
            t, ready = todo.pop()
            steps += 1
            if not steps & 0x3FF:
                budget.poll()  # NOTE(time-limit)
            key = t.get_id()
            hit = cache.get(key)
            if hit is not None and hit[0].eq(t):
                continue
            if z3.is_const(t):
                out = frozenset([self.index[key]]) if key in self.index else frozenset()
            elif not ready:
                todo.append((t, True))
                todo.extend((c, False) for c in t.children())
                continue
            else:
                out = frozenset().union(*(cache[c.get_id()][1] for c in t.children()))
            cache[key] = (t, out)  # the term is kept alive: Z3 reuses ids of freed terms
        return cache[e.get_id()][1]

    def query(
        self, kept: list[int], bad_bodies: list[z3.BoolRef], deadline: Deadline, seed: int,
        strengthen: z3.BoolRef | None = None,
    ) -> tuple[str, str | None]:
        """Is some `bad_bodies` formula reachable in the abstraction keeping slots `kept`?
        (PROVED, rendered invariant) | (REFUTED, None) | (UNKNOWN, reason). `strengthen` is an
        invariant already proved (checker/engines/smt/lemmas.py), assumed of every source state: true
        in every reachable state, so no concrete behaviour is cut."""
        if deadline.expired:
            return _Answer.UNKNOWN, "timeout"
        enc = self.enc
        fp = z3.Fixedpoint()
        fp.set(engine="spacer")
        fp.set("spacer.random_seed", seed)
        for k, v in SPACER_OPTIONS.items():
            fp.set(k, v)
        deadline.apply(fp)  # NOTE(step-limits)
        s = self.s
        ks = [s[i] for i in kept]
        reach = z3.Function("Reach", *[x.sort() for x in ks], z3.BoolSort())
        fail = z3.Function("Bad", z3.BoolSort())
        fp.register_relation(reach, fail)
        rng = mk_and(*(self.slot_rng[i] for i in kept), true() if strengthen is None else strengthen)  # free slots are left unconstrained
        kset = set(kept)
        # clauses with the same effect on the kept slots become one (their guards disjoined):
        # under the abstraction, e.g. `wave` on every kernel but the conjunct's is `pc += 1`
        merged: dict[tuple[int, ...], tuple[list[z3.ExprRef], list[z3.BoolRef]]] = {}
        for c in self.clauses:
            if z3.is_false(c.guard) or not (c.writes & kset):
                continue
            head = [c.next[i] for i in kept]
            key = tuple(h.get_id() for h in head)
            merged.setdefault(key, (head, []))[1].append(self.weaken(c, kset))
        rules: list[tuple[z3.BoolRef, list[z3.BoolRef]]] = [
            (reach(*ks), [mk_and(*(self.init[i] for i in kept), rng)])]
        rules += [(reach(*head), [reach(*ks), rng, mk_or(*guards)]) for head, guards in merged.values()]
        rules += [(fail(), [reach(*ks), rng, body]) for body in bad_bodies if not z3.is_false(body)]
        fp.declare_var(*(list(s) + self.params))
        for head, body in rules:
            fp.rule(head, body)
        try:
            r = deadline.trusted(fp.query(fail()))  # NOTE(stale-interrupt), NOTE(step-limits)
        except z3.Z3Exception as e:  # Spacer reports an expired timeout as a 'canceled' exception
            return _Answer.UNKNOWN, deadline.why() if deadline.expired else f"spacer: {e}"
        if r == z3.unsat:
            inv = fp.get_cover_delta(-1, reach)
            # the invariant as a formula over the state symbols (NOTE(proof-core))
            self.last_invariant = z3.substitute_vars(inv, *ks) if not z3.is_true(inv) else inv
            return _Answer.PROVED, render_invariant(enc, inv, tuple(ks), [enc.slots[i] for i in kept])
        if r == z3.sat:
            return _Answer.REFUTED, None
        reason = fp.reason_unknown() or "unknown"
        return _Answer.UNKNOWN, deadline.why() if deadline.expired else f"spacer: {reason}"

    @staticmethod
    def weaken(c: _Clause, kept: set[int]) -> z3.BoolRef:
        """The clause's guard without the conjuncts that read free slots: a weaker guard, so
        still an over-approximation (the abstraction already lets free slots take any value),
        and Spacer need not eliminate one auxiliary variable per free slot in every step."""
        return mk_and(*(g for g, reads in c.parts if reads <= kept))

    def grow(self, kept: set[int]) -> set[int]:
        """One step of the cone of influence: what the clauses writing kept slots read."""
        out = set(kept)
        for c in self.clauses:
            if c.writes & kept:
                out |= c.reads
        if out != kept:
            out |= self.cons_reads
        return out


def _conjuncts(e: z3.BoolRef) -> list[z3.BoolRef]:
    """The leaves of a nested conjunction."""
    out: list[z3.BoolRef] = []
    todo = [e]
    while todo:
        x = todo.pop()
        if z3.is_and(x):
            todo.extend(x.children())  # type: ignore[arg-type]
        else:
            out.append(x)
    return out


def run_pdr(
    model: ir.Model,
    props: list[SafetyProp],
    *,
    deadline: Deadline,
    seed: int = DEFAULT_SEED,
    split: bool = True,
    lemmas: bool = True,
) -> list[Result]:
    """Prove or refute each property within the shared deadline, each one its own proof
    obligation. With `lemmas` (the default) the instance is first explored explicitly (at
    most MAX_SAMPLE states) to propose invariants that Z3 then checks: mined lemmas
    (checker/engines/smt/lemmas.py), a property inductive relative to them is proved; else, when the
    exploration completed, the reachable set itself (checker/engines/smt/reachset.py). Otherwise, and
    for every violation, Spacer (`split`: conjunct by conjunct over localisation abstractions
    first), strengthened by the lemmas."""
    system = _System(Encoder(model))
    prover: LemmaProver | None = None
    states: list[tuple[int, ...]] = []
    complete = False
    cert: ReachCertificate | None = None
    cm = None
    violations: dict[str, Result] | None = None
    stats: dict[str, object] = {}
    shared = 0.0  # NOTE(pdr-seconds): the seconds of the work every property of the model shares
    if lemmas and props:
        started = time.monotonic()
        from gpcheck.gpmodel import compile_model

        budget.poll()  # NOTE(time-limit): compiling a large model takes seconds and does not poll
        cm = compile_model(model)
        meter.begin(ENGINE, "exploring for lemmas")  # checker/core/progress.py
        t0 = time.monotonic()
        states, complete = sample_states(cm, MAX_SAMPLE, deadline)  # at most MAX_SAMPLE states, no clock
        stats["explore_seconds"] = round(time.monotonic() - t0, 3)
        meter.note(engine=ENGINE, phase="mining lemmas (Houdini)", states=len(states))
        # a complete exploration leaves the reachable-set certificate to prove what the lemmas do
        # not: Houdini then gets less time (reef_rewind's 3,585 candidates take about 4 s of CPU,
        # and its lemmas prove one property of five; the certificate proves all five)
        prover = LemmaProver(system, cm, states, deadline.limited(HOUDINI_STEPS_BACKED if complete
                                                                  else HOUDINI_STEPS), seed)
        stats.update(prover.stats, sampled_states=len(states), sample_complete=complete,
                     seconds=round(time.monotonic() - started, 3))
        shared += time.monotonic() - started
        if not prover.usable:
            prover = None
    # NOTE(lemmas-first): every property's relative-induction proof runs before anything else
    # builds Z3 terms (the counterexample search's encodings, the certificate, Spacer): Z3 numbers
    # terms in creation order and its unsat cores follow that numbering, so the lemmas each
    # printed invariant keeps then depend on the lemmas and the property alone, not on which
    # property came first or on how the certificate is encoded
    found: list[Result | None] = [None] * len(props)
    own = [0.0] * len(props)  # NOTE(pdr-seconds): each property's own seconds, over both passes
    if prover is not None:
        for i, p in enumerate(props):
            if deadline.expired:
                break
            started = time.monotonic()
            meter.note(engine=ENGINE, phase="lemmas", prop=p.name)
            try:
                found[i] = _by_lemmas(system, prover, p, deadline)
            except budget.Stop as stop:  # NOTE(time-limit)
                found[i] = unknown_result(p, ENGINE, stop.text, None)
            own[i] += time.monotonic() - started
    out = []
    for i, p in enumerate(props):
        started = time.monotonic()
        r = found[i]
        if r is not None:
            r.detail.setdefault("seconds", round(own[i], 4))
            out.append(r)
            continue
        if deadline.expired:  # out of time or stopped (checker/core/budget.py): no encoding work
            out.append(unknown_result(p, ENGINE, "timeout", None))
            continue
        try:
            if cm is not None:
                if violations is None:  # once, for every property: the explicit search checks them together
                    t0 = time.monotonic()
                    meter.note(engine=ENGINE, phase="explicit counterexamples", prop=p.name)
                    violations = sample_violations(cm, props, MAX_SAMPLE, deadline, ENGINE)
                    stats["counterexample_search_seconds"] = round(time.monotonic() - t0, 3)
                    shared += time.monotonic() - t0
                    started += time.monotonic() - t0
                r = violations.get(p.name)
            if r is None and complete:
                if cert is None:
                    t0 = time.monotonic()
                    meter.note(engine=ENGINE, phase="reachable-set certificate", prop=p.name)
                    cert = ReachCertificate(system, states, deadline.limited(CERTIFICATE_STEPS))
                    stats.update(certificate_nodes=cert.nodes, certificate_seconds=round(time.monotonic() - t0, 3),
                                 certificate_inductive=cert.inductive)
                    shared += time.monotonic() - t0
                    started += time.monotonic() - t0
                if cert.inductive:
                    r = _by_certificate(system, cert, p, deadline, prover.checker.now if prover is not None else ())
            if r is None:
                meter.note(engine=ENGINE, phase="spacer", prop=p.name)
                r = _pdr_one(system, p, deadline, seed, split, prover.formula() if prover is not None else true(),
                             prover.checker.now if prover is not None and prover.checker is not None else ())
        except budget.Stop as stop:  # its encoding cut short by the budget or the time limit (NOTE(time-limit))
            r = unknown_result(p, ENGINE, stop.text, None)
        r.detail.setdefault("seconds", round(own[i] + time.monotonic() - started, 4))
        out.append(r)
    attach_cores(system, deadline)  # NOTE(proof-core)
    for r in out:  # the shared work is known only now: a later property may have started a part of it
        if stats:
            r.detail.setdefault("lemmas", dict(stats))
        r.detail["shared_seconds"] = round(shared, 3)
    return out


def _obligations(system: _System, p: SafetyProp, t: State) -> list[tuple[z3.BoolRef, bool]]:
    """What must be unreachable for `p`: formulas over s, or over the step s -> t (the bool says
    which); all of them, for `p` to hold. `range` is NOTE(predicate-errors): an action's error or
    a state predicate's in a state, and a transition property's on a step."""
    enc, s = system.enc, system.s
    if p.kind == "invariant":
        assert p.expr is not None
        return [(mk_not(enc.holds(p.expr, s)), False)]
    if p.kind == "transition":
        assert p.expr is not None
        return [(mk_not(enc.holds(p.expr, s, t)), True)]
    if p.kind == "range":
        out = [(mk_or(*(c.error for c in system.clauses), enc.property_errors(s)), False)]
        if enc.model.transitions:
            out.append((enc.step_errors(s, t), True))
        return out
    return [(enc.deadlock(s), False)]


def _by_lemmas(system: _System, prover: LemmaProver, p: SafetyProp, deadline: Deadline) -> Result | None:
    """The property proved by induction relative to the mined lemmas, or None."""
    enc, s, t = system.enc, system.s, prover.t
    share = deadline.limited(RELATIVE_STEPS)
    if p.kind == "invariant":
        assert p.expr is not None
        text = prover.prove_invariant(enc.holds(p.expr, s), enc.holds(p.expr, t), share)
    else:
        texts = [prover.prove_step(bad_now, share, with_trans=step) for bad_now, step in _obligations(system, p, t)]
        parts = [x for x in dict.fromkeys(texts) if x not in (None, "true")]
        text = None if None in texts else ("\nand ".join(parts) or "true")
    if text is None or share.out_of_time:  # NOTE(wall-clock-cut): the lemmas kept may depend on the clock
        return None  # (the caller reports `timeout` once the clock ran out)
    n = prover.stats["lemmas"]
    r = proved_result(enc.model, p, ENGINE, f"inductive relative to {n} lemmas mined from the explicit "
                      "states and proved inductive by Z3 (Houdini)", invariant=text)
    return with_core(system, r, p, prover.checker.now if prover.checker is not None else [], deadline)


def with_core(system: _System, r: Result, p: SafetyProp, candidates: Sequence[z3.BoolRef], deadline: Deadline) -> Result:
    """NOTE(proof-core) in checker/engines/smt/proofcore.py: a proved result of a model with assumptions
    is queued for its proof core (the property inductive relative to `candidates`: the lemmas,
    with the certificate or Spacer's invariant), which `attach_cores` computes once every
    property was decided (NOTE(lemmas-first): the cores' terms come after every proof's)."""
    if r.verdict is Verdict.PROVED and system.enc.model.assumptions:
        system.pending_cores.append((r, p, list(candidates)))
    return r


def attach_cores(system: _System, deadline: Deadline) -> None:
    """The queued proofs' cores as `detail["assumption_core"]`; without an answer, none (api.verify
    then runs the engine again without each assumption, NOTE(assumption-use))."""
    from gpcheck.checker.engines.smt.proofcore import ProofCore

    pc: ProofCore | None = None
    for r, p, cands in system.pending_cores:
        if deadline.expired:
            break
        pc = pc or ProofCore(system.enc.model)
        try:
            core = pc.core(p, cands, deadline)
        except budget.Stop:  # NOTE(time-limit): the result stands, without its core
            break
        if core is not None:
            r.detail["assumption_core"] = core
    system.pending_cores.clear()


def _by_certificate(system: _System, cert: ReachCertificate, p: SafetyProp, deadline: Deadline,
                    lemmas: Sequence[z3.BoolRef] = ()) -> Result | None:
    """The property decided over the reachable set Z3 checked inductive: proved, or (a
    reachable state violates it) its shortest counterexample by BMC; None without an answer."""
    share = deadline.limited(RELATIVE_STEPS)
    answers = [cert.check(bad_now, share, with_trans=step) for bad_now, step in _obligations(system, p, cert.t)]
    answer = False if False in answers else (None if None in answers else True)
    if answer is True:
        r = proved_result(system.enc.model, p, ENGINE, f"holds in the {cert.states} explicit reachable states, "
                          "a set Z3 checked initial and inductive")
        return with_core(system, r, p, [*lemmas, cert.now], deadline)
    if answer is False:
        return _counterexample(system.enc.model, p, deadline)
    return None


def _bad_bodies(system: _System, p: SafetyProp) -> list[z3.BoolRef]:
    enc, s = system.enc, system.s
    if p.kind == "transition":
        assert p.expr is not None
        return [mk_and(c.guard, mk_not(enc.holds(p.expr, s, c.next))) for c in system.clauses]
    if p.kind == "range":  # NOTE(predicate-errors): actions, state predicates, transition properties
        steps = [mk_and(c.guard, enc.step_errors(s, c.next)) for c in system.clauses] if enc.model.transitions else []
        return [c.error for c in system.clauses] + [enc.property_errors(s)] + steps
    return [bad(enc, p, [s], 0)]


def _split_bodies(system: _System, p: SafetyProp) -> list[z3.BoolRef]:
    """The property's `Bad` bodies split into parts that can be proved unreachable one by
    one: invariant conjuncts, or one transition property / range check per clause."""
    enc, s = system.enc, system.s
    if p.kind == "invariant":
        assert p.expr is not None
        return [mk_not(enc.holds(e, s, None, b)) for e, b in conjuncts(p.expr)]
    return [b for b in _bad_bodies(system, p) if not z3.is_false(b)]


def _pdr_one(system: _System, p: SafetyProp, deadline: Deadline, seed: int, split: bool,
             strengthen: z3.BoolRef | None = None, lemmas: Sequence[z3.BoolRef] = ()) -> Result:
    """Spacer on `p` (parts first with `split`), strengthened by `strengthen` (the conjunction of
    `lemmas`, which the proof core reads one by one)."""
    model = system.enc.model
    everything = list(range(len(system.s)))
    if split and p.kind != "deadlock":
        found: list[z3.BoolRef] = []
        texts = _prove_parts(system, _split_bodies(system, p), deadline, seed, strengthen, found)
        if texts is not None:
            r = proved_result(model, p, ENGINE, "Spacer proved every part", invariant=_join(texts))
            return with_core(system, r, p, [*lemmas, *found], deadline)
    answer, info = system.query(everything, _bad_bodies(system, p), deadline, seed, strengthen)
    if answer == _Answer.PROVED:
        r = proved_result(model, p, ENGINE, "Spacer found an inductive invariant", invariant=info)
        return with_core(system, r, p, [*lemmas, system.last_invariant], deadline)
    if answer == _Answer.REFUTED:
        return _counterexample(model, p, deadline)
    return unknown_result(p, ENGINE, info or "unknown", None)


def _prove_parts(system: _System, bodies: list[z3.BoolRef], deadline: Deadline, seed: int,
                 strengthen: z3.BoolRef | None = None, found: list[z3.BoolRef] | None = None) -> list[str] | None:
    """Each part's invariant over its localisation abstraction, or None as soon as some part
    is not proved that way (its abstraction is exact and still fails, or it runs out of its
    share of time: the monolithic query then gets the rest)."""
    texts: list[str] = []
    for body in bodies:
        # the slots the part reads, and one step of their cone of influence: a part is
        # rarely inductive over its own slots alone
        kept = system.grow(set(system.reads(body)) | system.cons_reads)
        while True:
            if len(kept) == len(system.s):
                return None  # no abstraction left: the monolithic query decides
            share = deadline.limited(PART_STEPS)
            answer, info = system.query(sorted(kept), [body], share, seed, strengthen)
            if answer == _Answer.PROVED:
                assert info is not None
                texts.append(info)
                if found is not None:  # NOTE(proof-core)
                    found.append(system.last_invariant)
                break
            if answer == _Answer.UNKNOWN:
                return None
            bigger = system.grow(kept)
            if bigger == kept:
                return None  # a closed cone of influence: a real violation of this part
            kept = bigger
    return texts


def _join(texts: list[str]) -> str:
    seen: dict[str, None] = {}
    for t in texts:
        for line in t.split("\n"):
            line = line.removeprefix("and ")
            if line != "true":
                seen.setdefault(line, None)
    return "\nand ".join(seen) if seen else "true"


def _counterexample(model: ir.Model, p: SafetyProp, deadline: Deadline) -> Result:
    """Spacer proved `Bad` derivable; BMC finds the shortest such path to show it."""
    un = Unroller(bv_encoder(model), deadline, reusable=False)
    for k in range(CEX_MAX_DEPTH + 1):
        ans = un.check_bad(p, k)
        if isinstance(ans, Sat):
            r = un.violation(p, k, ans, ENGINE)
            r.detail["found_by"] = "spacer; shortest counterexample by bmc"
            return r
        if isinstance(ans, Unknown):
            return unknown_result(p, ENGINE, f"spacer found a violation; bmc could not show it ({ans.reason} at depth {k})", None)
    return unknown_result(p, ENGINE, f"spacer found a violation; none within {CEX_MAX_DEPTH} steps", None)


"""Agreement checks between the interpreter (gpmodel, explicit search) and the Z3 encoding.

Each check returns a list of disagreements, each a message that shows both sides, so a test
can assert the list is empty and print it when it is not.

(a) `check_steps`: from sampled reachable states, every instance the interpreter steps is
    admitted by the Z3 transition relation with exactly the interpreter's next state, every
    instance it finds disabled has no Z3 successor, every modelling error is a Z3 error (in
    both the bit-vector and the Int encoding), and the PDR clauses (execution paths) agree.
(b) `check_engines`: BMC (and k-induction, PDR when asked) agree with explicit search on each
    property's verdict and shortest counterexample length; every Z3 counterexample replays.
(c) `check_reachable_counts`: the states reachable within k steps, enumerated with Z3 by
    blocking clauses, are exactly the interpreter's."""

from __future__ import annotations

import random
from typing import Sequence

import z3

from gpcheck.spec import ir
from gpcheck.gpmodel import CompiledModel, ModelError
from gpcheck.checker.engines.explicit import explicit
from gpcheck.checker.api.smt_dispatch import run_engine
from gpcheck.checker.engines.explicit.explicit import Limits
from gpcheck.checker.engines.smt.bmc import Unroller
from gpcheck.checker.engines.smt.encode import Encoder, bv_encoder
from gpcheck.checker.engines.smt.pdr import _System
from gpcheck.checker.engines.smt.session import Deadline, Sat
from gpcheck.checker.engines.smt.terms import const_int, scalar_lit
from gpcheck.checker.core.verdict import Result, Verdict
from gpcheck.checker.engines.smt.witness import check_witness

State = tuple[int, ...]


def step_all(cm: CompiledModel, s: State) -> list[tuple[int, State]]:
    """Successors under the Z3 relation's semantics: each instance on its own, an instance
    with a modelling error contributes nothing (the interpreter's successors() raises)."""
    out = []
    for iid in range(len(cm.instances)):
        try:
            t = cm.step(iid, s)
        except ModelError:
            continue
        if not isinstance(t, int):
            out.append((iid, t))
    return out


def reachable_by_depth(cm: CompiledModel, k: int, limit: int = 50_000) -> list[set[State]]:
    """levels[j] = states first reached in j steps (j <= k), expanding only inside constraints."""
    seen = set(cm.initial_states())
    levels = [set(seen)]
    for _ in range(k):
        nxt: set[State] = set()
        for s in levels[-1]:
            if not cm.in_constraints(s):
                continue
            for _, t in step_all(cm, s):
                if t not in seen:
                    seen.add(t)
                    nxt.add(t)
        levels.append(nxt)
        if len(seen) > limit:
            break
    return levels


def sample_states(cm: CompiledModel, n: int, seed: int, depth: int = 12) -> list[State]:
    levels = reachable_by_depth(cm, depth, limit=5_000)
    pool = sorted(set().union(*levels))
    rng = random.Random(seed)
    return pool if len(pool) <= n else rng.sample(pool, n)


def _fix(enc: Encoder, terms: Sequence[z3.ExprRef], values: Sequence[int]) -> list[z3.BoolRef]:
    return [t == scalar_lit(sl.type, v, enc.num) for t, sl, v in zip(terms, enc.slots, values)]


def _fix_args(enc: Encoder, ai: int, args: Sequence[z3.ExprRef], values: Sequence[int]) -> list[z3.BoolRef]:
    a = enc.model.actions[ai]
    return [t == scalar_lit(p.type, v, enc.num) for t, p, v in zip(args, a.params, values)]


def _read(m: z3.ModelRef, terms: Sequence[z3.ExprRef]) -> State:
    out = []
    for t in terms:
        v = m.eval(t, model_completion=True)
        out.append((1 if z3.is_true(v) else 0) if z3.is_bool(t) else const_int(v))
    return tuple(out)  # type: ignore[arg-type]


def check_steps(model: ir.Model, cm: CompiledModel, states: Sequence[State]) -> list[str]:
    """(a) on the given states, for the bit-vector and the Int encodings and the PDR clauses."""
    problems: list[str] = []
    index = {a.name: i for i, a in enumerate(model.actions)}
    for label, enc, logic in (("bv", bv_encoder(model), "QF_FD"), ("int", Encoder(model), None)):
        sol = z3.SolverFor(logic) if logic else z3.Solver()
        s, t = enc.state(0, "a."), enc.state(1, "a.")
        use_t = z3.Bool("use_trans")
        sol.add(z3.Implies(use_t, enc.trans(s, t, 0, "a.")))
        sol.add(z3.Implies(z3.Not(use_t), enc.error(s, 0, "e.")))
        for st in states:
            sol.push()
            sol.add(*_fix(enc, s, st))
            expanded = cm.in_constraints(st)
            for iid, inst in enumerate(cm.instances):
                ai = index[inst.action.name]
                pick = [enc.act(0, "a.") == enc.num.lit(ai), *_fix_args(enc, ai, enc.params(ai, 0, "a."), inst.args)]
                pick_e = [enc.act(0, "e.") == enc.num.lit(ai), *_fix_args(enc, ai, enc.params(ai, 0, "e."), inst.args)]
                want: object
                try:
                    want = cm.step(iid, st) if expanded else "not expanded (outside the constraints)"
                except ModelError as e:
                    want = e
                where = f"[{label}] {inst.label()} from {cm.layout.decode(st)}"
                got = sol.check(use_t, *pick)
                if isinstance(want, tuple):
                    if got != z3.sat:
                        problems.append(f"{where}: interpreter steps to {cm.layout.decode(want)}, Z3 says {got}")
                    else:
                        nxt = _read(sol.model(), t)
                        if nxt != want:
                            problems.append(f"{where}: interpreter {cm.layout.decode(want)}, Z3 {cm.layout.decode(nxt)}")
                        other = sol.check(use_t, *pick, z3.Or([a != b for a, b in zip(t, _fix_terms(enc, want))]))
                        if other != z3.unsat:
                            problems.append(f"{where}: Z3 admits a second next state ({other})")
                elif got != z3.unsat:
                    shown = cm.layout.decode(_read(sol.model(), t)) if got == z3.sat else got
                    problems.append(f"{where}: interpreter: {_say(want)}; Z3 admits {shown}")
                e_got = sol.check(z3.Not(use_t), *pick_e)
                if (e_got == z3.sat) != isinstance(want, ModelError):
                    problems.append(f"{where}: interpreter: {_say(want)}; Z3 error query {e_got}")
            sol.pop()
    problems += _check_paths(model, cm, states)
    return problems


def _say(want: object) -> str:
    if isinstance(want, ModelError):
        return f"modelling error {want.message}"
    if isinstance(want, int):
        return f"disabled (require #{want} fails)"
    return str(want)


def _fix_terms(enc: Encoder, values: Sequence[int]) -> list[z3.ExprRef]:
    return [scalar_lit(sl.type, v, enc.num) for sl, v in zip(enc.slots, values)]


def _check_paths(model: ir.Model, cm: CompiledModel, states: Sequence[State]) -> list[str]:
    """PDR's clauses: from each state, the clauses whose guard can hold for an instance are
    exactly one when the interpreter steps (with its next state), none otherwise; some error
    clause can hold exactly when the interpreter reports a modelling error. (A solver, not
    simplification: Z3's `x / 0` is an unspecified value, so a path condition on an index
    computed by a failing division only constrains it.)"""
    problems: list[str] = []
    system = _System(Encoder(model))
    enc = system.enc
    index = {a.name: i for i, a in enumerate(model.actions)}
    per_action: dict[int, list[int]] = {}
    for ci, ai in enumerate(system.clause_actions):
        per_action.setdefault(ai, []).append(ci)
    sol = z3.Solver()
    for st in states:
        sol.push()
        sol.add(*_fix(enc, system.s, st))
        for iid, inst in enumerate(cm.instances):
            ai = index[inst.action.name]
            fix = _fix_args(enc, ai, enc.params(ai, 0, "pdr."), inst.args)
            try:
                want: object = cm.step(iid, st) if cm.in_constraints(st) else "not expanded"
            except ModelError as e:
                want = e
            taken: list[State] = []
            errs: list[int] = []
            for ci in per_action.get(ai, []):
                c = system.clauses[ci]
                if sol.check(c.guard, *fix) == z3.sat:
                    taken.append(_read(sol.model(), c.next))
                if sol.check(c.error, *fix) == z3.sat:
                    errs.append(ci)
            where = f"[pdr clauses] {inst.label()} from {cm.layout.decode(st)}"
            if isinstance(want, tuple) and taken != [want]:
                problems.append(f"{where}: interpreter {cm.layout.decode(want)}, clauses {taken}")
            if not isinstance(want, tuple) and taken:
                problems.append(f"{where}: interpreter: {_say(want)}; clauses step to {taken}")
            if isinstance(want, ModelError) != bool(errs):
                problems.append(f"{where}: interpreter: {_say(want)}; error clauses {errs}")
        sol.pop()
    return problems


def explicit_results(model: ir.Model, cm: CompiledModel) -> tuple[explicit.Search, dict[str, Result]]:
    wanted = explicit.select_properties(model, None) - {p.name for p in model.liveness}
    res = explicit.search(cm, wanted, Limits())
    return res, {r.property: r for r in explicit.safety_results(cm, res, wanted)}


def check_engines(model: ir.Model, cm: CompiledModel, engines: Sequence[str] = ("bmc",),
                  timeout: float = 20.0, names: Sequence[str] | None = None) -> list[str]:
    """(b): each engine against explicit search (on `names`, default every safety property),
    plus witness replay of every counterexample. BMC runs two steps past the deepest state
    explicit search found, so it covers every reachable state and step."""
    res, exp = explicit_results(model, cm)
    depth = res.depth + 2
    names = sorted(exp) if names is None else list(names)
    problems: list[str] = []
    for engine in engines:
        got = {r.property: r for r in run_engine(engine, model, names, depth=depth, timeout=timeout)}
        for name in names:
            e, g = exp[name], got[name]
            side = (f"explicit {e.verdict.value} ({_len(e)}) vs {engine} {g.verdict.value} ({_len(g)}"
                    f"{', ' + g.reason if g.reason else ''})")
            if g.reason and "internal error" in g.reason:
                problems.append(f"{name}: {side}")
                continue
            if g.verdict is Verdict.VIOLATED:
                why = check_witness(cm, g)
                if why is not None:
                    problems.append(f"{name}: {engine} counterexample does not replay: {why}")
            if e.verdict is Verdict.UNKNOWN or g.verdict is Verdict.UNKNOWN:
                continue  # explicit stopped at a modelling error, or the solver gave up
            if (e.verdict is Verdict.VIOLATED) != (g.verdict is Verdict.VIOLATED):
                if not (engine != "bmc" and g.verdict is Verdict.HOLDS_TO_BOUND and e.verdict is Verdict.VIOLATED
                        and _len(e) > (g.bound or 0)):
                    problems.append(f"{name}: {side}")
            elif e.verdict is Verdict.VIOLATED and _len(e) != _len(g):
                problems.append(f"{name}: shortest counterexample {side}")
            if g.verdict is Verdict.PROVED and res.pruned:
                problems.append(f"{name}: {engine} says proved inside a constraint")
    return problems


def _len(r: Result) -> int | None:
    return r.counterexample.length if r.counterexample is not None else None


def check_reachable_counts(model: ir.Model, cm: CompiledModel, k: int, cap: int = 400) -> list[str]:
    """(c): states reachable within j <= k steps, by blocking clauses, against the interpreter."""
    levels = reachable_by_depth(cm, k)
    want: set[State] = set()
    enc = bv_encoder(model)
    un = Unroller(enc, Deadline(60))
    problems: list[str] = []
    got: set[State] = set()
    for j in range(k + 1):
        want |= levels[j]
        un.extend_to(j)
        found: set[State] = set()
        with un.sess.frame():
            while len(found) <= cap:
                ans = un.sess.check(*un.assumptions(j))
                if not isinstance(ans, Sat):
                    break
                st = _read(ans.model, un.path[j])
                found.add(st)
                un.sess.add(z3.Or([a != b for a, b in zip(un.path[j], _fix_terms(enc, st))]))
        got |= found
        if got != want:
            extra = [cm.layout.decode(x) for x in sorted(got - want)[:3]]
            missing = [cm.layout.decode(x) for x in sorted(want - got)[:3]]
            problems.append(f"within {j} steps: interpreter {len(want)} states, Z3 {len(got)}; "
                            f"only Z3: {extra}; only interpreter: {missing}")
            break
    return problems


def check_liveness(model: ir.Model, cm: CompiledModel, timeout: float = 20.0) -> list[str]:
    """Lasso BMC against the explicit engine's liveness verdicts: a violation explicit finds
    as a lasso of n steps is found by BMC within n steps (and replays as a fair lasso); a
    property explicit proves has no lasso within the explored depth."""
    from gpcheck.checker.api.model_api import run_explicit

    names = [p.name for p in model.liveness]
    if not names:
        return []
    exp = {r.property: r for r in run_explicit(model, set(names), Limits()).results}
    res, _ = explicit_results(model, cm)
    problems: list[str] = []
    for name in names:
        e = exp[name]
        if e.verdict is Verdict.UNKNOWN:
            continue
        depth = _len(e) if e.verdict is Verdict.VIOLATED else res.depth + 2
        g = {r.property: r for r in run_engine("bmc", model, [name], depth=depth, timeout=timeout)}[name]
        side = f"explicit {e.verdict.value} ({_len(e)}, loop {_loop(e)}) vs bmc {g.verdict.value} ({_len(g)}, loop {_loop(g)})"
        if g.verdict is Verdict.UNKNOWN:
            if g.reason and "internal error" in g.reason:
                problems.append(f"{name}: {side}: {g.reason}")
            continue
        if (e.verdict is Verdict.VIOLATED) != (g.verdict is Verdict.VIOLATED):
            problems.append(f"{name}: {side}")
        elif g.verdict is Verdict.VIOLATED:
            why = check_witness(cm, g)
            if why is not None:
                problems.append(f"{name}: bmc lasso does not replay: {why}")
            if (_len(g) or 0) > (_len(e) or 0):
                problems.append(f"{name}: bmc lasso longer than explicit's: {side}")
    return problems


def _loop(r: Result) -> int | None:
    return r.counterexample.loop if r.counterexample is not None else None

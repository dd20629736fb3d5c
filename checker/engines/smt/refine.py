"""NOTE(refinement-induction): `refines M with {...}` checked by induction with Z3, the second
engine of a refinement (the first, checker/engines/explicit/refinement.py, walks the reachable
states one by one).

With α the mapping (spec/refines.py) and J an inductive invariant of the concrete model, the
refinement holds in every reachable state when three questions are unsat:

1. init: an initial state s whose image α(s) is undefined or not an initial state of M;
2. image: a state s in J whose image is undefined (a mapping expression fails to evaluate, or
   gives a value outside M's type);
3. step: a step s -> t of the concrete model with s and t in J whose image α(s) -> α(t) is
   neither a stutter (α(s) = α(t)) nor a step of M (the disjunction over M's action instances
   of "enabled in α(s) and leads to α(t)": quantifier-free, M's instances are enumerated).

Reachable states lie in J, so (2) and (3) cover every reachable step. J is what the concrete
model's own facts give, each proved here or by pdr's Houdini before it is used: pdr's mined
lemmas (invariants Z3 showed initial and inductive, NOTE(kind-aux)) and those of the model's
declared invariants that are inductive relative to them (a Houdini over the declared ones; a
declared invariant that is violated or not inductive is simply not used). J is never taken on
trust from the sample the lemmas were mined from: Z3 proves each part.

When (1)-(3) are unsat the refinement is `proved` (`holds up to bound` inside a `constraint`:
the steps out of states outside it are not taken). When one is sat, its state may be
unreachable (J too weak): a bounded search from the initial states (the same questions at each
depth, up to `depth`) then looks for a real one; what it finds is re-executed by gpmodel and
judged by the explicit check's own code (`refinement.confirm`) before it is `violated`: a
shortest behaviour to the failing step, as the explicit engine's BFS gives. Nothing found
within the bound is `unknown`, naming the step that induction could not exclude.

Integers are Z3 Ints (the mined lemmas are written over Ints, as pdr's encoding is); M is
encoded by its own Encoder under the `abs.` prefix, so equal variable names do not meet.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Sequence

import z3

from gpcheck.checker.core import budget
from gpcheck.checker.core import progress as meter
from gpcheck.checker.core.verdict import Result, Verdict
from gpcheck.checker.engines.explicit import refinement as explicit_refinement
from gpcheck.checker.engines.smt.bmc import Unroller
from gpcheck.checker.engines.smt.decode import read_path, read_state
from gpcheck.checker.engines.smt.encode import Encoder, State, _Exec
from gpcheck.checker.engines.smt.mining import Atom
from gpcheck.checker.engines.smt.session import Deadline, Sat, Session, Unknown, Unsat
from gpcheck.checker.engines.smt.terms import in_type, mk_and, mk_eq, mk_not, mk_or
from gpcheck.spec import ir
from gpcheck.spec.refines import Refinement

ENGINE = "kind"  # induction (k = 1) relative to an inductive invariant, with a bounded search for violations
PROPERTY = explicit_refinement.PROPERTY
KIND = explicit_refinement.KIND
DEFAULT_DEPTH = 30
TAG = "ref."
HOUDINI_ROUNDS = 64  # the declared invariants are few: each round drops at least one


class _Images:
    """The mapping as Z3 terms of the concrete encoder: α(s) slot by slot and when it is undefined."""

    def __init__(self, enc: Encoder, ref: Refinement) -> None:
        self.enc = enc
        self.ref = ref

    def of(self, s: State) -> tuple[list[z3.ExprRef], z3.BoolRef]:
        ex = _Exec(self.enc, list(s))
        out: list[z3.ExprRef] = []
        undefined: list[z3.BoolRef] = []
        for _, x, st in self.ref.slots:
            v, err = ex.eval(x)
            assert isinstance(v, z3.ExprRef)
            undefined.append(err)
            if isinstance(st, ir.EnumType):
                ct = x.type
                assert isinstance(ct, ir.EnumType)
                # concrete members map by name; one M does not have leaves the image undefined
                mapped: z3.ExprRef = self.enc.num.lit(0)
                for i, member in enumerate(ct.members):
                    if member in st.members:
                        mapped = z3.If(mk_eq(v, self.enc.num.lit(i)), self.enc.num.lit(st.members.index(member)), mapped)
                    else:
                        undefined.append(mk_eq(v, self.enc.num.lit(i)))
                out.append(mapped)
            else:
                if not isinstance(st, ir.BoolType):
                    undefined.append(mk_not(in_type(st, v)))
                out.append(v)
        return out, mk_or(*undefined)


class _Question:
    """The three questions of NOTE(refinement-induction) over a pair of concrete states (s, t)."""

    def __init__(self, cenc: Encoder, aenc: Encoder, images: _Images) -> None:
        self.c = cenc
        self.a = aenc
        self.images = images

    def bad_init(self, s: State) -> z3.BoolRef:
        img, undef = self.images.of(s)
        A = self.a.state(0, TAG)
        return mk_and(self.a.equal_states(A, img), mk_or(undef, mk_not(self.a.init(A))))

    def bad_image(self, s: State) -> z3.BoolRef:
        return self.images.of(s)[1]

    def bad_step(self, s: State, t: State) -> z3.BoolRef:
        """α(s) -> α(t), both defined, is neither a stutter nor a step of M (the concrete step s ->
        t itself is asserted by the caller)."""
        img_s, undef_s = self.images.of(s)
        img_t, undef_t = self.images.of(t)
        A, B = self.a.state(0, TAG), self.a.state(1, TAG)
        return mk_and(mk_not(undef_s), mk_not(undef_t), self.a.equal_states(A, img_s), self.a.equal_states(B, img_t),
                      mk_not(self.a.equal_states(A, B)), mk_not(self._abstract_step(A, B)))

    def _abstract_step(self, A: State, B: State) -> z3.BoolRef:
        steps = []
        for ai, vals in self.a.instances():
            budget.poll()
            e = self.a.step(ai, A, self.a.instance_args(ai, vals))
            steps.append(mk_and(e.enabled, self.a.equal_states(B, e.next)))
        return mk_or(*steps)


def run(model: ir.Model, *, depth: int | None = None, timeout: float | None = None) -> Result:
    """The refinement result of `model` by induction (NOTE(refinement-induction)); a timed model's
    is unknown, as the explicit engine's is."""
    if model.has_time:
        return Result(PROPERTY, KIND, Verdict.UNKNOWN, ENGINE,
                      reason="refinement is checked on untimed models only (this spec is timed)")
    started = time.monotonic()
    deadline = Deadline(timeout)
    try:
        with budget.cooperative(), budget.time_limit(timeout):
            out = _run(model, DEFAULT_DEPTH if depth is None else depth, deadline)
    except budget.Stop as stop:
        out = Result(PROPERTY, KIND, Verdict.UNKNOWN, ENGINE, reason=budget.stopped() or stop.text)
    out.detail.setdefault("seconds", round(time.monotonic() - started, 3))
    return out


def _run(model: ir.Model, depth: int, deadline: Deadline) -> Result:
    ref = model.refinement
    assert isinstance(ref, Refinement)
    cenc = Encoder(model)
    aenc = Encoder(ref.abstract, ctx_prefix="abs.")
    q = _Question(cenc, aenc, _Images(cenc, ref))
    meter.begin(ENGINE, "refinement: invariants")
    aux, own = _invariant(model, cenc, deadline)
    if deadline.expired:
        return _unknown(deadline.why() + " while the invariant was proved", ref, aux, own)
    s, t = cenc.state(0, TAG), cenc.state(1, TAG)

    def inv(x: State) -> z3.BoolRef:
        return mk_and(cenc.in_range(x), *(a.z3(x) for a in aux), *(cenc.holds(p.expr, x) for p in own))

    meter.note(engine=ENGINE, phase="refinement: induction")
    questions: list[tuple[str, z3.BoolRef]] = [
        ("init", mk_and(cenc.in_range(s), cenc.init(s), q.bad_init(s))),
        ("image", mk_and(inv(s), q.bad_image(s))),
        ("step", mk_and(inv(s), inv(t), cenc.trans(s, t, 0, TAG), q.bad_step(s, t))),
    ]
    cti: tuple[str, Any] | None = None
    for name, f in questions:
        sess = Session(deadline)
        sess.add(f)
        ans = sess.check()
        if isinstance(ans, Unknown):
            return _unknown(f"{ans.reason} in the inductive {name} check", ref, aux, own)
        if isinstance(ans, Sat):
            cti = (name, ans.model)
            break
    if cti is None:
        why = (f"1-inductive relative to {len(aux)} mined lemmas" +
               (f" and the invariants {', '.join(p.name for p in own)}" if own else "") +
               f": every step maps to a step of {ref.abstract.name} or a stutter")
        detail = _detail(ref, aux, own)
        if model.constraints:
            names = ", ".join(c.name for c in model.constraints)
            return Result(PROPERTY, KIND, Verdict.HOLDS_TO_BOUND, ENGINE, reason=f"{why}, inside constraint {names}",
                          detail=detail)
        return Result(PROPERTY, KIND, Verdict.PROVED, ENGINE, reason=why, detail=detail)
    found = _bounded(model, cenc, q, depth, deadline)
    if isinstance(found, Result):
        found.detail.update(_detail(ref, aux, own))
        return found
    name, m = cti
    shown = _show_cti(model, cenc, name, m, s, t)
    return _unknown(f"not inductive: the {name} check fails from a state of the invariant that may be unreachable "
                    f"({shown}); {found}", ref, aux, own, depth)


def _invariant(model: ir.Model, cenc: Encoder, deadline: Deadline) -> tuple[list[Atom], list[ir.Invariant]]:
    """pdr's mined lemmas (proved inductive by Z3) and the declared invariants that are initial and
    inductive relative to them and to each other (Houdini over the declared ones)."""
    from gpcheck.checker.engines.smt.kind import _auxiliary_invariants

    aux, _ = _auxiliary_invariants(model, deadline)
    own = list(model.invariants)
    s, t = cenc.state(0, TAG + "inv."), cenc.state(1, TAG + "inv.")
    base = mk_and(cenc.in_range(s), cenc.in_range(t), *(a.z3(s) for a in aux), cenc.trans(s, t, 0, TAG + "inv."))
    init = mk_and(cenc.in_range(s), cenc.init(s))
    for _ in range(HOUDINI_ROUNDS):
        if not own or deadline.expired:
            break
        kept = []
        for p in own:
            sess = Session(deadline)
            sess.add(init, mk_not(cenc.holds(p.expr, s)))
            if not isinstance(sess.check(), Unsat):
                continue
            kept.append(p)
        hyp = mk_and(base, *(cenc.holds(p.expr, s) for p in kept))
        still = []
        for p in kept:
            sess = Session(deadline)
            sess.add(hyp, mk_not(cenc.holds(p.expr, t)))
            if isinstance(sess.check(), Unsat):
                still.append(p)
        if len(still) == len(own):
            break
        own = still
    return aux, own


def _bounded(model: ir.Model, cenc: Encoder, q: _Question, depth: int, deadline: Deadline) -> Result | str:
    """A shortest behaviour from the initial states whose last state or step breaks the
    refinement, judged by the explicit check's code; otherwise why none was found."""
    from gpcheck.gpmodel import compile_model

    un = Unroller(cenc, deadline)
    cm = compile_model(model)
    for k in range(depth + 1):
        meter.note(engine=ENGINE, phase="refinement: bounded search", bound=k)
        budget.poll()
        un.extend_to(k)
        p = un.path
        f = mk_or(q.bad_init(p[0]), q.bad_image(p[0])) if k == 0 else \
            mk_or(q.bad_image(p[k]), q.bad_step(p[k - 1], p[k]))
        ans = un.check_at(k, f)
        if isinstance(ans, Unknown):
            return f"the bounded search stopped at depth {k}: {ans.reason}"
        if isinstance(ans, Sat):
            raw = read_path(ans.model, cenc, p[: k + 1])
            iids = [cm.find_instance(model.actions[ai].name, _args(model, ai, vals)) for ai, vals in raw.instances]
            if any(i is None for i in iids):
                return f"the bounded search's path at depth {k} names an instance gpmodel does not have"
            res = explicit_refinement.confirm(cm, list(raw.states), [i for i in iids if i is not None])
            if res is None:
                return f"the bounded search's path at depth {k} does not break the refinement when re-executed"
            return replace(res, engine=ENGINE, bound=k)
        if k < depth and isinstance(un.has_path(k + 1), Unsat):
            return f"no behaviour breaks it (every behaviour ends within {k} steps)"
    return f"no behaviour of at most {depth} steps breaks it"


def _args(model: ir.Model, ai: int, vals: Sequence[int]) -> dict[str, Any]:
    from gpcheck.checker.engines.smt.decode import format_args

    return format_args(model, (ai, tuple(vals)))


def _show_cti(model: ir.Model, cenc: Encoder, name: str, m: z3.ModelRef, s: State, t: State) -> str:
    from gpcheck.gpmodel.layout import Layout
    from gpcheck.spec.show import show_state

    layout = Layout(model)
    text = show_state(layout.decode(read_state(m, s)))
    if name == "step":
        text += " -> " + show_state(layout.decode(read_state(m, t)))
    return text


def _detail(ref: Refinement, aux: Sequence[Atom], own: Sequence[ir.Invariant]) -> dict[str, Any]:
    return {"abstract_model": ref.abstract.name, "method": "induction", "mined_lemmas": len(aux),
            "invariants_used": [p.name for p in own]}


def _unknown(why: str, ref: Refinement, aux: Sequence[Atom], own: Sequence[ir.Invariant],
             bound: int | None = None) -> Result:
    return Result(PROPERTY, KIND, Verdict.UNKNOWN, ENGINE, bound=bound, reason=why, detail=_detail(ref, aux, own))


__all__ = ["run", "ENGINE", "PROPERTY", "KIND"]

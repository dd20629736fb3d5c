"""Houdini at one concrete size, as a sound filter before the symbolic check.

A set of candidates inductive for every size is inductive at each size, so the largest
subset inductive for all sizes lies inside the largest subset inductive at size n. Houdini at a
concrete instance is quantifier-free and fast (checker/smt/lemmas.py, over the pdr path
clauses); the symbolic check then starts from its survivors. Where Z3's quantifier reasoning
cannot produce counterexamples to induction with the sizes symbolic (E-matching gives up
on `sat`, as on cwsr's nested arrays), this is where the non-inductive candidates go."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.smt.session import Deadline

if TYPE_CHECKING:
    from gpcheck.checker.param.encode import ParamEncoder
    from gpcheck.checker.param.prove import Candidate


class _Group:
    """One quantified candidate at one instance: the conjunction of its index expansions, in
    the interface gpcheck.checker.smt.lemmas expects of an atom (`z3`, `holds`)."""

    def __init__(self, cand: "Candidate", consts: dict[str, int], tuples: list[tuple[int, ...]],
                 names: Sequence[str], decode: Callable[[tuple[int, ...]], dict]) -> None:
        self.cand, self.consts, self.tuples, self.names = cand, consts, tuples, names
        self.decode = decode

    def z3(self, terms: Sequence[z3.ExprRef]) -> z3.BoolRef:
        cols = self.cand.view.columns
        by_name = {n: t for n, t in zip(self.names, terms)}
        out = []
        for ix in self.tuples:
            vals = [c.concrete(self.consts, ix, by_name.__getitem__) for c in cols]  # type: ignore[misc]
            out.append(self.cand.atom.z3(vals))
        return z3.And(*out) if out else z3.BoolVal(True)

    def holds(self, state: tuple[int, ...]) -> bool:
        d = self.decode(state)
        cols = self.cand.view.columns
        atom = self.cand.atom
        return all(atom.holds([c.value(d, self.consts, ix) for c in cols]) for ix in self.tuples)


def instance_survivors(enc: "ParamEncoder", load: Callable[[Mapping[str, int]], ir.Model], point: dict[str, int],
                       cands: "list[Candidate]", deadline: Deadline) -> list[int] | None:
    """Indices of the candidates in the largest subset inductive at the instance `point`
    (None: Z3 gave no answer in time)."""
    from gpcheck.checker.smt.lemmas import _successors, houdini

    ck, system = _instance(enc, load, point, cands)
    return houdini(ck, list(range(len(cands))), deadline, _successors(ck.cm))


def _instance(enc: "ParamEncoder", load: Callable[[Mapping[str, int]], ir.Model], point: dict[str, int],
              cands: "list[Candidate]") -> tuple[object, object]:
    """A lemma checker over the candidates' expansions at one instance, and its pdr system."""
    from gpcheck.checker.param.mine import _eval
    from gpcheck.checker.smt.encode import Encoder
    from gpcheck.checker.smt.lemmas import _Checker
    from gpcheck.checker.smt.pdr import _System
    from gpcheck.gpmodel import compile_model

    model = load(point)
    system = _System(Encoder(model))
    cm = compile_model(model)
    names = [sl.name for sl in system.enc.slots]
    consts = {n: point[n] for n in enc.pm.names}
    groups = []
    for c in cands:
        ranges = [range(_eval(d.lo, consts, enc), _eval(d.hi, consts, enc) + 1) for d in c.view.domains]
        tuples = [ix for ix in itertools.product(*ranges)
                  if not (c.view.distinct and ix[0] == ix[1])]
        groups.append(_Group(c, consts, tuples, names, cm.layout.decode))
    ck = _Checker(system, groups, 0)  # type: ignore[arg-type]
    ck.cm = cm  # type: ignore[attr-defined]
    return ck, system


class FixedSize:
    """Houdini and relative-induction cores at one instance over one candidate list, the
    quantifier-free encoding built once (it takes seconds: cwsr at Q=N=W=L=2 has 300 candidates
    over 24 `ops` elements) and every later call switching candidates by assumptions."""

    def __init__(self, enc: "ParamEncoder", load: Callable[[Mapping[str, int]], ir.Model], point: dict[str, int],
                 cands: "list[Candidate]") -> None:
        self.ck, self.system = _instance(enc, load, point, cands)

    def survivors(self, active: Sequence[int], deadline: Deadline) -> list[int] | None:
        """The largest subset of `active` inductive at this instance (None: no answer in time)."""
        from gpcheck.checker.smt.lemmas import _successors, houdini

        return houdini(self.ck, list(active), deadline, _successors(self.ck.cm))  # type: ignore[attr-defined]

    def core(self, active: Sequence[int], prop: ir.Invariant | ir.TransitionProperty,
             deadline: Deadline) -> list[int] | None:
        """The candidates of `active` (all inductive here) a proof of `prop` at this instance
        uses, closed under induction; None when there is no proof relative to them."""
        from gpcheck.checker.smt.lemmas import closed_core

        ck, system = self.ck, self.system
        s, t = system.s, ck.t
        active = list(active)
        model = system.enc.model  # the property as this instance states it
        prop = next(p for p in (*model.invariants, *model.transitions) if p.name == prop.name)
        if isinstance(prop, ir.Invariant):
            hs, ht = system.enc.holds(prop.expr, s), system.enc.holds(prop.expr, t)
            if ck.check(deadline, [hs, ck.trans, z3.Not(ht)], active) != z3.unsat:
                return None
            return closed_core(ck, active, ck.core(), [hs], deadline)
        if ck.check(deadline, [ck.trans, z3.Not(system.enc.holds(prop.expr, s, t))], active) != z3.unsat:
            return None
        return closed_core(ck, active, ck.core(), [], deadline)

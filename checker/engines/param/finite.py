"""Houdini at one concrete size, as a sound filter before the symbolic check.

A set of candidates inductive for every size is inductive at each size, so the largest
subset inductive for all sizes lies inside the largest subset inductive at size n. Houdini at a
concrete instance is quantifier-free and fast (checker/engines/smt/lemmas.py, over the pdr path
clauses); the symbolic check then starts from its survivors. Where Z3's quantifier reasoning
cannot produce counterexamples to induction with the sizes symbolic (E-matching gives up
on `sat`, as on cwsr's nested arrays), this is where the non-inductive candidates go."""

from __future__ import annotations

import functools
import itertools
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import numpy as np
import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.smt.session import Deadline

if TYPE_CHECKING:
    from gpcheck.checker.engines.param.encode import ParamEncoder
    from gpcheck.checker.engines.param.candidates import Candidate

DECODED_STATES = 4096  # decoded states kept per instance (Houdini's posts of one round fit)


class _Group:
    """One quantified candidate at one instance: the conjunction of its index expansions, in
    the interface gpcheck.checker.engines.smt.lemmas expects of an atom (`z3`, `holds`)."""

    def __init__(self, cand: "Candidate", consts: dict[str, int], tuples: list[tuple[int, ...]],
                 names: Sequence[str], decode: Callable[[tuple[int, ...]], dict],
                 columns: "_Columns | None" = None) -> None:
        self.cand, self.consts, self.tuples, self.names = cand, consts, tuples, names
        self.decode = decode
        self.columns = columns if columns is not None else _Columns(names)

    def z3(self, terms: Sequence[z3.ExprRef]) -> z3.BoolRef:
        cols = self.cand.view.columns
        out = []
        for ix in self.tuples:
            vals = [self.columns.concrete(c, self.consts, ix, terms) for c in cols]
            out.append(self.cand.atom.z3(vals))
        return z3.And(*out) if out else z3.BoolVal(True)

    def holds(self, state: tuple[int, ...]) -> bool:
        d = self.decode(state)
        cols = self.cand.view.columns
        atom = self.cand.atom
        return all(atom.holds([c.value(d, self.consts, ix) for c in cols]) for ix in self.tuples)


class _Columns:
    """The Z3 terms of the candidates' columns at one instance, each built once: candidates share
    columns (`done[x]` at x = 0, 1, ...), and building a term through Z3's Python API took most
    of a for-all run's time (Z3 hash-conses terms: the same term built twice is the same AST, so
    sharing changes nothing the solver sees)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = names
        self.terms: Sequence[z3.ExprRef] | None = None  # the state the cached terms are over
        self.by_name: dict[str, z3.ExprRef] = {}
        self.cache: dict[tuple[int, tuple[int, ...]], z3.ExprRef] = {}

    def concrete(self, col: object, consts: dict[str, int], ix: tuple[int, ...],
                 terms: Sequence[z3.ExprRef]) -> z3.ExprRef:
        """`col`'s term at index tuple `ix` over the state `terms` (`consts`: the instance's)."""
        if terms is not self.terms:
            self.terms, self.by_name, self.cache = terms, dict(zip(self.names, terms)), {}
        key = (id(col), ix)  # the columns live as long as their candidates' groups
        hit = self.cache.get(key)
        if hit is None:
            hit = self.cache[key] = col.concrete(consts, ix, self.by_name.__getitem__)  # type: ignore[attr-defined]
        return hit


def _instance(enc: "ParamEncoder", load: Callable[[Mapping[str, int]], ir.Model], point: dict[str, int],
              cands: "list[Candidate]") -> tuple[object, object]:
    """A lemma checker over the candidates' expansions at one instance, and its pdr system."""
    from gpcheck.checker.engines.param.mine import _eval
    from gpcheck.checker.engines.smt.encode import Encoder
    from gpcheck.checker.engines.smt.lemmas import _Checker
    from gpcheck.checker.engines.smt.pdr import _System
    from gpcheck.gpmodel import compile_model

    model = load(point)
    system = _System(Encoder(model))
    cm = compile_model(model)
    names = [sl.name for sl in system.enc.slots]
    # one decode per state, not one per (candidate, state): Houdini evaluates every active
    # candidate on the same few posts (the decoded dicts are only read)
    decode = functools.lru_cache(maxsize=DECODED_STATES)(cm.layout.decode)
    consts = {n: point[n] for n in enc.pm.names}
    groups = []
    columns = _Columns(names)  # one instance, one consts: the groups share their columns' terms
    for c in cands:
        ranges = [range(_eval(d.lo, consts, enc), _eval(d.hi, consts, enc) + 1) for d in c.view.domains]
        tuples = [ix for ix in itertools.product(*ranges)
                  if not (c.view.distinct and ix[0] == ix[1])]
        groups.append(_Group(c, consts, tuples, names, decode, columns))
    ck = _Checker(system, groups, 0)  # type: ignore[arg-type]
    ck.cm = cm  # type: ignore[attr-defined]
    ck.table = _GroupTable(groups, decode)  # type: ignore[attr-defined]
    return ck, system


class _GroupTable:
    """Houdini's bulk evaluation of the candidates at one instance (the `table` of
    gpcheck.checker.engines.smt.lemmas.houdini): a state's rows of a view (one per index tuple) are
    computed once for all the candidates over that view, not once per candidate, and the
    atoms are evaluated with numpy (AtomTable). It agrees with `_Group.holds`: a candidate
    holds in a state when its atom holds in every row."""

    def __init__(self, groups: "list[_Group]", decode: Callable[[tuple[int, ...]], dict]) -> None:
        from gpcheck.checker.engines.smt.mining import AtomTable

        self.decode = decode
        by_view: dict[int, list[int]] = {}
        for k, g in enumerate(groups):
            by_view.setdefault(id(g.cand.view), []).append(k)
        self.part = np.zeros(len(groups), dtype=np.int64)  # each candidate's view
        self.local = np.zeros(len(groups), dtype=np.int64)  # and its position among the view's
        self.views: list[tuple[object, list[tuple[int, ...]], dict[str, int], AtomTable]] = []
        for p, ks in enumerate(by_view.values()):
            g = groups[ks[0]]
            self.part[ks], self.local[ks] = p, np.arange(len(ks))
            self.views.append((g.cand.view, g.tuples, g.consts, AtomTable([groups[k].cand.atom for k in ks])))

    def _rows(self, p: int, decoded: list[dict]) -> np.ndarray:
        view, tuples, consts, _ = self.views[p]
        cols = view.columns  # type: ignore[attr-defined]
        rows = [[c.value(d, consts, ix) for c in cols] for d in decoded for ix in tuples]
        return np.asarray(rows, dtype=np.int64).reshape(len(rows), len(cols))

    def _decoded(self, states: np.ndarray) -> list[dict]:
        return [self.decode(tuple(int(x) for x in row)) for row in states]

    def holds_all(self, states: np.ndarray, which: np.ndarray) -> np.ndarray:
        """For the candidates `which`, whether each holds in every one of `states`."""
        out = np.ones(len(which), dtype=bool)
        decoded = self._decoded(states)
        parts = self.part[which]
        for p in np.unique(parts):
            at = np.nonzero(parts == p)[0]
            out[at] = self.views[p][3].holds_all(self._rows(int(p), decoded), self.local[which[at]])
        return out

    def rows_satisfying(self, states: np.ndarray, which: np.ndarray) -> np.ndarray:
        """For each of `states`, whether every candidate of `which` holds in it."""
        return np.asarray([bool(self.holds_all(row[None, :], which).all()) for row in states], dtype=bool)


class FixedSize:
    """Houdini and relative-induction cores at one instance over one candidate list, the
    quantifier-free encoding built once (it takes seconds: cwsr at Q=N=W=L=2 has 300 candidates
    over 24 `ops` elements) and every later call switching candidates by assumptions."""

    def __init__(self, enc: "ParamEncoder", load: Callable[[Mapping[str, int]], ir.Model], point: dict[str, int],
                 cands: "list[Candidate]") -> None:
        self.ck, self.system = _instance(enc, load, point, cands)

    def survivors(self, active: Sequence[int], deadline: Deadline) -> list[int] | None:
        """The largest subset of `active` inductive at this instance (None: no answer in time)."""
        from gpcheck.checker.engines.smt.lemmas import _successors, houdini

        return houdini(self.ck, list(active), deadline, _successors(self.ck.cm),  # type: ignore[attr-defined]
                       table=self.ck.table)  # type: ignore[attr-defined]

    def core(self, active: Sequence[int], prop: ir.Invariant | ir.TransitionProperty | str,
             deadline: Deadline, assumed: Sequence[str] = ()) -> tuple[list[int] | None, str]:
        """The candidates of `active` (all inductive here) a proof of `prop` at this instance
        uses, closed under induction, and ""; or None and why there is none: the property is
        not inductive relative to them here, or Z3 gave no answer within the step budget or
        the time (`Deadline.why`: `step limit`, `timeout`). `prop` "range": the candidates
        that exclude every modelling error, the invariants named `assumed` assumed."""
        from gpcheck.checker.engines.smt.lemmas import TRIM_ROUNDS, closed_core, small_core

        ck, system = self.ck, self.system
        s, t = system.s, ck.t
        active = list(active)
        if isinstance(prop, str):  # "range": the candidates that exclude every modelling error here
            return self._error_core(active, deadline, assumed)
        model = system.enc.model  # the property as this instance states it
        prop = next(p for p in (*model.invariants, *model.transitions) if p.name == prop.name)
        if isinstance(prop, ir.Invariant):
            hs, ht = system.enc.holds(prop.expr, s), system.enc.holds(prop.expr, t)
            seed = small_core(ck, deadline, [hs, ck.trans, z3.Not(ht)], active)
            got = None if seed is None else closed_core(ck, active, seed, [hs], deadline, TRIM_ROUNDS)
        else:
            seed = small_core(ck, deadline, [ck.trans, z3.Not(system.enc.holds(prop.expr, s, t))], active)
            got = None if seed is None else closed_core(ck, active, seed, [], deadline, TRIM_ROUNDS)
        if got is not None:
            return got, ""
        # a check without `unsat` is `sat` (a counterexample to induction: these queries are
        # quantifier-free) unless the budget ran out during it (then it says `unknown`)
        if deadline.expired:
            return None, f"Z3 gave no answer ({deadline.why()})"
        return None, ("not inductive relative to them" if seed is None
                      else "no closed core: the candidates are not inductive together here")

    def _error_core(self, active: list[int], deadline: Deadline, assumed: Sequence[str]
                    ) -> tuple[list[int] | None, str]:
        """The candidates of `active` (all inductive here) that exclude every modelling error at
        this instance (an action's, a state predicate's, a transition property's on a step: pdr's
        `range` obligations), closed under induction; or None and why not
        (NOTE(for-all-errors) in checker/engines/param/errors.py)."""
        from gpcheck.checker.engines.smt.lemmas import TRIM_ROUNDS, closed_core, small_core
        from gpcheck.checker.engines.smt.terms import mk_and, mk_or

        ck, system = self.ck, self.system
        enc, s, t = system.enc, system.s, ck.t
        bad = [mk_or(*(c.error for c in system.clauses), enc.property_errors(s))]
        if enc.model.transitions:
            bad.append(mk_and(ck.trans, enc.step_errors(s, t)))
        invs = [enc.holds(p.expr, s) for p in enc.model.invariants if p.name in assumed]
        seed: set[int] = set()
        for b in bad:
            if z3.is_false(z3.simplify(b)):
                continue
            got = small_core(ck, deadline, [*invs, b], active)
            if got is None:
                return None, (f"Z3 gave no answer ({deadline.why()})" if deadline.expired
                              else "a modelling error is not excluded by them here")
            seed |= got
        core = closed_core(ck, active, seed, invs, deadline, TRIM_ROUNDS)
        if core is not None:
            return core, ""
        return None, (f"Z3 gave no answer ({deadline.why()})" if deadline.expired
                      else "no closed core: the candidates are not inductive together here")

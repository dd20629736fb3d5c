"""Universally quantified hypotheses replaced by their instances at the query's index terms.

Z3's E-matching does not decide consecution of many quantified lemmas over nested arrays
(cwsr: `unknown`, or no answer in minutes). A query `H and T and not G` with the
hypotheses `H` universally quantified over array indices is instead weakened to
`H[terms] and T and not G`, where `H[terms]` is the conjunction of `H`'s instances at the
ground index terms of `T and not G` (the action's parameters, `rptr[q]` where it indexes
`ops`, the skolem indices of the negated goal), each term only at a binder of the same index
range (the domain keys of checker/engines/param/mine.py). This is the instantiation the array
property fragment's decision procedure uses (Bradley, Manna, Sipma 2006).

Soundness: every instance is implied by the quantified formula, and a universal quantifier
is replaced only where it occurs positively in a hypothesis, so the weakened query is
implied by the original: its `unsat` proves the original `unsat`. A `sat` answer may be
spurious (an instance that was needed is missing); callers only *drop* candidates on it,
which never makes a proof unsound, or report the property as not proved."""

from __future__ import annotations

import itertools
import weakref
from typing import Iterable, Sequence

import z3

from gpcheck.checker.engines.param.encode import ParamEncoder, PState
from gpcheck.checker.engines.smt.terms import subterms

MAX_INSTANCES = 4096  # per quantifier; beyond that the quantifier stays for E-matching

# per encoder, dropped with it: each quantifier's binder keys under one set of array keys. Every
# consecution check builds an Instantiator over the same hypotheses, and walking a quantifier's
# body through Z3's Python API took a fifth of a for-all run. The quantifier is kept beside its
# keys, so its id is not reused while the entry lives.
# (array keys, quantifier id) -> (the quantifier, its binder keys)
_BINDER_CACHE: "weakref.WeakKeyDictionary[ParamEncoder, dict[tuple[object, int], tuple]]" = weakref.WeakKeyDictionary()


def clear_interrupt() -> None:
    """Clear a Z3 interrupt left from an earlier stop in this process (the budget interrupts
    the main context; the flag stays set for everything but a solver check, which resets it,
    so a later `substitute` or `simplify` fails with 'canceled'). A stop in effect now is
    re-sent by the budget's watchdog every tick, so this never hides one."""
    z3.Solver().check()


class Instantiator:
    """Index-range keys of the state arrays of some states, and instantiation over them."""

    def __init__(self, enc: ParamEncoder, states: Iterable[PState]) -> None:
        from gpcheck.checker.engines.param.mine import _chain

        self.enc = enc
        self.keys: dict[str, list[str]] = {}
        for s in states:
            for v in enc.model.vars:
                if v.index not in s.vals:
                    continue  # counted rows (checker/engines/param/counters.py): no array term
                term = s.vals[v.index]
                doms, _ = _chain(enc, v.type)
                if doms and isinstance(term, z3.ExprRef):
                    self.keys[term.decl().name()] = [d.key for d in doms]
            if enc.counters is not None:  # a symbolic-valued group's arrays (checker/engines/param/symvalue.py)
                self.keys.update(enc.counters.array_keys(s.counts))
        self._sig = tuple(sorted((k, tuple(v)) for k, v in self.keys.items()))  # _BINDER_CACHE's key

    # -- keys -----------------------------------------------------------------------------

    def key_of(self, arr: z3.ExprRef, depth: int = 0) -> str | None:
        """The index range of `arr`'s outermost dimension (arr: a state array, a Select of
        one, a Store or an If over them), or None."""
        while True:
            if z3.is_select(arr):
                arr, depth = arr.arg(0), depth + 1
            elif z3.is_store(arr):
                arr = arr.arg(0)
            elif z3.is_app_of(arr, z3.Z3_OP_ITE):
                k = self.key_of(arr.arg(1), depth)
                return k if k is not None else self.key_of(arr.arg(2), depth)
            elif z3.is_const(arr) and arr.decl().name() in self.keys:
                chain = self.keys[arr.decl().name()]
                return chain[depth] if depth < len(chain) else None
            else:
                return None

    def index_terms(self, formulas: Sequence[z3.ExprRef]) -> dict[str, list[z3.ExprRef]]:
        """The ground terms at Select and Store index positions, by index range."""
        out: dict[str, dict[int, z3.ExprRef]] = {}
        for e in subterms(formulas):
            if (z3.is_select(e) or z3.is_store(e)) and _ground(e.arg(1)):
                k = self.key_of(e.arg(0))
                if k is not None:
                    out.setdefault(k, {})[e.arg(1).get_id()] = e.arg(1)
        return {k: list(v.values()) for k, v in out.items()}

    def _binder_keys(self, q: z3.QuantifierRef) -> list[str | None]:
        cache = _BINDER_CACHE.setdefault(self.enc, {})
        hit = cache.get((self._sig, q.get_id()))
        if hit is not None and hit[0].eq(q):
            return list(hit[1])
        keys = self._scan_binder_keys(q)
        cache[(self._sig, q.get_id())] = (q, list(keys))
        return keys

    def _scan_binder_keys(self, q: z3.QuantifierRef) -> list[str | None]:
        n = q.num_vars()
        keys: list[str | None] = [None] * n
        for i in range(n):  # binders named by checker/engines/param/encode.py's range_binder
            _, at, key = q.var_name(i).partition("@")
            if at:
                keys[i] = key

        def scan(e: z3.ExprRef, offset: int) -> None:
            if z3.is_quantifier(e):
                scan(e.body(), offset + e.num_vars())
                return
            if z3.is_select(e) and z3.is_var(e.arg(1)):
                i = z3.get_var_index(e.arg(1)) - offset
                if 0 <= i < n and keys[n - 1 - i] is None:
                    keys[n - 1 - i] = self.key_of(e.arg(0))
            for c in e.children():
                scan(c, offset)

        scan(q.body(), 0)
        return keys

    # -- instantiation --------------------------------------------------------------------

    def expand(self, f: z3.ExprRef, terms: dict[str, list[z3.ExprRef]]) -> z3.ExprRef:
        """`f` (a hypothesis) with every universal quantifier in a positive position whose
        binders all index arrays replaced by its instances at `terms` (a weakening)."""
        if z3.is_quantifier(f):
            if not f.is_forall():
                return f
            keys = self._binder_keys(f)
            if any(k is None for k in keys):
                return f
            pools = [terms.get(k, []) for k in keys]  # type: ignore[arg-type]
            count = 1
            for p in pools:
                count *= len(p)
            if count > MAX_INSTANCES:
                return f
            body = f.body()
            out = []
            for combo in itertools.product(*pools):
                # de Bruijn: Var(0) is the last binder
                inst = z3.substitute_vars(body, *reversed(combo))
                out.append(self.expand(inst, terms))
            return z3.And(*out) if out else z3.BoolVal(True)
        if z3.is_and(f):
            return z3.And(*[self.expand(c, terms) for c in f.children()])
        if z3.is_or(f):
            return z3.Or(*[self.expand(c, terms) for c in f.children()])
        if z3.is_implies(f):
            return z3.Implies(f.arg(0), self.expand(f.arg(1), terms))
        return f


def skolemize(goal: z3.BoolRef, tag: str) -> z3.BoolRef:
    """`goal` (to be satisfied) with the universal quantifiers under its negations replaced
    by fresh constants: equisatisfiable, and the constants become index terms."""
    counter = itertools.count()

    def neg(f: z3.ExprRef) -> z3.ExprRef:  # a formula equivalent to not f, skolemized
        if z3.is_not(f):
            return pos(f.arg(0))
        if z3.is_quantifier(f) and f.is_forall():
            consts = [z3.Const(f"{tag}!{next(counter)}_{f.var_name(i)}", f.var_sort(i)) for i in range(f.num_vars())]
            return neg(z3.substitute_vars(f.body(), *reversed(consts)))
        if z3.is_implies(f):
            return z3.And(f.arg(0), neg(f.arg(1)))
        if z3.is_and(f):
            return z3.Or(*[neg(c) for c in f.children()])
        if z3.is_or(f):
            return z3.And(*[neg(c) for c in f.children()])
        return z3.Not(f)

    def pos(f: z3.ExprRef) -> z3.ExprRef:
        if z3.is_not(f):
            return neg(f.arg(0))
        if z3.is_and(f):
            return z3.And(*[pos(c) for c in f.children()])
        if z3.is_or(f):
            return z3.Or(*[pos(c) for c in f.children()])
        return f

    return pos(goal)  # type: ignore[return-value]


def _ground(e: z3.ExprRef) -> bool:
    todo = [e]
    while todo:
        x = todo.pop()
        if z3.is_var(x) or z3.is_quantifier(x):
            return False
        todo.extend(x.children())
    return True

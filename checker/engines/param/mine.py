"""Quantified candidate invariants from the reachable states of small instances (DistAI-style).

A *view* is a tuple of index variables x1..xd, one per index range of some array chain of the
model (`ops: [0..Q-1] -> [0..N-1] -> [0..W-1] -> ..` gives the view (q-range, n-range,
w-range)). A view's *columns* are what is visible at one index tuple: scalar variables, the
named constants, the elements of every array whose ranges embed in the view's (`ws[x1][x3]`,
`ops[x1][x2][x3]`), the index variables, and position columns `cmp(x + c, v)` in {-1, 0, 1}
comparing an index with an int column whose range grows with the same constant (`x2 < rptr[x1]`,
`x2 + 1 == rptr`). Every (instance, state, index tuple) is a row; checker/engines/smt/mining.py's
templates over the rows give atoms, each read as `all x1 .. xd in their ranges: atom`.
The rows only propose; Z3 decides with the sizes symbolic (checker/engines/param/prove.py)."""

from __future__ import annotations

import itertools
import random
import weakref
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.param.encode import ParamEncoder, PState, range_key
from gpcheck.checker.engines.param.extract import ParamModel, Unsupported, consts_in as _consts_in
from gpcheck.checker.engines.smt.mining import Atom, mine_atoms

MAX_ROWS = 6_000  # rows per view given to the miner (a seeded sample beyond that: only weakens the filter)
INDEX_NAMES = ("x", "y", "z", "u", "v", "w")


@dataclass(frozen=True)
class Domain:
    lo: z3.ArithRef
    hi: z3.ArithRef
    key: str
    symmetric: str | None = None  # the symmetric type the index ranges over (printed by name)
    # an index of an enum or bool type (printed by its name): it never shares a view position
    # with an int range of the same bounds, and gets no numeric index columns (`x <= 1` is no
    # gpspec for an enum binder)
    tname: str | None = None

    @property
    def shape(self) -> tuple[str, str | None]:
        """What an array's dimension must match to sit at this view position."""
        return self.key, self.tname


@dataclass
class Column:
    name: str  # gpspec text
    type: ir.ScalarType  # guides the miner (IntType(None, None) for unbounded comparisons)
    kind: str  # scalar | const | elem | index | cmp
    term: Callable[[PState, Sequence[z3.ArithRef]], z3.ExprRef]
    value: Callable[[dict, dict[str, int], tuple[int, ...]], int]  # (decoded state, constants, index values)
    eq_text: Callable[[int, bool], str] | None = None  # condition text for cmp columns
    consts: frozenset[str] = frozenset()  # constants the column's range grows with
    # the column in one instance: (constants, index values, slot term by slot name) -> term
    concrete: Callable[[dict[str, int], tuple[int, ...], Callable[[str], z3.ExprRef]], z3.ExprRef] | None = None
    uses: frozenset[int] = frozenset()  # the view's index positions the column reads
    pair: tuple[int, int] | None = None  # an order column: the positions of the two counters it compares (widen.py)


@dataclass
class View:
    domains: tuple[Domain, ...]
    names: tuple[str, ...]
    columns: list[Column]
    distinct: bool = False  # a pair view `all x, y` over one range: only x != y (not an array chain
    # whose two ranges happen to have the same bounds, as [0..1] -> [0..S-1] at S = 2)


class _Slot:
    """What mine_atoms needs of a column."""

    def __init__(self, name: str, t: ir.ScalarType) -> None:
        self.name, self.type = name, t


def _domain(enc: ParamEncoder, t: ir.Type) -> Domain:
    lo, hi = enc.bounds(t)
    lo, hi = z3.simplify(lo), z3.simplify(hi)
    if isinstance(t, ir.IntType):
        return Domain(lo, hi, range_key(lo, hi), t.symmetric)
    return Domain(lo, hi, range_key(lo, hi), None, "bool" if isinstance(t, ir.BoolType) else str(t))


def _chain(enc: ParamEncoder, t: ir.Type) -> tuple[list[Domain], ir.Type]:
    doms: list[Domain] = []
    while isinstance(t, ir.ArrayType):
        doms.append(_domain(enc, t.index))
        t = t.elem
    return doms, t


def _embeddings(chain: list[Domain], view: tuple[Domain, ...]) -> list[tuple[int, ...]]:
    """The ways to map each dimension of `chain` to a distinct, increasing view position."""
    out = []
    for pos in itertools.combinations(range(len(view)), len(chain)):
        if all(view[p].shape == d.shape for p, d in zip(pos, chain)):
            out.append(pos)
    return out


def views(enc: ParamEncoder, pairs: bool = False) -> list[View]:
    """The scalar view, one view per distinct array index chain, and (with `pairs`) one
    two-index view per range that indexes some array (`all x, y` facts such as mutual
    exclusion)."""
    model = enc.model
    chains: list[tuple[Domain, ...]] = [()]
    for v in model.vars:
        doms, _ = _chain(enc, v.type)
        if doms and tuple(d.shape for d in doms) not in [tuple(d.shape for d in c) for c in chains]:
            chains.append(tuple(doms))
    out = [_view(enc, c) for c in chains]
    if pairs:
        singles = {c[0].shape: c[0] for c in chains if len(c) == 1}
        for d in singles.values():
            v = _view(enc, (d, d))
            out.append(View(v.domains, v.names, v.columns, distinct=True))
    return out


def _view(enc: ParamEncoder, doms: tuple[Domain, ...]) -> View:
    model, pm = enc.model, enc.pm
    names = tuple(_index_name(model, k) for k in range(len(doms)))
    cols: list[Column] = []
    unbounded = ir.IntType(None, None)
    for n in pm.names:
        cols.append(Column(n, unbounded, "const", lambda s, xs, n=n: pm.consts[n], lambda d, c, ix, n=n: c[n],
                           concrete=lambda c, ix, slot, n=n: z3.IntVal(c[n])))
    for v in model.vars:
        doms_v, leaf = _chain(enc, v.type)
        if isinstance(leaf, ir.StructType):
            if doms_v:
                continue
            for f, ft in leaf.fields:
                if ir.is_scalar(ft):
                    cols.append(Column(f"{v.name}.{f}", _mine_type(ft), "scalar",
                                       lambda s, xs, vi=v.index, f=f: s.vals[vi][f],  # type: ignore[index]
                                       lambda d, c, ix, name=v.name, f=f, t=ft: _num(d[name][f], t),
                                       concrete=lambda c, ix, slot, text=f"{v.name}.{f}": slot(text)))
            continue
        grows = _grows(enc, leaf)
        if not doms_v:
            cols.append(Column(v.name, _mine_type(leaf), "scalar", lambda s, xs, vi=v.index: s.vals[vi],  # type: ignore[misc]
                               lambda d, c, ix, name=v.name, t=leaf: _num(d[name], t), consts=grows,
                               concrete=lambda c, ix, slot, name=v.name: slot(name)))
            continue
        for emb in _embeddings(doms_v, doms):
            text = v.name + "".join(f"[{names[p]}]" for p in emb)

            def term(s: PState, xs: Sequence[z3.ArithRef], vi: int = v.index, emb: tuple[int, ...] = emb) -> z3.ExprRef:
                if enc.counted(vi):  # a row's component (checker/engines/param/counters.py row_formula)
                    from gpcheck.checker.engines.param.counters import element

                    return element(enc, vi, [xs[p] for p in emb])
                a = s.vals[vi]
                for p in emb:
                    a = z3.Select(a, xs[p])  # type: ignore[arg-type]
                return a  # type: ignore[return-value]

            def value(d: dict, c: dict[str, int], ix: tuple[int, ...], name: str = v.name,
                      emb: tuple[int, ...] = emb, vt: ir.Type = v.type) -> int:
                a = d[name]
                t = vt
                for p in emb:
                    assert isinstance(t, ir.ArrayType)
                    a = a[ix[p] - _lo_of(t.index, c, enc)] if isinstance(a, list) else a[_key(t.index, ix[p])]
                    t = t.elem
                return _num(a, t)

            def concrete(c: dict[str, int], ix: tuple[int, ...], slot: Callable[[str], z3.ExprRef],
                         name: str = v.name, emb: tuple[int, ...] = emb, vt: ir.Type = v.type) -> z3.ExprRef:
                text, t = name, vt
                for p in emb:
                    assert isinstance(t, ir.ArrayType)
                    shown = ir.format_scalar(t.index, ix[p])  # type: ignore[arg-type]
                    text += f"[{str(shown).lower() if isinstance(shown, bool) else shown}]"
                    t = t.elem
                return slot(text)

            cols.append(Column(text, _mine_type(leaf), "elem", term, value, consts=grows, concrete=concrete,
                               uses=frozenset(emb)))
    for k, name in enumerate(names):
        if doms[k].tname is not None:
            continue
        cols.append(Column(name, unbounded, "index", lambda s, xs, k=k: xs[k], lambda d, c, ix, k=k: ix[k],
                           concrete=lambda c, ix, slot, k=k: z3.IntVal(ix[k]), uses=frozenset({k})))
    # position columns: an index against an int column whose range grows with the same constants
    base = list(cols)
    for k, name in enumerate(names):
        if doms[k].tname is not None:
            continue
        dk = _consts_in(doms[k].hi, pm.names)
        for col in base:
            if col.kind not in ("scalar", "elem") or not isinstance(col.type, ir.IntType):
                continue
            if not (dk & col.consts):
                continue
            for c in (0, 1):
                cols.append(_cmp_column(name, k, c, col))
    cols += _product_columns(enc, base)
    return View(doms, names, cols)


def _product_columns(enc: ParamEncoder, base: Sequence[Column]) -> list[Column]:
    """NOTE(product-fit): for each pair (n, m) of named constants the model multiplies
    (`NB * BLEN`), the constant column `n * m`, and `n * c` for each int column c whose range
    grows with m but not with n (`BLEN * done[x]`, done: 0..NB), and the same with n and m
    swapped: the scale an accounting relation needs when one of its coefficients is itself a
    constant (`work[x] == BLEN * done[x] + ...`: a fixed coefficient fits only one BLEN). Each
    term is a product of two Z3 integers (nonlinear: only Z3's `unsat` counts, as always)."""
    pm = enc.pm
    out: list[Column] = []
    unbounded = ir.IntType(None, None)
    for n, m in pm.products:
        out.append(Column(f"{n} * {m}", unbounded, "const", lambda s, xs, n=n, m=m: pm.consts[n] * pm.consts[m],
                          lambda d, c, ix, n=n, m=m: c[n] * c[m],
                          concrete=lambda c, ix, slot, n=n, m=m: z3.IntVal(c[n] * c[m])))
        for a, b in ((n, m), (m, n)) if n != m else ((n, n),):
            for col in base:
                if col.kind not in ("scalar", "elem") or not isinstance(col.type, ir.IntType):
                    continue
                if b not in col.consts or (a != b and a in col.consts):
                    continue
                out.append(_scaled_column(pm, a, col))
    return out


def _scaled_column(pm: ParamModel, n: str, col: Column) -> Column:
    """`n * col` (a named constant times a column)."""
    assert col.concrete is not None
    inner = col.concrete
    return Column(f"{n} * {col.name}", col.type, col.kind,
                  lambda s, xs: pm.consts[n] * col.term(s, xs),  # type: ignore[operator]
                  lambda d, c, ix: c[n] * col.value(d, c, ix),
                  consts=col.consts | {n}, uses=col.uses,
                  concrete=lambda c, ix, slot: z3.IntVal(c[n]) * inner(c, ix, slot))


def _cmp_column(name: str, k: int, c: int, col: Column) -> Column:
    lhs = name if c == 0 else f"{name} + {c}"

    def term(s: PState, xs: Sequence[z3.ArithRef]) -> z3.ExprRef:
        a, b = xs[k] + c, col.term(s, xs)
        return z3.If(a < b, -1, z3.If(a == b, 0, 1))  # type: ignore[operator]

    def value(d: dict, cs: dict[str, int], ix: tuple[int, ...]) -> int:
        a, b = ix[k] + c, col.value(d, cs, ix)
        return -1 if a < b else (0 if a == b else 1)

    def eq_text(v: int, positive: bool) -> str:
        op = {-1: "<", 0: "==", 1: ">"}[v] if positive else {-1: ">=", 0: "!=", 1: "<="}[v]
        return f"{lhs} {op} {col.name}"

    def concrete(cs: dict[str, int], ix: tuple[int, ...], slot: Callable[[str], z3.ExprRef]) -> z3.ExprRef:
        a, b = ix[k] + c, col.concrete(cs, ix, slot)  # type: ignore[misc]
        return z3.If(a < b, -1, z3.If(b == a, 0, 1))  # type: ignore[operator]

    return Column(f"cmp({lhs}, {col.name})", ir.IntType(-1, 1), "cmp", term, value, eq_text, concrete=concrete,
                  uses=col.uses | {k})


def _mine_type(t: ir.Type) -> ir.ScalarType:
    if isinstance(t, ir.IntType):
        return ir.IntType(None, None)  # bounds depend on the instance: every observed bound is a candidate
    assert isinstance(t, (ir.BoolType, ir.EnumType))
    return t


def _grows(enc: ParamEncoder, t: ir.Type) -> frozenset[str]:
    if isinstance(t, ir.IntType) and t.hi is not None:
        return frozenset(_consts_in(enc.pm.num(t, "hi", t.hi), enc.pm.names))
    return frozenset()


def _num(v: object, t: ir.Type) -> int:
    if isinstance(t, ir.EnumType) and isinstance(v, str):
        return t.members.index(v)
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    raise Unsupported(f"a state value {v!r} the miner cannot read")


# per encoder, dropped with it: the keys are ids of its model's types, which a later run's
# objects may reuse once this model is gone (NOTE(fresh-context): a run in-process is a fresh one)
_LO_CACHE: "weakref.WeakKeyDictionary[ParamEncoder, dict[tuple[int, tuple[tuple[str, int], ...]], int]]" = \
    weakref.WeakKeyDictionary()


def _lo_of(t: ir.Type, consts: dict[str, int], enc: ParamEncoder) -> int:
    cache = _LO_CACHE.setdefault(enc, {})
    key = (id(t), tuple(sorted(consts.items())))
    hit = cache.get(key)
    if hit is None:
        lo, _ = enc.bounds(t)
        hit = cache[key] = _eval(lo, consts, enc)
    return hit


def _key(t: ir.Type, v: int) -> str:
    assert isinstance(t, ir.EnumType)
    return t.members[v]


def _eval(e: z3.ArithRef, consts: dict[str, int], enc: ParamEncoder) -> int:
    sub = [(enc.pm.consts[n], z3.IntVal(consts[n])) for n in enc.pm.names]
    return z3.simplify(z3.substitute(e, *sub)).as_long()  # type: ignore[attr-defined]


def _index_name(model: ir.Model, k: int) -> str:
    taken = {v.name for v in model.vars} | {c.name for c in model.constants}
    taken |= {m for e in model.enums for m in e.members}
    name = INDEX_NAMES[k]
    while name in taken:
        name += "_"
    return name


def view_rows(enc: ParamEncoder, view: View, samples: list[tuple[dict[str, int], list[dict]]], seed: int) -> np.ndarray:
    """The rows of a view over the sampled states of each instance (constants, decoded
    states): a seeded sample of at most MAX_ROWS (state, index tuple) pairs."""
    picks: list[tuple[dict[str, int], dict, tuple[int, ...]]] = []
    for consts, states in samples:
        ranges = [range(_eval(d.lo, consts, enc), _eval(d.hi, consts, enc) + 1) for d in view.domains]
        tuples = [ix for ix in itertools.product(*ranges)
                  if not (view.distinct and ix[0] == ix[1])]
        picks += [(consts, d, ix) for d in states for ix in tuples]
    if len(picks) > MAX_ROWS:
        picks = random.Random(seed).sample(picks, MAX_ROWS)
    rows = [[col.value(d, consts, ix) for col in view.columns] for consts, d, ix in picks]
    return np.asarray(rows, dtype=np.int64) if rows else np.zeros((0, len(view.columns)), dtype=np.int64)


def mine_view(view: View, rows: np.ndarray, limit: int) -> list[Atom]:
    """Atoms over the view's columns that hold in every row and may hold at every size: no
    condition on a constant, an index, or a growing column at other than 0; no numeric bound
    beyond 1 on a growing column or a constant (`waves_run[x] <= 3` is a fact about the small
    sizes sampled); and in an indexed view, every atom reads at every one of the view's indices
    (one that does not is the same candidate as in a smaller view)."""
    if len(rows) == 0:
        return []
    cols = view.columns
    slots = [_Slot(c.name, c.type) for c in cols]
    everywhere = frozenset(range(len(view.names)))

    def cond_ok(i: int, v: int) -> bool:
        return not (cols[i].kind in ("const", "index") or (cols[i].consts and v != 0))

    atoms = mine_atoms(slots, [tuple(r) for r in rows.tolist()], limit * 20, cond_ok=cond_ok,
                       vary=True)  # type: ignore[arg-type]
    out = []
    for a in atoms:
        if frozenset().union(*[cols[i].uses for i in a.slots()]) != everywhere:
            continue
        if any(cols[i].kind in ("const", "index") or (cols[i].consts and v != 0) for i, v in a.cond):
            continue
        body_cols = [i for _, i in a.terms]
        if a.kind == "le" and any(cols[i].kind == "cmp" for i in body_cols):
            continue  # a position column is a condition, not a quantity
        if all(cols[i].kind in ("const", "index", "cmp") for i in body_cols):
            continue
        if a.kind == "le" and abs(a.k) > 1 and any(cols[i].consts or cols[i].kind == "const" for i in body_cols):
            continue
        if view.names and not any(cols[i].kind in ("elem", "index", "cmp", "aggv") for i in body_cols + [i for i, _ in a.cond]):
            continue  # a scalar fact: the scalar view has it
        out.append(a)
        if len(out) >= limit:
            break
    return out

"""Nullable references: second-round `--for-all` templates about the items a model points at.

Models of queues and pipelines keep *references* to items of a range X (kernels `0..N-1`):
int variables whose declared range is X plus one value above it meaning "none" (`held:
0..N`, N for none; `run_k`), and fixed-range arrays of them (`win: [..] -> [0..CAP-1] -> 0..N`,
an AQL window), often with a fill count (`win_n: 0..CAP`, slots `j < win_n` valid). Two facts
about such pipelines are out of reach of the other templates, and proofs of "nothing is lost"
need both:

- *exclusion*: in a view whose last index x ranges over X, the bool column "x is none of the
  references" (`x != held[q] and x != run_k[q] and (all j in 0..CAP-1: j >= win_n[q] or
  win[q][j] != x)`) as a condition, with up to two more conditions on the element's own state
  (`task[q] == Executing and x < hq_r[q] and <x is none of them> implies full[q][x]`: an item
  the pipeline has passed and no stage still holds was completed);
- *pipeline positions*: the conditional term `(if r != N then 1 else 0)` for each reference
  (1 when it holds an item) as a column, with bounds on sums of them and of the fill counts
  (`win_n[q] + (if held[q] != N then 1 else 0) + (if run_k[q] != N then 1 else 0) <= 3`:
  the items in flight at once), and in a view with a fixed-range index j, the
  position `j < fill` as a condition; under "this reference holds an item" and at most one
  phase condition, the linear equalities of up to five columns through the reference
  (`run_k[q] + 1 + win_n[q] + (if held[q] != N then 1 else 0) == hq_r[q]`: the items in
  flight are the ones just below the read pointer, in order).

Like every candidate these only propose: the fixed-size Houdini filters them and Z3 decides
with the sizes symbolic (checker/engines/param/prove.py)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.param.encode import ParamEncoder, PState, range_key
from gpcheck.checker.engines.param.mine import (
    Column,
    View,
    _chain,
    _cmp_column,
    _consts_in,
    _embeddings,
    _lo_of,
)
from gpcheck.checker.engines.param.candidates import affine_text
from gpcheck.checker.engines.smt.mining import Atom

PHASE_VALUES = 16  # a condition column has at most this many observed values
MAX_TERMS = 5  # columns in one pipeline equality
MAX_COEFFICIENT = 2  # |c| in a kept pipeline equality (positions count items: 1s)
MAX_EQ_COLUMNS = 14  # term columns a pipeline equality is looked for among
MAX_CONDITION_SETS = 600  # (validity, phases) condition sets examined per view
_BINDERS = ("j", "i", "k", "m", "jj")


@dataclass(frozen=True)
class _Ref:
    col: int  # the reference's column in the view
    sentinel: z3.ArithRef  # its "none" value (the referenced range's hi + 1)
    text: str  # the sentinel in gpspec syntax


@dataclass(frozen=True)
class _RefArray:
    var: ir.Var
    prefix: tuple[int, ...]  # view positions of the array's leading indices
    values: range  # its last (fixed-range) index
    index: ir.IntType  # the last index's type
    fill: ir.Var | None  # a count of valid slots (`j < fill`) with the same leading indices


def ref_view(enc: ParamEncoder, view: View) -> tuple[View, dict[int, int]]:
    """`view` with an indicator column per nullable reference, the position column
    `j < fill` of a fixed-range reference array's index, and the exclusion column of a view
    whose last index ranges over referenced items; and, per validity column added, the
    reference column it validates (the column `(if r != N then 1 else 0)` validates r)."""
    cols = list(view.columns)
    valid: dict[int, int] = {}
    for ref in _refs(enc, view):
        valid[len(cols)] = ref.col
        cols.append(_indicator(view.columns[ref.col], ref))
    if len(view.names) == 2:  # a fixed-range reference array's own view: `j < fill`
        arr = _own_array(enc, view)
        if arr is not None and arr.fill is not None:
            by_name = {c.name: k for k, c in enumerate(cols) if c.kind == "elem"}
            fill = by_name.get(_elem_text(arr.fill, view, arr.prefix))
            elem = by_name.get(_elem_text(arr.var, view, arr.prefix + (1,)))
            if fill is not None and elem is not None:
                valid[len(cols)] = elem
                cols.append(_cmp_column(view.names[1], 1, 0, cols[fill]))
    excl = _exclusion(enc, view)
    if excl is not None:
        cols.append(excl)
    return View(view.domains, view.names, cols, view.distinct), valid


def ref_fills(enc: ParamEncoder, view: View) -> list[int]:
    """The view's columns that count a reference array's valid slots (`win_n[x]`)."""
    names = {_elem_text(a.fill, view, a.prefix) for a in _arrays(enc, view, view.domains) if a.fill is not None}
    return [k for k, c in enumerate(view.columns) if c.kind in ("scalar", "elem") and c.name in names]


def ref_atoms(view: View, valid: dict[int, int], fills: list[int], rows: np.ndarray, limit: int) -> list[Atom]:
    """The capacity bounds, the exclusion-conditioned facts, then the pipeline equalities
    (module doc), at most `limit` atoms; `fills` are the view's fill-count columns (`_fills`)."""
    if len(rows) == 0:
        return []
    out = _capacity(view, valid, fills, rows) + _excluded(view, rows) + _positions(view, valid, rows)
    return out[:limit]


def _capacity(view: View, valid: dict[int, int], fills: list[int], rows: np.ndarray) -> list[Atom]:
    """`sum of counts <= k` over two or more of the references' indicators and the fill
    counts, where k is below the sum of their maxima (`win_n[q] + (if held[q] != N then 1
    else 0) + (if run_k[q] != N then 1 else 0) <= CAP + 1`: the items in flight at once)."""
    cols = view.columns
    counts = [k for k in valid if cols[k].kind == "ind"] + fills
    everywhere = frozenset(range(len(view.names)))
    out: list[Atom] = []
    for size in range(2, min(len(counts), 4) + 1):
        for sub in itertools.combinations(counts, size):
            if frozenset().union(*[cols[i].uses for i in sub]) != everywhere:
                continue
            total = rows[:, list(sub)].sum(axis=1)
            k = int(total.max())
            if k < int(rows[:, list(sub)].max(axis=0).sum()):
                out.append(Atom((), "le", tuple((1, i) for i in sub), k))
    return out


# ------------------------------------------------------------------------------ references


def _referenced(enc: ParamEncoder) -> list[tuple[z3.ArithRef, z3.ArithRef]]:
    """The index ranges of the model's arrays that grow with the symbolic constants."""
    out: list[tuple[z3.ArithRef, z3.ArithRef]] = []
    for v in enc.model.vars:
        t = v.type
        while isinstance(t, ir.ArrayType):
            lo, hi = enc.bounds(t.index)
            if _consts_in(z3.simplify(hi), enc.pm.names) and range_key(lo, hi) not in [range_key(*r) for r in out]:
                out.append((z3.simplify(lo), z3.simplify(hi)))
            t = t.elem
    return out


def _sentinel(enc: ParamEncoder, var: ir.Var) -> tuple[z3.ArithRef, z3.ArithRef] | None:
    """(lo, hi) of the referenced range when `var` is a nullable reference: its elements'
    range is that range plus a "none" value above it, and it starts at "none" (`held = N`)."""
    _, t = _chain(enc, var.type)
    if not isinstance(t, ir.IntType) or not t.bounded or not var.init or any(v != t.hi for v in var.init):
        return None
    lo, hi = enc.bounds(t)
    for rlo, rhi in _referenced(enc):
        s = z3.Solver()
        s.set("timeout", 2000)
        s.add(*enc.facts, z3.Or(lo != rlo, hi != rhi + 1))
        if s.check() == z3.unsat:
            return rlo, rhi
    return None


def _written_at(model: ir.Model, arr: ir.Var, fill: ir.Var) -> bool:
    """Whether some assignment writes `arr` at an index that reads `fill` (`win[q][win_n[q]] = ..`)."""
    for a in model.actions:
        for st in ir.iter_stmts(a.body):
            if not isinstance(st, ir.Assign) or not isinstance(st.target, ir.Index):
                continue
            e: ir.Expr = st.target
            idx: list[ir.Expr] = []
            while isinstance(e, ir.Index):
                idx.append(e.index)
                e = e.base
            if isinstance(e, ir.VarRef) and e.var == arr.index and idx and any(
                    isinstance(x, ir.VarRef) and x.var == fill.index for x in ir.walk_expr(idx[0])):
                return True
    return False


def _refs(enc: ParamEncoder, view: View) -> list[_Ref]:
    """The view's reference columns: scalars and elements (not at a referenced index
    itself) whose range is a referenced range plus "none"."""
    types = {v.name: v for v in enc.model.vars}
    out: list[_Ref] = []
    for k, c in enumerate(view.columns):
        if c.kind not in ("scalar", "elem"):
            continue
        var = types.get(c.name.split("[")[0])
        if var is None:
            continue
        got = _sentinel(enc, var)
        if got is not None:
            sent = z3.simplify(got[1] + 1)
            out.append(_Ref(k, sent, affine_text(sent)))
    return out


def _indicator(col: Column, ref: _Ref) -> Column:
    """`(if r != NONE then 1 else 0)`: 1 while the reference holds an item."""
    sent = ref.sentinel

    def term(s: PState, xs: Sequence[z3.ArithRef]) -> z3.ExprRef:
        return z3.If(col.term(s, xs) != sent, 1, 0)  # type: ignore[operator]

    def value(d: dict, cs: dict[str, int], ix: tuple[int, ...]) -> int:
        return int(col.value(d, cs, ix) != _at(sent, cs))

    def concrete(cs: dict[str, int], ix: tuple[int, ...], slot: Callable[[str], z3.ExprRef]) -> z3.ExprRef:
        return z3.If(col.concrete(cs, ix, slot) != _at(sent, cs), 1, 0)  # type: ignore[misc, operator]

    def eq_text(v: int, positive: bool) -> str:
        return f"{col.name} {'!=' if bool(v) == positive else '=='} {ref.text}"

    return Column(f"(if {col.name} != {ref.text} then 1 else 0)", ir.IntType(0, 1), "ind", term, value, eq_text,
                  concrete=concrete, uses=col.uses)


_AT: dict[tuple[str, tuple[tuple[str, int], ...]], int] = {}


def _at(e: z3.ArithRef, cs: dict[str, int]) -> int:
    """`e` (a term over the symbolic constants) at the constants `cs`."""
    key = (e.sexpr(), tuple(sorted(cs.items())))
    hit = _AT.get(key)
    if hit is None:
        sub = [(z3.Int(n), z3.IntVal(v)) for n, v in cs.items()]
        hit = _AT[key] = z3.simplify(z3.substitute(e, *sub)).as_long()  # type: ignore[attr-defined]
    return hit


def _arrays(enc: ParamEncoder, view: View, prefix_doms: tuple) -> list[_RefArray]:
    """Reference arrays over a fixed range whose leading indices embed in `prefix_doms`."""
    out: list[_RefArray] = []
    for v in enc.model.vars:
        doms, leaf = _chain(enc, v.type)
        if not doms or _sentinel(enc, v) is None or _embeddings(doms, prefix_doms):
            continue  # (an array whose indices are all the view's is a reference column there)
        t: ir.Type = v.type
        idx: list[ir.Type] = []
        while isinstance(t, ir.ArrayType):
            idx.append(t.index)
            t = t.elem
        last = enc.constant_range(idx[-1])
        if last is None:
            continue
        for emb in _embeddings(doms[:-1], prefix_doms):
            fill = None
            for f in enc.model.vars:
                fdoms, fleaf = _chain(enc, f.type)
                if [d.key for d in fdoms] == [d.key for d in doms[:-1]] and isinstance(fleaf, ir.IntType) \
                        and enc.constant_range(fleaf) == range(0, len(last) + 1) and _written_at(enc.model, v, f):
                    fill = f
                    break
            out.append(_RefArray(v, tuple(emb), last, idx[-1], fill))  # type: ignore[arg-type]
    return out


def _own_array(enc: ParamEncoder, view: View) -> _RefArray | None:
    """The reference array whose chain is this two-index view's (`win[x][y]`)."""
    for arr in _arrays(enc, view, view.domains[:1]):
        if arr.prefix == (0,):
            lo, hi = enc.bounds(arr.index)
            if range_key(lo, hi) == view.domains[1].key:
                return arr
    return None


def _elem_text(v: ir.Var, view: View, positions: tuple[int, ...]) -> str:
    return v.name + "".join(f"[{view.names[p]}]" for p in positions)


def _exclusion(enc: ParamEncoder, view: View) -> Column | None:
    """The bool column "the last index is none of the references" (module doc), or None."""
    if not view.names or view.distinct:
        return None
    last = view.domains[-1]
    if not _consts_in(last.hi, enc.pm.names):
        return None
    refs = [r for r in _refs(enc, view) if len(view.names) - 1 not in view.columns[r.col].uses]
    refs = [r for r in refs if _sentinel_of_range(enc, view.columns[r.col], last)]
    arrays = [a for a in _arrays(enc, view, view.domains[:-1])]
    arrays = [a for a in arrays if range_key(*_ref_range(enc, a.var)) == last.key]
    if not refs and not arrays:
        return None
    x = view.names[-1]
    xi = len(view.names) - 1
    taken = {v.name for v in enc.model.vars} | {c.name for c in enc.model.constants} | set(view.names)
    binder = next(b for b in (*_BINDERS, *(f"j{n}" for n in range(8))) if b not in taken)
    ref_cols = [view.columns[r.col] for r in refs]
    parts = [f"{x} != {c.name}" for c in ref_cols]
    arr_info = []
    for a in arrays:
        pre = "".join(f"[{view.names[p]}]" for p in a.prefix)
        lo, hi = enc.bounds(a.index)
        dom = f"{affine_text(z3.simplify(lo))}..{affine_text(z3.simplify(hi))}"
        if a.fill is not None:
            parts.append(f"(all {binder} in {dom}: {binder} >= {a.fill.name}{pre} "
                         f"or {a.var.name}{pre}[{binder}] != {x})")
        else:
            parts.append(f"(all {binder} in {dom}: {a.var.name}{pre}[{binder}] != {x})")
        arr_info.append(a)
    text = " and ".join(parts)
    pstate_index = {v.name: v.index for v in enc.model.vars}

    def sel(a: z3.ExprRef, xs: Sequence[z3.ArithRef], prefix: tuple[int, ...]) -> z3.ExprRef:
        for p in prefix:
            a = z3.Select(a, xs[p])  # type: ignore[arg-type]
        return a

    def term(s: PState, xs: Sequence[z3.ArithRef]) -> z3.ExprRef:
        conds = [xs[xi] != c.term(s, xs) for c in ref_cols]
        for a in arr_info:
            base = sel(s.vals[pstate_index[a.var.name]], xs, a.prefix)  # type: ignore[arg-type]
            fill = (None if a.fill is None
                    else sel(s.vals[pstate_index[a.fill.name]], xs, a.prefix))  # type: ignore[arg-type]
            for j in a.values:
                ne = z3.Select(base, j) != xs[xi]  # type: ignore[arg-type]
                conds.append(ne if fill is None else z3.Or(j >= fill, ne))  # type: ignore[operator]
        return z3.And(*conds) if conds else z3.BoolVal(True)

    def elem(d: dict, cs: dict[str, int], ix: tuple[int, ...], var: ir.Var, prefix: tuple[int, ...]) -> object:
        a = d[var.name]
        t: ir.Type = var.type
        for p in prefix:
            assert isinstance(t, ir.ArrayType)
            a = a[ix[p] - _lo_of(t.index, cs, enc)]
            t = t.elem
        return a

    def value(d: dict, cs: dict[str, int], ix: tuple[int, ...]) -> int:
        item = ix[xi]
        if any(c.value(d, cs, ix) == item for c in ref_cols):
            return 0
        for a in arr_info:
            row = elem(d, cs, ix, a.var, a.prefix)
            fill = None if a.fill is None else elem(d, cs, ix, a.fill, a.prefix)
            lo = a.values.start
            for j in a.values:
                if (fill is None or j < fill) and row[j - lo] == item:  # type: ignore[index, operator]
                    return 0
        return 1

    def concrete(cs: dict[str, int], ix: tuple[int, ...], slot: Callable[[str], z3.ExprRef]) -> z3.ExprRef:
        item = ix[xi]
        conds = [c.concrete(cs, ix, slot) != item for c in ref_cols]  # type: ignore[misc]
        for a in arr_info:
            pre = "".join(f"[{ix[p]}]" for p in a.prefix)
            for j in a.values:
                ne = slot(f"{a.var.name}{pre}[{j}]") != item
                ok = ne if a.fill is None else z3.Or(slot(f"{a.fill.name}{pre}") <= j, ne)  # type: ignore[operator]
                conds.append(ok)
        return z3.And(*conds) if conds else z3.BoolVal(True)

    def eq_text(v: int, positive: bool) -> str:
        return f"({text})" if bool(v) == positive else f"not ({text})"

    uses = frozenset({xi}).union(*[c.uses for c in ref_cols]).union(*[frozenset(a.prefix) for a in arr_info])
    return Column(f"excl({x})", ir.BoolType(), "excl", term, value, eq_text, concrete=concrete, uses=uses)


def _ref_range(enc: ParamEncoder, var: ir.Var) -> tuple[z3.ArithRef, z3.ArithRef]:
    got = _sentinel(enc, var)
    assert got is not None
    return got


def _sentinel_of_range(enc: ParamEncoder, col: Column, dom: object) -> bool:
    var = next((v for v in enc.model.vars if v.name == col.name.split("[")[0]), None)
    if var is None:
        return False
    got = _sentinel(enc, var)
    return got is not None and range_key(*got) == dom.key  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------ templates


def _conditions(view: View, rows: np.ndarray, skip: set[int]) -> list[tuple[int, int]]:
    """Equalities usable as conditions: enum, bool and small non-growing int columns, and
    position columns (`x < hq_r[q]`), each value observed (a constant column is none)."""
    out: list[tuple[int, int]] = []
    for i, c in enumerate(view.columns):
        if i in skip:
            continue
        ok = (c.kind in ("scalar", "elem") and not c.consts) or (c.kind == "cmp" and c.pair is None)
        if not ok:
            continue
        vals = np.unique(rows[:, i])
        if 1 < len(vals) <= PHASE_VALUES:
            out += [(i, int(v)) for v in vals]
    return out


def _excluded(view: View, rows: np.ndarray) -> list[Atom]:
    """`excl(x) and x < p [and phase] implies b != v` for a bool or enum column b at x's own
    element and a pointer p, where some row under the same conditions with x referenced has
    b == v (the exclusion is what makes it true)."""
    cols = view.columns
    ex = next((k for k, c in enumerate(cols) if c.kind == "excl"), None)
    if ex is None:
        return []
    last = len(view.names) - 1
    bodies = [i for i, c in enumerate(cols) if c.kind == "elem" and last in c.uses
              and isinstance(c.type, (ir.BoolType, ir.EnumType))]
    # a position below a pointer (`x < hq_r[q]`: an element the pipeline has passed), alone or
    # with one phase of the control state (an enum or bool column)
    below = [(i, -1) for i, c in enumerate(cols) if c.kind == "cmp" and c.pair is None
             and c.name.startswith(f"cmp({view.names[last]}, ") and (rows[:, i] == -1).any()]
    phases = [c for c in _conditions(view, rows, {ex}) if c[0] not in bodies
              and isinstance(cols[c[0]].type, (ir.EnumType, ir.BoolType))]
    conds = below + phases
    masks = {c: rows[:, c[0]] == c[1] for c in conds}
    free = rows[:, ex] == 1
    out: list[Atom] = []
    sets = [(b,) for b in below] + [(b, p) for b in below for p in phases]
    for cs in sets:
        m = np.ones(len(rows), dtype=bool)
        for c in cs:
            m &= masks[c]
        sub = m & free
        if not sub.any():
            continue
        for b in bodies:
            seen = set(np.unique(rows[sub, b]).tolist())
            other = set(np.unique(rows[m & ~free, b]).tolist())
            for v in sorted(other - seen):
                if len(cs) == 2 and any(_excludes(rows, masks[c] & free, b, v) for c in cs):
                    continue  # one condition is enough: that atom is there
                out.append(Atom(((ex, 1),) + cs, "ne", ((1, b),), int(v)))
    return out


def _excludes(rows: np.ndarray, m: np.ndarray, b: int, v: int) -> bool:
    return bool(m.any()) and not bool((rows[m, b] == v).any())


def _positions(view: View, valid: dict[int, int], rows: np.ndarray) -> list[Atom]:
    """Under `r holds an item` and zero to two phase conditions, the linear equalities through
    r among the view's int columns (module doc), where they fail without the validity."""
    cols = view.columns
    if not valid:
        return []
    terms = [i for i, c in enumerate(cols)
             if isinstance(c.type, ir.IntType) and c.kind in ("scalar", "elem", "ind", "index")
             and (c.consts or c.kind in ("ind", "index") or i in valid.values() or _fill_like(c))]
    conds = [c for c in _conditions(view, rows, set(valid) | set(valid.values())) if cols[c[0]].kind != "cmp"]
    conds.sort(key=lambda c: (not isinstance(cols[c[0]].type, ir.EnumType), c))  # control state first
    masks = {c: rows[:, c[0]] == c[1] for c in conds}
    everywhere = frozenset(range(len(view.names)))
    out: list[Atom] = []
    seen: set[tuple] = set()
    examined = 0
    phase_sets: list[tuple[tuple[int, int], ...]] = [()] + [(c,) for c in conds]
    for vcol, ref in valid.items():
        vmask = rows[:, vcol] == (1 if cols[vcol].kind == "ind" else -1)
        for ps in phase_sets:
            if examined >= MAX_CONDITION_SETS * len(valid):
                break
            m = vmask.copy()
            for c in ps:
                m &= masks[c]
            if m.sum() < 2:
                continue
            examined += 1
            sub = rows[m]
            use = [i for i in terms if i != vcol and sub[:, i].min() != sub[:, i].max()]
            if ref not in use:
                continue
            use = [ref] + sorted((i for i in use if i != ref), key=lambda i: _rank(cols[i]))[:MAX_EQ_COLUMNS - 1]
            for rel in _circuits(sub, use, ref):
                key = (ps, rel)
                if key in seen:
                    continue
                coeffs, k = rel
                tset = tuple((c, i) for c, i in coeffs)
                if frozenset().union(*[cols[i].uses for _, i in tset]) != everywhere and view.names:
                    continue
                lhs = rows[:, [i for _, i in tset]] @ np.asarray([c for c, _ in tset], dtype=np.int64)
                base = np.ones(len(rows), dtype=bool)
                for c in ps:
                    base &= masks[c]
                if (lhs[base] == k).all():
                    continue  # the validity condition adds nothing: not this template's
                seen.add(key)
                cond = ((vcol, 1 if cols[vcol].kind == "ind" else -1),) + ps
                out.append(Atom(cond, "le", tset, k))
                out.append(Atom(cond, "le", tuple((-c, i) for c, i in tset), -k))
    return out


def _rank(c: Column) -> int:
    """Term columns by kind: counters growing with the sizes, references' indicators, the
    index, then small counters."""
    return 0 if c.consts else 1 if c.kind == "ind" else 2 if c.kind == "index" else 3


def _fill_like(c: Column) -> bool:
    """A small non-growing int column (a fill count such as `win_n`)."""
    return c.kind in ("scalar", "elem") and isinstance(c.type, ir.IntType) and not c.consts


def _basis(a: np.ndarray) -> list[list[int]]:
    """Distinct rows of `a` spanning its row space (affine.py's `_row_basis` with pivoting,
    vectorised: each step takes the row farthest from the span so far)."""
    uniq = np.unique(a, axis=0)
    res = uniq.astype(np.float64)
    scale = max(1.0, float(np.abs(res).max())) if res.size else 1.0
    basis: list[list[int]] = []
    for _ in range(a.shape[1]):
        norms = np.linalg.norm(res, axis=1)
        k = int(norms.argmax()) if len(norms) else 0
        if not len(norms) or norms[k] <= 1e-9 * scale:
            break
        q = res[k] / norms[k]
        basis.append([int(x) for x in uniq[k]])
        res = res - np.outer(res @ q, q)
    return basis


def _circuits(sub: np.ndarray, use: list[int], ref: int) -> list[tuple[tuple[tuple[int, int], ...], int]]:
    """Minimal affine dependencies among the columns `use` over the rows `sub` that contain
    `ref`, each `sum(c * col) == k` with small integer coefficients."""
    basis = _basis(np.hstack([sub[:, use], np.ones((len(sub), 1), dtype=np.int64)]))
    fb = np.asarray(basis, dtype=np.float64)
    if len(fb) == 0:
        return []
    # only the columns some null vector of the rows involves can be in a circuit: found from
    # one SVD, which leaves the brute force below a handful of columns
    _, sv, vt = np.linalg.svd(fb)
    rank = int((sv > 1e-9 * max(1.0, float(sv[0]) if len(sv) else 1.0)).sum())
    null = vt[rank:]
    live = [p for p in range(len(use)) if len(null) and float(np.abs(null[:, p]).max()) > 1e-9]
    if 0 not in live:
        return []  # `ref` is in no dependency of these columns
    keep = live + [len(use)]
    fb = fb[:, keep]
    basis = [[r[p] for p in keep] for r in basis]
    use = [use[p] for p in live]
    found: list[frozenset[int]] = []
    out: list[tuple[tuple[tuple[int, int], ...], int]] = []
    for size in range(2, min(MAX_TERMS, len(use)) + 1):
        for pos in itertools.combinations(range(len(use)), size):
            sup = frozenset(pos)
            if any(f <= sup for f in found):
                continue
            if np.linalg.matrix_rank(fb[:, list(pos) + [-1]]) == size + 1:
                continue
            found.append(sup)
            if 0 not in pos:
                continue
            rel = _relation(fb[:, list(pos)], sub[:, [use[p] for p in pos]])
            if rel is not None:
                out.append((tuple((c, use[p]) for c, p in zip(rel[0], pos)), rel[1]))
    return out


def _relation(fb: np.ndarray, exact: np.ndarray) -> tuple[list[int], int] | None:
    """The affine relation `sum(c * col) == k` of a circuit's columns (float rows `fb` of its
    basis, without the constant column), with integer coefficients of at most
    MAX_COEFFICIENT, checked exactly on the integer rows `exact`; None if there is none."""
    m = np.hstack([fb, np.ones((len(fb), 1))])
    v = np.linalg.svd(m)[2][-1][:-1]
    nz = np.abs(v[np.abs(v) > 1e-9])
    if len(nz) != len(v):
        return None
    v = v / nz.min()
    for mult in range(1, MAX_COEFFICIENT + 1):
        w = v * mult
        c = np.rint(w)
        if np.abs(w - c).max() < 1e-6 and np.abs(c).max() <= MAX_COEFFICIENT:
            if c[0] < 0:  # the sign from the integers (NOTE(exact-sign))
                c = -c
            lhs = exact @ c.astype(np.int64)
            if lhs.min() == lhs.max():
                return [int(x) for x in c], int(lhs[0])
            return None
    return None


# NOTE(exact-sign): the relation's sign once came from the float null vector (`v[argmax |v|] <
# 0`): with coefficients of equal magnitude (`a - b == k`) the largest one is a tie that
# floating-point noise breaks, and the noise differs between BLAS builds. reef_rewind's second
# round mined the same 2,068 candidates on the device machine (numpy 2.5.2, OpenBLAS 0.3.34) as
# here (numpy 2.4.6, OpenBLAS 0.3.31) with 21 pairs `e == k` emitted in the other order, and
# the fixed-size proof core, so the printed lemmas, followed the order. The first coefficient
# (the reference column's, never zero here) positive is a rule of integers alone.

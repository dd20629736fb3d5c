"""Linear equalities of three or more counters, from the rows of a view (a second-round template).

The first round finds equalities of two counters (`rptr == wptr - 1`), the second three
(checker/engines/param/widen.py). Accounting invariants often join more: `launched[x] == done[x] +
(count of slots holding x) + (count of saved blocks of x)`, `work[x] == 2 * done[x] + ...`.
Every such equality that holds in all the rows is a vector in the null space of the rows
(with a column of ones for the constant); the sparsest ones are the *circuits* of the columns:
minimal sets of columns that are affinely dependent over the rows, each with a relation unique
up to scale. They are found by increasing size, supersets of a circuit skipped, on a basis of
the row space (at most one row per column: the same null space, a tiny matrix), the
relation of each computed exactly with fractions and checked on every row. Relations with large coefficients are
dropped (artefacts of the sample). Like every candidate they only propose; Z3 decides."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Sequence

import numpy as np

from gpcheck.spec import ir
from gpcheck.checker.engines.param.mine import View
from gpcheck.checker.engines.smt.mining import Atom

MAX_COLUMNS = 20  # the columns a view's circuits are looked for among
MAX_TERMS = 5  # counters in one equality
MAX_COEFFICIENT = 8  # |c| of a kept relation (primitive integer form)
MIN_TERMS = 3  # two-counter equalities are the first round's


def affine_atoms(view: View, rows: np.ndarray, limit: int) -> list[Atom]:
    """Equalities `sum(c * col) == k` over the view's int columns that hold in every row, as
    pairs of `le` atoms, sparsest first, at most `limit` atoms; each reads every index of
    the view."""
    if len(rows) == 0:
        return []
    cols = view.columns
    order = {"agg": 0, "elem": 1, "const": 2, "scalar": 3}
    usable = [i for i, c in enumerate(cols) if c.kind in order and isinstance(c.type, ir.IntType)
              and rows[:, i].min() != rows[:, i].max()]
    usable.sort(key=lambda i: order[cols[i].kind])
    usable = usable[:MAX_COLUMNS]
    if len(usable) < MIN_TERMS:
        return []
    basis = _row_basis(np.hstack([rows[:, usable], np.ones((len(rows), 1), dtype=np.int64)]))
    everywhere = frozenset(range(len(view.names)))
    found: list[frozenset[int]] = []
    out: list[Atom] = []
    fb = np.asarray(basis, dtype=np.float64)
    for size in range(2, min(MAX_TERMS, len(usable)) + 1):  # two-column circuits only mark supersets
        for pos in itertools.combinations(range(len(usable)), size):
            sup = frozenset(pos)
            if any(f <= sup for f in found):
                continue
            if np.linalg.matrix_rank(fb[:, list(pos) + [-1]]) == size + 1:
                continue  # independent (a float pre-check; the relation itself is exact)
            rel = _null_vector([[r[p] for p in pos] + [r[-1]] for r in basis], size + 1)
            if rel is None:
                continue
            found.append(sup)
            if size < MIN_TERMS:
                continue
            if any(c == 0 for c in rel[:-1]) or max(abs(c) for c in rel) > MAX_COEFFICIENT:
                continue
            terms = tuple((int(c), usable[p]) for c, p in zip(rel[:-1], pos))
            if frozenset().union(*[cols[i].uses for _, i in terms]) != everywhere:
                continue
            lhs = rows[:, [i for _, i in terms]] @ np.asarray([c for c, _ in terms], dtype=np.int64)
            if not (lhs == -rel[-1]).all():
                continue  # cannot happen (the basis spans the rows): a guard
            k = -int(rel[-1])
            out.append(Atom((), "le", terms, k))
            out.append(Atom((), "le", tuple((-c, i) for c, i in terms), -k))
            if len(out) >= limit:
                return out
    return out


def _row_basis(a: np.ndarray) -> list[list[int]]:
    """Distinct rows of `a` spanning its row space (incremental Gram-Schmidt in floats; the
    relations found over them are then checked exactly on every row)."""
    uniq = np.unique(a, axis=0)
    basis: list[list[int]] = []
    ortho: list[np.ndarray] = []
    for r in uniq:
        v = r.astype(np.float64)
        for q in ortho:
            v = v - (v @ q) * q
        norm = float(np.linalg.norm(v))
        if norm <= 1e-9 * max(1.0, float(np.linalg.norm(r))):
            continue
        ortho.append(v / norm)
        basis.append([int(x) for x in r])
        if len(basis) == a.shape[1]:
            break
    return basis


def _null_vector(m: Sequence[Sequence[int]], n: int) -> list[int] | None:
    """A primitive integer vector spanning the null space of `m` (n columns) when it has
    dimension one, else None (independent columns, or a dependency in a subset)."""
    rows = [[Fraction(x) for x in r] for r in m]
    pivots: list[int] = []
    r = 0
    for c in range(n):
        p = next((i for i in range(r, len(rows)) if rows[i][c]), None)
        if p is None:
            continue
        rows[r], rows[p] = rows[p], rows[r]
        f = rows[r][c]
        rows[r] = [x / f for x in rows[r]]
        for i in range(len(rows)):
            if i != r and rows[i][c]:
                g = rows[i][c]
                rows[i] = [x - g * y for x, y in zip(rows[i], rows[r])]
        pivots.append(c)
        r += 1
    free = [c for c in range(n) if c not in pivots]
    if len(free) != 1:
        return None
    fc = free[0]
    vec = [Fraction(0)] * n
    vec[fc] = Fraction(1)
    for i, c in enumerate(pivots):
        vec[c] = -rows[i][fc]
    den = math.lcm(*[x.denominator for x in vec])
    ints = [int(x * den) for x in vec]
    g = math.gcd(*ints)
    ints = [x // g for x in ints]
    if next(x for x in ints if x) < 0:
        ints = [-x for x in ints]
    return ints

"""Threshold and anchored templates for the second `--for-all` round (checker/engines/param/prove.py).

The first round's conditions are equalities on small-domain columns and positions of an index
against a counter (`x < kc`); a counter against the constant its range grows with is not among
them, nor are facts about the one element a pointer designates under further conditions. Both
are common in protocol models and proofs need them:

- *threshold columns* `cmp(c, K)` in {-1, 0, 1} between an int column `c` and each named
  constant `K` its declared range grows with, usable as conditions: a claim counter past the
  work (`executed[x] >= LB implies done[x] == LB`), a sentinel meaning "none" (`stop == N`),
  some of a group gone (`live < P`);
- *anchored atoms*: in a one-index view, the rows where the index equals a pointer (`x == kc`:
  the kernel running now) mined on their own with up to two conditions, so a fact about the
  pointed-to element may depend on two more facts of the state (`x == kc and stop == N and
  live < P implies done[x] == LB`: every block of the running kernel that left did so because
  the work was exhausted, unless a stop was recorded).

Every atom here has at least one threshold condition or an anchor; the shapes the first round
already mines are not repeated. Like every candidate, these only propose: the fixed-size
Houdini filters them and Z3 decides with the sizes symbolic."""

from __future__ import annotations

import numpy as np

from gpcheck.spec import ir
from gpcheck.checker.engines.param.mine import Column, View, _Slot
from gpcheck.checker.engines.param.widen import _order
from gpcheck.checker.engines.smt.mining import Atom, mine_atoms

MAX_THRESHOLD_COLUMNS = 40  # threshold columns per view
MAX_INDICES = 1  # views with more indices get none (their column count is large already)
PER_ANCHOR = 300  # atoms mined under one anchor (`x == p`)


def threshold_columns(view: View) -> View:
    """The view with a threshold column per (growing int column, constant it grows with);
    the view itself when it has none (or more than MAX_INDICES indices)."""
    if len(view.names) > MAX_INDICES:
        return view
    consts = {c.name: k for k, c in enumerate(view.columns) if c.kind == "const"}
    extra: list[Column] = []
    for i, c in enumerate(view.columns):
        if c.kind not in ("scalar", "elem") or not isinstance(c.type, ir.IntType):
            continue
        for name in sorted(c.consts):
            if name in consts and len(extra) < MAX_THRESHOLD_COLUMNS:
                extra.append(_order(c, view.columns[consts[name]], (i, consts[name])))
    return View(view.domains, view.names, view.columns + extra) if extra else view


def threshold_atoms(view: View, rows: np.ndarray, limit: int) -> list[Atom]:
    """Atoms under one or two conditions of which one is a threshold column, then the
    anchored atoms (see the module doc), at most `limit`."""
    if len(rows) == 0 or len(view.names) > MAX_INDICES:
        return []
    cols = view.columns
    thresholds = {k for k, c in enumerate(cols) if c.pair is not None and cols[c.pair[1]].kind == "const"}
    if not thresholds:
        return []
    slots = [_Slot(c.name, c.type) for c in cols]
    everywhere = frozenset(range(len(view.names)))

    def cond_ok(k: int, v: int) -> bool:
        c = cols[k]
        return c.kind == "cmp" or (c.kind in ("scalar", "elem") and not c.consts)

    def keep(a: Atom, anchored: bool) -> bool:
        if frozenset().union(*[cols[i].uses for i in a.slots()]) != everywhere:
            return False
        if not anchored and not any(k in thresholds for k, _ in a.cond):
            return False  # no threshold condition: a first-round shape
        body = [i for _, i in a.terms]
        if any(k in thresholds and set(body) <= set(cols[k].pair or ()) for k, _ in a.cond):
            return False  # `executed[x] == LB implies executed[x] <= LB`: the condition says it
        if any(cols[i].kind == "cmp" for i in body) or all(cols[i].kind in ("const", "index") for i in body):
            return False  # a position or order column is a condition, not a quantity
        if a.kind == "le" and abs(a.k) > 1 and any(cols[i].consts or cols[i].kind == "const" for i in body):
            return False  # a bound beyond 1 on a growing quantity is a fact of the sizes sampled
        return True

    out = [a for a in mine_atoms(slots, [tuple(r) for r in rows.tolist()], limit * 20, max_conditions=1,
                                 cond_ok=cond_ok, vary=True) if keep(a, False)]
    for anchor in _anchors(view):
        sub = rows[rows[:, anchor] == 0]
        if len(sub) == 0:
            continue
        got = mine_atoms(slots, [tuple(r) for r in sub.tolist()], PER_ANCHOR * 20, max_conditions=2,
                         cond_ok=lambda k, v: k != anchor and cond_ok(k, v), vary=True)
        every = rows.tolist()
        for a in got:
            if not any(k in thresholds for k, _ in a.cond):
                continue  # under the anchor and phase conditions only: the first round has it
            b = Atom(((anchor, 0),) + a.cond, a.kind, a.terms, a.k)
            if keep(b, True) and not all(a.holds(r) for r in every):
                out.append(b)
    return out[:limit]


def _anchors(view: View) -> list[int]:
    """The position columns `cmp(x, p)` of a one-index view with `p` a scalar: `x == p`
    selects the element the pointer `p` designates."""
    if len(view.names) != 1:
        return []
    name = view.names[0]
    return [k for k, c in enumerate(view.columns)
            if c.kind == "cmp" and c.pair is None and c.name.startswith(f"cmp({name}, ")
            and _scalar(view, c.name[len(f"cmp({name}, "):-1])]


def _scalar(view: View, name: str) -> bool:
    return any(c.kind == "scalar" and c.name == name for c in view.columns)

"""Facts under three control-state conditions (a second-round `--for-all` template).

The first round conditions on at most two equalities, the second round's enum phases
(checker/engines/param/widen.py) on two. A program-counter model often needs three: the scheduler's
position, the item's own state and a request flag (`task[q] == Executing and sched == Poll
and rt == NoRt implies hq_w[q] == N`: a relaunch loop that stopped without a pending request
launched everything). For every three values of three distinct enum columns (each with at
most PHASE_VALUES values) this proposes the ranges and the two-counter equalities (a growing
counter against another or a constant) that hold in the rows under all three and under none
of the three pairs. Like every candidate these only propose; Z3 decides."""

from __future__ import annotations

import itertools

import numpy as np

from gpcheck.spec import ir
from gpcheck.checker.engines.param.mine import View
from gpcheck.checker.engines.smt.mining import Atom

PHASE_VALUES = 16  # an enum column with at most this many observed values gives conditions
MAX_TRIPLES = 2_000  # condition triples examined per view


def triple_atoms(view: View, rows: np.ndarray, limit: int) -> list[Atom]:
    """Equalities `a - b == k` (a growing counter against a counter or a named constant)
    that hold under three enum conditions and under none of their pairs, at most `limit`
    atoms (two per equality)."""
    if len(rows) == 0:
        return []
    cols = view.columns
    everywhere = frozenset(range(len(view.names)))
    enums = [i for i, c in enumerate(cols) if c.kind in ("scalar", "elem") and isinstance(c.type, ir.EnumType)
             and 1 < len(np.unique(rows[:, i])) <= PHASE_VALUES]
    ints = [i for i, c in enumerate(cols) if isinstance(c.type, ir.IntType)
            and (c.kind == "const" or (c.kind in ("scalar", "elem") and c.consts))]
    out: list[Atom] = []
    examined = 0
    for a, b, c in itertools.combinations(enums, 3):
        for va, vb, vc in itertools.product(*[np.unique(rows[:, i]).tolist() for i in (a, b, c)]):
            if examined >= MAX_TRIPLES or len(out) >= limit:
                return out[:limit]
            conds = ((a, int(va)), (b, int(vb)), (c, int(vc)))
            ms = [rows[:, i] == v for i, v in conds]
            m = ms[0] & ms[1] & ms[2]
            if not m.any():
                continue
            examined += 1
            sub = rows[m]
            pairs = [ms[0] & ms[1], ms[0] & ms[2], ms[1] & ms[2]]
            for i, j in itertools.permutations(ints, 2):
                if i > j or (cols[i].kind == "const" and cols[j].kind == "const"):
                    continue
                d = sub[:, i] - sub[:, j]
                if d.min() != d.max():
                    continue
                k = int(d[0])
                if any(((rows[p, i] - rows[p, j]) == k).all() for p in pairs):
                    continue  # two of the conditions say it already
                terms = ((1, i), (-1, j))
                if frozenset().union(*[cols[t].uses for _, t in terms]) != everywhere:
                    continue
                out.append(Atom(conds, "le", terms, k))
                out.append(Atom(conds, "le", ((-1, i), (1, j)), -k))
    return out[:limit]

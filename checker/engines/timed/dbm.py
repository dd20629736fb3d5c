"""Difference-bound matrices (DBMs): the zones of the timed engine (NOTE(timed) in spec/ir.py).

A zone over clocks x1..xn is a conjunction of constraints xi - xj (<= or <) c, with x0 = 0 the
reference clock; it is stored as a flat tuple of n+1 squared *raw bounds* (UPPAAL's encoding):
(c, <=) is 2c+1 and (c, <) is 2c, so that a smaller raw bound is a tighter one and the sum of
two bounds is `a + b - ((a | b) & 1)`. INF is "no constraint". A zone is kept *canonical*
(every entry the tightest bound implied by the others: the shortest-path closure, Floyd-Warshall
once, then an incremental O(n^2) closure per added constraint), so that emptiness is a negative
diagonal and inclusion is entry-wise comparison.

Plain Python: the timed engine's zones have one clock per timed action instance plus at most
two measuring clocks, so n is small and lists beat numpy's call overhead. Every operation
returns a new list (callers keep tuples as the immutable stored form)."""

from __future__ import annotations

from operator import le as le_
from typing import Sequence

INF = 1 << 62  # raw "no bound"
LE_ZERO = 1  # (0, <=)

Zone = list[int]


def le(c: int) -> int:
    """The raw bound (c, <=)."""
    return 2 * c + 1


def lt(c: int) -> int:
    """The raw bound (c, <)."""
    return 2 * c


def value(raw: int) -> int:
    """The constant of a raw bound (not INF)."""
    return raw >> 1


def is_strict(raw: int) -> bool:
    return not raw & 1


def add(a: int, b: int) -> int:
    if a >= INF or b >= INF:
        return INF
    return a + b - ((a | b) & 1)


def zero(n: int) -> Zone:
    """Every clock of a DBM of dimension n (n-1 clocks) at 0."""
    return [LE_ZERO] * (n * n)


def close(d: Zone, n: int) -> bool:
    """Floyd-Warshall in place; False when the zone is empty."""
    for k in range(n):
        rk = k * n
        for i in range(n):
            ri = i * n
            dik = d[ri + k]
            if dik >= INF:
                continue
            for j in range(n):
                dkj = d[rk + j]
                if dkj >= INF:
                    continue
                s = dik + dkj - ((dik | dkj) & 1)
                if s < d[ri + j]:
                    d[ri + j] = s
        if d[rk + k] < LE_ZERO:
            return False
    return all(d[i * n + i] >= LE_ZERO for i in range(n))


def constrain(d: Zone, n: int, i: int, j: int, raw: int) -> bool:
    """Add xi - xj <= raw to a canonical zone in place (incremental closure); False when the
    result is empty (d is then garbage)."""
    if raw >= d[i * n + j]:
        return True
    if add(raw, d[j * n + i]) < LE_ZERO:
        return False
    d[i * n + j] = raw
    jn = j * n
    for k in range(n):  # `add` written out: the engine's innermost loop
        dki = d[k * n + i]
        if dki >= INF:
            continue
        via = dki + raw - ((dki | raw) & 1)
        if via >= INF:
            continue
        rk = k * n
        for m in range(n):
            djm = d[jn + m]
            if djm >= INF:
                continue
            s = via + djm - ((via | djm) & 1)
            if s < d[rk + m]:
                d[rk + m] = s
    return True


def up(d: Zone, n: int) -> None:
    """Let time pass: drop every clock's upper bound (stays canonical)."""
    for i in range(1, n):
        d[i * n] = INF


def reset(d: Zone, n: int, i: int) -> None:
    """xi := 0 (stays canonical)."""
    for k in range(n):
        d[i * n + k] = d[k]  # xi - xk <= 0 - xk
        d[k * n + i] = d[k * n]  # xk - xi <= xk - 0
    d[i * n + i] = LE_ZERO


def free(d: Zone, n: int, i: int) -> None:
    """Forget everything about xi but xi >= 0 (stays canonical)."""
    for k in range(n):
        if k != i:
            d[i * n + k] = INF
            d[k * n + i] = d[k * n]
    d[i] = LE_ZERO


def extrapolate(d: Zone, n: int, m: Sequence[int]) -> None:
    """Extra_M (Behrmann, Bouyer, Larsen, Pelanek): a bound above a clock's maximal constant
    m[i] is dropped, one below -m[j] becomes (-m[j], <); then re-closed. m[0] must be 0; m[i] < 0
    for a clock that is compared with nothing. Exact for reachability of a diagonal-free model
    whose clock xi is only compared with constants <= m[i] (region equivalence). The rows and
    columns of a clock with m[i] < 0 are left alone: the caller frees such clocks."""
    changed = False
    for i in range(n):
        if m[i] < 0:
            continue
        ri = i * n
        mi = le(m[i])
        for j in range(n):
            if i == j or m[j] < 0:
                continue
            v = d[ri + j]
            if v >= INF:
                continue
            if v > mi:
                d[ri + j] = INF
                changed = True
            else:
                low = lt(-m[j])
                if v < low:
                    d[ri + j] = low
                    changed = True
    if changed:
        close(d, n)


def includes(big: Sequence[int], small: Sequence[int]) -> bool:
    """small ⊆ big, both canonical and non-empty."""
    return all(map(le_, small, big))


def upper(d: Sequence[int], n: int, i: int) -> int | None:
    """The least upper bound of xi in the zone (None: unbounded)."""
    v = d[i * n]
    return None if v >= INF else value(v)


def lower(d: Sequence[int], n: int, i: int) -> int:
    """The greatest lower bound of xi in the zone."""
    return -value(d[i])

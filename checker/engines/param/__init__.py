"""`--for-all`: properties proved for every value of some constants (parameterised verification).
The API's entry is checker/api/for_all.py (`verify_for_all`: covers and assumptions around
prove.py's run); this package is the prover.

    extract.py  symbolic constants recovered by aligning a few instances' IRs (affine fits, or degree
                two: `NB * BLEN + 1`, NOTE(product-fit))
    encode.py   the model over SMT arrays with the sizes symbolic; ghost counters for sum/count
    mine.py     quantified candidates (`all x in 0..N-1: ...`) from small instances' states; product
                columns (`BLEN * done[x]`) where the model multiplies two constants
    widen.py    richer templates for a second round on what the first left unknown
    pointer.py  second round: counts/sums of containers holding an item by value (`slot[i] == x`)
    affine.py   second round: linear equalities of three to five counters (circuits of the rows)
    guards.py   second round: the model's guard comparisons (`launched[0] < NB`) as conditions
    threshold.py  the second round's thresholds (`live < P`) and pointer-anchored facts (`x == kc and ...`)
    counters.py the arrays over a symbolic index range as counters of rows per value (`for i in 0..S-1`
                loops that accumulate into other arrays), where the array encoding is outside the fragment
    symvalue.py a counted component whose value range grows with the constants (`prog: 0..BLEN`): an SMT
                array of rows per value and exact moments, NOTE(symbolic-values)
    refs.py     second round: nullable references (`held: 0..N`, N for none): "x is none of them" as a
                condition, and equalities with `(if held != N then 1 else 0)` terms under "it holds an item"
    triple.py   second round: facts under three enum conditions (`sched == Poll and task[x] == .. and rt == ..`)
    errors.py   the `range` result: every step's modelling error excluded for all sizes (NOTE(for-all-errors))
    prove.py    Houdini with the sizes symbolic, relative induction, violations at small sizes (and at
                the second round's larger ones)

Only `checker/engines/param/` and `checker/engines/smt/` import z3 (ARCHITECTURE.md)."""

from __future__ import annotations

from gpcheck.spec import ir
from gpcheck.spec.errors import UsageError


def parse_for_all(text: str, model: ir.Model) -> tuple[list[str], dict[str, int]]:
    """`N,B` or `N>=2,B`: the constants and their lower bounds (1 unless given)."""
    names: list[str] = []
    lower: dict[str, int] = {}
    known = {c.name for c in model.constants}
    for item in text.split(","):
        item = item.strip()
        name, sep, bound = item.partition(">=")
        name = name.strip()
        if name not in known:
            raise UsageError(f"--for-all {text}: the model has no constant {name!r} "
                             f"(constants: {', '.join(sorted(known)) or 'none'})")
        if name in names:
            raise UsageError(f"--for-all {text}: {name} named twice")
        try:
            lower[name] = int(bound) if sep else 1
        except ValueError:
            raise UsageError(f"--for-all {text}: {bound.strip()!r} is not an integer lower bound") from None
        names.append(name)
    return names, lower

"""The name of a symbolic index range (`lo..hi`): quantifier instantiation puts a term only at
binders and array positions of the same range (checker/engines/param/instantiate.py). Below the
encoder and the counter plan, which both name ranges."""

from __future__ import annotations

import z3


def range_key(lo: z3.ArithRef, hi: z3.ArithRef) -> str:
    """The name of the index range lo..hi (symbolic bounds): quantifier instantiation puts a
    term only at binders and array positions of the same range (checker/engines/param/instantiate.py)."""
    return f"{z3.simplify(lo).sexpr()}..{z3.simplify(hi).sexpr()}"

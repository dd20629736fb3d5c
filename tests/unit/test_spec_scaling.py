"""Spec checking is linear in the spec's size (issue 36): a 128 KiB spec of chained constants
(`const C2 = C1 + 1 ...`) held each constant's set of every constant before it, 1 GB and 7 s.
Constants now record the ones they name and the dependence is followed only where the IR
records a non-affine clause (NOTE(direct-deps) in spec/affinity.py), with the same clauses."""

from __future__ import annotations

import gc
import tracemalloc

from gpcheck.spec import load_source

TAIL = "var x: 0..1 = 0\naction a { x = 1 - x }\ninvariant ok: x <= 1\n"


def _chain(n: int, last: str = "", step: str = "+ 1") -> str:
    return ("model chain\nconst C1 = 1\n" + "".join(f"const C{i} = C{i - 1} {step}\n" for i in range(2, n + 1))
            + last + TAIL)


def _peak(text: str) -> int:
    """The peak of memory allocated while `text` is loaded: a count of allocations, the same on a
    loaded machine. The parser is built before (else the first load counts it), and the garbage
    collector is off meanwhile (a collection falling inside one load, at a point set by whatever
    the process allocated before, would free garbage there and not in the other; a collection
    before it costs seconds in a test process holding millions of objects)."""
    load_source("model warm\n" + TAIL, "warm.gpspec")
    was_enabled = gc.isenabled()
    gc.disable()
    tracemalloc.start()
    try:
        load_source(text, "chain.gpspec")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        if was_enabled:
            gc.enable()


def test_chained_constants_take_linear_memory() -> None:
    small, large = _peak(_chain(250)), _peak(_chain(1000))
    # four times the constants: about four times the memory (it was sixteen: n^2/2 set entries)
    assert large < 6 * small, (small, large)


def test_chained_products_take_linear_memory() -> None:
    # a product of two dependent factors makes degree-three clauses that grew with the chain
    # (n^3 work: 1000 constants took 43 s); NOTE(clause-cap) in spec/affinity.py bounds them
    # (CLAUSE_CAP = 64 clauses: both chains pass it)
    for step in ("* C1", "* C{prev}"):
        def chain(n: int) -> str:
            return "model chain\nconst C1 = 1\nconst C2 = 1\n" + "".join(
                f"const C{i} = C{i - 1} {step.format(prev=i - 2)}\n" for i in range(3, n + 1)) + TAIL
        small, large = _peak(chain(125)), _peak(chain(500))
        assert large < 6 * small, (step, small, large)


def test_capped_product_still_refuses_what_its_clauses_refused() -> None:
    # past the cap, a product keeps one one-set clause with every constant behind it: the for-all
    # engine (nonaffine_in) refuses every symbolic set it refused before, the two-set ones included
    from gpcheck.spec.affinity import CLAUSE_CAP
    n = CLAUSE_CAP + 10
    text = _chain(n, f"const H = C{n} / 1\n", step="* C1").replace("var x: 0..1", "var x: 0..H")
    model = load_source(text, "c.gpspec")
    parts = [set(part) for clause, _ in model.nonaffine for part in clause]
    assert any({"C1", f"C{n}"} <= p for p in parts)
    assert any(len(clause) == 1 and {f"C{n - 1}", "C1"} <= set(clause[0]) for clause, _ in model.nonaffine)


def test_clauses_still_name_every_constant_behind_a_name() -> None:
    text = ("model m\nconst N = 4\nconst A = N + 1\nconst B = A * 2\nconst D = B / 3\nconst M = 2\nconst P = A * M\n"
            "var x: 0..D = 0\nvar y: 0..P = 0\naction a { require x < D  x = x + 1 }\ninvariant ok: x >= 0\n")
    model = load_source(text, "m.gpspec")
    clauses = {c for c, _ in model.nonaffine}
    assert (("A", "B", "N"),) in clauses  # D = B / 3: a division of what depends on B, A and N
    assert (("A", "N"), ("M",)) in clauses  # P = A * M: a product of two parts
    c = load_source(_chain(300, "const H = C300 / 2\nconst R = 0\n").replace("var x: 0..1", "var x: 0..H"), "c.gpspec")
    (part,), = {c for c, _ in c.nonaffine}
    assert set(part) == {f"C{i}" for i in range(1, 301)}

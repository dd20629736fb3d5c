"""`--for-all` over values that are products of two symbolic constants (NOTE(product-fit) in
checker/engines/param/extract.py): `0..N*L+1` fitted as a polynomial of degree two, product columns
(`L * done`) in the candidates, and Z3's nonlinear integer arithmetic deciding (only `unsat`
proves). A property that fails beyond every sampled size is never proved; nvidia_tsg's block
accounting for all NB and BLEN is read back and re-checked explicitly."""

from __future__ import annotations

import pytest

from gpcheck.checker import Verdict
from gpcheck.checker.api.for_all import verify_for_all
from gpcheck.checker.engines.param.extract import Unsupported, extract
from gpcheck.spec import load_source

from tests.recheck import assert_never_proved_beyond, read_back_inductive, recheck_lemmas, write_spec

# N blocks of L ticks each; `work` counts the block-ticks executed (saturating above N * L).
BLOCKS = """model blocks
const N = 2
const L = 2
var done: 0..N = 0
var prog: 0..L = 0
var busy: bool = false
var work: 0..N*L+1 = 0
action start {
    require not busy and done < N
    busy = true
    prog = 0
}
action tick {
    require busy
    work = if work <= N * L then work + 1 else work
    prog = prog + 1
    if prog == L {
        busy = false
        done = done + 1
        prog = 0
    }
}
allow deadlock
invariant no_reexecution: work <= N * L
invariant no_loss: done == N implies work == N * L
"""


def test_extraction_fits_a_product_of_two_constants_and_loads_more_only_then():
    loads: list[dict[str, int]] = []

    def load(c):
        loads.append(dict(c))
        return load_source(BLOCKS, "blocks.gpspec", c)

    pm = extract(load, ["N", "L"], {}, {"N": 1, "L": 1})
    work = next(v for v in pm.model.vars if v.name == "work")
    hi = pm.num(work.type, "hi", work.type.hi)
    for n, l in ((1, 1), (3, 7), (10, 2)):
        import z3
        assert z3.simplify(z3.substitute(hi, (pm.consts["N"], z3.IntVal(n)), (pm.consts["L"], z3.IntVal(l)))) \
            .as_long() == n * l + 1
    assert pm.products == (("N", "L"),)
    assert len(loads) > 4  # the degree-two fit's instances
    affine = BLOCKS.replace("0..N*L+1", "0..N+L+1").replace("N * L", "N + L")
    loads.clear()
    pm = extract(lambda c: loads.append(dict(c)) or load_source(affine, "a.gpspec", c), ["N", "L"], {},
                 {"N": 1, "L": 1})
    assert pm.products == () and len(loads) == 4  # base, one per constant, the check: as before


def test_extraction_refuses_a_product_of_three_constants():
    src = BLOCKS.replace("const L = 2", "const L = 2\nconst W = 2").replace("0..N*L+1", "0..N*L*W+1")
    with pytest.raises(Unsupported, match="not a polynomial of degree at most two in N, L, W"):
        extract(lambda c: load_source(src, "w.gpspec", c), ["N", "L", "W"], {}, {"N": 1, "L": 1, "W": 1})
    # with W fixed the same value is a product of two
    assert extract(lambda c: load_source(src, "w.gpspec", c), ["N", "L"], {}, {"N": 1, "L": 1}).products


def test_block_accounting_with_a_product_is_proved_for_all_sizes_and_its_lemmas_recheck(tmp_path):
    """no_loss alone (both properties in one run: 19 s of CPU, Z3's nonlinear cores). no_reexecution's
    proof (a run of 1 s), its product column and its lemmas re-checked, is in the never-proved test
    below, whose run proves it on the same blocks with one line more."""
    path = write_spec(tmp_path, BLOCKS)
    r = verify_for_all(path, ["N", "L"], {"N": 1, "L": 1}, properties=["no_loss"], timeout=120).result("no_loss")
    assert r.verdict is Verdict.PROVED and r.detail["for_all"] == ["N", "L"], r
    inv = r.detail["invariant"]
    assert "L * done" in inv  # the product column carries the accounting
    recheck_lemmas(BLOCKS, inv, [{"N": 1, "L": 1}, {"N": 3, "L": 2}, {"N": 2, "L": 5}, {"N": 6, "L": 4}])


def test_a_product_bound_that_fails_beyond_every_sampled_size_is_never_proved(tmp_path):
    """The sixth block loses one tick of its work: no_loss holds while N <= 5 and fails from
    N = 6 on, beyond every instance the engine explores (N <= 4)."""
    src = BLOCKS.replace("    busy = true\n    prog = 0\n",
                         "    busy = true\n    prog = 0\n    work = if done == 5 and work >= 1 then work - 1 else work\n")
    assert src != BLOCKS
    path = write_spec(tmp_path, src)
    rep = assert_never_proved_beyond(path, "no_loss", [{"N": n, "L": l} for n, l in ((1, 1), (4, 4), (5, 3))],
                                     {"N": 6, "L": 2}, {"N": 1, "L": 1})
    r = rep.result("no_reexecution")  # still true for every size
    assert r.verdict is Verdict.PROVED and r.detail["for_all"] == ["N", "L"], r
    assert "L * done" in r.detail["invariant"]  # the product column carries the accounting
    recheck_lemmas(src, r.detail["invariant"], [{"N": 1, "L": 1}, {"N": 3, "L": 2}, {"N": 2, "L": 5}, {"N": 6, "L": 4}])


# ------------------------------------------------------------------ nvidia_tsg for all NB, BLEN

# What `gpcheck verify nvidia_tsg --for-all NB,BLEN` printed for no_loss (the slots fixed at
# S = 2): the block accounting with the product column `BLEN * done[x]`.
TSG_LEMMAS = [
    "(all x in 0..1: (all y in 0..1: (x == cur implies sv[x][y] >= 3)))",
    "(all x in 0..2: (count i in 0..1: slot[i] == x) + (sum i in 0..1: (count j in 0..1: sv[i][j] == x)) "
    "+ done[x] - launched[x] <= 0)",
    "(all x in 0..2: (sum i in 0..1: if slot[i] == x then prog[i] else 0) + (sum i in 0..1: (sum j in 0..1: "
    "if sv[i][j] == x then sv_prog[i][j] else 0)) + BLEN * done[x] - work[x] <= 0)",
    "(all x in 0..2: work[x] - (sum i in 0..1: if slot[i] == x then prog[i] else 0) - (sum i in 0..1: "
    "(sum j in 0..1: if sv[i][j] == x then sv_prog[i][j] else 0)) - BLEN * done[x] <= 0)",
]


def _inductive(src: str, hyps: list[str], goals: list[str]) -> tuple[bool, bool]:
    """(initiation, consecution) of `goals` relative to `hyps` with NB and BLEN symbolic (S = 2
    as declared)."""
    return read_back_inductive(src, ["NB", "BLEN"], hyps, goals)


@pytest.mark.slow
def test_nvidia_tsg_block_accounting_read_back_is_inductive_for_all_nb_and_blen():
    """The printed lemmas, added to the model as text, are inductive together with no_loss and
    no_reexecution for all NB and BLEN (Z3's nonlinear arithmetic answers `unsat`); without
    the work accounting no_loss is not (the encoding is no vacuous one); and every lemma holds
    in explicit instances beyond the sampled ones. About 45 s of CPU (65 s wall at load 5)."""
    from gpcheck.spec.load import resolve_spec_path

    base = resolve_spec_path("nvidia_tsg").read_text()
    src = base + "".join(f"\ninvariant mined_{i}: {t}" for i, t in enumerate(TSG_LEMMAS))
    names = [f"mined_{i}" for i in range(len(TSG_LEMMAS))]
    everything = [*names, "no_loss", "no_reexecution"]
    assert _inductive(src, everything, everything) == (True, True)
    assert _inductive(src, [n for n in names if n != "mined_2"] + ["no_loss"], ["no_loss"]) == (True, False)
    recheck_lemmas(base, "\nand ".join(TSG_LEMMAS), [{"NB": 1, "BLEN": 1}, {"NB": 3, "BLEN": 2}, {"NB": 2, "BLEN": 4}])


@pytest.mark.long
def test_nvidia_tsg_for_all_nb_and_blen():
    """Five properties proved for all NB and BLEN (S = 2), their printed lemmas re-checked
    explicitly; bounded_inversion violated at an instance with blocks of three ticks or more
    (a long low-priority block outlasts INV_BOUND), never proved. About 110-120 s of CPU
    (140 s wall at load 4, 420 s at load 5 to 9): `python -m pytest -m long`."""
    from gpcheck.spec.load import resolve_spec_path

    rep = verify_for_all("nvidia_tsg", ["NB", "BLEN"], {"NB": 1, "BLEN": 1}, timeout=900)
    src = resolve_spec_path("nvidia_tsg").read_text()
    for name in ("no_reexecution", "no_loss", "ring_integrity", "ring_kept", "switch_latency"):
        r = rep.result(name)
        assert r.verdict is Verdict.PROVED and r.detail["for_all"] == ["NB", "BLEN"], r
        if r.detail["invariant"]:
            recheck_lemmas(src, r.detail["invariant"], [{"NB": 1, "BLEN": 3}, {"NB": 3, "BLEN": 2}])
    r = rep.result("bounded_inversion")
    assert r.verdict is Verdict.VIOLATED, r
    assert r.detail["instance"]["BLEN"] >= 3 and r.counterexample is not None

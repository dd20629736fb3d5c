"""`--for-all` with pointer arrays: items counted through the containers that refer to them by
value (checker/engines/param/pointer.py, affine.py, guards.py), nvidia_tsg's invariants for all NB, and
a spec that holds up to some size and fails beyond it, never proved."""

from __future__ import annotations

import numpy as np
import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.api.for_all import verify_for_all
from gpcheck.checker.engines.param.affine import affine_atoms
from gpcheck.checker.engines.param.mine import Column, View
from gpcheck.spec import ir
from tests.recheck import recheck_lemmas, write_spec

# Blocks of three streams go to two slots; `done[s]` + blocks of s in a slot == `launched[s]`.
# With BUG, the fifth block of a stream is finished without being counted: the accounting
# holds while NB <= 4 and fails from NB = 5, beyond every size the engine samples.
POINTERS = """model pointers
const NB = 2
var slot: [0..1] -> 0..3 = 3
var launched: [0..2] -> 0..NB = 0
var done: [0..2] -> 0..NB = 0
action launch(i: 0..1, s: 0..2) {
    require slot[i] == 3 and launched[s] < NB
    slot[i] = s
    launched[s] = launched[s] + 1
}
action finish(i: 0..1) {
    require slot[i] != 3
    done[slot[i]] = DONE
    slot[i] = 3
}
allow deadlock
invariant accounted: all s in 0..2: done[s] + (count i in 0..1: slot[i] == s) == launched[s]
invariant bounded: all s in 0..2: done[s] <= NB - (count i in 0..1: slot[i] == s)
"""
RIGHT = POINTERS.replace("DONE", "done[slot[i]] + 1")
BUG = POINTERS.replace("DONE", "if launched[slot[i]] == 5 then done[slot[i]] else done[slot[i]] + 1")


def _col(name: str) -> Column:
    return Column(name, ir.IntType(None, None), "elem", lambda s, xs: None, lambda d, c, ix: 0,  # type: ignore[arg-type, return-value]
                  uses=frozenset({0}))


def test_affine_circuits_find_the_sparsest_equalities_only():
    """A hidden relation of four counters is found (exactly, with its coefficients); columns
    with no relation among them give none."""
    rng = np.random.default_rng(1)
    b, c, d, noise = (rng.integers(0, 9, 400) for _ in range(4))
    a = b + c + 2 * d + 1
    view = View((), ("x",), [_col(n) for n in ("a", "b", "c", "d", "noise")])
    got = affine_atoms(view, np.stack([a, b, c, d, noise], axis=1), 10)
    assert {(atom.terms, atom.k) for atom in got} == {
        (((1, 0), (-1, 1), (-1, 2), (-2, 3)), 1), (((-1, 0), (1, 1), (1, 2), (2, 3)), -1)}
    assert affine_atoms(view, np.stack([b, c, d, noise, rng.integers(0, 9, 400)], axis=1), 10) == []


def test_accounting_through_pointers_for_all_nb(tmp_path):  # ~4 s of CPU: the default run's pointer proof
    path = write_spec(tmp_path, RIGHT)
    report = verify_for_all(path, ["NB"], {"NB": 1}, timeout=300)
    for name in ("accounted", "bounded"):
        r = report.result(name)
        assert r.verdict is Verdict.PROVED, r
        assert r.detail["for_all"] == ["NB"]


@pytest.mark.slow
def test_pointer_accounting_that_fails_beyond_the_sampled_sizes_is_never_proved(tmp_path):
    path = write_spec(tmp_path, BUG)
    for nb in (1, 2, 3, 4):  # it really holds at every size the engine looks at
        assert verify(path, consts={"NB": nb}).result("accounted").verdict is Verdict.PROVED
    assert verify(path, consts={"NB": 5}).result("accounted").verdict is Verdict.VIOLATED
    report = verify_for_all(path, ["NB"], {"NB": 1}, timeout=300)
    r = report.result("accounted")
    assert r.verdict is not Verdict.PROVED, r
    # losing a block keeps `done` below the bound: that one holds for every NB, and is proved
    assert verify(path, consts={"NB": 6}).result("bounded").verdict is Verdict.PROVED
    assert report.result("bounded").verdict is Verdict.PROVED


@pytest.mark.slow
def test_nvidia_tsg_invariants_for_all_nb_and_lemmas_rechecked():
    """Every invariant and transition property of nvidia_tsg for every number of blocks per
    kernel (S = 2 slots, BLEN = 2): the accounting lemmas join per-stream counters with the
    slots and save areas that hold the stream's blocks; each printed lemma holds in small
    instances (the explicit engine)."""
    from gpcheck.spec.load import resolve_spec_path

    report = verify_for_all("nvidia_tsg", ["NB"], {"NB": 1}, timeout=900)
    src = resolve_spec_path("nvidia_tsg").read_text()
    for name in ("no_reexecution", "no_loss", "bounded_inversion", "switch_latency", "ring_integrity", "ring_kept"):
        r = report.result(name)
        assert r.verdict is Verdict.PROVED, r
        assert r.detail["for_all"] == ["NB"]
        if r.detail["invariant"]:
            recheck_lemmas(src, r.detail["invariant"], [{"NB": 1}, {"NB": 3}, {"NB": 4}])
    assert "(count i in 0..1: slot[i] == x)" in report.result("no_reexecution").detail["invariant"]

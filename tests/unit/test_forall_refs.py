"""`--for-all`'s nullable-reference templates (checker/engines/param/refs.py): "x is none of the
references" (`x != held and x != run and (all j in 0..W-1: j >= win_n or win[j] != x)`) as a
condition, and pipeline equalities with a conditional term (`(if held != N then 1 else 0)`).

Like every template they only propose: a spec that holds up to some size and fails beyond
every size the engine samples is never proved, and the invariants printed hold in small
instances (the explicit engine, each lemma added to the model as an invariant)."""

from __future__ import annotations

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.api.for_all import verify_for_all
from tests.recheck import recheck_lemmas, write_spec

PIPE = """model pipe

# A worker takes items 0..N-1 in order, holds one, puts it in a window of W slots, and a
# launcher runs the oldest; an item no stage holds any more was completed.
const N = 3
const W = 2

var rd: 0..N = 0                      # next item to take
var held: 0..N = N                    # the item the worker holds (N: none)
var win: [0..W-1] -> 0..N = N         # items in the window, oldest first
var win_n: 0..W = 0
var run: 0..N = N                     # the item running (N: none)
var done: [0..N-1] -> bool = false
var fin: bool = false

action take {
    require held == N and rd < N
    held = rd
    rd = rd + 1
}

action put {
    require held != N and win_n < W
    win[win_n] = held
    win_n = win_n + 1
    held = N
}

action launch {
    require run == N and win_n > 0
    run = win[0]
    for j in 0..W-1 {
        if j < W - 1 {
            win[j] = win[j + 1]
        }
    }
    win[W - 1] = N
    win_n = win_n - 1
}

action complete {
    require run != N
    done[run] = true
    run = N
}

action finish {
    require not fin and rd == N and held == N and win_n == 0 and run == N
    fin = true
}

invariant no_loss: fin implies (all k in 0..N-1: done[k])
terminal: fin
"""

COMPLETE = "    done[run] = true"


def test_pipe_no_loss_for_all_n_through_the_exclusion_and_invariant_rechecked(tmp_path):
    """An item below the read pointer that no stage holds (worker, window slot below the fill
    count, launcher) was completed: the lemma the proof needs, for every N."""
    r = verify_for_all(write_spec(tmp_path, PIPE), ["N"], {"N": 1}, timeout=240).result("no_loss")
    assert r.verdict is Verdict.PROVED, r
    assert r.detail["for_all"] == ["N"] and r.detail["round"] == 2
    inv = r.detail["invariant"]
    assert "x != held and x != run and (all j in 0..1: j >= win_n or win[j] != x)" in inv, inv
    recheck_lemmas(PIPE, inv, [{"N": 1}, {"N": 2}, {"N": 5}, {"N": 6}])


@pytest.mark.parametrize("bug, small, large", [
    ("    done[run] = run != 7", 7, 8),  # item 7 is never completed: holds while N <= 7
    # lost when an item >= 6 completes while one is held; 5 s of CPU, `slow`: the case above is
    # the default run's never-proved pipe
    pytest.param("    done[run] = held == N or run < 6", 7, 8, marks=pytest.mark.slow),
])
def test_pipes_holding_small_failing_large_are_never_proved(tmp_path, bug, small, large):
    """Beyond every size the engine explores: the candidates hold at each size sampled, and
    must still not make a proof."""
    src = PIPE.replace(COMPLETE, bug)
    assert src != PIPE
    path = write_spec(tmp_path, src)
    assert verify(path, consts={"N": small}).result("no_loss").verdict is Verdict.PROVED
    assert verify(path, consts={"N": large}).result("no_loss").verdict is Verdict.VIOLATED
    r = verify_for_all(path, ["N"], {"N": 1}, timeout=240).result("no_loss")
    assert r.verdict is not Verdict.PROVED, r
    assert r.detail["for_all"] == ["N"]


@pytest.mark.long  # whole proof: 120 s alone at load 1, 233 s at load 5 (issue 33); fast: the pipe tests above
def test_reef_rewind_no_loss_for_all_n_and_invariant_rechecked():
    """reef_rewind: a BE task finishes only with every kernel complete, for every number of
    kernels N (one BE queue, CAP=2, one RT task, as declared). The proof needs the exclusion
    (a kernel below the host queue's read position that no stage of the dispatch pipeline
    holds is complete) and the pipeline's positions (`(if held[x] != N then 1 else 0)`); the
    printed lemmas hold in small instances (the explicit engine)."""
    from gpcheck.spec.load import resolve_spec_path

    r = verify_for_all("reef_rewind", ["N"], {"N": 1}, properties=["no_loss"], timeout=1500).result("no_loss")
    assert r.verdict is Verdict.PROVED, r
    assert r.detail["for_all"] == ["N"] and r.detail["round"] == 2
    inv = r.detail["invariant"]
    assert "y != held[x] and y != run_k[x] and (all j in 0..1: j >= win_n[x] or win[x][j] != y)" in inv, inv
    recheck_lemmas(resolve_spec_path("reef_rewind").read_text(), inv, [{"N": 1}, {"N": 2}, {"N": 5}, {"N": 6}])

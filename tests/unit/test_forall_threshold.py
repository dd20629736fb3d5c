"""`--for-all`'s threshold and anchored templates (checker/engines/param/threshold.py): a counter
against the constant it grows with (`executed[x] >= LB`, `live < P`, `stop == N`) as a
condition, and facts about the element a pointer designates (`x == kc and ...`).

Like every template they only propose: a spec that holds up to some size and fails beyond
every size the engine samples is never proved, and the invariants printed hold in small
instances (the explicit engine, each lemma added to the model as an invariant)."""

from __future__ import annotations

import re

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.api.for_all import verify_for_all
from tests.recheck import recheck_lemmas, write_spec

# Kernels 0..N-1 run one after another; each has LB work items claimed by P workers through a
# counter (as GPreempt's persistent blocks claim logical blocks): a worker that finds the
# counter at LB or past it leaves, and the next kernel starts once every worker left. The
# proof needs `done[x] < LB implies executed[x] <= done[x]` (a threshold condition) and a fact
# about the running kernel `x == kc` once a worker left.
CLAIMS = """model claims
const N = 3
const LB = 2
const P = 1
var kc: 0..N = 0
var live: 0..P = P
var executed: [0..N-1] -> 0..LB+P = 0
var done: [0..N-1] -> 0..LB = 0
var finished: bool = false
action iterate {
  require kc < N and live > 0
  if executed[kc] < LB {
    done[kc] = done[kc] + 1
  } else {
    live = live - 1
  }
  executed[kc] = if executed[kc] < LB + P then executed[kc] + 1 else executed[kc]
}
action next_kernel {
  require kc < N and live == 0
  kc = kc + 1
  live = P
}
action finish {
  require kc == N
  finished = true
}
allow deadlock
invariant no_loss: finished implies (all k in 0..N-1: done[k] == LB)
"""

CLAIM = "  if executed[kc] < LB {"


def test_claims_no_loss_for_all_sizes_through_a_threshold_and_invariant_rechecked(tmp_path):
    r = verify_for_all(write_spec(tmp_path, CLAIMS), ["N", "LB", "P"], {"N": 1, "LB": 1, "P": 1},
                       timeout=240).result("no_loss")
    assert r.verdict is Verdict.PROVED, r
    assert r.detail["for_all"] == ["N", "LB", "P"] and r.detail["round"] == 2
    inv = r.detail["invariant"]
    assert "< LB" in inv or "> LB" in inv or "== LB implies" in inv, inv  # a threshold condition
    recheck_lemmas(CLAIMS, inv, [{"N": 2, "LB": 2, "P": 2}, {"N": 3, "LB": 3, "P": 1}, {"N": 4, "LB": 1, "P": 3}])


@pytest.mark.parametrize("bug, small, large", [
    # kernel 7's work is never done: holds while N <= 7
    ("  if executed[kc] < LB and kc != 7 {", {"N": 7, "LB": 2, "P": 1}, {"N": 8, "LB": 2, "P": 1}),
    # the sixth claim of a kernel is dropped: holds while LB <= 5; 4 s of CPU, `slow`: the case
    # above is the default run's never-proved threshold
    pytest.param("  if executed[kc] < LB and executed[kc] != 5 {", {"N": 1, "LB": 5, "P": 2}, {"N": 1, "LB": 6, "P": 1},
                 marks=pytest.mark.slow),
])
def test_claims_holding_small_failing_large_are_never_proved(tmp_path, bug, small, large):
    """Beyond every size the engine explores (each constant up to its lower bound + 3, and the
    second round's checks two above that): the threshold and anchored candidates hold at each
    size sampled, and must still not make a proof."""
    src = CLAIMS.replace(CLAIM, bug)
    assert src != CLAIMS
    path = write_spec(tmp_path, src)
    assert verify(path, consts=small).result("no_loss").verdict is Verdict.PROVED
    assert verify(path, consts=large).result("no_loss").verdict is Verdict.VIOLATED
    r = verify_for_all(path, ["N", "LB", "P"], {"N": 1, "LB": 1, "P": 1}, timeout=240).result("no_loss")
    assert r.verdict is not Verdict.PROVED, r
    assert r.detail["for_all"] == ["N", "LB", "P"]


@pytest.mark.slow
def test_blp_no_loss_for_all_sizes_and_invariant_rechecked():
    """blp: no logical block is lost, for every number of kernels, logical blocks per kernel
    and persistent blocks (HIP, one LC task); the printed lemmas hold in small instances."""
    from gpcheck.spec.load import resolve_spec_path

    r = verify_for_all("blp", ["N", "LB", "P"], {"N": 1, "LB": 1, "P": 1}, properties=["no_loss"],
                       timeout=600).result("no_loss")
    assert r.verdict is Verdict.PROVED, r
    inv = r.detail["invariant"]
    assert re.search(r"\(x == kc and [^()]* and [^()]* implies [^()]*done\[x\]", inv), inv  # anchored, 3 conditions
    assert re.search(r"executed\[x\] [<>=]+ LB implies|done\[x\] [<>=]+ LB implies", inv), inv  # a threshold
    recheck_lemmas(resolve_spec_path("blp").read_text(), inv,
             [{"N": 2, "LB": 2, "P": 2}, {"N": 3, "LB": 1, "P": 2}, {"N": 2, "LB": 3, "P": 1}, {"N": 4, "LB": 2, "P": 1}])


# Two counters in step: `ok` needs the lemma `a <= b` (a for-all proof of a fraction of a second;
# the report's path does not depend on the spec, CLAIMS took 3 s of CPU here)
STEPS = """model steps
const N = 2
var a: 0..N = 0
var b: 0..N = 0
action inc { require a < N; a = a + 1; b = b + 1 }
allow deadlock
invariant ok: a == N implies b == N
"""


def test_text_report_of_a_for_all_proof(tmp_path, capsys):
    """The text report of a for-all proof (its `lemmas` is a count, not pdr's breakdown)."""
    from gpcheck.checker.cli.command import main

    rc = main(["verify", str(write_spec(tmp_path, STEPS)), "--for-all", "N"])
    out = capsys.readouterr().out
    assert rc == 0 and "inductive invariant found for ok:\n  a <= b\n" in out, out

"""`--for-all` with a `count` inside an action (checker/engines/param/encode.py `_interval_count`), and
reef_rewind's quantitative claim (at most CAP+1 kernels re-executed per preemption).

The count is encoded in closed form for every size: exact, so a property that depends on it
is proved when it holds for all sizes and never when it fails beyond the sizes sampled."""

from __future__ import annotations

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.api.for_all import verify_for_all
from gpcheck.spec import load_source
from tests.recheck import write_spec

# A host queue [r, w) over N slots; `clear` drops the pending commands and counts them (as
# reef_rewind's hipStreamClearQueue does). EXCLUDE is a slot the count skips (a nop).
QUEUE = """model queue
const N = 3
const EXCLUDE = -1
var r: 0..N = 0
var w: 0..N = 0
var dropped: 0..N = 0
action push { require w < N
  w = w + 1 }
action pop { require r < w
  r = r + 1 }
action clear { require r < w
  dropped = count k in 0..N-1: k >= r and k < w and k != EXCLUDE
  w = r }
allow deadlock
transition drops_pending: w' < w implies dropped' == w - r
"""


def test_count_in_an_action_is_exact_for_all_sizes(tmp_path):
    r = verify_for_all(write_spec(tmp_path, QUEUE), ["N"], {"N": 1}, timeout=120).result("drops_pending")
    assert r.verdict is Verdict.PROVED, r
    assert r.engine == "forall" and r.detail["for_all"] == ["N"]


def test_count_in_an_action_off_by_one_is_violated(tmp_path):
    src = QUEUE.replace("dropped' == w - r", "dropped' == w - r + 1")
    r = verify_for_all(write_spec(tmp_path, src), ["N"], {"N": 1}, timeout=120).result("drops_pending")
    assert r.verdict is Verdict.VIOLATED and r.detail["instance"] == {"N": 1}


def test_count_excluding_a_slot_beyond_the_small_sizes_is_never_proved(tmp_path):
    """Slot 4 is skipped by the count: the property holds while N <= 4 and fails from N = 5
    on, beyond every instance the engine explores explicitly (N <= 3) and the one its
    second round samples (N = 4)."""
    src = QUEUE.replace("const EXCLUDE = -1", "const EXCLUDE = 4")
    path = write_spec(tmp_path, src)
    for n in (1, 2, 3, 4):
        assert verify(path, consts={"N": n}).result("drops_pending").verdict is Verdict.PROVED
    assert verify(path, consts={"N": 5}).result("drops_pending").verdict is Verdict.VIOLATED
    r = verify_for_all(path, ["N"], {"N": 1}, timeout=240).result("drops_pending")
    assert r.verdict is not Verdict.PROVED, r


def test_count_with_a_body_outside_the_fragment_is_unknown(tmp_path):
    src = QUEUE.replace("k >= r and k < w and k != EXCLUDE", "k >= r and (k < w or k == 0)")
    r = verify_for_all(write_spec(tmp_path, src), ["N"], {"N": 1}, timeout=60).result("drops_pending")
    assert r.verdict is Verdict.UNKNOWN and "count" in r.reason


# ------------------------------------------------------------------ reef_rewind's CAP+1 bound


def _reef(bound: str, **consts: int) -> Verdict:
    from gpcheck.spec.load import resolve_spec_path

    src = resolve_spec_path("reef_rewind").read_text()
    assert "issued[q] - koff[q] <= CAP + 1" in src
    src = src.replace("issued[q] - koff[q] <= CAP + 1", f"issued[q] - koff[q] <= {bound}")
    model = load_source(src, "reef_rewind.gpspec", consts)
    return verify(model, properties=["rewind_bounded"]).results[0].verdict


# two queues: 46 s of CPU (an explicit search of the whole instance), `slow`; two RT tasks at N=4:
# 19 s (`slow`; at N=3, 2 s, the bound is proved: the default run's case); the others stay
@pytest.mark.parametrize("consts", [{}, {"N": 5}, {"MAXRT": 2, "N": 3},
                                    pytest.param({"MAXRT": 2}, marks=pytest.mark.slow),
                                    pytest.param({"Q": 2, "N": 3}, marks=pytest.mark.slow)])
def test_reef_rewind_reexecutes_at_most_cap_plus_one_kernels(consts):
    """The explicit engine: the bound holds, and one less is violated (the bound is tight)."""
    assert _reef("CAP + 1", **consts) is Verdict.PROVED
    if consts.get("N", 4) >= 4:
        assert _reef("CAP", **consts) is Verdict.VIOLATED


@pytest.mark.slow
def test_reef_rewind_ring_integrity_for_all_n():
    """`clear` sets `temp` from a count inside the action: inside the fragment now."""
    r = verify_for_all("reef_rewind", ["N"], {"N": 1}, properties=["ring_integrity"], timeout=300).result(
        "ring_integrity")
    assert r.verdict is Verdict.PROVED, r
    assert "hq_r[x] <= hq_w[x]" in r.detail["invariant"]


@pytest.mark.slow  # about 1 min (deterministic: step limits)
def test_reef_rewind_bound_for_all_n_and_invariant_rechecked():
    """Issue 14's quantitative target: at most CAP+1 kernels re-executed per preemption, for
    every number of kernels N (the other constants at their defaults: one BE queue, CAP=2,
    one RT task); the printed lemmas hold in small instances (the explicit engine)."""
    from gpcheck.spec.load import resolve_spec_path

    r = verify_for_all("reef_rewind", ["N"], {"N": 1}, properties=["rewind_bounded"], timeout=900).result(
        "rewind_bounded")
    assert r.verdict is Verdict.PROVED, r
    assert r.detail["for_all"] == ["N"] and r.detail["round"] == 2
    inv = r.detail["invariant"]
    assert "issued[x]" in inv
    src = resolve_spec_path("reef_rewind").read_text()
    lemmas = [line.removeprefix("and ").strip() for line in inv.split("\n")]
    extra = "".join(f"\ninvariant mined_{i}: {text}" for i, text in enumerate(lemmas))
    for consts in ({"N": 1}, {"N": 2}, {"N": 5}):
        report = verify(load_source(src + extra, "mined.gpspec", consts))
        for i in range(len(lemmas)):
            assert report.result(f"mined_{i}").verdict is Verdict.PROVED, (consts, lemmas[i])

"""`--for-all` over counted rows with a component whose value range grows with the constants
(checker/engines/param/symvalue.py, NOTE(symbolic-values)): progress `prog: [0..N-1] -> 0..L` counted
per slot value as an SMT array of rows per progress value with exact moments. A slot model is
proved for all N and L with its printed lemmas re-checked by the explicit engine; a variant that
fails only from L = 6 on is never proved; an order comparison the points cannot express is
`unknown` naming it; nvidia_tsg's lemmas for all S, NB and BLEN read back are inductive."""

from __future__ import annotations

import pytest

from gpcheck.checker import Verdict
from gpcheck.checker.api.for_all import verify_for_all
from gpcheck.checker.engines.param.extract import Unsupported
from tests.recheck import assert_never_proved_beyond, read_back_inductive, recheck_lemmas, write_spec

# N slots run blocks of L ticks for two streams (at most N blocks each); `tick` advances every
# resident block, accumulates its work (saturating) and completes the blocks that reach L.
JOBS = """model jobs
const N = 2
const L = 2
var slot: [0..N-1] -> 0..2 = 2
var prog: [0..N-1] -> 0..L = 0
var launched: [0..1] -> 0..N = 0
var done: [0..1] -> 0..N = 0
var work: [0..1] -> 0..N*L+1 = 0
action launch(i: 0..N-1, s: 0..1) {
    require slot[i] == 2 and launched[s] < N
    slot[i] = s
    prog[i] = 0
    launched[s] = launched[s] + 1
}
action tick {
    require any i in 0..N-1: slot[i] != 2
    for i in 0..N-1 {
        if slot[i] != 2 {
            work[slot[i]] = if work[slot[i]] <= N * L then work[slot[i]] + 1 else work[slot[i]]
            prog[i] = prog[i] + 1
            if prog[i] == L {
                done[slot[i]] = done[slot[i]] + 1
                slot[i] = 2
                prog[i] = 0
            }
        }
    }
}
allow deadlock
invariant no_reexecution: all s in 0..1: work[s] <= N * L and done[s] <= launched[s]
invariant no_loss: all s in 0..1: done[s] == N implies work[s] == N * L
"""
TICK = "            prog[i] = prog[i] + 1\n"


# no_loss alone in the default run (7.5 s of CPU): its lemmas hold the work accounting both ways,
# no_reexecution's the upper half of it; both in one run (10.7 s), `slow`
@pytest.mark.parametrize("names", [("no_loss",), pytest.param(("no_reexecution", "no_loss"), marks=pytest.mark.slow)],
                         ids=["no_loss", "both"])
def test_slot_progress_for_all_slots_and_lengths_and_lemmas_recheck(tmp_path, names):
    """The properties proved for every N and L: the work accounting `work[x] == L * done[x] +
    (progress of x's blocks)` over the progress moments, each printed lemma true in explicit
    instances beyond the sampled sizes."""
    rep = verify_for_all(write_spec(tmp_path, JOBS), ["N", "L"], {"N": 1, "L": 1}, properties=list(names),
                         timeout=120)
    for name in names:
        r = rep.result(name)
        assert r.verdict is Verdict.PROVED and r.detail["for_all"] == ["N", "L"], r
        inv = r.detail["invariant"]
        assert "(sum i in 0..N - 1: if slot[i] == x then prog[i] else 0)" in inv and "L * done[x]" in inv
        recheck_lemmas(JOBS, inv, [{"N": 1, "L": 4}, {"N": 2, "L": 6}, {"N": 3, "L": 3}])


@pytest.mark.slow  # 24 s of CPU; fast: test_forall_products.py::test_a_product_bound_that_fails_beyond_every_sampled_size_is_never_proved
def test_a_block_that_skips_a_tick_only_when_it_is_long_is_never_proved(tmp_path):
    """A block at progress 5 that is not finishing skips a tick: no_loss holds while L <= 5 and
    fails from L = 6 on, beyond every length the engine samples; the point test `prog[i] == 5`
    is counted exactly, so the lower half of the work accounting is refused for all sizes."""
    src = JOBS.replace(TICK, TICK + "            if prog[i] == 5 and prog[i] < L {\n"
                                    "                prog[i] = prog[i] + 1\n            }\n")
    assert src != JOBS
    path = write_spec(tmp_path, src)
    rep = assert_never_proved_beyond(path, "no_loss", [{"N": n, "L": l} for n, l in ((1, 1), (2, 4), (1, 5))],
                                     {"N": 1, "L": 6}, {"N": 1, "L": 1})
    assert rep.result("no_reexecution").verdict is Verdict.PROVED  # true for every size


@pytest.mark.parametrize("action, construct", [
    # progress compared with another state value: no point test of the range's ends
    ("action peek {\n    require any i in 0..N-1: slot[i] == 2 and prog[i] < launched[0]\n}", "compared by an order"),
    # progress doubled: its range check compares 2 * prog[i] with L
    ("action dbl {\n    for i in 0..N-1 {\n        if slot[i] == 2 {\n            prog[i] = 2 * prog[i]\n"
     "        }\n    }\n}", "multiplied by 2"),
    # progress mirrored: the rows' new values are no shift of the old ones
    ("action mirror {\n    for i in 0..N-1 {\n        if slot[i] == 2 {\n            prog[i] = L - prog[i]\n"
     "        }\n    }\n}", "neither fixed nor the old value plus a number"),
    # a second progress-like array read jointly with prog: two symbolic-valued components in a group
    ("var mark: [0..N-1] -> 0..L = 0\naction peek2 {\n    require any i in 0..N-1: slot[i] == 2 and prog[i] == mark[i]\n}",
     "read jointly"),
], ids=["order-comparison", "doubled", "mirrored", "two-in-a-group"])
def test_shapes_the_points_cannot_count_are_unknown_and_name_them(tmp_path, action, construct):
    """An action (harmless: it touches free slots only, whose progress `launch` resets) that
    reads or writes progress in a way the point pieces cannot count: unknown, naming it."""
    src = JOBS.replace("allow deadlock\n", action + "\nallow deadlock\n")
    rep = verify_for_all(write_spec(tmp_path, src), ["N", "L"], {"N": 1, "L": 1}, timeout=60)
    for name in ("no_reexecution", "no_loss"):
        r = rep.result(name)
        assert r.verdict is Verdict.UNKNOWN, r
        assert "prog" in r.reason and construct in r.reason, r.reason


def test_point_tests_and_their_truth_on_the_other_rows():
    """The rewrite behind the pieces: `==` and `!=` are points, `<=` near an end names the end
    points, far from the ends and multiplied are refused."""
    import z3

    from gpcheck.checker.engines.param.symvalue import Tests

    x, hi = z3.Int("x"), z3.Int("L")
    t = Tests(x, z3.IntVal(0), hi, "prog")
    assert z3.is_false(t.rest(x + 1 == hi)) and z3.is_false(z3.simplify(t.rest(z3.Not(x + 1 <= hi))))
    assert z3.is_true(t.rest(x < hi)) and z3.is_false(z3.simplify(t.rest(x <= 1)))
    assert [str(p) for p in t.points] == ["-1 + L", "L", "0", "1"]
    with pytest.raises(Unsupported, match="compared by an order"):
        Tests(x, z3.IntVal(0), hi, "prog").rest(x <= z3.Int("k"))
    with pytest.raises(Unsupported, match="multiplied"):
        Tests(x, z3.IntVal(0), hi, "prog").rest(2 * x == hi)


# ------------------------------------------------------------------ nvidia_tsg for all S, NB, BLEN

# What `gpcheck verify nvidia_tsg --for-all S,NB,BLEN` printed for no_loss: the save area of the
# resident TSG empty, the block accounting, and the work accounting with `BLEN * done[x]` over the
# progress of the resident and saved blocks (the moments of `prog` and `sv_prog`).
TSG_LEMMAS = [
    "(all x in 0..1: (all y in 0..S - 1: (x == cur implies sv[x][y] >= 3)))",
    "(all x in 0..2: (count i in 0..S - 1: slot[i] == x) + (sum i in 0..1: (count j in 0..S - 1: sv[i][j] == x))"
    " + done[x] - launched[x] <= 0)",
    "(all x in 0..2: (sum i in 0..S - 1: if slot[i] == x then prog[i] else 0) + (sum i in 0..1: (sum j in 0..S - 1:"
    " if sv[i][j] == x then sv_prog[i][j] else 0)) + BLEN * done[x] - work[x] <= 0)",
    "(all x in 0..2: work[x] - (sum i in 0..S - 1: if slot[i] == x then prog[i] else 0) - (sum i in 0..1: "
    "(sum j in 0..S - 1: if sv[i][j] == x then sv_prog[i][j] else 0)) - BLEN * done[x] <= 0)",
]


def _groups(enc) -> None:  # type: ignore[no-untyped-def]
    assert enc.counters is not None and enc.counters.describe() == \
        "(slot, prog), (sv[0], sv_prog[0]), (sv[1], sv_prog[1])"
    assert [enc.counters.comps[k].text for k in enc.counters.sym if k is not None] == \
        ["prog", "sv_prog[0]", "sv_prog[1]"]  # one symbolic-valued component per group


def _inductive(src: str, hyps: list[str], goals: list[str]) -> tuple[bool, bool]:
    """(initiation, consecution) of `goals` relative to `hyps` with S, NB and BLEN symbolic."""
    return read_back_inductive(src, ["S", "NB", "BLEN"], hyps, goals, _groups)


@pytest.mark.slow  # 20 s of CPU: a bundled model's lemmas read back; fast: test_slot_progress_for_all_slots_and_lengths_and_lemmas_recheck
def test_nvidia_tsg_lemmas_for_all_slots_blocks_and_lengths_read_back_are_inductive():
    """The printed lemmas, added to the model as text, are inductive together with no_loss and
    no_reexecution for all S, NB and BLEN; without the work accounting's lower half no_loss is
    not (the encoding is no vacuous one); every lemma holds in explicit instances beyond the
    sampled ones. About 9 s of CPU (14 s wall at load 4)."""
    from gpcheck.spec.load import resolve_spec_path

    base = resolve_spec_path("nvidia_tsg").read_text()
    src = base + "".join(f"\ninvariant mined_{i}: {t}" for i, t in enumerate(TSG_LEMMAS))
    names = [f"mined_{i}" for i in range(len(TSG_LEMMAS))]
    everything = [*names, "no_loss", "no_reexecution"]
    assert _inductive(src, everything, everything) == (True, True)
    assert _inductive(src, [n for n in names if n != "mined_2"] + ["no_loss"], ["no_loss"]) == (True, False)
    recheck_lemmas(base, "\nand ".join(TSG_LEMMAS), [{"S": 1, "NB": 2, "BLEN": 4}, {"S": 3, "NB": 2, "BLEN": 3}])


@pytest.mark.long
def test_nvidia_tsg_for_all_slots_blocks_and_lengths():
    """Five properties proved for all S, NB and BLEN at once, their printed lemmas re-checked
    explicitly; bounded_inversion violated at an instance with blocks of three ticks or more,
    never proved: `python -m pytest -m long`."""
    from gpcheck.spec.load import resolve_spec_path

    names = ["S", "NB", "BLEN"]
    rep = verify_for_all("nvidia_tsg", names, {n: 1 for n in names}, timeout=900)
    src = resolve_spec_path("nvidia_tsg").read_text()
    for name in ("no_reexecution", "no_loss", "ring_integrity", "ring_kept", "switch_latency"):
        r = rep.result(name)
        assert r.verdict is Verdict.PROVED and r.detail["for_all"] == names, r
        if r.detail["invariant"]:
            recheck_lemmas(src, r.detail["invariant"], [{"S": 1, "NB": 1, "BLEN": 3}, {"S": 3, "NB": 2, "BLEN": 2}])
    r = rep.result("bounded_inversion")
    assert r.verdict is Verdict.VIOLATED, r
    assert r.detail["instance"]["BLEN"] >= 3 and r.counterexample is not None

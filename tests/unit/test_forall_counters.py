"""`--for-all` over a symbolic slot count by counter abstraction (checker/engines/param/counters.py):
rows of the arrays over `0..S-1` counted per value, loops as linear maps on the counters,
accumulations `work[slot[i]] += 1` as sums of counters; nvidia_tsg's invariants for all S and
NB with every printed lemma re-checked by the explicit engine, and specs that hold up to some
slot count and fail beyond it, never proved."""

from __future__ import annotations

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.api.for_all import verify_for_all
from tests.recheck import read_back_inductive, recheck_lemmas, write_spec

# Two streams' blocks in S slots; `tick` advances every resident block and accumulates the
# block-ticks per stream (saturating, as nvidia_tsg does). `few_busy` holds while S <= 3 and
# `small_step` (at most 3 block-ticks of one stream per tick) while S <= 3 or NB <= 3: both
# fail only beyond every size the engine samples (S, NB <= 3), so neither may be proved.
SLOTS = """model slots
const S = 2
const NB = 2
var slot: [0..S-1] -> 0..2 = 2
var prog: [0..S-1] -> 0..1 = 0
var launched: [0..1] -> 0..NB = 0
var done: [0..1] -> 0..NB = 0
var work: [0..1] -> 0..2*NB+1 = 0
action launch(i: 0..S-1, s: 0..1) {
    require slot[i] == 2 and launched[s] < NB
    slot[i] = s
    prog[i] = 0
    launched[s] = launched[s] + 1
}
action tick {
    require any i in 0..S-1: slot[i] != 2
    for i in 0..S-1 {
        if slot[i] != 2 {
            work[slot[i]] = WORK
            if prog[i] == 1 {
                done[slot[i]] = done[slot[i]] + 1
                slot[i] = 2
                prog[i] = 0
            } else {
                prog[i] = 1
            }
        }
    }
}
allow deadlock
invariant no_reexecution: all s in 0..1: work[s] <= 2 * NB and done[s] <= launched[s]
invariant few_busy: (count i in 0..S-1: slot[i] != 2) <= 3
transition small_step: all s in 0..1: work[s]' <= work[s] + 3
"""
SATURATING = SLOTS.replace("WORK", "if work[slot[i]] <= 2 * NB then work[slot[i]] + 1 else work[slot[i]]")
PLAIN = SLOTS.replace("WORK", "work[slot[i]] + 1")


# both `slow` (plain increments 6 s of CPU, saturating 5 s); fast: test_forall_proof_cores.py::
# test_a_counter_encoded_proof_gets_its_core, the saturating spec with a lost save behind an
# assumption: the same counter abstraction proved, its lemmas re-checked, few_busy and small_step
# never proved, in one for-all run
@pytest.mark.parametrize("src", [pytest.param(SATURATING, id="saturating", marks=pytest.mark.slow),
                                 pytest.param(PLAIN, id="plain", marks=pytest.mark.slow)])
def test_slot_accounting_for_all_s_and_nb_and_what_fails_beyond_the_samples_is_never_proved(tmp_path, src):
    path = write_spec(tmp_path, src)
    for s, nb in ((1, 1), (3, 3), (2, 4)):  # every size the engine samples, and more: they hold
        rep = verify(path, consts={"S": s, "NB": nb})
        assert rep.result("few_busy").verdict is Verdict.PROVED
        assert rep.result("small_step").verdict is Verdict.PROVED
    rep = verify(path, consts={"S": 4, "NB": 4})
    assert rep.result("few_busy").verdict is Verdict.VIOLATED
    assert rep.result("small_step").verdict is Verdict.VIOLATED
    report = verify_for_all(path, ["S", "NB"], {"S": 1, "NB": 1}, timeout=300)
    r = report.result("no_reexecution")
    assert r.verdict is Verdict.PROVED, r
    assert r.detail["for_all"] == ["S", "NB"]
    assert "(count i in 0..S - 1: slot[i] == x)" in r.detail["invariant"]
    recheck_lemmas(src, r.detail["invariant"], [{"S": 1, "NB": 2}, {"S": 3, "NB": 2}, {"S": 4, "NB": 3}])
    for name in ("few_busy", "small_step"):
        assert report.result(name).verdict is not Verdict.PROVED, report.result(name)


OUTSIDE = [
    # `work` read in the loop's condition: the iterations' order would matter, so the loop is
    # no map on the counters
    pytest.param(SATURATING, "if slot[i] != 2 {", "if slot[i] != 2 and work[0] < 2 * NB + 1 {",
                 "reading work, which it accumulates into", id="loop-reads-its-accumulator"),
    # an iteration that asks about every row sees the rows before it already updated: no map
    # on the counters of the state before the loop
    pytest.param(SATURATING, "if prog[i] == 1 {", "if prog[i] == 1 or (all j in 0..S-1: slot[j] != 0) {",
                 "inside a loop over it", id="fold-inside-the-loop"),
    # `+1` for one stream and `-1` for the other into one array: whether an intermediate value
    # leaves its range depends on the rows' order
    pytest.param(PLAIN, "work[slot[i]] = work[slot[i]] + 1",
                 "work[slot[i]] = work[slot[i]] + (if slot[i] == 0 then 1 else 0 - 1)",
                 "addends of both signs", id="addends-of-both-signs"),
]


@pytest.mark.parametrize("base, old, new, construct", OUTSIDE)
def test_loops_outside_the_fragment_are_unknown_and_name_the_construct(tmp_path, base, old, new, construct):
    """A loop the counters cannot encode exactly: the verdict is unknown and names why."""
    assert old in base
    src = base.replace(old, new, 1)
    report = verify_for_all(write_spec(tmp_path, src), ["S", "NB"], {"S": 1, "NB": 1}, timeout=120)
    r = report.result("no_reexecution")
    assert r.verdict is Verdict.UNKNOWN, r
    assert construct in r.reason


@pytest.mark.slow
def test_nvidia_tsg_for_all_slots_and_blocks_and_lemmas_rechecked():
    """nvidia_tsg's invariants and transition properties for every slot count S and every
    number of blocks per kernel NB (BLEN = 2 as declared): the lemmas count slots and saved
    blocks per stream and progress, and state facts about every row; each printed lemma holds
    in small instances (the explicit engine). no_reexecution (proved by the same command, its
    lemmas a subset of no_loss's) is left out to keep the test near a minute: the read-back
    test above shows it inductive relative to the printed lemmas for all S and NB."""
    from gpcheck.spec.load import resolve_spec_path

    names = ("no_loss", "bounded_inversion", "switch_latency", "ring_integrity", "ring_kept")
    report = verify_for_all("nvidia_tsg", ["S", "NB"], {"S": 1, "NB": 1}, properties=names, timeout=900)
    src = resolve_spec_path("nvidia_tsg").read_text()
    for name in names:
        r = report.result(name)
        assert r.verdict is Verdict.PROVED, r
        assert r.detail["for_all"] == ["S", "NB"]
        if r.detail["invariant"]:
            recheck_lemmas(src, r.detail["invariant"], [{"S": 1, "NB": 1}, {"S": 3, "NB": 2}, {"S": 4, "NB": 1}])
    assert "(count i in 0..S - 1: slot[i] == x)" in report.result("no_loss").detail["invariant"]


# The lemmas `gpcheck verify nvidia_tsg --for-all S,NB` printed (no_loss's and bounded_inversion's).
TSG_LEMMAS = [
    "(all x in 0..1: (all y in 0..S - 1: (x == cur implies sv[x][y] >= 3)))",
    "(all x in 0..2: (count i in 0..S - 1: slot[i] == x) + (sum i in 0..1: (count j in 0..S - 1: sv[i][j] == x))"
    " + done[x] - launched[x] <= 0)",
    "(all x in 0..2: work[x] - (sum i in 0..S - 1: if slot[i] == x then prog[i] else 0) - (sum i in 0..1: "
    "(sum j in 0..S - 1: if sv[i][j] == x then sv_prog[i][j] else 0)) - 2 * done[x] <= 0)",
    "(all x in 0..2: 2 * done[x] + (sum i in 0..S - 1: if slot[i] == x then prog[i] else 0) + (sum i in 0..1: "
    "(sum j in 0..S - 1: if sv[i][j] == x then sv_prog[i][j] else 0)) - work[x] <= 0)",
    "(not hi_on implies inv <= 0)",
    "(all x in 0..S - 1: (cur == 1 implies slot[x] >= 2))",
    "(all x in 0..1: (all y in 0..S - 1: (cur == 0 implies sv[x][y] >= 2)))",
    "(all x in 0..S - 1: ((launched[0] < NB) and slot[x] == 1 implies inv <= prog[x]))",
    "(all x in 0..1: (all y in 0..S - 1: ((launched[0] < NB) and sv[x][y] == 1 implies inv <= sv_prog[x][y])))",
]


def _groups(enc) -> None:  # type: ignore[no-untyped-def]
    assert enc.counters is not None and enc.counters.describe() == \
        "(slot, prog), (sv[0], sv_prog[0]), (sv[1], sv_prog[1])"


def _inductive(src: str, hyps: list[str], goal: str) -> tuple[bool, bool]:
    """(initiation, consecution) of invariant `goal` relative to `hyps` with S and NB symbolic
    (counters for the slots)."""
    return read_back_inductive(src, ["S", "NB"], hyps, [goal], _groups)


@pytest.mark.slow  # read-back of a bundled model's lemmas with S and NB symbolic; fast: test_forall_proof_cores.py::test_a_counter_encoded_proof_gets_its_core
def test_nvidia_tsg_printed_lemmas_read_back_are_inductive_for_all_s_and_nb_and_each_accounting_one_is_needed():
    """The printed invariant, added to the model as text, is read by the encoder (counts and
    `all` over `0..S - 1` through the counters) and is inductive with no_loss for all S and NB;
    without the block accounting (`launched[x] == done[x] + ...`) no_loss is not inductive:
    the encoding is no vacuous one."""
    from gpcheck.spec.load import resolve_spec_path

    src = resolve_spec_path("nvidia_tsg").read_text()
    src += "".join(f"\ninvariant mined_{i}: {t}" for i, t in enumerate(TSG_LEMMAS))
    names = [f"mined_{i}" for i in range(len(TSG_LEMMAS))]
    for goal in (*names, "no_loss", "no_reexecution", "bounded_inversion"):
        assert _inductive(src, [*names, "no_loss", "no_reexecution", "bounded_inversion"], goal) == (True, True), goal
    assert _inductive(src, [n for n in names if n != "mined_1"] + ["no_loss"], "no_loss") == (True, False)
    recheck_lemmas(resolve_spec_path("nvidia_tsg").read_text(), "\nand ".join(TSG_LEMMAS),
                   [{"S": 1, "NB": 2}, {"S": 3, "NB": 1}])

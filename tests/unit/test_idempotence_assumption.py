"""The hand-set idempotence mask of xsched and reef_rewind as a declared assumption
(`assume idempotent_mask`, over the ghost `idem`), and the re-runs an inert assumption does not
need (NOTE(inert-assumption) in checker/api/inert.py)."""

from __future__ import annotations

import pytest

from gpcheck.checker import verify
from gpcheck.checker.api import assumptions, inert
from gpcheck.checker.core.verdict import Verdict
from gpcheck.spec import load_source, load_spec


def _res(model: str, prop: str | None = None, **consts: int):
    rep = verify(load_spec(model, consts), properties=[prop] if prop else None)
    return {r.property: r for r in rep.results}


def test_xsched_paper_level3_rests_on_the_idempotence_mask() -> None:
    """The paper's level 3 (hand labels, whole restart): k0 and k2 restart, so the proof that only
    idempotent kernels run twice is the mask's word for it."""
    r = _res("xsched", "reexec_idempotent_only", LABEL=5, RESTORE=0)["reexec_idempotent_only"]
    assert r.verdict is Verdict.PROVED and r.assumptions == ("idempotent_mask",)


def test_xsched_level2_reruns_nothing_so_the_mask_is_not_used() -> None:
    r = _res("xsched", "reexec_idempotent_only", LEVEL=2)["reexec_idempotent_only"]
    assert r.verdict is Verdict.PROVED and "idempotent_mask" not in r.assumptions


def test_xsched_defaults_keep_the_hazard_under_the_mask() -> None:
    res = _res("xsched")
    r = res["reexec_idempotent_only"]
    assert r.verdict is Verdict.VIOLATED and "idempotent_mask" in r.assumptions
    assert res["no_reexecution"].verdict is Verdict.PROVED
    assert all("idempotent_mask" not in res[p].assumptions
               for p in ("no_reexecution", "no_loss", "no_starvation", "deadlock", "range"))


def test_reef_rewind_mask_named_where_every_kernel_is_idempotent() -> None:
    res = _res("reef_rewind", None, N=2, CAP=1, IDEMPOTENT=15)
    assert res["reexec_idempotent_only"].verdict is Verdict.PROVED
    assert res["reexec_idempotent_only"].assumptions == ("idempotent_mask",)
    assert res["no_reexecution"].verdict is Verdict.VIOLATED  # it does run twice
    assert res["no_loss"].verdict is Verdict.PROVED and res["no_loss"].assumptions == ()
    res = _res("reef_rewind", "reexec_idempotent_only", N=2, CAP=1)
    assert res["reexec_idempotent_only"].verdict is Verdict.VIOLATED  # k1 is not idempotent


GHOST = """
model ghost "a fact the dynamics never see, pinned by an assumption"
const N = 3
var x: 0..N = 0
var g: [0..N-1] -> bool = any
var h: bool = any
action step { require x < N; x = x + 1 }
assume facts: all k in 0..N-1: g[k]
assume seen: h
action peek { require h and x == N; x = 0 }
invariant uses_fact: x > 0 implies g[x - 1]
invariant uses_fact_safely: all k in 0..N-1: x > k implies g[k]
invariant dynamics: x <= N
allow deadlock
"""


def test_inert_assumptions_are_told_apart_from_ones_the_dynamics_read() -> None:
    m = load_source(GHOST, "ghost.gpspec")
    assert inert.inert_vars(m, "facts") == {1}
    assert inert.inert_vars(m, "seen") == set()  # peek reads h
    props = {"uses_fact", "uses_fact_safely", "dynamics", "deadlock", "range"}
    # range is not known unchanged: uses_fact's index x - 1 is not a quantified variable
    assert inert.unaffected(m, "facts", props) == {"dynamics", "deadlock"}
    m2 = load_source(GHOST.replace("invariant uses_fact: x > 0 implies g[x - 1]\n", ""), "ghost.gpspec")
    assert inert.unaffected(m2, "facts", props - {"uses_fact"}) == {"dynamics", "deadlock", "range"}


@pytest.mark.parametrize("spec", ["xsched", "ghost"])
def test_the_inert_skip_gives_what_the_reruns_give(spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same assumptions, with and without the skip (the re-runs decide every result)."""
    model = load_source(GHOST, "ghost.gpspec") if spec == "ghost" else load_spec(spec)
    skipped = {r.property: r.assumptions for r in verify(model).results}
    real = assumptions.used
    monkeypatch.setattr(assumptions, "used", lambda m, res, rerun, inert_skip=True: real(m, res, rerun, False))
    full = {r.property: r.assumptions for r in verify(model).results}
    assert skipped == full
    if spec == "ghost":
        assert full["uses_fact_safely"] == ("facts",) and full["dynamics"] == ()

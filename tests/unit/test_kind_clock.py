"""k-induction's results do not depend on the wall clock (NOTE(kind-clock) in checker/engines/smt/kind.py).

Before, `--timeout` divided the time left into shares: the auxiliary invariants' Houdini got
half of it (none at all with less than 10 s left) and each property an equal part of the rest,
so the helper invariants kept and the properties proved depended on how fast the machine was.
Now every internal choice is a budget of Z3 steps; the clock only turns a result into
`unknown` (timeout)."""

from __future__ import annotations

import time

import pytest

from gpcheck.checker import verify
from gpcheck.checker.engines.smt import session


def _printed(report) -> list[tuple[str, str, str | None, object]]:
    return [(r.property, r.verdict.value, r.reason, (r.detail.get("auxiliary") or {}).get("lemmas"))
            for r in report.results]


# ring with two kernels of one wave: 75 auxiliary lemmas, 0.4 s of CPU a run (1 s at its defaults)
SMALL = {"N": 2, "B": 1}


@pytest.fixture(scope="module")
def free(examples) -> list[tuple[str, str, str | None, object]]:
    """k-induction's results on the small ring without a time limit (one run for both tests)."""
    return _printed(verify(examples / "ring.gpspec", engine="kind", consts=SMALL))


def test_a_timeout_does_not_change_what_kind_proves(examples, free):
    """With 9 s the old code mined no auxiliary invariants and printed other proofs (and a
    `no_reexecution` climbing k into the timeout) than without a limit."""
    assert any(lemmas for *_, lemmas in free)  # the auxiliary invariants take part
    assert _printed(verify(examples / "ring.gpspec", engine="kind", consts=SMALL, timeout=9)) == free


class _FastClock:
    """`time` as session.Deadline sees it, running `factor` times faster: a slow machine."""

    def __init__(self, factor: float) -> None:
        self.factor, self.t0 = factor, time.monotonic()

    def monotonic(self) -> float:
        return self.t0 + (time.monotonic() - self.t0) * self.factor


def test_a_slow_machine_only_turns_results_into_timeouts(examples, monkeypatch, free):
    free = {p: rest for p, *rest in free}
    for factor in (30.0, 300.0):
        monkeypatch.setattr(session, "time", _FastClock(factor))
        got = _printed(verify(examples / "ring.gpspec", engine="kind", consts=SMALL, timeout=60))
        monkeypatch.undo()
        for prop, verdict, reason, lemmas in got:
            if verdict == "unknown" and reason is not None and reason.startswith("timeout"):
                continue
            assert [verdict, reason, lemmas] == free[prop], (factor, prop)

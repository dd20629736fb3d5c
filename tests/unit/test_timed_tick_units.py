"""NOTE(tick-units) in checker/engines/timed/latency.py: the divergence search tries several tick
units under a node budget; every unit decides it exactly, so the answer (bounded or not, the
min and max, a lasso) does not depend on which unit finished first."""

from __future__ import annotations

import pytest

from gpcheck.checker import verify
from gpcheck.checker.engines.timed import latency
from gpcheck.spec import load_source

# a 20-unit slice renewed for ever once the other side is reset; a 200 constant elsewhere (the
# shape of nvidia_preempt under WFI, whose 1,024 us slice beside a 100 ms timeout made the default
# unit, one above every constant, the slow one)
SPEC = """model renew
var cur: 0..1 = 0
var dead: bool = false
var pending: bool = false
action slice time 20 { cur = if dead then 1 else 1 - cur }
action arrive { require not pending  pending = true }
action serve { require pending and cur == 0  pending = false }
action reset time 200 { require pending and not dead  dead = true }
allow deadlock
latency own_slice: from cur == 1 to cur == 0
latency wait: from pending to not pending
"""


def _answers(budget: int, monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, ...]]:
    monkeypatch.setattr(latency, "UNIT_BUDGET", budget)
    rep = verify(load_source(SPEC), assumption_use=False)
    out = []
    for p in ("own_slice", "wait"):
        r = rep.result(p)
        out.append((r.verdict, r.detail.get("min"), r.detail.get("max"), r.counterexample is not None
                    and r.counterexample.loop is not None))
    return out


def test_every_budget_gives_the_same_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    tried: list[int] = []
    orig = latency._Measure._divergent

    def spy(self: object, unit: int, allowance: int) -> object:
        tried.append(unit)
        return orig(self, unit, allowance)  # type: ignore[arg-type]

    monkeypatch.setattr(latency._Measure, "_divergent", spy)
    big = _answers(10**9, monkeypatch)
    assert tried and set(tried) == {201}  # the default unit finishes at once with room
    tried.clear()
    small = _answers(3, monkeypatch)  # every unit over budget at first: rounds, other units
    assert len(set(tried)) > 1
    assert small == big
    assert big[0][2] is None and big[0][3]  # own_slice: unbounded once the reset made cur 1 for ever

"""gpmodel/vector_pred.py (issue 35, item 3): a state predicate evaluated a slot column at a time
gives, in every state, the truth value of the Python core's per-state code; what it cannot
rewrite (an index, a division, a call) is refused, not guessed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpcheck.gpmodel import compile_model
from gpcheck.gpmodel.jit import packed_layout
from gpcheck.gpmodel.vector_pred import column_predicate, column_value
from gpcheck.checker.engines.explicit import explicit
from gpcheck.spec import load_spec

MODELS = Path(__file__).resolve().parents[2] / "spec" / "models"


@pytest.mark.parametrize("name", ["cwsr", "kfd_monitor", "gpreempt_timeslice", "kfd_sched"])
def test_columns_give_the_per_state_truths(name):
    m = load_spec(str(MODELS / f"{name}.gpspec"), {})
    cm = compile_model(m)
    packed = packed_layout(cm)
    states = list(explicit.search(cm, set()).parent)
    keys = np.array([packed.pack(s) for s in states], dtype=np.int64).reshape(len(states), packed.words)
    exprs = [e for p in m.latencies for e in (p.p, p.q)] + [inv.expr for inv in m.invariants]
    vectorized = 0
    for e in exprs:
        vec = column_predicate(cm.predicate_text(e), {k: (f.lo, f.lo + f.mask) for k, f in enumerate(packed.fields)})
        if vec is None:
            continue
        vectorized += 1
        fn, slots = vec
        cols = {k: ((keys[:, f.word] >> f.shift) & f.mask) + f.lo for k, f in enumerate(packed.fields) if k in slots}
        got = fn(cols, len(states))
        pred = cm.predicate(e)
        assert got.tolist() == [bool(pred(s)) for s in states]
    assert vectorized >= len(m.latencies)  # every from/to predicate of these models


R = {0: (0, 7), 1: (0, 3), 2: (0, 1), 3: (-(1 << 40), 1 << 40)}


def test_what_may_fail_call_or_wrap_is_refused():
    assert column_predicate("def pred(s):\n    return _ix(s[0], 0, 3) == 1\n", R) is None
    assert column_predicate("def pred(s):\n    return (s[0] // 2) == 1\n", R) is None
    assert column_predicate("def pred(s):\n    return s[t] == 1\n", R) is None
    assert column_predicate("def pred(s):\n    return s[3] * s[3] > 0\n", R) is None  # 2^80: beyond 64 bits
    assert column_predicate("def pred(s):\n    return s[0] * 100000000000000000000 > 0\n", R) is None
    assert column_predicate("def pred(s):\n    return s[3] * 1000 > 0\n", R) is not None
    fn, slots = column_predicate("def pred(s):\n    return (not (0 < s[1] <= 2)) or (s[0] if s[2] else 0)\n", R)
    assert slots == {0, 1, 2}
    c = {0: np.array([0, 5, 0, 1]), 1: np.array([1, 1, 3, 2]), 2: np.array([1, 1, 0, 0])}
    assert fn(c, 4).tolist() == [False, True, True, False]
    fn, _ = column_predicate("def pred(s):\n    return True\n", R)
    assert fn({}, 3).tolist() == [True, True, True]
    fn, _ = column_value("def cost(s, p0):\n    return (s[0] * p0) + 5\n", R, {"p0": 3})
    assert fn({0: np.array([0, 2, 7])}, 3).tolist() == [5, 11, 26]

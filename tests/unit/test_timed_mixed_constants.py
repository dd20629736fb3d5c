"""A latency's unboundedness beside constants of very different sizes (NOTE(sojourn-clock) in
checker/engines/timed/liveness.py: time divergence without a clock that fragments with the
constants; nvidia_preempt under WFI has this shape: a 1,024 us slice beside a 100 ms timeout)."""

from __future__ import annotations

from gpcheck.checker import verify
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


def test_a_short_slice_beside_a_long_timeout_is_decided_as_the_reference_decides_it() -> None:
    """The engine's answers (min, max, an unbounded max's lasso) equal the plain discrete-time
    reference's (tests/reference/timed.py) on the slice-beside-a-timeout shape."""
    from tests.reference.timed import explore, load_timed

    rep = verify(load_source(SPEC), assumption_use=False)
    ref = explore(load_timed(SPEC)).latencies
    for p in ("own_slice", "wait"):
        r = rep.result(p)
        _starts, lo, hi = ref[p]
        assert (r.detail.get("min"), r.detail.get("max")) == (lo, hi), p
        if hi is None:
            assert r.counterexample is not None and r.counterexample.loop is not None
    assert ref["own_slice"][2] is None  # unbounded once the reset made cur 1 for ever

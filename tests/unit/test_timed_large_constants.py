"""Large constants cost nothing (issue 29 item 2; NOTE(sojourn-clock) in
checker/engines/timed/liveness.py): liveness, a latency's unboundedness check and the exact min/max
explore zone graphs whose size does not grow with the bounds, so microsecond bounds up to 10^7
(a 1 s slice, a 9 s fence timeout) give the answers of the same spec scaled down, times the
scale, with the same number of zones."""

from __future__ import annotations

import time

from gpcheck.checker import verify
from gpcheck.checker.api.model_api import load
from gpcheck.checker.engines.explicit.explicit import Limits
from gpcheck.checker.engines.timed import liveness
from gpcheck.gpmodel import compile_model
from gpcheck.spec import load_source

SLICE = """model slice_us "a 1 s time slice and a 9 s fence in microseconds"
const S = 1000000
const F = 9000000
const W = 3000000
var owner: 0..1 = 0
var pend: bool = false
var busy: bool = false
action slice time S { owner = 1 - owner }
action request { require not pend and not busy  pend = true }
urgent action grant { require pend and owner == 1  pend = false  busy = true }
action work time W..F { require busy  busy = false }
liveness served: pend leads_to busy
liveness idle: always eventually not busy
liveness never_busy: eventually busy
latency wait: from pend to busy
latency service: from pend to not pend and not busy
latency job: from busy to not busy within 8000000
latency until_busy: from not busy to busy
"""

SCALE = 100_000


def _answers(consts: dict[str, int]) -> dict[str, tuple]:
    r = verify(load_source(SLICE, "slice.gpspec", consts))
    out = {}
    for x in r.results:
        d = x.detail
        out[x.property] = (x.verdict.value, d.get("min"), d.get("max"), d.get("zones"))
    return out


def test_microsecond_bounds_give_the_scaled_down_answers_times_the_scale():
    t = time.process_time()
    big = _answers({})
    took = time.process_time() - t
    small = _answers({"S": 10, "F": 90, "W": 30})
    assert big["wait"] == ("proved", 0, 1_000_000, small["wait"][3])
    assert big["service"] == ("proved", 3_000_000, 10_000_000, small["service"][3])
    assert big["job"][:3] == ("violated", 3_000_000, 9_000_000)  # within 8 s fails: the fence is 9 s
    for name in ("wait", "service", "job"):
        v, lo, hi, zones = small[name]
        assert big[name] == (big[name][0], lo * SCALE, hi * SCALE, zones)
    assert big["until_busy"][:3] == ("violated", 0, None)  # the request may never come
    for name in ("served", "idle", "never_busy", "deadlock", "until_busy"):
        assert big[name] == small[name]
    assert big["served"][0] == "proved" and big["idle"][0] == "proved"
    assert big["never_busy"][0] == "violated"  # the request may never come: time diverges idle
    assert took < 10, f"{took:.1f} s of CPU for bounds of 10^7"


def test_liveness_zone_graph_is_the_same_at_every_quantum():
    """kfd_monitor (a 1 ms quantum in microseconds): its liveness zone graph and verdict at
    TICK_US = 10 and 10^6 are the same (the tick clock it replaced passed 50,000 zones at 1000)."""
    sizes, verdicts = set(), set()
    for tick in (10, 1_000_000):
        m = load("kfd_monitor", {"TICK_US": tick})
        cm = compile_model(m)
        tg = liveness.build(cm, Limits(20_000))
        sizes.add(len(tg.nodes))
        verdicts.add(liveness.check(cm, tg, next(p for p in m.liveness if p.name == "no_starvation")) is None)
    assert verdicts == {False}  # the firmware may keep giving quanta to HP: LP starves
    assert len(sizes) == 1 and max(sizes) < 5_000


def test_settle_memo_changes_no_answer(monkeypatch):
    """NOTE(settle-memo) in zones.py: a memo that restarts every few entries gives the same answers
    and zones as the full one."""
    from gpcheck.checker.engines.timed import zones

    small = {"S": 10, "F": 90, "W": 30}
    full = _answers(small)
    monkeypatch.setattr(zones, "SETTLE_MEMO", 3)
    assert _answers(small) == full

"""Module instances (issue 32 item 1): `use M as NAME(...)` and arrays `use M as NAME[INDEX](...)`,
expanded on the AST (spec/instances.py, NOTE(instances))."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.cli.command import main
from gpcheck.spec import load_source, load_spec
from gpcheck.spec.errors import SpecError

# A queue with a ring of CAP slots, preempted by the using model (driving preempt).
QUEUE = """model queue "one ring, its work and its preemption"
const CAP = 2
enum Mode { Run, Saved }
var work: 0..CAP = 0
var mode: Mode = Run
var done: 0..CAP = 0
action submit { require work < CAP; work = work + 1 }
action exec { require mode == Run and work > 0; work = work - 1; if done < CAP { done = done + 1 } }
action preempt { require mode == Run; mode = Saved }
action resume { require mode == Saved; mode = Run }
invariant bounded: work <= CAP
expect bounded: proved
"""

# Two instances with different constants, composed: the scheduler preempts one queue while the other runs.
TWO = """model two "two queues"
use "queue.gpspec" as hp(CAP = 1) driving preempt, resume
use "queue.gpspec" as lp(CAP = 3) driving preempt, resume
action switch {
    require hp.work > 0 and lp.mode == Run
    call lp.preempt()
}
action back {
    require hp.work == 0 and lp.mode == Saved
    call lp.resume()
}
invariant lp_saved_while_hp: not (lp.mode == Saved and hp.work == 0 and lp.work == lp.CAP and hp.done == 1)
"""

# The same composition written out by hand.
PRODUCT = """model product "two queues by hand"
const hp_CAP = 1
const lp_CAP = 3
enum Mode { Run, Saved }
var hp_work: 0..hp_CAP = 0
var hp_mode: Mode = Run
var hp_done: 0..hp_CAP = 0
var lp_work: 0..lp_CAP = 0
var lp_mode: Mode = Run
var lp_done: 0..lp_CAP = 0
action hp_submit { require hp_work < hp_CAP; hp_work = hp_work + 1 }
action hp_exec { require hp_mode == Run and hp_work > 0; hp_work = hp_work - 1; if hp_done < hp_CAP { hp_done = hp_done + 1 } }
action lp_submit { require lp_work < lp_CAP; lp_work = lp_work + 1 }
action lp_exec { require lp_mode == Run and lp_work > 0; lp_work = lp_work - 1; if lp_done < lp_CAP { lp_done = lp_done + 1 } }
action switch { require hp_work > 0 and lp_mode == Run; require lp_mode == Run; lp_mode = Saved }
action back { require hp_work == 0 and lp_mode == Saved; require lp_mode == Saved; lp_mode = Run }
invariant hp_bounded: hp_work <= hp_CAP
invariant lp_bounded: lp_work <= lp_CAP
invariant lp_saved_while_hp: not (lp_mode == Saved and hp_work == 0 and lp_work == lp_CAP and hp_done == 1)
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_two_instances_equal_the_hand_written_product(tmp_path: Path) -> None:
    write(tmp_path, "queue.gpspec", QUEUE)
    m = load_spec(str(write(tmp_path, "two.gpspec", TWO)))
    assert [v.name for v in m.vars] == ["hp.work", "hp.mode", "hp.done", "lp.work", "lp.mode", "lp.done"]
    assert {c.name: c.value for c in m.constants} == {"hp.CAP": 1, "lp.CAP": 3}
    assert [a.name for a in m.actions] == ["hp.submit", "hp.exec", "lp.submit", "lp.exec", "switch", "back"]
    assert [e.name for e in m.enums] == ["Mode"]  # declared alike by both instances: one enum
    rep = verify(m)
    hand = verify(load_source(PRODUCT))
    assert rep.states == hand.states > 1
    for prop, other in [("hp.bounded", "hp_bounded"), ("lp.bounded", "lp_bounded"), ("lp_saved_while_hp", "lp_saved_while_hp")]:
        assert rep.result(prop).verdict is hand.result(other).verdict
    assert rep.result("lp_saved_while_hp").verdict is Verdict.VIOLATED
    # the counterexample names the instances (variables and actions)
    cx = rep.result("lp_saved_while_hp").counterexample
    assert cx is not None
    actions = [s.action for s in cx.steps[1:]]
    assert "switch" in actions and any(a is not None and a.startswith("lp.") for a in actions)
    assert set(cx.steps[-1].state) == {"hp.work", "hp.mode", "hp.done", "lp.work", "lp.mode", "lp.done"}
    assert len(cx.steps) == len(hand.result("lp_saved_while_hp").counterexample.steps)


def test_instance_counts_match_the_product_over_constants(tmp_path: Path) -> None:
    write(tmp_path, "queue.gpspec", QUEUE)
    top = write(tmp_path, "two.gpspec", TWO)
    for hp, lp in [(1, 1), (2, 3), (3, 2)]:
        rep = verify(load_spec(str(top), {"hp.CAP": hp, "lp.CAP": lp}))
        hand = verify(load_source(PRODUCT, consts={"hp_CAP": hp, "lp_CAP": lp}))
        assert rep.states == hand.states, (hp, lp)


ARRAY = """model arr "an array of queues"
symmetric Q = 0..1
use "queue.gpspec" as q[Q](CAP = 2) driving preempt
var picked: bool = false
action pick(i: Q) {
    require not picked and q[i].work > 0
    call q[i].preempt()
    picked = true
}
invariant one_saved: (count i in Q: q[i].mode == Saved) <= 1
"""

ARRAY_HAND = """model arrh "an array of queues by hand"
const CAP = 2
enum Mode { Run, Saved }
var work: [0..1] -> 0..CAP = 0
var mode: [0..1] -> Mode = Run
var done: [0..1] -> 0..CAP = 0
var picked: bool = false
action submit(s: 0..1) { require work[s] < CAP; work[s] = work[s] + 1 }
action exec(s: 0..1) { require mode[s] == Run and work[s] > 0; work[s] = work[s] - 1; if done[s] < CAP { done[s] = done[s] + 1 } }
action resume(s: 0..1) { require mode[s] == Saved; mode[s] = Run }
action pick(i: 0..1) { require not picked and work[i] > 0; require mode[i] == Run; mode[i] = Saved; picked = true }
invariant bounded: all s in 0..1: work[s] <= CAP
invariant one_saved: (count i in 0..1: mode[i] == Saved) <= 1
"""


def test_array_of_instances_equals_the_product_and_reduces_by_symmetry(tmp_path: Path) -> None:
    write(tmp_path, "queue.gpspec", QUEUE)
    m = load_spec(str(write(tmp_path, "arr.gpspec", ARRAY)))
    assert [a.name for a in m.actions] == ["q.submit", "q.exec", "q.resume", "pick"]
    assert m.actions[0].params[0].name == "q.self"
    full = verify(m, symmetry="off")
    hand = verify(load_source(ARRAY_HAND))
    assert full.states == hand.states
    assert full.result("one_saved").verdict is hand.result("one_saved").verdict is Verdict.PROVED
    reduced = verify(m, symmetry="on")
    assert reduced.states < full.states  # the two elements are interchangeable
    assert reduced.result("one_saved").verdict is Verdict.PROVED


def test_named_instance_errors_are_located(tmp_path: Path) -> None:
    write(tmp_path, "queue.gpspec", QUEUE)
    bad = write(tmp_path, "bad.gpspec", """model bad
use "queue.gpspec" as a(CAP = 1)
invariant x: a.nope == 0
""")
    with pytest.raises(SpecError) as e:
        load_spec(str(bad))
    assert "instance 'a' has no 'nope'" in e.value.render() and "bad.gpspec:3" in e.value.render()
    clash = write(tmp_path, "clash.gpspec", """model clash
var a: bool = false
use "queue.gpspec" as a(CAP = 1)
""")
    with pytest.raises(SpecError) as e:
        load_spec(str(clash))
    assert "instance 'a' has the name of a declaration" in e.value.render()
    wrong = write(tmp_path, "wrong.gpspec", """model wrong
use "queue.gpspec" as a(NOPE = 1)
""")
    with pytest.raises(SpecError) as e:
        load_spec(str(wrong))
    assert "has no constant NOPE" in e.value.render()


LIVE = QUEUE.replace("action exec", "fair action exec").replace("action resume", "fair action resume") + \
    "liveness drains: eventually work == 0\nlatency wait: from work > 0 to work == 0\n"


def test_array_of_a_module_with_liveness_states_it_per_element(tmp_path: Path) -> None:
    # NOTE(instance-properties): one property per element, named by the element, with the verdicts
    # and latencies of the same module instantiated by name once per element
    write(tmp_path, "live.gpspec", LIVE)
    arr = write(tmp_path, "arr.gpspec", 'model arr\nconst N = 2\nuse "live.gpspec" as q[0..N-1]()\n')
    named = write(tmp_path, "named.gpspec", 'model named\nuse "live.gpspec" as q0()\nuse "live.gpspec" as q1()\n')
    m = load_spec(str(arr))
    assert [lv.name for lv in m.liveness] == ["q[0].drains", "q[1].drains"]
    assert [la.name for la in m.latencies] == ["q[0].wait", "q[1].wait"]
    a, n = verify(m, assumption_use=False), verify(load_spec(str(named)), assumption_use=False)
    assert a.states == n.states
    for i in (0, 1):
        for prop in ("drains", "wait"):
            ra, rn = a.result(f"q[{i}].{prop}"), n.result(f"q{i}.{prop}")
            assert ra.verdict is rn.verdict
            assert (ra.counterexample is None) == (rn.counterexample is None)
            if ra.counterexample is not None:
                assert len(ra.counterexample.steps) == len(rn.counterexample.steps)
    # fair exec/resume drain each queue; preempt/resume can loop with work queued: no latency bound
    assert a.result("q[1].drains").verdict is Verdict.PROVED and a.result("q[1].wait").verdict is Verdict.VIOLATED
    steps = a.result("q[1].wait").counterexample.steps
    assert steps[1].action == "q.submit" and steps[1].args == {"q.self": 1}
    # the size comes from the constants, --const included
    assert [lv.name for lv in load_spec(str(arr), {"N": 3}).liveness] == ["q[0].drains", "q[1].drains", "q[2].drains"]
    # an enum index names the element by its member
    en = write(tmp_path, "en.gpspec", 'model en\nenum G { Hp, Lp }\nuse "live.gpspec" as q[G]()\n')
    assert [lv.name for lv in load_spec(str(en)).liveness] == ["q[Hp].drains", "q[Lp].drains"]
    # over a symmetric type, naming each element would tell them apart: the precise reason, located
    sy = write(tmp_path, "sy.gpspec", 'model sy\nsymmetric Q = 0..1\nuse "live.gpspec" as q[Q]()\n')
    with pytest.raises(SpecError) as e:
        load_spec(str(sy))
    text = e.value.render()
    assert "live.gpspec:13:1" in text and "names each value of the symmetric type Q" in text


def test_bundled_module_twice_with_cli_itf_and_perfetto(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "queue.gpspec", QUEUE)
    top = write(tmp_path, "two.gpspec", TWO)
    itf, pf = tmp_path / "cx.itf.json", tmp_path / "cx.json"
    rc = main(["verify", str(top), "--property", "lp_saved_while_hp", "--itf", str(itf), "--perfetto", str(pf),
               "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 1 and "lp.mode" in out and "switch" in out
    doc = json.loads(itf.read_text())
    assert "lp.mode" in doc["vars"] and "hp.work" in doc["vars"]
    events = json.loads(pf.read_text())["traceEvents"]
    groups = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert {"hp", "lp"} <= groups
    pids = {e["args"]["name"]: e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert all(e["pid"] == pids["lp"] for e in events if e["ph"] == "C" and e["name"].startswith("lp."))


def test_simulate_and_replay_traces_name_the_instances(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "queue.gpspec", QUEUE)
    top = write(tmp_path, "arr.gpspec", ARRAY)
    trace = tmp_path / "run.jsonl"
    assert main(["simulate", str(top), "--steps", "8", "--seed", "3", "--out", str(trace)]) == 0
    lines = [json.loads(x) for x in trace.read_text().splitlines()]
    assert set(lines[0]["init"]) == {"q.work", "q.mode", "q.done", "picked"}
    assert any(e.get("action", "").startswith("q.") and "q.self" in e.get("args", {}) for e in lines[1:])
    capsys.readouterr()
    assert main(["replay", str(trace), "--model", str(top)]) == 0
    assert "conforms" in capsys.readouterr().out


def test_hover_finds_an_instances_names(tmp_path: Path) -> None:
    from gpcheck.checker.cli.lsp_symbols import qualified_at, symbols

    write(tmp_path, "queue.gpspec", QUEUE)
    top = write(tmp_path, "two.gpspec", TWO)
    table = symbols(load_spec(str(top)), TWO, str(top))
    line = "    require hp.work > 0 and lp.mode == Run"
    name = qualified_at(line, line.index("work") + 2)
    assert name == "hp.work" and table[name].kind == "var"
    assert qualified_at("g[i].mode == Run", 6) == "g.mode"
    assert qualified_at(line, line.index("hp") + 1) is None  # the instance's own name: no symbol
    assert table["lp.submit"].kind == "action" and "lp.preempt" not in table  # driven: a procedure


def test_two_bundled_cwsr_gpus_are_the_product_of_one_each() -> None:
    """Two instances of a bundled model with different constants, nothing shared: the reachable
    states are exactly the pairs (42 x 116 for cwsr at Q=1, MAXP=1 and N=1 / N=2)."""
    from gpcheck.checker.engines.timed import untimed

    # untimed abstractions (cwsr is timed: urgency couples the two GPUs' timings, not their discrete steps)
    two = untimed(load_source('model two_gpus\nuse cwsr as g0(Q = 1, N = 1, MAXP = 1)\nuse cwsr as g1(Q = 1, N = 2, MAXP = 1)\n'))
    rep = verify(two, properties=["g0.no_loss", "g1.no_loss"])
    one = [verify(untimed(load_spec("cwsr", {"Q": 1, "N": n, "MAXP": 1})), properties=["no_loss"]).states for n in (1, 2)]
    assert one == [42, 116] and rep.states == 42 * 116
    assert rep.result("g1.no_loss").verdict is Verdict.PROVED

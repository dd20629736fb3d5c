"""traces/itf.py: ITF written by gpcheck reads back identically (counterexamples of the examples,
lassos, random behaviours of every bundled model), the ADR-015 value encoding, what the reader
accepts from other tools, and located errors."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest

from gpcheck.checker.api.model_api import verify
from gpcheck.checker.core.verdict import Counterexample, Step
from gpcheck.gpmodel import compile_model
from gpcheck.gpmodel.simulate import simulate
from gpcheck.spec import bundled_models, load_source, load_spec
from gpcheck.spec.errors import TraceError
from gpcheck.traces.itf import decode_value, read_itf, to_itf, write_itf
from gpcheck.checker.engines.replay.search import Replayer
from gpcheck.traces.sources import open_source, peek

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT.parent / "shared" / "spec-examples"

SHAPES = """model shapes "every kind of value"
enum Q { A, B }
struct S { n: 0..9, ok: bool, q: Q }
var a: [1..3] -> bool = false
var e: [Q] -> S = { n: 0, ok: false, q: A }
var f: [bool] -> 0..2 = 0
var big: 0..9007199254740993 = 9007199254740993
action flip(i: 1..3) { a[i] = not a[i] }
action set(q: Q, v: 0..9) { e[q].n = v
  e[q].q = q
  f[true] = 2 }
"""


def _shapes():  # type: ignore[no-untyped-def]
    return load_source(SHAPES, "shapes.gpspec")


def _behaviour(cm, seed: int, steps: int = 30) -> Counterexample:  # type: ignore[no-untyped-def]
    beh = list(simulate(cm, steps, random.Random(seed)))
    out = [Step(None, {}, cm.layout.decode(beh[0][1]))]
    for iid, s in beh[1:]:
        inst = cm.instances[iid]
        out.append(Step(inst.action.name, inst.arg_dict(), cm.layout.decode(s)))
    return Counterexample(tuple(out))


@pytest.mark.parametrize("name", ["rewind.gpspec", "starve.gpspec", "ring.gpspec", "peterson.gpspec"])
def test_verify_counterexamples_round_trip(tmp_path, name: str) -> None:
    if not (EXAMPLES / name).exists():
        pytest.skip("examples not available")
    model = load_spec(EXAMPLES / name)
    cxs = [r.counterexample for r in verify(model).results if r.counterexample]
    cxs.append(_behaviour(compile_model(model), 1))
    for cx in cxs:
        p = str(tmp_path / "cx.itf.json")
        write_itf(cx, model, p)
        assert read_itf(p, model).to_counterexample() == cx


@pytest.mark.parametrize("name", sorted(bundled_models()))
def test_bundled_model_behaviours_round_trip(tmp_path, name: str) -> None:
    model = load_spec(name)
    cm = compile_model(model)
    for seed in range(3):
        cx = _behaviour(cm, seed)
        p = str(tmp_path / "b.itf.json")
        write_itf(cx, model, p)
        assert read_itf(p, model).to_counterexample() == cx


def test_value_encoding(tmp_path) -> None:
    model = _shapes()
    cm = compile_model(model)
    cx = Counterexample(_behaviour(cm, 0, 10).steps, loop=3)
    p = str(tmp_path / "s.itf.json")
    write_itf(cx, model, p)
    obj = orjson.loads(open(p, "rb").read())
    assert obj["vars"] == ["a", "e", "f", "big"] and obj["loop"] == 3
    s0 = obj["states"][0]
    assert s0["#meta"] == {"index": 0}
    assert s0["big"] == {"#bigint": "9007199254740993"}
    assert [k for k, _ in s0["a"]["#map"]] == [{"#bigint": "1"}, {"#bigint": "2"}, {"#bigint": "3"}]
    assert [k for k, _ in s0["e"]["#map"]] == ["A", "B"]
    assert s0["e"]["#map"][0][1] == {"n": {"#bigint": "0"}, "ok": False, "q": "A"}
    assert [k for k, _ in s0["f"]["#map"]] == [False, True]
    assert obj["#meta"]["varTypes"]["e"] == "(Str -> { n: Int, ok: Bool, q: Str })"
    assert "action" in obj["states"][1]["#meta"]
    assert read_itf(p, model).to_counterexample() == cx


def test_reader_accepts_other_spellings(tmp_path) -> None:
    model = _shapes()
    t = {v.name: v.type for v in model.vars}
    assert decode_value(t["a"], [True, False, True], "x") == [True, False, True]
    assert decode_value(t["a"], {"#tup": [True, False, True]}, "x") == [True, False, True]
    assert decode_value(t["big"], 7, "x") == 7
    assert decode_value(t["e"], {"#map": [["B", {"n": 1, "ok": True, "q": {"tag": "B", "value": {"#tup": []}}}],
                                          ["A", {"n": 0, "ok": False, "q": "A"}]]}, "x") == {
        "A": {"n": 0, "ok": False, "q": "A"}, "B": {"n": 1, "ok": True, "q": "B"}}
    # Quint: qualified names, mbt::actionTaken / mbt::nondetPicks
    st = {"m::a": [False] * 3, "m::e": {"#map": [["A", {"n": 0, "ok": False, "q": "A"}], ["B", {"n": 0, "ok": False, "q": "A"}]]},
          "m::f": {"#map": [[False, 0], [True, 0]]}, "m::big": {"#bigint": "9007199254740993"}}
    s1 = dict(st, **{"m::a": [True, False, False], "mbt::actionTaken": "flip",
                     "mbt::nondetPicks": {"i": {"tag": "Some", "value": {"#bigint": "1"}}}})
    p = tmp_path / "q.itf.json"
    p.write_bytes(orjson.dumps({"vars": list(st), "states": [dict(st, **{"mbt::actionTaken": "init"}), s1]}))
    tr = read_itf(str(p), model)
    assert tr.actions[1] == "flip" and tr.args[1] == {"i": 1}
    rep = Replayer(compile_model(model)).replay(open_source(peek(str(p)), model), str(p))
    assert rep.conforms and rep.unit == "state"


def test_states_without_actions_replay_as_any_action(tmp_path) -> None:
    model = load_spec(EXAMPLES / "ring.gpspec") if (EXAMPLES / "ring.gpspec").exists() else pytest.skip("no examples")
    cm = compile_model(model)
    obj = to_itf(model, _behaviour(cm, 4).steps)
    for s in obj["states"]:
        s["#meta"] = {"index": s["#meta"]["index"]}
    p = tmp_path / "plain.itf.json"
    p.write_bytes(orjson.dumps(obj))
    rep = Replayer(cm).replay(open_source(peek(str(p)), model), str(p))
    assert rep.conforms and rep.events == len(obj["states"]) - 1
    # a state no step can produce
    obj["states"][3]["wptr"] = {"#bigint": "4"}
    obj["states"][3]["rptr"] = {"#bigint": "0"}
    obj["states"][3]["waves_run"] = {"#map": [[{"#bigint": str(i)}, {"#bigint": "3"}] for i in range(4)]}
    p.write_bytes(orjson.dumps(obj))
    rep = Replayer(cm).replay(open_source(peek(str(p)), model), str(p))
    assert rep.conforms is False and rep.divergence.line == 3  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda o: o["states"][1].pop("wptr"), r"states\[1\]: missing variable\(s\) wptr"),
        (lambda o: o["states"][0].update(zz=1), r"states\[0\]: unknown variable\(s\) zz"),
        (lambda o: o["states"][2].update(busy=1), r"states\[2\]\.busy: expected a value of type bool"),
        (lambda o: o["states"][0].update(state="Gone"), r"states\[0\]\.state: expected a value of type QState"),
        (lambda o: o["states"][0].update(waves_run={"#map": [[{"#bigint": "0"}, {"#bigint": "0"}]]}),
         r"states\[0\]\.waves_run: the #map must give exactly the indexes"),
        (lambda o: o["states"][0].update(wptr={"#bigint": "x"}), r"malformed #bigint"),
        (lambda o: o.update(loop=99), r"\"loop\" 99 is not a state index"),
        (lambda o: o.update(states=3), r"not an ITF trace"),
    ],
)
def test_errors_are_located(tmp_path, mutate, match) -> None:  # type: ignore[no-untyped-def]
    if not (EXAMPLES / "ring.gpspec").exists():
        pytest.skip("no examples")
    model = load_spec(EXAMPLES / "ring.gpspec")
    obj = to_itf(model, _behaviour(compile_model(model), 4).steps)
    mutate(obj)
    p = tmp_path / "bad.itf.json"
    p.write_bytes(orjson.dumps(obj))
    with pytest.raises(TraceError, match=match):
        read_itf(str(p), model)


def test_invalid_json(tmp_path) -> None:
    p = tmp_path / "bad.itf.json"
    p.write_text("{")
    model = load_source('model m "m"\nvar x: 0..1 = 0\naction a { x = 1 }\n', "m.gpspec")
    with pytest.raises(TraceError, match="invalid JSON"):
        read_itf(str(p), model)

"""The compiled explicit engine (checker/engines/explicit/fast_explicit.py) against the Python reference
(checker/engines/explicit/explicit.py): the same states, coverage, verdicts and counterexamples (shortest, and
replaying through the interpreter) on every example spec, every bundled model and small specs
for each corner of the semantics; the packed layout; the choice of core."""

from __future__ import annotations

import pytest

from gpcheck.checker import Verdict
from gpcheck.checker.api import explicit_run as api
from gpcheck.checker.api.model_api import run_explicit
from gpcheck.checker.engines.explicit.explicit import Limits, select_properties
from gpcheck.checker.engines.smt.witness import check_witness
from gpcheck.gpmodel import compile_model
from gpcheck.gpmodel.packed import PackedLayout
from gpcheck.spec import bundled_models, ir, load_source, load_spec
from tests.bundled import bundled_model
from tests.conftest import EXAMPLES

pytest.importorskip("numba")

SMALL = {
    "range_write": "var x: 0..2 = 0\naction inc { x = x + 1 }\nallow deadlock\n",
    "bad_index": "var a: [0..1] -> 0..5 = 0\nvar i: 0..3 = 0\naction go { i = i + 1\n a[i] = 1 }\nallow deadlock\n",
    "division": "var x: 0..4 = 2\nvar y: 0..4 = 1\naction go { y = y - 1\n x = x / y }\nallow deadlock\n",
    "require_after_fault": "var x: 0..1 = 1\naction go { x = x + 1\n require false }\nallow deadlock\n",
    "require_before_fault": "var x: 0..1 = 1\naction go { require false\n x = x + 1 }\nallow deadlock\n",
    # both orders in one model (the default run's): `first` must not fault (its require comes
    # first), `then` must (its write out of range comes before the require); a core that got
    # either wrong reports no fault or the fault of `first`
    "require_order": ("var x: 0..1 = 1\naction first { require false\n x = x + 1 }\n"
                      "action then { x = x + 1\n require false }\nallow deadlock\n"),
    "deadlock": "var x: 0..2 = 0\naction inc { require x < 2\n x = x + 1 }\n",
    "constraint": ("var x: 0..9 = 0\naction inc { require x < 9\n x = x + 1 }\nterminal: x == 9\n"
                   "invariant small: x <= 5\nconstraint c: x < 7\nliveness nine: eventually x == 9\n"),
    # a violated transition property (its first bad edge) beside a proved one: the text of
    # tests/unit/test_device_graph.py's device-edge test, which compiles the same module
    "transition": ("var x: 0..3 = 0\nvar y: 0..3 = 0\naction inc { require x < 3\n x = x + 1 }\n"
                   "action wrap { require x == 3\n x = 0\n y = if y < 3 then y + 1 else y }\nallow deadlock\n"
                   "transition x_grows: x' >= x\ntransition y_grows: y' >= y\n"),
    # arrays of structs with `any` initial values, and a deadlock (both queues full and drained,
    # a shortest path from one of the nine initial states): `deadlock`'s corner in the default run
    "structs_any_init": ("enum P { Lo, Hi }\nstruct Q { rptr: 0..2, wptr: 0..2 }\n"
                         "var q: [P] -> Q = {rptr: 0, wptr: any}\n"
                         "action push(p: P) { require q[p].wptr < 2\n q[p].wptr = q[p].wptr + 1 }\n"
                         "action pop(p: P) { require q[p].rptr < q[p].wptr\n q[p].rptr = q[p].rptr + 1 }\n"
                         "invariant order: all p in P: q[p].rptr <= q[p].wptr\n"),
    "fairness": ("var done: [0..1] -> bool = false\nvar spin: 0..1 = 0\n"
                 "action work(i: 0..1) { require not done[i]\n done[i] = true }\n"
                 "fair action flip { spin = 1 - spin }\nliveness zero_done: eventually done[0]\n"
                 "liveness often: always eventually spin == 1\n"
                 "liveness answered: spin == 1 leads_to done[1]\n"),
}
# predicates that can fail to evaluate: only the Python core runs these (api.compiled_unsupported)
FALLIBLE = {
    "constraint_fault": ("var x: -1..3 = 0\naction inc { require x < 3\n x = x + 1 }\nallow deadlock\n"
                         "constraint c: 6 / (2 - x) > 0\ninvariant ok: x <= 3\n"),
    "invariant_fault": ("var a: [0..2] -> 0..1 = 0\nvar x: 0..4 = 0\naction inc { require x < 4\n x = x + 1 }\n"
                        "allow deadlock\ninvariant inv: x != 2 and (x < 3 or a[x] == 0)\n"),
}


# Every bundled model is `slow` here and in test_compiled_options.py (issue 33, item 3): a cold
# numba compilation of a bundled model takes 15 to 30 s of CPU (and cwsr's comparison with the
# Python core 17 s more, compiled), and a fresh checkout's first run has a cold cache. The default
# run compares the cores on the small specs above (each corner of the semantics: modelling errors,
# constraints, deadlocks, transition properties, liveness under fairness, arrays of structs with
# `any` initial values), on rewind (326 states) and grows the tables past their initial capacity in
# test_compiled_options.py::test_arrays_window_and_tables_grow_past_the_initial_capacity.
COMPILED_SAMPLE: tuple[str, ...] = ()


def bundled_params() -> list[object]:
    """pytest.param(name, model) for every bundled model, `slow` outside COMPILED_SAMPLE."""
    return [pytest.param(name, bundled_model(name), marks=() if name in COMPILED_SAMPLE else pytest.mark.slow)
            for name in bundled_models()]


# The small specs `slow` here and in test_compiled_options.py (issue 33, item 3: each is a cold
# numba compilation of 3 to 4 s of CPU), with the default-run spec that covers each one's corner:
# require_order writes out of range after the require it passes and not before the one it
# fails, bad_index faults on the second level (after a level without one), structs_any_init
# deadlocks.
SMALL_SLOW = {"range_write": "require_order, bad_index", "require_after_fault": "require_order",
              "require_before_fault": "require_order", "deadlock": "structs_any_init"}


def small_params(specs: dict[str, str], slow: set[str] | frozenset[str] = frozenset(SMALL_SLOW)) -> list[object]:
    """pytest.param(name, model) of each spec `model t` + text, those in `slow` marked so."""
    return [pytest.param(name, load_source("model t\n" + src, f"{name}.gpspec"),
                         marks=pytest.mark.slow if name in slow else ())
            for name, src in specs.items()]


def _models() -> list[object]:
    return small_params(SMALL) + bundled_params()


def _examples() -> list[object]:
    """pytest.param(file name, constants) for every example spec: rewind (326 states, the
    examples' largest, and the model test_compiled_options.py compiles) in the default run; the
    others, each a cold compilation of 4 s of CPU whose corners (fairness, lassos, arrays) the
    small specs above cover, `slow`; rewind with N=6 and MAXP=2 (another compilation, over 1,000
    states searched in Python) too. Loaded by the test, not when this module is imported."""
    names = sorted(p.name for p in EXAMPLES.glob("*.gpspec"))
    out = [pytest.param(n, {}, id=n.removesuffix(".gpspec"), marks=() if n == "rewind.gpspec" else pytest.mark.slow)
           for n in names]
    if "rewind.gpspec" in names:
        out.append(pytest.param("rewind.gpspec", {"N": 6, "MAXP": 2}, id="rewind_N6", marks=pytest.mark.slow))
    return out


def _same(model: ir.Model) -> None:
    wanted = select_properties(model, None)
    ref = run_explicit(model, wanted, Limits(), core="python")
    fast = run_explicit(model, wanted, Limits(), core="compiled")
    a, b = ref.to_json(), fast.to_json()
    a.pop("seconds"), b.pop("seconds")
    assert a == b
    cm = compile_model(model)
    for r in fast.results:
        # checker/engines/smt/witness.py replays only modelling errors of actions (one in a predicate raises)
        if r.verdict is Verdict.VIOLATED and (r.kind != "range" or "action" in r.detail):
            assert check_witness(cm, r) is None, r.property


@pytest.mark.parametrize("name,model", _models(), ids=lambda x: x if isinstance(x, str) else "")
def test_compiled_engine_matches_the_python_engine(name, model):
    _same(model)


# the example specs other than rewind at its defaults are `slow` (see _examples); fast: the same
# test on rewind, and the small specs of test_compiled_engine_matches_the_python_engine
@pytest.mark.parametrize("name,consts", _examples())
def test_compiled_engine_matches_on_the_example_specs(examples, name, consts):
    _same(load_spec(examples / name, consts))


def test_a_modelling_error_in_an_invariant_after_its_violation_is_still_reported():
    # invariant a fails at x = 2 (short-circuit, no error) and reads a[3] at x = 3: every
    # invariant is evaluated in full in every state, so the bad index is a range violation.
    model = load_source("model t\n" + FALLIBLE["invariant_fault"], "t.gpspec")
    report = run_explicit(model, select_properties(model, None), Limits(), core="auto")
    inv, rng = report.result("inv"), report.result("range")
    assert inv.verdict is Verdict.VIOLATED and inv.counterexample.steps[-1].state["x"] == 2
    assert rng.verdict is Verdict.VIOLATED and rng.counterexample.steps[-1].state["x"] == 3
    assert "index 3 is outside 0..2" in rng.detail["error"]


@pytest.mark.parametrize("name", sorted(FALLIBLE))
def test_models_whose_predicates_can_fail_stay_with_the_python_engine(name):
    from gpcheck.checker.api.model_api import compiled_unsupported
    from gpcheck.spec.errors import UsageError

    model = load_source("model t\n" + FALLIBLE[name], "t.gpspec")
    wanted = select_properties(model, None)
    assert compiled_unsupported(compile_model(model), wanted) is not None
    assert run_explicit(model, wanted, Limits(), core="auto").result("range").verdict is Verdict.VIOLATED
    with pytest.raises(UsageError, match="fail to evaluate"):
        run_explicit(model, wanted, Limits(), core="compiled")


def test_limits_give_unknown_with_the_python_reason(examples):
    model = load_spec(examples / "rewind.gpspec")  # 326 states: the model the example-specs test compiled
    wanted = select_properties(model, None)
    ref = run_explicit(model, wanted, Limits(max_states=300), core="python")
    fast = run_explicit(model, wanted, Limits(max_states=300), core="compiled")
    assert fast.states is None
    for a, b in zip(ref.results, fast.results):
        assert (a.property, a.verdict, a.bound, a.reason) == (b.property, b.verdict, b.bound, b.reason)
    assert "state limit 300" in fast.result("in_order").reason


def test_packed_layout_round_trips_over_several_words():
    types: list[ir.ScalarType] = [ir.IntType(-3, 4), ir.BoolType(), ir.EnumType("E", ("A", "B", "C"))]
    types += [ir.IntType(0, 1000)] * 12
    packed = PackedLayout(types)
    assert packed.words == 3 and packed.bits == 3 + 1 + 2 + 12 * 10
    s = (-3, 1, 2) + tuple(range(0, 1000, 84))
    assert packed.unpack(packed.pack(s)) == s
    with pytest.raises(ValueError):
        PackedLayout([ir.IntType()])


def test_auto_core_runs_small_models_in_python_and_large_ones_compiled(examples, monkeypatch):
    from gpcheck.checker.engines.explicit import fast_explicit

    model = load_spec(examples / "rewind.gpspec")
    wanted = select_properties(model, None)

    def no_compiled(*args, **kw):
        raise AssertionError("the compiled engine ran on a small model")

    with monkeypatch.context() as m:
        m.setattr(fast_explicit, "search", no_compiled)
        small = run_explicit(model, wanted, Limits(), core="auto")
    monkeypatch.setattr(api, "AUTO_PYTHON_STATES", 50)
    monkeypatch.setattr(api, "AUTO_PYTHON_STATES_CACHED", 50)
    calls = []
    real = fast_explicit.search
    monkeypatch.setattr(fast_explicit, "search", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    large = run_explicit(model, wanted, Limits(), core="auto")
    assert calls and small.to_json()["results"] == large.to_json()["results"] and large.states == 326


def test_models_whose_integers_may_exceed_64_bits_stay_with_the_python_engine():
    from gpcheck.gpmodel import jit
    from gpcheck.gpmodel.int_range import fits_int64
    from gpcheck.spec.errors import UsageError

    big = load_source("model t\nconst K = 4000000000\nvar x: 0..K = K\naction sq { require x * x * x > 0\n x = 0 }\n"
                      "allow deadlock\n", "t.gpspec")
    assert not fits_int64(big)
    assert fits_int64(load_source("model t\n" + SMALL["structs_any_init"], "t.gpspec"))
    wanted = select_properties(big, None)
    assert run_explicit(big, wanted, Limits(), core="auto").states == 2  # the Python engine ran
    with pytest.raises(UsageError, match="64 bits"):
        run_explicit(big, wanted, Limits(), core="compiled")
    assert jit.unsupported(compile_model(big)) is not None


def test_verify_core_flag(examples, capsys):
    import json

    from gpcheck.checker.cli.command import main

    outs = []
    for core in ("python", "compiled"):
        assert main(["verify", str(examples / "rewind.gpspec"), "--json", "--core", core]) == 1
        out = json.loads(capsys.readouterr().out)
        out.pop("seconds")
        outs.append(out)
    assert outs[0] == outs[1] and outs[0]["states"] == 326
    assert main(["verify", str(examples / "rewind.gpspec"), "--core", "fast"]) == 2  # a usage error

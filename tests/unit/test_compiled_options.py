"""The compiled explicit core's options (issue 13): `--workers N` (parallel expansion, merged in
order: the same states, numbers, verdicts and shortest counterexamples as one worker) and
`--fingerprint` (64-bit fingerprints instead of exact keys: the same search without a
collision, holding properties reported as holds_to_bound with TLC's collision estimates).
Each is compared with the sequential exact compiled search, itself compared with the Python
reference in tests/unit/test_fast_explicit.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gpcheck.checker.engines.explicit import fast_explicit
from gpcheck.checker.api.model_api import run_explicit
from gpcheck.checker.engines.explicit.explicit import Limits, select_properties
from gpcheck.checker.core.verdict import Verdict
from gpcheck.checker.engines.smt.witness import check_witness
from gpcheck.gpmodel import compile_model
from gpcheck.spec import bundled_models, ir, load_source, load_spec
from gpcheck.spec.errors import UsageError

pytest.importorskip("numba")

from tests.unit.test_fast_explicit import SMALL, bundled_params, small_params  # noqa: E402
from tests.bundled import bundled_model  # noqa: E402

# modelling errors in actions, predicates evaluated on new states and on edges, deadlocks,
# constraints, transition properties, liveness: each must come out of the parallel merge as
# out of the sequential search
EXTRA = {
    "late_fault": ("var x: 0..6 = 0\nvar y: 0..3 = 0\naction inc { require x < 6\n x = x + 1 }\n"
                   "action up { require x >= 4\n y = y + 2 }\nallow deadlock\ninvariant small: x < 5\n"),
    "wide": ("var a: [0..3] -> 0..2 = 0\naction bump(i: 0..3) { require a[i] < 2\n a[i] = a[i] + 1 }\n"
             "action drop(i: 0..3) { require a[i] > 0\n a[i] = a[i] - 1 }\n"
             "invariant not_full: (sum i in 0..3: a[i]) < 8\ntransition one_step: (sum i in 0..3: a'[i]) <= "
             "(sum i in 0..3: a[i]) + 1\nfair action bump\nliveness full: eventually (all i in 0..3: a[i] == 2)\n"),
}


def _models() -> list[tuple[str, ir.Model]]:
    out = [(name, load_source("model t\n" + src, f"{name}.gpspec")) for name, src in {**SMALL, **EXTRA}.items()]
    out += [(name, bundled_model(name)) for name in bundled_models()]
    return out


# The small spec the fingerprint test runs in the default run: an invariant violated beside a
# holding transition property and liveness under fairness over 81 states (wide, the model
# test_collision_estimate_is_tlcs_smallest_gap searches by fingerprints);
# test_arrays_window_and_tables_grow_past_the_initial_capacity runs rewind by fingerprints too.
# The fingerprint kernel is compiled per model (about 3 s of CPU each, cold): the other small
# specs (a deadlock from one of several initial states, structs_any_init, 5 to 7 s of CPU: the
# fingerprint search's deadlock branch; a modelling error after a few levels, late_fault; a
# constraint and a terminal condition, constraint; ...) and every bundled model are `slow`
# (issue 33, item 3); test_fast_explicit.py compares the sequential compiled search on each of
# them with the Python core (structs_any_init's deadlock there, in the default run).
FINGERPRINT_SAMPLE = ("wide",)


def _fingerprinted() -> list[object]:
    """The small specs (FINGERPRINT_SAMPLE in the default run), and the bundled models with
    test_fast_explicit's tiers (every bundled model is a cold compilation of 15 to 30 s of CPU)."""
    specs = {**SMALL, **EXTRA}
    return small_params(specs, set(specs) - set(FINGERPRINT_SAMPLE)) + bundled_params()


# The parallel test's small specs in the default run: bad_index (a modelling error on the second
# level: a chunk committed, then one that faults and is run again sequentially) and wide (an
# invariant violated, a holding transition property on every edge, liveness under fairness).
# The parallel kernels are compiled per model (3 to 7 s of CPU per small spec, cold), so the
# others are `slow` besides test_fast_explicit.SMALL_SLOW (whose models the default run does not
# compile): each runs the same chunk loop and merge on other data (late_fault's later modelling
# error, constraint's constraint and terminal condition, structs_any_init's deadlock, ...);
# rewind's invariants and terminal condition go through two workers in the default run in
# test_arrays_window_and_tables_grow_past_the_initial_capacity and test_flags_on_the_command_line.
PARALLEL_SAMPLE = ("bad_index", "wide")


def _chunked() -> list[object]:  # pytest.param(name, model, chunk size)
    """(name, model, chunk size): tiny chunks (many per BFS level, across level ends) on the
    small specs, chunks of 97 states and whole levels on the bundled models. `slow`: the bundled
    models (two worker processes over each whole state space), chunks of one state (10 to 20 s
    of CPU per small spec, in messages between the processes) and the small specs outside
    PARALLEL_SAMPLE; chunks of three states and whole levels on PARALLEL_SAMPLE cover the same
    code in the default run."""
    small = set(SMALL) | set(EXTRA)
    return [pytest.param(name, model, chunk,
                         marks=() if name in PARALLEL_SAMPLE and chunk > 1 else pytest.mark.slow)
            for name, model in _models() for chunk in ((1, 3, 1 << 16) if name in small else (97, 1 << 16))]


def _json(report) -> dict:
    out = report.to_json()
    out.pop("seconds")
    return out


@pytest.mark.parametrize("name,model,chunk", _chunked(),
                         ids=lambda x: x if isinstance(x, str) else str(x) if isinstance(x, int) else "")
def test_two_workers_find_the_same_states_in_the_same_order(name, model, chunk, monkeypatch):
    monkeypatch.setattr(fast_explicit, "PARALLEL_CHUNK", chunk)
    monkeypatch.setattr(fast_explicit, "PARALLEL_MIN", 1 if chunk <= 3 else 20)  # chunks of every size
    cm = compile_model(model)
    wanted = select_properties(model, None)
    one, g1 = fast_explicit.search(cm, wanted, Limits())
    two, g2 = fast_explicit.search(cm, wanted, Limits(), workers=2)
    assert g1.n == g2.n
    assert (g1.states[:g1.n] == g2.states[:g2.n]).all() and (g1.parent[:g1.n] == g2.parent[:g2.n]).all()
    for field in ("complete", "pruned", "depth", "stop_reason", "fired", "invariant_cex", "transition_cex",
                  "deadlock", "parent"):
        assert getattr(one, field) == getattr(two, field), field
    assert str(one.fault) == str(two.fault)
    a = _json(run_explicit(model, wanted, Limits(), core="compiled"))
    b = _json(run_explicit(model, wanted, Limits(), core="compiled", workers=2))
    assert a == b


def test_two_workers_stop_at_the_same_state_limit(monkeypatch):
    monkeypatch.setattr(fast_explicit, "PARALLEL_MIN", 1)
    # wide (81 states), whose parallel kernels the test above compiles: a limit on the initial
    # state, and limits inside the BFS levels of depth 3 and 5
    model = load_source("model t\n" + EXTRA["wide"], "wide.gpspec")
    wanted = select_properties(model, None)
    for limit in (1, 30, 60):
        a = _json(run_explicit(model, wanted, Limits(max_states=limit), core="compiled"))
        b = _json(run_explicit(model, wanted, Limits(max_states=limit), core="compiled", workers=2))
        assert a == b and f"state limit {limit}" in b["results"][1]["reason"]


@pytest.mark.parametrize("name,model", _fingerprinted(), ids=lambda x: x if isinstance(x, str) else "")
def test_fingerprints_give_the_exact_search_with_holding_verdicts_bounded(name, model):
    wanted = select_properties(model, None)
    exact = run_explicit(model, wanted, Limits(), core="compiled")
    fp = run_explicit(model, wanted, Limits(), core="compiled", fingerprint=True)
    assert (fp.states, fp.coverage, fp.warnings) == (exact.states, exact.coverage, exact.warnings)
    cm = compile_model(model)
    for a, b in zip(exact.results, fp.results):
        assert (a.property, a.kind) == (b.property, b.kind)
        if a.verdict is Verdict.PROVED:  # a fingerprint search proves nothing
            assert b.verdict is Verdict.HOLDS_TO_BOUND and "fingerprints" in b.reason
        else:
            assert b.verdict is a.verdict and b.bound == a.bound
            assert b.to_json()["counterexample"] == a.to_json()["counterexample"]
            assert (b.detail, b.reason is None) == (a.detail, a.reason is None)
            if b.verdict is Verdict.VIOLATED and (b.kind != "range" or "action" in b.detail):
                assert check_witness(cm, b) is None, b.property
    if fp.states is not None:
        p = fp.fingerprint["collision_probability"]
        generated = len(cm.initial_states()) + sum(fp.coverage.values())
        assert p["calculated"] == pytest.approx(fp.states * (generated - fp.states) / 2.0 ** 64)
        assert 0 <= p["calculated"] < 1e-6 and 0 <= p["actual"] < 1e-6


def test_arrays_window_and_tables_grow_past_the_initial_capacity(examples, monkeypatch):
    monkeypatch.setattr(fast_explicit, "INITIAL_CAPACITY", 16)
    monkeypatch.setattr(fast_explicit, "RESERVE_STATES", 16)
    monkeypatch.setattr(fast_explicit, "PARALLEL_CHUNK", 5)
    monkeypatch.setattr(fast_explicit, "PARALLEL_MIN", 1)
    # rewind at its defaults (326 states), the model this file's other tests
    # compile: the hash table, the per-state arrays and the fingerprint window grow many times from 16
    model = load_spec(examples / "rewind.gpspec")
    wanted = select_properties(model, None)
    ref = _json(run_explicit(model, wanted, Limits(), core="python"))
    exact = _json(run_explicit(model, wanted, Limits(), core="compiled"))
    two = _json(run_explicit(model, wanted, Limits(), core="compiled", workers=2))
    fp = _json(run_explicit(model, wanted, Limits(), core="compiled", fingerprint=True))
    assert ref == exact == two
    assert fp["states"] == exact["states"] > 16 * 16 and fp["coverage"] == exact["coverage"]
    assert [r["counterexample"] for r in fp["results"]] == [r["counterexample"] for r in exact["results"]]


def test_collision_estimate_is_tlcs_smallest_gap():
    model = load_source("model t\n" + EXTRA["wide"], "t.gpspec")  # its fingerprint kernel: compiled for the test above
    _, g = fast_explicit.search(compile_model(model), set(), fingerprint=True)
    g.table = np.array([0, 40, 7, 0, 19, 1 << 40], dtype=np.int64)
    g.n = 4
    p = fast_explicit.collision_probability(g, 10)
    assert p == {"calculated": pytest.approx(4 * 6 / 2.0 ** 64), "actual": pytest.approx(1 / 12)}


def test_flags_on_the_command_line(examples, capsys):
    from gpcheck.checker.cli.command import main

    spec = str(examples / "rewind.gpspec")
    outs = []
    for extra in ([], ["--workers", "2"]):
        assert main(["verify", spec, "--json", "--core", "compiled", *extra]) == 1
        out = json.loads(capsys.readouterr().out)
        out.pop("seconds")
        outs.append(out)
    assert outs[0] == outs[1]
    assert main(["verify", spec, "--json", "--core", "compiled", "--fingerprint"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["fingerprint"]["bits"] == 64 and out["states"] == 326
    assert {r["verdict"] for r in out["results"]} == {"violated", "holds_to_bound"}
    assert main(["verify", spec, "--core", "compiled", "--fingerprint"]) == 1
    assert "calculated (optimistic):  val = " in capsys.readouterr().out
    for bad in (["--workers", "0"], ["--core", "python", "--workers", "2"], ["--core", "python", "--fingerprint"],
                ["--fingerprint", "--workers", "2"]):
        assert main(["verify", spec, *bad]) == 2, bad
    with pytest.raises(UsageError):
        run_explicit(load_spec(spec), set(), Limits(), core="compiled", workers=0)


@pytest.mark.parametrize("cores,load,expected", [(2, 0.0, 1), (3, 0.0, 1), (4, 0.0, 4), (16, 0.2, 16), (16, 10.0, 6),
                                                  (16, 13.0, 1), (64, 0.0, 16), (8, 40.0, 1)])
def test_auto_workers_counts_idle_cores(cores, load, expected, monkeypatch):
    monkeypatch.setattr(fast_explicit.os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    monkeypatch.setattr(fast_explicit.os, "getloadavg", lambda: (load, load, load))
    assert fast_explicit.auto_workers() == expected


@pytest.mark.parametrize("cached", [True, False])
def test_auto_workers_give_the_results_of_one(examples, cached, monkeypatch):
    """`--workers auto` on a machine where it picks 3 threads: parallel chunks once the frontier
    is large enough (the threshold is higher while the parallel kernels are not compiled), and
    the same report as one worker either way."""
    monkeypatch.setattr(fast_explicit, "auto_workers", lambda: 3)
    monkeypatch.setattr(fast_explicit, "PARALLEL_CHUNK", 5)
    monkeypatch.setattr(fast_explicit, "PARALLEL_MIN", 2)
    monkeypatch.setattr(fast_explicit, "AUTO_COLD_FRONTIER", 40)
    monkeypatch.setattr(fast_explicit, "has_machine_code", lambda mod, fn: cached)
    model = load_spec(str(examples / "rewind.gpspec"))
    wanted = select_properties(model, None)
    cm = compile_model(model)
    chunks: list[int] = []
    real = fast_explicit._parallel.__call__

    def spy(self, *args):  # type: ignore[no-untyped-def]
        chunks.append(self.min_frontier)
        return real(self, *args)

    monkeypatch.setattr(fast_explicit._parallel, "__call__", spy)
    one, g1 = fast_explicit.search(cm, wanted, Limits())
    auto, g2 = fast_explicit.search(cm, wanted, Limits(), workers="auto")
    assert chunks and set(chunks) == {2 if cached else 40}
    assert g1.n == g2.n and (g1.parent[:g1.n] == g2.parent[:g2.n]).all()
    assert (g1.states[:g1.n] == g2.states[:g2.n]).all()
    for field in ("complete", "depth", "fired", "invariant_cex", "deadlock", "parent"):
        assert getattr(one, field) == getattr(auto, field), field
    a = _json(run_explicit(model, wanted, Limits(), core="compiled"))
    b = _json(run_explicit(model, wanted, Limits(), core="compiled", workers="auto"))
    assert a == b


def test_workers_flag_takes_auto(examples, capsys):
    from gpcheck.checker.cli.command import main

    spec = str(examples / "rewind.gpspec")
    assert main(["verify", spec, "--json", "--core", "compiled", "--workers", "auto"]) == 1
    assert json.loads(capsys.readouterr().out)["states"] == 326
    assert main(["verify", spec, "--workers", "many"]) == 2
    assert main(["verify", spec, "--core", "python", "--workers", "auto"]) == 1  # auto goes with any core


def test_stored_states_decode_alike(examples):
    """A state decoded where it is stored, all of them at once by columns, and at the end of
    its BFS path: the same tuples (latency graphs use the second, counterexamples the third)."""
    model = load_spec(str(examples / "rewind.gpspec"))
    cm = compile_model(model)
    _, g = fast_explicit.search(cm, select_properties(model, None), Limits())
    every = g.all_states()
    assert len(every) == g.n == len(set(every))
    assert every == [g.state(i) for i in range(g.n)]
    assert all(g.path_states(i)[-1] == every[i] for i in range(0, g.n, 7))

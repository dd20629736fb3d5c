"""The Z3 encoding against the interpreter, on the example specs and on random small specs
(tests/quality/specgen.py): (a) single steps, (b) engine verdicts and shortest counterexample
lengths against explicit search, (c) the states reachable within k steps, and liveness
verdicts of lasso BMC. Every disagreement
fails with both sides printed (tests/quality/smt_check.py)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpcheck.gpmodel import compile_model
from gpcheck.spec import load_source, load_spec

from smt_check import check_engines, check_liveness, check_reachable_counts, check_steps, sample_states
from specgen import spec_text

# Small instances: the checks enumerate states and unroll to the explored depth.
EXAMPLES = [
    ("ring.gpspec", {"N": 2, "B": 1}),
    ("ring.gpspec", {"N": 3, "B": 2, "MAXP": 1}),
    ("rewind.gpspec", {"N": 3}),
    ("peterson.gpspec", {}),
    ("starve.gpspec", {}),
    ("starve.gpspec", {"AGING": 1}),
]
IDS = [f"{f.removesuffix('.gpspec')}-{'-'.join(f'{k}{v}' for k, v in c.items()) or 'default'}" for f, c in EXAMPLES]
RANDOM = settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
RING_LARGE = ("ring.gpspec", {"N": 3, "B": 2, "MAXP": 1})
# ring at N=3, B=2, MAXP=1 `slow` in the steps and pdr agreement (0.5 s of CPU each): ring at N=2,
# B=1 is the same spec through the same step encoding and pdr, in the default run
EXAMPLES_SMALL_RING = [pytest.param(f, c, marks=pytest.mark.slow, id=i) if (f, c) == RING_LARGE
                       else pytest.param(f, c, id=i) for (f, c), i in zip(EXAMPLES, IDS)]


def _report(problems: list[str], text: str = "") -> str:
    return (text + "\n" if text else "") + "\n".join(problems[:10])


@pytest.mark.parametrize(("name", "consts"), EXAMPLES_SMALL_RING)
def test_examples_steps_agree(examples, name, consts):
    m = load_spec(examples / name, consts)
    cm = compile_model(m)
    problems = check_steps(m, cm, sample_states(cm, 12, seed=1))
    assert not problems, _report(problems)


# rewind at N=3 takes 8 s of CPU here, at N=2 3 s (both `slow`: tests/unit/test_smt_engines.py::
# test_rewind_counterexample_is_the_explicit_one checks bmc's, kind's and pdr's rewind counterexample
# against explicit search's, and ring, peterson and starve below go through the same unrolling); ring
# at N=3, B=2, MAXP=1 1.3 s (`slow`): ring at N=2, B=1 is the same spec through the same unrolling
BMC_EXAMPLES = [pytest.param(f, c, marks=pytest.mark.slow, id=i) if (f, c) in (("rewind.gpspec", {"N": 3}), RING_LARGE)
                else pytest.param(f, c, id=i) for (f, c), i in zip(EXAMPLES, IDS)]
BMC_EXAMPLES.append(pytest.param("rewind.gpspec", {"N": 2}, id="rewind-N2", marks=pytest.mark.slow))


@pytest.mark.parametrize(("name", "consts"), BMC_EXAMPLES)
def test_examples_bmc_and_kind_agree_with_explicit(examples, name, consts):
    m = load_spec(examples / name, consts)
    cm = compile_model(m)
    problems = check_engines(m, cm, ("bmc", "kind"), timeout=30)
    assert not problems, _report(problems)


@pytest.mark.parametrize(("name", "consts"), EXAMPLES_SMALL_RING)
def test_examples_pdr_agrees_on_invariants(examples, name, consts):
    m = load_spec(examples / name, consts)
    cm = compile_model(m)
    names = [p.name for p in m.invariants] + [p.name for p in m.transitions]
    problems = check_engines(m, cm, ("pdr",), timeout=20, names=names)
    assert not problems, _report(problems)


@pytest.mark.parametrize(("name", "consts"), EXAMPLES, ids=IDS)
def test_examples_reachable_counts_agree(examples, name, consts):
    m = load_spec(examples / name, consts)
    problems = check_reachable_counts(m, compile_model(m), k=4)
    assert not problems, _report(problems)


@settings(RANDOM, max_examples=3)  # the default run; 20 specs in the slow test below
@given(text=spec_text())
def test_random_specs_steps_and_bmc_agree(text):
    m = load_source(text, "rnd.gpspec")
    cm = compile_model(m)
    problems = check_steps(m, cm, sample_states(cm, 6, seed=0))
    problems += check_engines(m, cm, ("bmc",))
    assert not problems, _report(problems, text)


@pytest.mark.slow  # 20 specs; fast: test_random_specs_steps_and_bmc_agree (the same generator, 3 specs)
@settings(RANDOM, max_examples=20)
@given(text=spec_text())
def test_random_specs_steps_and_bmc_agree_on_20_specs(text):
    test_random_specs_steps_and_bmc_agree.hypothesis.inner_test(text)


@settings(RANDOM, max_examples=3)  # the default run; 10 specs in the slow test below
@given(text=spec_text())
def test_random_specs_kind_and_pdr_agree(text):
    m = load_source(text, "rnd.gpspec")
    problems = check_engines(m, compile_model(m), ("kind", "pdr"), timeout=4)
    assert not problems, _report(problems, text)


@pytest.mark.slow  # 10 specs; fast: test_random_specs_kind_and_pdr_agree (the same generator, 3 specs)
@settings(RANDOM, max_examples=10)
@given(text=spec_text())
def test_random_specs_kind_and_pdr_agree_on_10_specs(text):
    test_random_specs_kind_and_pdr_agree.hypothesis.inner_test(text)


@settings(RANDOM, max_examples=8)  # the default run; 15 specs in the slow test below
@given(text=spec_text(tiny=True))
def test_random_tiny_specs_reachable_counts_agree(text):
    m = load_source(text, "rnd.gpspec")
    problems = check_reachable_counts(m, compile_model(m), k=3)
    assert not problems, _report(problems, text)


@pytest.mark.slow  # 15 specs; fast: test_random_tiny_specs_reachable_counts_agree (the same generator, 8 specs)
@settings(RANDOM, max_examples=15)
@given(text=spec_text(tiny=True))
def test_random_tiny_specs_reachable_counts_agree_on_15_specs(text):
    test_random_tiny_specs_reachable_counts_agree.hypothesis.inner_test(text)


# ring at N=3, B=2, MAXP=1: 2 s of CPU (`slow`); ring at N=2, B=1 is the same spec's lassos, in the default run
LASSO_EXAMPLES = [pytest.param(f, c, marks=pytest.mark.slow, id=i) if (f, c) == RING_LARGE
                  else pytest.param(f, c, id=i) for (f, c), i in zip(EXAMPLES, IDS)]


@pytest.mark.parametrize(("name", "consts"), LASSO_EXAMPLES)
def test_examples_lasso_bmc_agrees_on_liveness(examples, name, consts):
    m = load_spec(examples / name, consts)
    problems = check_liveness(m, compile_model(m))
    assert not problems, _report(problems)


@settings(RANDOM, max_examples=15)  # the default run; 40 specs in the slow test below
@given(text=spec_text())
def test_random_specs_lasso_bmc_agrees_on_liveness(text):
    m = load_source(text, "rnd.gpspec")
    problems = check_liveness(m, compile_model(m))
    assert not problems, _report(problems, text)


@pytest.mark.slow  # 40 specs; fast: test_random_specs_lasso_bmc_agrees_on_liveness (the same generator, 15 specs)
@settings(RANDOM, max_examples=40)
@given(text=spec_text())
def test_random_specs_lasso_bmc_agrees_on_liveness_on_40_specs(text):
    test_random_specs_lasso_bmc_agrees_on_liveness.hypothesis.inner_test(text)

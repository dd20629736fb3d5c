"""The bundled models' known verdicts, written the way a user of the gpcheck pytest plugin
writes property tests: this file is the plugin's worked example (README, "Python API").

Every model declares `expect PROPERTY: VERDICT`; each expectation becomes one test, checked by
the explicit engine at the model's default constants (one search per model is shared by its
expectations, NOTE(testing-cache) in checker/api/testing.py). The marked tests show what-if runs
over other constants with `@pytest.mark.gpcheck_consts`."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from gpcheck.checker.cli.pytest_plugin import Gpcheck, autoloaded
from gpcheck.checker.api.testing import assert_holds, assert_verdict
from gpcheck.spec import bundled_models, load_spec
from tests.bundled import bundled_model, run_folder, shared_report, shared_verify

# A user's suite needs nothing: installing gpcheck registers the plugin. This line only serves
# runs of this repository's tests without installing it.
pytest_plugins = [] if autoloaded() else ["gpcheck.checker.cli.pytest_plugin"]

MAX_STATES = 1_000_000  # a model grown past this is no longer a fast unit test: it fails
# `slow`: finding which assumptions each of cwsr's proofs used takes 9 s of CPU (one search per
# declared assumption). Fast: the same assertions on every other model here, cwsr's expectations
# in tests/unit/test_models.py::test_every_expectation_holds_at_defaults, and the README's plugin
# example (assert_holds on cwsr), which tests/unit/test_docs_examples.py runs.
SLOW_MODELS = {"cwsr"}


def _expectations() -> list[Any]:
    cases = []
    for name in bundled_models():
        model = bundled_model(name)
        for e in model.expectations:
            marks = []
            if e.verdict == "proved" and model.constraints:
                marks.append(pytest.mark.skip(reason=f"{name} explores inside a constraint: only pdr or "
                                                     f"k-induction can prove {e.property}"))
            if name in SLOW_MODELS:
                marks.append(pytest.mark.slow)
            cases.append(pytest.param(name, e.property, e.verdict, id=f"{name}-{e.property}", marks=marks))
    return cases


@pytest.fixture(autouse=True)
def _one_verify_per_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Not needed by a user's suite (the plugin's cache shares one search per model among its
    expectations already): here the runs are also shared with the other test modules of this
    run that check a whole bundled model (getting-started's `gpcheck verify`, the library sample
    of test_models.py), which ask for it without a state limit (tests/bundled.py)."""
    with shared_verify(run_folder(tmp_path_factory)):
        yield


@pytest.mark.parametrize("model, prop, expected", _expectations())
def test_expected_verdict(model: str, prop: str, expected: str) -> None:
    assert_verdict(model, prop, expected)
    states = shared_report(model).states
    assert states is not None and states <= MAX_STATES, (model, states)


@pytest.mark.gpcheck_consts(N=[3, 4], READ_AT_LAUNCH=[0, 1])
def test_rewind_reexecutes_kernels_whatever_the_ring(gpcheck: Gpcheck) -> None:
    """GPreempt's kernel_offset rewind re-runs kernels for every ring size and read-index rule."""
    result = gpcheck.assert_violated("reef_rewind", "no_reexecution")
    assert result.counterexample is not None and result.counterexample.steps[0].action is None


@pytest.mark.gpcheck_consts(N=[1], MAXP=[1])  # N=2 (13 s of CPU, the proofs' assumptions found on the timed model): slow, below
def test_cwsr_saves_and_restores_exactly(gpcheck_const: dict[str, int]) -> None:
    """CWSR neither re-executes nor loses work, at every size and preemption count tried."""
    assert_holds("cwsr", "no_reexecution", consts=gpcheck_const, proved=True)
    assert_holds("cwsr", "no_loss", consts=gpcheck_const, proved=True)


@pytest.mark.slow  # N=2: MAXP=1 13 s, MAXP=2 32 s of CPU on a cold cache; fast: test_cwsr_saves_and_restores_exactly (N=1, MAXP=1: the same proofs through the plugin's consts)
@pytest.mark.gpcheck_consts(N=[2], MAXP=[1, 2])
def test_cwsr_saves_and_restores_exactly_with_two_preemptions(gpcheck_const: dict[str, int]) -> None:
    """The same with two dispatches, and one or two preemptions."""
    test_cwsr_saves_and_restores_exactly(gpcheck_const)


@pytest.mark.slow  # N=3 (10 to 12 s of CPU each); fast: test_cwsr_saves_and_restores_exactly (N=1, MAXP=1)
@pytest.mark.gpcheck_consts(N=[3], MAXP=[1, 2])
def test_cwsr_saves_and_restores_exactly_with_three_dispatches(gpcheck_const: dict[str, int]) -> None:
    """The same at N=3."""
    test_cwsr_saves_and_restores_exactly(gpcheck_const)

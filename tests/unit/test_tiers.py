"""Issue 33 item 3: the README's test command is what CI runs, it runs in parallel and leaves the
slow and long tiers out, and the run names a test that belongs in a slower tier
(tests/conftest.py, docs/testing.md)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tests.conftest import available_cpus

ROOT = Path(__file__).resolve().parents[2]

pytest_plugins = ["pytester"]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_ci_runs_exactly_the_readmes_test_command_and_fails_with_it():
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"^\s*(?:\$ )?(python3 -m venv .*python -m pytest)\s*$", readme, re.M)
    assert command, "the README's test command"
    steps = [s.strip() for s in command.group(1).split("&&")]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "set -euo pipefail" in ci  # any failing step, the tests included, fails the run
    run = [ln for ln in ci if ln and not ln.startswith("#") and not ln.startswith("set ") and not ln.startswith("cd ")]
    assert run[-1] == steps[-1] == "python -m pytest"  # the last step: its exit code is CI's
    assert any("pip install" in ln and "--no-compile -e '.[test]'" in ln for ln in run)
    assert "python -m pip install --no-compile -e '.[test]'" in steps


def test_the_default_run_is_parallel_and_leaves_the_slow_tiers_out():
    project, pytest_ini = _pyproject()["project"], _pyproject()["tool"]["pytest"]["ini_options"]
    assert any(dep.startswith("pytest-xdist") for dep in project["optional-dependencies"]["test"])
    addopts = pytest_ini["addopts"]
    assert "-n auto" in addopts and "--dist worksteal" in addopts
    assert "-m 'not slow and not long'" in addopts
    assert {m.split(":")[0] for m in pytest_ini["markers"]} >= {"slow", "long"}


def test_auto_starts_one_worker_per_available_processor():
    import os

    n = available_cpus()
    assert 1 <= n <= len(os.sched_getaffinity(0))


BURN = """
import os, pytest

def _burn(seconds):
    start = sum(os.times()[:2])
    while sum(os.times()[:2]) - start < seconds:
        pass

def test_quick():
    pass

def test_burns_processor_time():
    _burn(0.15)

@pytest.mark.slow
def test_marked_slow():
    _burn(0.15)
"""


def test_a_test_over_the_budget_without_a_tier_is_named(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("GPCHECK_TEST_CPU_BUDGET", "0.1")  # the burns take 0.15 s, `test_quick` next to nothing
    # the tier hooks of tests/conftest.py, in the inner session's own conftest
    pytester.makeconftest(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
                          "import tests.conftest as tiers\n"
                          "pytest_runtest_protocol = tiers.pytest_runtest_protocol\n"
                          "pytest_runtest_makereport = tiers.pytest_runtest_makereport\n"
                          "pytest_configure = tiers.pytest_configure\n")
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow\n")
    pytester.makepyfile(test_burn=BURN)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist", "-m", "")
    result.assert_outcomes(passed=3)
    out = result.stdout.str()
    assert "tests over the default run's budget" in out
    named = re.findall(r"^\s+[\d.]+ s\s+(\S+)$", out, re.M)
    assert named == ["test_burn.py::test_burns_processor_time"], out


def test_a_worker_sees_the_runs_terminal_variables(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    """xdist starts its workers with COLUMNS=80 and LINES=24; output that follows $COLUMNS then
    differed between a parallel run and one process (the library matrix wrapped)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    pytester.makeconftest(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
                          "import tests.conftest as tiers\n"
                          "pytest_configure_node = tiers.pytest_configure_node\n"
                          "pytest_configure = tiers.pytest_configure\n")
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_env="import os\n\ndef test_no_columns():\n"
                                 "    assert os.environ.get('PYTEST_XDIST_WORKER')\n"
                                 "    assert 'COLUMNS' not in os.environ and 'LINES' not in os.environ\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "1")
    result.assert_outcomes(passed=1)

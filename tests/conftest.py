"""Shared test helpers: where the shared example specs live, and the test tiers.

The tiers (docs/testing.md):

- the default run, `python -m pytest` (the README's command, `.ci/run`): every test not marked
  `slow` or `long`, spread over the machine's cores (pytest-xdist, `-n auto` in pyproject.toml).
  It covers every module in a few minutes;
- `python -m pytest -m slow`: tests of tens of seconds to a minute or two each (whole for-all
  proofs of one property, read-backs of printed lemmas, deep unrollings);
- `python -m pytest -m long`: quality runs of minutes each (every property of a model for all
  sizes, long differential and fuzz runs).

A test that needs more than `DEFAULT_CPU_BUDGET` seconds of processor time and carries neither
mark is named at the end of the run, with the hint to mark it `slow` (and keep a faster test of
the same code path in the default run): that is how a new test finds its tier. Processor time,
not wall time, so that the list does not depend on what else the machine runs."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any, Callable, Generator, Iterator, Sequence

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # tests.reference is imported by package name
    sys.path.insert(0, str(ROOT))


# ---------------------------------------------------------------------------------------------
# Bytecode: where the environment turns it off ($PYTHONDONTWRITEBYTECODE, as container images
# often do), every process of the run (each xdist worker, each `gpcheck` a test starts) would
# compile every module and rewrite every test's asserts from source again: about 10 s of
# processor time per worker and a fraction of a second per child process. The run keeps its
# bytecode under .pytest_cache/pycache instead (sys.pycache_prefix, which pytest's rewriter
# honours too), never beside the sources; $GPCHECK_TEST_BYTECODE=0 keeps the environment's choice.
# A child under a file-size limit must not write there (CPython renames a .pyc cut short into
# place): the tests that set one give it PYTHONDONTWRITEBYTECODE=1.


def _bytecode_outside_the_sources() -> None:
    if not sys.dont_write_bytecode or os.environ.get("GPCHECK_TEST_BYTECODE") == "0":
        return
    prefix = str(ROOT / ".pytest_cache" / "pycache")
    sys.pycache_prefix, sys.dont_write_bytecode = prefix, False
    os.environ["PYTHONPYCACHEPREFIX"] = prefix  # inherited by the workers and the children
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


_bytecode_outside_the_sources()

# Idle OpenMP threads sleep instead of spinning (numba's `omp` threading layer runs the parallel
# search, `--workers`): between the many small parallel chunks of the tests the spinning threads
# burned processor time the other xdist worker needed (rewind's 326 states in chunks of 5 at two
# workers: 0.8 s of CPU spinning, 0.06 s sleeping; the same states). Set before numba starts its
# pool; $OMP_WAIT_POLICY set by the environment is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
EXAMPLES = ROOT.parent / "shared" / "spec-examples"

TIERS = ("slow", "long")
# seconds of processor time (this process and the children it waited for); $GPCHECK_TEST_CPU_BUDGET
# lowers it to list more
DEFAULT_CPU_BUDGET = float(os.environ.get("GPCHECK_TEST_CPU_BUDGET") or 20.0)


@pytest.fixture(scope="session")
def examples() -> Path:
    if not EXAMPLES.is_dir():
        pytest.skip("../shared/spec-examples is not beside the checkout")
    return EXAMPLES


# ---------------------------------------------------------------------------------------------
# How many workers `-n auto` starts


def available_cpus() -> int:
    """The processors this process may run on: its affinity mask, capped by a cgroup (v2) CPU
    quota where one is set. pytest-xdist's own `auto` counts the host's physical cores (psutil),
    which in a container or a VM with hyper-threads is neither."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            n = min(n, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, n)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: a run with -p no:xdist has none
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`: one worker per available processor ($PYTEST_XDIST_AUTO_NUM_WORKERS overrides,
    as with pytest-xdist's own rule)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist reads it
    return available_cpus()


# ---------------------------------------------------------------------------------------------
# Processor time per test, and the default run's budget


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


_CPU_START = pytest.StashKey[float]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    # setup, call and teardown together: a module fixture that compiles a model counts for the
    # first test that uses it
    item.stash[_CPU_START] = _cpu_seconds()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, None, None]:
    if call.when == "teardown" and _CPU_START in item.stash:
        # before the report is made, which copies them; they travel from an xdist worker to the
        # controller with it
        cpu = round(_cpu_seconds() - item.stash[_CPU_START], 2)
        item.user_properties.append(("cpu_s", cpu))
        if item.config.rootpath == ROOT:  # not a run inside a test (pytester), which inherits $GPCHECK_TEST_CPU_LOG
            _log_cpu(cpu, item.nodeid)
    yield


# $GPCHECK_TEST_CPU_LOG=FILE: every process of the run (each xdist worker, the controller) appends
# one line per test to FILE, `<cpu s>\ttest\t<worker>\t<node id>`, and a `collected` line (its
# processor time from its start through importing every test module) and a `total` line (its
# processor time at the end, the children it waited for included, then split): the run's whole processor
# time by test, by module and by phase, from lines written as the run goes (docs/testing.md).
CPU_LOG = os.environ.get("GPCHECK_TEST_CPU_LOG")


def _log_cpu(cpu: float, what: str, kind: str = "test") -> None:
    if not CPU_LOG:
        return
    line = f"{cpu:.2f}\t{kind}\t{os.environ.get('PYTEST_XDIST_WORKER', 'main')}\t{what}\n"
    with open(CPU_LOG, "a", encoding="utf-8") as f:  # one short append per line: no interleaving
        f.write(line)


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.rootpath == ROOT:
        _log_cpu(_cpu_seconds(), f"{len(session.items)} items", "collected")


def pytest_sessionfinish(session: pytest.Session) -> None:
    if session.config.rootpath != ROOT:
        return
    t = os.times()
    _log_cpu(_cpu_seconds(), f"self {t.user + t.system:.2f} children {t.children_user + t.children_system:.2f}", "total")


class _Budget:
    """Collects, on the process that prints the summary, the default-tier tests over budget."""

    def __init__(self) -> None:
        self.over: list[tuple[float, str]] = []

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown" or any(t in report.keywords for t in TIERS):
            return
        cpu = dict(report.user_properties).get("cpu_s")
        if isinstance(cpu, (int, float)) and cpu > DEFAULT_CPU_BUDGET:
            self.over.append((cpu, report.nodeid))

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.over:
            return
        terminalreporter.section("tests over the default run's budget")
        terminalreporter.write_line(
            f"{len(self.over)} test(s) without a tier mark took more than {DEFAULT_CPU_BUDGET:g} s of processor "
            f"time: mark each @pytest.mark.slow (or long), keeping a faster test of the same code path in the "
            f"default run (docs/testing.md)")
        for cpu, nodeid in sorted(self.over, reverse=True):
            terminalreporter.write_line(f"{cpu:8.1f} s  {nodeid}")


# ---------------------------------------------------------------------------------------------
# The same environment in every worker

# An xdist worker starts with COLUMNS=80 and LINES=24 set where the run had none, so output that
# follows $COLUMNS (the library matrix, the reports) was 80 columns wide in a worker and 100 or
# 160 in one process. Each worker gets the run's own values back.
_TERMINAL_VARS = ("COLUMNS", "LINES")


@pytest.hookimpl(optionalhook=True)  # an xdist hook: a run with -p no:xdist has none
def pytest_configure_node(node: object) -> None:
    """(xdist, on the controller) hand each worker the run's terminal variables."""
    node.workerinput["gpcheck_terminal_env"] = {v: os.environ.get(v) for v in _TERMINAL_VARS}  # type: ignore[attr-defined]


def pytest_configure(config: pytest.Config) -> None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:  # the controller (or a run without xdist)
        config.pluginmanager.register(_Budget(), "gpcheck-tier-budget")
        return
    for name, value in workerinput.get("gpcheck_terminal_env", {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


# ---------------------------------------------------------------------------------------------
# Warm caches shared by the cache-fault tests

@pytest.fixture(scope="session")
def fault_caches(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, tuple[object, ...]]:
    """The warm gpcheck caches of tests/quality/fault_inject.py's two small models (`cache` of
    SPEC, `other` of OTHER) and SPEC's reference result: (folder with the two specs, cache, other,
    reference). Made once per run, by whichever xdist worker asks first (the others wait on a
    lock), instead of two cold compilations of each model per test file. A test that damages a
    cache copies it first (`fault_inject.copy_caches`); nothing may write into these."""
    import fcntl
    import json

    sys.path.insert(0, str(ROOT / "tests" / "quality"))
    import fault_inject as F

    # an xdist run: the run's folder, above each worker's own; one process: its own folder
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "fault-caches"
    shared.mkdir(exist_ok=True)
    done = shared / "reference.json"
    with open(shared / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            cache, other, reference = F.prepare_caches(shared)
            done.write_text(json.dumps(reference))
    rc, (states, rows) = json.loads(done.read_text())
    return shared, shared / "cache", shared / "other", (rc, (states, [tuple(r) for r in rows]))


# ---------------------------------------------------------------------------------------------
# An in-process stand-in for the Dask cluster


class _InProcessCluster:
    """Runs each job here, after a pickle round trip (what the Dask cluster does to it)."""

    where, workers = "in-process stand-in", 1

    def run(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Any]:
        import pickle

        from gpcheck.checker.distributed.cluster import Outcome

        for i, item in enumerate(items):
            yield Outcome(i, fn(pickle.loads(pickle.dumps(item))))


@pytest.fixture
def in_process_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    """`open_cluster` gives `_InProcessCluster`: a sweep or corpus run goes through its whole
    command path but checks each job in this process, instead of starting a local Dask cluster
    (seconds of processor time in worker processes) where the test is not about the cluster
    (tests/unit/test_sweep.py and test_cluster_faults.py are)."""
    from contextlib import contextmanager

    from gpcheck.checker.distributed import cluster as cluster_mod

    @contextmanager
    def fake(address: str | None = None, workers: int | None = None) -> Iterator[_InProcessCluster]:
        yield _InProcessCluster()

    monkeypatch.setattr(cluster_mod, "open_cluster", fake)

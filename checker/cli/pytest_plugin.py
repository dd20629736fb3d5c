"""The gpcheck pytest plugin, registered through the `pytest11` entry point (`gpcheck`).

What it adds to any pytest run where gpcheck is installed:

- the marker `@pytest.mark.gpcheck_consts(N=[4, 8], CAP=[1, 2])`: the test runs once per
  combination of the listed constant values (the cartesian product, ids such as `N=4-CAP=1`) and
  receives the combination as the `gpcheck_const` fixture (a dict). A single value may be given
  without a list. Markers on a class or module combine with the test's; a name set closer to the
  test wins;
- the fixture `gpcheck_const`: the current combination, `{}` for a test without the marker;
- the fixture `gpcheck`: `gpcheck.checker.api.testing`'s assertions with the current combination as the
  default constants (`gpcheck.assert_holds("cwsr", "no_loss")`), plus `verify` and `replay`;
- the option `--gpcheck-itf DIR`: every counterexample of a failed gpcheck assertion is written
  as ITF to `DIR/<test id>__<property>.itf.json`;
- failure reports: a `GpcheckAssertionError` is reported by its message alone (verdict,
  counterexample as `gpcheck verify` prints it, reproducing command), without the traceback
  through gpcheck's code.

The assertions themselves live in checker/api/testing.py and need no pytest. This module imports
them (and with them the parser, the engines and Z3) only when a test uses them: pytest loads it
in every run of every project where gpcheck is installed."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generator, Iterable, Mapping

import pytest

if TYPE_CHECKING:
    from gpcheck.checker.api.testing import ModelArg
    from gpcheck.checker.core.verdict import Report, Result, Verdict

MARKER = "gpcheck_consts"
CONST_FIXTURE = "gpcheck_const"


def autoloaded() -> bool:
    """Whether pytest loads this plugin by itself: gpcheck is installed (its `pytest11` entry
    point exists) and PYTEST_DISABLE_PLUGIN_AUTOLOAD is not set. Where it is not, a test module
    can say `pytest_plugins = ["gpcheck.checker.cli.pytest_plugin"]` (this project's own tests do)."""
    import os
    from importlib.metadata import entry_points

    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    # (an install from before issue 34 names the old public path, NOTE(public-paths))
    return any(ep.value in (__name__, "gpcheck.checker.pytest_plugin") for ep in entry_points(group="pytest11"))


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gpcheck", "gpcheck property assertions")
    group.addoption("--gpcheck-itf", metavar="DIR", default=None, dest="gpcheck_itf",
                    help="write the counterexample of each failed gpcheck assertion as ITF into DIR")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(NAME=[values], ...): run the test once per combination of gpcheck constant values "
        f"(cartesian product); the test receives it as the '{CONST_FIXTURE}' fixture (a dict)",
    )


# ---------------------------------------------------------------------------------------------
# The constants marker


def const_combinations(markers: Iterable[pytest.Mark]) -> list[dict[str, int]]:
    """The cartesian product of the markers' value lists, closest marker first; the first
    marker to name a constant decides its values."""
    axes: dict[str, list[int]] = {}
    for mark in markers:
        if mark.args:
            raise pytest.UsageError(f"@pytest.mark.{MARKER} takes keyword arguments only: NAME=[values]")
        for name, values in mark.kwargs.items():
            if name in axes:
                continue
            vals = list(values) if isinstance(values, (list, tuple, range)) else [values]
            if not vals:
                raise pytest.UsageError(f"@pytest.mark.{MARKER}: {name} has no values")
            for v in vals:
                if not isinstance(v, int):
                    raise pytest.UsageError(f"@pytest.mark.{MARKER}: {name}={v!r} is not an integer")
            axes[name] = [int(v) for v in vals]
    names = list(axes)
    return [dict(zip(names, combo)) for combo in itertools.product(*(axes[n] for n in names))]


def const_id(values: Mapping[str, int]) -> str:
    """`N=4-CAP=1`: the parametrization id of one combination."""
    return "-".join(f"{k}={v}" for k, v in values.items())


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    markers = list(metafunc.definition.iter_markers(MARKER))
    if not markers:
        return
    if CONST_FIXTURE not in metafunc.fixturenames:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid}: @pytest.mark.{MARKER} needs the test to take the "
            f"'{CONST_FIXTURE}' fixture (or the 'gpcheck' fixture)"
        )
    combos = const_combinations(markers)
    metafunc.parametrize(CONST_FIXTURE, combos, ids=[const_id(c) for c in combos])


@pytest.fixture
def gpcheck_const(request: pytest.FixtureRequest) -> dict[str, int]:
    """The constant values of this run of a `gpcheck_consts`-marked test; `{}` without it."""
    return dict(getattr(request, "param", {}))


# ---------------------------------------------------------------------------------------------
# The `gpcheck` fixture


class Gpcheck:
    """gpcheck.checker.api.testing's assertions with default constants (a `gpcheck_consts` combination).
    Constants passed to a call are merged over the defaults."""

    def __init__(self, const: Mapping[str, int]):
        self.const: dict[str, int] = dict(const)

    def _merge(self, const: Mapping[str, int] | None, consts: Mapping[str, int] | None = None) -> dict[str, int]:
        from gpcheck.checker.api.testing import _consts

        return {**self.const, **(_consts(consts, const) or {})}

    def assert_holds(self, model: ModelArg, prop: str, *, consts: Mapping[str, int] | None = None,
                     const: Mapping[str, int] | None = None, **kw: Any) -> Result:
        """See gpcheck.checker.api.testing.assert_holds."""
        __tracebackhide__ = True
        from gpcheck.checker.api.testing import assert_holds

        return assert_holds(model, prop, consts=self._merge(const, consts), **kw)

    def assert_violated(self, model: ModelArg, prop: str, *, consts: Mapping[str, int] | None = None,
                        const: Mapping[str, int] | None = None, **kw: Any) -> Result:
        """See gpcheck.checker.api.testing.assert_violated."""
        __tracebackhide__ = True
        from gpcheck.checker.api.testing import assert_violated

        return assert_violated(model, prop, consts=self._merge(const, consts), **kw)

    def assert_verdict(self, model: ModelArg, prop: str, expected: str | Verdict, *,
                       consts: Mapping[str, int] | None = None, const: Mapping[str, int] | None = None,
                       **kw: Any) -> Result:
        """See gpcheck.checker.api.testing.assert_verdict."""
        __tracebackhide__ = True
        from gpcheck.checker.api.testing import assert_verdict

        return assert_verdict(model, prop, expected, consts=self._merge(const, consts), **kw)

    def assert_conforms(self, trace: Any, model: ModelArg | None = None, *,
                        consts: Mapping[str, int] | None = None, const: Mapping[str, int] | None = None,
                        **kw: Any) -> Any:
        """See gpcheck.checker.api.testing.assert_conforms (the defaults override the trace's constants)."""
        __tracebackhide__ = True
        from gpcheck.checker.api.testing import assert_conforms

        return assert_conforms(trace, model, consts=self._merge(const, consts) or None, **kw)

    def verify(self, model: ModelArg, *, consts: Mapping[str, int] | None = None,
               const: Mapping[str, int] | None = None, **kw: Any) -> Report:
        """checker.verify with the default constants."""
        from gpcheck.checker.api.model_api import verify

        return verify(model, self._merge(const, consts), **kw)

    def replay(self, trace: Any, model: ModelArg | None = None, *, consts: Mapping[str, int] | None = None,
               const: Mapping[str, int] | None = None, **kw: Any) -> Any:
        """checker.replay with the default constants."""
        from gpcheck.checker.api.trace_api import replay

        return replay(trace, model, self._merge(const, consts) or None, **kw)


@pytest.fixture
def gpcheck(gpcheck_const: dict[str, int]) -> Gpcheck:
    """Assertions bound to this test's `gpcheck_consts` combination (see `Gpcheck`)."""
    return Gpcheck(gpcheck_const)


# ---------------------------------------------------------------------------------------------
# Failure reports and --gpcheck-itf


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    excinfo = call.excinfo
    # Until a test has imported gpcheck.checker.api.testing, no GpcheckAssertionError can exist.
    testing = sys.modules.get("gpcheck.checker.api.testing")
    if excinfo is None or testing is None or not isinstance(excinfo.value, testing.GpcheckAssertionError):
        return
    from gpcheck.spec.errors import GpcheckError
    rep: pytest.TestReport = outcome.get_result()
    err = excinfo.value
    notes: list[str] = []
    directory = item.config.getoption("gpcheck_itf", default=None)
    if directory and err.counterexamples:
        try:
            for path in err.write_itf(directory, item.nodeid):
                notes.append(f"counterexample written as ITF: {path}")
        except (OSError, GpcheckError) as e:  # a report must not be lost to a write error
            notes.append(f"--gpcheck-itf {directory}: not written: {e}")
    if item.config.getoption("tbstyle", "auto") in ("auto", "long", "short"):
        rep.longrepr = _failure_text(excinfo, item) + "".join(f"\n{n}" for n in notes)
    elif notes:
        rep.sections.append(("gpcheck", "\n".join(notes)))


def _failure_text(excinfo: pytest.ExceptionInfo[BaseException], item: pytest.Item) -> str:
    """The assertion's headline (pytest's short summary shows the first line), where in the
    test it failed, then the rest of the message."""
    here = Path(__file__).resolve().parents[1]  # checker/: frames of gpcheck.checker are not the test
    where = ""
    for entry in reversed(excinfo.traceback):
        path = Path(str(entry.path)).resolve()
        if not path.is_relative_to(here):
            try:
                shown = path.relative_to(item.config.rootpath)
            except ValueError:
                shown = path
            where = f"at {shown}:{entry.lineno + 1}: in {entry.name}\n"
            try:
                where += "    " + str(entry.statement).strip().replace("\n", "\n    ") + "\n"
            except (OSError, IndexError):  # the source is not available
                pass
            break
    head, _, body = str(excinfo.value).partition("\n")
    return f"{head}\n{where}{body}"

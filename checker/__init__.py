"""Engines and front ends: explicit search, liveness, Z3 engines, reports, the `gpcheck` command.

One folder per stage (ARCHITECTURE.md): `core/` (verdicts, budget) <- `engines/` (explicit, latency,
smt, param, timed) <- `api/` <- `regression/` <- `distributed/` <- `cli/`, with `report/` beside the
engines. Imports run one way (tests/unit/test_import_order.py).

The stable Python API (README, "Python API"):

- `load(spec, consts)`: a spec file or bundled model name with constant overrides → `gpcheck.spec.ir.Model`
- `verify(spec, consts, properties, engine, ...)`: run an engine → `Report` of `Result`s
  (`Verdict`, `Counterexample` of `Step`s)
- `replay(trace, model, consts, ...)`: is a trace a behaviour of a model → `ReplayReport`
- `check_trace(trace, properties, ...)`: model-free observation properties of a trace
  → `gpcheck.traces.observe.ObservationReport`
- `verify_command`, `replay_command`, `check_command`: the `gpcheck` command line of a call
- `gpcheck.checker.testing`: `assert_holds`, `assert_violated`, `assert_verdict`, `assert_conforms`,
  `assert_observations` (the pytest plugin, checker/cli/pytest_plugin.py, builds on them)

Bad input raises `GpcheckError` subclasses (`SpecError.render()` gives the located message)."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpcheck.checker.api.model_api import ENGINES, load, verify
    from gpcheck.checker.api.reproduce import check_command, replay_command, verify_command
    from gpcheck.checker.api.trace_api import check_trace, replay
    from gpcheck.checker.core.verdict import Counterexample, Report, Result, Step, Verdict
    from gpcheck.spec.errors import GpcheckError, SpecError, UsageError
    from gpcheck.spec.load import bundled_models
    from gpcheck.traces.replay_report import ReplayReport

# Where each name of the API lives. They are imported on first use (PEP 562), so that importing a
# submodule (`gpcheck.checker.cli.command` for `gpcheck --version`, `gpcheck.checker.cli.pytest_plugin` in every
# pytest run) does not load the parser, the engines and Z3. ReplayReport is lazy for a second
# reason: gpcheck.traces.replay_report imports gpcheck.checker.core.verdict, so an eager import would be
# circular when a program imports traces first.
_WHERE = {
    "ENGINES": "gpcheck.checker.api.model_api", "load": "gpcheck.checker.api.model_api",
    "verify": "gpcheck.checker.api.model_api",
    "check_command": "gpcheck.checker.api.reproduce", "replay_command": "gpcheck.checker.api.reproduce",
    "verify_command": "gpcheck.checker.api.reproduce",
    "check_trace": "gpcheck.checker.api.trace_api", "replay": "gpcheck.checker.api.trace_api",
    "Counterexample": "gpcheck.checker.core.verdict", "Report": "gpcheck.checker.core.verdict",
    "Result": "gpcheck.checker.core.verdict", "Step": "gpcheck.checker.core.verdict", "Verdict": "gpcheck.checker.core.verdict",
    "GpcheckError": "gpcheck.spec.errors", "SpecError": "gpcheck.spec.errors", "UsageError": "gpcheck.spec.errors",
    "bundled_models": "gpcheck.spec.load",
    "ReplayReport": "gpcheck.traces.replay_report",
}

__all__ = [
    "ENGINES", "Counterexample", "GpcheckError", "ReplayReport", "Report", "Result", "SpecError", "Step",
    "UsageError", "Verdict", "bundled_models", "check_command", "check_trace", "load", "replay",
    "replay_command", "verify", "verify_command",
]


# NOTE(public-paths): the module paths the README and docs/api.md show, kept from before the
# layout of issue 34: `import gpcheck.checker.testing` gives the module `gpcheck.checker.api.testing`
# itself (one module object under two names; the pytest11 entry point of an older install names
# `gpcheck.checker.pytest_plugin`). `gpcheck.checker.api` is a package whose names are model_api's.
_PUBLIC_PATHS = {
    "gpcheck.checker.testing": "gpcheck.checker.api.testing",
    "gpcheck.checker.trace_api": "gpcheck.checker.api.trace_api",
    "gpcheck.checker.verdict": "gpcheck.checker.core.verdict",
    "gpcheck.checker.pytest_plugin": "gpcheck.checker.cli.pytest_plugin",
}


class _PublicPath(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old public path as the module it names now (NOTE(public-paths))."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in _PUBLIC_PATHS:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> Any:
        return importlib.import_module(_PUBLIC_PATHS[spec.name])  # its __name__ and __spec__ stay

    def exec_module(self, module: Any) -> None:
        pass


if not any(isinstance(f, _PublicPath) for f in sys.meta_path):
    sys.meta_path.insert(0, _PublicPath())  # before an editable install's finder of another checkout


def __getattr__(name: str) -> Any:
    """A name of the API, imported from its module on first use (and kept)."""
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

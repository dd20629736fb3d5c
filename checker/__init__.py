"""Engines and front ends: explicit search, liveness, Z3 engines, reports, the `gpcheck` command.

The stable Python API (README, "Python API"):

- `load(spec, consts)`: a spec file or bundled model name with constant overrides → `gpcheck.spec.ir.Model`
- `verify(spec, consts, properties, engine, ...)`: run an engine → `Report` of `Result`s
  (`Verdict`, `Counterexample` of `Step`s)
- `replay(trace, model, consts, ...)`: is a trace a behaviour of a model → `ReplayReport`
- `check_trace(trace, properties, ...)`: model-free observation properties of a trace
  → `gpcheck.traces.observe.ObservationReport`
- `verify_command`, `replay_command`, `check_command`: the `gpcheck` command line of a call
- `gpcheck.checker.testing`: `assert_holds`, `assert_violated`, `assert_verdict`, `assert_conforms`,
  `assert_observations` (the pytest plugin, checker/pytest_plugin.py, builds on them)

Bad input raises `GpcheckError` subclasses (`SpecError.render()` gives the located message)."""

from typing import Any

from gpcheck.checker.api import ENGINES, load, verify
from gpcheck.checker.reproduce import check_command, replay_command, verify_command
from gpcheck.checker.trace_api import check_trace, replay
from gpcheck.checker.verdict import Counterexample, Report, Result, Step, Verdict
from gpcheck.spec.errors import GpcheckError, SpecError, UsageError
from gpcheck.spec.load import bundled_models

__all__ = [
    "ENGINES", "Counterexample", "GpcheckError", "ReplayReport", "Report", "Result", "SpecError", "Step",
    "UsageError", "Verdict", "bundled_models", "check_command", "check_trace", "load", "replay",
    "replay_command", "verify", "verify_command",
]


def __getattr__(name: str) -> Any:
    # gpcheck.traces.replay_report imports gpcheck.checker.verdict: importing it eagerly here would be circular
    # when a program imports traces first.
    if name == "ReplayReport":
        from gpcheck.traces.replay_report import ReplayReport

        return ReplayReport
    raise AttributeError(f"module 'checker' has no attribute {name!r}")

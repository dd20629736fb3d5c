"""The Python API: `load`, `verify` (model_api), `replay`, `check_trace` (trace_api), the
assertions of test suites (testing), the command line of a call (reproduce), covers and vacuity
around a run (assumptions), the choice of Z3 engine (smt_dispatch).

May import: the engines, `report`, `core`, `traces`, `gpmodel`, `spec`; never `regression`,
`distributed` or `cli`.

`gpcheck.checker.api` was one module before issue 34 (docs/api.md): its names are model_api's,
imported on first use (`verify` imported from `gpcheck.checker.api` keeps working and loads
nothing until then)."""

from __future__ import annotations

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    """A name of `gpcheck.checker.api.model_api` (NOTE(public-paths) in checker/__init__.py)."""
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(importlib.import_module("gpcheck.checker.api.model_api"), name)

"""The bundled models, each loaded once per test process.

Test modules parametrize over every bundled model when they are imported, and each xdist worker
imports every test module: test_fast_explicit.py, test_compiled_options.py and
test_library_with_plugin.py loaded the 21 models 105 times per worker, about 6 s of each
worker's 22 s of collection. `ir.Model` is immutable (frozen dataclasses), so one instance can
serve every test that reads it."""

from __future__ import annotations

import importlib
from contextlib import contextmanager
from functools import lru_cache, wraps
from typing import Any, Iterator

from gpcheck.checker.core.verdict import Report
from gpcheck.spec import ir, load, load_spec


@lru_cache(maxsize=None)
def bundled_model(name: str) -> ir.Model:
    """`load_spec(name)` at the default constants, once per process."""
    return load_spec(name)


# ------------------------------------------------------------------ one verify per bundled model

# verify()'s keyword defaults: a call with exactly these (and every property) is what `gpcheck verify`
# (the library run), a model page and the testing helpers' explicit runs ask of a bundled model
_DEFAULTS: dict[str, Any] = {"consts": None, "properties": None, "engine": "explicit", "max_states": None,
                             "timeout": None, "depth": None, "progress": None, "core": "auto", "workers": "auto",
                             "fingerprint": False, "symmetry": "auto", "assumption_use": True, "device": "cpu"}
# the modules that bound `verify` by name at import, and call it for a whole bundled model
_CALLERS = ("gpcheck.checker.api.model_api", "gpcheck.checker.regression.library", "gpcheck.checker.api.testing")
_REPORTS: dict[tuple[str, tuple[tuple[str, int], ...]], Report] = {}


def _bundled_key(spec: object) -> tuple[str, tuple[tuple[str, int], ...]] | None:
    """The memo key of a bundled model (by name, or loaded from its bundled file), else None."""
    names = load.bundled_models()
    if isinstance(spec, str) and spec in names:
        spec = bundled_model(spec)
    if isinstance(spec, ir.Model) and spec.file in names:  # a bundled model's file is its name
        return spec.file, tuple(sorted(spec.const_values.items()))
    return None


@contextmanager
def shared_verify() -> Iterator[None]:
    """While active, `verify` of a bundled model instance with every property and the default
    options runs once per process, and later such calls get that report (Reports are not changed
    by their readers). The docs' `gpcheck verify` (the whole library), the README's plugin example
    and a model page ask for the same runs (cwsr's alone is 20 to 40 s of CPU); any other call
    goes to `verify` itself."""
    from gpcheck.checker.api import model_api

    real = model_api.verify

    @wraps(real)
    def verify(spec: Any, *args: Any, **kwargs: Any) -> Report:
        names = list(_DEFAULTS)[:len(args)]
        given = {**dict(zip(names, args)), **kwargs}
        key = _bundled_key(spec) if all(given[k] == _DEFAULTS[k] for k in given) else None
        if key is None:
            return real(spec, *args, **kwargs)
        if key not in _REPORTS:
            _REPORTS[key] = real(spec, *args, **kwargs)
        return _REPORTS[key]

    modules = [importlib.import_module(m) for m in _CALLERS]
    saved = [m.verify for m in modules]  # type: ignore[attr-defined]
    for m in modules:
        m.verify = verify  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for m, f in zip(modules, saved):
            m.verify = f  # type: ignore[attr-defined]


def shared_report(name: str) -> Report:
    """The report shared_verify keeps for the bundled model `name` at its default constants."""
    return _REPORTS[_bundled_key(name)]  # type: ignore[index]

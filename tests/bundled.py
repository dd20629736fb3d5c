"""The bundled models, each loaded once per test process.

Test modules parametrize over every bundled model when they are imported, and each xdist worker
imports every test module: test_fast_explicit.py, test_compiled_options.py and
test_library_with_plugin.py loaded the 21 models 105 times per worker, about 6 s of each
worker's 22 s of collection. `ir.Model` is immutable (frozen dataclasses), so one instance can
serve every test that reads it."""

from __future__ import annotations

import copy
import hashlib
import importlib
import inspect
import os
import pickle
from contextlib import contextmanager
from functools import lru_cache, wraps
from pathlib import Path
from typing import Any, Iterator

from gpcheck.checker.core.verdict import Report
from gpcheck.spec import ir, load, load_spec


@lru_cache(maxsize=None)
def bundled_model(name: str) -> ir.Model:
    """`load_spec(name)` at the default constants, once per process."""
    return load_spec(name)


# ------------------------------------------------------------------ one verify per bundled model

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


def run_folder(factory: Any) -> Path:
    """The folder this test run's processes share (an xdist run's, above each worker's own; one
    process: its own), from pytest's `tmp_path_factory`."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _report_path(folder: Path, key: tuple[str, tuple[tuple[str, int], ...]]) -> Path:
    """Where shared_verify keeps the report of the bundled model instance `key` for the run."""
    return folder / "bundled-verify" / (key[0] + "-" + hashlib.sha256(repr(key).encode()).hexdigest()[:16])


def _load(path: Path) -> Report | None:
    try:
        with open(path, "rb") as f:
            return pickle.load(f)  # noqa: S301 - written by this test run's own processes
    except FileNotFoundError:
        return None


def _store(path: Path, report: Report) -> None:
    """Written whole (a temporary file renamed), so another worker reads all of it or nothing."""
    kept = copy.copy(report)
    kept.__dict__.pop("explored", None)  # the Python search's graph, read only inside verify
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        pickle.dump(kept, f)
    os.replace(tmp, path)


@contextmanager
def shared_verify(folder: Path | None = None) -> Iterator[None]:
    """While active, `verify` of a bundled model instance with every property and the default
    options runs once per process, and later such calls get that report (Reports are not changed
    by their readers). With `folder` (run_folder), once per test run: the report is kept there for
    the other xdist workers, which read it if it is there when they ask (else they run it too).
    The docs' `gpcheck verify` (the whole library), the README's plugin example, a model page,
    test_library_with_plugin.py's expectations and test_models.py's library sample ask for the
    same runs (cwsr's alone is 20 to 40 s of CPU); any other call goes to `verify` itself."""
    from gpcheck.checker.api import model_api

    real = model_api.verify
    # verify()'s own defaults: a call with exactly these (and every property) is what `gpcheck verify`
    # (the library run), a model page and the testing helpers' explicit runs ask of a bundled model
    defaults = {n: q.default for n, q in list(inspect.signature(real).parameters.items())[1:]}
    if folder is not None:
        (folder / "bundled-verify").mkdir(exist_ok=True)

    @wraps(real)
    def verify(spec: Any, *args: Any, **kwargs: Any) -> Report:
        names = list(defaults)[:len(args)]
        given = {**dict(zip(names, args)), **kwargs}
        key = _bundled_key(spec) if all(k in defaults and given[k] == defaults[k] for k in given) else None
        if key is None:
            return real(spec, *args, **kwargs)
        if key not in _REPORTS:
            path = _report_path(folder, key) if folder is not None else None
            report = _load(path) if path is not None else None
            if report is None:
                report = real(spec, *args, **kwargs)
                if path is not None:
                    _store(path, report)
            _REPORTS[key] = report
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


def finished_report(name: str, folder: Path | None = None) -> Report | None:
    """The report shared_verify keeps for the bundled model `name` at its default constants when
    this process, or (with `folder`, run_folder) another worker of this test run, has made it
    already; else None, and nothing runs: for a test that reads verdicts only and has a cheaper
    run of its own for when the shared one is not there (yet)."""
    key = _bundled_key(name)
    if key is None:
        return None
    if key in _REPORTS:
        return _REPORTS[key]
    if folder is None:
        return None
    report = _load(_report_path(folder, key))
    if report is not None:
        _REPORTS[key] = report
    return report

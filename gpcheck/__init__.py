"""gpcheck: formal models and trace checking for GPU preemption.

One import package: `gpcheck.spec` (text -> AST -> typed IR), `gpcheck.gpmodel`
(IR -> successor functions), `gpcheck.checker` (engines, reports, the command),
`gpcheck.traces` (trace formats, importers, replay). The stable Python API is
`gpcheck.checker`'s, also reachable from here: `from gpcheck import verify, Verdict`.

In a source checkout the four folders sit beside this one (pyproject.toml maps them into the
package at build time); the checkout's root is then added to this package's `__path__` so that
`gpcheck.spec` resolves to `spec/` there as well. An installed wheel holds `gpcheck/spec/`
itself and never needs it."""

from __future__ import annotations

import os as _os

TYPE_CHECKING = False  # not `typing`'s: importing typing takes milliseconds before `gpcheck`'s quiet Ctrl-C is on
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0"


def _checkout_root() -> str | None:
    here = _os.path.dirname(_os.path.abspath(__file__))
    if _os.path.isdir(_os.path.join(here, "spec")):
        return None  # installed: the subpackages are inside this folder
    root = _os.path.dirname(here)
    markers = (_os.path.join(root, "spec", "grammar.lark"), _os.path.join(root, "checker", "cli", "command.py"),
               _os.path.join(root, "pyproject.toml"))
    return root if all(_os.path.isfile(m) for m in markers) else None


def _stop_before_work(signum: int, frame: object) -> None:
    try:
        _os.write(2, b"gpcheck: interrupted before any work\n")
    except OSError:
        pass
    _os._exit(128 + signum)


def _install_quiet_stop() -> None:
    """SIGINT/SIGTERM end the process quietly (exit 128 + the signal, no traceback) until
    `checker/core/budget.py` installs the real handlers once a command runs (gpcheck/__main__.py)."""
    import _signal  # the built-in C module: `signal` would import enum first

    for s in (_signal.SIGINT, _signal.SIGTERM):
        _signal.signal(s, _stop_before_work)


def _run_as_the_command() -> bool:
    """Whether this process is the `gpcheck` command (`python -m gpcheck`, the console script),
    which imports this package before gpcheck/__main__.py runs a line: a Ctrl-C during the imports
    below was a traceback (tests/unit/test_fail_safe.py). A program that imports gpcheck keeps
    its own handlers."""
    import sys

    argv = getattr(sys, "orig_argv", [])
    k = 1
    while k < len(argv) and argv[k].startswith("-"):  # the interpreter's options, up to -m MODULE
        if argv[k].startswith("-m"):
            return argv[k] == "-mgpcheck" or (argv[k] == "-m" and argv[k + 1:k + 2] == ["gpcheck"])
        k += 2 if argv[k] in ("-X", "-W") else 1
    return bool(sys.argv) and _os.path.basename(sys.argv[0]) == "gpcheck"


if _run_as_the_command():
    _install_quiet_stop()

_root = _checkout_root()
if _root is not None and _root not in __path__:
    __path__.append(_root)

# gpcheck.checker's API names, imported on first use (below); gpcheck.checker itself is cheap to
# import (it too imports each name on first use).
from gpcheck.checker import __all__ as _api_names  # noqa: E402 - needs the __path__ set above

__all__ = list(_api_names)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def __getattr__(name: str) -> Any:
    """`gpcheck.verify`, `gpcheck.Verdict`, ...: the names of `gpcheck.checker`'s API, imported
    on first use so that `import gpcheck` (and `python -m gpcheck --version`) stays cheap."""
    import importlib

    api = importlib.import_module("gpcheck.checker")
    if name in getattr(api, "__all__", ()):
        return getattr(api, name)
    raise AttributeError(f"module 'gpcheck' has no attribute {name!r}")

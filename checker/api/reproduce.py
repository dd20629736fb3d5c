"""The `gpcheck` command line that reproduces a Python API call.

Why: a failed test assertion (checker/api/testing.py) must say how to see the same result outside
pytest, where the rich report, `--json` and `--itf` are at hand. The commands built here are the
CLI's own flags (checker/cli/commands/verify.py, checker/cli/commands/replay.py), quoted for a POSIX
shell, with paths written relative to the current directory when they lie under it."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Iterable, Mapping

from gpcheck.spec import ir
from gpcheck.spec.load import bundled_models


def spec_argument(spec: str | Path | ir.Model) -> str | None:
    """How to name `spec` on the command line: a bundled model's name, a file path, or None for
    a model that was not loaded from a file (`load_source` text)."""
    if isinstance(spec, ir.Model):
        if spec.file in bundled_models():
            return spec.file
        return _path_text(spec.file) if Path(spec.file).is_file() else None
    if Path(spec).exists():
        return _path_text(str(spec))
    return str(spec)


def _path_text(path: str) -> str:
    p = Path(path).resolve()
    try:
        return os.path.relpath(p) if p.is_relative_to(Path.cwd()) else str(p)
    except ValueError:  # another drive (Windows)
        return str(p)


def _const_flags(spec: str | Path | ir.Model, consts: Mapping[str, int] | None) -> list[str]:
    # An already loaded model carries every constant resolved: pin them all, since its defaults
    # may have been overridden when it was loaded.
    values = dict(spec.const_values) if isinstance(spec, ir.Model) else dict(consts or {})
    out: list[str] = []
    for name, value in values.items():
        out += ["--const", f"{name}={int(value)}"]
    return out


def _render(argv: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in argv)


def verify_command(
    spec: str | Path | ir.Model,
    prop: str | None = None,
    engine: str = "explicit",
    consts: Mapping[str, int] | None = None,
    *,
    max_states: int | None = None,
    timeout: float | None = None,
    depth: int | None = None,
) -> str | None:
    """`gpcheck verify SPEC --const N=8 --property P --engine E [...]`, or None when `spec`
    has no file to name."""
    name = spec_argument(spec)
    if name is None:
        return None
    argv = ["gpcheck", "verify", name, *_const_flags(spec, consts)]
    if prop is not None:
        argv += ["--property", prop]
    argv += ["--engine", engine]
    if max_states is not None:
        argv += ["--max-states", str(max_states)]
    if timeout is not None:
        argv += ["--timeout", f"{timeout:g}"]
    if depth is not None:
        argv += ["--depth", str(depth)]
    return _render(argv)


def replay_command(
    trace: str | Path | None,
    spec: str | Path | ir.Model | None,
    consts: Mapping[str, int] | None = None,
    *,
    max_hidden: int | None = None,
    max_candidates: int | None = None,
    format: str | None = None,
    fmt: str | None = None,  # deprecated spelling of format
) -> str | None:
    """`gpcheck replay TRACE --model SPEC --const ... [...]`, or None when the trace or the
    model is not a file (events or a model held in memory)."""
    if trace is None:
        return None
    argv = ["gpcheck", "replay", _path_text(str(trace))]
    if spec is not None:
        name = spec_argument(spec)
        if name is None:
            return None
        argv += ["--model", name]
        argv += _const_flags(spec, consts)
    else:
        argv += _const_flags("", consts)
    if max_hidden is not None:
        argv += ["--max-hidden", str(max_hidden)]
    if max_candidates is not None:
        argv += ["--max-candidates", str(max_candidates)]
    if fmt is not None:
        import warnings

        warnings.warn("replay_command(fmt=...) is deprecated: use format= (as replay() does)", DeprecationWarning,
                      stacklevel=2)
        format = format or fmt
    if format is not None:
        argv += ["--format", format]
    return _render(argv)


def check_command(
    trace: str | Path | None,
    properties: Iterable[str] | None = None,
    *,
    max_inversion_ns: int | None = None,
    max_gap_ns: int | None = None,
    gap_threshold_ns: int | None = None,
    max_delay_ns: int | None = None,
    max_blocking_ns: int | None = None,
) -> str | None:
    """`gpcheck check TRACE [--property P]... [--max-inversion NS] ...` (the observation
    check), or None for events held in memory."""
    if trace is None:
        return None
    argv = ["gpcheck", "check", _path_text(str(trace))]
    for p in properties or ():
        argv += ["--property", p]
    for flag, value in (("--max-inversion", max_inversion_ns), ("--max-gap", max_gap_ns),
                        ("--gap-threshold", gap_threshold_ns), ("--max-delay", max_delay_ns),
                        ("--max-blocking", max_blocking_ns)):
        if value is not None:
            argv += [flag, str(value)]
    return _render(argv)

"""The user's cache directory for what gpcheck derives and can rebuild at any time: the
generated numba modules and their machine code (gpmodel/jit.py) and the parse tables of the
spec grammar (spec/parser.py). Lives here, at the bottom of the layers, so that the front end
can use it without importing the engines. Nothing in it is ever required: a missing, stale or
unwritable entry only costs the time to build it again."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def cache_dir() -> Path:
    """$GPCHECK_CACHE_DIR, else $XDG_CACHE_HOME/gpcheck/jit, else ~/.cache/gpcheck/jit; a
    temporary directory if none of them can be written."""
    env = os.environ.get("GPCHECK_CACHE_DIR")
    if env:
        base = Path(env)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "gpcheck" / "jit"
    try:
        base.mkdir(parents=True, exist_ok=True)
        probe = base / ".write-probe"
        probe.write_text("")
        probe.unlink()
        return base
    except OSError:
        fallback = Path(tempfile.gettempdir()) / f"gpcheck-jit-{os.getuid() if hasattr(os, 'getuid') else 0}"
        fallback.mkdir(parents=True, exist_ok=True)
        return fallback

"""How wide text output is, and its last clean-up: every table and report is sized to the
terminal (or `--width N`, or `$COLUMNS`), and no printed line ends in spaces.

The width is one setting of the running command (like checker/core/budget.py's limits): `cli.main`
sets it from `--width`; the renderers ask `width()` when they are not given one."""

from __future__ import annotations

import os
import shutil
import sys

DEFAULT_WIDTH = 100  # output that is not a terminal (a pipe, a file) and no $COLUMNS
MIN_WIDTH = 40

_width: int | None = None  # --width of the running command


def set_width(columns: int | None) -> None:
    """The running command's `--width` (None: decide from the terminal)."""
    global _width
    _width = columns


def width(fallback: int = DEFAULT_WIDTH) -> int:
    """--width, else $COLUMNS, else the terminal's columns when stdout is one, else `fallback`
    (100; wide matrices ask for more)."""
    if _width is not None:
        return max(MIN_WIDTH, _width)
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return max(MIN_WIDTH, int(env))
    try:
        if sys.stdout.isatty():
            return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)
    except (AttributeError, ValueError, OSError):
        pass
    return fallback


def strip_lines(text: str) -> str:
    """The text with the spaces at the end of every line removed (rich pads table cells)."""
    if " \n" not in text and not text.endswith(" "):
        return text
    return "\n".join(line.rstrip() for line in text.split("\n"))

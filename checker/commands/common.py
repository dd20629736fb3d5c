"""Flags and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
import sys

from gpcheck.checker import progress as meter
from gpcheck.checker.textout import strip_lines
from gpcheck.spec import parse_const_overrides


def add_const_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--const", action="append", default=[], metavar="NAME=VALUE",
                   help="override a constant (repeatable)")


def consts_of(args: argparse.Namespace) -> dict[str, int]:
    return parse_const_overrides(list(args.const))


_written = False  # this command printed its report on stdout (cli.main resets it)


def wrote_report() -> bool:
    """Whether `write_out` printed something since `reset_report()`: a stop after the report
    was printed must not add a second JSON document to stdout."""
    return _written


def reset_report() -> None:
    global _written
    _written = False


def write_out(data: bytes | str) -> None:
    global _written
    _written = True
    meter.clear()  # the progress line is erased before the report (they share the terminal)
    if isinstance(data, bytes):
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.write(b"\n")
    else:
        sys.stdout.write(strip_lines(data))  # no trailing spaces on any line (checker/textout.py)
    sys.stdout.flush()


class Progress:
    """The explicit search's progress callback, kept for the commands that pass one: it feeds
    checker/progress.py's meter, which `cli.main` shows on stderr (a redrawn line on a terminal,
    a line every 10 s otherwise; `--no-progress` turns it off)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, states: int, depth: int, frontier: int, seconds: float) -> None:
        if self.enabled:
            meter.note(states=states, depth=depth, frontier=frontier)

    def close(self) -> None:
        pass

"""Flags and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
import sys
import time

from checker.textout import strip_lines
from spec import parse_const_overrides


def add_const_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--const", action="append", default=[], metavar="NAME=VALUE",
                   help="override a constant (repeatable)")


def consts_of(args: argparse.Namespace) -> dict[str, int]:
    return parse_const_overrides(list(args.const))


def write_out(data: bytes | str) -> None:
    if isinstance(data, bytes):
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.write(b"\n")
    else:
        sys.stdout.write(strip_lines(data))  # no trailing spaces on any line (checker/textout.py)
    sys.stdout.flush()


class Progress:
    """A one-line progress display on stderr for long searches (only on a terminal, after 1 s)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled and sys.stderr.isatty()
        self.shown = False
        self.last = 0.0

    def __call__(self, states: int, depth: int, frontier: int, seconds: float) -> None:
        if not self.enabled or seconds < 1.0 or time.monotonic() - self.last < 0.25:
            return
        self.last = time.monotonic()
        rate = states / seconds if seconds else 0
        sys.stderr.write(f"\r  {states:,} states  depth {depth}  frontier {frontier:,}  {rate:,.0f} states/s   ")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r" + " " * 78 + "\r")
            sys.stderr.flush()

"""Flags and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
import sys

from gpcheck.checker.core import progress as meter
from gpcheck.checker.report.textout import strip_lines
from gpcheck.spec.errors import OutputError


def add_const_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--const", action="append", default=[], metavar="NAME=VALUE",
                   help="override a constant (repeatable)")


def consts_of(args: argparse.Namespace) -> dict[str, int]:
    from gpcheck.spec import parse_const_overrides  # the spec loader only when a command runs

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
    """Print the report on standard output. A standard output that cannot take it (a full disk,
    /dev/full, a closed descriptor) is `OutputError` (exit 2), never a traceback or the exit code
    of a verdict; a reader that went away (`| head`) is BrokenPipeError, which cli.main ends
    quietly."""
    global _written
    _written = True
    meter.clear()  # the progress line is erased before the report (they share the terminal)
    try:
        if isinstance(data, bytes):
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.write(b"\n")
        else:
            sys.stdout.write(strip_lines(data))  # no trailing spaces on any line (checker/report/textout.py)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError, AttributeError) as e:  # ValueError: closed; AttributeError: None
        raise StdoutError(stdout_failure(e)) from None


class StdoutError(OutputError):
    """Standard output cannot take the report (cli.main: exit 2, and nothing more sent there)."""


def stdout_failure(e: BaseException | None) -> str:
    """The message for a standard output that cannot be written."""
    if e is None:
        return "cannot write to standard output"
    why = e.strerror if isinstance(e, OSError) and e.strerror else "it is closed"
    return f"cannot write the report to standard output: {why}"


class Progress:
    """The explicit search's progress callback, kept for the commands that pass one: it feeds
    checker/core/progress.py's meter, which `cli.main` shows on stderr (a redrawn line on a terminal,
    a line every 10 s otherwise; `--no-progress` turns it off)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, states: int, depth: int, frontier: int, seconds: float) -> None:
        if self.enabled:
            meter.note(states=states, depth=depth, frontier=frontier)

    def close(self) -> None:
        pass

"""argparse `type=` validators shared by every subcommand: a bad number is a usage error
(exit 2) before any work, never a negative bound or a NaN deadline that an engine misreads.

Numbers must be written in ASCII as the user typed them: Python's `int()` and `float()` also
accept other scripts' digits (`int("٣") == 3`), underscores and surrounding spaces, and
`float()` accepts `nan` and `inf`; none of that is a sensible flag value."""

from __future__ import annotations

import argparse
import math
import re
from typing import Callable

_INT = re.compile(r"[+-]?[0-9]+\Z")
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")
_SIZE = re.compile(r"([0-9]+\.?[0-9]*|\.[0-9]+)\s*([KMGT]?)(i?B?)\Z", re.IGNORECASE)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
MAX_DIGITS = 30  # no flag needs a longer integer; keeps int() far from its digit limit


def ascii_int(text: str, what: str = "an integer") -> int:
    """`text` as an int if it is a plain ASCII decimal integer, else ArgumentTypeError."""
    if not _INT.match(text) or len(text) > MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what} (ASCII digits, e.g. 8)")
    return int(text)


def int_at_least(low: int) -> Callable[[str], int]:
    """A validator for an integer flag whose value must be >= `low`."""

    def parse(text: str) -> int:
        what = "a non-negative integer" if low == 0 else f"an integer >= {low}"
        n = ascii_int(text, what)
        if n < low:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
        return n

    parse.__name__ = "non-negative integer" if low == 0 else f"integer >= {low}"
    return parse


def any_int(text: str) -> int:
    return ascii_int(text)


any_int.__name__ = "integer"
count = int_at_least(1)
non_negative = int_at_least(0)


def seconds(text: str) -> float:
    """A positive, finite number of seconds."""
    if not _FLOAT.match(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds (e.g. 30 or 0.5)")
    value = float(text)
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the time limit must be a positive number of seconds")
    return value


seconds.__name__ = "seconds"


def memory_size(text: str) -> int:
    """Bytes, from e.g. `4G`, `512M`, `1.5GiB`, `800000000` (K, M, G, T are powers of 1024)."""
    m = _SIZE.match(text.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not a memory size (e.g. 4G, 512M or a number of bytes)")
    value = float(m.group(1)) * _UNITS[m.group(2).upper()]
    if not math.isfinite(value) or value < 1 << 20:
        raise argparse.ArgumentTypeError(f"{text!r}: the memory limit must be at least 1M")
    return int(value)


memory_size.__name__ = "memory size"


def add_timeout_flag(p: argparse.ArgumentParser, what: str = "the command") -> None:
    p.add_argument("--timeout", type=seconds, default=None, metavar="SECONDS",
                   help=f"stop {what} after this long (the result is then unknown, exit 3)")


def add_memory_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-memory", type=memory_size, default=None, metavar="SIZE",
                   help="stop when the process's resident memory passes SIZE (e.g. 4G; the result is "
                        "then unknown, exit 3; default: half the machine's memory)")

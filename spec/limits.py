"""Size limits of a model instance, checked by the parser and the type checker so that a hostile
or mistaken spec is refused with its size and location instead of being discovered by the
memory allocator, the recursion limit or a search that never ends.

Why these numbers: each is far above what a model of a preemption mechanism needs (the bundled
models use single-digit constants and arrays of at most a few dozen slots) and far below what
breaks a stage downstream: Python's compiler refuses generated code nested past 100 indentation
levels or 200 parentheses (gpmodel/compile.py), the explicit engine stores every state as a
tuple of slots, initial states and action instances are enumerated, and `for`/folds are
unrolled by the Z3 encoding.

| limit | what it bounds |
|---|---|
| MAX_SOURCE_CHARS | length of a spec (the parser reads about 100,000 tokens a second) |
| MAX_NESTING | depth of the syntax tree: nested expressions, statements and types |
| MAX_INT | magnitude of an integer literal and of every constant (literals, overrides, trace headers) |
| MAX_DOMAIN | values of an enumerated domain: an array index, a parameter, a `for`/fold binder, an `any` value |
| MAX_SLOTS | slots of the state layout, over all variables (NOTE(slots) in ir.py) |
| MAX_INITIAL_STATES | initial states (the product of the domains of `any` initial values) |
| MAX_INSTANCES | instances of one action (the product of its parameters' domains) |
| MAX_UNROLL | iterations of nested `for` loops and folds (the product of their domains) |
"""

from __future__ import annotations

MAX_SOURCE_CHARS = 512 * 1024
MAX_NESTING = 100
MAX_INT = 2**62
MAX_DOMAIN = 4096
MAX_SLOTS = 16384
MAX_INITIAL_STATES = 1 << 20
MAX_INSTANCES = 1 << 16
MAX_UNROLL = 1 << 16


def normalize_newlines(text: str) -> str:
    """CRLF and CR-only line ends as LF, so that every position is the same whichever a file uses."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def source_lines(text: str) -> list[str]:
    """The lines of a (newline-normalized) source exactly as the parser counts them: only LF
    ends a line (str.splitlines would also split at form feeds, U+2028 and others)."""
    return text.split("\n")

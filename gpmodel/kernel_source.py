"""The source text of a kernel function, for the generated numba modules (gpmodel/jit.py).

`inspect.getsource` tokenizes the whole file to find where a function ends: 30-60 ms per
process for the kernels every model module includes. The kernels are top-level functions
without decorators, so their text runs from the `def` line to the last line before the next
statement at column 0, less trailing blank and comment lines; that is what getsource returns
for them (tests/unit/test_native_kernels.py compares the two for every kernel)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=None)
def _lines(filename: str) -> tuple[str, ...]:
    with open(filename, encoding="utf-8") as f:
        return tuple(f.read().splitlines(keepends=True))


def kernel_source(fn: Any) -> str:
    """The text of the top-level, undecorated function `fn`, as inspect.getsource gives it."""
    code = fn.__code__
    lines = _lines(code.co_filename)
    start = code.co_firstlineno - 1
    if not lines[start].startswith("def "):
        raise ValueError(f"{fn.__name__} is not an undecorated top-level function")
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t#"):
        end += 1
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
        end -= 1
    return "".join(lines[start:end])

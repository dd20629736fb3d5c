"""How kernels and priorities read in text output: demangled C++ kernel names shortened, stream
priorities in the convention of the trace's source.

Why: a PyTorch kernel's demangled name runs to hundreds of characters of template arguments and
parameter types (`void at::native::vectorized_elementwise_kernel<8, at::native::...>(int, ...)`),
which buries the report; and importers store an *urgency level* (larger = more urgent, NOTE(
observation-events) in traces/importers/common.py) while a CUDA user thinks in stream priorities
(lower = more urgent: -5 is the greatest on Hopper). JSON output keeps the whole name and both
numbers; only text uses these.
"""

from __future__ import annotations

from typing import Any

from gpcheck.traces.format import TraceHeader

CUDA_SOURCES = ("nsys", "kineto", "chrome", "cupti", "record")  # importers whose priorities are CUDA's
MAX_NAME = 60


def short_kernel_name(name: str, limit: int = MAX_NAME) -> str:
    """`void ns::kernel<A, B>(int, float*)` -> `ns::kernel<…>`; names past `limit` characters end in `…`."""
    s = name.strip()
    if s.startswith("void "):
        s = s[5:]
    s = s.replace("(anonymous namespace)::", "")
    # drop the parameter list: the last top-level (...) group
    depth = 0
    cut = None
    for i, ch in enumerate(s):
        if ch in "<(":
            if ch == "(" and depth == 0 and i > 0:
                cut = i
                break
            depth += 1
        elif ch in ">)":
            depth = max(depth - 1, 0)
    if cut is not None:
        s = s[:cut]
    # collapse template arguments
    out: list[str] = []
    depth = 0
    for ch in s:
        if ch == "<":
            if depth == 0:
                out.append("<…>")
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(ch)
    s = "".join(out).strip() or name
    return s if len(s) <= limit else s[: limit - 1] + "…"


class PriorityNames:
    """Maps (stream, urgency level) to the priority the source wrote (see module doc)."""

    def __init__(self, header: TraceHeader):
        src = header.extra.get("source")
        src = src if isinstance(src, dict) else {}
        self.cuda = src.get("format") in CUDA_SOURCES
        self.by_stream: dict[Any, int] = {}
        for s in src.get("streams") or []:
            if isinstance(s, dict) and isinstance(s.get("cuda_priority"), int):
                self.by_stream[s.get("stream")] = s["cuda_priority"]

    def source(self, stream: Any, level: int | None) -> int | None:
        """The priority as the source wrote it: CUDA's for CUDA sources, else the level itself."""
        if stream in self.by_stream:
            return self.by_stream[stream]
        if level is None:
            return None
        return -level if self.cuda and level else level

    def label(self, stream: Any, level: int | None) -> str:
        p = self.source(stream, level)
        if p is None:
            return "no priority"
        return f"CUDA priority {p}" if self.cuda else f"priority {p}"

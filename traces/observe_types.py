"""The observation check's vocabulary: its options, a launch as the trace shows it, one
property's result and its status words. Below observe.py and the property modules it runs
(latency.py, preconditions.py), which all use them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpcheck.traces.observe import _Collected

OK, VIOLATED, INFO, UNKNOWN = "ok", "violated", "info", "unknown"


@dataclass(frozen=True)
class ObserveOptions:
    max_inversion_ns: int | None = None
    gap_threshold_ns: int = 500_000
    max_gap_ns: int | None = None
    overlap_tolerance_ns: int = 0
    max_delay_ns: int | None = None     # launch_delay (traces/latency.py)
    max_blocking_ns: int | None = None  # blocking (traces/latency.py)


@dataclass
class Launch:
    """Everything observed about one launch (one correlation id of one process)."""

    key: tuple[Any, ...]
    stream: int | None = None
    priority: int | None = None
    launch: tuple[int | None, int] | None = None          # (t, line)
    starts: list[tuple[int | None, int]] = field(default_factory=list)
    ends: list[tuple[int | None, int]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.meta.get("name", "?"))

    def label(self) -> str:
        corr = self.key[-1]
        return f"{self.name} (corr {corr}{', pid ' + str(self.key[0]) if self.key[0] is not None else ''})"

    @property
    def t_launch(self) -> int | None:
        return self.launch[0] if self.launch else None

    @property
    def t_start(self) -> int | None:
        return self.starts[0][0] if self.starts else None

    @property
    def t_end(self) -> int | None:
        return self.ends[0][0] if self.ends else None


@dataclass
class PropertyResult:
    name: str
    status: str
    summary: str
    findings: list[dict[str, Any]] = field(default_factory=list)
    count: int = 0
    worst: dict[str, Any] | None = None
    stats: dict[str, Any] | None = None  # distributions per stream and priority level (traces/latency.py)
    missing: list[dict[str, Any]] | None = None  # unknown: what the trace lacks, and what would supply it

    def to_json(self) -> dict[str, Any]:
        out = {"property": self.name, "status": self.status, "summary": self.summary, "count": self.count,
               "worst": self.worst, "findings": self.findings}
        if self.stats is not None:
            out["stats"] = self.stats
        if self.missing:
            out["missing"] = self.missing
            out["remedy"] = "; ".join(str(m.get("remedy")) for m in self.missing if m.get("remedy"))
        return out


def _by_stream(c: _Collected) -> dict[int, list[Launch]]:
    out: dict[int, list[Launch]] = {}
    for key in c.order:
        L = c.launches[key]
        if L.stream is not None:
            out.setdefault(L.stream, []).append(L)
    return out

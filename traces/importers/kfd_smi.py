"""KFD SMI queue eviction/restore events -> `queue_evict` / `queue_restore` trace events, merged
in time order with a kernel trace of the same run (rocprofv3's kernel trace, traces/importers/
rocprof.py): the AMD pair of inputs `spec/models/cwsr.map.toml` and `kfd_sched.map.toml` map onto
the models (docs/event-mapping.md, "AMD").

The lines are the kernel's own (drivers/gpu/drm/amd/amdkfd/kfd_smi_events.c, formats in
include/uapi/linux/kfd_ioctl.h): the event id in hex, then `KFD_EVENT_FMT_QUEUE_EVICTION`
(`%lld -%d %x %d`: boot-time ns, pid, node id, trigger) or `KFD_EVENT_FMT_QUEUE_RESTORE`
(`%lld -%d %x %c`: the same and `R` when the restore was rescheduled). Both clocks are
`ktime_get_boottime_ns`, the clock rocprofv3 stamps kernels with. Other SMI events (faults,
migrations, resets, thermal) are skipped and counted."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import Event

QUEUE_EVICTION = 9  # enum kfd_smi_event: KFD_SMI_EVENT_QUEUE_EVICTION
QUEUE_RESTORE = 10  # KFD_SMI_EVENT_QUEUE_RESTORE
_LINE = re.compile(r"^\s*([0-9a-fA-F]+)\s+(\d+)\s+-(\d+)\s+([0-9a-fA-F]+)(?:\s+(\S+))?\s*$")


@dataclass(frozen=True)
class SmiEvents:
    events: tuple[Event, ...]
    skipped: int  # SMI events of other kinds


def read_smi(path: str) -> SmiEvents:
    """The queue eviction/restore events of an SMI event log; TraceError `file:line` on a line
    that is not one."""
    try:
        with open(path, encoding="utf-8", errors="strict") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise TraceError(f"{path}: cannot read the KFD SMI events: {e}") from None
    out: list[Event] = []
    skipped = 0
    for n, raw in enumerate(lines, 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        head = raw.split(None, 1)[0]
        try:
            kind = int(head, 16)
        except ValueError:
            raise TraceError(f"{path}:{n}: not a KFD SMI event line (it starts with the event id in hex): {raw[:80]!r}") from None
        if kind not in (QUEUE_EVICTION, QUEUE_RESTORE):
            skipped += 1
            continue
        m = _LINE.match(raw)
        if m is None:
            what = "eviction (id ns -pid node trigger)" if kind == QUEUE_EVICTION else "restore (id ns -pid node [R])"
            raise TraceError(f"{path}:{n}: a queue {what} line is expected: {raw[:80]!r}")
        meta: dict[str, object] = {"pid": int(m.group(3)), "node": int(m.group(4), 16), "smi_line": n}
        if kind == QUEUE_EVICTION:
            if m.group(5) is None or not m.group(5).lstrip("-").isdigit():
                raise TraceError(f"{path}:{n}: a queue eviction needs its trigger (an integer): {raw[:80]!r}")
            meta["trigger"] = int(m.group(5))
        else:
            meta["rescheduled"] = m.group(5) == "R"
        out.append(Event("queue_evict" if kind == QUEUE_EVICTION else "queue_restore", {}, None, int(m.group(2)), meta))
    return SmiEvents(tuple(out), skipped)


def merge(kernels: Iterable[Event], smi: Iterable[Event]) -> list[Event]:
    """Both event lists in time order (stable: at equal times the kernel trace's event first)."""
    tagged = [(e.t if e.t is not None else 0, 0, i, e) for i, e in enumerate(kernels)]
    tagged += [(e.t if e.t is not None else 0, 1, i, e) for i, e in enumerate(smi)]
    tagged.sort(key=lambda x: (x[0], x[1], x[2]))
    return [e for *_, e in tagged]

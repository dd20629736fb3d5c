"""What the engines tell the progress meter (checker/core/progress.py), without waiting for its
clock: test_good_citizen.py's progress-line test runs real commands into their --timeout and is
`slow`; this one records the engines' notes and formats them as the meter does."""

from __future__ import annotations

import pytest

from gpcheck.checker.core import progress
from gpcheck.checker import verify

COUNTER = """model counter
const N = 6
var x: 0..N = 0
var y: 0..1 = 0
action inc { require x < N  x = x + 1 }
action flip { y = 1 - y }
invariant bounded: x <= N
invariant small: x < 5
allow deadlock
"""


@pytest.mark.parametrize("engine, field", [("explicit", "states"), ("kind", "bound"), ("bmc", "bound")])
def test_each_engine_notes_its_numbers_and_the_meter_formats_them(tmp_path, monkeypatch, engine, field):
    spec = tmp_path / "counter.gpspec"
    spec.write_text(COUNTER)
    notes: list[dict[str, object]] = []
    note = progress.note

    def record(**kw: object) -> None:
        notes.append(kw)
        note(**kw)  # type: ignore[arg-type]

    monkeypatch.setattr(progress, "note", record)
    with progress.reporting(enabled=False):
        if engine == "explicit":  # the search notes every 4,096 states: 2 x 6,001 of them
            verify(spec, consts={"N": 6000}, properties=["bounded"], core="python")
        else:
            verify(spec, engine=engine, depth=8)
        status = progress.current()
    assert any(n.get(field) is not None for n in notes), notes
    assert status is not None and getattr(status, field) is not None
    line = progress.describe(status, memory=80 << 20)
    assert line.startswith(engine) and "memory 80" in line
    assert ("states/s" in line) if engine == "explicit" else (f"bound {status.bound}" in line)

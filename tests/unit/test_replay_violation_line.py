"""The line a replay names for a property violated on every reconstructed behaviour
(NOTE(replay-violation-line) in checker/engines/replay/search.py): the first line from which no
behaviour explains the trace without the violation, with `earliest_line` where some behaviour that
explains the trace up to there first has it (a hidden step may be placed early)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpcheck.checker.cli.command import main

SPEC = """model slip
var bad: bool = false
var n: 0..5 = 0
internal action slip { require not bad  bad = true }
action tick { require n < 5  n = n + 1 }
action show { require bad }
invariant ok: not bad
"""


def _run(tmp: Path, capsys: pytest.CaptureFixture[str], events: list[str], *extra: str) -> dict:
    spec = tmp / "slip.gpspec"
    spec.write_text(SPEC)
    trace = tmp / "t.jsonl"
    trace.write_text('{"gpcheck_trace": 1, "model": "slip"}\n' + "".join(f'{{"action":"{e}","args":{{}}}}\n' for e in events))
    main(["replay", str(trace), "--model", str(spec), "--json", "--no-progress", *extra])
    return next(r for r in json.loads(capsys.readouterr().out)["results"] if r["property"] == "ok")


def test_the_line_is_where_the_violation_becomes_unavoidable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the hidden slip may happen before the first tick (line 2), but only `show` (line 4) needs it
    r = _run(tmp_path, capsys, ["tick", "tick", "show"], "--max-hidden", "1")
    assert r["verdict"] == "violated"
    assert r["detail"]["line"] == 4 and r["detail"]["earliest_line"] == 2


def test_a_violation_some_behaviour_avoids_stays_unknown_with_its_earliest_line(tmp_path: Path,
                                                                                capsys: pytest.CaptureFixture[str]) -> None:
    r = _run(tmp_path, capsys, ["tick", "tick"], "--max-hidden", "1")
    assert r["verdict"] == "unknown" and r["detail"]["line"] == 2 and "earliest_line" not in r["detail"]

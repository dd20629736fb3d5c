"""Progress of long replays (traces/progress.py): plain lines every few seconds when stderr is not
a terminal, nothing for a short replay, and the replay loop reports events and candidates."""

from __future__ import annotations

import io

from gpcheck.gpmodel import compile_model
from gpcheck.spec import load_source
from gpcheck.traces.format import Event, TraceHeader
from gpcheck.traces.progress import ReplayProgress, count_events
from gpcheck.checker.engines.replay.search import ReplayOptions, Replayer, memory_source


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_plain_lines_every_interval_after_the_delay() -> None:
    out, clock = io.StringIO(), Clock()
    p = ReplayProgress(total=1000, stream=out, interval=3.0, delay=2.0, live=False, clock=clock)
    p(100, 5, 9)
    assert out.getvalue() == ""  # within the delay: a short replay prints nothing
    clock.t = 2.5
    p(500, 7, 9)
    clock.t = 3.0
    p(600, 7, 9)  # within the interval
    clock.t = 6.0
    p(900, 3, 12)
    lines = out.getvalue().splitlines()
    assert lines == ["replay: 500/1000 events (50%), 200 events/s, 7 candidate state(s), peak 9",
                     "replay: 900/1000 events (90%), 150 events/s, 3 candidate state(s), peak 12"]
    p.close()


def test_the_replay_loop_reports_progress() -> None:
    cm = compile_model(load_source("""model c "a counter"
var n: 0..1000 = 0
action tick { require n < 1000
  n = n + 1 }
""", "c.gpspec"))
    seen: list[tuple[int, int, int]] = []
    opts = ReplayOptions(progress=lambda e, c, p: seen.append((e, c, p)))
    rep = Replayer(cm, opts).replay(memory_source(TraceHeader(), [Event("tick", {})] * 600), "t")
    assert rep.conforms and seen == [(256, 1, 1), (512, 1, 1)]


def test_count_events(tmp_path) -> None:
    f = tmp_path / "t.jsonl"
    f.write_text('{"gpcheck_trace": 1}\n{"action": "a"}\n\n{"action": "b"}\n')
    assert count_events(str(f)) == 2
    assert count_events(str(tmp_path / "missing.jsonl")) is None


def test_a_live_bar_on_a_terminal() -> None:
    """On a terminal (a pseudo-terminal here) the progress is a live bar that redraws in place:
    events done of the total, events/s, candidates now and at the peak; it is removed at the end."""
    import os
    import select

    pty = __import__("pytest").importorskip("pty")
    master, slave = pty.openpty()
    term = os.fdopen(slave, "w")
    try:
        clock = Clock()
        p = ReplayProgress(total=1000, stream=term, clock=clock)
        assert p.live
        clock.t = 2.5
        p(500, 7, 9)
        clock.t = 3.0
        p(800, 3, 12)
        p.close()
        term.flush()
        data = b""
        while select.select([master], [], [], 0.5)[0]:
            chunk = os.read(master, 1 << 16)
            if not chunk:
                break
            data += chunk
    finally:
        term.close()
        os.close(master)
    text = data.decode("utf-8", "replace")
    assert "\r" in text and "800/1000" in text and "267/s" in text and "candidates 3 (peak 12)" in text
    assert "\x1b[2K" in text  # the line is cleared (transient: nothing left behind)

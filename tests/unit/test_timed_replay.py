"""Replay of timed specs (NOTE(timed-replay), checker/engines/replay/timed.py): the untimed
abstraction decides the discrete check, then the recorded time stamps are checked against the
model's `time` bounds on the zone graph; a stamp no timed behaviour explains is a divergence at
its line. On the H100 time-slice recording through the bundled nvidia_tsg and its mapping (its
times fitted from that recording, issue 31): the recording conforms, and a block of one process
logged inside the other process's switch-out (it ran in the other TSG's slice) diverges at that
line, which the untimed abstraction cannot see (two hidden switches explain it)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from gpcheck.checker.cli.command import main
from gpcheck.checker.engines.timed import untimed
from gpcheck.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "traces" / "corpus" / "real" / "timeslice_two_processes.jsonl.gz"
TSG = ROOT / "spec" / "models" / "nvidia_tsg.gpspec"

SAVES = """model saves
const SAVE = 5
var saved: [0..1] -> bool = [false, false]
var req: bool = false
action request { require not req  req = true }
action save(q: 0..1) time SAVE { require req and not saved[q]  saved[q] = true }
terminal: saved[0] and saved[1]
"""


def _trace(tmp: Path, stamps: list[int | None]) -> Path:
    acts = [("request", {}), ("save", {"q": 0}), ("save", {"q": 1})]
    lines = ['{"gpcheck_trace": 1, "model": "saves"}']
    for (a, args), t in zip(acts, stamps):
        ev: dict = {"action": a, "args": args}
        if t is not None:
            ev["t"] = t
        lines.append(json.dumps(ev))
    p = tmp / "t.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def _replay(capsys: pytest.CaptureFixture[str], trace: Path, spec: Path, *extra: str) -> tuple[int, dict]:
    rc = main(["replay", str(trace), "--model", str(spec), "--json", "--no-progress", *extra])
    return rc, json.loads(capsys.readouterr().out)


@pytest.fixture
def saves(tmp_path: Path) -> Path:
    p = tmp_path / "saves.gpspec"
    p.write_text(SAVES)
    return p


def test_untimed_abstraction_drops_every_time_clause(saves: Path) -> None:
    m = load_spec(str(saves))
    assert m.has_time and not untimed(m).has_time
    assert [a.name for a in untimed(m).actions] == [a.name for a in m.actions]


def test_stamps_within_the_bounds_conform(tmp_path: Path, saves: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # both saves exactly SAVE = 5 us after the request (stamps in ns, the model in us)
    rc, out = _replay(capsys, _trace(tmp_path, [100, 5_100, 5_100]), saves)
    assert rc == 0 and out["verdict"] == "conforms"
    assert "time stamps fit saves's time bounds" in out["reason"]


def test_a_step_after_its_deadline_diverges_at_its_line(tmp_path: Path, saves: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # save(1) 7 us after the request: its deadline (5 us after it became enabled) has passed;
    # the untimed abstraction accepts the order, the stamps do not
    rc, out = _replay(capsys, _trace(tmp_path, [100, 5_100, 7_100]), saves)
    assert rc == 1 and out["verdict"] == "diverges"
    d = out["divergence"]
    assert d["line"] == 4 and d["event"]["action"] == "save"
    assert "allow it 0..0 us after line 3; it came 2 us after line 3" in d["reason"]
    assert d["candidates"] and d["candidates"][0]["state"]["saved"] == [True, False]


def test_a_step_before_its_lower_bound_diverges_at_its_line(tmp_path: Path, saves: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _replay(capsys, _trace(tmp_path, [100, 3_100, 5_100]), saves)
    assert rc == 1 and out["divergence"]["line"] == 3
    assert "allow it 5..5 us after line 2; it came 3 us after line 2" in out["divergence"]["reason"]


def test_without_stamps_only_the_untimed_abstraction_is_checked_and_said(tmp_path: Path, saves: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _replay(capsys, _trace(tmp_path, [None, None, None]), saves)
    assert rc == 0 and out["verdict"] == "conforms"
    assert any("only the untimed abstraction was replayed" in w for w in out["warnings"])


def test_an_untimed_divergence_is_reported_before_any_timing(tmp_path: Path, saves: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "t.jsonl"
    p.write_text('{"gpcheck_trace": 1, "model": "saves"}\n{"action":"save","args":{"q":0},"t":1}\n')
    rc, out = _replay(capsys, p, saves)
    assert rc == 1 and out["divergence"]["line"] == 2 and "timing" not in out["divergence"]["reason"]


# ------------------------------------------------------------------ the H100 time-slice recording

def _lines() -> list[str]:
    with gzip.open(REAL, "rt") as f:
        return f.read().splitlines()


def _block_in_the_other_slice(lines: list[str]) -> tuple[list[str], int]:
    """The recording with process A's first logged switch-out moved into process B's next
    switch-out group (same stamp as B's blocks there): A's block ran in B's slice. Returns the
    altered lines and the moved event's line."""
    gaps = [(i, json.loads(x)["meta"]["pid"]) for i, x in enumerate(lines) if '"action":"gap"' in x]
    a_pid = json.loads(next(x for x in lines if '"action":"start"' in x and json.loads(x)["meta"]["name"] == "A"))["meta"]["pid"]
    a_first = next(i for i, p in gaps if p == a_pid)
    b_next = [i for i, p in gaps if p != a_pid and i > a_first]
    pos = b_next[len(b_next) // 2 if len(b_next) < 132 else 66]
    moved = json.loads(lines[a_first])
    moved["t"] = json.loads(lines[pos])["t"]
    out = lines[:a_first] + lines[a_first + 1:pos + 1] + [json.dumps(moved, separators=(",", ":"))] + lines[pos + 1:]
    return out, pos + 1


def test_the_whole_recording_conforms_to_the_bundled_model_with_its_times(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _replay(capsys, REAL, TSG, "--map")
    assert rc == 0 and out["verdict"] == "conforms" and out["events"] == 1852, out.get("divergence")
    assert "time stamps fit nvidia_tsg's time bounds" in out["reason"]


def test_a_block_run_in_the_other_tsgs_slice_diverges_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    altered, line = _block_in_the_other_slice(_lines())
    p = tmp_path / "altered.jsonl"
    p.write_text("\n".join(altered[:line + 20]) + "\n")
    rc, out = _replay(capsys, p, TSG, "--map")
    assert rc == 1 and out["verdict"] == "diverges"
    d = out["divergence"]
    assert d["line"] == line == 336
    assert d["event"]["recorded"]["action"] == "gap" and "timing: nvidia_tsg's time bounds" in d["reason"]
    # the other TSG's slice began microseconds before; a slice lasts at least SLICE_MIN_US
    assert "it came 0 us after line" in d["reason"] and "allow it at least" in d["reason"]


def test_the_untimed_abstraction_misses_the_block_in_the_other_slice(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    altered, line = _block_in_the_other_slice(_lines())
    p = tmp_path / "altered.jsonl"
    p.write_text("\n".join(altered[:line + 20]) + "\n")
    rc, out = _replay(capsys, p, TSG, "--map", "--no-timing")
    assert out["verdict"] == "conforms"  # two hidden switches explain it


def test_each_fitted_slice_bound_is_tight(capsys: pytest.CaptureFixture[str]) -> None:
    # one microsecond tighter than the fit and the recording no longer conforms, at the slice that set it
    rc, out = _replay(capsys, REAL, TSG, "--map", "--const", "SLICE_MIN_US=2060")
    assert rc == 1 and out["divergence"]["line"] == 1642 and "takes at least 2060 us; line 1642 took 2059.8 us" in out["divergence"]["reason"]
    rc, out = _replay(capsys, REAL, TSG, "--map", "--const", "SLICE_US=2096")
    assert rc == 1 and out["divergence"]["line"] == 5 and "takes at most 2096 us; line 5 took 2096.9 us" in out["divergence"]["reason"]


def test_time_unit_of_a_mapping_is_checked(tmp_path: Path) -> None:
    from gpcheck.traces.mapping import MappingError, parse_mapping

    with pytest.raises(MappingError, match=r"m.toml:2:\d+: time_unit_ns must be a positive integer"):
        parse_mapping('model = "x"\ntime_unit_ns = 0\n[[event]]\nmatch = "a"\naction = "a"\n', "m.toml")


def test_the_python_api_replays_a_timed_spec_with_its_stamps(tmp_path: Path, saves: Path) -> None:
    from gpcheck.checker import replay

    report = replay(_trace(tmp_path, [100, 5_100, 7_100]), saves)
    assert report.conforms is False and report.divergence is not None and report.divergence.line == 4

"""`cost` is retired (issue 29, NOTE(retired-cost) in spec/retired.py): one notion of time. Every
`cost` is a located error (the keyword's file, line and column, exit 2, no traceback) that says how
to rewrite it, wherever it stands: a plain or timed spec, a used module, a driven action, a named
instance. The words stay usable as names."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpcheck.checker.cli.command import main
from gpcheck.spec import load_source, load_spec
from gpcheck.spec.errors import SpecError


def _error(src: str, name: str = "t.gpspec") -> str:
    with pytest.raises(SpecError) as err:
        load_source(src, name)
    return err.value.render()


def _says_how_to_rewrite(text: str) -> None:
    assert "`cost` is retired" in text and "write `time E` instead" in text
    assert "overlap" in text and "docs/timed.md" in text


@pytest.mark.parametrize("decl, col", [
    ("action a cost 5 { x = 1 }", 10),
    ("fair internal action a(q: 0..1) cost 2 * q { x = 1 }", 33),
    ("fair action a cost 5 time 5 { x = 1 }", 15),
])
def test_cost_is_a_located_error_at_the_keyword(decl: str, col: int) -> None:
    text = _error(f"model t\nvar x: 0..1 = 0\n{decl}\n")
    assert f"t.gpspec:3:{col}: error: action 'a': `cost` is retired" in text
    _says_how_to_rewrite(text)


def test_cost_in_a_timed_spec_and_every_cost_reported_at_once() -> None:
    text = _error("model t\nvar x: 0..2 = 0\naction a time 1..2 { require x == 0\n x = 1 }\n"
                  "action b cost 3 { require x == 1\n x = 2 }\naction c cost 1 { x = 0 }\n")
    assert "t.gpspec:5:10:" in text and "t.gpspec:7:10:" in text and text.count("`cost` is retired") == 2


def test_the_command_exits_2_with_the_location_and_no_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "old.gpspec"
    src = "model old\nvar x: 0..1 = 0\nfair action go cost 5 { require x == 0\n x = 1 }\nlatency l: from x == 0 to x == 1\n"
    f.write_text(src)
    for cmd in (["verify", str(f)], ["check", str(f)], ["verify", str(f), "--engine", "bmc"]):
        assert main(cmd) == 2
        err = capsys.readouterr().err
        assert f"{f}:3:16: error: action 'go': `cost` is retired" in err and "Traceback" not in err
    assert f.read_text() == src  # nothing the user gave is modified


def test_a_used_module_and_a_driven_action_report_their_cost_in_their_file(tmp_path: Path) -> None:
    (tmp_path / "m.gpspec").write_text("model m\nvar y: 0..1 = 0\naction step cost 4 { y = 1 }\n"
                                       "action other cost 1 { y = 0 }\n")
    top = tmp_path / "top.gpspec"
    top.write_text('model top\nuse "m.gpspec" driving step\naction go { call step() }\n')
    with pytest.raises(SpecError) as err:
        load_spec(str(top))
    spans = sorted((d.span.file.endswith("m.gpspec"), d.span.line, d.span.column) for d in err.value.diagnostics)
    assert spans == [(True, 3, 13), (True, 4, 14)]  # the driven `step` (never an action) and `other`
    assert all("`cost` is retired" in d.message for d in err.value.diagnostics)


def test_a_named_instance_reports_its_modules_cost(tmp_path: Path) -> None:
    (tmp_path / "q.gpspec").write_text("model q\nconst CAP = 1\nvar n: 0..CAP = 0\naction push cost 2 { require n < CAP\n n = n + 1 }\n")
    top = tmp_path / "top.gpspec"
    top.write_text('model top\nuse "q.gpspec" as a(CAP = 2)\n')
    with pytest.raises(SpecError) as err:
        load_spec(str(top))
    d = err.value.first
    assert "`cost` is retired" in d.message and d.span.file.endswith("q.gpspec") and (d.span.line, d.span.column) == (4, 13)


def test_the_words_stay_usable_as_names() -> None:
    m = load_source("model t\nvar cost: 0..1 = 0\nvar to: bool = false\nvar within: bool = false\n"
                    "fair action latency(from: 0..1) time from + cost { require cost == 0\n cost = 1 }\n"
                    "allow deadlock\nlatency l: from cost == 0 to cost == 1 within 1\n", "t.gpspec")
    assert m.actions[0].time is not None and m.latencies[0].within == 1
    assert not hasattr(m.actions[0], "cost")

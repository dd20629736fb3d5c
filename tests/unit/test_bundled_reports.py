"""tests/bundled.py's finished_report: the report shared_verify made, from this process or from the
file another worker left, and never a run of its own."""

from __future__ import annotations

from pathlib import Path

from tests import bundled


def test_finished_report_reads_what_shared_verify_made_and_runs_nothing(tmp_path: Path) -> None:
    from gpcheck.checker.api import model_api

    key = bundled._bundled_key("hws_oversub")
    bundled._REPORTS.pop(key, None)  # type: ignore[arg-type]
    assert bundled.finished_report("hws_oversub", tmp_path) is None  # not made yet: nothing runs
    with bundled.shared_verify(tmp_path):
        made = model_api.verify("hws_oversub")
    assert bundled.finished_report("hws_oversub") is made  # this process's
    bundled._REPORTS.pop(key)  # type: ignore[arg-type]
    assert bundled.finished_report("hws_oversub") is None
    got = bundled.finished_report("hws_oversub", tmp_path)  # another worker's, from its file
    assert got is not None and [(r.property, r.verdict) for r in got.results] == \
        [(r.property, r.verdict) for r in made.results]
    assert bundled.finished_report("not_a_bundled_model", tmp_path) is None

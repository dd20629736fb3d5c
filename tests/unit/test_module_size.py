"""Issue 34: small modules with one job. A source module over 600 lines says why on its first
line (`# over 600 lines: REASON`); the tree's modules are checked, and the check itself is
shown to fail on a long module without a reason."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("gpcheck", "spec", "gpmodel", "checker", "traces", "tools")
LIMIT = 600
REASON = re.compile(r"# over 600 lines: \S.{15,}")


def too_long(paths: list[Path]) -> list[str]:
    """Each module over LIMIT lines whose first line gives no reason, with its length."""
    out = []
    for path in paths:
        lines = path.read_text().splitlines()
        if len(lines) > LIMIT and not (lines and REASON.fullmatch(lines[0])):
            out.append(f"{path}: {len(lines)} lines")
    return out


def test_no_module_over_600_lines_without_a_reason():
    paths = sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py"))
    assert len(paths) > 100
    assert too_long(paths) == []


def test_the_check_fails_on_a_long_module_and_accepts_a_reason(tmp_path):
    body = '"""A module."""\n' + "x = 1\n" * LIMIT
    long = tmp_path / "long.py"
    long.write_text(body)
    assert too_long([long]) == [f"{long}: {LIMIT + 1} lines"]
    long.write_text("# over 600 lines: one table, read as a whole\n" + body)
    assert too_long([long]) == []
    long.write_text("# over 600 lines:\n" + body)  # no reason given
    assert len(too_long([long])) == 1

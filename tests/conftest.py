"""Shared test helpers: where the shared example specs live."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # tests.reference is imported by package name
    sys.path.insert(0, str(ROOT))
EXAMPLES = ROOT.parent / "shared" / "spec-examples"


@pytest.fixture(scope="session")
def examples() -> Path:
    if not EXAMPLES.is_dir():
        pytest.skip("../shared/spec-examples is not beside the checkout")
    return EXAMPLES

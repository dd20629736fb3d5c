"""Shared test helpers: where the shared example specs live."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT.parent / "shared" / "spec-examples"


@pytest.fixture(scope="session")
def examples() -> Path:
    if not EXAMPLES.is_dir():
        pytest.skip("../shared/spec-examples is not beside the checkout")
    return EXAMPLES

"""The CI slice of the timed differential test (tests/quality/timed_differential.py): random small
timed specs, the zone engine against the discrete-time reference (tests/reference/timed.py):
verdicts, exact min/max latencies, every timed witness replayed. The long run is
`python -m tests.quality.timed_differential N SEED` (and the `long` test below)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings

from timed_differential import compare, gen_spec, main, timed_spec

SLICE = settings(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)


@settings(SLICE, max_examples=12)
@given(text=timed_spec())
def test_zone_engine_agrees_with_discrete_time_reference(text):
    problems = compare(text)
    assert not problems, text + "\n" + "\n".join(problems)


def test_generated_specs_are_timed_and_varied():
    texts = [gen_spec(random.Random(k)) for k in range(40)]
    assert all(" time " in t or "urgent " in t for t in texts)
    assert any("urgent " in t for t in texts) and any(" time a..a" in t for t in texts)
    assert any(".. {" in t for t in texts)  # `time L..`, no deadline


@pytest.mark.long
def test_long_timed_differential_run():
    assert main(["300", "7"]) == 0

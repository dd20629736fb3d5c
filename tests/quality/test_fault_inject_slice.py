"""The CI slice of tests/quality/fault_inject.py (issue 36): a seeded sequence of cache faults
piled up in one cache directory between runs (never repaired by hand: each run must repair what
it needs; slow, test_cache_trust.py's kinds pile up in the default run), and one sweep and one
corpus replay (slow) whose only worker is killed at a random moment. The long mode with
the figures is `python tests/quality/fault_inject.py --minutes 5`."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fault_inject as F  # noqa: E402

pytest.importorskip("numba")


def _pile_up(tmp_path: Path, fault_caches: tuple, faults: int, every: bool) -> None:
    """`faults` seeded faults, each followed by one run, in one cache (a private copy of the
    run's warm cache). Each run that meets a damaged entry compiles it again
    (seconds of CPU), so one test piles up two faults, a numba fault over the runtime helpers'
    files alone (`every=False`, fault_inject.numba_targets), and the other five over every file
    (both slow: test_cache_trust.py's kinds pile up in the default run); each run must repair what it needs and give the reference result."""
    cache, other, reference = F.copy_caches(*fault_caches, tmp_path)  # warm, made once per run
    rng = random.Random(36)
    for _ in range(faults):
        kind = rng.choice([k for k in F.CACHE_FAULTS if k != "none"])
        ok, what = F.cache_trial(tmp_path, cache, other, kind, rng, reference, every=every)
        assert ok, what


# slow: two runs in a fresh process each (about 4 s of CPU); fast: test_cache_trust.py's
# test_each_kind_of_planted_file_changes_nothing, whose kinds pile up in the same way, one run
# after each, in its module's one warm cache (the same cache_trial, `every=False`)
@pytest.mark.slow
def test_cache_faults_piled_up_between_runs(tmp_path, fault_caches):
    _pile_up(tmp_path, fault_caches, 2, every=False)


@pytest.mark.slow  # five runs, most of them recompiling every module (about 30 s of CPU); fast: test_cache_trust.py's kinds piled up in one cache (see above)
def test_five_cache_faults_piled_up_between_runs(tmp_path, fault_caches):
    _pile_up(tmp_path, fault_caches, 5, every=True)


def test_a_sweep_whose_worker_is_killed_ends_honestly(tmp_path):
    ok, what, seconds = F.cluster_trial(tmp_path, "kill_worker", random.Random(36))
    assert ok, what


# slow: a second test cluster and run (5 to 7 s of CPU) for the cluster layer the sweep trial above
# exercises; fast: that trial, and test_cluster_faults.py's
# test_a_corpus_trace_the_cluster_loses_is_unknown_with_the_reason (run_corpus's row for a lost trace)
@pytest.mark.slow
def test_a_corpus_run_whose_worker_is_killed_ends_honestly(tmp_path):
    ok, what, seconds = F.cluster_trial(tmp_path, "kill_worker", random.Random(37), workload="corpus")
    assert ok, what

"""NOTE(term-names): a for-all run is a function of its inputs. Its Z3 queries (declarations,
names included, assertions in order, assumptions) and so its lemmas do not depend on where
Python put its objects in memory: before, a ghost counter's Z3 name was `s.ghost<id of its
Fold node>`, an address that differs between processes (and with the allocations of the
budget's and the progress meter's threads), and nvidia_streams' `slots_conserved` printed 3, 6
or 7 lemmas in fresh processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gpcheck.spec
from gpcheck.checker.api.for_all import verify_for_all
from tests.querylog import recording
from tests.unit.test_forall_counters import SATURATING  # the slot arrays counted per value

ROOT = Path(__file__).resolve().parents[2]

def _run(spec: object, names: list[str], props: list[str] | None) -> tuple[list[str], dict[str, tuple]]:
    """The queries of one for-all run in this process, and each property's verdict, lemma
    count and printed invariant."""
    with recording() as log:
        rep = verify_for_all(spec, names, {n: 1 for n in names}, properties=props, timeout=600)  # type: ignore[arg-type]
    return log, {r.property: (r.verdict.value, r.detail.get("lemmas"), r.detail.get("invariant"))
                 for r in rep.results}


@pytest.mark.slow  # two for-all runs with every query's SMT text hashed: 10-40 s
@pytest.mark.parametrize("which", ["ghosts", "counters"])
def test_the_queries_do_not_depend_on_where_the_model_lies_in_memory(tmp_path, monkeypatch, which):
    """The same run twice in this process, the first run's models kept alive, so every IR node
    of the second lies at another address (another id()): the same queries, the same lemmas.
    nvidia_streams' sums over a symbolic range are ghost counters (checker/engines/param/encode.py);
    the slots spec's arrays over `0..S-1` are counted per value (checker/engines/param/counters.py)."""
    if which == "ghosts":
        spec, names, props = "nvidia_streams", ["S", "SLOTS", "Q"], None
    else:
        spec, names, props = tmp_path / "slots.gpspec", ["S", "NB"], ["no_reexecution"]
        spec.write_text(SATURATING)
    kept: list[object] = []
    load = gpcheck.spec.load_spec

    def load_and_keep(*args: object, **kw: object) -> object:
        model = load(*args, **kw)  # type: ignore[arg-type]
        kept.append(model)
        return model

    monkeypatch.setattr(gpcheck.spec, "load_spec", load_and_keep)
    first_log, first = _run(spec, names, props)
    second_log, second = _run(spec, names, props)
    assert kept and first_log
    assert all(v == "proved" for v, _, _ in first.values()), first
    assert second == first
    assert second_log == first_log  # every query, in order, names and all


def _fresh(out: Path) -> subprocess.Popen:
    """`gpcheck verify nvidia_streams --for-all S,SLOTS,Q --json` started in a fresh process
    that writes its queries to `out`."""
    args = [sys.executable, str(ROOT / "tests" / "querylog.py"), str(out),
            "verify", "nvidia_streams", "--for-all", "S,SLOTS,Q", "--json"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow  # two fresh processes: 10-25 s
def test_fresh_processes_print_the_same_invariants_and_ask_the_same_queries(tmp_path):
    """Two fresh processes at once (so they compete for the CPU, as the runs that varied did):
    the same queries and the same printed invariants. Before, the queries differed in every
    pair (the ghost's name) and the lemma counts in most."""
    logs = [tmp_path / f"queries{k}.txt" for k in range(2)]
    procs = [_fresh(p) for p in logs]
    got = []
    for proc, log in zip(procs, logs):
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, stderr
        results = {r["property"]: (r["verdict"], r["detail"].get("lemmas"), r["detail"].get("invariant"))
                   for r in json.loads(stdout)["results"]}
        got.append((log.read_text().splitlines(), results))
    assert got[0][0] and all(v == "proved" for v, _, _ in got[0][1].values()), got[0][1]
    assert got[1][1] == got[0][1]
    assert got[1][0] == got[0][0]

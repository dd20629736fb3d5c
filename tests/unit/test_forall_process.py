"""NOTE(fresh-context): a for-all run proves and prints in a process that ran other for-all
runs (and anything else) before it what it does in a fresh process: its own Z3 context, term
names from zero, and Python's cyclic garbage collector only where the run says (a collection
frees Z3 terms, and Z3 reuses their numbers). And the API's `timeout` bounds a for-all run:
what it cuts short is `unknown`, reason `timeout`."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import z3

from gpcheck.checker import Verdict
from gpcheck.checker.api.for_all import verify_for_all
from gpcheck.checker.engines.smt.session import fresh_context, no_automatic_gc, steps_used
from gpcheck.checker.engines.smt.terms import false, is_false, is_true, mk_and, mk_or, true

ROOT = Path(__file__).resolve().parents[2]


def _fresh(spec: str, names: list[str], props: list[str] | None) -> dict[str, tuple]:
    """Each property's verdict, lemma count and printed invariant from `gpcheck verify
    --for-all` in a fresh process."""
    args = [sys.executable, "-m", "gpcheck", "verify", spec, "--for-all", ",".join(names), "--json"]
    for p in props or []:
        args += ["--property", p]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode in (0, 1, 3), out.stderr
    return {r["property"]: (r["verdict"], r["detail"].get("lemmas"), r["detail"].get("invariant"))
            for r in json.loads(out.stdout)["results"]}


def _here(spec: str, names: list[str], props: list[str] | None) -> dict[str, tuple]:
    """The same, from `verify_for_all` in this process."""
    rep = verify_for_all(spec, names, {n: 1 for n in names}, properties=props, timeout=600)
    return {r.property: (r.verdict.value, r.detail.get("lemmas"), r.detail.get("invariant")) for r in rep.results}


@pytest.mark.slow  # seven whole for-all runs, three in fresh processes; fast: the fresh_context tests below
def test_runs_in_one_process_print_what_fresh_processes_print(examples):
    ring = (str(examples / "ring.gpspec"), ["N", "B"], ["no_reexecution"])
    streams = ("nvidia_streams", ["S", "SLOTS", "Q"], ["slots_conserved", "held_iff_running"])
    blp = ("blp", ["N", "LB", "P"], ["bounded_inversion"])
    fresh = [_fresh(*run) for run in (ring, streams, blp)]
    # this process ran other tests before; and garbage with reference cycles between the runs
    # (before, a plain allocation like this one moved Python's collections and Z3's term
    # numbers; streams' slots_conserved using 3 lemmas in one process and 6 in another came from
    # a Z3 name that followed a memory address: NOTE(term-names))
    junk = [[i, str(i)] for i in range(100_000)]
    for row in junk[::100]:
        row.append(row)
    del junk
    got = [_here(*ring), _here(*streams), _here(*blp), _here(*ring)]
    assert got[:3] == fresh
    assert got[3] == fresh[0]  # the first again, after the others
    assert all(v == "proved" for run in got for v, _, _ in run.values()), got
    assert fresh[0]["no_reexecution"][2] and fresh[1]["slots_conserved"][1] >= 1


def test_a_tiny_timeout_holds_and_says_timeout():
    # cwsr's for-all run proves every property (tests/unit/test_forall.py) in tens of seconds;
    # its first phases (loading and exploring ten small instances) do not wait for Z3
    rep = verify_for_all("cwsr", ["Q", "N", "W", "L"], {n: 1 for n in "QNWL"}, timeout=0.05)
    assert rep.results and all(r.verdict is Verdict.UNKNOWN for r in rep.results), rep.results
    # (cwsr is timed: what for-all does not decide on a timed spec, its liveness and latencies, is
    # unknown at once with that reason; everything else ran out of time)
    assert all(r.reason.startswith(("timeout", "for-all does not")) for r in rep.results), [r.reason for r in rep.results]
    assert gc.isenabled()  # the collector is back on after the run


def test_fresh_context_scopes_z3_and_the_literals():
    outer = z3.main_ctx()
    t_outer = true()
    with fresh_context() as ctx:
        assert z3.main_ctx() is ctx is not outer
        x = z3.Bool("x")
        assert x.ctx is ctx and true().ctx is ctx and false().ctx is ctx
        assert is_true(mk_and(true(), true())) and is_false(mk_or(false()))
        assert mk_and(x, true()).eq(x) and is_false(mk_and(x, false()))
        assert steps_used() >= 0
    assert z3.main_ctx() is outer and true().eq(t_outer) and is_true(t_outer)
    with no_automatic_gc():
        assert not gc.isenabled()
    assert gc.isenabled()

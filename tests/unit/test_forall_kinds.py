"""Issue 38: a `--for-all` run answers every property the model declares or the run names
(deadlock, liveness and latency included: NOTE(for-all-kinds) in checker/engines/param/beyond.py), and
an unknown `--property` name is a usage error in every engine and mode. Before, `dl_all` (which
deadlocks at every N and fails `reach` at every N >= 2) came out "le proved, range proved",
exit 0."""

from __future__ import annotations

import json

import pytest

from gpcheck.checker import Verdict, verify
from gpcheck.checker.cli.command import main
from gpcheck.checker.api.for_all import verify_for_all
from gpcheck.spec.errors import UsageError
from tests.recheck import write_spec

DL_ALL = """model dl_all
const N = 3
var x: 0..N = 0
fair action inc { require x < N and x != 1; x = x + 1 }
liveness reach: eventually x == N
invariant le: x <= N
"""

# Deadlock-free for every N (mark every slot, then reset): `deadlock` is proved from the
# run's lemmas (`a[i] <= 1`); the liveness and latency hold too, but for-all proves neither. (The
# latency is 0 at every start: without `time` an action may wait forever, so only a latency whose
# every start is a `to`-state is bounded, NOTE(latency).)
CYCLE = """model cycle
const N = 3
var x: 0..N = 0
var a: [0..N-1] -> 0..2 = 0
fair action inc { require x < N; x = x + 1 }
action mark(i: 0..N-1) { require x == N and a[i] == 0; a[i] = BAD }
action reset { require x == N and (all i in 0..N-1: a[i] == 1); x = 0; for i in 0..N-1 { a[i] = 0 } }
liveness reach: eventually x == N
latency lat: from x == N to x >= N within 5
invariant ok: x <= N
"""
GOOD = CYCLE.replace("BAD", "1")
# Deadlocks only from N = 9 on (the last slot marked 2): beyond every size the run searches.
LATE = CYCLE.replace("BAD", "(if i == N - 1 and N >= 9 then 2 else 1)")


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    rc = main(["verify", *args, "--json"])
    return rc, json.loads(capsys.readouterr().out)


def test_dl_all_lists_deadlock_and_liveness_violated(tmp_path, capsys):
    """The issue's spec: every property listed, deadlock and reach violated with the size and a
    counterexample the explicit engine confirms there, exit 1."""
    path = write_spec(tmp_path, DL_ALL)
    rc, out = _cli([str(path), "--for-all", "N"], capsys)
    got = {r["property"]: r for r in out["results"]}
    assert list(got) == ["le", "reach", "deadlock", "range"]
    assert rc == 1
    assert got["le"]["verdict"] == "proved" and got["range"]["verdict"] == "proved"
    for name in ("deadlock", "reach"):
        r = got[name]
        assert r["verdict"] == "violated" and r["counterexample"] is not None, r
        n = r["instance"]["N"]
        assert verify(path, consts={"N": n}).result(name).verdict is Verdict.VIOLATED


@pytest.mark.parametrize("prop", ["deadlock", "reach"])
def test_dl_all_named_property_is_answered(tmp_path, capsys, prop):
    """`--property deadlock` / `--property reach`: that one result, violated (it was an empty
    table and exit 0)."""
    rc, out = _cli([str(write_spec(tmp_path, DL_ALL)), "--for-all", "N", "--property", prop], capsys)
    assert rc == 1 and [(r["property"], r["verdict"]) for r in out["results"]] == [(prop, "violated")]


def test_unknown_property_name_is_a_usage_error_in_for_all(tmp_path, capsys):
    path = write_spec(tmp_path, DL_ALL)
    assert main(["verify", str(path), "--for-all", "N", "--property", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "no property nosuch" in err and "deadlock, le, range, reach" in err
    with pytest.raises(UsageError, match="no property nosuch"):
        verify_for_all(path, ["N"], {"N": 1}, properties=["nosuch"])


@pytest.mark.parametrize("mode", [[], ["--core", "compiled"], ["--core", "python"], ["--engine", "bmc"],
                                  ["--engine", "kind"], ["--engine", "pdr"], ["--engine", "auto"]])
def test_unknown_property_name_is_a_usage_error_everywhere(tmp_path, capsys, mode):
    path = write_spec(tmp_path, DL_ALL)
    assert main(["verify", str(path), "--property", "nosuch", *mode]) == 2
    assert "no property nosuch (properties: deadlock, le, range, reach)" in capsys.readouterr().err


def test_unknown_property_name_is_a_usage_error_in_sweep(tmp_path, capsys):
    path = write_spec(tmp_path, DL_ALL)
    assert main(["sweep", str(path), "--const", "N=2,3", "--property", "nosuch", "--workers", "1"]) == 2
    assert "no property nosuch" in capsys.readouterr().err


def test_deadlock_free_for_all_sizes_is_proved_liveness_and_latency_unknown(tmp_path, capsys):
    """Deadlock freedom proved for every N from the run's inductive lemmas; liveness and
    latency `unknown` with the reason (never dropped), so the exit code is 3, not 0."""
    rc, out = _cli([str(write_spec(tmp_path, GOOD)), "--for-all", "N"], capsys)
    got = {r["property"]: r for r in out["results"]}
    assert list(got) == ["ok", "reach", "lat", "deadlock", "range"]
    assert got["deadlock"]["verdict"] == "proved" and got["deadlock"]["engine"] == "forall"
    for name, kind in (("reach", "liveness"), ("lat", "latency")):
        assert got[name]["verdict"] == "unknown" and got[name]["kind"] == kind
        assert f"--for-all does not prove {kind} for all sizes" in got[name]["reason"]
        assert "run the explicit engine at a size" in got[name]["reason"]
    assert rc == 3


def test_deadlock_beyond_the_searched_sizes_is_never_proved(tmp_path):
    """Deadlock-free up to N = 8, deadlocked from N = 9: never `proved` (the lemmas hold in
    the stuck state at N = 9, so the check cannot close)."""
    path = write_spec(tmp_path, LATE)
    assert verify(path, consts={"N": 9}).result("deadlock").verdict is Verdict.VIOLATED
    assert verify(path, consts={"N": 5}).result("deadlock").verdict is Verdict.PROVED
    r = verify_for_all(path, ["N"], {"N": 1}, properties=["deadlock"], timeout=120).result("deadlock")
    assert r.verdict in (Verdict.UNKNOWN, Verdict.VIOLATED), r
    if r.verdict is Verdict.VIOLATED:
        assert r.detail["instance"]["N"] >= 9

"""`--for-all` and modelling errors (NOTE(for-all-errors) in checker/engines/param/errors.py).

The encoding's steps leave out an action instance that fails with a modelling error, so a
property proved over them holds only up to the first error; the explicit engine stops there and
reports a `range` violation, and so does pdr. A for-all run now reports `range` too, and a
property is `proved` only when the errors are shown unreachable for every size. Before, the
specs below were `proved` for all N although a step writes out of range once N >= 5."""

from __future__ import annotations

from gpcheck.checker import Verdict, verify
from gpcheck.checker.api.for_all import verify_for_all
from gpcheck.spec import load_source
from tests.recheck import recheck_lemmas, write_spec

# `bump` can only run once the counter reaches LIMIT, which needs N >= LIMIT: it then writes
# N + 1 into x: 0..N. The invariants hold on every path without the failing step.
LATE_ERROR = """model late_error
const N = 3
const LIMIT = 5
allow deadlock
var x: 0..N = 0
var c: 0..N = 0
action tick { require c < N
  c = c + 1 }
action bump { require c >= LIMIT
  x = N + 1 }
invariant x_small: x <= N
invariant c_ok: c <= N
"""


def test_an_error_beyond_the_small_sizes_is_reported_and_nothing_is_proved(tmp_path):
    """The error needs N >= 5: beyond the small instances (N <= 3), found at the second
    round's larger instances; reported as the explicit engine reports it."""
    path = write_spec(tmp_path, LATE_ERROR)
    for n in (1, 2, 3, 4):
        assert verify(path, consts={"N": n}).result("range").verdict is Verdict.PROVED
    report = verify_for_all(path, ["N"], {"N": 1}, timeout=120)
    err = report.result("range")
    assert err.verdict is Verdict.VIOLATED and err.kind == "range", err
    inst = err.detail["instance"]
    assert inst["N"] >= 5 and "outside" in err.reason
    at = verify(load_source(LATE_ERROR, "m.gpspec", inst), properties=["range"])
    assert at.result("range").verdict is Verdict.VIOLATED  # the explicit engine agrees there
    for name in ("x_small", "c_ok"):
        r = report.result(name)
        assert r.verdict is Verdict.UNKNOWN, r
        assert "modelling error" in r.reason


def test_an_error_no_instance_reaches_leaves_unknown(tmp_path):
    """At LIMIT = 9 no instance the run explores reaches the error: `range` is unknown,
    saying the error could not be excluded, and so is every property (never proved)."""
    path = write_spec(tmp_path, LATE_ERROR.replace("LIMIT = 5", "LIMIT = 9"))
    assert verify(path, consts={"N": 9}).result("range").verdict is Verdict.VIOLATED
    report = verify_for_all(path, ["N"], {"N": 1}, timeout=120)
    err = report.result("range")
    assert err.verdict is Verdict.UNKNOWN and "could not be excluded" in err.reason, err
    assert "bump" in err.reason
    for name in ("x_small", "c_ok"):
        assert report.result(name).verdict is Verdict.UNKNOWN


def test_a_property_named_alone_still_needs_the_errors_excluded(tmp_path):
    path = write_spec(tmp_path, LATE_ERROR.replace("LIMIT = 5", "LIMIT = 9"))
    report = verify_for_all(path, ["N"], {"N": 1}, properties=["x_small"], timeout=120)
    assert [r.property for r in report.results] == ["x_small"]
    assert report.results[0].verdict is Verdict.UNKNOWN


def test_errors_excluded_for_all_sizes_prove_range(tmp_path):
    """Without the bad write the same model is proved, `range` included: a write guarded by
    its own bound needs no lemma, an index guarded by another variable needs one."""
    src = LATE_ERROR.replace("x = N + 1", "x = N") + """var a: [0..N-1] -> 0..1 = 0
var busy: bool = false
action take { require not busy and c >= 1
  busy = true }
action mark { require busy
  a[c - 1] = 1 }
"""
    path = write_spec(tmp_path, src)
    report = verify_for_all(path, ["N"], {"N": 1}, timeout=120)
    for r in report.results:
        assert r.verdict is Verdict.PROVED, r
    err = report.result("range")
    assert err.kind == "range" and err.detail["for_all"] == ["N"]
    if err.detail.get("invariant"):
        recheck_lemmas(src, err.detail["invariant"], [{"N": 1}, {"N": 2}, {"N": 4}])


def test_an_error_at_a_small_size_stops_the_run_as_the_explicit_search(tmp_path):
    path = write_spec(tmp_path, LATE_ERROR.replace("LIMIT = 5", "LIMIT = 1"))
    report = verify_for_all(path, ["N"], {"N": 1}, timeout=120)
    err = report.result("range")
    assert err.verdict is Verdict.VIOLATED and err.detail["instance"] == {"N": 1}
    assert err.counterexample is not None
    r = report.result("x_small")
    assert r.verdict is Verdict.UNKNOWN and "the search stopped at a modelling error" in r.reason

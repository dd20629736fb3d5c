"""The gpcheck pytest plugin (checker/cli/pytest_plugin.py) and the assertions it reports
(checker/api/testing.py), run in inner pytest sessions with `pytester`.

Each inner session checks a four-state counter model written beside its test file, so the runs
take milliseconds; the bundled models are exercised in test_library_with_plugin.py."""

from __future__ import annotations

import shlex
import sys
import tomllib
from pathlib import Path

import pytest

from gpcheck.checker.cli.command import main as gpcheck_main
from gpcheck.checker.cli.pytest_plugin import autoloaded, const_combinations, const_id
from gpcheck.checker.api.reproduce import check_command, replay_command, verify_command
from gpcheck.checker.api.testing import (
    GpcheckAssertionError,
    assert_holds,
    assert_verdict,
    assert_violated,
    safe_name,
)
from gpcheck.spec import load_spec
from gpcheck.spec.errors import UsageError
from gpcheck.traces.format import Event, TraceHeader, write_trace
from gpcheck.traces.itf import read_itf

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

COUNTER = """\
model counter "a counter that may pass its limit"

const N = 3
const LIMIT = 2

var x: 0..N = 0

action inc {
    require x < N
    x = x + 1
}

invariant bounded: x <= LIMIT
invariant nonneg: x >= 0
allow deadlock
"""


# Installed (`pip install -e .`, as CI does): the inner sessions load the plugin through its entry
# point, which is what users get. Run from a bare checkout: load it by module name instead.
PLUGIN_ARGS: list[str] = [] if autoloaded() else [
    "-p", "gpcheck.checker.cli.pytest_plugin", "-W", "ignore::pytest.PytestAssertRewriteWarning"]


@pytest.fixture
def counter(pytester: pytest.Pytester) -> Path:
    """The counter model beside the inner session's tests."""
    return pytester.makefile(".gpspec", counter=COUNTER)


# Other installed plugins stay out of the inner sessions: pytester drops the modules a session
# imports, so hypothesis's plugin would import hypothesis afresh (a second) in every one.
ISOLATE = ["-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:benchmark"]


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(*PLUGIN_ARGS, *ISOLATE, *args)


def reproduce(command: str) -> tuple[int, str]:
    """Run a reproduction command line in-process; (exit code, stdout)."""
    argv = shlex.split(command)
    assert argv[0] == "gpcheck"
    from io import StringIO

    out, old = StringIO(), sys.stdout
    sys.stdout = out
    try:
        code = gpcheck_main(argv[1:])
    finally:
        sys.stdout = old
    return code, out.getvalue()


# ---------------------------------------------------------------------------------------------
# Registration


def test_entry_point_is_declared() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["entry-points"]["pytest11"] == {"gpcheck": "gpcheck.checker.cli.pytest_plugin"}


@pytest.mark.skipif(not autoloaded(), reason="gpcheck is not installed (pip install -e .), or plugin autoload is off")
def test_installed_plugin_loads_without_flags(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*ISOLATE, "--help")
    result.stdout.fnmatch_lines(["*--gpcheck-itf=DIR*"])
    result = pytester.runpytest(*ISOLATE, "--markers")
    result.stdout.fnmatch_lines(["*@pytest.mark.gpcheck_consts*"])


# ---------------------------------------------------------------------------------------------
# Failures show the counterexample and the command; passes stay quiet


def test_failing_assert_holds_shows_counterexample_and_command(pytester: pytest.Pytester, counter: Path) -> None:
    pytester.makepyfile(test_model="""
        from gpcheck.checker.api.testing import assert_holds

        def test_bounded():
            assert_holds("counter.gpspec", "bounded")
    """)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    result.stdout.fnmatch_lines([
        "gpcheck: expected bounded to hold in counter, but it is violated (explicit engine, 3 steps)",
        "at test_model.py:4: in test_bounded",
        "    assert_holds(\"counter.gpspec\", \"bounded\")",
        "model counter (*counter.gpspec)  constants: N=3 LIMIT=2",
        "counterexample for bounded (invariant):",
        "    0  initial state",
        "         x = 0",
        "    1  inc",
        "         x: 0 -> 1",
        "    2  inc",
        "         x: 1 -> 2",
        "    3  inc",
        "         x: 2 -> 3",
        "reproduce with:",
        "  gpcheck verify counter.gpspec --property bounded --engine explicit",
    ])
    # The message stands alone: no traceback through gpcheck's own code.
    assert "checker/api/testing.py" not in text and "Traceback" not in text
    # The short summary carries the headline.
    result.stdout.fnmatch_lines(["FAILED test_model.py::test_bounded - gpcheck: expected bounded*"])


def test_reproduction_command_reproduces(pytester: pytest.Pytester, counter: Path) -> None:
    with pytest.raises(GpcheckAssertionError) as info:
        assert_holds("counter.gpspec", "bounded", consts={"N": 3, "LIMIT": 1})
    err = info.value
    assert err.command == "gpcheck verify counter.gpspec --const N=3 --const LIMIT=1 --property bounded --engine explicit"
    assert err.result is not None and err.result.counterexample is not None
    code, out = reproduce(err.command)
    assert code == 1
    assert "violated (2 steps)" in out
    # The CLI prints the same steps the assertion did.
    cex_lines = err.message.split("counterexample for bounded (invariant):\n")[1].split("\nreproduce with:")[0]
    assert cex_lines in out


def test_const_override_and_engine_appear_in_the_command(pytester: pytest.Pytester, counter: Path) -> None:
    pytester.makepyfile(test_model="""
        from gpcheck.checker.api.testing import assert_violated

        def test_bounded_small():
            assert_violated("counter.gpspec", "bounded", consts={"N": 2})
    """)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "gpcheck: expected bounded to be violated in counter, but it is proved (explicit engine)",
        "model counter (*)  constants: N=2 LIMIT=2",
        "reproduce with:",
        "  gpcheck verify counter.gpspec --const N=2 --property bounded --engine explicit",
    ])
    assert "counterexample" not in result.stdout.str()


def test_passing_assertions_stay_quiet(pytester: pytest.Pytester, counter: Path) -> None:
    pytester.makepyfile(test_model="""
        from gpcheck.checker.api.testing import assert_holds, assert_verdict, assert_violated

        def test_holds():
            r = assert_holds("counter.gpspec", "bounded", consts={"N": 2}, proved=True)
            assert r.verdict.value == "proved"

        def test_violated():
            r = assert_violated("counter.gpspec", "bounded")
            assert r.counterexample.length == 3

        def test_expectation_words():
            assert_verdict("counter.gpspec", "nonneg", "holds")
            assert_verdict("counter.gpspec", "nonneg", "proved")
    """)
    result = run(pytester, "-q")
    result.assert_outcomes(passed=3)
    text = result.stdout.str()
    assert "gpcheck" not in text and "counterexample" not in text and "warning" not in text.lower()


def test_unknown_verdict_fails_with_its_reason(pytester: pytest.Pytester, counter: Path) -> None:
    pytester.makepyfile(test_model="""
        from gpcheck.checker.api.testing import assert_holds

        def test_limited():
            assert_holds("counter.gpspec", "nonneg", max_states=2)
    """)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "gpcheck: expected nonneg to hold in counter, but the verdict is unknown (explicit engine)",
        "reason: state limit 2 reached*",
        "  gpcheck verify counter.gpspec --property nonneg --engine explicit --max-states 2",
    ])


def test_model_errors_are_errors_not_failed_verdicts(counter: Path, pytester: pytest.Pytester) -> None:
    with pytest.raises(UsageError, match="no property"):
        assert_holds("counter.gpspec", "no_such_property")
    with pytest.raises(UsageError, match="unknown engine"):
        assert_holds("counter.gpspec", "bounded", engine="magic")
    with pytest.raises(UsageError, match="expected verdict"):
        assert_verdict("counter.gpspec", "bounded", "fine")
    assert not issubclass(UsageError, AssertionError)


def test_loaded_model_pins_every_constant(counter: Path, pytester: pytest.Pytester) -> None:
    model = load_spec("counter.gpspec", {"LIMIT": 1})
    with pytest.raises(GpcheckAssertionError) as info:
        assert_holds(model, "bounded")
    assert info.value.command == "gpcheck verify counter.gpspec --const N=3 --const LIMIT=1 --property bounded --engine explicit"
    with pytest.raises(UsageError, match="already loaded"):
        assert_holds(model, "bounded", consts={"N": 2})


def test_z3_engine_is_named_in_the_command(counter: Path, pytester: pytest.Pytester) -> None:
    pytest.importorskip("gpcheck.checker.api.smt_dispatch", reason="the Z3 engines (checker/api/smt_dispatch.py) are not in this checkout")
    r = assert_holds("counter.gpspec", "bounded", engine="pdr", consts={"N": 2}, proved=True)
    assert r.engine == "pdr"
    with pytest.raises(GpcheckAssertionError) as info:
        assert_holds("counter.gpspec", "bounded", engine="bmc", depth=5)
    assert info.value.command is not None and info.value.command.endswith("--engine bmc --depth 5")


# ---------------------------------------------------------------------------------------------
# The constants marker and the `gpcheck` fixture


def test_marker_parametrizes_over_the_cartesian_product(pytester: pytest.Pytester, counter: Path) -> None:
    pytester.makepyfile(test_model="""
        import pytest
        from gpcheck.checker.api.testing import assert_holds

        @pytest.mark.gpcheck_consts(N=[2, 3], LIMIT=[2, 3])
        def test_bounded(gpcheck_const):
            assert_holds("counter.gpspec", "bounded", consts=gpcheck_const)
    """)
    result = run(pytester, "--collect-only", "-q")
    result.stdout.fnmatch_lines([
        "test_model.py::test_bounded[N=2-LIMIT=2]",
        "test_model.py::test_bounded[N=2-LIMIT=3]",
        "test_model.py::test_bounded[N=3-LIMIT=2]",
        "test_model.py::test_bounded[N=3-LIMIT=3]",
    ])
    result = run(pytester, "-q")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([
        "*gpcheck verify counter.gpspec --const N=3 --const LIMIT=2 --property bounded --engine explicit",
        "FAILED test_model.py::test_bounded[[]N=3-LIMIT=2[]]*",
    ])


def test_gpcheck_fixture_takes_marker_constants_as_defaults(pytester: pytest.Pytester, counter: Path) -> None:
    pytester.makepyfile(test_model="""
        import pytest

        @pytest.mark.gpcheck_consts(LIMIT=3)
        class TestCounter:
            @pytest.mark.gpcheck_consts(N=[1, 2, 3])
            def test_bounded(self, gpcheck, gpcheck_const):
                assert gpcheck.const == gpcheck_const and gpcheck_const["LIMIT"] == 3
                gpcheck.assert_holds("counter.gpspec", "bounded")
                gpcheck.assert_violated("counter.gpspec", "bounded", consts={"LIMIT": 0})
                assert gpcheck.verify("counter.gpspec").states == gpcheck_const["N"] + 1

            @pytest.mark.gpcheck_consts(LIMIT=[0])
            def test_closest_marker_wins(self, gpcheck):
                gpcheck.assert_violated("counter.gpspec", "bounded")

        def test_without_marker(gpcheck, gpcheck_const):
            assert gpcheck_const == {} and gpcheck.const == {}
    """)
    result = run(pytester, "-v")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["*test_bounded[[]N=1-LIMIT=3[]] PASSED*", "*test_closest_marker_wins[[]LIMIT=0[]] PASSED*"])


def test_marker_without_the_fixture_is_a_collection_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_model="""
        import pytest

        @pytest.mark.gpcheck_consts(N=[1, 2])
        def test_forgot():
            pass
    """)
    result = run(pytester)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*gpcheck_consts needs the test to take the 'gpcheck_const' fixture*"])


def test_const_combinations() -> None:
    marks = [pytest.mark.gpcheck_consts(N=[4, 8]).mark, pytest.mark.gpcheck_consts(N=[1], CAP=range(1, 3)).mark]
    combos = const_combinations(marks)
    assert combos == [{"N": 4, "CAP": 1}, {"N": 4, "CAP": 2}, {"N": 8, "CAP": 1}, {"N": 8, "CAP": 2}]
    assert [const_id(c) for c in combos][:2] == ["N=4-CAP=1", "N=4-CAP=2"]
    with pytest.raises(pytest.UsageError, match="not an integer"):
        const_combinations([pytest.mark.gpcheck_consts(N=["4"]).mark])
    with pytest.raises(pytest.UsageError, match="no values"):
        const_combinations([pytest.mark.gpcheck_consts(N=[]).mark])


# ---------------------------------------------------------------------------------------------
# --gpcheck-itf


def test_itf_option_writes_each_failing_counterexample(pytester: pytest.Pytester, counter: Path) -> None:
    pytester.makepyfile(test_model="""
        import pytest
        from gpcheck.checker.api.testing import assert_holds

        @pytest.mark.gpcheck_consts(LIMIT=[1, 3])
        def test_bounded(gpcheck):
            gpcheck.assert_holds("counter.gpspec", "bounded")

        def test_passes():
            assert_holds("counter.gpspec", "nonneg")
    """)
    result = run(pytester, "--gpcheck-itf", "itf")
    result.assert_outcomes(passed=2, failed=1)
    written = sorted(p.name for p in (pytester.path / "itf").iterdir())
    assert written == ["test_model.py_test_bounded_LIMIT=1__bounded.itf.json"]
    result.stdout.fnmatch_lines(["counterexample written as ITF: itf/test_model.py_test_bounded_LIMIT=1__bounded.itf.json"])
    model = load_spec(str(counter), {"LIMIT": 1})
    itf = read_itf(str(pytester.path / "itf" / written[0]), model)
    assert itf.to_counterexample().length == 2
    assert [s["x"] for s in itf.states] == [0, 1, 2]


def test_without_the_option_nothing_is_written(pytester: pytest.Pytester, counter: Path) -> None:
    pytester.makepyfile(test_model="""
        from gpcheck.checker.api.testing import assert_holds

        def test_bounded():
            assert_holds("counter.gpspec", "bounded")
    """)
    run(pytester).assert_outcomes(failed=1)
    assert sorted(p.name for p in pytester.path.iterdir() if p.suffix == ".json") == []
    assert "ITF" not in run(pytester).stdout.str()


# ---------------------------------------------------------------------------------------------
# Traces: assert_conforms


def _counter_trace(path: Path, xs: list[int]) -> None:
    header = TraceHeader(model="counter", constants={"N": 3, "LIMIT": 2}, init={"x": 0})
    write_trace(str(path), header, [Event("inc", {}, {"x": x}) for x in xs])


def test_assert_conforms(pytester: pytest.Pytester, counter: Path) -> None:
    _counter_trace(pytester.path / "ok.jsonl", [1, 2])
    _counter_trace(pytester.path / "skips.jsonl", [1, 3])
    _counter_trace(pytester.path / "overflows.jsonl", [1, 2, 3])
    pytester.makepyfile(test_traces="""
        from gpcheck.checker.api.testing import assert_conforms

        def test_ok():
            report = assert_conforms("ok.jsonl", "counter.gpspec")
            assert report.conforms and report.events == 2

        def test_overflow_without_properties():
            assert_conforms("overflows.jsonl", "counter.gpspec", check_properties=False)

        def test_skips():
            assert_conforms("skips.jsonl", "counter.gpspec")

        def test_overflows():
            assert_conforms("overflows.jsonl", "counter.gpspec", consts={"LIMIT": 2})
    """)
    result = run(pytester, "--gpcheck-itf", "itf")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines([
        "gpcheck: expected skips.jsonl to conform to counter, but it diverges",
        "diverges at skips.jsonl:3: 'inc' cannot produce the observed state from any candidate",
        "reproduce with:",
        "  gpcheck replay skips.jsonl --model counter.gpspec",
    ])
    result.stdout.fnmatch_lines([
        "gpcheck: expected overflows.jsonl to conform to counter, but it violates bounded",
        "counterexample for bounded (invariant), the behaviour reconstructed from the trace:",
        "    3  inc",
        "         x: 2 -> 3",
        "  gpcheck replay overflows.jsonl --model counter.gpspec --const LIMIT=2",
        "counterexample written as ITF: itf/test_traces.py_test_overflows__bounded.itf.json",
    ])
    code, out = reproduce("gpcheck replay overflows.jsonl --model counter.gpspec --const LIMIT=2")
    assert code == 1 and "invariant bounded: violated" in out


def test_assert_conforms_in_memory(counter: Path, pytester: pytest.Pytester) -> None:
    from gpcheck.checker.api.testing import assert_conforms

    header = TraceHeader(model="counter", constants={}, init={"x": 0})
    report = assert_conforms((header, [Event("inc", {}, {"x": 1})]), "counter.gpspec")
    assert report.conforms
    with pytest.raises(GpcheckAssertionError) as info:
        assert_conforms((header, [Event("inc", {}, {"x": 2})]), "counter.gpspec")
    assert info.value.command is None
    assert "reproduce: the trace or the model is not a file" in info.value.message


# ---------------------------------------------------------------------------------------------
# Observation traces: assert_observations


def _kernel(corr: int, stream: int, launch: int, start: int, end: int) -> list[Event]:
    args, meta = {"stream": stream, "priority": 0}, {"corr": corr, "name": f"k{corr}"}
    return [Event("launch", args, None, launch, meta), Event("start", args, None, start, meta),
            Event("end", args, None, end, meta)]


def test_assert_observations(pytester: pytest.Pytester) -> None:
    header = TraceHeader(None, {})
    clean = _kernel(1, 0, 0, 10, 20) + _kernel(2, 0, 1, 20, 30)
    twice = clean + [Event("end", {"stream": 0, "priority": 0}, None, 31, {"corr": 2, "name": "k2"})]
    write_trace(str(pytester.path / "clean.jsonl"), header, clean)
    write_trace(str(pytester.path / "twice.jsonl"), header, twice)
    pytester.makepyfile(test_gpcheck_observations="""
        from gpcheck.checker.api.testing import assert_observations

        def test_clean():
            report = assert_observations("clean.jsonl")
            assert report.kernels == 2

        def test_twice():
            assert_observations("twice.jsonl", ["exactly_once", "stream_order"])
    """)
    result = run(pytester, "--gpcheck-itf", "itf")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "gpcheck: expected the observation properties of twice.jsonl to hold, but exactly_once is violated",
        "*exactly_once*violated*",
        "*completed 2 times*",
        "reproduce with:",
        "  gpcheck check twice.jsonl --property exactly_once --property stream_order",
    ])
    assert not (pytester.path / "itf").exists()  # no model, no counterexample to write
    code, out = reproduce("gpcheck check twice.jsonl --property exactly_once --property stream_order")
    assert code == 1 and "completed 2 times" in out


def test_check_trace_in_memory_and_thresholds() -> None:
    from gpcheck.checker import check_trace

    events = _kernel(1, 0, 0, 10, 20) + _kernel(2, 0, 1, 20, 30)
    report = check_trace((TraceHeader(None, {}), events), ["stream_order"], max_gap_ns=5)
    assert [r.name for r in report.results] == ["stream_order"] and report.exit_code == 0
    with pytest.raises(UsageError, match="unknown observation property"):
        check_trace((TraceHeader(None, {}), events), ["no_such"])


# ---------------------------------------------------------------------------------------------
# Command lines and file names


def test_commands_quote_and_name_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tmp_path / "my models" / "c.gpspec"
    spec.parent.mkdir()
    spec.write_text(COUNTER, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert verify_command(spec, "bounded", "pdr", {"N": 8}) == \
        "gpcheck verify 'my models/c.gpspec' --const N=8 --property bounded --engine pdr"
    assert verify_command("reef_rewind", "no_loss", timeout=2.5) == \
        "gpcheck verify reef_rewind --property no_loss --engine explicit --timeout 2.5"
    assert replay_command("t.jsonl", None, {"N": 2}, max_hidden=0) == "gpcheck replay t.jsonl --const N=2 --max-hidden 0"
    assert check_command("t.jsonl", max_inversion_ns=1000) == "gpcheck check t.jsonl --max-inversion 1000"
    assert check_command(None) is None
    assert safe_name("tests/x.py::test_a[N=4-CAP=1]") == "tests_x.py_test_a_N=4-CAP=1"
    assert_violated("reef_flag_race", "preemption_effective")  # a bundled model by name, from anywhere (a small one)

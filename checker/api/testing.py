"""Property assertions for test suites: `assert_holds`, `assert_violated`, `assert_verdict`,
`assert_conforms` (a trace against a model), `assert_observations` (a trace on its own).

    from gpcheck.checker.api.testing import assert_holds, assert_violated
    assert_holds("cwsr", "no_reexecution", engine="pdr", const={"N": 4})
    assert_violated("reef_rewind", "no_reexecution")

Each returns what it checked (a `Result`, a `ReplayReport`, an `ObservationReport`) and raises
`GpcheckAssertionError` (an `AssertionError`) when the verdict is not the expected one. The
message is complete on its own: the verdict, the counterexample step by step as `gpcheck verify`
prints it (action, arguments, changed variables), and the command line that reproduces it. The
pytest plugin (checker/cli/pytest_plugin.py) adds fixtures, a constants marker and `--gpcheck-itf`;
these functions need no pytest and work under any test runner.

A model that is not a bug in the test (a missing file, a spec error, an unknown property) raises
the usual `spec.GpcheckError`, not an assertion failure.

NOTE(testing-cache): the explicit engine explores the whole state space whichever properties
are asked for, so assertions on the same instance (same file contents, same constants, same
limits) share one search: the first runs every property and later ones read the cached report.
Runs with a timeout and the Z3 engines are never cached (their outcome may vary)."""

from __future__ import annotations

import re
import warnings
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Hashable, Iterable, Mapping, TypeVar

from gpcheck.checker.engines.explicit import explicit
from gpcheck.checker.api.model_api import ENGINES, load, verify
from gpcheck.checker.report.render import counterexample_lines, fmt
from gpcheck.checker.api.reproduce import replay_command, verify_command
from gpcheck.checker.core.verdict import Counterexample, Report, Result, Verdict
from gpcheck.spec import ir
from gpcheck.spec.errors import UsageError
from gpcheck.spec.load import resolve_spec_path

if TYPE_CHECKING:
    from gpcheck.traces.format import Event, TraceHeader
    from gpcheck.traces.observe import ObservationReport
    from gpcheck.traces.replay_report import ReplayReport

ModelArg = str | Path | ir.Model
"""A spec file, a bundled model name, or an already loaded model instance."""

EXPECTED = ir.EXPECTABLE_VERDICTS  # the words of an `expect` line (covers: reached, unreachable)
"""What `assert_verdict` accepts: `holds` means proved or holds_to_bound (as `expect` in gpspec)."""


class GpcheckAssertionError(AssertionError):
    """A property or trace did not get the expected verdict.

    `str(e)` is the full human message. `result` is the offending `Result` (None for a trace that
    diverges), `model` the instance checked, `command` the reproducing command line (None when
    the model or trace is not a file), `counterexamples` every `(property, Counterexample)`
    the failure has, for `write_itf` (none for an observation check, which has no model)."""

    def __init__(
        self,
        message: str,
        *,
        model: ir.Model | None = None,
        result: Result | None = None,
        command: str | None = None,
        counterexamples: Iterable[tuple[str, Counterexample]] = (),
    ):
        super().__init__(message)
        self.message = message
        self.model = model
        self.result = result
        self.command = command
        self.counterexamples = list(counterexamples)

    def write_itf(self, directory: str | Path, stem: str) -> list[Path]:
        """Write each counterexample as `DIRECTORY/STEM__PROPERTY.itf.json` (ITF, ADR-015);
        returns the paths written."""
        from gpcheck.traces.itf import write_itf

        if not self.counterexamples or self.model is None:
            return []
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for prop, cex in self.counterexamples:
            path = out / f"{safe_name(stem)}__{safe_name(prop)}.itf.json"
            write_itf(cex, self.model, str(path), description=f"counterexample for {prop} of {self.model.name}"
                      + (f"; reproduce: {self.command}" if self.command else ""))
            paths.append(path)
        return paths


def safe_name(text: str) -> str:
    """`text` with every character a file name should not hold replaced by `_`."""
    return re.sub(r"[^A-Za-z0-9._=+-]+", "_", text).strip("_") or "_"


# ---------------------------------------------------------------------------------------------
# Verdict assertions


def assert_holds(
    model: ModelArg,
    prop: str,
    *,
    engine: str = "explicit",
    consts: Mapping[str, int] | None = None,
    const: Mapping[str, int] | None = None,  # deprecated spelling of consts
    proved: bool = False,
    max_states: int | None = None,
    timeout: float | None = None,
    depth: int | None = None,
) -> Result:
    """Assert that `prop` holds on the instance of `model` with constants `const`, checked by
    `engine` (explicit, bmc, kind, pdr, auto). Holding to a bound (BMC, or a search inside a
    `constraint`) counts unless `proved=True`."""
    __tracebackhide__ = True
    const = _consts(consts, const)
    return assert_verdict(model, prop, "proved" if proved else "holds", engine=engine, consts=const,
                          max_states=max_states, timeout=timeout, depth=depth)


def assert_violated(
    model: ModelArg,
    prop: str,
    *,
    engine: str = "explicit",
    consts: Mapping[str, int] | None = None,
    const: Mapping[str, int] | None = None,  # deprecated spelling of consts
    max_states: int | None = None,
    timeout: float | None = None,
    depth: int | None = None,
) -> Result:
    """Assert that `engine` finds a counterexample to `prop`; the `Result` returned carries it."""
    __tracebackhide__ = True
    const = _consts(consts, const)
    return assert_verdict(model, prop, "violated", engine=engine, consts=const,
                          max_states=max_states, timeout=timeout, depth=depth)


def assert_verdict(
    model: ModelArg,
    prop: str,
    expected: str | Verdict,
    *,
    engine: str = "explicit",
    consts: Mapping[str, int] | None = None,
    const: Mapping[str, int] | None = None,  # deprecated spelling of consts
    max_states: int | None = None,
    timeout: float | None = None,
    depth: int | None = None,
) -> Result:
    """Assert the verdict of `prop`: `expected` is a `Verdict` or one of EXPECTED (the words of a
    gpspec `expect` line, so `model.expectations` can be checked as they are)."""
    __tracebackhide__ = True
    const = _consts(consts, const)
    want = expected.value if isinstance(expected, Verdict) else expected
    if want not in EXPECTED:
        raise UsageError(f"expected verdict {expected!r}: use one of {', '.join(EXPECTED)}")
    inst = _instance(model, const)
    result = _result(inst, model, const, prop, engine, max_states, timeout, depth)
    if matches(result.verdict, want):
        return result
    command = verify_command(inst if isinstance(model, ir.Model) else model, prop, engine, const,
                             max_states=max_states, timeout=timeout, depth=depth)
    cexs = [(prop, result.counterexample)] if result.counterexample is not None else []
    raise GpcheckAssertionError(verdict_message(inst, result, want, command), model=inst, result=result,
                                command=command, counterexamples=cexs)


def matches(verdict: Verdict, expected: str) -> bool:
    """Whether `verdict` is what an `expect` word (EXPECTED) asks for."""
    if expected == "holds":
        return verdict.holds
    return verdict.value == expected


def verdict_message(model: ir.Model, r: Result, expected: str, command: str | None) -> str:
    """The text of a failed verdict assertion (see the module doc)."""
    want = {"holds": "to hold", "proved": "to be proved", "holds_to_bound": "to hold to a bound",
            "violated": "to be violated", "unknown": "to be unknown"}[expected]
    lines = [f"gpcheck: expected {r.property} {want} in {model.name}, but {_got(r)}",
             f"model {model.name} ({model.file})" + _consts_text(model.const_values)]
    if r.reason and r.verdict is not Verdict.VIOLATED:
        lines.append(f"reason: {r.reason}")
    if r.counterexample is not None:
        lines.append(f"counterexample for {r.property} ({r.kind}):")
        lines += counterexample_lines(r.counterexample)
        if r.kind == "range" and r.detail.get("action"):
            args = ", ".join(f"{a}={fmt(v)}" for a, v in r.detail.get("args", {}).items())
            lines.append(f"  then {r.detail['action']}({args}) fails: {r.detail['error']} "
                         f"at {r.detail.get('location')}")
    lines.append("reproduce with:" if command else "reproduce: the model was not loaded from a file")
    if command:
        lines.append(f"  {command}")
    return "\n".join(lines)


def _got(r: Result) -> str:
    by = f"{r.engine} engine"
    if r.verdict is Verdict.VIOLATED and r.counterexample is not None:
        loop = ", a lasso" if r.counterexample.loop is not None else ""
        return f"it is violated ({by}, {r.counterexample.length} steps{loop})"
    if r.verdict is Verdict.HOLDS_TO_BOUND:
        return f"it holds only to bound {r.bound} ({by})" if r.bound is not None else f"it holds only to a bound ({by})"
    if r.verdict is Verdict.PROVED:
        return f"it is proved ({by})"
    return f"the verdict is unknown ({by})"


def _consts_text(values: Mapping[str, int]) -> str:
    return ("  constants: " + " ".join(f"{k}={v}" for k, v in values.items())) if values else ""


# ---------------------------------------------------------------------------------------------
# Trace assertions


def assert_conforms(
    trace: str | Path | tuple[TraceHeader, Iterable[Event]],
    model: ModelArg | None = None,
    *,
    consts: Mapping[str, int] | None = None,
    const: Mapping[str, int] | None = None,  # deprecated spelling of consts
    check_properties: bool = True,
    properties: bool | None = None,  # deprecated spelling of check_properties
    max_hidden: int | None = None,
    max_candidates: int | None = None,
    format: str | None = None,
) -> ReplayReport:
    """Assert that `trace` is a behaviour of `model` (see `checker.replay`) and, unless
    `check_properties=False`, that none of the model's invariants and transition properties is
    violated on it. A property whose verdict depends on values the trace does not observe
    (unknown) does not fail the assertion; read it from the returned report."""
    __tracebackhide__ = True
    const = _consts(consts, const)
    from gpcheck.checker.api.trace_api import replay_with_model
    from gpcheck.traces.replay_report import render_text

    report, inst = replay_with_model(trace, model, const, max_hidden=max_hidden,
                                     max_candidates=max_candidates, format=format)
    if properties is not None:
        warnings.warn("assert_conforms(properties=...) is deprecated: use check_properties= (`properties` "
                      "names a list of properties elsewhere)", DeprecationWarning, stacklevel=2)
        check_properties = bool(properties)
    violated = [r for r in report.results if r.verdict is Verdict.VIOLATED] if check_properties else []
    if report.conforms is True and not violated:
        return report
    path = None if isinstance(trace, tuple) else trace
    spec: ModelArg | None = inst if isinstance(model, ir.Model) else model
    command = replay_command(path, spec, const, max_hidden=max_hidden, max_candidates=max_candidates, format=format)
    what = {True: "it violates " + ", ".join(r.property for r in violated), False: "it diverges",
            None: "replay could not decide it"}[report.conforms]
    lines = [f"gpcheck: expected {report.trace} to conform to {inst.name}, but {what}", render_text(report)]
    for r in violated:
        if r.counterexample is not None:
            lines.append(f"counterexample for {r.property} ({r.kind}), the behaviour reconstructed from the trace:")
            lines += counterexample_lines(r.counterexample)
    lines.append("reproduce with:" if command else "reproduce: the trace or the model is not a file")
    if command:
        lines.append(f"  {command}")
    cexs = [(r.property, r.counterexample) for r in violated if r.counterexample is not None]
    raise GpcheckAssertionError("\n".join(lines), model=inst, result=violated[0] if violated else None,
                                command=command, counterexamples=cexs)


def assert_observations(
    trace: str | Path | tuple[TraceHeader, Iterable[Event]],
    properties: Iterable[str] | None = None,
    *,
    max_inversion_ns: int | None = None,
    max_gap_ns: int | None = None,
    gap_threshold_ns: int | None = None,
    overlap_tolerance_ns: int | None = None,
) -> ObservationReport:
    """Assert that no model-free observation property of `trace` is violated (see
    `checker.check_trace`: exactly-once execution, in-stream order, and, with a bound given,
    priority inversion windows and time-slice gaps). Informational and unknown results do not
    fail the assertion; read them from the returned report."""
    __tracebackhide__ = True
    from gpcheck.checker.api.reproduce import check_command
    from gpcheck.checker.api.trace_api import check_trace
    from gpcheck.traces.observe import render_text

    props = list(properties) if properties is not None else None
    report = check_trace(trace, props, max_inversion_ns=max_inversion_ns, max_gap_ns=max_gap_ns,
                         gap_threshold_ns=gap_threshold_ns, overlap_tolerance_ns=overlap_tolerance_ns)
    violated = [r.name for r in report.results if r.status == "violated"]
    if not violated:
        return report
    command = None
    if not isinstance(trace, tuple) and overlap_tolerance_ns is None:  # no flag for the tolerance
        command = check_command(trace, props, max_inversion_ns=max_inversion_ns, max_gap_ns=max_gap_ns,
                                gap_threshold_ns=gap_threshold_ns)
    lines = [f"gpcheck: expected the observation properties of {report.trace} to hold, but "
             f"{', '.join(violated)} {'is' if len(violated) == 1 else 'are'} violated", render_text(report)]
    lines.append("reproduce with:" if command else "reproduce: no command line (events in memory, or a "
                 "tolerance the command has no flag for)")
    if command:
        lines.append(f"  {command}")
    raise ObservationAssertionError("\n".join(lines), report=report, command=command)


class ObservationAssertionError(GpcheckAssertionError):
    """An observation property of a trace is violated: `report` is the whole
    `ObservationReport`, `command` the `gpcheck check` line that shows it (or None)."""

    def __init__(self, message: str, *, report: ObservationReport, command: str | None):
        super().__init__(message, command=command)
        self.report = report


# ---------------------------------------------------------------------------------------------
# Loading and running, cached (NOTE(testing-cache))

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _Lru(Generic[K, V]):
    """A small least-recently-used map."""

    def __init__(self, size: int):
        self.size = size
        self.data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self.data.get(key)
        if value is not None:
            self.data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self.data[key] = value
        self.data.move_to_end(key)
        while len(self.data) > self.size:
            self.data.popitem(last=False)


_MODELS: _Lru[tuple[Any, ...], ir.Model] = _Lru(32)
_REPORTS: _Lru[tuple[Any, ...], tuple[ir.Model, Report]] = _Lru(32)


def clear_cache() -> None:
    """Forget every cached model instance and explicit-engine report."""
    _MODELS.data.clear()
    _REPORTS.data.clear()


def _file_key(spec: str | Path) -> tuple[str, int, int]:
    path = resolve_spec_path(spec)
    st = path.stat()
    return (str(path.resolve()), st.st_mtime_ns, st.st_size)


def _consts(consts: Mapping[str, int] | None, const: Mapping[str, int] | None) -> Mapping[str, int] | None:
    """`consts=` (the API's word, as in `verify` and `load`); `const=` still works, with a
    DeprecationWarning (issue 17: one vocabulary)."""
    if const is None:
        return consts
    if consts is not None:
        raise UsageError("give consts= only (const= is its deprecated spelling)")
    warnings.warn("const= is deprecated: use consts= (as in gpcheck's verify and load)", DeprecationWarning,
                  stacklevel=3)
    return const


def _instance(model: ModelArg, const: Mapping[str, int] | None) -> ir.Model:
    if isinstance(model, ir.Model):
        return load(model, const)
    key = (_file_key(model), str(model), tuple(sorted((const or {}).items())))
    inst = _MODELS.get(key)
    if inst is None:
        inst = load(model, const)
        _MODELS.put(key, inst)
    return inst


def _result(
    inst: ir.Model, model: ModelArg, const: Mapping[str, int] | None, prop: str, engine: str,
    max_states: int | None, timeout: float | None, depth: int | None,
) -> Result:
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r} (engines: {', '.join(ENGINES)})")
    explicit.select_properties(inst, [prop])  # UsageError for a property the model lacks
    if engine != "explicit" or timeout is not None:
        report = verify(inst, properties=[prop], engine=engine, max_states=max_states, timeout=timeout, depth=depth)
        return report.result(prop)
    key = (id(inst), max_states)
    hit = _REPORTS.get(key)
    if hit is None or hit[0] is not inst:
        hit = (inst, verify(inst, engine="explicit", max_states=max_states))
        _REPORTS.put(key, hit)
    return hit[1].result(prop)

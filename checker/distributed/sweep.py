"""Parameter sweeps: one model checked at every combination of constant values, each
combination an independent `verify` run on a cluster (checker/distributed/cluster.py).

    gpcheck sweep rewind.gpspec --const N=2..6 --const CAP=1,2

Why: the researchers' questions are over families of instances ("for which CAP, N and arrival
count does the rewind re-execute, and how long is the shortest such behaviour?"); a sweep answers
them as a table whose every cell is exactly what `gpcheck verify --json` says of that instance.

Every combination is type-checked here, before anything is sent, so a bad value is a located
error (exit 2) and not a failed task. A worker receives the spec's text (not its path), so a
remote cluster needs gpcheck installed but not the user's files."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from gpcheck.checker.api.model_api import ENGINES, verify
from gpcheck.checker.distributed.cluster import Cluster
from gpcheck.checker.engines.explicit.explicit import select_properties
from gpcheck.checker.core.verdict import Result, Verdict
from gpcheck.spec.errors import ConstantError, Diagnostic, Severity, UsageError
from gpcheck.spec.load import parse_const_value, resolve_spec_path
from gpcheck.spec.parser import parse_spec
from gpcheck.spec.typecheck import check_spec

MAX_COMBINATIONS = 100_000


def parse_values(item: str) -> tuple[str, list[int]]:
    """`"N=2..6"` → ("N", [2, 3, 4, 5, 6]); `"CAP=1,2,4"`, `"B=true,false"` and mixtures such as
    `"N=1,4..6"` too. Values keep the order given; repeats are dropped."""
    name, sep, text = item.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier() or not text.strip():
        _bad(item, "expected NAME=VALUES (e.g. N=2..6 or CAP=1,2,4)")
    values: list[int] = []
    for part in text.split(","):
        lo, dots, hi = part.strip().partition("..")
        if dots:
            a, b = parse_const_value(item, lo), parse_const_value(item, hi)
            if a > b:
                _bad(item, f"empty range {a}..{b}")
            values.extend(range(a, b + 1))
        else:
            values.append(parse_const_value(item, part))
    return name, list(dict.fromkeys(values))


def _bad(item: str, message: str) -> None:
    raise ConstantError([Diagnostic(Severity.ERROR, None, f"--const {item!r}: {message}")])


def combinations(grid: Mapping[str, Sequence[int]]) -> list[dict[str, int]]:
    """Every combination, the last constant varying fastest (as nested loops in given order)."""
    names = list(grid)
    return [dict(zip(names, vals)) for vals in itertools.product(*(grid[n] for n in names))]


@dataclass(frozen=True)
class Instance:
    """Everything a worker needs to check one combination: plain data, cheap to send."""

    file: str
    source: str
    constants: dict[str, int]
    properties: tuple[str, ...] | None
    engine: str
    max_states: int | None = None
    timeout: float | None = None
    depth: int | None = None
    kinds: tuple[tuple[str, str], ...] = ()  # (property, kind) in verify's order, for failed runs


@dataclass
class Run:
    """One combination's outcome: `results` are exactly `gpcheck verify --json`'s results."""

    constants: dict[str, int]
    results: list[dict[str, Any]]
    seconds: float | None
    exit_code: int
    error: str | None = None  # why the cluster could not check it (the results are then unknown)
    report: dict[str, Any] = field(default_factory=dict, repr=False)  # the whole verify JSON

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"constants": self.constants, "results": self.results,
                               "seconds": None if self.seconds is None else round(self.seconds, 4),
                               "exit_code": self.exit_code}
        if self.report.get("states") is not None:
            out["states"] = self.report["states"]
        if self.error:
            out["error"] = self.error
        return out


def plan_sweep(spec: str, grid: Mapping[str, Sequence[int]], properties: Sequence[str] | None,
               engine: str, max_states: int | None = None, timeout: float | None = None,
               depth: int | None = None) -> list[Instance]:
    """One `Instance` per combination, each type-checked (SpecError, UsageError on bad input)."""
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r} (engines: {', '.join(ENGINES)})")
    combos = combinations(grid)
    if len(combos) > MAX_COMBINATIONS:
        raise UsageError(f"{len(combos):,} combinations: more than {MAX_COMBINATIONS:,}; sweep fewer values")
    path = resolve_spec_path(spec)
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{path}: cannot read: {e}") from None
    file = str(path) if Path(spec).exists() else spec  # as load_spec names it
    ast = parse_spec(source, file)
    out = []
    for consts in combos:
        model = check_spec(ast, consts, {file: source})
        wanted = select_properties(model, properties)
        order = model.property_names() + ["deadlock", "range"]
        kinds = tuple((n, _kind(model, n)) for n in order if n in wanted)
        out.append(Instance(file, source, consts, tuple(properties) if properties else None, engine,
                            max_states, timeout, depth, kinds))
    return out


def _kind(model: Any, name: str) -> str:
    if name in ("deadlock", "range"):
        return name
    for kind, props in (("invariant", model.invariants), ("transition", model.transitions),
                        ("liveness", model.liveness), ("latency", model.latencies)):
        if any(p.name == name for p in props):
            return kind
    raise AssertionError(name)


def verify_instance(inst: Instance) -> dict[str, Any]:
    """Run on a worker: `verify` of one combination; the report as `gpcheck verify --json`.
    `seconds` counts type-checking and checking, not parsing: a fresh worker builds the parser
    on its first parse, which would otherwise be charged to whichever combination came first."""
    ast = parse_spec(inst.source, inst.file)
    started = time.monotonic()
    model = check_spec(ast, inst.constants, {inst.file: inst.source})
    report = verify(model, None, inst.properties, inst.engine, inst.max_states, inst.timeout, inst.depth)
    return {"report": report.to_json(), "exit_code": report.exit_code, "seconds": time.monotonic() - started}


def failed_run(inst: Instance, reason: str) -> Run:
    """A combination the cluster could not check: every wanted property unknown, with the reason."""
    results = [Result(name, kind, Verdict.UNKNOWN, inst.engine, reason=reason).to_json()
               for name, kind in inst.kinds]
    return Run(inst.constants, results, None, 3, error=reason)


def run_sweep(cluster: Cluster, instances: Sequence[Instance]) -> Iterator[tuple[int, Run]]:
    """Check every instance on `cluster`; yield (position, run) as each finishes."""
    for outcome in cluster.run(verify_instance, instances):
        inst = instances[outcome.index]
        if outcome.value is None:
            yield outcome.index, failed_run(inst, outcome.error or "no result")
            continue
        v = outcome.value
        yield outcome.index, Run(inst.constants, v["report"]["results"], v["seconds"], v["exit_code"],
                                 report=v["report"])


def combined_exit_code(codes: Sequence[int]) -> int:
    """As `gpcheck verify` over all runs: 1 something violated, 3 else something unknown, 0."""
    if 1 in codes:
        return 1
    if 3 in codes:
        return 3
    return 0

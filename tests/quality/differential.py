"""Differential testing: every engine against the reference semantics (tests/reference/).

For one spec, `compare` runs the reference's exhaustive search, then each engine through the
public API (`checker.verify`, the JSON shape of `--json`), and lists every disagreement:
- a crash or a bad-input error (exit 2) on a well-formed spec;
- a missing result, or a state count (explicit, complete search) different from the reference's;
- `proved` for a property the reference finds violated, or under a constraint that cut the
  reachable states; `holds_to_bound` for a violated property when the bound reaches the
  reference's shortest counterexample (or, for liveness, the length of a violating lasso the
  reference constructs: an upper bound on the shortest);
- `violated` with a counterexample that the reference replay (tests/reference/replay.py) rejects,
  or, where the engine claims a shortest counterexample, one longer than the reference's.
`unknown` is accepted (it must carry a reason) and counted.
Latency properties (NOTE(latency): elapsed time in the timed semantics; a spec without `time`
has every action `0..`) are judged against the discrete-time reference of timed specs
(tests/reference/timed.py): the explicit engine's min, max and verdict must be the reference's;
another engine's `violated` needs a reference max above `within` (or unbounded) and its `proved`
a reference verdict that holds.

Long run (figures: specs, engine runs, verdicts by kind, disagreements; each disagreement is
shrunk by hypothesis and appended to --findings):

    python -m tests.quality.differential --specs 20000 [--seed 1] [--findings FILE] [--cli]

With --cli each engine runs as `gpcheck verify SPEC --json` in-process, which also checks that
no engine prints a traceback or exits 2 on a well-formed spec and that the exit code matches
the verdicts (and --timeout bounds every engine, its encoding included).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hseed

from gpcheck.checker import GpcheckError, verify
from gpcheck.spec import load_source
from tests.reference.explore import Exploration, explore
from tests.reference.replay import check_counterexample
from tests.reference.semantics import Model, load

ENGINES = ("explicit", "bmc", "kind", "pdr", "auto")
# Engines whose violations of safety properties (invariant, transition, deadlock, range) are
# shortest counterexamples, by their own documentation (checker/engines/explicit/explicit.py, checker/engines/smt/*.py).
SHORTEST = {"explicit", "bmc", "kind", "pdr"}
SAFETY = {"invariant", "transition", "deadlock", "range"}
ENGINE_TIMEOUT = 20.0


@dataclass
class Tally:
    """Figures of a differential run."""

    specs: int = 0
    engine_runs: int = 0
    verdicts: collections.Counter = field(default_factory=collections.Counter)
    disagreements: int = 0

    def line(self) -> str:
        v = ", ".join(f"{k}={n}" for k, n in sorted(self.verdicts.items()))
        return f"specs={self.specs} engine_runs={self.engine_runs} disagreements={self.disagreements} verdicts: {v}"


def reference(text: str) -> tuple[Model, Exploration]:
    m = load(text)
    return m, explore(m)


def _kinds(m: Model) -> dict[str, str]:
    out = {n: "invariant" for n, _ in m.invariants}
    out |= {n: "transition" for n, _ in m.transitions}
    out |= {n: "liveness" for n, *_ in m.liveness}
    out |= {n: "latency" for n, *_ in m.latencies}
    if not m.allow_deadlock:  # with `allow deadlock` there is no deadlock result at all
        out["deadlock"] = "deadlock"
    return out | {"range": "range"}


def compare(text: str, engines: tuple[str, ...] = ENGINES, tally: Tally | None = None,
            timeout: float = ENGINE_TIMEOUT, cli: bool = False) -> list[str]:
    """Every disagreement between the reference and `engines` on spec `text`; with `cli`, each
    engine runs as `gpcheck verify SPEC --json` in-process (see `_verify_cli`)."""
    m, ex = reference(text)
    tally = tally if tally is not None else Tally()
    tally.specs += 1
    problems: list[str] = []
    try:
        model = load_source(text, "rnd.gpspec")
    except GpcheckError as err:  # the reference runs it: a generator outside gpcheck's limits, or a checker bug
        tally.disagreements += 1
        return [f"load: gpcheck rejects a spec the reference runs: {str(err).splitlines()[0]}"]
    depth = ex.diameter + 2
    lat = timed_latencies(text) if m.latencies and not ex.constrained else {}
    for engine in engines:
        tally.engine_runs += 1
        engine_depth = depth if engine == "bmc" else None
        engine_timeout = None if engine == "explicit" else timeout
        if cli:
            report, trouble = _verify_cli(text, engine, engine_depth, engine_timeout)
            problems += [f"{engine}: {p}" for p in trouble]
            if report is None:
                tally.verdicts["cli:stopped_without_report"] += not trouble
                continue
        else:
            try:
                report = verify(model, engine=engine, depth=engine_depth, timeout=engine_timeout).to_json()
            except Exception as err:  # noqa: BLE001 - any exception is a finding on a well-formed spec
                tb = traceback.format_exception_only(type(err), err)[-1].strip()
                problems.append(f"{engine}: raised {tb}")
                continue
        problems += [f"{engine}: {p}" for p in _judge(m, ex, engine, report, tally, lat)]
    tally.disagreements += len(problems)
    return problems


def _verify_cli(text: str, engine: str, depth: int | None, timeout: float | None) -> tuple[dict | None, list[str]]:
    """Run `gpcheck verify SPEC --engine E --json` in-process (gpcheck.checker.cli.command.main, under the
    command's budget, so --timeout stops the engine wherever it is) and check what the README
    promises of a well-formed spec: no traceback and no internal error on stderr, exit 0, 1 or 3
    (never 2), and the exit code the verdicts call for (1 something violated, else 3 something
    unknown, else 0). Returns the JSON report (None when the run stopped at its timeout before
    any report, which the README allows) and the problems seen."""
    from gpcheck.checker.cli.command import main as cli_main

    with tempfile.TemporaryDirectory(prefix="gpdiff") as tmp:
        path = Path(tmp) / "rnd.gpspec"
        path.write_text(text)
        argv = ["verify", str(path), "--engine", engine, "--json"]
        argv += ["--depth", str(depth)] if depth is not None else []
        argv += ["--timeout", str(int(timeout))] if timeout is not None else []
        raw = io.BytesIO()  # the JSON is written as bytes to sys.stdout.buffer
        out, err = io.TextIOWrapper(raw, encoding="utf-8", write_through=True), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_main(argv)
        out.flush()
        stdout = raw.getvalue().decode("utf-8")
        if path.read_text() != text:
            return None, ["the spec file was modified"]
    stderr = err.getvalue()
    problems = []
    if "Traceback" in stderr or "internal error" in stderr:
        problems.append(f"stderr: {stderr.strip().splitlines()[-1][:300]}")
    if code not in (0, 1, 3):
        problems.append(f"exit {code}: {stderr.strip()[-300:]}")
    try:
        report = json.loads(stdout) if stdout.strip() else None
    except ValueError as e:
        return None, problems + [f"stdout is not JSON ({e})"]
    if report is None:
        if code != 3 or "timeout" not in stderr:
            problems.append(f"no report, exit {code}: {stderr.strip()[-300:]}")
        return None, problems
    # a liveness property an engine does not check (kind, pdr) and the user did not name keeps out
    # of the exit code (`detail.not_checked`, README "Exit codes")
    verdicts = {r["verdict"] for r in report["results"] if not (r.get("detail") or {}).get("not_checked")}
    want = 1 if "violated" in verdicts else 3 if "unknown" in verdicts else 0
    if code != want:
        problems.append(f"exit {code}, the verdicts call for {want}")
    return report, problems


def _judge(m: Model, ex: Exploration, engine: str, report: dict[str, Any], tally: Tally,
           lat: dict[str, RefLatency] | None = None) -> list[str]:
    problems: list[str] = []
    lat = lat or {}
    kinds = _kinds(m)
    results = {r["property"]: r for r in report["results"]}
    if set(results) != set(kinds):
        problems.append(f"results for {sorted(results)}, expected {sorted(kinds)}")
    if engine == "explicit" and report.get("states") is not None and report["states"] != len(ex.states) \
            and "symmetry" not in report:  # a reduced count is of orbits (tests/unit/test_symmetry.py)
        problems.append(f"{report['states']} states, reference {len(ex.states)}")
    for name, r in results.items():
        kind = kinds.get(name)
        if kind is None:
            continue
        if kind == "latency":
            tally.verdicts[f"latency:{r['verdict']}"] += 1
            problems += _judge_latency(m, engine, name, r, lat.get(name), ex.constrained)
            continue
        ref = ex.outcomes[name]
        verdict = r["verdict"]
        tally.verdicts[f"{kind}:{verdict}"] += 1
        said = f"{name} ({kind}) {verdict}"
        if ref is None:  # left open by the description: only the counterexample is judged
            why = check_counterexample(m, kind, name, r.get("counterexample")) if verdict == "violated" else None
            if why:
                problems.append(f"{said}: invalid counterexample: {why}")
            continue
        where = f"reference: {'violated' if ref.violated else 'holds'}" + (
            f" in {ref.shortest} steps" if ref.shortest is not None else "")
        if r["kind"] != kind:
            problems.append(f"{name}: kind {r['kind']}, expected {kind}")
        if verdict == "violated":
            why = check_counterexample(m, kind, name, r.get("counterexample"))
            if why:
                problems.append(f"{said}: invalid counterexample: {why}; {where}")
            elif kind in SAFETY and r.get("engine") in SHORTEST and ref.shortest is not None:
                length = len(r["counterexample"]["steps"]) - 1
                if length != ref.shortest:
                    problems.append(f"{said} in {length} steps, claimed shortest; {where}")
        elif verdict == "proved":
            if ref.violated:
                problems.append(f"{said} ({r.get('reason')}); {where}")
            elif ex.constrained:
                problems.append(f"{said} although the constraint cut the reachable states")
        elif verdict == "holds_to_bound":
            bound = r.get("bound")
            if ref.violated:
                reach = ref.lasso_within if kind == "liveness" else ref.shortest
                if bound is None or reach is None or bound >= reach:
                    problems.append(f"{said} to bound {bound} ({r.get('reason')}); {where}")
        elif verdict == "unknown":
            if not r.get("reason"):
                problems.append(f"{said} without a reason")
        else:
            problems.append(f"{said}: not a verdict")
    return problems


@dataclass(frozen=True)
class RefLatency:
    """One latency by the discrete-time reference (tests/reference/timed.py): `max` None is unbounded."""

    starts: int
    min: int | None
    max: int | None

    def verdict(self, within: int | None, constrained: bool) -> str:
        if self.starts and (self.max is None or (within is not None and self.max > within)):
            return "violated"
        return "holds_to_bound" if constrained else "proved"


def timed_latencies(text: str) -> dict[str, RefLatency]:
    """Every latency of `text` in the one timed semantics, by the reference (tests/reference/timed.py)."""
    from tests.reference.timed import explore as timed_explore
    from tests.reference.timed import load_timed

    return {n: RefLatency(*v) for n, v in timed_explore(load_timed(text)).latencies.items()}


def _judge_latency(m: Model, engine: str, name: str, r: dict[str, Any], ref: Any, constrained: bool) -> list[str]:
    """A latency result against the reference brute force (None: constrained, not judged)."""
    within = next(w for n, _, _, w in m.latencies if n == name)
    verdict = r["verdict"]
    said = f"{name} (latency) {verdict}"
    if verdict == "unknown":
        return [] if r.get("reason") else [f"{said} without a reason"]
    if ref is None:
        return []
    want = ref.verdict(within, constrained)
    if engine == "explicit":
        out = []
        if (r.get("min"), r.get("max")) != (ref.min, ref.max):
            out.append(f"{said}: min/max {r.get('min')}/{r.get('max')}, reference {ref.min}/{ref.max}")
        if verdict != want:
            out.append(f"{said}, reference {want}")
        return out
    if verdict == "violated" and want != "violated":
        return [f"{said}, reference {want} (max {ref.max})"]
    if verdict == "proved" and want == "violated":
        return [f"{said}, reference violated (max {ref.max})"]
    return []


# --------------------------------------------------------------------------- long run
# No `explain` phase: after a failure it traces every line the test runs (sys.settrace before
# Python 3.12), which made shrinking a disagreement take many minutes.
PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)


def _run_chunk(examples: int, chunk_seed: int, tally: Tally, findings: list[tuple[str, list[str]]],
               engines: tuple[str, ...], on_found: Any = None, cli: bool = False) -> None:
    from richgen import rich_spec  # tests/quality is on sys.path (see main)

    failing: dict[str, Any] = {}
    quiet = Tally()

    @hseed(chunk_seed)
    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck),
              print_blob=False, phases=PHASES)
    @given(text=rich_spec())
    def run(text: str) -> None:
        if failing:  # shrinking: only the engines that disagreed, and not counted
            problems = compare(text, failing["engines"], quiet, cli=cli)
        else:
            problems = compare(text, engines, tally, cli=cli)
        if problems:
            if not failing:
                failing["engines"] = tuple(e for e in engines if any(p.startswith(e + ":") for p in problems))
                if on_found is not None:  # reported before shrinking, which can take long
                    on_found(text, problems)
            failing["text"], failing["problems"] = text, problems
            raise AssertionError("\n".join(problems))

    try:
        run()
    except AssertionError:
        findings.append((failing["text"], failing["problems"]))  # the last failing run: the shrunk one
    except Exception as err:  # noqa: BLE001 - e.g. hypothesis's FlakyFailure: the same spec agreed on
        # a second run (state left behind by an earlier run in this process): a finding all the same
        if not failing:
            raise
        findings.append((failing["text"], failing["problems"] + [f"not reproduced on a rerun: {type(err).__name__}"]))


def record_finding(path: Path, text: str, problems: list[str], shrunk: bool = True) -> None:
    """Append a disagreement (shrunk, or as first found) to the shared findings file."""
    how = "shrunk by hypothesis" if shrunk else "as first found, before shrinking"
    with path.open("a") as fh:
        fh.write(f"\n## differential disagreement (tests/quality/differential.py, {how})\n\n")
        fh.write("```\n" + text + "```\n\n")
        fh.writelines(f"- {p}\n" for p in problems)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--specs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--chunk", type=int, default=250, help="specs per hypothesis run (a disagreement ends a chunk)")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--findings", type=Path, default=None, help="append shrunk disagreements here")
    ap.add_argument("--cli", action="store_true",
                    help="run each engine as `gpcheck verify --json` in-process: also checks exit codes and stderr")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).parent))
    engines = tuple(args.engines.split(","))
    tally = Tally()
    findings: list[tuple[str, list[str]]] = []
    started = time.monotonic()
    chunk_seed = args.seed
    def found(text: str, problems: list[str]) -> None:
        print(f"\n--- disagreement (chunk seed {chunk_seed}, before shrinking) ---\n" + text + "\n".join(problems),
              flush=True)
        if args.findings:
            record_finding(args.findings, text, problems, shrunk=False)

    while tally.specs < args.specs:
        before = len(findings)
        _run_chunk(min(args.chunk, args.specs - tally.specs), chunk_seed, tally, findings, engines, found, args.cli)
        chunk_seed += 1
        for text, problems in findings[before:]:
            print("\n--- shrunk disagreement ---\n" + text + "\n".join(problems), flush=True)
            if args.findings:
                record_finding(args.findings, text, problems)
        print(f"[{time.monotonic() - started:7.0f}s] {tally.line()} shrunk_findings={len(findings)}", flush=True)
    print(f"\nfinal: {tally.line()} shrunk_findings={len(findings)} seconds={time.monotonic() - started:.0f}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())

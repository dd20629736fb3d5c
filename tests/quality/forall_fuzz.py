"""Soundness fuzzer for `--for-all` (checker/engines/param/): random parameterised specs, each run through
`verify_for_all` and judged against the explicit engine at sizes well beyond those the for-all
engine samples.

The specs come from tests/quality/forall_gen.py (pieces over one to three constants, each with
properties true at every size, true only up to a size beyond the sampled ones, or false at a
small size; deterministic per seed and index), or with `--rich` from tests/quality/richgen.py.

Judging (`judge`), for each invariant and transition property and `range`:
- `proved` (or `holds_to_bound`) while the explicit engine finds a violation at some checked
  size, or `proved` while it finds a modelling error (`range`) at one: SOUNDNESS; `proved`
  under a constraint: HONESTY (NOTE(honest-verdicts));
- every lemma a `proved` prints, added to the model as an invariant, holds at the checked sizes
  (tests/recheck.py's check, here reporting instead of asserting): otherwise LEMMA;
- `violated` names an instance at which the explicit engine also finds the property violated,
  and its counterexample replays through the reference semantics (tests/reference/): otherwise
  VIOLATION;
- an exception anywhere in `verify_for_all`: CRASH (a for-all run never raises on a well-formed
  spec).
The sizes checked: each named constant from 1 to MAX_SIZE alone (the others at 2), all of them
equal from 1 to MAX_SIZE, each alone at FAR, and a few mixed points; an instance past MAX_STATES states counts only
for the violations it finds.

Findings are shrunk (whole declarations dropped while the same finding stays) and written to
`--findings` as `seed-S-I.gpspec` with a comment saying what was found. Usage:

    python tests/quality/forall_fuzz.py --seed S --count N [--jobs J] [--timeout T] [--findings DIR]
                                        [--minutes M] [--rich] [--json FILE]

`--rich` judges tests/quality/richgen.py's specs (the whole language) with N named instead: most
are outside the fragment (`unknown` with a reason is fine there), which hunts tracebacks.

Each spec's judging (the for-all run, the explicit checks, shrinking a finding) is bounded by
`--spec-timeout` seconds (SPEC_TIMEOUT): a spec that runs past it is counted as `timeout` in the
summary, never as a finding or a pass (a judging cut short proves nothing either way). With
`--minutes` no spec is started after that many minutes, and every spec started is reported.

It prints one line per finding as it is found and a summary line
(`specs=... results=... proved=... timeout=... findings=...`); exit 1 when there is a finding."""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

if __package__ in (None, ""):  # run as a script: the checkout root on the path for `tests.`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # forall_gen beside it

from forall_gen import Case, generate, rich_cases  # noqa: E402  (re-exported for the CI slice)

MAX_SIZE = 7  # each named constant checked explicitly up to this (the engine samples up to lower bound + 4)
FAR = (9, 10)  # and alone at these (a derived constant such as `N / 9` changes there)
MAX_STATES = 100_000  # an explicit instance past this proves nothing (its violations still count)
FORALL_TIMEOUT = 60.0  # seconds per for-all run
SPEC_TIMEOUT = 180.0  # seconds for one spec's whole judging (one took 176 s on the 16-core device)
NO_ANSWER_SLACK = 60.0  # a worker silent this long past its spec's bound (the watchdog ended it) counts as timeout


# --------------------------------------------------------------------------------------- judging


def sizes(names: tuple[str, ...], others: tuple[str, ...], lower: int = 1) -> list[dict[str, int]]:
    """The instances the explicit engine checks: each named constant 1..MAX_SIZE alone (the rest
    at 2), all equal 1..MAX_SIZE, and mixed points; `others` at 2, any other constant as declared."""
    base = {c: 2 for c in names + others}
    out: list[dict[str, int]] = []
    for n in names:
        out += [dict(base, **{n: v}) for v in list(range(1, MAX_SIZE + 1)) + list(FAR)]
    out += [dict(base, **{n: v for n in names}) for v in range(1, MAX_SIZE + 1)]
    if len(names) > 1:
        out += [dict(base, **{n: (MAX_SIZE if i % 2 else 1) for i, n in enumerate(names)}),
                dict(base, **{n: (1 if i % 2 else MAX_SIZE) for i, n in enumerate(names)})]
    seen: list[dict[str, int]] = []
    for p in out:
        if p not in seen and all(p[n] >= lower for n in names):
            seen.append(p)
    return seen


# every kind a for-all run answers (issue 38: deadlock, liveness and latency were dropped)
JUDGED = ("invariant", "transition", "range", "deadlock", "liveness", "latency")


@dataclass
class Truth:
    """The explicit engine's word on each property: the first size violating it, and the sizes
    where the search completed (a property holds at those)."""

    violated: dict[str, dict[str, int]] = field(default_factory=dict)
    complete: list[dict[str, int]] = field(default_factory=list)


def explicit_truth(text: str, points: list[dict[str, int]], properties: list[str] | None = None) -> Truth:
    """The explicit engine's verdicts at `points` (on `properties`, or every one)."""
    from gpcheck.checker import GpcheckError, Verdict, verify
    from gpcheck.spec import load_source

    truth = Truth()
    for consts in points:
        try:
            model = load_source(text, "fz.gpspec", consts)
        except GpcheckError:  # a size the spec does not allow (an empty range): not a size at all
            continue
        rep = verify(model, properties=properties, max_states=MAX_STATES, core="python")
        complete = True
        for r in rep.results:
            if r.kind not in JUDGED:
                continue
            if r.verdict is Verdict.VIOLATED:
                truth.violated.setdefault(r.property, consts)
            elif r.verdict is not Verdict.PROVED:
                complete = False
        if complete:
            truth.complete.append(consts)
    return truth


def judge(case: Case, timeout: float = FORALL_TIMEOUT, truth: Truth | None = None) -> tuple[list[str], dict[str, str]]:
    """The findings on `case` (empty: none) and each property's for-all verdict."""
    from gpcheck.checker import GpcheckError, Verdict, verify
    from gpcheck.checker.api.for_all import verify_for_all
    from gpcheck.spec import load_source

    others: tuple[str, ...] = ()  # the constants not named keep their declared values
    findings: list[str] = []
    verdicts: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="fzall") as tmp:
        path = Path(tmp) / "fz.gpspec"
        path.write_text(case.text)
        try:
            report = verify_for_all(path, list(case.names), {n: case.lower for n in case.names}, timeout=timeout)
        except Exception as err:  # noqa: BLE001 - any exception is a finding on a well-formed spec
            tb = traceback.format_exception(type(err), err, err.__traceback__)
            return [f"CRASH {type(err).__name__}: {err} | {''.join(tb[-3:]).strip()[-400:]}"], verdicts
        if path.read_text() != case.text:
            findings.append("MODIFIED the spec file")
    held = [r.property for r in report.results if r.verdict in (Verdict.PROVED, Verdict.HOLDS_TO_BOUND)]
    if truth is None:  # only a proof needs the sizes beyond (a violation is checked at its own instance)
        # with `range`: a proof stands only where no modelling error is reachable (NOTE(for-all-errors))
        wanted = held + ["range"] if "range" not in held else held
        truth = explicit_truth(case.text, sizes(case.names, others, case.lower), wanted) if held else Truth()
    for r in report.results:
        verdicts[r.property] = r.verdict.value
        bad = truth.violated.get(r.property)
        if r.kind in ("liveness", "latency") and r.verdict in (Verdict.PROVED, Verdict.HOLDS_TO_BOUND):
            findings.append(f"SOUNDNESS {r.property}: {r.kind} {r.verdict.value} by --for-all, which proves none")
            continue
        if r.verdict is Verdict.PROVED and "\nconstraint " in case.text:
            findings.append(f"HONESTY {r.property}: proved although a constraint cuts the states "
                            f"(NOTE(honest-verdicts): holds_to_bound)")
        if r.verdict in (Verdict.PROVED, Verdict.HOLDS_TO_BOUND) and r.detail.get("for_all"):
            if bad is not None:
                findings.append(f"SOUNDNESS {r.property}: {r.verdict.value} for all {','.join(case.names)} "
                                f"but violated at {bad}")
                continue
            err = truth.violated.get("range")
            if r.verdict is Verdict.PROVED and err is not None:
                findings.append(f"SOUNDNESS {r.property}: proved for all {','.join(case.names)} but a modelling "
                                f"error is reachable at {err} (NOTE(for-all-errors))")
                continue
            inv = r.detail.get("invariant")
            if inv:
                findings += _recheck(case.text, r.property, inv, truth.complete[:6])
        elif r.verdict is Verdict.VIOLATED:
            findings += _check_violation(case, r, others)
        elif not r.reason:
            findings.append(f"UNKNOWN {r.property} without a reason")
    missing = ({n for n, _ in case.props} | _declared(case.text)) - set(verdicts)
    if missing:
        findings.append(f"MISSING results for {sorted(missing)}")
    if report.exit_code == 0 and any(v in ("violated", "unknown") for v in verdicts.values()):
        findings.append(f"EXIT 0 with a result not proved: {verdicts}")
    return findings, verdicts


def _declared(text: str) -> set[str]:
    """Every property the explicit engine answers for the spec (deadlock and range included)."""
    from gpcheck.checker.engines.explicit.explicit import select_properties
    from gpcheck.spec import load_source

    return select_properties(load_source(text, "fz.gpspec"), None)


def _recheck(text: str, prop: str, invariant: str, points: list[dict[str, int]]) -> list[str]:
    """Each printed lemma, added as an invariant, holds at `points` (tests/recheck.py's check)."""
    from gpcheck.checker import GpcheckError, Verdict, verify
    from gpcheck.spec import load_source

    lemmas = [line.removeprefix("and ").strip() for line in invariant.split("\n")]
    extra = "".join(f"\ninvariant mined_{i}: {t}" for i, t in enumerate(lemmas))
    out = []
    for consts in points:
        try:
            rep = verify(load_source(text + extra, "mined.gpspec", consts), max_states=MAX_STATES, core="python")
        except GpcheckError as e:
            return [f"LEMMA {prop}: a printed lemma does not load: {str(e).splitlines()[0]}"]
        for i, lemma in enumerate(lemmas):
            if rep.result(f"mined_{i}").verdict is Verdict.VIOLATED:
                out.append(f"LEMMA {prop}: printed lemma false at {consts}: {lemma}")
        if out:
            return out
    return out


def _check_violation(case: Case, r: Any, others: tuple[str, ...]) -> list[str]:
    """A for-all violation: an instance where the explicit engine agrees, a counterexample that
    replays through the reference semantics."""
    from gpcheck.checker import GpcheckError, Verdict, verify
    from gpcheck.spec import load_source
    from tests.reference.replay import check_counterexample
    from tests.reference.semantics import load as ref_load

    inst = r.detail.get("instance")
    if not isinstance(inst, dict) or set(inst) != set(case.names):
        return [f"VIOLATION {r.property}: no instance of {case.names} ({inst})"]
    consts = dict({c: 2 for c in others}, **inst)
    try:
        rep = verify(load_source(case.text, "fz.gpspec", consts), properties=[r.property], core="python")
    except GpcheckError as e:
        return [f"VIOLATION {r.property}: instance {consts} does not load: {str(e).splitlines()[0]}"]
    if rep.result(r.property).verdict is not Verdict.VIOLATED:
        return [f"VIOLATION {r.property}: violated at {consts} by for-all, "
                f"{rep.result(r.property).verdict.value} by the explicit engine there"]
    if r.kind == "latency":  # the reference replays no latency (the explicit engine agreed above)
        return []
    cex = r.counterexample.to_json() if r.counterexample is not None else None
    why = check_counterexample(ref_load(case.text, consts), r.kind, r.property, cex)
    return [f"VIOLATION {r.property}: counterexample at {consts} does not replay: {why}"] if why else []


# -------------------------------------------------------------------------------------- shrinking


def _blocks(text: str) -> list[str]:
    """Top-level declarations (an action with its body is one block)."""
    out: list[str] = []
    depth = 0
    for line in text.splitlines():
        if depth == 0:
            out.append(line)
        else:
            out[-1] += "\n" + line
        depth += line.count("{") - line.count("}")
    return out


def _kind_of(finding: str) -> str:
    return " ".join(finding.split()[:2])  # e.g. "SOUNDNESS p0_1"


def shrink(case: Case, finding: str, timeout: float, budget: float = 120.0) -> Case:
    """Drop whole declarations while the same kind of finding on the same property stays."""
    from gpcheck.checker import GpcheckError
    from gpcheck.spec import load_source

    want = _kind_of(finding)
    prop = want.split()[1] if len(want.split()) > 1 else ""
    t0 = time.monotonic()
    cur = case
    changed = True
    while changed and time.monotonic() - t0 < budget:
        changed = False
        blocks = _blocks(cur.text)
        for k in range(len(blocks) - 1, 0, -1):
            b = blocks[k].strip()
            if not b or b.startswith("model") or b == "allow deadlock" or b.split(":")[0].endswith(" " + prop):
                continue
            text = "\n".join(blocks[:k] + blocks[k + 1:]) + "\n"
            try:
                load_source(text, "fz.gpspec")
            except GpcheckError:
                continue
            props = tuple(p for p in cur.props if f" {p[0]}:" in text)
            cand = Case(cur.seed, cur.index, text, cur.names, props, cur.lower)
            got, _ = judge(cand, timeout)
            if any(_kind_of(f) == want for f in got):
                cur, changed = cand, True
                break
            if time.monotonic() - t0 > budget:
                break
    return cur


# ---------------------------------------------------------------------------------------- driving


def run_one(args: tuple[int, int, float, str | None, bool, Case | None, float | None]) -> dict[str, Any]:
    """Generate (or take), judge, and on a finding shrink and write spec `index` of `seed`; the
    judging under a budget of `spec_timeout` seconds (checker/core/budget.py: it interrupts Z3 and
    stops the explicit searches): past it the spec is `timeout`, its verdicts and findings
    dropped (a search cut short says nothing). Shrinking a finding gets a bound of its own."""
    seed, index, timeout, findings_dir, do_shrink, given, spec_timeout = args
    from gpcheck.checker.core import budget

    os.environ.setdefault("GPCHECK_NATIVE", "off")
    case = given if given is not None else generate(seed, index)
    t0 = time.monotonic()
    out: dict[str, Any] = {"seed": seed, "index": index, "findings": [], "verdicts": {},
                           "rich": given is not None, "names": list(case.names)}
    with budget.activate(timeout=spec_timeout):
        try:
            found, verdicts = judge(case, timeout)
        except budget.Stop:
            found, verdicts = [], {}
        except Exception as err:  # noqa: BLE001 - a crash of the judge itself (the explicit engine): a finding
            found, verdicts = [f"CRASH in judging {type(err).__name__}: {err}"], {}
        cut = budget.stopped() is not None
    out["seconds"] = round(time.monotonic() - t0, 2)
    if cut:  # a judging cut short: neither a finding nor a pass
        out["timeout"] = True
        return out
    out["findings"], out["verdicts"] = found, verdicts
    if found and findings_dir:
        small = case
        if do_shrink:  # under a bound of its own: cut short, the spec as generated is written
            with budget.activate(timeout=spec_timeout):
                try:
                    got = shrink(case, found[0], timeout)
                except budget.Stop:
                    got = case
                small = case if budget.stopped() else got
        d = Path(findings_dir)
        d.mkdir(parents=True, exist_ok=True)
        head = "".join(f"# {f}\n" for f in found)
        stem = f"{'rich-' if given is not None else ''}seed-{seed}-{index}"
        (d / f"{stem}.gpspec").write_text(
            f"# --for-all {','.join(f'{n}>={case.lower}' if case.lower > 1 else n for n in case.names)}\n"
            f"# forall_fuzz --seed {seed}: spec {index}\n{head}{small.text}")
        out["file"] = str(d / f"{stem}.gpspec")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=20, help="specs to generate (indices 0..count-1)")
    ap.add_argument("--start", type=int, default=0, help="first index")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=FORALL_TIMEOUT, help="seconds per for-all run")
    ap.add_argument("--spec-timeout", type=float, default=SPEC_TIMEOUT,
                    help="seconds for one spec's whole judging; past it the spec counts as timeout")
    ap.add_argument("--minutes", type=float, default=None, help="stop starting specs after this long")
    ap.add_argument("--findings", default=None, help="folder for shrunk finding specs")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--json", default=None, help="write every spec's verdicts and findings here (JSON lines)")
    ap.add_argument("--rich", action="store_true", help="tests/quality/richgen.py's specs (the whole language) "
                    "instead of the parameterised generator")
    a = ap.parse_args(argv)
    given = rich_cases(a.seed, a.start + a.count)[a.start:] if a.rich else [None] * a.count
    tasks = [(a.seed, i, a.timeout, a.findings, not a.no_shrink, g, a.spec_timeout)
             for i, g in zip(range(a.start, a.start + a.count), given)]
    t0 = time.monotonic()
    tally: collections.Counter = collections.Counter()
    findings = 0
    log = open(a.json, "w") if a.json else None
    ctx = multiprocessing.get_context("spawn")
    pool = ctx.Pool(a.jobs, maxtasksperchild=20) if a.jobs > 1 else None
    stop_at = None if a.minutes is None else t0 + 60 * a.minutes
    try:
        for res in _results(pool, tasks, a.jobs, stop_at, a.spec_timeout):
            tally["specs"] += 1
            if res.get("timeout"):
                tally["timeout"] += 1
                print(f"seed {res['seed']} spec {res['index']} (--for-all {','.join(res['names'])}): "
                      f"timeout, judging not finished within {a.spec_timeout:g} s", flush=True)
            for v in res["verdicts"].values():
                tally[v] += 1
                tally["results"] += 1
            if log:
                log.write(json.dumps(res) + "\n")
                log.flush()
            for f in res["findings"]:
                findings += 1
                print(f"seed {res['seed']} spec {res['index']} (--for-all {','.join(res['names'])}): {f}"
                      + (f" -> {res['file']}" if res.get("file") else ""), flush=True)
    finally:
        if pool:
            pool.terminate()
        if log:
            log.close()
    v = " ".join(f"{k}={tally[k]}" for k in ("proved", "holds_to_bound", "violated", "unknown"))
    print(f"specs={tally['specs']} results={tally['results']} {v} timeout={tally['timeout']} findings={findings} "
          f"seconds={time.monotonic() - t0:.0f}", flush=True)
    return 1 if findings else 0


def _results(pool: Any, tasks: list[tuple], jobs: int, stop_at: float | None, spec_timeout: float | None
             ) -> Iterator[dict[str, Any]]:
    """`run_one` of each task, as they finish (one spec judged for long holds back no other
    result), at most `jobs` at once. None is started after `stop_at`; every one started is
    reported: its judging is bounded (`run_one`), and a worker that stays silent
    NO_ANSWER_SLACK seconds past its bound (ended by the budget's watchdog) gives a `timeout`."""
    todo = list(reversed(tasks))
    if pool is None:
        while todo and (stop_at is None or time.monotonic() < stop_at):
            yield run_one(todo.pop())
        return
    running: list[tuple[Any, tuple, float]] = []  # (AsyncResult, task, started)
    while todo or running:
        while todo and len(running) < jobs and (stop_at is None or time.monotonic() < stop_at):
            task = todo.pop()
            running.append((pool.apply_async(run_one, (task,)), task, time.monotonic()))
        if not running:
            return  # past `stop_at`: nothing started is left
        still = []
        for ar, task, started in running:
            if ar.ready():
                yield ar.get()
            elif spec_timeout is not None and time.monotonic() - started > spec_timeout + NO_ANSWER_SLACK:
                seed, index, given = task[0], task[1], task[5]
                case = given if given is not None else generate(seed, index)
                yield {"seed": seed, "index": index, "findings": [], "verdicts": {}, "rich": given is not None,
                       "names": list(case.names), "seconds": round(time.monotonic() - started, 2), "timeout": True}
            else:
                still.append((ar, task, started))
        running = still
        time.sleep(0.05)


if __name__ == "__main__":
    sys.exit(main())

"""The timed engine (checker/engines/timed/) against the discrete-time reference (tests/reference/timed.py)
on random small timed specs: invariant and deadlock verdicts, exact min/max latency (unbounded
included), and every timed witness replayed in the reference (each step fires at its time stamp,
the ticks between are allowed, the last state shows the violation, a latency witness measures the
value reported from a real start to a real end).

`python -m tests.quality.timed_differential [N] [SEED]` is the long run: it prints its figures
(specs, comparisons by kind, disagreements with the first few specs)."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gpcheck.checker import verify
from gpcheck.spec import load_source
from tests.reference.semantics import holds
from tests.reference.timed import TimedModel, explore, load_timed, replay_timed


def gen_spec(rng: random.Random) -> str:
    """A small timed spec: two counters, 2-3 actions with every kind of timing, one invariant and
    one or two latencies."""
    lines = ["model tgen", "var a: 0..2 = 0", "var b: 0..2 = 0"]
    n = rng.randint(2, 3)
    for k in range(n):
        param = rng.random() < 0.15
        guard_var = rng.choice("ab")
        guard = rng.choice([f"{guard_var} == {rng.randint(0, 2)}", f"{guard_var} < {rng.randint(1, 2)}",
                            f"{guard_var} != {rng.randint(0, 2)}", "true"])
        if param:
            guard = f"({guard}) and (i == 0 or a != b)"
        target = rng.choice("ab")
        val = rng.choice([f"({target} + 1) % 3", str(rng.randint(0, 2)), f"({rng.choice('ab')} + 2) % 3"])
        kind = rng.choice(["none", "range", "open", "exact", "urgent", "state", "range"])
        lo = rng.randint(0, 3)
        hi = lo + rng.randint(0, 3)
        timing = {"none": "", "range": f" time {lo}..{hi}", "open": f" time {lo}..", "exact": f" time {lo}",
                  "urgent": "", "state": f" time a..a + {rng.randint(0, 2)}"}[kind]
        mods = ("urgent " if kind == "urgent" else "") + ("fair " if rng.random() < 0.2 else "")
        params = "(i: 0..1)" if param else ""
        lines.append(f"{mods}action act{k}{params}{timing} {{ require {guard}  {target} = {val} }}")
    if not any(" time " in x or x.startswith("urgent") for x in lines):  # a timed spec, always
        lines[3] = lines[3].replace(" { require", " time 1..2 { require", 1)
    lines.append(f"invariant inv: not (a == {rng.randint(0, 2)} and b == {rng.randint(0, 2)})")
    for j in range(rng.randint(1, 2)):
        p = f"{rng.choice('ab')} == {rng.randint(0, 2)}"
        q = f"{rng.choice('ab')} == {rng.randint(0, 2)}"
        within = f" within {rng.randint(0, 6)}" if rng.random() < 0.5 else ""
        lines.append(f"latency lat{j}: from {p} to {q}{within}")
    if rng.random() < 0.5:
        lines.append("allow deadlock")
    for j in range(rng.randint(0, 2)):
        q = f"{rng.choice('ab')} {rng.choice(['==', '!='])} {rng.randint(0, 2)}"
        kind = rng.choice(["eventually", "always eventually", "leads_to"])
        if kind == "leads_to":
            lines.append(f"liveness live{j}: {rng.choice('ab')} == {rng.randint(0, 2)} leads_to {q}")
        else:
            lines.append(f"liveness live{j}: {kind} {q}")
    return "\n".join(lines) + "\n"


@st.composite
def timed_spec(draw: Any) -> str:
    return gen_spec(random.Random(draw(st.integers(0, 2**32 - 1))))


def _steps_ok(tm: TimedModel, cex: dict[str, Any]) -> tuple[list, list] | str:
    return replay_timed(tm, cex)


def _check_measure(tm: TimedModel, cex: dict[str, Any], start: int, value: int, p: Any, q: Any,
                   what: str) -> str | None:
    got = replay_timed(tm, cex)
    if isinstance(got, str):
        return f"{what} witness: {got}"
    states, times = got
    m = tm.m
    end = len(states) - 1
    if not holds(m, p, states[start]) or (start > 0 and holds(m, p, states[start - 1])):
        return f"{what} witness: step {start} does not enter the 'from' predicate"
    if not holds(m, q, states[end]) or any(holds(m, q, s) for s in states[start:end]) and end != start:
        return f"{what} witness: does not end at the first 'to' state after its start"
    if times[end] - times[start] != value:
        return f"{what} witness measures {times[end] - times[start]}, not {value}"
    return None


SKIPPED = {"zeno": 0}  # latencies whose every behaviour after a start is Zeno: no number to compare


def compare(text: str) -> list[str]:
    """Every disagreement between the engine and the reference on `text` (empty: none)."""
    problems: list[str] = []
    tm = load_timed(text)
    ref = explore(tm)
    report = verify(load_source(text, file="tgen.gpspec"))
    res = {r.property: r for r in report.results}
    inv = res["inv"]
    want = "proved" if ref.invariants["inv"] else "violated"
    if inv.verdict.value != want:
        problems.append(f"inv: engine {inv.verdict.value}, reference {want}")
    elif inv.counterexample is not None:
        got = replay_timed(tm, inv.counterexample.to_json())
        if isinstance(got, str):
            problems.append(f"inv witness: {got}")
        elif holds(tm.m, dict(tm.m.invariants)["inv"], got[0][-1]):
            problems.append("inv witness: the invariant holds at its end")
    if "deadlock" in res:
        want = "violated" if ref.deadlock else "proved"
        if res["deadlock"].verdict.value != want:
            problems.append(f"deadlock: engine {res['deadlock'].verdict.value}, reference {want}")
        elif res["deadlock"].counterexample is not None:
            got = replay_timed(tm, res["deadlock"].counterexample.to_json())
            if isinstance(got, str):
                problems.append(f"deadlock witness: {got}")
            elif tm.enabled(got[0][-1]):
                problems.append("deadlock witness: an instance is enabled at its end")
    for name, kind, p, q in tm.m.liveness:
        problems += _compare_liveness(tm, res[name], ref.liveness[name], q)
    for name, p, q, within in tm.m.latencies:
        r = res[name]
        starts, lo, hi = ref.latencies[name]
        if hi == -1:  # Zeno only after a start: the reference has no number, the engine must say unknown
            SKIPPED["zeno"] += 1
            if r.verdict.value != "unknown":
                problems.append(f"{name}: Zeno only after a start, yet the engine says {r.verdict.value}")
            continue
        d = r.detail
        if r.verdict.value == "unknown":
            problems.append(f"{name}: engine unknown ({r.reason})")
            continue
        if not starts:
            if d.get("starts") != 0:
                problems.append(f"{name}: the reference has no start, the engine min {d.get('min')} max {d.get('max')}")
            continue
        emax = None if d.get("unbounded") else d.get("max")
        if d.get("min") != lo or emax != hi:
            problems.append(f"{name}: engine min {d.get('min')} max {emax}, reference min {lo} max {hi}")
            continue
        want = "violated" if hi is None or (within is not None and hi > within) else "proved"
        if r.verdict.value != want:
            problems.append(f"{name}: engine {r.verdict.value}, reference {want}")
        if hi is not None and r.counterexample is not None:
            why = _check_measure(tm, r.counterexample.to_json(), d["start"], hi, p, q, f"{name} max")
            if why:
                problems.append(why)
        if hi is None and r.counterexample is not None:
            got = replay_timed(tm, r.counterexample.to_json())
            if isinstance(got, str):
                problems.append(f"{name} lasso: {got}")
            elif got[0][-1] != got[0][r.counterexample.loop]:
                problems.append(f"{name} lasso: the loop does not close")
        if lo is not None and "min_counterexample" in d:
            why = _check_measure(tm, d["min_counterexample"], d["min_start"], lo, p, q, f"{name} min")
            if why:
                problems.append(why)
    return problems


def _compare_liveness(tm: TimedModel, r: Any, violated: bool, q: Any) -> list[str]:
    """The engine's liveness verdict against the reference's; a violation's lasso replayed, its
    loop in not-q states."""
    want = "violated" if violated else "proved"
    if r.verdict.value != want:
        return [f"{r.property}: engine {r.verdict.value} ({r.reason}), reference {want}"]
    if r.counterexample is None:
        return [f"{r.property}: violated without a lasso"] if violated else []
    got = replay_timed(tm, r.counterexample.to_json())
    if isinstance(got, str):
        return [f"{r.property} lasso: {got}"]
    loop = r.counterexample.loop
    if loop is None or any(holds(tm.m, q, s) for s in got[0][loop:]):
        return [f"{r.property} lasso: no loop, or a 'to' state on its loop"]
    return []


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 300
    seed = int(argv[1]) if len(argv) > 1 else 1
    rng = random.Random(seed)
    t0 = time.monotonic()
    bad: list[tuple[str, list[str]]] = []
    counts = {"specs": 0, "invariant": 0, "deadlock": 0, "latency": 0, "liveness": 0}
    for _ in range(n):
        text = gen_spec(rng)
        counts["specs"] += 1
        counts["invariant"] += 1
        counts["deadlock"] += "allow deadlock" not in text
        counts["latency"] += text.count("latency ")
        counts["liveness"] += text.count("liveness ")
        t1 = time.monotonic()
        problems = compare(text)
        if time.monotonic() - t1 > 5:
            print(f"slow ({time.monotonic() - t1:.0f} s):\n{text}", flush=True)
        if problems:
            bad.append((text, problems))
    print(f"timed differential: {counts['specs']} specs, {counts['invariant']} invariant, {counts['deadlock']} deadlock, "
          f"{counts['liveness']} liveness and {counts['latency']} latency comparisons (min, max, verdict, witnesses; {SKIPPED['zeno']} of them "
          f"Zeno-only, where only the engine's `unknown` is checked), "
          f"{len(bad)} specs with a disagreement, {time.monotonic() - t0:.0f} s")
    for text, problems in bad[:5]:
        print("----\n" + text + "\n".join(problems))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

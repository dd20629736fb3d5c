"""Latency differential (issue 38): random latency specs whose costs are drawn up to and past
2^63, each checked by the Python core, the compiled core and the reference's brute force
(tests/reference/latency.py): the same min and max (exact integers), a `within` passed never
`proved`, and no internal error, with `--json` written exactly (NOTE(json-bigint)).

Before the fix the compiled core added costs in int64 (NOTE(latency-64-bit) in
checker/engines/latency/fast_latency.py): two steps of 2^62 came out `proved, max 0` or an AssertionError, a
cost past 64 bits an OverflowError. Usage:

    python tests/quality/latency_diff.py --seed S --count N [--minutes M]

It prints one line per finding and a summary (`specs=... comparisons=... bounded=... past64=...
findings=...`); exit 1 when there is a finding. The CI slice is tests/unit/test_latency_64bit.py."""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import traceback
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the checkout root on the path for `tests.`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

BIG = [0, 1, 2 ** 61, 2 ** 62, 2 ** 62 + 1, 2 ** 63 - 1, 2 ** 63, 2 ** 64 + 3, 3 * 2 ** 70]
INT64_MAX = 2 ** 63 - 1


def lit(c: int) -> str:
    """`c` in gpspec: a literal may be at most 2^62, larger ones are written as products."""
    if c <= 2 ** 62:
        return str(c)
    return f"({lit(c >> 32)} * 4294967296 + {c & 0xFFFFFFFF})"


def big_cost_spec(rng: random.Random) -> str:
    """A random latency spec whose costs are drawn up to and past 2^63 (also as a product of
    a state variable and a large constant), with cycles and unfair actions."""
    lines = ["model big", "var x: 0..3 = 0", f"var y: 0..3 = {rng.randrange(4)}"]
    monotone = rng.random() < 0.5  # no cycles: bounded maxima, summed along the paths
    for k in range(rng.randint(3, 5)):
        c = lit(rng.choice(BIG))
        cost = rng.choice([c, f"y * {c}", f"(x + 1) * {c}", "0"])
        fair = "fair " if rng.random() < 0.8 else ""
        guard = rng.choice(["x < 3", "x == 1", "y < 3", "x < 2 and y > 0", "true"])
        up = rng.choice(["x = x + 1", "y = y + 1"] + ([] if monotone else ["x = (x + 1) % 4", "y = 0"]))
        guard += {"x = x + 1": " and x < 3", "y = y + 1": " and y < 3"}.get(up, "")
        lines.append(f"{fair}action a{k} cost {cost} {{ require {guard}; {up} }}")
    lines.append("allow deadlock")
    for k in range(2):
        p, q = rng.choice(["x == 0", "y == 1", "x == 1"]), rng.choice(["x == 3", "y == 3", "x == 2 and y > 0"])
        bound = rng.choice(["", f" within {min(rng.choice(BIG), 2 ** 62)}"])
        lines.append(f"latency l{k}: from {p} to {q}{bound}")
    return "\n".join(lines) + "\n"


def compare(text: str) -> tuple[list[str], dict[str, int]]:
    """The findings on one spec and counts (comparisons, bounded maxima, maxima past 64 bits)."""
    from gpcheck.checker import Verdict, verify
    from gpcheck.checker.report.render import to_json_bytes
    from gpcheck.spec import load_source
    from tests.reference import explore as ref_explore
    from tests.reference import latency as ref_latency
    from tests.reference import semantics as ref

    counts = {"comparisons": 0, "bounded": 0, "past64": 0}
    m = ref.load(text)
    want = {n: (o.min, o.max) for n, o in ref_latency.latencies(m, ref_explore.explore(m)).items()}
    reports = {}
    for core in ("python", "compiled"):
        try:
            rep = verify(load_source(text, "big.gpspec"), core=core)
            json.loads(to_json_bytes(rep.to_json()))
        except Exception as err:  # noqa: BLE001 - any exception is a finding
            tb = "".join(traceback.format_exception(type(err), err, err.__traceback__)[-2:]).strip()[-300:]
            return [f"CRASH {core} {type(err).__name__}: {err} | {tb}"], counts
        reports[core] = rep
    out = []
    for name, (mn, mx) in want.items():
        got = {core: rep.result(name) for core, rep in reports.items()}
        py, jit = got["python"], got["compiled"]
        counts["comparisons"] += 1
        if (py.verdict, py.detail.get("min"), py.detail.get("max")) != \
                (jit.verdict, jit.detail.get("min"), jit.detail.get("max")):
            out.append(f"CORES {name}: python {py.verdict.value} {py.detail.get('min')}..{py.detail.get('max')}, "
                       f"compiled {jit.verdict.value} {jit.detail.get('min')}..{jit.detail.get('max')}")
        if py.verdict is Verdict.UNKNOWN:
            continue
        if (py.detail["min"], py.detail["max"]) != (mn, mx):
            out.append(f"REFERENCE {name}: {py.detail['min']}..{py.detail['max']}, reference {mn}..{mx}")
        within = py.detail.get("within")
        for core, r in got.items():
            if within is not None and mx is not None and mx > within and r.verdict is not Verdict.VIOLATED:
                out.append(f"SOUNDNESS {name}: {core} {r.verdict.value} although max {mx} > within {within}")
        if mx is not None:
            counts["bounded"] += 1
            counts["past64"] += mx > INT64_MAX
    return out, counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--minutes", type=float, default=None, help="start no spec after this many minutes")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    total = {"specs": 0, "comparisons": 0, "bounded": 0, "past64": 0, "findings": 0}
    for k in range(args.count):
        if args.minutes is not None and time.monotonic() - t0 > 60 * args.minutes:
            break
        text = big_cost_spec(random.Random(f"latency-diff:{args.seed}:{k}"))
        found, counts = compare(text)
        total["specs"] += 1
        for key, v in counts.items():
            total[key] += v
        for f in found:
            total["findings"] += 1
            print(f"seed {args.seed} spec {k}: {f}\n{text}", flush=True)
    print(" ".join(f"{k}={v}" for k, v in total.items()) + f" seconds={time.monotonic() - t0:.0f}")
    return 1 if total["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())

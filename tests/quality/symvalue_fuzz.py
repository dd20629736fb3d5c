"""Soundness fuzzing of the symbolic-valued counted component (checker/engines/param/symvalue.py,
NOTE(symbolic-values)): variants of a slot model whose progress `prog: [0..N-1] -> 0..L` is
counted per value, each run through `--for-all N,L` and judged by tests/quality/forall_fuzz.py's
`judge` (a proof while the explicit engine finds a violation at some checked size, a printed
lemma false there, a violation that does not replay, or a crash is a finding).

The variants differ in the shapes the pieces must count exactly: a tick skipped at a point
(`prog[i] == k`) or near the range's end (`prog[i] == L - k`, `prog[i] >= k and prog[i] < L`),
saturation at L, a second completion point, a non-zero restart; with properties over the
progress values (points, sums, counts, `any`) true at every size, up to some size, or never.
forall_gen.py's generator is left as it is (its seeds' specs stay the same). Usage:

    python tests/quality/symvalue_fuzz.py SEED COUNT

prints one JSON line per spec (findings and verdicts), writes each finding's spec beside the
current folder as `symvalue-SEED-I.gpspec`, and exits 1 when there is a finding."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from forall_fuzz import judge  # noqa: E402
from forall_gen import Case  # noqa: E402
from tests.unit.test_forall_symvalue import JOBS, TICK  # noqa: E402

BASE = JOBS  # the unit tests' slot-progress model, varied here
DONE = "            if prog[i] == L {\n"


def variant(r: random.Random) -> Case:
    """One variant of BASE (deterministic in `r`)."""
    k = r.randint(0, 6)
    ticks = [
        TICK + f"            if prog[i] == {k} and prog[i] < L {{\n                prog[i] = prog[i] + 1\n            }}\n",
        TICK + f"            if prog[i] == L - {r.randint(1, 3)} and prog[i] != {k} {{\n"
               "                prog[i] = prog[i] + 1\n            }\n",
        "            prog[i] = if prog[i] >= L - 1 then L else prog[i] + 1\n",
        f"            prog[i] = if prog[i] <= {r.randint(0, 3)} then prog[i] + 1 else prog[i] + 1\n",
        TICK,
        TICK + f"            if prog[i] >= {r.randint(2, 5)} and prog[i] < L {{\n"
               "                prog[i] = prog[i] + 1\n            }\n",
    ]
    text = BASE.replace(TICK, r.choice(ticks))
    if r.random() < 0.4:
        text = text.replace(DONE, f"            if prog[i] == L or prog[i] == {r.randint(1, 5)} {{\n")
    if r.random() < 0.3:
        text = text.replace("    prog[i] = 0\n    launched[s]", f"    prog[i] = {r.choice(['0', '1'])}\n    launched[s]")
    props = [
        f"invariant p_sum: all s in 0..1: (sum i in 0..N-1: if slot[i] == s then prog[i] else 0) <= {r.randint(1, 6)}",
        f"invariant p_top: all i in 0..N-1: prog[i] != L - {r.randint(0, 2)}",
        "invariant p_pt: all i in 0..N-1: slot[i] == 2 implies prog[i] == 0",
        f"invariant p_cnt: (count i in 0..N-1: prog[i] == {r.randint(0, 4)}) <= {r.randint(1, 4)}",
        f"invariant p_any: not (any i in 0..N-1: prog[i] == {r.randint(2, 6)} and slot[i] == 0)",
        f"transition p_step: all s in 0..1: done[s]' <= done[s] + {r.randint(1, 3)}",
        "invariant p_work: all s in 0..1: work[s] <= N * L",
    ]
    text = text.rstrip("\n") + "\n" + "\n".join(r.sample(props, 3)) + "\n"
    names = [line.split()[1].rstrip(":") for line in text.splitlines() if line.startswith(("invariant ", "transition "))]
    return Case(seed=0, index=0, text=text, names=("N", "L"), props=tuple((n, "?") for n in names))


def main(argv: list[str]) -> int:
    seed, count = int(argv[0]), int(argv[1])
    bad = 0
    for i in range(count):
        case = variant(random.Random(f"{seed}-{i}"))
        found, verdicts = judge(case, timeout=60)
        print(json.dumps({"seed": seed, "index": i, "found": found, "verdicts": verdicts}), flush=True)
        if found:
            bad += 1
            Path(f"symvalue-{seed}-{i}.gpspec").write_text(case.text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

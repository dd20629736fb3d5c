"""Long run: the symmetry-reduced explicit search against the unreduced one on random symmetric
specs (tests/quality/symgen.py). Per spec: the verdicts agree (tests/unit/test_symmetry.py
`_agree`: equal, or both searches stopped at the same modelling error), every counterexample of
the reduced search replays through the interpreter, and where the unreduced search completed
without a constraint, the reduced count equals the number of orbits of the reachable states.

    PYTHONPATH=$PWD python -m tests.quality.sym_agreement --specs 1000 [--first 0]

Prints the figures: specs, reduced runs compared, disagreements, mean reduction."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))

from symgen import sym_spec  # noqa: E402


def main() -> int:
    from gpcheck.checker import verify
    from gpcheck.checker.engines.explicit.explicit import search
    from gpcheck.checker.core.verdict import Verdict
    from gpcheck.checker.engines.smt.witness import check_witness
    from gpcheck.gpmodel import compile_model
    from gpcheck.spec import load_source
    from test_symmetry import _agree, _orbits  # the unit tests' own criteria

    ap = argparse.ArgumentParser()
    ap.add_argument("--specs", type=int, default=200)
    ap.add_argument("--first", type=int, default=0)
    args = ap.parse_args()
    start = time.monotonic()
    bad = 0
    ratios = []
    orbit_checks = 0
    for seed in range(args.first, args.first + args.specs):
        text = sym_spec(seed)
        try:
            model = load_source(text, "rnd.gpspec")
            on = verify(model, symmetry="on")
            off = verify(model, symmetry="off")
            _agree(on, off, {p.name for p in model.liveness})
            cm = compile_model(model)
            for r in on.results:
                if r.verdict is Verdict.VIOLATED:
                    assert check_witness(cm, r) is None, r.property
            if on.states is not None and off.states is not None:
                ratios.append(off.states / on.states)
                if not model.constraints:
                    full = search(cm, set())
                    assert on.states == _orbits(model, set(full.parent))
                    orbit_checks += 1
        except Exception as err:  # noqa: BLE001 - every failure is a finding
            bad += 1
            print(f"seed {seed}: {type(err).__name__}: {err}", flush=True)
    secs = time.monotonic() - start
    mean = sum(ratios) / len(ratios) if ratios else 0.0
    print(f"specs={args.specs} disagreements={bad} complete_both={len(ratios)} orbit_counts_checked={orbit_checks} "
          f"mean_reduction={mean:.2f}x max_reduction={max(ratios, default=0):.1f}x seconds={secs:.0f}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Module instances (issue 32) against the independent reference semantics: random specs of
instgen.py, with named instances and arrays of instances, through the explicit engine (every
spec) and the Z3 engines (a few), judged like tests/quality/differential.py judges its specs
(verdicts, shortest counterexamples replayed through the reference, state counts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from differential import Tally, _judge
from instgen import instance_spec
from gpcheck.checker import verify
from gpcheck.spec import load_spec
from tests.reference.explore import explore
from tests.reference.semantics import load as ref_load


def _compare(tmp_path: Path, seed: int, engine: str) -> list[str]:
    spec = instance_spec(seed)
    (tmp_path / "mod.gpspec").write_text(spec.module)
    top = tmp_path / "top.gpspec"
    top.write_text(spec.top)
    m = ref_load(spec.top, modules={"mod.gpspec": spec.module})
    ex = explore(m)
    depth = ex.diameter + 2
    report = verify(load_spec(str(top)), engine=engine, depth=depth if engine == "bmc" else None,
                    timeout=None if engine == "explicit" else 20.0, symmetry="off").to_json()
    return _judge(m, ex, engine, report, Tally())


# seeds 6 and 18 have the largest state spaces (5 and 2 s of CPU): `slow`; so are 1, 10, 11, 16
# and 17 (0.6 to 0.8 s each: arrays of instances, as 2, 3, 5, 7, 9, 12 and 14 are); the other 13
# stay: arrays of instances alone, with a named instance (8, 13), a named instance alone (0, 4), neither
SLOW_SEEDS = (1, 6, 10, 11, 16, 17, 18)


@pytest.mark.parametrize("seed", [pytest.param(s, marks=pytest.mark.slow) if s in SLOW_SEEDS else s
                                  for s in range(20)])
def test_explicit_agrees_with_reference_on_instances(tmp_path: Path, seed: int) -> None:
    problems = _compare(tmp_path, seed, "explicit")
    assert not problems, instance_spec(seed).top + "\n" + "\n".join(problems)


@pytest.mark.long
@pytest.mark.parametrize("seed", range(20, 200))
def test_explicit_agrees_with_reference_on_more_instances(tmp_path: Path, seed: int) -> None:
    problems = _compare(tmp_path, seed, "explicit")
    assert not problems, instance_spec(seed).top + "\n" + "\n".join(problems)


# seeds 4 (bmc) and 5 (kind) `slow` (0.6 s of CPU): each engine once in the default run, on 1, 2 and 3
@pytest.mark.parametrize("seed, engine", [(1, "bmc"), (2, "kind"), (3, "pdr"), pytest.param(4, "bmc", marks=pytest.mark.slow),
                                          pytest.param(5, "kind", marks=pytest.mark.slow)])
def test_z3_engines_agree_with_reference_on_instances(tmp_path: Path, seed: int, engine: str) -> None:
    problems = _compare(tmp_path, seed, engine)
    assert not problems, instance_spec(seed).top + "\n" + "\n".join(problems)


def test_the_generator_makes_instances_and_arrays() -> None:
    tops = [instance_spec(s).top for s in range(40)]
    assert sum("as g[0..1]" in t for t in tops) >= 10 and sum("as b(" in t for t in tops) >= 10
    assert all("as a(" in t for t in tops)

"""The CI slice of the fault-injection campaign (tests/quality/faults.py, issue 36 item 5): a few
seeded (command, fault) runs of the fast commands, each judged as the long run judges it. The
long run, with sweeps and corpus runs on a local cluster, is `python tests/quality/faults.py
--minutes N` or `python -m pytest -m long tests/quality/test_fault_slice.py`."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import faults

# (command, fault, seed): every fault once, over the fast commands
SLICE = [("verify", "sigint", 1), ("replay", "sigterm", 2), ("check", "close-stdout", 3),
         ("verify-text", "full-stdout", 4), ("replay", "fsize-outputs", 5), ("verify", "fsize-stdout", 6),
         ("check", "sigint", 7), ("verify", "none", 8)]
COMMANDS = {c.name: c for c in faults.COMMANDS}


@pytest.fixture(scope="module")
def baselines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Each command without a fault, its verdicts and exit code, from a run in this process
    (tests/docsrun.py: the fault is the child's, the reference need not be; a child each took
    half a second of CPU). No duration: the signal cases draw their moment from a child's
    (`child_baselines`)."""
    from tests.docsrun import _gpcheck

    base = tmp_path_factory.mktemp("baseline")
    out = {}
    for name in sorted({c for c, _, _ in SLICE}):
        command = COMMANDS[name]
        r = _gpcheck([a.replace("{out}", str(base)) for a in command.argv], base)
        out[name] = {"verdicts": faults._verdicts(json.loads(r.stdout)) if command.json else {}, "code": r.returncode}
        for p in base.iterdir():
            if p.is_file():
                p.unlink()
    return out


@pytest.fixture(scope="module")
def child_baselines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """faults.baseline_of: each command in a child, with its duration (the span of a signal's moment)."""
    base = tmp_path_factory.mktemp("child-baseline")
    return {name: faults.baseline_of(COMMANDS[name], base) for name in {c for c, _, _ in SLICE}}


# a signal at a wall-clock moment lands in another phase on a loaded machine: those cases are slow-tier
CASES = [pytest.param(c, f, s, id=f"{c}-{f}", marks=[pytest.mark.slow] if f in ("sigint", "sigterm") else [])
         for c, f, s in SLICE]


@pytest.mark.parametrize("name,fault,seed", CASES)
def test_fault(name: str, fault: str, seed: int, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    if fault == "full-stdout" and not faults._full_device():
        pytest.skip("/dev/full is not a device here")
    baselines = request.getfixturevalue("child_baselines" if fault in ("sigint", "sigterm") else "baselines")
    o = faults.run(COMMANDS[name], fault, random.Random(seed), tmp_path, baselines[name])
    assert not o.problems, f"{name} {fault} {o.detail}: exit {o.code}\n" + "\n".join(o.problems)
    if fault in ("close-stdout", "full-stdout"):
        assert o.code == 2
    if fault == "fsize-outputs" and o.code == 2:
        assert not any(tmp_path.rglob("*.json"))  # nothing half written


@pytest.mark.long
def test_fault_campaign(tmp_path: Path) -> None:
    outcomes = faults.campaign(180, 1, True, tmp_path)
    print(faults.summary(outcomes))
    failed = [o for o in outcomes if o.problems]
    assert not failed, "\n".join(f"{o.command} {o.fault} {o.detail}: {o.problems}" for o in failed)

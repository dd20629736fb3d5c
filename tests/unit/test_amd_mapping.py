"""AMD on paper (docs/event-mapping.md, "AMD"): behaviours generated from cwsr written as the
pair of inputs an AMD user records (a rocprofv3 kernel-trace CSV and KFD SMI event lines on the
same clock), imported with `gpcheck import --kfd-smi` and replayed through cwsr.map.toml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpcheck.checker.cli.command import main
from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import open_trace
from gpcheck.traces.importers.kfd_smi import read_smi

ROOT = Path(__file__).resolve().parents[2]
CWSR = str(ROOT / "spec" / "models" / "cwsr.gpspec")
COLS = ("Kind,Agent_Id,Queue_Id,Stream_Id,Kernel_Name,Correlation_Id,Start_Timestamp,End_Timestamp,"
        "Grid_Size_X,Grid_Size_Y,Grid_Size_Z,Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z")


def _behaviour(tmp: Path, seed: int, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    out = tmp / f"sim{seed}.jsonl"
    assert main(["simulate", CWSR, "--steps", "60", "--seed", str(seed), "--observe", "none", "--out", str(out)]) == 0
    capsys.readouterr()
    with open_trace(str(out)) as tr:
        return [{"action": e.action, "args": e.args} for e in tr.events(check_state=False)]


def _until_unretired(steps: list[dict]) -> list[dict]:
    """The behaviour up to its first submit that is never retired: rocprofv3 writes a kernel's
    row when it ends, so a dispatch still running at the end of a run is not in the trace."""
    total: dict[int, int] = {}
    for s in steps:
        if s["action"] == "retire":
            total[s["args"]["q"]] = total.get(s["args"]["q"], 0) + 1
    seen: dict[int, int] = {}
    for i, s in enumerate(steps):
        if s["action"] == "submit":
            q = s["args"]["q"]
            seen[q] = seen.get(q, 0) + 1
            if seen[q] > total.get(q, 0):
                return steps[:i]
    return steps


def _record(tmp: Path, steps: list[dict], name: str, drop_restore: int | None = None) -> tuple[Path, Path, int]:
    """The rocprofv3 CSV and the SMI log of a behaviour: step i happens at 1000 * (i + 1) ns; the
    k-th submit of queue q starts kernel k of q (rocprofv3 has no launch time), the k-th retire
    of q ends it; preempt is a queue eviction, remap a restore (`drop_restore`: that restore
    lost). Returns the files and the number of queue events."""
    steps = _until_unretired(steps)
    rows, smi = [], []
    started: dict[int, list[int]] = {}
    ended: dict[int, int] = {}
    restores = 0
    for i, s in enumerate(steps):
        t = 1000 * (i + 1)
        if s["action"] == "submit":
            started.setdefault(s["args"]["q"], []).append(t)
        elif s["action"] == "retire":
            q = s["args"]["q"]
            k = ended.get(q, 0)
            ended[q] = k + 1
            rows.append((started[q][k], t, q, k))
        elif s["action"] == "preempt":
            smi.append(f"9 {t} -4242 1 2")
        elif s["action"] == "remap":
            if restores != drop_restore:
                smi.append(f"a {t} -4242 1 R")
            restores += 1
    lines = [COLS]
    for n, (t0, t1, q, k) in enumerate(sorted(rows)):
        lines.append(f"KERNEL_DISPATCH,Agent 2,{q + 1},0,kern_q{q}_{k},{n + 1},{t0},{t1},64,1,1,64,1,1")
    csv = tmp / f"{name}_kernel_trace.csv"
    csv.write_text("\n".join(lines) + "\n")
    log = tmp / f"{name}.smi"
    log.write_text("\n".join(smi) + "\n")
    return csv, log, len(smi)


def _import_replay(tmp: Path, csv: Path, log: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    out = tmp / (csv.stem + ".jsonl")
    assert main(["import", str(csv), "--kfd-smi", str(log), "--out", str(out)]) == 0
    capsys.readouterr()
    # `--no-timing`: the generated recordings' stamps are the recorder's, not the timed cwsr's
    # durations: these tests check the discrete mapping (the MI250 recording's stamps are checked in
    # test_public_traces.py)
    rc = main(["replay", str(out), "--model", CWSR, "--map", "--json", "--no-progress", "--no-timing"])
    return rc, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("seed", [1, 2, 3, 5])
def test_cwsr_behaviours_recorded_as_rocprof_and_kfd_smi_conform(tmp_path: Path, seed: int,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    steps = _behaviour(tmp_path, seed, capsys)
    csv, log, nsmi = _record(tmp_path, steps, f"run{seed}")
    rc, out = _import_replay(tmp_path, csv, log, capsys)
    assert out["verdict"] == "conforms", out.get("divergence")
    with open_trace(str(tmp_path / f"run{seed}_kernel_trace.jsonl")) as tr:
        evs = list(tr.events(check_state=False))
        assert tr.header.extra["source"]["kfd_smi"]["queue_events"] == nsmi
    assert sum(e.action in ("queue_evict", "queue_restore") for e in evs) == nsmi
    assert [e.t for e in evs] == sorted(e.t for e in evs)


def test_a_lost_queue_restore_diverges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for seed in range(1, 40):
        steps = _behaviour(tmp_path, seed, capsys)
        names = [s["action"] for s in steps]
        # a remap followed by a retire: without the restore the queue is not mapped when it ends
        if "remap" in names and "retire" in names[names.index("remap"):]:
            break
    else:
        pytest.fail("no simulated behaviour with a restore before a retirement")
    csv, log, nsmi = _record(tmp_path, steps, "kept")
    rc, out = _import_replay(tmp_path, csv, log, capsys)
    assert nsmi >= 2 and rc in (0, 1) and out["verdict"] == "conforms"  # the same run with its restore
    csv, log, _ = _record(tmp_path, steps, "lost", drop_restore=0)
    rc, out = _import_replay(tmp_path, csv, log, capsys)
    assert rc == 1 and out["verdict"] == "diverges"
    assert out["divergence"]["event"]["recorded"]["action"] in ("start", "end", "queue_evict", "queue_restore")


def test_smi_lines_are_parsed_and_bad_ones_located(tmp_path: Path) -> None:
    p = tmp_path / "e.smi"
    p.write_text("1 5 -1 2 3\n9 100 -42 1 2\na 200 -42 1 R\na 300 -42 1\n")
    smi = read_smi(str(p))
    assert smi.skipped == 1
    assert [(e.action, e.t, e.meta["pid"], e.meta.get("trigger"), e.meta.get("rescheduled")) for e in smi.events] == [
        ("queue_evict", 100, 42, 2, None), ("queue_restore", 200, 42, None, True), ("queue_restore", 300, 42, None, False)]
    p.write_text("9 100 -42 1 2\n9 oops\n")
    with pytest.raises(TraceError, match=r"e\.smi:2: a queue eviction"):
        read_smi(str(p))
    p.write_text("zz 1 2\n")
    with pytest.raises(TraceError, match=r"e\.smi:1: not a KFD SMI event line"):
        read_smi(str(p))


KFD = str(ROOT / "spec" / "models" / "kfd_sched.gpspec")


@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.slow), pytest.param(3, marks=pytest.mark.slow)])
# seeds 2 and 3 slow (each replay of the timed kfd_sched's trace about 3 s of CPU); fast: seed 1, the same path
def test_kfd_sched_behaviours_recorded_as_rocprof_and_kfd_smi_conform(seed: int, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """kfd_sched's monitor takes LP off the runlist (a KFD SMI queue eviction) and puts it back (a
    restore); its kernels' starts and ends are the submits and retirements. Every seed's run
    evicts LP (each of seeds 1 to 3 within its first ten recorded steps)."""
    import random

    from gpcheck.gpmodel import compile_model
    from gpcheck.gpmodel.simulate import simulate
    from gpcheck.spec import load_spec

    # RPTR_READ=1: the monitor reads the real rptr, so it sees both queues busy and evicts LP
    # (with the seeds' doorbell read it never does); T_MON=1: it runs every tick, the same
    # eviction and restore with fewer hidden ticks between two recorded events for the replay's
    # search (1.4 s of CPU for seed 1's replay; 3 s at the default T_MON=2)
    cm = compile_model(load_spec(KFD, {"RPTR_READ": 1, "T_MON": 1}))
    steps, prev = [], True
    for iid, st in simulate(cm, 300, random.Random(seed)):
        if iid is None:
            continue
        inst = cm.instances[iid]
        now = cm.layout.decode(st)["in_rl"][0]
        if inst.action.name == "monitor" and now != prev:
            steps.append({"action": "preempt" if not now else "remap", "args": {}})
        elif inst.action.name in ("submit", "retire"):
            steps.append({"action": inst.action.name, "args": {p.name: v for p, v in zip(inst.action.params, inst.args)}})
        prev = now
    csv, log, nsmi = _record(tmp_path, steps, f"kfd{seed}")
    trace = tmp_path / f"kfd{seed}_kernel_trace.jsonl"
    assert main(["import", str(csv), "--kfd-smi", str(log), "--out", str(trace)]) == 0
    capsys.readouterr()
    rc = main(["replay", str(trace), "--model", KFD, "--const", "RPTR_READ=1", "--const", "T_MON=1", "--map", "--json",
               "--no-progress", "--no-timing"])  # the discrete mapping (the stamps are the recorder's)
    rep = json.loads(capsys.readouterr().out)
    assert rep["verdict"] == "conforms", rep.get("divergence")
    assert nsmi > 0  # the run evicted LP

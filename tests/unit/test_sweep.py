"""`gpcheck sweep`, the multi-trace `check` / `replay`, and the cluster under them.

One Dask cluster for the module, started the way a user starts one: a scheduler process on
localhost and a worker process with two single-threaded workers (`--cluster` tests the path to an
existing cluster). The embedded local cluster (one worker) is started once, by the interrupt
test, as `gpcheck sweep` starts it. Cluster start-up takes seconds on two cores, hence sharing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import cloudpickle
import pytest

from gpcheck.checker.cli.command import main
from gpcheck.checker.distributed.cluster import open_cluster
from gpcheck.checker.distributed.corpus import TraceRun, corpus_exit_code, expand_traces, OBSERVATION_SUFFIXES
from gpcheck.checker.distributed.sweep import (
    Instance,
    combinations,
    combined_exit_code,
    failed_run,
    parse_values,
    run_sweep,
)
from gpcheck.spec.errors import ConstantError, UsageError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "quality"))
import fault_inject as F  # noqa: E402

REAL = ROOT / "traces" / "corpus" / "real"
SIM = ROOT / "traces" / "corpus" / "sim"

# Tasks below are defined in this test module, which the workers cannot import: send them by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def cluster_address(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dask")
    sched_file = tmp / "scheduler.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0",
           "DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION": "1.0"}
    logs = open(tmp / "cluster.log", "w")
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file)],
                                 env=env, stdout=logs, stderr=logs, cwd=tmp, start_new_session=True)
    worker = None
    try:
        address = F.scheduler_address(sched_file, time.monotonic() + 60)  # written after the file appears
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nworkers", "2",
                                   "--nthreads", "1", "--no-dashboard"], env=env, stdout=logs, stderr=logs, cwd=tmp,
                                  start_new_session=True)
        from distributed import Client

        with Client(address, timeout=60) as c:
            c.wait_for_workers(2, timeout=90)
        yield address
    finally:
        # Each was started in its own process group: the group goes, the nanny's workers with it.
        for proc in (worker, scheduler):
            if proc is not None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        logs.close()


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------------------------
# Values and combinations (no cluster)


def test_values_ranges_lists_and_booleans():
    assert parse_values("N=2..5") == ("N", [2, 3, 4, 5])
    assert parse_values("CAP=1,2,4") == ("CAP", [1, 2, 4])
    assert parse_values("B=true,false") == ("B", [1, 0])
    assert parse_values(" N = 1, 3..4, 3 ") == ("N", [1, 3, 4])
    assert combinations({"N": [1, 2], "CAP": [3, 4]}) == [
        {"N": 1, "CAP": 3}, {"N": 1, "CAP": 4}, {"N": 2, "CAP": 3}, {"N": 2, "CAP": 4}]


@pytest.mark.parametrize("item", ["N=5..2", "N=x", "N", "=3", "N=", "N=1,,2"])
def test_bad_values_are_errors(item):
    with pytest.raises(ConstantError):
        parse_values(item)


def test_bad_input_exits_2_before_any_cluster(capsys, examples, tmp_path):
    spec = str(examples / "rewind.gpspec")
    code, out, err = run_cli(capsys, "sweep", spec, "--const", "N=3..1")
    assert code == 2 and "empty range 3..1" in err and "Traceback" not in err
    # N=0 makes `waves_run: [0..N-1]` an empty range: reported against the declaration.
    code, out, err = run_cli(capsys, "sweep", spec, "--const", "N=0..2")
    assert code == 2 and "rewind.gpspec:" in err and "Traceback" not in err
    code, out, err = run_cli(capsys, "sweep", spec, "--const", "N=2", "--property", "nope")
    assert code == 2 and "no property nope" in err
    code, out, err = run_cli(capsys, "sweep", spec, "--const", "N=2", "--const", "N=3")
    assert code == 2 and "given twice" in err
    code, out, err = run_cli(capsys, "sweep", spec, "--const", "N=2", "--html", spec)
    assert code == 2 and "the spec itself" in err
    code, out, err = run_cli(capsys, "sweep", spec, "--const", "N=2", "--html", str(tmp_path / "no" / "x.html"))
    assert code == 2 and "no such directory" in err
    code, out, err = run_cli(capsys, "sweep", spec, "--const", "N=2", "--cluster", "no-port-here")
    assert code == 2 and "not a scheduler address" in err and "Traceback" not in err


def test_exit_codes_combine_as_verify_and_corpus():
    assert combined_exit_code([0, 3, 0]) == 3 and combined_exit_code([3, 1, 0]) == 1
    assert combined_exit_code([0, 0]) == 0
    assert corpus_exit_code([0, 2, 3]) == 2 and corpus_exit_code([2, 1]) == 1 and corpus_exit_code([0]) == 0


def test_failed_run_is_unknown_with_the_reason():
    inst = Instance("m.gpspec", "", {"N": 2}, None, "explicit",
                    kinds=(("safe", "invariant"), ("deadlock", "deadlock")))
    run = failed_run(inst, "failed twice on the cluster: KilledWorker: ...")
    assert run.exit_code == 3 and run.seconds is None
    assert [(r["property"], r["kind"], r["verdict"]) for r in run.results] == [
        ("safe", "invariant", "unknown"), ("deadlock", "deadlock", "unknown")]
    assert all(r["reason"].startswith("failed twice") for r in run.results)


def test_trace_expansion(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.jsonl").write_text("")
    (tmp_path / "a" / "notes.txt").write_text("")
    (tmp_path / "empty").mkdir()
    assert expand_traces([str(tmp_path / "a")], OBSERVATION_SUFFIXES) == [str(tmp_path / "a" / "x.jsonl")]
    assert expand_traces([str(tmp_path / "**" / "*.jsonl")], OBSERVATION_SUFFIXES) == [str(tmp_path / "a" / "x.jsonl")]
    with pytest.raises(UsageError, match="no traces in this folder"):
        expand_traces([str(tmp_path / "empty")], OBSERVATION_SUFFIXES)
    with pytest.raises(UsageError, match="no file matches"):
        expand_traces([str(tmp_path / "*.nothing")], OBSERVATION_SUFFIXES)


# ------------------------------------------------------------------------------------------
# On the cluster started above


def test_sweep_json_is_verify_json_per_combination(capsys, examples, cluster_address):
    spec = str(examples / "rewind.gpspec")
    code, out, err = run_cli(capsys, "sweep", spec, "--const", "N=2..3", "--const", "CAP=1,2",
                             "--cluster", cluster_address, "--json")
    doc = json.loads(out)
    assert [r["constants"] for r in doc["runs"]] == [
        {"N": 2, "CAP": 1}, {"N": 2, "CAP": 2}, {"N": 3, "CAP": 1}, {"N": 3, "CAP": 2}]
    codes = []
    for run in doc["runs"]:
        consts = [x for k, v in run["constants"].items() for x in ("--const", f"{k}={v}")]
        vcode, vout, _ = run_cli(capsys, "verify", spec, *consts, "--json", "--no-progress")
        assert run["results"] == json.loads(vout)["results"]
        assert run["exit_code"] == vcode and run["seconds"] > 0
        codes.append(vcode)
    assert code == combined_exit_code(codes) == 1  # no_reexecution is violated (the rewind re-executes)
    assert "[4/4]" in err  # a progress line per finished combination


def test_sweep_table_and_exit_codes(capsys, examples, cluster_address):
    spec = str(examples / "rewind.gpspec")
    code, out, err = run_cli(capsys, "sweep", spec, "--const", "N=2,3", "--property", "in_order",
                             "--cluster", cluster_address, "--no-progress")
    # the test cluster listens on tcp:// (unauthenticated): the one line on stderr says so
    assert code == 0 and [ln for ln in err.splitlines() if "unauthenticated" not in ln] == [], err
    assert ("unauthenticated" in err) == cluster_address.startswith("tcp://"), err
    rows = [line.split() for line in out.splitlines()]
    assert ["N", "in_order", "time"] in rows
    assert [r[:2] for r in rows if len(r) == 3 and r[0] in ("2", "3")] == [["2", "proved"], ["3", "proved"]]
    # A state limit leaves the verdict unknown: exit 3, the reason printed.
    code, out, _ = run_cli(capsys, "sweep", spec, "--const", "N=3", "--property", "in_order",
                           "--max-states", "5", "--cluster", cluster_address, "--no-progress")
    assert code == 3 and "unknown:" in out


def test_html_heat_map(capsys, examples, cluster_address, tmp_path):
    spec = str(examples / "rewind.gpspec")
    page = tmp_path / "sweep.html"
    code, out, err = run_cli(capsys, "sweep", spec, "--const", "N=2..3", "--const", "CAP=1,2",
                             "--cluster", cluster_address, "--html", str(page), "--json", "--no-progress")
    doc = json.loads(out)
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "</html>" in html
    assert "http" not in html and "<script" not in html and "<link" not in html  # offline, self-contained
    for run in doc["runs"]:
        for r in run["results"]:
            if r["verdict"] == "violated":  # each counterexample length is in a cell
                assert f">{len(r['counterexample']['steps']) - 1}</td>" in html
    # two varying constants: a grid, N across and CAP down, for each property that does not
    # always hold; in_order is proved everywhere and only named
    assert "over N (across) and CAP (down)" in html and "<h3>no_reexecution</h3>" in html
    assert "<h3>in_order</h3>" not in html and "hold in every combination" in html
    assert list(tmp_path.iterdir()) == [page]  # no temporary file left beside it


def test_failed_tasks_are_retried_once_then_reported(cluster_address, tmp_path):
    marker = str(tmp_path / "died-once")

    def task(i: int) -> int:
        if i == 1 and not os.path.exists(marker):  # the worker dies on the first attempt only
            open(marker, "w").close()
            os._exit(1)
        if i == 2:
            raise ValueError("always fails")
        return i * 10

    with open_cluster(cluster_address) as cluster:
        outcomes = {o.index: o for o in cluster.run(task, [0, 1, 2])}
    assert outcomes[0].value == 0 and outcomes[0].attempts == 1
    assert outcomes[1].value == 10 and outcomes[1].attempts == 2
    assert outcomes[2].value is None and outcomes[2].attempts == 2
    assert outcomes[2].error == "failed twice on the cluster: ValueError: always fails"


def test_a_combination_that_fails_twice_is_unknown(cluster_address):
    # A source the worker cannot parse fails on every attempt; the sweep keeps the combination.
    bad = Instance("broken.gpspec", "model broken var", {}, None, "explicit", kinds=(("safe", "invariant"),))
    with open_cluster(cluster_address) as cluster:
        [(i, run)] = list(run_sweep(cluster, [bad]))
    assert i == 0 and run.exit_code == 3 and run.error.startswith("failed twice on the cluster: SpecSyntaxError")
    assert run.results[0]["verdict"] == "unknown" and run.results[0]["reason"] == run.error


# five of the committed real traces, the small ones, of five sources (a rewind that re-executes
# kernels among them): all 29 took 3 s of CPU, most of it the single checks of the large ones
SMALL_REAL = ["cupti_probe_records", "priority_equal", "rewind_after_finish", "timeslice_unequal_lengths",
              "xsched_l1_w1"]


def test_check_many_traces(capsys, cluster_address, tmp_path):
    folder = tmp_path / "real"
    folder.mkdir()
    for name in SMALL_REAL:
        (folder / f"{name}.jsonl.gz").write_bytes((REAL / f"{name}.jsonl.gz").read_bytes())
    code, out, err = run_cli(capsys, "check", str(folder), "--cluster", cluster_address, "--json")
    doc = json.loads(out)
    traces = sorted(str(p) for p in folder.glob("*.jsonl.gz"))
    assert len(traces) == len(SMALL_REAL)
    assert [t["trace"] for t in doc["traces"]] == traces
    codes = []
    for t in doc["traces"]:
        single_code, single, _ = run_cli(capsys, "check", t["trace"], "--json")
        assert t["report"] == json.loads(single) and t["exit_code"] == single_code
        codes.append(single_code)
    assert code == corpus_exit_code(codes) == 1  # the rewind traces re-execute kernels
    # the table: one row per trace, with its verdict
    code, out, _ = run_cli(capsys, "check", *traces[:3], "--cluster", cluster_address, "--no-progress")
    assert "3 of 3 traces checked" in out and all(t in out for t in traces[:3])
    code, _, err = run_cli(capsys, "check", traces[0], "model.gpspec")
    assert code == 2 and "takes traces" in err


def test_replay_many_traces(capsys, cluster_address, tmp_path):
    bad = tmp_path / "garbage.jsonl"
    bad.write_text("this is not json\n")
    pattern = str(SIM / "blp-*")
    code, out, err = run_cli(capsys, "replay", pattern, str(bad), "--cluster", cluster_address, "--json")
    doc = json.loads(out)
    names = [t["trace"] for t in doc["traces"]]
    assert names == sorted(str(p) for p in SIM.glob("blp-*")) + [str(bad)]
    for t in doc["traces"][:-1]:
        _, single, _ = run_cli(capsys, "replay", t["trace"], "--json")
        expected = json.loads(single)
        expected.pop("seconds"), t["report"].pop("seconds")
        assert t["report"] == expected
    garbage = doc["traces"][-1]
    assert garbage["exit_code"] == 2 and "report" not in garbage and str(bad) in garbage["error"]
    assert code == 1  # blp-bad-state diverges
    code, _, err = run_cli(capsys, "replay", pattern, "--perfetto", str(tmp_path / "p.json"))
    assert code == 2 and "single trace" in err


# ------------------------------------------------------------------------------------------
# The embedded local cluster, interrupted


BIG = """model grid
const N = 2
var x: 0..N = 0
var y: 0..N = 0
action incx { require x < N  x = x + 1 }
action incy { require y < N  y = y + 1 }
invariant bounded: x + y <= 2 * N
"""


def test_interrupt_prints_the_finished_rows(tmp_path):
    spec = tmp_path / "grid.gpspec"
    spec.write_text(BIG)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    # Two quick combinations, then two that search millions of states (bounded by --timeout): the
    # one worker is interrupted in the third, the fourth never starts (a second worker, interrupted
    # in the fourth, took another process's start-up and the same path)
    proc = subprocess.Popen([sys.executable, "-m", "gpcheck", "sweep", str(spec), "--const", "N=1,2,3000,3001",
                             "--workers", "1", "--timeout", "60", "--json"], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        lines = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            lines.append(line)
            if line.startswith("[2/4]") or not line:
                break
        assert lines[-1].startswith("[2/4]"), "".join(lines)
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group, workers included
        out, _ = proc.communicate(timeout=60)
    finally:
        try:  # whatever of the group is left (a worker still computing): nothing outlives the test
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    assert proc.returncode == 130
    doc = json.loads(out)
    assert doc["interrupted"] is True
    assert sorted(r["constants"]["N"] for r in doc["runs"]) == [1, 2]
    assert all(r["results"][0]["verdict"] == "proved" for r in doc["runs"])
    assert doc["not_run"] == [{"N": 3000}, {"N": 3001}]

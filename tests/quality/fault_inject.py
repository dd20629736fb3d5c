"""Fault injection for the caches and the cluster (issue 36, in the spirit of Jepsen): every run
must end with a complete, honest report or a clear error, whatever happens to its cache or its
workers.

    PYTHONPATH=$PWD python tests/quality/fault_inject.py [--minutes 5] [--seed 1] [--only cache|cluster]

*Cache trials*: one cache directory shared by every run of a small model on the compiled core;
between two runs a random fault is injected into it (NOTE(cache-trust) in spec/usercache.py):
a malicious pickle over a numba cache file or the grammar tables, a foreign native kernel or
numba file copied under another's name (with or without its digest), a truncated or bit-flipped
file, a stale digest. Each run must print the reference verdicts and state count, exit as the
reference did, print no traceback, and the planted code must never run (its marker file stays
absent).

*Cluster trials*: a scheduler and a worker process started as a user starts them (`--cluster`),
`gpcheck sweep` over a grid whose combinations take a few seconds each, or `gpcheck replay` over a
corpus of traces (copies of traces/corpus/sim's holding and violating traces), and at a random
moment one fault: the worker killed (the scheduler then has none), the scheduler killed, or
nothing. The run must end within a bound, with a JSON report where every combination (every
trace: its single run's report and exit code) is either the reference result or `unknown` (exit
3) with a reason, the exit code its command's rule gives over them, no traceback, and no process
of its own left behind.

The CI slice (tests/quality/test_fault_slice.py) runs a few cache trials of each kind; the long
mode here runs both kinds for --minutes and prints the figures.

A numba fault plants over every file of its kind (`every=True`: whichever the run loads first),
so the run recompiles every generated module (seconds of CPU). The default test run plants over
the files of the runtime helpers' module alone (`every=False`), which every model imports and
which compiles in a fraction of a second: the same code refuses them (gpmodel/numba_cache.py),
whichever module a file belongs to. A foreign numba file goes over the index of the one model
function a warm run reads (MODEL_FUNCTION). Either way the trial checks that each planted numba
file was read and refused: after the run numba has written it afresh, with its digest."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable

SPEC = ("model fault_t\nconst N = 3\nvar x: [0..N-1] -> 0..3 = 0\nvar t: 0..9 = 0\n"
        "action inc(i: 0..N-1) { require x[i] < 3\n x[i] = x[i] + 1\n t = (t + i) % 10 }\n"
        "action reset(i: 0..N-1) { require x[i] == 3\n x[i] = 0 }\n"
        "invariant small: t != 7 or x[0] != 3\ntransition up: x[0]' >= x[0] or x[0] == 3\n")
OTHER = SPEC.replace("model fault_t", "model fault_u").replace("var t: 0..9", "var t: 0..11").replace("% 10", "% 12")
GRID = ("model grid\nconst N = 2\nvar x: 0..N = 0\nvar y: 0..N = 0\n"
        "action incx { require x < N  x = x + 1 }\naction incy { require y < N  y = y + 1 }\n"
        "invariant bounded: x + y <= 2 * N\ninvariant small: x + y < 2 * N\n")

CACHE_FAULTS = ("malicious_nbi", "malicious_nbc", "malicious_tables", "malicious_lark_cache", "foreign_native",
                "forged_native_header", "foreign_numba", "truncated_nbi_with_digest", "truncated_any",
                "flipped_any", "stale_digest", "none")
CLUSTER_FAULTS = ("kill_worker", "kill_worker_child", "kill_scheduler", "none")


class Evil:
    """A pickle that, when loaded, creates the marker file (the planted code "runs")."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.marker, "w"))


NUMBA_FAULTS = ("malicious_nbi", "malicious_nbc", "foreign_numba", "truncated_nbi_with_digest")


def env_for(cache: Path, native: str = "auto") -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "GPCHECK_CACHE_DIR": str(cache), "GPCHECK_NATIVE": native}


def verify(spec: Path, cache: Path, timeout: float = 900, native: str = "auto") -> tuple[int, dict[str, Any] | None, str]:
    """`gpcheck verify SPEC --core compiled --json` in a fresh process (with the kept native
    kernels, or with `native="off"` numba's own cache files for every kernel)."""
    r = subprocess.run([PY, "-m", "gpcheck", "verify", str(spec), "--core", "compiled", "--json", "--no-progress"],
                       env=env_for(cache, native), capture_output=True, text=True, timeout=timeout, cwd=spec.parent)
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        doc = None
    return r.returncode, doc, r.stderr


def summary(doc: dict[str, Any] | None) -> Any:
    if doc is None:
        return None
    return doc.get("states"), [(r["property"], r["verdict"], r.get("bound")) for r in doc["results"]]


def _digest(name: str, data: bytes) -> str:
    return hashlib.sha256(name.encode() + b"\0" + data).hexdigest()


def runtime_module() -> str:
    """The name of the generated module of the runtime helpers (gpmodel/jit.py's `_RUNTIME`):
    every model's module imports it, and it compiles in a fraction of a second."""
    from gpcheck.gpmodel import jit

    return jit._module_name(jit._RUNTIME)


# The one function of the model's module whose numba files a warm run reads (with the native
# kernels off): the engine calls it from Python; the other functions are its callees, linked into
# its machine code, and read only when it is compiled again.
MODEL_FUNCTION = "expand"


def numba_targets(pyc: Path, suffix: str, every: bool) -> list[Path]:
    """numba's files (`.nbi` or `.nbc`) of the generated modules a numba fault plants over:
    every one (whichever the run loads first), or those of the runtime helpers' module, which
    every run reads too (the same refusal for a fraction of the recompilation)."""
    targets = sorted(pyc.glob(f"gpcheck_jit_*{suffix}"))
    if every:
        return targets
    helpers = runtime_module()
    return [p for p in targets if p.name.split(".")[0] == helpers]


def plant(cache: Path, other: Path, kind: str, marker: Path, rng: random.Random, every: bool = True
          ) -> tuple[str, dict[Path, bytes]]:
    """Damage `cache` (whose model is SPEC) one way; `other` is a cache of another model. Returns
    what was done, in words, and {numba file planted over: the bytes planted}. `every=False`
    plants a numba fault over fewer files (numba_targets)."""
    pyc = cache / "__pycache__"
    files = sorted(p for p in cache.rglob("*") if p.is_file() and not p.name.endswith(".sha256"))
    evil = pickle.dumps(Evil(marker))
    if kind in ("malicious_nbi", "malicious_nbc"):
        suffix = ".nbi" if kind == "malicious_nbi" else ".nbc"
        targets = numba_targets(pyc, suffix, every)
        if not targets:
            return "nothing to plant over", {}
        with_digest = rng.random() < 0.5
        for victim in targets:
            victim.write_bytes(evil)
            if with_digest:  # a plain digest of the bytes, not gpcheck's (which covers the name too)
                (victim.parent / (victim.name + ".sha256")).write_text(hashlib.sha256(evil).hexdigest())
        return f"{kind} over {len(targets)} files{' with digests' if with_digest else ''}", dict.fromkeys(targets, evil)
    if kind == "malicious_tables":
        (cache / "spec-grammar.tables.json").write_bytes(evil)
        return kind, {}
    if kind == "malicious_lark_cache":  # where lark's own cache= kept its pickle
        (cache / "spec-grammar.lark-cache").write_bytes(evil)
        return kind, {}
    if kind in ("foreign_native", "forged_native_header"):
        mine = sorted((cache / "native").glob("*.bin"))
        theirs = sorted((other / "native").glob("*.bin"))
        if not mine or not theirs:
            return "no native files", {}
        victim, donor = rng.choice(mine), rng.choice(theirs)
        data = donor.read_bytes()
        if kind == "forged_native_header":  # the header claims this model; the object is the other's
            head, _, obj = data.partition(b"\n")
            meta, mine_meta = json.loads(head), json.loads(victim.read_bytes().partition(b"\n")[0])
            meta.update({k: mine_meta[k] for k in ("module", "kernel", "entry") if k in mine_meta})
            data = json.dumps(meta).encode() + b"\n" + obj
        victim.write_bytes(data)
        return f"{kind} {donor.name} -> {victim.name}", {}
    if kind == "foreign_numba":  # another model's index (and its digest) copied under this name
        mine = sorted(pyc.glob(f"gpcheck_jit_*.{MODEL_FUNCTION}-*.nbi"))
        theirs = sorted((other / "__pycache__").glob(f"gpcheck_jit_*.{MODEL_FUNCTION}-*.nbi"))
        if not mine or not theirs:
            return "no numba files", {}
        victim, donor = rng.choice(mine), rng.choice(theirs)
        victim.write_bytes(donor.read_bytes())
        side = donor.parent / (donor.name + ".sha256")
        if side.exists():
            (victim.parent / (victim.name + ".sha256")).write_bytes(side.read_bytes())
        return f"{kind} {donor.name} -> {victim.name}", {victim: donor.read_bytes()}
    if kind == "truncated_nbi_with_digest":  # a damaged index whose digest matches it: numba's EOFError
        targets = numba_targets(pyc, ".nbi", every)
        if not targets:
            return "no index", {}
        planted: dict[Path, bytes] = {}
        for victim in targets:
            data = victim.read_bytes()[: rng.randrange(0, 40)]
            victim.write_bytes(data)
            (victim.parent / (victim.name + ".sha256")).write_text(_digest(victim.name, data))
            planted[victim] = data
        return f"{kind} over {len(targets)} files", planted
    if kind in ("truncated_any", "flipped_any"):
        if not files:
            return "empty cache", {}
        victim = rng.choice(files)
        data = victim.read_bytes()
        if kind == "truncated_any":
            victim.write_bytes(data[: rng.randrange(0, max(1, len(data)))])
        elif data:
            k = rng.randrange(len(data))
            victim.write_bytes(data[:k] + bytes([data[k] ^ (1 << rng.randrange(8))]) + data[k + 1:])
        return f"{kind} {victim.relative_to(cache)}", {}
    if kind == "stale_digest":
        sides = sorted(cache.rglob("*.sha256"))
        if not sides:
            return "no digest", {}
        victim = rng.choice(sides)
        victim.write_text("0" * 64)
        return f"{kind} {victim.name}", {}
    return "none", {}


def cache_trial(work: Path, cache: Path, other: Path, kind: str, rng: random.Random,
                reference: tuple[int, Any], every: bool = True) -> tuple[bool, str]:
    """One fault, then one run; (ok, what happened). A numba file planted over must have been
    read and refused: after the run it holds what numba wrote afresh, its digest matching
    (`every=False`: fewer files planted over, see numba_targets)."""
    from gpcheck.gpmodel import numba_cache

    marker = work / f"planted-code-ran-{rng.randrange(1 << 30)}"
    what, planted = plant(cache, other, kind, marker, rng, every)
    rc, doc, err = verify(work / "fault_t.gpspec", cache, native="off" if kind in NUMBA_FAULTS else "auto")
    problems = []
    if marker.exists():
        problems.append("the planted code ran")
    kept = [p.name for p, data in planted.items() if numba_cache.read_verified(str(p)) in (None, data)]
    if kept:
        problems.append(f"planted files not rebuilt (never read, or kept): {kept}")
    if (rc, summary(doc)) != reference:
        problems.append(f"result {rc} {summary(doc)} != reference {reference}")
    if "Traceback" in err or "internal error" in err:
        problems.append("traceback: " + err[-800:])
    leftovers = [p.name for p in cache.rglob("*.tmp*")]
    if leftovers:
        problems.append(f"temporary files left: {leftovers}")
    return not problems, f"{what}: " + ("ok" if not problems else "; ".join(problems))


def prepare_caches(work: Path) -> tuple[Path, Path, tuple[int, Any]]:
    """A warm cache of SPEC and one of OTHER (the source of foreign files), and the reference."""
    (work / "fault_t.gpspec").write_text(SPEC)
    (work / "fault_u.gpspec").write_text(OTHER)
    cache, other = work / "cache", work / "other"
    rc, doc, err = verify(work / "fault_t.gpspec", cache)
    assert doc is not None, err
    reference = (rc, summary(doc))
    copy_shared_modules(cache, other)
    rc2, doc2, err2 = verify(work / "fault_u.gpspec", other)
    assert doc2 is not None, err2
    return cache, other, reference


def copy_shared_modules(cache: Path, other: Path) -> None:
    """Start `other` as a copy of `cache` less its model's own files: the generated modules every
    model shares (the runtime helpers, the graph and shared kernels) stay warm, so that OTHER's
    run compiles only its own module (about 5 s of CPU instead of 9), and the files a foreign
    fault takes from `other` (kept native code, the numba index of MODEL_FUNCTION) are all OTHER's."""
    shutil.copytree(cache, other, symlinks=True)
    model_modules = {p.name.split(".")[0] for p in (other / "__pycache__").glob("gpcheck_jit_*.succ-*.nbi")}
    for p in sorted(other.rglob("*")):
        if p.is_file() and (p.name.split(".")[0] in model_modules or p.parent.name == "native"):
            p.unlink()


def copy_caches(shared: Path, cache: Path, other: Path, reference: tuple[int, Any], work: Path
                ) -> tuple[Path, Path, tuple[int, Any]]:
    """A private copy in `work` of caches made by prepare_caches(shared) (tests/conftest.py's
    `fault_caches`, made once per test run): the two specs and SPEC's cache, file times kept so
    the copy is as warm as the original; OTHER's cache stays where it is (faults only read it).
    Returns what prepare_caches(work) would."""
    for name in ("fault_t.gpspec", "fault_u.gpspec"):
        shutil.copy2(shared / name, work / name)
    shutil.copytree(cache, work / "cache", symlinks=True)
    return work / "cache", other, reference


# ------------------------------------------------------------------------------ the cluster
def scheduler_address(sched_file: Path, deadline: float) -> str:
    """The address in a `dask scheduler --scheduler-file`, once the scheduler has written it:
    the file appears before its text does (an empty file read too early failed a test run)."""
    while True:
        try:
            return str(json.loads(sched_file.read_text())["address"])
        except (OSError, ValueError, KeyError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _start_cluster(work: Path, env: dict[str, str], worker_env: dict[str, str] | None = None
                   ) -> tuple[subprocess.Popen[bytes], subprocess.Popen[bytes], str]:
    sched_file = work / f"scheduler-{time.monotonic_ns()}.json"
    logs = open(work / "cluster.log", "a")
    scheduler = subprocess.Popen([PY, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                                  "--no-dashboard", "--scheduler-file", str(sched_file)],
                                 env=env, stdout=logs, stderr=logs, cwd=work, start_new_session=True)
    address = scheduler_address(sched_file, time.monotonic() + 120)
    worker = subprocess.Popen([PY, "-m", "distributed.cli.dask_worker", address, "--nworkers", "1", "--nthreads", "1",
                               "--no-dashboard"], env=worker_env or env, stdout=logs, stderr=logs, cwd=work,
                              start_new_session=True)
    return scheduler, worker, address


def _wait_for_worker(address: str) -> bool:
    """Whether the cluster at `address` has a worker within two minutes; asked from this
    process (a child interpreter importing distributed cost a second and a half of CPU). No
    garbage collection while the Client starts, and one after: a Client left half made must not
    be finalised inside a later one's start (test_cluster_faults.py's _no_collection_inside)."""
    import gc

    from distributed import Client

    gc.disable()
    try:
        with Client(address, timeout=60) as client:
            client.wait_for_workers(1, timeout=120)
    except (OSError, TimeoutError):
        return False
    finally:
        gc.enable()
        gc.collect()
    return True


def _kill_group(proc: subprocess.Popen[Any] | None) -> None:
    if proc is None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _kill_children(proc: subprocess.Popen[Any]) -> None:
    """SIGKILL the worker processes under a `dask worker` nanny (the nanny restarts them)."""
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == proc.pid:
                try:
                    os.kill(int(d.name), signal.SIGKILL)
                except ProcessLookupError:
                    pass


def _group_alive(pgid: int) -> bool:
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if os.getpgid(int(d.name)) == pgid:
                    return True
            except (ProcessLookupError, PermissionError):
                pass
    return False


def corpus_traces(work: Path, copies: int = 3) -> list[Path]:
    """Traces for a corpus trial: the simulated corpus's traces of two models, holding and
    violating (traces/corpus/sim), each copied `copies` times so the run outlasts a fault."""
    sim = ROOT / "traces" / "corpus" / "sim"
    names = sorted(p.name for p in sim.glob("*.jsonl") if p.name.split("-")[0] in ("cwsr", "blp"))
    folder = work / f"corpus-{time.monotonic_ns()}"
    folder.mkdir()
    out = []
    for i in range(copies):
        for name in names:
            dest = folder / f"{i}-{name}"
            dest.write_bytes((sim / name).read_bytes())
            out.append(dest)
    return out


def _single_reports(traces: list[Path], work: Path) -> dict[str, tuple[int, Any]]:
    """Each trace's single run, `gpcheck replay TRACE --json`: (exit code, its report without
    timings and paths), once per distinct trace (the copies are named `<i>-<name>`). The
    references run in this process (the command line's `main`, tests/docsrun.py), not in ten
    fresh interpreters (about 1 s of CPU each): the fault under test is the cluster's."""
    from tests.docsrun import _gpcheck as gpcheck_in_process

    out: dict[str, tuple[int, Any]] = {}
    for trace in traces:
        name = trace.name.split("-", 1)[1]
        if name not in out:
            r = gpcheck_in_process(["replay", str(trace), "--json"], work)
            out[name] = (r.returncode, _untimed(json.loads(r.stdout)) if r.stdout.strip() else None)
    return {str(trace): out[trace.name.split("-", 1)[1]] for trace in traces}


def _untimed(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _untimed(v) for k, v in doc.items() if k not in ("seconds", "elapsed_s", "timing", "time_s", "trace")}
    if isinstance(doc, list):
        return [_untimed(v) for v in doc]
    return doc


def _judge_sweep(doc: dict[str, Any], values: str, returncode: int, problems: list[str]) -> int:
    """Every combination is the reference result or unknown with a reason; the number lost."""
    lost = 0
    runs = doc["runs"]
    lo, hi = (int(v) for v in values.split(".."))
    want = hi - lo + 1
    if len(runs) != want:
        problems.append(f"{len(runs)} runs of {want}")
    for run in runs:
        n = run["constants"]["N"]
        verdicts = {r["property"]: r["verdict"] for r in run["results"]}
        if all(v == "unknown" for v in verdicts.values()):
            lost += 1
            if not run.get("error") or not all(r.get("reason") for r in run["results"]):
                problems.append(f"N={n}: unknown without a reason")
            continue
        expect = {"bounded": "proved", "small": "violated", "deadlock": "violated", "range": "proved"}
        for name, verdict in verdicts.items():
            if name in expect and verdict not in (expect[name], "unknown"):
                problems.append(f"N={n}: {name} {verdict}, expected {expect[name]}")
    codes = [r["exit_code"] for r in runs]
    expected_rc = 1 if 1 in codes else 3 if 3 in codes else 0  # verify's rule over the runs
    if returncode != expected_rc:
        problems.append(f"exit {returncode}, expected {expected_rc}")
    return lost


def _judge_corpus(doc: dict[str, Any], singles: dict[str, tuple[int, Any]], returncode: int,
                  problems: list[str]) -> int:
    """Every trace's row is its single run's report and exit code, or exit 3 with the reason
    (the cluster lost it); the corpus's exit code follows its rule; the number lost."""
    rows = {row["trace"]: row for row in doc.get("traces", [])}
    lost = 0
    for trace, (code, report) in singles.items():
        row = rows.get(trace)
        if row is None:
            problems.append(f"{Path(trace).name}: no row")
            continue
        if row["exit_code"] == 3 and row.get("error") and code != 3:
            lost += 1
            continue
        if row["exit_code"] != code or _untimed(row.get("report")) != report:
            problems.append(f"{Path(trace).name}: exit {row['exit_code']} where the single run exits {code}, "
                            "or a report that differs from the single run's")
    codes = [row["exit_code"] for row in rows.values()]
    expected_rc = next((c for c in (1, 2, 3) if c in codes), 0)  # checker/distributed/corpus.py corpus_exit_code
    if returncode != expected_rc:
        problems.append(f"exit {returncode}, expected {expected_rc}")
    return lost


def cluster_trial(work: Path, kind: str, rng: random.Random, values: str = "150..157",
                  bound_s: float = 150, workload: str = "sweep") -> tuple[bool, str, float]:
    """A sweep (`workload="sweep"`) or a corpus run (`"corpus"`: `gpcheck replay` over several
    traces) on an existing cluster, with one fault at a random moment; (ok, what, seconds)."""
    env = {**env_for(work / "cache"), "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0",
           "GPCHECK_CLUSTER_STALL": "10"}
    if workload == "sweep":
        spec = work / "grid.gpspec"
        spec.write_text(GRID)
        argv = ["sweep", str(spec), "--const", f"N={values}"]
    else:
        traces = corpus_traces(work)
        singles = _single_reports(traces, work)
        argv = ["replay", *map(str, traces)]
    scheduler, worker, address = _start_cluster(work, env)
    run = None
    try:
        if not _wait_for_worker(address):
            return False, f"{kind}: the test cluster did not start", 0.0
        started = time.monotonic()
        run = subprocess.Popen([PY, "-m", "gpcheck", *argv, "--cluster", address, "--json", "--timeout", "60"],
                               env=env, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(iter(run.stderr.readline, "")), daemon=True)
        reader.start()
        deadline = time.monotonic() + bound_s
        while not any(line.startswith("checking") for line in lines) and run.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        at = rng.uniform(0.0, 6.0)  # after the run reached the cluster
        if kind != "none":
            try:
                run.wait(timeout=at)
            except subprocess.TimeoutExpired:
                if kind == "kill_worker_child":
                    _kill_children(worker)
                else:
                    _kill_group(worker if kind == "kill_worker" else scheduler)
        try:
            out = run.communicate(timeout=bound_s)[0]
        except subprocess.TimeoutExpired:
            _kill_group(run)
            return False, f"{workload} {kind} at {at:.1f} s: the run did not end within {bound_s:.0f} s", bound_s
        reader.join(timeout=5)
        err = "".join(lines)
        seconds = time.monotonic() - started
        problems: list[str] = []
        try:
            doc = json.loads(out)
        except ValueError:
            doc = None
            problems.append(f"no JSON report (exit {run.returncode}): {err[-600:]}")
        if "Traceback" in err or "internal error" in err:
            problems.append("traceback: " + err[-800:])
        body = "runs" if workload == "sweep" else "traces"
        if doc is not None and body not in doc and run.returncode == 2 and kind != "none" and doc.get("error"):
            clear = doc["error"]["message"]  # the cluster went before the run reached it: a clear error
            return True, f"{workload} {kind} at {at:.1f} s: clear error, exit 2: {clear}", time.monotonic() - started
        if doc is not None and body not in doc:
            problems.append(f"a JSON report without {body} (exit {run.returncode}): {out[-600:]} {err[-600:]}")
            doc = None
        lost = 0
        if doc is not None:
            lost = (_judge_sweep(doc, values, run.returncode, problems) if workload == "sweep"
                    else _judge_corpus(doc, singles, run.returncode, problems))
        time.sleep(1.0)
        if _group_alive(run.pid):
            problems.append(f"a process of the {workload} was left behind")
        what = (f"{workload} {kind} at {at:.1f} s: {lost} of the checks unknown, exit {run.returncode}, "
                f"{seconds:.0f} s")
        return not problems, what + ("" if not problems else ": " + "; ".join(problems)), seconds
    finally:
        _kill_group(run)
        _kill_group(worker)
        _kill_group(scheduler)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", choices=("cache", "cluster"), default=None)
    opts = ap.parse_args(argv)
    rng = random.Random(opts.seed)
    stop = time.monotonic() + 60 * opts.minutes
    counts: Counter[str] = Counter()
    failures: list[str] = []
    cluster_seconds: list[float] = []
    with tempfile.TemporaryDirectory(prefix="gpcheck-faults-") as tmp:
        work = Path(tmp)
        if opts.only != "cluster":
            cache, other, reference = prepare_caches(work)
        turn = 0
        while time.monotonic() < stop:
            turn += 1
            do_cluster = opts.only == "cluster" or (opts.only is None and turn % 4 == 0)
            if do_cluster:
                kind = rng.choice(CLUSTER_FAULTS)
                workload = rng.choice(("sweep", "corpus"))
                ok, what, seconds = cluster_trial(work, kind, rng, workload=workload)
                cluster_seconds.append(seconds)
            else:
                kind = rng.choice(CACHE_FAULTS)
                ok, what = cache_trial(work, cache, other, kind, rng, reference)
            counts[f"{kind} {'ok' if ok else 'FAILED'}"] += 1
            print(("ok    " if ok else "FAIL  ") + what, flush=True)
            if not ok:
                failures.append(what)
    print("\nfigures:")
    for key in sorted(counts):
        print(f"  {key}: {counts[key]}")
    if cluster_seconds:
        print(f"  cluster trials: longest {max(cluster_seconds):.0f} s")
    print(f"  {sum(counts.values())} trials, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

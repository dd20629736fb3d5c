"""The long fuzz run of issue 19: hostile inputs of every kind through `gpcheck`, one forked
child per input under a time and address-space limit, and the figures per input kind.

    PYTHONPATH=$PWD python tests/quality/fuzz_run.py [--per-kind 300] [--seed 1] [--kinds spec,trace,...]
                        [--time-limit 30] [--mem-mb 1500] [--save DIR] [--json FILE]

Every input runs `gpcheck.checker.cli.command.main(argv)` in a child forked from this process (the imports are
paid once). A run counts as
- a *traceback* when an exception escapes `main`, or `main` reports an internal error;
- *unlocated* when it exits 2 and its first error line names no file:line(:column), trace line,
  table/row, CSV line, record or JSON position (fuzzcases.is_located);
- a *time blow-up* when it is still running after --time-limit seconds (killed);
- a *memory blow-up* when it runs out of its address space (MemoryError or killed);
- *success without output* when it exits 0 but a file it was asked to write is missing.
Run it against another checkout with PYTHONPATH pointing there (the inputs are the same for the
same --seed): that is how the before/after figures of issue 19 were taken.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import io
import json
import os
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzzcases import KINDS, Case, Generator, is_located  # noqa: E402

EXIT_TRACEBACK, EXIT_MEMORY = 97, 98
# the checkout under test: one import package `gpcheck` (issue 17), or the four top-level packages
# of a checkout from before it (how the before/after figures of issue 19 are taken)
def _prefix() -> str:
    old = importlib.util.find_spec("spec")  # a checkout on PYTHONPATH: which layout has it?
    if old is not None and old.origin and not (Path(old.origin).parents[1] / "gpcheck").is_dir():
        return ""
    return "gpcheck."


PREFIX = _prefix()


def _vm_size() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


def _child(argv: list[str], mem_limit: int) -> None:
    """Runs in the forked child: fds 1 and 2 are already the case's files."""
    main = importlib.import_module(PREFIX + "checker.cli.command").main

    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), write_through=True)
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), write_through=True)
    resource.setrlimit(resource.RLIMIT_AS, (mem_limit, mem_limit))
    code = 0
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 2
    except MemoryError:
        sys.stderr.write("\nFUZZ: MemoryError\n")
        code = EXIT_MEMORY
    except BaseException as e:  # noqa: BLE001 - classifying what escapes is the point
        sys.stderr.write("\nFUZZ: traceback " + type(e).__name__ + "\n")
        try:
            traceback.print_exc()
        except BaseException:  # noqa: BLE001
            pass
        code = EXIT_TRACEBACK
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code if isinstance(code, int) else 2)


def preload() -> int:
    """Import every module of gpcheck once, before forking: each child then runs the code as it
    was when the run started (not what is on disk later) and starts faster. Returns the count."""
    import importlib
    import pkgutil

    n = 0
    for pkg in (PREFIX + p for p in ("spec", "gpmodel", "checker", "traces")):
        mod = importlib.import_module(pkg)
        for info in pkgutil.walk_packages(mod.__path__, pkg + "."):
            if info.name.startswith(PREFIX + "traces.record"):
                continue  # the GPU recorder needs CuPy and a device
            try:
                importlib.import_module(info.name)
                n += 1
            except ImportError:
                pass
    return n


def run_case(case: Case, time_limit: float, mem_limit: int) -> dict[str, object]:
    d = tempfile.mkdtemp(prefix="gpfuzz-")
    try:
        for name, data in case.files.items():
            Path(d, name).write_bytes(data)
        out_fd = os.open(os.path.join(d, ".stdout"), os.O_WRONLY | os.O_CREAT)
        err_fd = os.open(os.path.join(d, ".stderr"), os.O_WRONLY | os.O_CREAT)
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:  # child
            try:
                os.chdir(d)
                os.dup2(out_fd, 1)
                os.dup2(err_fd, 2)
                _child(case.argv, mem_limit)
            finally:
                os._exit(EXIT_TRACEBACK)
        os.close(out_fd)
        os.close(err_fd)
        status, rusage, killed = 0, None, False
        while True:
            p, status, rusage = os.wait4(pid, os.WNOHANG)
            if p == pid:
                break
            if time.monotonic() - t0 > time_limit:
                os.kill(pid, signal.SIGKILL)
                _, status, rusage = os.wait4(pid, 0)
                killed = True
                break
            time.sleep(0.005)
        seconds = time.monotonic() - t0
        err = Path(d, ".stderr").read_text(errors="replace")
        rc = os.waitstatus_to_exitcode(status)
        res: dict[str, object] = {"rc": rc, "seconds": round(seconds, 3), "maxrss_mb": rusage.ru_maxrss // 1024,
                                  "stderr": err[-3000:]}
        if killed:
            res["class"] = "time"
        elif rc == EXIT_MEMORY or rc == -signal.SIGKILL or "MemoryError" in err:
            res["class"] = "memory"
        elif rc == EXIT_TRACEBACK or rc < 0 or "internal error" in err:
            m = re.search(r"FUZZ: traceback (\w+)|internal error: (\w+)", err)
            res["class"] = "traceback"
            res["exception"] = (m.group(1) or m.group(2)) if m else f"signal {-rc}"
        elif rc == 2 and not is_located(err, case.input):
            res["class"] = "unlocated"
        elif rc == 0 and any(not Path(d, o).exists() for o in case.outputs):
            res["class"] = "success-without-output"
        else:
            res["class"] = "ok"
        return res
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-kind", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--mem-mb", type=int, default=1500, help="address space allowed above this process's")
    ap.add_argument("--save", metavar="DIR", help="keep every failing input here, with its command")
    ap.add_argument("--json", metavar="FILE", help="write every failing run's record here")
    args = ap.parse_args()
    gen = Generator()
    modules = preload()
    mem_limit = _vm_size() + args.mem_mb * 1024 * 1024
    figures: dict[str, Counter[str]] = defaultdict(Counter)
    exceptions: dict[str, Counter[str]] = defaultdict(Counter)
    failures = []
    t_start = time.monotonic()
    for kind in args.kinds.split(","):
        for i, case in enumerate(gen.cases(kind, args.per_kind, args.seed)):
            res = run_case(case, args.time_limit, mem_limit)
            figures[kind]["runs"] += 1
            figures[kind][str(res["class"])] += 1
            if res["class"] == "traceback":
                exceptions[kind][str(res.get("exception"))] += 1
            if res["class"] != "ok":
                rec = {"kind": kind, "index": i, "mutation": case.mutation, "argv": case.argv, **res}
                failures.append(rec)
                if args.save:
                    dst = Path(args.save, f"{kind}-{i:04d}-{res['class']}")
                    dst.mkdir(parents=True, exist_ok=True)
                    for name, data in case.files.items():
                        (dst / name).write_bytes(data)
                    (dst / "run.json").write_text(json.dumps(rec, indent=1))
        print(f"{kind}: {dict(figures[kind])}", file=sys.stderr, flush=True)
    print(f"\n{sum(c['runs'] for c in figures.values())} inputs in {time.monotonic() - t_start:.0f} s "
          f"(seed {args.seed}, {args.per_kind} per kind, limits {args.time_limit:g} s and +{args.mem_mb} MiB, "
          f"{modules} modules from {Path(sys.modules[PREFIX + 'spec'].__file__ or '').parent.parent})\n")
    print("| input | runs | tracebacks | unlocated errors | time blow-ups | memory blow-ups | success without output |")
    print("|---|---|---|---|---|---|---|")
    for kind, c in figures.items():
        exc = ", ".join(f"{k} {v}" for k, v in exceptions[kind].most_common())
        tb = f"{c['traceback']}" + (f" ({exc})" if exc else "")
        print(f"| {kind} | {c['runs']} | {tb} | {c['unlocated']} | {c['time']} | {c['memory']} | "
              f"{c['success-without-output']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(failures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

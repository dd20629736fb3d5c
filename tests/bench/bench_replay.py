"""Benchmark: `gpcheck replay` of long simulated traces, fully observed and with every internal
action hidden, at 100k and 1M events, against baselines measured in the same run.

    python tests/bench/bench_replay.py [--sizes 100000,1000000] [--runs 1] [--keep DIR]

The model is tests/bench/data/ring_loop.gpspec: ring.gpspec plus one `next_task` action that
restarts the ring once the task's kernels retired, so a behaviour can be a million steps long
(ring.gpspec itself deadlocks after ~30 steps). Traces (made once with `gpcheck simulate`'s
code, seed 1) are:

- `full`: every step logged (internal ones included), each with the whole state;
- `hidden`: internal actions (fetch, wave, retire) left out, each logged event with the whole
  state; replay inserts the hidden steps (up to 32 per event).

Each measurement is a separate process (peak RSS from getrusage). Baselines, same file, same run:

- `parse`: read the file and `orjson.loads` every line: the floor of any JSON Lines reader;
- `naive`: the simplest correct replay of a fully observed trace with every step logged: parse,
  look the instance up, `cm.step`, compare `layout.decode` of the result with the logged state
  (no hidden steps, no candidate sets, no properties, no diagnosis).

Reported: CPU seconds of the replay itself (and wall seconds), events/s, peak RSS of the process
(MiB), and the ratios replay/parse and replay/naive on CPU time.

Measured 2026-11-21 (Python 3.11.7, a 2-CPU machine shared with other jobs; three runs, range):
full 1M events 4.8-5.8 s CPU (170-210k ev/s), x2.7-3.8 the parse baseline, x0.45-0.52 the naive
replay; hidden 1M events 5.6-6.4 s CPU, x3.2-4.7 parse; peak RSS 43 MiB at 100k and at 1M.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SPEC = ROOT / "tests" / "bench" / "data" / "ring_loop.gpspec"

_PRE = "import resource,sys,time\nsys.path.insert(0, {root!r})\n"
_POST = ("\nprint('maxrss', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
         "print('cpu', resource.getrusage(resource.RUSAGE_SELF).ru_utime, file=sys.stderr)\n")

REPLAY = """
from gpcheck.gpmodel import compile_model
from gpcheck.spec import load_spec
from gpcheck.checker.engines.replay.search import Replayer, ReplayOptions, file_source
cm = compile_model(load_spec({spec!r}))
t0, c0 = time.perf_counter(), time.process_time()
rep = Replayer(cm, ReplayOptions()).replay(file_source({trace!r}), {trace!r})
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
assert rep.conforms, (rep.divergence, rep.reason)
print('result', rep.events, wall, cpu, rep.peak_candidates, rep.max_hidden, rep.exit_code)
"""

PARSE = """
import orjson
t0, c0 = time.perf_counter(), time.process_time()
n = 0
with open({trace!r}, 'rb') as f:
    for line in f:
        orjson.loads(line)
        n += 1
print('result', n - 1, time.perf_counter() - t0, time.process_time() - c0)
"""

NAIVE = """
import orjson
from gpcheck.gpmodel import compile_model
from gpcheck.spec import load_spec
cm = compile_model(load_spec({spec!r}))
t0, c0 = time.perf_counter(), time.process_time()
with open({trace!r}, 'rb') as f:
    header = orjson.loads(f.readline())
    s = cm.layout.encode(header['init'])
    n = 0
    ids = {{}}
    for line in f:
        ev = orjson.loads(line)
        key = (ev['action'], *ev['args'].items())
        iid = ids.get(key)
        if iid is None:
            iid = ids[key] = cm.find_instance(ev['action'], ev['args'])
        t = cm.step(iid, s)
        assert type(t) is tuple and cm.layout.decode(t) == ev['state'], n
        s = t
        n += 1
print('result', n, time.perf_counter() - t0, time.process_time() - c0)
"""


def make_traces(directory: Path, sizes: list[int]) -> dict[tuple[str, int], Path]:
    """Simulated traces of ring_loop (seed 1), written once and reused by every run."""
    from gpcheck.gpmodel import compile_model
    from gpcheck.gpmodel.simulate import simulate
    from gpcheck.spec import load_spec
    from gpcheck.traces.emit import events_of, header_for
    from gpcheck.traces.format import TraceWriter

    cm = compile_model(load_spec(SPEC))
    out: dict[tuple[str, int], Path] = {}
    for kind in ("full", "hidden"):
        for n in sizes:
            path = directory / f"ring_loop-{kind}-{n}.jsonl"
            out[(kind, n)] = path
            if path.exists():
                continue
            t0 = time.perf_counter()
            internal = kind == "full"
            beh = simulate(cm, n * 4, random.Random(1))
            first = next(beh)
            header = header_for(cm, first[1], observe="full", internal=internal, source="bench_replay", seed=1)
            with TraceWriter(str(path), header) as w:
                for ev in itertools.islice(events_of(cm, itertools.chain([first], beh), internal=internal), n):
                    w.write(ev.action, ev.args, ev.state)
            assert w.count == n, (kind, n, w.count)
            print(f"  made {path.name}: {os.path.getsize(path) / 2**20:.0f} MiB in {time.perf_counter() - t0:.0f} s", flush=True)
    return out


def measure(body: str, **fmt: str) -> tuple[float, int, float, str]:
    """(wall seconds of the measured section, peak RSS KiB of the process, CPU seconds of the
    measured section, result line). CPU seconds are what the ratios use: the machine this runs
    on is shared, and CPU time is far less disturbed by other processes than wall time."""
    code = _PRE.format(root=str(ROOT)) + body.format(**fmt) + _POST
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    m = re.search(r"maxrss (\d+)", p.stderr)
    c = re.search(r"cpu ([\d.]+)", p.stderr)
    r = re.search(r"result (.*)", p.stdout)
    if m is None or r is None or c is None:
        raise SystemExit(f"run failed:\n{p.stdout}\n{p.stderr}")
    fields = r.group(1).split()
    return float(fields[1]), int(m.group(1)), float(fields[2]), r.group(1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--keep", default=None, help="directory for the generated traces (reused when present)")
    opts = ap.parse_args()
    sizes = [int(x) for x in opts.sizes.split(",")]
    tmp = None
    if opts.keep:
        directory = Path(opts.keep)
        directory.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory()
        directory = Path(tmp.name)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    traces = make_traces(directory, sizes)
    rows = []
    for (kind, n), path in sorted(traces.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        res: dict[str, list[tuple[float, int, float, str]]] = {"replay": [], "parse": [], "naive": []}
        for _ in range(opts.runs):
            res["replay"].append(measure(REPLAY, spec=str(SPEC), trace=str(path)))
            res["parse"].append(measure(PARSE, trace=str(path)))
            if kind == "full":
                res["naive"].append(measure(NAIVE, spec=str(SPEC), trace=str(path)))
        med = {k: (statistics.median(x[0] for x in v), max(x[1] for x in v), statistics.median(x[2] for x in v), v[0][3])
               for k, v in res.items() if v}
        wall, rss, cpu, line = med["replay"]
        extra = line.split()
        row = (f"{kind:6} {n:>9,} events  replay cpu {cpu:5.2f} s ({n / cpu:>9,.0f} ev/s; wall {wall:5.2f} s), "
               f"peak RSS {rss / 1024:4.0f} MiB, peak candidates {extra[3]}, max-hidden {extra[4]} | "
               f"parse cpu {med['parse'][2]:5.2f} s: replay x{cpu / med['parse'][2]:.1f}")
        if "naive" in med:
            row += f" | naive cpu {med['naive'][2]:5.2f} s: replay x{cpu / med['naive'][2]:.2f}"
        rows.append(row)
        print(row, flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()

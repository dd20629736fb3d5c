"""Compare the device search (`--device cuda`, or its host build) with the CPU core on every
bundled model and example: state counts, depth, actions fired, and every safety result
(verdict and counterexample, step by step). One line per model; exit 1 on any difference.

    python tools/device_compare.py [--device cuda|host] [--cpu compiled|python] [SPEC[:K=V,...] ...]

With no SPEC: every bundled model (spec/models) and example (/work/shared/spec-examples, or
examples/ beside tools/ on a machine without it) at its default constants. Transition properties are
checked on the device's edges after its search (device_graph.check_transitions). A model with liveness or
latency properties gets a second line, `graph`: the device's report (run_device: the edges built on
the device, the compiled core's CSR passes) against the compiled core's (run_explicit, 1 thread):
every result's verdict, reason, numbers (latency min/max) and lasso or witness, step by step.
Each model also gets a `compact` line (unless --no-compact): the search with the compact visited
set (device_compact.py, what `verify --device cuda` runs for safety alone) against the full
one's, on the properties it checks (all but the transition properties): states, depth, fired
counts, verdicts and counterexamples, with both stores' visited set in bytes a state.
A timed model (`time` durations) is searched as `verify --device cuda` searches it: its untimed
abstraction (checker/api/timed_abstraction.py) on those lines, then a `timed` line instead of
`graph`: the whole report of the timed path with the abstraction's search on the device
(run_timed_explicit(device=...); the zone engine on the host decides what it leaves) against the
same path with the CPU core's search (symmetry off, as on the device): the untimed_states, discrete
states and zones figures, and every result's verdict, reason, decided_by and counterexample
(time stamps included), step by step."""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's gpcheck, not an installed one


def _specs(args: list[str]) -> list[tuple[str, dict[str, int]]]:
    if args:
        out = []
        for a in args:
            path, _, consts = a.partition(":")
            kv = dict(p.split("=") for p in consts.split(",") if p)
            out.append((path, {k: int(v) for k, v in kv.items()}))
        return out
    found = sorted((ROOT / "spec" / "models").glob("*.gpspec"))
    for extra in (Path("/work/shared/spec-examples"), ROOT / "examples"):
        if extra.is_dir():
            found += sorted(extra.glob("*.gpspec"))
    return [(str(p), {}) for p in found]


def _results(cm, res, wanted):  # type: ignore[no-untyped-def]
    from gpcheck.checker.engines.explicit import explicit

    return [(r.property, r.verdict.value, None if r.counterexample is None else
             [(s.action, s.args, s.state) for s in r.counterexample.steps])
            for r in explicit.safety_results(cm, res, wanted)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda", choices=("cuda", "host"))
    ap.add_argument("--cpu", default="compiled", choices=("compiled", "python"))
    ap.add_argument("--no-compact", action="store_true", help="leave the compact store's line out")
    ap.add_argument("specs", nargs="*")
    a = ap.parse_args()
    from gpcheck.spec import load_spec
    from gpcheck.gpmodel import compile_model
    from gpcheck.checker.engines.explicit import device_graph, device_search, explicit, fast_explicit
    from gpcheck.checker.engines.explicit.explicit import select_properties
    from gpcheck.checker.engines.timed import untimed

    bad = 0
    for path, consts in _specs(a.specs):
        name = Path(path).stem + "".join(f" {k}={v}" for k, v in consts.items())
        try:
            m = load_spec(path, consts)
        except Exception as e:  # noqa: BLE001 - a line per model, whatever went wrong
            print(f"{name:28} LOAD ERROR {type(e).__name__}: {str(e)[:80]}")
            continue
        timed = m.has_time
        cm = compile_model(untimed(m) if timed else m)  # a timed spec: what the device searches
        skipped: list[str] = []
        graph_props = {p.name for p in (*m.liveness, *m.latencies)}
        wanted = select_properties(m, None) - set(skipped) - graph_props
        why = device_search.unsupported(cm, wanted)
        if why is not None:
            print(f"{name:28} not on the device: {why}")
            continue
        t0 = time.monotonic()
        try:
            dres, dg = device_search.search(cm, wanted, device=a.device)
            device_graph.check_transitions(cm, dres, dg, wanted)
        except Exception as e:  # noqa: BLE001
            print(f"{name:28} DEVICE ERROR {type(e).__name__}: {str(e)[:120]}")
            bad += 1
            continue
        t1 = time.monotonic()
        if a.cpu == "compiled":
            cres, cg = fast_explicit.search(cm, wanted, workers=1)
            cn = cg.n
        else:
            cres = explicit.search(cm, wanted)
            cn = len(cres.parent)
        t2 = time.monotonic()
        same = (dg.n == cn or not dres.complete) and dres.depth == cres.depth and dres.complete == cres.complete \
            and dres.pruned == cres.pruned and dres.fired == cres.fired \
            and _results(cm, dres, wanted) == _results(cm, cres, wanted)
        verdicts = ", ".join(f"{p}={v}" + (f"({len(c) - 1} steps)" if c else "")
                             for p, v, c in _results(cm, dres, wanted))
        print(f"{name:28} {'SAME' if same else 'DIFFERENT'}{' untimed abstraction:' if timed else ''} "
              f"states {dg.n:,} (cpu {cn:,}) depth {dres.depth} "
              f"device {t1 - t0:.2f}s cpu {t2 - t1:.2f}s | {verdicts}"
              + (f" | not checked here: {', '.join(skipped)}" if skipped else ""))
        bad += not same
        if not a.no_compact:
            bad += not _compact_line(name, cm, wanted, dres, dg, a.device)
        if timed:
            bad += not _timed_line(name, m, a.device, a.cpu)
        elif graph_props and dres.complete:
            if a.device == "cuda":
                bad += not _edges_line(name, cm, wanted, dg)
            if importlib.util.find_spec("numba") is None:
                print(f"{name:28} graph: no numba here (the CSR passes are the compiled core's): not compared")
            else:
                bad += not _graph_line(name, m, select_properties(m, None) - set(skipped), a.device)
    return 1 if bad else 0


def _compact_line(name, cm, wanted, dres, dg, device) -> bool:  # type: ignore[no-untyped-def]
    """The compact store's search against the full store's (both on the device)."""
    from gpcheck.checker.engines.explicit import device_compact

    safety = wanted - {tp.name for tp in cm.model.transitions}
    t0 = time.monotonic()
    try:
        cres, cg = device_compact.search(cm, safety, device=device)
    except Exception as e:  # noqa: BLE001
        print(f"{name:28} compact DEVICE ERROR {type(e).__name__}: {str(e)[:120]}")
        return False
    t1 = time.monotonic()
    same = cg.n == dg.n and cres.depth == dres.depth and cres.complete == dres.complete \
        and cres.pruned == dres.pruned and cres.fired == dres.fired \
        and _results(cm, cres, safety) == _results(cm, dres, safety)
    print(f"{name:28} compact {'SAME' if same else 'DIFFERENT'} states {cg.n:,} (full {dg.n:,}) in {t1 - t0:.2f}s; "
          f"visited set {cg.held_bytes() / max(1, cg.n):.1f} B/state (full {dg.held_bytes() / max(1, dg.n):.1f})")
    return same


def _edges_line(name, cm, wanted, dg) -> bool:  # type: ignore[no-untyped-def]
    """The CSR arrays built on the GPU against those of the host build (the same C, tested
    against the compiled core's in the default test run); no numba needed."""
    import numpy as np
    from gpcheck.checker.engines.explicit import device_graph, device_search

    ninst = max(1, len(cm.instances))
    t0 = time.monotonic()
    gpu = device_graph.device_edges(dg, ninst)
    t1 = time.monotonic()
    _, hg = device_search.search(cm, wanted, device="host")
    host = device_graph.device_edges(hg, ninst)
    same = all(np.array_equal(x, y) for x, y in zip(gpu, host))
    print(f"{name:28} edges {'SAME' if same else 'DIFFERENT'} {int(gpu[0][-1]):,} edges (host build "
          f"{int(host[0][-1]):,}) built on the device in {t1 - t0:.3f}s")
    return same


def _key(r):  # type: ignore[no-untyped-def]
    c = r.counterexample
    return (r.property, r.kind, r.verdict.value, r.reason, r.detail,
            None if c is None else ([(s.action, s.args, s.state, s.time) for s in c.steps], c.loop))


def _steps(r) -> str:  # type: ignore[no-untyped-def]
    c = r.counterexample
    if c is None:
        return ""
    return f"({len(c.steps) - 1} steps)" if c.loop is None else f"(lasso {len(c.steps)} steps, loop at {c.loop})"


def _timed_line(name, m, device, cpu) -> bool:  # type: ignore[no-untyped-def]
    """A timed model: the timed path's report with the abstraction searched on the device
    against the same path with the CPU core's search; one line."""
    from gpcheck.checker.api import model_api  # noqa: F401 - the api package's import order
    from gpcheck.checker.api.timed_explicit import BY_ABSTRACTION, run_timed_explicit
    from gpcheck.checker.engines.explicit.explicit import Limits, select_properties

    wanted = select_properties(m, None)
    t0 = time.monotonic()
    try:
        dev = run_timed_explicit(m, set(wanted), Limits(), device=device)
    except Exception as e:  # noqa: BLE001
        print(f"{name:28} timed DEVICE ERROR {type(e).__name__}: {str(e)[:120]}")
        return False
    t1 = time.monotonic()
    ref = run_timed_explicit(m, set(wanted), Limits(), core=cpu, symmetry="off")
    t2 = time.monotonic()
    same = dev.timed == ref.timed and dev.states == ref.states and dev.warnings == ref.warnings \
        and [_key(r) for r in dev.results] == [_key(r) for r in ref.results]
    by_abs = sum(r.detail.get("decided_by") == BY_ABSTRACTION for r in dev.results)
    t, rt = dev.timed or {}, ref.timed or {}
    print(f"{name:28} timed {'SAME' if same else 'DIFFERENT'} untimed_states {t.get('untimed_states')} "
          f"(cpu {rt.get('untimed_states')}) zones {t.get('zones')} (cpu {rt.get('zones')}); "
          f"{by_abs}/{len(dev.results)} decided on the abstraction; device path {t1 - t0:.2f}s cpu path {t2 - t1:.2f}s "
          f"| {', '.join(f'{r.property}={r.verdict.value}{_steps(r)}' for r in dev.results)}")
    return same


def _graph_line(name, m, wanted, device) -> bool:  # type: ignore[no-untyped-def]
    """Liveness and latency: the device's report against the compiled core's; one line."""
    from gpcheck.checker.api import model_api  # noqa: F401 - the api package's import order
    from gpcheck.checker.api.device_run import run_device
    from gpcheck.checker.api.explicit_run import run_explicit
    from gpcheck.checker.engines.explicit.explicit import Limits

    t0 = time.monotonic()
    try:
        dev = run_device(m, wanted, Limits(), device=device)
    except Exception as e:  # noqa: BLE001
        print(f"{name:28} graph DEVICE ERROR {type(e).__name__}: {str(e)[:120]}")
        return False
    t1 = time.monotonic()
    cpu = run_explicit(m, wanted, Limits(), core="compiled", workers=1)
    t2 = time.monotonic()
    same = dev.states == cpu.states and [_key(r) for r in dev.results] == [_key(r) for r in cpu.results]
    parts = []
    for r in dev.results:
        if r.kind not in ("liveness", "latency"):
            continue
        text = f"{r.property}={r.verdict.value}"
        if r.kind == "latency" and r.detail:
            text += f"(min {r.detail.get('min')} max {r.detail.get('max')})"
        elif r.counterexample is not None:
            text += f"(lasso {len(r.counterexample.steps)} steps, loop at {r.counterexample.loop})"
        parts.append(text)
    print(f"{name:28} graph {'SAME' if same else 'DIFFERENT'} states {dev.states} (cpu {cpu.states}) "
          f"device run {t1 - t0:.2f}s cpu run {t2 - t1:.2f}s | {', '.join(parts)}")
    return same


if __name__ == "__main__":
    sys.exit(main())

"""`--device cuda`: the explicit engine's safety search on a GPU (checker/engines/explicit/device_search.py)
as the API runs it, with the report run_explicit would make.

The device checks invariants, deadlock and `range` (with the compact visited set of
checker/engines/explicit/device_compact.py when nothing else is asked for), and after a complete
search the transition properties on every edge; liveness runs the compiled core's CSR pass on the
host over edges built on the device (checker/engines/explicit/device_graph.py, NOTE(device-edges)).
A latency is elapsed time: the zone engine decides it on the host (checker/api/untimed_latency.py),
as without a device.
A timed spec: its untimed abstraction's search runs here (checker/api/timed_explicit.py, `device`),
the zone engine on the host decides what that search leaves, as on the CPU.
A model the device cannot run, or no GPU: a UsageError (exit 2), never a silent fall-back to the CPU."""

from __future__ import annotations

import importlib.util
import time

from gpcheck.spec import ir
from gpcheck.spec.errors import UsageError
from gpcheck.gpmodel import CompiledModel, compile_model
from gpcheck.checker.api import untimed_latency
from gpcheck.checker.core import budget
from gpcheck.checker.core import progress as meter
from gpcheck.checker.engines.explicit import explicit
from gpcheck.checker.engines.explicit.explicit import ENGINE, Limits
from gpcheck.checker.core.verdict import Report, Result, Verdict

DEVICES = ("cpu", "cuda")


def check_device_options(model: ir.Model, device: str, engine: str, core: str, workers: int | str,
                         fingerprint: bool, symmetry: str) -> None:
    """UsageError for a combination the device search does not run."""
    if device not in DEVICES:
        raise UsageError(f"unknown device {device!r} (devices: {', '.join(DEVICES)})")
    if device == "cpu":
        return
    if engine != "explicit":
        raise UsageError(f"--device cuda runs the explicit engine (not {engine})")
    if core == "python" or fingerprint or (workers != "auto" and int(workers) > 1):
        raise UsageError("--device cuda replaces the CPU cores: leave --core python, --workers and --fingerprint out")
    if symmetry == "on":
        raise UsageError("--device cuda does not reduce by symmetry (use --symmetry off or auto)")


def run_device(model: ir.Model, wanted: set[str], limits: Limits, cm: CompiledModel | None = None,
               device: str = "cuda") -> Report:
    """The explicit engine's properties checked on `device` ("cuda"; "host": the same
    generated code on the CPU, for tests), as run_explicit reports them."""
    from gpcheck.checker.engines.explicit import device_compact, device_graph, device_search  # noqa: PLC0415 - numpy only when asked for
    from gpcheck.gpmodel.cuda_source import Untranslatable  # noqa: PLC0415

    cm = cm or compile_model(model)
    graph_props = {p.name for p in (*model.liveness, *model.latencies)}
    safety = {w for w in wanted if w not in graph_props}
    started = time.monotonic()
    why = device_search.unsupported(cm, wanted)
    if why is not None:
        raise UsageError(f"{model.file}: --device cuda cannot run this model: {why}")
    try:
        if _compact(cm, wanted):
            res, graph = device_compact.search(cm, safety, limits, device=device)
        else:
            res, graph = device_search.search(cm, safety, limits, device=device)
    except device_search.DeviceUnavailable as e:
        raise UsageError(str(e)) from e
    except Untranslatable as e:
        raise UsageError(f"{model.file}: --device cuda cannot run this model: {e}") from e
    stopped = None
    try:
        device_graph.check_transitions(cm, res, graph, safety)
    except budget.Stop as stop:  # the edges not all checked: the transition properties unknown
        stopped = stop.text
    results = explicit.safety_results(cm, res, safety) + _graph_results(cm, res, graph, wanted)
    results += untimed_latency.latency_results(cm, wanted, limits, started)
    if stopped is not None:
        results = [Result(r.property, r.kind, Verdict.UNKNOWN, ENGINE, reason=stopped) if r.kind == "transition" else r
                   for r in results]
    order = {n: i for i, n in enumerate(model.property_names() + ["deadlock", "range"])}
    results.sort(key=lambda r: order.get(r.property, len(order)))
    coverage: dict[str, int] = {}
    for inst, n in zip(cm.instances, res.fired):
        coverage[inst.action.name] = coverage.get(inst.action.name, 0) + n
    warnings = [f"action '{a}' never fired" for a, n in coverage.items() if n == 0 and res.complete]
    return Report(model.name, model.file, model.const_values, results, states=graph.n if res.complete else None,
                  coverage=coverage, warnings=warnings + untimed_latency.warning(model, wanted))


def _compact(cm: CompiledModel, wanted: set[str]) -> bool:
    """The compact visited set (NOTE(compact-table)) when no property needs the edges
    (liveness and transition properties need every state's words and number)."""
    from gpcheck.checker.engines.explicit import device_compact  # noqa: PLC0415
    from gpcheck.gpmodel.jit import packed_layout  # noqa: PLC0415

    model = cm.model
    if any(p.name in wanted for p in (*model.transitions, *model.liveness)):
        return False
    packed = packed_layout(cm)
    return packed is not None and device_compact.compact_supported(packed)


def _graph_results(cm: CompiledModel, res: explicit.Search, graph: object, wanted: set[str]) -> list[Result]:
    """Liveness over the device's graph (edges built on the device, the compiled core's CSR pass
    on the host): the compiled core's verdicts and lassos; after an incomplete search the pass
    answers `unknown` as it does on the CPU."""
    from gpcheck.checker.engines.explicit import device_graph, fast_explicit  # noqa: PLC0415

    model = cm.model
    if not any(p.name in wanted for p in model.liveness):
        return []
    if res.complete and importlib.util.find_spec("numba") is None:
        why = "the graph passes after --device cuda are the compiled core's, which needs numba (pip install numba)"
        return [Result(p.name, "liveness", Verdict.UNKNOWN, ENGINE, reason=why) for p in model.liveness if p.name in wanted]
    try:
        host = device_graph.host_graph(cm, res, graph) if res.complete else None  # type: ignore[arg-type]
    except budget.Stop as stop:  # a signal, --timeout or --max-memory while the edges were built
        return [Result(p.name, "liveness", Verdict.UNKNOWN, ENGINE, reason=stop.text)
                for p in model.liveness if p.name in wanted]
    if host is not None:
        meter.note(engine=ENGINE, phase="liveness (fair cycles over the device's graph)")
    return fast_explicit.liveness_results(cm, res, host, wanted)  # type: ignore[arg-type] # incomplete: unknown

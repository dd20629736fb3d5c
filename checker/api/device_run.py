"""`--device cuda`: the explicit engine's safety search on a GPU (checker/engines/explicit/device_search.py)
as the API runs it, with the report run_explicit would make.

The device checks invariants, deadlock and `range`; transition properties, liveness and latency
are answered `unknown` with the reason (their passes read the state graph on the host, which
the device search does not hand back yet). A model the device cannot run, a timed spec, or no
GPU: a UsageError (exit 2), never a silent fall-back to the CPU."""

from __future__ import annotations

from gpcheck.spec import ir
from gpcheck.spec.errors import UsageError
from gpcheck.gpmodel import CompiledModel, compile_model
from gpcheck.checker.engines.explicit import explicit
from gpcheck.checker.engines.explicit.explicit import ENGINE, Limits
from gpcheck.checker.core.verdict import Report, Result, Verdict

DEVICES = ("cpu", "cuda")
NOT_ON_DEVICE = ("not checked on the device: --device cuda checks invariants, deadlock and range; {kind} "
                 "properties need the state graph on the host (run without --device)")


def check_device_options(model: ir.Model, device: str, engine: str, core: str, workers: int | str,
                         fingerprint: bool, symmetry: str) -> None:
    """UsageError for a combination the device search does not run."""
    if device not in DEVICES:
        raise UsageError(f"unknown device {device!r} (devices: {', '.join(DEVICES)})")
    if device == "cpu":
        return
    if model.has_time:
        raise UsageError(f"{model.file}: --device cuda: the spec is timed, and only the zone engine (on the CPU) decides it")
    if engine != "explicit":
        raise UsageError(f"--device cuda runs the explicit engine (not {engine})")
    if core == "python" or fingerprint or (workers != "auto" and int(workers) > 1):
        raise UsageError("--device cuda replaces the CPU cores: leave --core python, --workers and --fingerprint out")
    if symmetry == "on":
        raise UsageError("--device cuda does not reduce by symmetry (use --symmetry off or auto)")


def run_device(model: ir.Model, wanted: set[str], limits: Limits, cm: CompiledModel | None = None,
               device: str = "cuda") -> Report:
    """The explicit engine's safety properties searched on `device` ("cuda"; "host": the same
    generated code on the CPU, for tests); the others `unknown` with the reason."""
    from gpcheck.checker.engines.explicit import device_search  # noqa: PLC0415 - numpy only when asked for
    from gpcheck.gpmodel.cuda_source import Untranslatable  # noqa: PLC0415

    cm = cm or compile_model(model)
    later = {p.name: "transition" for p in model.transitions} | {p.name: "liveness" for p in model.liveness} \
        | {p.name: "latency" for p in model.latencies}
    safety = {w for w in wanted if w not in later}
    why = device_search.unsupported(cm, safety)
    if why is not None:
        raise UsageError(f"{model.file}: --device cuda cannot run this model: {why}")
    try:
        res, graph = device_search.search(cm, safety, limits, device=device)
    except device_search.DeviceUnavailable as e:
        raise UsageError(str(e)) from e
    except Untranslatable as e:
        raise UsageError(f"{model.file}: --device cuda cannot run this model: {e}") from e
    results = explicit.safety_results(cm, res, safety)
    for name in sorted(w for w in wanted if w in later):
        results.append(Result(name, later[name], Verdict.UNKNOWN, ENGINE, reason=NOT_ON_DEVICE.format(kind=later[name])))
    order = {n: i for i, n in enumerate(model.property_names() + ["deadlock", "range"])}
    results.sort(key=lambda r: order.get(r.property, len(order)))
    coverage: dict[str, int] = {}
    for inst, n in zip(cm.instances, res.fired):
        coverage[inst.action.name] = coverage.get(inst.action.name, 0) + n
    warnings = [f"action '{a}' never fired" for a, n in coverage.items() if n == 0 and res.complete]
    return Report(model.name, model.file, model.const_values, results, states=graph.n if res.complete else None,
                  coverage=coverage, warnings=warnings)

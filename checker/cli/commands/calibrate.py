"""`gpcheck calibrate TRACE... --model SPEC [--map FILE]`: the durations recorded traces show for
the timed actions of a model (its mapping's `[[timing]]` entries), beside the model's bounds, and
the bounds fitted to them as `--const NAME=V` values (docs/event-mapping.md, Timings). Exit 0,
or 1 when a duration lies outside the model's current bounds, 2 on bad input."""

from __future__ import annotations

import argparse

from gpcheck.checker.cli.commands.common import add_const_flag, consts_of, write_out


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("calibrate", parents=[common], help="fit a model's time bounds to recorded traces",
                       description="Measure the durations the mapping's [[timing]] entries name in each trace "
                                   "(min, max, p50/p90/p99), set them beside the model's bounds, and print the "
                                   "value of each bound's constant that just covers every run, as --const "
                                   "NAME=V.")
    p.add_argument("traces", metavar="TRACE", nargs="+", help="recorded or imported gpcheck traces")
    p.add_argument("--model", metavar="SPEC", required=True, help="the .gpspec file or bundled model")
    p.add_argument("--map", metavar="FILE", default="",
                   help="the event mapping (default: MODEL.map.toml beside the model's spec)")
    add_const_flag(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from gpcheck.spec import load_spec
    from gpcheck.traces.format import open_trace
    from gpcheck.checker.engines.replay.mapped import mapping_constants
    from gpcheck.traces.mapping import check_against, load_mapping, resolve_mapping
    from gpcheck.traces.timing import Series, bounds_of, fitted, measure, series_json, series_text, violations

    cli = consts_of(args)
    model = load_spec(args.model, dict(cli))
    m = load_mapping(resolve_mapping(args.map, model))
    check_against(m, model)
    if not m.timings:
        from gpcheck.spec.errors import UsageError

        raise UsageError(f"{m.file}: the mapping has no [[timing]] entries: nothing to calibrate")
    series: dict[str, Series] = {}
    for path in args.traces:
        with open_trace(path) as tr:
            header = tr.header
            mc = mapping_constants(m, header, path)
            measure(m, tr.events(check_state=False), header, path, series)
    model = load_spec(args.model, {**mc, **cli})  # the last trace's instance: the bounds' constants
    consts = model.const_values
    rows = []
    fits: dict[str, int] = {}
    bad = 0
    for t in m.timings:
        s = series[t.name]
        b = bounds_of(t, model, m.file)
        f = fitted(s, b, consts)
        for k, v in f.items():
            fits[k] = max(fits.get(k, v), v) if b.upper_expr is not None and k in b.upper_expr.names() else min(fits.get(k, v), v)
        bad += len(violations(s, b))
        rows.append((s, b, f))
    if args.json:
        import orjson

        write_out(orjson.dumps({
            "model": model.name, "mapping": m.file, "traces": args.traces,
            "timings": [{**series_json(s, b), "fitted": f} for s, b, f in rows],
            "consts": fits,
        }))
    else:
        lines = [f"{len(args.traces)} trace(s) against {model.name} through {m.file}"]
        for s, b, f in rows:
            lines.append(series_text(s, b))
            for tr, ln, u, which in violations(s, b)[:3]:
                lines.append(f"    outside: {tr}:{ln} took {u:.1f} (the {which} bound)")
            if not f and s.samples:
                lines.append(f"    (no single constant in its bounds to fit)")
        lines.append("fitted: " + (" ".join(f"--const {k}={v}" for k, v in sorted(fits.items())) or "(none)"))
        write_out("\n".join(lines) + "\n")
    return 1 if bad else 0

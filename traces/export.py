"""Counterexamples of a verify report written as ITF and Perfetto files (`gpcheck verify
--itf FILE --perfetto FILE`).

One counterexample goes to FILE itself; several (one per violated property) go to FILE with
the property name inserted before the extension (`cx.itf.json` → `cx.no_reexecution.itf.json`),
or in place of `{property}` when FILE contains it.

Only counterexamples are written: the behaviours of *violated* properties. A property that holds
may still carry a behaviour (the witness of a proved latency's maximum); it is shown in the
report, not written as a file, so a file from `--itf`/`--perfetto` always means a violation."""

from __future__ import annotations

import os
from typing import Iterable

from gpcheck.checker.core.verdict import Result, Verdict
from gpcheck.spec import ir


def counterexample_path(path: str, prop: str, several: bool) -> str:
    """Where the counterexample of `prop` goes (see module doc)."""
    if "{property}" in path:
        return path.replace("{property}", prop)
    if not several:
        return path
    d, base = os.path.split(path)
    stem, dot, ext = base.partition(".")
    return os.path.join(d, f"{stem}.{prop}{dot}{ext}")


def counterexample_paths(path: str, props: Iterable[str]) -> list[str]:
    """Every file a counterexample of one of `props` may go to (with one or with several
    counterexamples), so that a command can check them all before it runs."""
    props = sorted(props)
    out = {counterexample_path(path, p, True) for p in props}
    if props:
        out.add(counterexample_path(path, props[0], False))
    return sorted(out)


def export_counterexamples(
    results: Iterable[Result], model: ir.Model, itf: str | None = None, perfetto: str | None = None
) -> list[tuple[str, str]]:
    """Write the counterexample of every violated property of `results`; returns (file, property)
    for each file written (ITF round-trips exactly: gpcheck.traces.itf.read_itf(path,
    model).to_counterexample() equals the original)."""
    with_cx = [r for r in results if r.counterexample is not None and r.verdict is Verdict.VIOLATED]
    several = len(with_cx) > 1
    written: list[tuple[str, str]] = []
    for r in with_cx:
        assert r.counterexample is not None
        desc = f"gpcheck: {r.kind} {r.property} {r.verdict.value} ({r.engine}) on {model.name}"
        if itf:
            from gpcheck.traces.itf import write_itf

            p = counterexample_path(itf, r.property, several)
            write_itf(r.counterexample, model, p, description=desc)
            written.append((p, r.property))
        if perfetto:
            from gpcheck.traces.perfetto import export_counterexample

            p = counterexample_path(perfetto, r.property, several)
            export_counterexample(r.counterexample, model, p, title=f"{model.name}: {r.property} counterexample")
            written.append((p, r.property))
    return written

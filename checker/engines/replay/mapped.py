"""Replay through an event mapping (traces/mapping.py, docs/event-mapping.md): the recorded
events of a trace become steps and observations of a mechanism model, which the ordinary replay
(checker/engines/replay/search.py) then checks.

Three things change against a plain replay, none of them inside the replay engine:
- the model instance: the mapping's constants (computed from the trace header) and the user's
  `--const`; the header's own `constants` (written for the observation model) are not used;
- the model's IR: exactly the actions the mapping lists as `hidden` are internal (replay may take
  them between events, lazily or up to `max_hidden`); any other action, an internal one of the
  model included, happens only where a rule maps a recorded event to it; and a no-op action `mapping_observation` is added
  for rules that observe without a step;
- the events: each recorded event becomes zero or more model events carrying the recorded event's
  line, so a divergence or a violation names the trace line; the report then says which recorded
  event and which rule it was."""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator, Mapping as TMapping

from gpcheck.spec import ir
from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import Event, TraceHeader
from gpcheck.traces.mapexpr import EvalState, ExprError
from gpcheck.traces.mapping import OBSERVE_ACTION, Mapping, MappingError, Rule
from gpcheck.checker.engines.replay.search import EventSource


def header_env(header: TraceHeader) -> dict[str, Any]:
    """The header as the mapping's expressions see it (`header.source.params.n`)."""
    return {"header": header.to_json()}


def mapping_constants(m: Mapping, header: TraceHeader, where: str) -> dict[str, int]:
    """The model constants the mapping computes from the trace header."""
    env = header_env(header)
    out: dict[str, int] = {}
    for name, e, at in m.constants:
        try:
            v = e.eval(env)
        except ExprError as err:
            raise TraceError(f"{where}:1: constant {name} ({at}): {err.message}") from None
        if isinstance(v, bool):
            v = int(v)
        if not isinstance(v, int):
            raise TraceError(f"{where}:1: constant {name} ({at}): {e.text} gives {v!r} for this trace, not an integer")
        out[name] = v
    return out


def mapped_model(model: ir.Model, m: Mapping) -> ir.Model:
    """`model` with the mapping's hidden actions internal and the observation no-op added."""
    hidden = set(m.hidden)
    actions = tuple(a if a.internal == (a.name in hidden) else dataclasses.replace(a, internal=a.name in hidden)
                    for a in model.actions)
    noop = ir.Action(OBSERVE_ACTION, (), ())
    return dataclasses.replace(model, actions=actions + (noop,))


class _Translator:
    """Recorded events -> model events, rule by rule (first matching rule wins)."""

    def __init__(self, m: Mapping, header: TraceHeader, trace: str):
        self.m = m
        self.trace = trace
        self.state = EvalState()
        self.header = header.to_json()

    def rule_for(self, ev: Event) -> tuple[Rule | None, dict[str, Any]]:
        env: dict[str, Any] = {"action": ev.action, "args": ev.args, "meta": ev.meta or {}, "t": ev.t,
                               "line": ev.line, "state": ev.state or {}, "header": self.header}
        for r in self.m.rules:
            if r.match != "*" and r.match != ev.action:
                continue
            try:
                if r.when is not None and not r.when.eval(env, self.state):
                    continue
                if r.ignore:
                    return r, env
                for name, e in r.lets:
                    env[name] = e.eval(env, self.state)
            except ExprError as err:
                raise self._error(ev, r.where, err) from None
            return r, env
        return None, env

    def _error(self, ev: Event, where: str, err: ExprError) -> TraceError:
        return TraceError(f"{self.trace}:{ev.line}: event '{ev.action}': mapping rule {where}: {err.message}")

    def translate(self, ev: Event) -> list[Event]:
        r, env = self.rule_for(ev)
        if r is None:
            if self.m.unmatched == "ignore":
                return []
            raise TraceError(f"{self.trace}:{ev.line}: event '{ev.action}' matches no rule of {self.m.file} "
                             f"(add a rule, ignore = true for it, or unmatched = \"ignore\")")
        if r.ignore:
            return []
        out: list[Event] = []
        meta = {"recorded": ev.action, "rule": r.where}
        for s in r.steps:
            try:
                count = 1
                if s.repeat is not None:
                    count = s.repeat.eval(env, self.state)
                    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                        raise ExprError(f"repeat {s.repeat.text} gives {count!r}, not a count")
                for i in range(count):
                    senv = dict(env)
                    if s.repeat is not None:
                        senv[s.var] = i
                    args = {k: _value(e.eval(senv, self.state)) for k, e in s.args}
                    state = {key.render(senv, self.state): _value(e.eval(senv, self.state)) for key, e in s.observe}
                    out.append(Event(s.action or OBSERVE_ACTION, args, state or None, ev.t, meta, ev.line))
            except ExprError as err:
                raise self._error(ev, s.where, err) from None
        return out


def _value(v: Any) -> Any:
    if v is None:
        raise ExprError("the value is missing (None): the event lacks a field the rule reads")
    return v


def mapped_source(source: EventSource, m: Mapping, trace: str) -> EventSource:
    """The events of `source` translated by `m` (re-openable, streaming)."""

    def open_() -> tuple[TraceHeader, Iterator[Event]]:
        header, events = source()
        tr = _Translator(m, header, trace)

        class _It:
            path = getattr(events, "path", trace)

            def __iter__(self) -> Iterator[Event]:
                for ev in events:
                    yield from tr.translate(ev)

        return TraceHeader(header.model, {}, header.init, dict(header.extra)), _It()  # type: ignore[return-value]

    return open_


_BRIEF = ("kernel", "corr", "pid", "block", "work", "killed", "exited", "length_ns", "temp", "kernel_offset",
          "kernel_offset_after", "node", "trigger", "smi_line")


def describe_recorded(ev: TMapping[str, Any]) -> str:
    """`end(stream=0, priority=0) [kernel be:k4, work 264]`: a recorded event in one line."""
    args = ev.get("args") or {}
    s = str(ev.get("action"))
    if args:
        s += "(" + ", ".join(f"{k}={v}" for k, v in args.items()) + ")"
    meta = ev.get("meta") or {}
    brief = {k: v for k, v in meta.items() if k in _BRIEF}
    meta = brief or meta
    if meta:
        s += " [" + ", ".join(f"{k} {v}" for k, v in meta.items()) + "]"
    if ev.get("t") is not None:
        s += f" at t={ev['t']}"
    return s


__all__ = ["MappingError", "annotate", "describe_recorded", "mapped_model", "mapped_source", "mapping_constants", "prepare_mapped"]


def prepare_mapped(info: Any, spec: str | None, map_arg: str, cli_consts: TMapping[str, int],
                   options: Any) -> tuple[Any, EventSource, ir.Model, list[str]]:
    """`gpcheck replay TRACE --model SPEC --map [FILE]`: the model instance the mapping and the
    trace header make, compiled with the mapping's hidden actions, the translated event source and
    the replayer (which keeps the mapping for `annotate`)."""
    from gpcheck.spec import load_spec
    from gpcheck.spec.errors import SpecError, UsageError
    from gpcheck.spec.load import bundled_models
    from gpcheck.traces.format import open_trace
    from gpcheck.traces.mapping import check_against, load_mapping, resolve_mapping
    from gpcheck.checker.engines.replay.search import file_source

    if info.format != "gpcheck":
        raise UsageError("--map reads gpcheck JSON Lines traces (recorded or imported), not ITF")
    if spec is None:
        if info.model and info.model in bundled_models():
            spec = info.model
        else:
            raise UsageError(f"{info.path}:1: give the model the mapping is for with --model SPEC")
    first = load_spec(spec, dict(cli_consts))
    m = load_mapping(resolve_mapping(map_arg, first))
    with open_trace(info.path) as tr:
        header = tr.header
    mconsts = mapping_constants(m, header, info.path)
    try:
        model = load_spec(spec, {**mconsts, **cli_consts})
    except SpecError as e:
        vals = ", ".join(f"{k}={v}" for k, v in mconsts.items())
        raise TraceError(f"{info.path}:1: the mapping's constants for this trace ({vals}) make no valid instance of "
                         f"{first.name}: {e.first.span or spec}: {e.first.message}") from None
    check_against(m, model)
    mm = mapped_model(model, m)
    raw = file_source(info.path)
    if m.max_hidden is not None and options.max_hidden is None and options.engine != "lazy":
        options = dataclasses.replace(options, max_hidden=m.max_hidden)
    from gpcheck.checker.engines.replay.timed import replayer_for  # NOTE(timed-replay)

    replayer = replayer_for(mm, options, unit_ns=m.time_unit_ns)
    replayer.mapping = m  # type: ignore[attr-defined]
    replayer.raw_source = raw  # type: ignore[attr-defined]
    warnings = []
    if header.constants:
        warnings.append(f"the trace header's constants ({', '.join(header.constants)}) are not used: "
                        f"the mapping {m.file} gives {model.name}'s")
    return replayer, mapped_source(raw, m, info.path), model, warnings


def annotate(report: Any, replayer: Any, info: Any) -> None:
    """Name the mapping in the report and, at a divergence, the recorded event and the rule
    that made the model event no candidate state could explain."""
    m: Mapping = replayer.mapping
    report.model = f"{report.model} through {m.file}"
    _timings(report, replayer, info)
    d = report.divergence
    if d is None or not d.line:
        return
    header, events = replayer.raw_source()
    tr = _Translator(m, header, info.path)
    for ev in events:
        if ev.line < d.line:
            tr.translate(ev)  # keeps first_seen numbering as in the replay
            continue
        if ev.line == d.line:
            rule, _ = tr.rule_for(ev)
            rec = ev.to_json()
            event = dict(d.event)
            event["recorded"] = rec
            event["rule"] = rule.where if rule else None
            report.divergence = dataclasses.replace(
                d, event=event,
                reason=f"recorded event {describe_recorded(rec)}, mapped by {rule.where if rule else '?'} "
                       f"to {d.event.get('action')}: {d.reason}")
        break
    if hasattr(events, "close"):
        events.close()


def _timings(report: Any, replayer: Any, info: Any) -> None:
    """The mapping's timings measured on the trace, beside the model's bounds
    (`report.timings`); the first duration outside its bounds, in a trace that otherwise
    conforms, is the divergence (a conformance violation at its line)."""
    from gpcheck.traces.replay_report import Divergence
    from gpcheck.traces.timing import bounds_of, measure, violation_text, violations

    m: Mapping = replayer.mapping
    report.timings = []
    if not m.timings:
        return
    header, events = replayer.raw_source()
    series = measure(m, events, header, info.path)
    first: tuple[int, str, str] | None = None
    for t in m.timings:
        s = series[t.name]
        b = bounds_of(t, replayer.model, m.file)
        report.timings.append((s, b))
        for v in violations(s, b):
            if first is None or v[1] < first[0]:
                first = (v[1], violation_text(s, b, v), t.action)
    if first is not None and report.conforms is True:
        report.conforms = False
        report.divergence = Divergence(first[0], {"action": first[2], "args": {}}, first[1], (), 0)

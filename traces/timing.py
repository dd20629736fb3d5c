"""Durations of a recorded trace beside a model's time bounds (docs/event-mapping.md, Timings).

A mapping's `[[timing]]` entries say which durations of a trace a model action's bounds constrain
(traces/mapping.py `Timing`). This module measures them (min, max, p50/p90/p99, each sample with
its trace line), judges them against the bounds (a duration outside is a conformance violation
at its line) and fits the bounds to the samples: the value of the one constant a bound depends
on that makes the bound just cover every sample (`gpcheck calibrate`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable

from gpcheck.spec import ir
from gpcheck.traces.format import Event
from gpcheck.traces.mapexpr import EvalState, Expr, ExprError, parse_expr
from gpcheck.traces.mapping import Mapping, MappingError, Timing
from gpcheck.spec.errors import TraceError


@dataclass
class Series:
    """The samples of one timing over one or more traces: (trace, line, duration in ns)."""

    timing: Timing
    samples: list[tuple[str, int, float]] = field(default_factory=list)

    def values(self) -> list[float]:
        return sorted(d for _, _, d in self.samples)

    def stats(self) -> dict[str, float] | None:
        v = self.values()
        if not v:
            return None
        return {"n": len(v), "min": v[0], "max": v[-1], "p50": _pct(v, 50), "p90": _pct(v, 90), "p99": _pct(v, 99)}


def _pct(v: list[float], p: int) -> float:
    """Nearest-rank percentile (a sample of the run, never an interpolation)."""
    k = max(1, math.ceil(p / 100 * len(v)))
    return v[k - 1]


def measure(m: Mapping, events: Iterable[Event], header: Any, trace: str, into: dict[str, Series] | None = None) -> dict[str, Series]:
    """The samples of every timing of `m` in one trace's events."""
    out = into if into is not None else {t.name: Series(t) for t in m.timings}
    for t in m.timings:
        out.setdefault(t.name, Series(t))
    hj = header.to_json()
    state = EvalState()
    open_: dict[str, dict[Any, tuple[float, int]]] = {t.name: {} for t in m.timings}

    def ev_(e: Expr | None, env: dict[str, Any], ev: Event, t: Timing) -> Any:
        if e is None:
            return True
        try:
            return e.eval(env, state)
        except ExprError as err:
            raise TraceError(f"{trace}:{ev.line}: event '{ev.action}': timing {t.name} ({t.where}): {err.message}") from None

    for ev in events:
        if ev.t is None:
            continue
        env = {"action": ev.action, "args": ev.args, "meta": ev.meta or {}, "t": ev.t, "line": ev.line,
               "state": ev.state or {}, "header": hj}
        for t in m.timings:
            s = out[t.name]
            if t.event is not None:
                if t.event in ("*", ev.action) and ev_(t.when, env, ev, t):
                    v = ev_(t.value, env, ev, t)
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        s.samples.append((trace, ev.line, float(v)))
                continue
            key = ev_(t.key, env, ev, t) if t.key is not None else None
            opened = open_[t.name]
            if t.to in ("*", ev.action) and ev_(t.to_when, env, ev, t) and key in opened:
                t0, _ = opened.pop(key)
                s.samples.append((trace, ev.line, float(ev.t) - t0))
            if t.from_ in ("*", ev.action) and ev_(t.from_when, env, ev, t):
                at = ev_(t.from_at, env, ev, t) if t.from_at is not None else ev.t
                if isinstance(at, (int, float)) and not isinstance(at, bool):
                    opened[key] = (float(at), ev.line)
    return out


@dataclass(frozen=True)
class Bounds:
    """A timing's bounds in model time units; `fit` the constant a bound depends on (or None)."""

    lower: float | None
    upper: float | None
    text: str  # "at most 2500 us" / "between 10 and 20 us" / "no bound"
    lower_expr: Expr | None = None
    upper_expr: Expr | None = None
    fit: str | None = None


def bounds_of(t: Timing, model: ir.Model, where: str) -> Bounds:
    """The bounds the model gives `t`: the mapping's `lower`/`upper` (constant expressions), or
    the action's `time L..U` with literal bounds."""
    consts = model.const_values
    act = next((a for a in model.actions if a.name == t.action), None)
    lo_e = _parse(t.lower, t, where) if t.lower is not None else None
    up_e = _parse(t.upper, t, where) if t.upper is not None else None
    lo = _eval(lo_e, consts, t) if lo_e else None
    up = _eval(up_e, consts, t) if up_e else None
    if lo_e is None and up_e is None and act is not None:
        if act.time is not None:
            lo = _lit(act.time.lower)
            up = _lit(act.time.upper) if act.time.upper is not None else None
    names = set()
    for e in (lo_e, up_e):
        if e is not None:
            names |= e.names() & set(consts)
    fit = t.fit if t.fit is not None else (sorted(names)[0] if len(names) == 1 else None)
    if lo is None and up is None:
        text = "no bound"
    elif lo in (None, 0) and up is not None:
        text = f"at most {_num(up)}"
    elif up is None:
        text = f"at least {_num(lo)}"
    else:
        text = f"between {_num(lo)} and {_num(up)}"
    return Bounds(lo, up, text, lo_e, up_e, fit)


def _parse(text: str, t: Timing, where: str) -> Expr:
    try:
        return parse_expr(text)
    except ExprError as e:
        raise MappingError(f"{t.where}: timing {t.name}: {e.message} in {text!r}") from None


def _eval(e: Expr, consts: dict[str, int], t: Timing) -> float:
    try:
        v = e.eval(consts)
    except ExprError as err:
        raise MappingError(f"{t.where}: timing {t.name}: {err.message}") from None
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise MappingError(f"{t.where}: timing {t.name}: {e.text} is not a number")
    return float(v)


def _lit(e: Any) -> float | None:
    v = getattr(e, "value", None)
    return float(v) if isinstance(v, int) and not isinstance(v, bool) else None


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.1f}"


def violations(s: Series, b: Bounds) -> list[tuple[str, int, float, str]]:
    """Samples outside the bounds: (trace, line, duration in model units, which bound)."""
    out = []
    unit = s.timing.unit_ns
    for tr, line, d in s.samples:
        u = d / unit
        if b.upper is not None and u > b.upper:
            out.append((tr, line, u, "upper"))
        elif b.lower is not None and u < b.lower:
            out.append((tr, line, u, "lower"))
    return out


def violation_text(s: Series, b: Bounds, v: tuple[str, int, float, str]) -> str:
    """"the model says switch takes at most 2500 us; line 812 took 2610 us"."""
    tr, line, u, _ = v
    unit = "us" if s.timing.unit_ns == 1000 else f"x {s.timing.unit_ns} ns"
    return (f"the model says {s.timing.action} ({s.timing.name}) takes {b.text} {unit}; "
            f"line {line} took {_num(round(u, 3))} {unit}")


def fitted(s: Series, b: Bounds, consts: dict[str, int]) -> dict[str, int]:
    """The constant values that make the bounds just cover the samples: the upper bound's
    constant C with bound(C) >= max, the lower's with bound(C) <= min (a bound affine in C:
    bound(C) = a + k*C, solved from its values at C = 0 and 1). {} where no single constant."""
    st = s.stats()
    if not st or b.fit is None:
        return {}
    unit = s.timing.unit_ns
    out: dict[str, int] = {}
    for e, target, up in ((b.upper_expr, st["max"] / unit, True), (b.lower_expr, st["min"] / unit, False)):
        if e is None or b.fit not in e.names():
            continue
        a = float(e.eval({**consts, b.fit: 0}))
        k = float(e.eval({**consts, b.fit: 1})) - a
        if k == 0 or float(e.eval({**consts, b.fit: 2})) != a + 2 * k:
            continue  # not affine in the constant
        c = (target - a) / k
        out[b.fit] = math.ceil(c - 1e-9) if (up == (k > 0)) else math.floor(c + 1e-9)
    return out


def series_json(s: Series, b: Bounds) -> dict[str, Any]:
    st = s.stats()
    unit = s.timing.unit_ns
    return {
        "name": s.timing.name, "action": s.timing.action, "unit_ns": unit,
        "bounds": {"lower": b.lower, "upper": b.upper, "text": b.text},
        "samples": len(s.samples),
        "stats_model_units": {k: (v if k == "n" else round(v / unit, 3)) for k, v in st.items()} if st else None,
        "violations": [{"trace": tr, "line": ln, "duration": round(u, 3), "bound": which}
                       for tr, ln, u, which in violations(s, b)],
    }


def series_text(s: Series, b: Bounds) -> str:
    st = s.stats()
    unit = s.timing.unit_ns
    u = "us" if unit == 1000 else f"x{unit}ns"
    if not st:
        return f"  timing {s.timing.name} ({s.timing.action}): no samples in the trace; the model says {b.text} {u}"
    f = {k: _num(round(v / unit, 1)) for k, v in st.items() if k != "n"}
    bad = violations(s, b)
    head = (f"  timing {s.timing.name} ({s.timing.action}): {st['n']} samples, min {f['min']}, p50 {f['p50']}, "
            f"p90 {f['p90']}, p99 {f['p99']}, max {f['max']} {u}; the model says {b.text} {u}")
    if bad:
        head += f": {len(bad)} outside"
    return head

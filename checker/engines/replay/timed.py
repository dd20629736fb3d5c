"""Replay of a timed spec (NOTE(timed) in spec/ir.py): the discrete check on its untimed
abstraction, then the recorded time stamps against the model's `time` bounds.

NOTE(timed-replay). A timed spec's behaviours are a subset of its untimed abstraction's (the same
guarded commands with every `time`/`urgent` clause dropped: each step may then happen at any
time). So replay runs in two passes:

1. **Discrete**: the ordinary replay (checker/engines/replay/search.py) against the untimed
   abstraction. A divergence there is a divergence of the timed spec too (no behaviour at all
   explains the events), and a property verdict there carries over: `violated` (every
   reconstructed behaviour violates it) and `holds` (none does) stay true of the fewer timed
   behaviours, once pass 2 shows there is at least one.
2. **Timing** (only when pass 1 conforms and every event has a time stamp `t`): the zone graph of
   the timed spec (checker/engines/timed/zones.py) is run along the trace, with one more clock
   `e`, the time since the previous event. Between events i-1 and i the hidden (internal)
   actions may fire as the zone graph allows while `e <= d_i`, d_i the stamps' difference; event
   i then fires with `e = d_i` exactly, and `e` is reset. Bounds are scaled from the model's unit
   to the trace's nanoseconds (`time_unit_ns`, 1000: the model counts microseconds), so the stamps
   are used exactly, never rounded. Symbolic states of one discrete state are kept once per
   event, a zone included in a stored one dropped (as in the zone engine). The first event that no
   symbolic state can produce at its stamp is the divergence, with the window of times after the
   previous event in which the model could have produced it ("the model allows it 2000..2300 us
   after line 137; it came 0.1 us after").

Before the first event the model may have run for any time (the recording starts anywhere), so
the first event's `e` is unconstrained. The timing pass keeps no property masks: properties come
from pass 1. Its cost is the zone graph's along one trace: every event's hidden closure is
explored exhaustively (no lazy postponement), bounded by `max_zones` symbolic states per event
(beyond it the timing check is `unknown`, saying so, never conforming by default)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from gpcheck.checker.core import budget
from gpcheck.checker.engines.replay.search import Replayer, ReplayOptions
from gpcheck.checker.engines.timed import dbm, untimed
from gpcheck.checker.engines.timed.zones import Node, Passed, ZoneGraph
from gpcheck.gpmodel import CompiledModel, ModelError, compile_model
from gpcheck.spec import ir
from gpcheck.traces.event_source import ANY_ACTION, EventSource
from gpcheck.traces.replay_report import Candidate, Divergence, ReplayReport

DEFAULT_MAX_ZONES = 200_000  # symbolic states per event's hidden closure before the check gives up
DIAGNOSIS_HORIZON_NS = 100_000_000  # a divergence's window of possible times is searched this far past the stamp
DIAGNOSIS_ZONES = 20_000
E_EXTRAPOLATE = 1 << 60  # `e` is compared with the next stamp difference only: never extrapolated away


def replayer_for(model: ir.Model, options: ReplayOptions, unit_ns: int = 1000) -> Replayer:
    """The replayer of `model`: a TimedReplayer for a timed spec (its untimed abstraction, then
    the stamps in units of `unit_ns` nanoseconds), else the plain Replayer."""
    if not model.has_time:
        return Replayer(compile_model(model), options)
    return TimedReplayer(compile_model(untimed(model)), compile_model(model), options, unit_ns=unit_ns)


@dataclass
class TimingOutcome:
    """What the timing pass established: `divergence` (a stamp no timed behaviour explains),
    `undecided` (why it stopped), or neither (every stamp fits); `events` checked, `peak` zones."""

    divergence: Divergence | None = None
    undecided: str | None = None
    events: int = 0
    peak: int = 0
    seconds: float = 0.0
    skipped: str | None = None  # why the timing pass did not run (no stamps)


def _num(ns: int, unit_ns: int) -> str:
    v = ns / unit_ns
    return f"{v:.1f}" if abs(v - round(v)) > 1e-9 else f"{int(round(v))}"


def _unit(unit_ns: int) -> str:
    return " us" if unit_ns == 1000 else f" x {unit_ns} ns"


def _fmt(ns: int, unit_ns: int) -> str:
    """A duration in trace nanoseconds, in the model's unit (us by default)."""
    return _num(ns, unit_ns) + _unit(unit_ns)


class TimedReplayer(Replayer):
    """Replays traces against a timed spec: Replayer on the untimed abstraction (`cm`), then the
    timing pass on the timed compiled model (`timed_cm`), module doc NOTE(timed-replay)."""

    def __init__(self, cm: CompiledModel, timed_cm: CompiledModel, options: ReplayOptions | None = None,
                 unit_ns: int = 1000, max_zones: int = DEFAULT_MAX_ZONES):
        super().__init__(cm, options)
        a = [(i.action.name, i.args) for i in cm.instances]
        b = [(i.action.name, i.args) for i in timed_cm.instances]
        if a != b:
            raise ValueError("the untimed abstraction must have the timed spec's action instances, in order")
        self.timed_cm = timed_cm
        self.unit_ns = unit_ns
        self.max_zones = max_zones
        self.timing: TimingOutcome | None = None

    def replay(self, source: EventSource, trace_name: str) -> ReplayReport:
        """The discrete replay, then (when it conforms) the timing pass; a timing divergence
        makes the report diverge at its line."""
        report = super().replay(source, trace_name)
        if report.conforms is not True or budget.stopped():
            return report
        if not self.opt.timing:
            report.warnings.append("timed spec: timing not checked (--no-timing): only the untimed abstraction "
                                   "was replayed, the time stamps were not held against the time bounds")
            return report
        out = self.check_times(source)
        self.timing = out
        report.seconds += out.seconds
        if out.divergence is not None:
            report.conforms = False
            report.divergence = out.divergence
        elif out.undecided is not None:
            report.conforms = None
            report.reason = f"timing check: {out.undecided}"
        elif out.skipped is not None:
            report.warnings.append(f"timed spec: only the untimed abstraction was replayed: {out.skipped}")
        else:
            note = (f"timed: the {out.events} events' time stamps fit {self.model.name}'s time bounds (zone check "
                    f"along the trace, at most {out.peak} symbolic states between two events)")
            report.reason = f"{report.reason}; {note}" if report.reason else note
        return report

    # ------------------------------------------------------------------ the timing pass
    def _graph(self) -> ZoneGraph:
        g = ZoneGraph(self.timed_cm, extra=1)
        raw, k = g.bounds_fn, self.unit_ns

        def scaled(iid: int, s: Any) -> Any:
            b = raw(iid, s)
            return (b[0] * k, None if b[1] is None else b[1] * k)

        g.bounds_fn = scaled  # model units -> trace nanoseconds (NOTE(timed-replay))
        return g

    def check_times(self, source: EventSource) -> TimingOutcome:
        """The timing pass over the whole trace (module doc, step 2)."""
        started = time.monotonic()
        out = TimingOutcome()
        g = self._graph()
        header, events = source()
        path = f"{getattr(events, 'path', '')}"
        init = self._initial(header, f"{path}:1", False)
        if isinstance(init, str):  # the discrete pass accepted it, so this does not happen
            out.undecided = f"the initial states: {init}"
            return out
        frontier: list[Node] = []
        for s, _ in init:
            try:
                n = g.initial(s, extra_reset=(0,), extra_m=(E_EXTRAPOLATE,))
            except ModelError as e:
                out.undecided = f"a time bound fails in an initial state: {e}"
                return out
            if n is not None:
                frontier.append(n)
        internal = set(self.internal)
        prev_t: int | None = None
        prev_line = 0
        for ev in events:
            action, args, obs, t, _, line = ev
            if t is None:
                out.skipped = f"line {line} has no time stamp `t`: the stamps were not checked"
                out.divergence = None
                break
            if not out.events & 0x3F and budget.stopped():
                out.undecided = f"{budget.stopped()} at line {line}"
                break
            t = int(t)
            d = None if prev_t is None else t - prev_t
            if d is not None and d < 0:
                out.undecided = f"line {line}: time stamps go backwards ({prev_t} then {t})"
                break
            iids = self._event_instances(ev, lambda: f"{path}:{line}")[0] if action != ANY_ACTION else list(range(len(self.cm.instances)))
            check = self._checker(obs, path, line)
            closure = self._closure_timed(g, frontier, internal, d)
            if closure is None:
                out.undecided = (f"line {line}: more than {self.max_zones} symbolic states in the hidden steps "
                                 f"before it (the timing check stops undecided)")
                break
            nxt: list[Node] = []
            passed = Passed()
            for node in closure:
                try:
                    succ = g.enabled(node.s)
                except ModelError:  # the discrete pass reported it; that state explains nothing
                    continue
                for iid, s2 in succ:
                    if iid not in iids or (check is not None and not check(s2)):
                        continue
                    try:
                        res = g.post(node, iid, s2, extra_reset=(0,), extra_m=(E_EXTRAPOLATE,),
                                     guard=None if d is None else (0, d))
                    except ModelError:
                        continue
                    if res is None:
                        continue
                    bounds, z = res
                    if passed.add(s2, bounds, 0, z, len(nxt)):
                        nxt.append(Node(s2, bounds, z, -1, iid))
            if not nxt:
                out.divergence = self._timing_divergence(g, ev, frontier, iids, check, d, prev_line, line)
                break
            frontier = [x for k, x in enumerate(nxt) if k not in passed.covered]
            out.peak = max(out.peak, len(closure))
            out.events += 1
            prev_t, prev_line = t, line
        if hasattr(events, "close"):
            events.close()
        out.seconds = time.monotonic() - started
        return out

    def _checker(self, obs: dict[str, Any] | None, path: str, line: int) -> Callable[[tuple[int, ...]], bool] | None:
        if not obs:
            return None
        m = self.obs.fast(obs, lambda: f"{path}:{line}")
        if m.full:
            vals = m.values
            return lambda t: t == vals
        getter, vals = self.obs.slot_getter(m.slots), m.values
        return lambda t: getter(t) == vals

    def _bound_e(self, g: ZoneGraph, node: Node, d: int | None) -> Node | None:
        """node with `e <= d` (time may not pass the next event's stamp), None when empty."""
        if d is None:
            return node
        dim = g.dim(node.bounds)
        z = list(node.zone)
        if not dbm.constrain(z, dim, g.extra_position(node.bounds, 0), 0, dbm.le(d)):
            return None
        return Node(node.s, node.bounds, tuple(z), -1, node.iid)

    def _closure_timed(self, g: ZoneGraph, frontier: list[Node], internal: set[int], d: int | None) -> list[Node] | None:
        """Every symbolic state reachable by hidden steps with `e <= d` (None past max_zones)."""
        passed = Passed()
        out: list[Node] = []
        work: list[Node] = []
        for node in frontier:
            b = self._bound_e(g, node, d)
            if b is not None and passed.add(b.s, b.bounds, 0, b.zone, len(out)):
                out.append(b)
                work.append(b)
        while work:
            node = work.pop()
            try:
                succ = g.enabled(node.s)
            except ModelError:
                continue
            for iid, s2 in succ:
                if iid not in internal:
                    continue
                try:
                    res = g.post(node, iid, s2, extra_m=(E_EXTRAPOLATE,))
                except ModelError:
                    continue
                if res is None:
                    continue
                b = self._bound_e(g, Node(s2, res[0], res[1], -1, iid), d)
                if b is None or not passed.add(b.s, b.bounds, 0, b.zone, len(out)):
                    continue
                out.append(b)
                work.append(b)
                if len(out) > self.max_zones:
                    return None
        return [x for k, x in enumerate(out) if k not in passed.covered]

    def _timing_divergence(self, g: ZoneGraph, ev: Any, frontier: list[Node], iids: list[int],
                           check: Callable[[tuple[int, ...]], bool] | None, d: int | None,
                           prev_line: int, line: int) -> Divergence:
        """Why no timed behaviour produces the event at its stamp: the times after the previous
        event at which the reconstructed states could have produced it, searched up to
        DIAGNOSIS_HORIZON_NS past the stamp (DIAGNOSIS_ZONES symbolic states at most)."""
        horizon = (d or 0) + DIAGNOSIS_HORIZON_NS
        keep = self.max_zones
        self.max_zones = DIAGNOSIS_ZONES
        try:
            closure = self._closure_timed(g, frontier, set(self.internal), horizon)
        finally:
            self.max_zones = keep
        lo: int | None = None
        hi: int | None = None
        for node in closure or []:
            try:
                succ = g.enabled(node.s)
            except ModelError:
                continue
            for iid, s2 in succ:
                if iid not in iids or (check is not None and not check(s2)):
                    continue
                z = g.fire_zone(node, iid)
                if z is None:
                    continue
                dim = g.dim(node.bounds)
                ep = g.extra_position(node.bounds, 0)
                a = -dbm.value(z[ep])  # entry (0, e): 0 - e <= c, so e >= -c
                b = dbm.value(z[ep * dim]) if z[ep * dim] < dbm.INF else horizon
                lo = a if lo is None else min(lo, a)
                hi = b if hi is None else max(hi, b)
        u = self.unit_ns
        came = f"it came {_fmt(d or 0, u)} after line {prev_line}" if d is not None else "it is the first event"
        if lo is None:
            within = "" if closure is not None else f" (searched {DIAGNOSIS_ZONES} symbolic states)"
            why = (f"no timed behaviour produces it within {_fmt(horizon, u)} of line {prev_line}{within}; {came}")
        else:
            span = f"at least {_fmt(lo, u)}" if hi is not None and hi >= horizon else f"{_num(lo, u)}..{_num(hi or 0, u)}{_unit(u)}"
            why = f"the model's time bounds allow it {span} after line {prev_line}; {came}"
        event = {"action": ev.action, "args": dict(ev.args)}
        if ev.state:
            event["state"] = ev.state
        states: list[tuple[int, ...]] = []
        for node in frontier:
            if node.s not in states:
                states.append(node.s)
        shown = tuple(Candidate(self._decoded(s), ()) for s in states[:self.opt.show_candidates])
        return Divergence(line, event, f"timing: {self.model.name}'s time bounds do not explain line {line}: {why}",
                          shown, len(states))

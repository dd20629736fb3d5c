"""Export behaviours (traces, counterexamples) as Chrome trace-event JSON for ui.perfetto.dev.

Why: a preemption bug is easiest to see on a timeline. Models differ, so the tracks are derived
generically from the model's actions and state (NOTE(perfetto-tracks)):

- **Action tracks.** Every step is an instant event (`ph: "i"`) named by the action instance
  (`preempt(q=1)`), on the track of its *first parameter* (`q=1`: one track per queue or
  stream when the model's actions are parameterised by one), or on the track `actions` when
  the action has none. Actions whose name mentions preempt, resume, reset, clear, save,
  restore, rewind, evict, kill, halt or switch are process-scoped instants (`s: "p"`), drawn
  across every track.
- **State tracks.** Every state slot (dotted path, `q.1.busy`) that is a bool or an enum gets
  its own track: a bool gives a slice (`ph: "X"`) named by the path for each period it is
  true (a kernel on the compute units, a wave running), an enum gives one slice per period it
  holds a member, named by the member (`Running`, `Preempted`). Tracks are sorted by path, so
  the slots of one queue (`q.1.*`) sit together.
- **Counters.** Every integer slot is a counter track (`ph: "C"`, `rptr`, `wptr`,
  `waves_run.3`, pending counts), with a sample whenever it changes.

- **Kernel tracks.** In an observation trace (an imported profile: `start`/`end` events whose
  `meta` names the kernel, NOTE(observation-events)), each kernel is also a slice (`ph: "X"`)
  from its start to its end named by the kernel (`ampere_sgemm_128x64_nn`, demangled names as
  recorded), on the track `kernels stream=S` of its stream, with its correlation id, grid and
  block sizes, the source's stream id and priority in `args` (a second lane `kernels stream=S
  #2` takes a kernel that overlaps one still running in its stream). The action instants carry
  the same kernel fields, so a real run reads as itself in ui.perfetto.dev and `grep` finds its
  kernel names.

Time: an event's `t` (ns, shown relative to the first one) when the trace has one, else one
microsecond per step. Without a model, kinds are taken from the JSON values (bool, string, int)
and lists are indexed by position. With a model and a conforming trace, `export_behaviour`
shows the behaviour replay reconstructed: every state slot (observed or not) and the hidden
internal steps (instants with `hidden: true`, at the time of the event they precede). Output streams to a temporary file renamed into place (constant memory in the trace
length, apart from one entry per track). `validate_chrome_trace` is a schema check of the
trace-event format used by the tests.
"""

from __future__ import annotations

import os
import re
from typing import IO, Any, Iterable, Mapping

import orjson

from gpcheck.checker.core.verdict import Counterexample
from gpcheck.spec import ir
from gpcheck.spec.instances import SELF, instance_groups
from gpcheck.traces.atomic import AtomicFile
from gpcheck.traces.format import Event, TraceHeader
from gpcheck.traces.observation import Observer

GENERATOR = "gpcheck export"  # otherData.generator of the files this module writes
PID = 1
HIGHLIGHT = re.compile(r"preempt|resume|reset|clear|save|restore|rewind|evict|kill|halt|switch", re.I)
STEP_NS = 1000  # synthetic time per step when events carry no `t`
# the event meta a kernel slice and an action instant show (NOTE(observation-events))
KERNEL_META = ("name", "corr", "pid", "kernel", "grid", "grid_dims", "block_dims", "stream_id", "cuda_priority",
               "launch_from", "api", "device", "context", "queue_id", "agent", "work")


class PerfettoWriter:
    """Streams frames (action, args, state update, time) into a Chrome trace-event JSON file."""

    def __init__(self, path: str, title: str, model: ir.Model | None = None):
        self.path = path
        self.model = model
        self.observer = Observer(model) if model is not None else None
        self._out = AtomicFile(path)
        self._f: IO[bytes] = self._out.file
        # otherData marks the file as a model behaviour drawn by gpcheck (not a profile of
        # kernels): `gpcheck import --format chrome` refuses it
        self._f.write(b'{"displayTimeUnit":"ns","otherData":{"generator":"' + GENERATOR.encode() + b'"},'
                      b'"traceEvents":[\n')
        self._first = True
        self._tids: dict[tuple[int, str], int] = {}  # (group, track) -> tid
        # NOTE(instances): one process (track group) per module instance, the rest in PID
        self._groups = instance_groups(model) if model is not None else {}
        self._pids: dict[str, int] = {}
        self._var_names = sorted((v.name for v in model.vars), key=len, reverse=True) if model is not None else []
        self._values: dict[str, Any] = {}  # path -> last value
        self._open: dict[str, tuple[str, float]] = {}  # slice track -> (slice name, start ts)
        self._kinds: dict[str, str] = {}  # path -> bool | enum | int
        self._last_ns: float | None = None
        self._base: float | None = None  # subtracted from every `t`
        self._ts = 0.0
        self.count = 0
        self._kernels: dict[tuple[Any, ...], tuple[str, float, dict[str, Any], str]] = {}  # running kernels
        self._lanes: dict[str, int] = {}  # kernel lane track -> kernels open on it
        self._fifo: dict[tuple[str, Any], int] = {}  # start/end count per stream, where meta has no corr
        self._emit({"ph": "M", "name": "process_name", "pid": PID, "tid": 0, "args": {"name": title}})

    # ------------------------------------------------------------------ low level
    def _emit(self, ev: Mapping[str, Any]) -> None:
        if not self._first:
            self._f.write(b",\n")
        self._first = False
        self._f.write(orjson.dumps(ev))

    def _tid(self, track: str, pid: int = PID) -> int:
        tid = self._tids.get((pid, track))
        if tid is None:
            tid = self._tids[(pid, track)] = len(self._tids) + 1
            self._emit({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": track}})
        return tid

    def _pid(self, name: str, args: Mapping[str, Any] | None = None) -> int:
        """The track group of a state path or an action: its instance's (an element's, for an
        array of instances), or PID for the using model's own (NOTE(instances))."""
        inst = name.split(".", 1)[0]
        if inst not in self._groups or "." not in name:
            return PID
        label = inst
        if self._groups[inst]:
            if args is not None:
                if f"{inst}.{SELF}" in args:
                    label = f"{inst}[{_txt(args[f'{inst}.{SELF}'])}]"
            else:
                var = next((v for v in self._var_names if name == v or name.startswith(v + ".")), None)
                rest = name[len(var) + 1:].split(".", 1)[0] if var is not None else ""
                if rest:
                    label = f"{inst}[{rest}]"
        pid = self._pids.get(label)
        if pid is None:
            pid = self._pids[label] = PID + 1 + len(self._pids)
            self._emit({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": label}})
        return pid

    # ------------------------------------------------------------------ state
    def _flatten(self, obs: Mapping[str, Any], where: str) -> dict[str, Any]:
        """{dotted path: scalar} of an observation, typed by the model when there is one."""
        if self.observer is not None:
            slots = self.observer.slots_of(dict(obs), where)
            out = {}
            for i, v in slots.items():
                st = self.observer.slot_types[i]
                name = self.observer.slot_names[i]
                self._kinds.setdefault(name, "bool" if isinstance(st, ir.BoolType) else "enum" if isinstance(st, ir.EnumType) else "int")
                out[name] = ir.format_scalar(st, v)
            return out
        flat: dict[str, Any] = {}
        stack: list[tuple[str, Any]] = list(obs.items())
        while stack:
            k, v = stack.pop()
            if isinstance(v, dict):
                stack.extend((f"{k}.{k2}", v2) for k2, v2 in v.items())
            elif isinstance(v, list):
                stack.extend((f"{k}.{i}", v2) for i, v2 in enumerate(v))
            else:
                flat[k] = v
                self._kinds.setdefault(k, "bool" if isinstance(v, bool) else "enum" if isinstance(v, str) else "int")
        return flat

    def _update(self, flat: Mapping[str, Any], ts: float) -> None:
        for path in sorted(flat):
            v = flat[path]
            if path in self._values and self._values[path] == v:
                continue
            self._values[path] = v
            kind = self._kinds.get(path, "int")
            if kind == "int":
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    self._emit({"ph": "C", "name": path, "pid": self._pid(path), "tid": 0, "ts": ts, "args": {"value": v}})
                continue
            self._close(path, ts)
            if kind == "bool":
                if v is True:
                    self._open[path] = (path, ts)
            else:
                self._open[path] = (str(v), ts)
            self._tid(path, self._pid(path))

    def _close(self, path: str, ts: float) -> None:
        o = self._open.pop(path, None)
        if o is not None:
            name, start = o
            pid = self._pid(path)
            self._emit({"ph": "X", "name": name, "pid": pid, "tid": self._tid(path, pid), "ts": start, "dur": ts - start,
                        "args": {"path": path}})

    # ------------------------------------------------------------------ frames
    def initial(self, state: Mapping[str, Any] | None, where: str = "initial state") -> None:
        """The initial state (time 0, or one step before the first event's `t`)."""
        if state:
            self._update(self._flatten(state, where), self._ts)

    def event(
        self,
        action: str,
        args: Mapping[str, Any],
        state: Mapping[str, Any] | None,
        t: float | None = None,
        line: int | None = None,
        where: str = "",
        line_key: str = "line",
        hidden: bool = False,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """One step: the action instant (args: the action's, the kernel fields of `meta`, plus
        `line_key`: `line`, and `hidden: true` for an internal step replay inserted), then the
        state update, and a `start`/`end` of a named kernel opens/closes its kernel slice. Times
        are relative: the first `t` seen is placed one step after the initial state (time 0)."""
        if t is not None:
            if self._base is None:
                self._base = t - (self._last_ns if self._last_ns is not None else 0) - STEP_NS
            ns = t - self._base
        else:
            ns = self._last_ns + STEP_NS if self._last_ns is not None else STEP_NS
        self._last_ns = ns
        ts = max(ns / 1000.0, self._ts)  # Chrome's ts is in microseconds and must not go back
        self._ts = ts
        label = action + ("(" + ", ".join(f"{k}={_txt(v)}" for k, v in args.items()) + ")" if args else "")
        track = f"{next(iter(args))}={_txt(next(iter(args.values())))}" if args else "actions"
        pid = self._pid(action, args)
        ev: dict[str, Any] = {"ph": "i", "name": label, "pid": pid, "tid": self._tid(track, pid), "ts": ts,
                              "s": "p" if HIGHLIGHT.search(action) else "t"}
        a: dict[str, Any] = dict(args)
        km = {k: meta[k] for k in KERNEL_META if k in meta} if meta else {}
        for k, v in km.items():
            a.setdefault(k, v)
        if line is not None:
            a[line_key] = line
        if hidden:
            a["hidden"] = True
        if a:
            ev["args"] = a
        self._emit(ev)
        if state:
            self._update(self._flatten(state, where), ts)
        if km.get("name") is not None and action in ("start", "end"):
            self._kernel(action, args, km, ts, line)
        self.count += 1

    def _kernel(self, action: str, args: Mapping[str, Any], km: dict[str, Any], ts: float, line: int | None) -> None:
        """Open (start) or close (end) the slice of one kernel on a lane of its stream's track."""
        stream = args.get("stream", km.get("stream_id"))
        if km.get("corr") is not None:
            key: tuple[Any, ...] = (km.get("pid"), km["corr"])
        else:  # no correlation ids: starts and ends pair up in order per stream
            n = self._fifo.get((action, stream), 0)
            self._fifo[(action, stream)] = n + 1
            key = ("fifo", stream, n)
        if action == "start":
            if key in self._kernels:
                return  # a second start of one launch: the first slice stands
            base = f"kernels stream={_txt(stream)}"
            lane, i = base, 1
            while self._lanes.get(lane):
                i += 1
                lane = f"{base} #{i}"
            self._lanes[lane] = 1
            sargs = dict(km, stream=stream)
            if "priority" in args:
                sargs["priority"] = args["priority"]
            if line is not None:
                sargs["start_line"] = line
            self._kernels[key] = (str(km["name"]), ts, sargs, lane)
            return
        opened = self._kernels.pop(key, None)
        if opened is None:
            return  # an end without a start: the instant shows it
        name, start, sargs, lane = opened
        if line is not None:
            sargs["end_line"] = line
        self._emit({"ph": "X", "name": name, "pid": PID, "tid": self._tid(lane), "ts": start, "dur": ts - start,
                    "args": sargs})
        self._lanes[lane] = 0

    def duration(self, action: str, args: Mapping[str, Any], start: int, end: int) -> None:
        """NOTE(timed): the duration of a timed action instance (its timer ran from `start` to
        `end`, model units shown as microseconds) as a complete slice on the instance's own
        track, so that durations that overlap in time overlap on screen."""
        label = action + ("(" + ", ".join(f"{k}={_txt(v)}" for k, v in args.items()) + ")" if args else "")
        pid = self._pid(action, args)
        self._emit({"ph": "X", "name": label, "pid": pid, "tid": self._tid(f"time {label}", pid), "ts": float(start),
                    "dur": float(end - start), "cat": "duration"})

    def close(self) -> None:
        """Close open slices one step after the last event and move the file into place."""
        end = self._ts + STEP_NS / 1000.0
        for path in sorted(self._open):
            self._close(path, end)
        for name, start, sargs, lane in self._kernels.values():  # started, never seen to end
            self._emit({"ph": "X", "name": name, "pid": PID, "tid": self._tid(lane), "ts": start, "dur": end - start,
                        "args": dict(sargs, unfinished=True)})
        self._kernels.clear()
        # sort tracks by name so the slots of one queue sit together
        for i, key in enumerate(sorted(self._tids)):
            self._emit({"ph": "M", "name": "thread_sort_index", "pid": key[0], "tid": self._tids[key], "args": {"sort_index": i}})
        self._f.write(b"\n]}\n")
        self._out.commit()

    def abort(self) -> None:
        self._out.abort()

    def __enter__(self) -> "PerfettoWriter":
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def _txt(v: Any) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def export_counterexample(cx: Counterexample, model: ir.Model, path: str, title: str | None = None) -> None:
    """A counterexample (or any behaviour of decoded states) as a Perfetto/Chrome JSON file."""
    timed = any(st.time is not None for st in cx.steps)
    with PerfettoWriter(path, title or f"{model.name} counterexample", model) as w:
        if timed:
            w._base = 0  # the time stamps are absolute: step k at its own time
        if cx.steps:
            w.initial(cx.steps[0].state)
        for i, st in enumerate(cx.steps[1:], 1):
            if timed and st.since is not None and st.time is not None:
                w.duration(st.action or "?", st.args, st.since, st.time)
            # NOTE(timed): a timed behaviour's time stamps in the model's unit, shown as microseconds
            t = None if not timed or st.time is None else st.time * 1000
            w.event(st.action or "?", st.args, st.state, t=t, line=i, line_key="step")


def export_events(header: TraceHeader, events: Iterable[Event], path: str, model: ir.Model | None = None,
                  source: str = "trace") -> int:
    """A gpcheck trace (streamed) as a Perfetto/Chrome JSON file; returns the event count."""
    title = f"{header.model or (model.name if model else 'trace')} ({os.path.basename(source)})"
    with PerfettoWriter(path, title, model) as w:
        w.initial(header.init, f"{source}:1")
        for ev in events:
            w.event(ev.action, ev.args, ev.state, ev.t, ev.line, f"{source}:{ev.line}", meta=ev.meta)
        return w.count


def export_trace(path: str, header: TraceHeader, source: Any, model: ir.Model | None, replayer: Any = None,
                 trace_name: str = "trace") -> tuple[int, bool]:
    """Export a trace for ui.perfetto.dev: the behaviour `replayer` (a gpcheck.checker.engines.replay.search.Replayer of
    `model`) reconstructs from the EventSource `source` when it conforms (every slot, hidden
    steps included), else the events as logged. Returns (steps written, reconstructed?)."""
    title = f"{header.model or (model.name if model else 'trace')} ({os.path.basename(trace_name)})"
    if model is not None and replayer is not None:
        steps = replayer.reconstruct_steps(source)
        if steps is not None:
            _, events = source()
            times: dict[int, float] = {}
            metas: dict[int, dict[str, Any]] = {}
            for ev in events:
                if ev.t is not None:
                    times[ev.line] = ev.t
                if ev.meta and "name" in ev.meta:
                    metas[ev.line] = {k: ev.meta[k] for k in KERNEL_META if k in ev.meta}
            return export_behaviour(model, steps, times, path, title, metas), True
    _, events = source()
    return export_events(header, events, path, model, trace_name), False


def export_behaviour(
    model: ir.Model,
    steps: Iterable[tuple[str | None, Mapping[str, Any], Mapping[str, Any], int, bool]],
    times: Mapping[int, float],
    path: str,
    title: str,
    metas: Mapping[int, Mapping[str, Any]] | None = None,
) -> int:
    """A reconstructed behaviour (`Replayer.reconstruct_steps`: action, args, decoded state,
    trace line, hidden) as Perfetto/Chrome JSON, each step at the time `times[line]` of its
    event (hidden steps at the time of the event they precede), a logged step with the kernel
    fields `metas[line]` of its event (kernel slices, see the module doc)."""
    with PerfettoWriter(path, title, model) as w:
        for action, args, state, line, hidden in steps:
            if action is None:
                w.initial(state)
            else:
                w.event(action, args, state, times.get(line), line, hidden=hidden,
                        meta=None if hidden or metas is None else metas.get(line))
        return w.count


# ---------------------------------------------------------------------------------------------
# Schema check of the Chrome trace-event format


_PHASES = set("BEXiIC" "bne" "sft" "PNOD" "M" "Rc" "()" "v" "V")
_META_NAMES = {"process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index"}


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def validate_chrome_trace(obj: Any) -> list[str]:
    """Problems with a Chrome trace-event JSON value (empty list: valid). Checks the JSON
    object/array forms, every event's phase and required fields (`name`, `ph`, `pid`, `tid`,
    `ts`; `dur` for X, `args` with numeric values for C, `s` for instants, metadata names),
    B/E pairing and proper nesting of complete slices on each thread."""
    problems: list[str] = []
    if isinstance(obj, list):
        events = obj
    elif isinstance(obj, dict):
        events = obj.get("traceEvents")
        if not isinstance(events, list):
            return ["the top-level object needs a \"traceEvents\" array"]
        if "displayTimeUnit" in obj and obj["displayTimeUnit"] not in ("ms", "ns"):
            problems.append("displayTimeUnit must be \"ms\" or \"ns\"")
    else:
        return ["a trace is a JSON array of events or an object with \"traceEvents\""]
    slices: dict[tuple[Any, Any], list[tuple[float, float, int]]] = {}
    stacks: dict[tuple[Any, Any], list[str]] = {}
    for i, ev in enumerate(events):
        where = f"traceEvents[{i}]"
        if not isinstance(ev, dict):
            problems.append(f"{where}: an event must be an object")
            continue
        ph = ev.get("ph")
        if not isinstance(ph, str) or ph not in _PHASES:
            problems.append(f"{where}: unknown phase {ph!r}")
            continue
        if not isinstance(ev.get("name"), str) and ph != "E":
            problems.append(f"{where}: \"name\" must be a string")
        for k in ("pid", "tid"):
            if k in ev and not isinstance(ev[k], (int, str)):
                problems.append(f"{where}: \"{k}\" must be an integer or string")
        if "pid" not in ev:
            problems.append(f"{where}: missing \"pid\"")
        if "args" in ev and not isinstance(ev["args"], dict):
            problems.append(f"{where}: \"args\" must be an object")
        if ph == "M":
            if ev.get("name") not in _META_NAMES:
                problems.append(f"{where}: unknown metadata event {ev.get('name')!r}")
            a = ev.get("args")
            if not isinstance(a, dict) or not ("name" in a or "sort_index" in a or "labels" in a):
                problems.append(f"{where}: metadata needs args.name, args.sort_index or args.labels")
            continue
        if not _num(ev.get("ts")) or ev["ts"] < 0:
            problems.append(f"{where}: \"ts\" must be a non-negative number (microseconds)")
            continue
        if ph != "C" and "tid" not in ev:
            problems.append(f"{where}: missing \"tid\"")
        key = (ev.get("pid"), ev.get("tid"))
        if ph == "X":
            if not _num(ev.get("dur")) or ev["dur"] < 0:
                problems.append(f"{where}: a complete event (X) needs a non-negative \"dur\"")
            else:
                slices.setdefault(key, []).append((float(ev["ts"]), float(ev["ts"]) + float(ev["dur"]), i))
        elif ph in "iI":
            if "s" in ev and ev["s"] not in ("g", "p", "t"):
                problems.append(f"{where}: instant scope \"s\" must be g, p or t")
        elif ph == "C":
            a = ev.get("args")
            if not isinstance(a, dict) or not a or not all(_num(v) for v in a.values()):
                problems.append(f"{where}: a counter (C) needs \"args\" with numeric values")
        elif ph == "B":
            stacks.setdefault(key, []).append(ev.get("name", ""))
        elif ph == "E":
            if not stacks.get(key):
                problems.append(f"{where}: an end event (E) without a matching begin (B)")
            else:
                stacks[key].pop()
    for key, st in stacks.items():
        if st:
            problems.append(f"thread {key}: {len(st)} begin event(s) (B) never ended")
    for key, ss in slices.items():
        ss.sort(key=lambda x: (x[0], -x[1]))
        open_: list[tuple[float, float, int]] = []
        for a, b, i in ss:
            while open_ and open_[-1][1] <= a:
                open_.pop()
            if open_ and b > open_[-1][1]:
                problems.append(f"traceEvents[{i}]: slice overlaps traceEvents[{open_[-1][2]}] on thread {key} without nesting")
            open_.append((a, b, i))
    return problems

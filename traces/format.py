"""The gpcheck trace format: JSON Lines, a header line, then one event per line.

Why its own format: a trace must stream (a million events in constant memory), be written by
importers of real GPU traces and by `gpcheck simulate`, and carry partial observations of the
model's state. The full description is in docs/trace-format.md; in short:

    {"gpcheck_trace": 1, "model": "ring", "constants": {"N": 4}, "init": {...}?, ...}
    {"action": "launch", "args": {}, "state": {"wptr": 1}, "t": 1200, "meta": {...}}
    {"action": "preempt", "args": {"q": 0}}

`state` is an observation of variables *after* the step: keys are dotted paths
(`waves_run.3`, `q.Waiting.rptr`) or nested objects/lists, values are scalars (int, bool, enum
member name). Header keys other than the ones named here are kept in `TraceHeader.extra`.

Reading is streaming (`open_trace`), `.gz` is decompressed transparently, and every problem
raises `gpcheck.spec.errors.TraceError` naming the file and the 1-based line. Writing goes to a
temporary file in the target's directory that is renamed over the target only when the
writer closes without error, so a trace is written whole or not at all.
"""

from __future__ import annotations

import gzip
import io
import zlib
from dataclasses import dataclass, field
from typing import IO, Any, Iterable, Iterator, Mapping, NamedTuple

import orjson

from gpcheck.spec.errors import TraceError
from gpcheck.spec.limits import MAX_INT
from gpcheck.traces.atomic import AtomicFile

FORMAT_VERSION = 1
HEADER_KEY = "gpcheck_trace"
_HEADER_KNOWN = frozenset({HEADER_KEY, "model", "constants", "init"})
_EVENT_KEYS = frozenset({"action", "args", "state", "t", "meta"})

Scalar = int | bool | str


@dataclass(frozen=True, slots=True)
class TraceHeader:
    """The first line of a trace: which model instance the events claim to be a behaviour of.

    `init` is an optional observation of the initial state (same shape as an event's `state`);
    `extra` holds every other header key (`source`, `clock`, `description`, ...) unchanged."""

    model: str | None = None
    constants: dict[str, int] = field(default_factory=dict)
    init: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {HEADER_KEY: FORMAT_VERSION, "model": self.model, "constants": self.constants}
        if self.init is not None:
            out["init"] = self.init
        for k, v in self.extra.items():
            out[k] = v
        return out


class Event(NamedTuple):
    """One logged step: an action instance, an optional observation of the state after it, an
    optional timestamp in nanoseconds and free-form metadata. `line` is the 1-based line of the
    event in its file (0 for events built in memory). A NamedTuple: a million are built per
    million-event replay, and a tuple is the cheapest immutable record."""

    action: str
    args: dict[str, Any]
    state: dict[str, Any] | None = None
    t: int | float | None = None
    meta: dict[str, Any] | None = None
    line: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "args": self.args}
        if self.state is not None:
            out["state"] = self.state
        if self.t is not None:
            out["t"] = self.t
        if self.meta is not None:
            out["meta"] = self.meta
        return out


# ---------------------------------------------------------------------------------------------
# Reading


def _open_binary(path: str) -> IO[bytes]:
    try:
        raw: IO[bytes] = open(path, "rb")
    except OSError as e:
        raise TraceError(f"{path}: cannot open trace: {e.strerror or e}") from None
    if path.endswith(".gz"):
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    return raw


_SCALAR_TYPES = (int, str, bool)


def _is_scalar(v: Any) -> bool:
    return type(v) in _SCALAR_TYPES or isinstance(v, (int, str))


def _check_state(v: Any, where: str, name: str) -> dict[str, Any]:
    """An observation: an object whose leaves are scalars (nested objects and lists allowed)."""
    if not isinstance(v, dict):
        raise TraceError(f"{where}: \"{name}\" must be an object, got {type(v).__name__}")
    for x in v.values():  # fast path: scalars and flat lists of scalars
        tx = type(x)
        if tx in _SCALAR_TYPES:
            continue
        if tx is list and all(type(y) in _SCALAR_TYPES for y in x):
            continue
        break
    else:
        return v
    stack: list[tuple[str, Any]] = list(v.items())
    while stack:
        k, x = stack.pop()
        if isinstance(x, dict):
            if not x:
                raise TraceError(f"{where}: \"{name}\" has an empty object at {k!r}")
            stack.extend((f"{k}.{k2}", x2) for k2, x2 in x.items())
        elif isinstance(x, list):
            stack.extend((f"{k}[{i}]", x2) for i, x2 in enumerate(x))
        elif not _is_scalar(x):
            raise TraceError(f"{where}: \"{name}\" value at {k!r} must be an int, bool or string, got {_short(x)}")
    return v


def _short(v: Any) -> str:
    """A value for an error message, cut to 80 characters."""
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."


def parse_header(obj: Any, where: str) -> TraceHeader:
    """Validate a decoded header line (see module doc); `where` is `file:line` for errors."""
    if not isinstance(obj, dict) or HEADER_KEY not in obj:
        raise TraceError(
            f"{where}: not a gpcheck trace: the first line must be a JSON object with "
            f"\"{HEADER_KEY}\": {FORMAT_VERSION}"
        )
    version = obj[HEADER_KEY]
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise TraceError(f"{where}: unsupported trace format version {_short(version)} (this gpcheck reads {FORMAT_VERSION})")
    model = obj.get("model")
    if model is not None and not isinstance(model, str):
        raise TraceError(f"{where}: \"model\" must be a string or null, got {_short(model)}")
    consts = obj.get("constants", {})
    if consts is None:
        consts = {}
    if not isinstance(consts, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in consts.items()
    ):
        raise TraceError(f"{where}: \"constants\" must be an object of integers, got {_short(consts)}")
    big = [k for k, v in consts.items() if abs(v) > MAX_INT]
    if big:
        raise TraceError(f"{where}: constant {big[0]} is too large (a constant is at most 2^62 = {MAX_INT} in magnitude)")
    init = obj.get("init")
    if init is not None:
        _check_state(init, where, "init")
    extra = {k: v for k, v in obj.items() if k not in _HEADER_KNOWN}
    return TraceHeader(model=model, constants=dict(consts), init=init, extra=extra)


def parse_event(obj: Any, where: str, line: int = 0, check_state: bool = True) -> Event:
    """Validate one decoded event line (see module doc); `where` is `file:line` for errors.
    `check_state=False` leaves the `state` observation to the caller (replay validates it
    against the model anyway, so it skips this walk)."""
    if not isinstance(obj, dict):
        raise TraceError(f"{where}: an event must be a JSON object, got {type(obj).__name__}")
    action = obj.get("action")
    if not isinstance(action, str) or not action:
        raise TraceError(f"{where}: an event needs \"action\": a non-empty string")
    if len(obj) > 1 and not _EVENT_KEYS.issuperset(obj):
        bad = sorted(set(obj) - _EVENT_KEYS)
        raise TraceError(
            f"{where}: unknown event key(s) {', '.join(map(repr, bad))} "
            f"(allowed: action, args, state, t, meta; put anything else in \"meta\")"
        )
    args = obj.get("args")
    if args is None:
        args = {}
    elif not isinstance(args, dict):
        raise TraceError(f"{where}: \"args\" must be an object, got {type(args).__name__}")
    else:
        for k, v in args.items():
            if not _is_scalar(v):
                raise TraceError(f"{where}: argument {k!r} must be an int, bool or string, got {_short(v)}")
    state = obj.get("state")
    if state is not None:
        if check_state:
            _check_state(state, where, "state")
        elif type(state) is not dict:
            raise TraceError(f"{where}: \"state\" must be an object, got {type(state).__name__}")
    t = obj.get("t")
    if t is not None and (not isinstance(t, (int, float)) or isinstance(t, bool)):
        raise TraceError(f"{where}: \"t\" must be a number (nanoseconds), got {_short(t)}")
    meta = obj.get("meta")
    if meta is not None and not isinstance(meta, dict):
        raise TraceError(f"{where}: \"meta\" must be an object, got {type(meta).__name__}")
    return Event(action, args, state, t, meta, line)


def _cr_only(f: IO[bytes], path: str) -> bool:
    """Do the first bytes of the stream end lines in CR alone (no LF at all)?"""
    try:
        head = f.peek(1 << 16) if hasattr(f, "peek") else b""
    except (OSError, EOFError, zlib.error) as e:
        raise TraceError(f"{path}:1: cannot read trace: {e}") from None
    return b"\r" in head and b"\n" not in head


class _CrLines:
    """A binary stream whose lines end in CR alone, read as lines ending in LF."""

    def __init__(self, f: IO[bytes]):
        self._f = f
        self._buf = b""

    def readline(self) -> bytes:
        while b"\r" not in self._buf:
            chunk = self._f.read(1 << 16)
            if not chunk:
                line, self._buf = self._buf, b""
                return line
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\r")
        return line + b"\n"

    def __iter__(self) -> Iterator[bytes]:
        while line := self.readline():
            yield line

    def close(self) -> None:
        self._f.close()


class TraceReader:
    """A streaming reader: the header is read on open, events are decoded one line at a time.

    Use as a context manager (`with open_trace(path) as tr: for ev in tr: ...`). Memory is
    constant in the trace length. Blank lines are skipped (they still count for line numbers).
    Lines may end in LF, CRLF or CR alone: the line numbers are the same."""

    def __init__(self, path: str, stream: IO[bytes] | None = None):
        self.path = path
        self._f: IO[bytes] = stream if stream is not None else _open_binary(path)
        self._line = 0
        if _cr_only(self._f, path):
            self._f = _CrLines(self._f)  # type: ignore[assignment]
        self.header = self._read_header()

    def _where(self) -> str:
        return f"{self.path}:{self._line}"

    def _next_line(self) -> bytes | None:
        try:
            while True:
                raw = self._f.readline()
                if not raw:
                    return None
                self._line += 1
                if raw.strip():
                    return raw
        except (OSError, EOFError, zlib.error) as e:
            raise TraceError(f"{self.path}:{self._line + 1}: cannot read trace: {e}") from None

    def _decode(self, raw: bytes) -> Any:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            raise TraceError(f"{self._where()}: invalid JSON: {e}") from None

    def _read_header(self) -> TraceHeader:
        raw = self._next_line()
        if raw is None:
            raise TraceError(f"{self.path}:1: empty trace (expected a header line {{\"{HEADER_KEY}\": {FORMAT_VERSION}, ...}})")
        return parse_header(self._decode(raw), self._where())

    @property
    def line(self) -> int:
        """The line number of the last line read."""
        return self._line

    def __iter__(self) -> Iterator[Event]:
        return self.events()

    def events(self, check_state: bool = True) -> Iterator[Event]:
        """The events, one line at a time (see `parse_event` for `check_state`)."""
        loads = orjson.loads
        issuperset = _EVENT_KEYS.issuperset
        new_event = tuple.__new__
        path = self.path
        line = self._line
        try:
            for raw in self._f:
                line += 1
                try:
                    obj = loads(raw)
                except orjson.JSONDecodeError as e:
                    if not raw.strip():
                        continue
                    raise TraceError(f"{path}:{line}: invalid JSON: {e}") from None
                # fast path: the common well-formed event, checked without building messages
                action = obj.get("action") if type(obj) is dict else None
                if type(action) is str and action and issuperset(obj):
                    args = obj.get("args")
                    state = obj.get("state")
                    if len(obj) == 1 + (args is not None) + (state is not None):
                        t = meta = None
                    else:
                        t = obj.get("t")
                        meta = obj.get("meta")
                    if (
                        (args is None or (type(args) is dict and (not args or all(type(v) in _SCALAR_TYPES for v in args.values()))))
                        and (state is None or (type(state) is dict and not check_state))
                        and (t is None or type(t) is int or type(t) is float)
                        and (meta is None or type(meta) is dict)
                    ):
                        yield new_event(Event, (action, args if args is not None else {}, state, t, meta, line))
                        continue
                yield parse_event(obj, f"{path}:{line}", line, check_state)
        except (OSError, EOFError, zlib.error) as e:
            raise TraceError(f"{path}:{line + 1}: cannot read trace: {e}") from None
        finally:
            self._line = line

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> "TraceReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_trace(path: str) -> TraceReader:
    """Open a trace file (`.gz` too) for streaming; raises TraceError on a bad header."""
    return TraceReader(path)


def read_trace(path: str) -> tuple[TraceHeader, list[Event]]:
    """The whole trace in memory (small traces and tests only)."""
    with open_trace(path) as tr:
        return tr.header, list(tr)


def loads_trace(text: str | bytes, name: str = "<string>") -> tuple[TraceHeader, list[Event]]:
    """Parse a trace held in memory (tests, API callers)."""
    data = text.encode() if isinstance(text, str) else text
    with TraceReader(name, io.BytesIO(data)) as tr:
        return tr.header, list(tr)


# ---------------------------------------------------------------------------------------------
# Writing


class TraceWriter:
    """Writes a trace atomically: to a temporary file beside `path`, renamed over `path` by a
    clean `close()` (or a context exit without exception), deleted otherwise.

    `.gz` targets are gzip-compressed with a zero mtime and no file name, so equal traces give
    equal bytes. Values are written as given (orjson; dict key order is kept)."""

    def __init__(self, path: str, header: TraceHeader):
        self.path = path
        self.count = 0
        self._out = AtomicFile(path)
        self._raw = self._out.file
        self._f: IO[bytes] = self._raw
        if path.endswith(".gz"):
            self._f = gzip.GzipFile(filename="", mode="wb", fileobj=self._raw, mtime=0)  # type: ignore[assignment]
        self._buf: list[bytes] = []
        self._closed = False
        self._write_obj(header.to_json())

    def _write_obj(self, obj: Mapping[str, Any]) -> None:
        try:
            self._buf.append(orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE))
        except TypeError as e:
            self.abort()
            raise TraceError(f"{self.path}: cannot encode event {self.count + 1}: {e}") from None
        if len(self._buf) >= 4096:
            self._flush()

    def _flush(self) -> None:
        if self._buf:
            self._f.write(b"".join(self._buf))
            self._buf.clear()

    def write(
        self,
        action: str,
        args: Mapping[str, Any] | None = None,
        state: Mapping[str, Any] | None = None,
        t: int | float | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Append one event (see `Event`)."""
        obj: dict[str, Any] = {"action": action, "args": args if args is not None else {}}
        if state is not None:
            obj["state"] = state
        if t is not None:
            obj["t"] = t
        if meta is not None:
            obj["meta"] = meta
        self._write_obj(obj)
        self.count += 1

    def write_event(self, ev: Event) -> None:
        self.write(ev.action, ev.args, ev.state, ev.t, ev.meta)

    def write_encoded(self, lines: bytes, count: int) -> None:
        """Append `count` events already encoded as this writer would encode them (one compact
        JSON object per line, each ending in a newline): for importers that build the bytes of
        millions of events from pre-encoded pieces (importers/kineto_stream.py)."""
        self._flush()
        self._f.write(lines)
        self.count += count

    def close(self) -> None:
        """Finish the file and move it into place."""
        if self._closed:
            return
        try:
            self._flush()
            if self._f is not self._raw:
                self._f.close()
        except OSError as e:
            self.abort()
            raise TraceError(f"{self.path}: cannot write trace: {e.strerror or e}") from None
        self._out.commit()
        self._closed = True

    def abort(self) -> None:
        """Drop everything written; the target is left as it was."""
        if self._closed:
            return
        self._closed = True
        self._out.abort()

    def __enter__(self) -> "TraceWriter":
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def write_trace(path: str, header: TraceHeader, events: Iterable[Event | Mapping[str, Any]]) -> int:
    """Write a whole trace atomically; returns the number of events written."""
    with TraceWriter(path, header) as w:
        for ev in events:
            if isinstance(ev, Event):
                w.write_event(ev)
            else:
                w.write(ev["action"], ev.get("args"), ev.get("state"), ev.get("t"), ev.get("meta"))
        return w.count


def dumps_trace(header: TraceHeader, events: Iterable[Event]) -> bytes:
    """A trace as bytes (tests, API callers)."""
    parts = [orjson.dumps(header.to_json(), option=orjson.OPT_APPEND_NEWLINE)]
    parts.extend(orjson.dumps(e.to_json(), option=orjson.OPT_APPEND_NEWLINE) for e in events)
    return b"".join(parts)

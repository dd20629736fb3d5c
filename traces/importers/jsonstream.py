"""Streaming a Chrome trace's events out of a JSON document too large to load whole.

    with TraceEventStream(path) as s:
        for i, event in s:          # traceEvents[i], each decoded by orjson
            ...
        s.top                       # every other top-level key, with its value (after the loop)

The document is read a buffer at a time (gzip or plain). Only the `traceEvents` array is streamed;
the other top-level values are decoded whole (they are small in every trace we know; a large one
is still read correctly). Each event is found by trying orjson on the bytes up to the next `}`
followed by `,` or `]` (inside an event that pattern is almost never valid JSON, and orjson tells;
after a few misses the stdlib decoder finds the event's end in one linear scan), so decoding costs
one orjson call per event and memory stays at a buffer plus one event.

Why not ijson: it tokenises in C but builds each event through its own object model, about twice
orjson's time here, and it would be a new dependency. Why the same decoder as `load_json`: every
value must decode exactly as the whole-document import decodes it (floats, integers, duplicate keys:
the last wins). Anything this reader does not follow exactly as `load_json` would (a byte-order mark,
NaN, a number orjson refuses, a second `traceEvents`, a document that is not an object or an array,
invalid JSON) raises `NotStreamable`: the caller then imports the slow way, which reports such input
exactly as it always did.
"""

from __future__ import annotations

import gzip
import zlib
import hashlib
import json
import re
from typing import IO, Any, Iterator

import orjson

from gpcheck.spec.errors import TraceError
from gpcheck.traces.importers.jsonload import GZIP_MAGIC

CHUNK = 1 << 16  # small buffers keep orjson's work in the CPU caches (1.2 s vs 2.0 s at 4 MiB, 130 MB)
_WS = re.compile(rb"[ \t\r\n]*")
_SEP = re.compile(rb"[ \t\r\n]*(,)?[ \t\r\n]*")
_CAND = re.compile(rb"\}[ \t\r\n]*[,\]]")
_STRING = re.compile(rb'"(?:[^"\\\x00-\x1f]|\\.)*"')
_NEXT_OBJ = re.compile(rb"[ \t\r\n]*,[ \t\r\n]*\{")
_TRIES = 8  # orjson attempts per event before the linear decoder finds its end


class NotStreamable(Exception):
    """This document must be read whole (see the module doc); the message says why."""


class TraceEventStream:
    """Iterate (index, event) over a Chrome trace's events; `top` holds the other top-level keys
    once the iteration has finished; `sha256` and `bytes` describe the file as read."""

    def __init__(self, path: str):
        self.path = path
        try:
            self._raw: IO[bytes] = open(path, "rb")
        except OSError as e:
            raise TraceError(f"{path}: cannot read: {e.strerror or e}") from None
        self._hash = hashlib.sha256()
        self.bytes = 0
        head = self._raw.read(2)
        self._raw.seek(0)
        self._src: IO[bytes] = self._raw
        if head == GZIP_MAGIC:
            self._src = gzip.GzipFile(fileobj=_Hashing(self._raw, self))  # type: ignore[assignment]
        else:
            self._src = _Hashing(self._raw, self)  # type: ignore[assignment]
        self.top: dict[str, Any] = {}
        self.bare_array = False
        self.saw_events = False  # a traceEvents array was streamed
        self._buf = b""
        self._pos = 0
        self._eof = False

    # -- buffer --------------------------------------------------------------------------------
    def _more(self) -> bool:
        """Append the next chunk to the buffer (dropping what was consumed); False at the end."""
        if self._eof:
            return False
        try:
            chunk = self._src.read(CHUNK)
        except (OSError, EOFError, zlib.error) as e:  # zlib.error: a damaged gzip stream
            raise NotStreamable(f"unreadable input: {e}") from None
        if not chunk:
            self._eof = True
            return False
        self._buf = self._buf[self._pos:] + chunk
        self._pos = 0
        return True

    def _skip_ws(self) -> int:
        while True:
            self._pos = _WS.match(self._buf, self._pos).end()  # type: ignore[union-attr]
            if self._pos < len(self._buf) or not self._more():
                return self._pos

    def _peek(self) -> bytes:
        self._skip_ws()
        return self._buf[self._pos:self._pos + 1]

    def _value(self) -> Any:
        """Decode the JSON value at the position (after whitespace): its extent by the stdlib
        decoder (linear) on a window that grows until the value fits, its value by orjson (as
        load_json would decode it)."""
        self._skip_ws()
        if self._buf[self._pos:self._pos + 1] == b'"':
            m = _STRING.match(self._buf, self._pos)
            if m is not None:  # a key or a short string: no text decoding needed
                try:
                    v = orjson.loads(m.group())
                except orjson.JSONDecodeError:
                    raise NotStreamable("a string orjson does not decode") from None
                self._pos = m.end()
                return v
        window = 1 << 16
        while True:
            piece = self._buf[self._pos:self._pos + window]
            text = piece.decode("utf-8", errors="surrogateescape")
            try:
                _, end = json.JSONDecoder().raw_decode(text)
                cut = end >= len(text)  # a number may go on past the window
            except json.JSONDecodeError:
                cut, end = True, -1
            except RecursionError:  # nested deeper than the stdlib decoder goes: load_json says so
                raise NotStreamable("JSON nested too deeply") from None
            if cut and (len(piece) == window or self._more()):
                window *= 2
                continue
            if end < 0:
                raise NotStreamable("invalid JSON")
            nbytes = len(text[:end].encode("utf-8", errors="surrogateescape"))
            try:
                v = orjson.loads(self._buf[self._pos:self._pos + nbytes])
            except orjson.JSONDecodeError:
                raise NotStreamable("a value orjson does not decode") from None
            self._pos += nbytes
            return v

    def _event(self) -> Any:
        """The object starting at the position: orjson on the bytes up to a `}` followed by `,` or
        `]`; after _TRIES misses, the object's end from the linear decoder."""
        start = self._pos
        scan = start
        for _ in range(_TRIES):
            m = _CAND.search(self._buf, scan)
            if m is None:
                if not self._more():
                    raise NotStreamable("truncated JSON")
                scan -= start
                start = 0
                continue
            try:
                v = orjson.loads(self._buf[start:m.start() + 1])
            except orjson.JSONDecodeError:
                scan = m.start() + 1
                continue
            self._pos = m.start() + 1
            return v
        self._pos = start
        return self._value()

    def _expect(self, token: bytes) -> None:
        if self._peek() != token:
            raise NotStreamable(f"expected {token.decode()!r}")
        self._pos += 1

    # -- document ------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[tuple[int, Any]]:
        yield from self._iter(batched=False)

    def _iter(self, batched: bool) -> Iterator[tuple[int, Any]]:
        items = self._batches if batched else self._array
        first = self._peek()
        if first == b"[":
            self.bare_array = True
            self._pos += 1
            yield from items()
            self._end()
            return
        if first != b"{":
            raise NotStreamable("not a JSON object or array")
        self._pos += 1
        seen_events = False
        if self._peek() == b"}":
            self._pos += 1
            self._end()
            return
        while True:
            if self._peek() != b'"':
                raise NotStreamable("expected a key")
            k = self._value()
            self._expect(b":")
            if k == "traceEvents" and self._peek() == b"[":
                if seen_events:
                    raise NotStreamable("two traceEvents arrays (the last one counts)")
                seen_events = self.saw_events = True
                self.top.pop("traceEvents", None)
                self._pos += 1
                yield from items()
            else:
                if k == "traceEvents" and seen_events:
                    raise NotStreamable("traceEvents given twice")
                self.top[k] = self._value()
            sep = self._peek()
            self._pos += 1
            if sep == b"}":
                break
            if sep != b",":
                raise NotStreamable("expected ',' or '}'")
        self._end()

    def _array(self) -> Iterator[tuple[int, Any]]:
        for i0, batch in self._batches():
            for k, ev in enumerate(batch):
                yield i0 + k, ev

    def batches(self) -> Iterator[tuple[int, list[Any]]]:
        """Like iterating, but (index of the first, events) a buffer at a time: one orjson call
        decodes a whole buffer of events (the bytes up to the last `}` that a `,` and a `{`
        follow, bracketed: if that is not a run of whole events orjson says so, and the events
        are then decoded one at a time)."""
        for i, ev in self._iter(batched=True):
            yield i, ev

    def _batches(self) -> Iterator[tuple[int, list[Any]]]:
        i = 0
        if self._peek() == b"]":
            self._pos += 1
            return
        while True:
            self._skip_ws()
            if len(self._buf) - self._pos < CHUNK // 2 and not self._eof:
                self._more()
            batch = self._batch()
            if batch is None:
                ev = self._event() if self._peek() == b"{" else self._value()
                batch = [ev]
            yield i, batch
            i += len(batch)
            sep = self._peek()
            self._pos += 1
            if sep == b"]":
                return
            if sep != b",":
                raise NotStreamable("expected ',' or ']'")

    def _batch(self) -> list[Any] | None:
        """Whole events from the position to the last `}` in the buffer that `,` and `{` follow
        (None when there is no such run or it does not decode)."""
        buf, pos = self._buf, self._pos
        if buf[pos:pos + 1] != b"{":
            return None
        end = len(buf)
        for _ in range(3):
            k = buf.rfind(b"}", pos, end)
            while k > pos:
                m = _NEXT_OBJ.match(buf, k + 1)
                if m is not None:
                    break
                k = buf.rfind(b"}", pos, k)
            if k <= pos:
                return None
            try:
                batch = orjson.loads(b"[" + buf[pos:k + 1] + b"]")
            except orjson.JSONDecodeError:
                end = k
                continue
            self._pos = k + 1
            return batch  # type: ignore[no-any-return]
        return None

    def _end(self) -> None:
        if self._peek() != b"":
            raise NotStreamable("data after the document")
        while self._more():  # hash the rest (a gzip member's trailer)
            pass

    def close(self) -> None:
        self._raw.close()

    @property
    def sha256(self) -> str:
        while not self._eof and self._more():
            self._buf, self._pos = b"", 0
        return self._hash.hexdigest()

    def __enter__(self) -> "TraceEventStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Hashing:
    """A read-through view of the raw file that feeds the stream's SHA-256 and byte count."""

    def __init__(self, f: IO[bytes], owner: TraceEventStream):
        self.f, self.owner = f, owner

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.owner._hash.update(data)
        self.owner.bytes += len(data)
        return data

    def readable(self) -> bool:
        return True

"""Loading JSON inputs (Chrome traces, cupti records, raw recordings), gzip or plain, with
errors that name the file and the line and column where decoding failed."""

from __future__ import annotations

import codecs
import gzip
import io
import json
import zlib
from typing import IO, Any, Iterator

import orjson

from gpcheck.spec.errors import TraceError

GZIP_MAGIC = b"\x1f\x8b"


def _gunzip(path: str, data: bytes) -> bytes:
    """Decompress gzip data; a corrupt or truncated stream is an error at the line of the
    decompressed text where it broke off."""
    out: list[bytes] = []
    lines = 1
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as g:
            while chunk := g.read(1 << 20):
                out.append(chunk)
                lines += chunk.count(b"\n")
    except (OSError, EOFError, zlib.error) as e:
        raise TraceError(f"{path}:{lines}: truncated or corrupt gzip data (decompressed up to this line): "
                         f"{e}") from None
    return b"".join(out)


def read_bytes(path: str) -> bytes:
    """The file's bytes, gunzipped if it starts with the gzip magic (whatever its name)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TraceError(f"{path}: cannot read: {e.strerror or e}") from None
    if data[:2] == GZIP_MAGIC:
        data = _gunzip(path, data)
    return data


def _open_raw(path: str) -> IO[bytes]:
    try:
        raw: IO[bytes] = open(path, "rb")
    except OSError as e:
        raise TraceError(f"{path}: cannot read: {e.strerror or e}") from None
    if raw.read(2) == GZIP_MAGIC:
        raw.seek(0)
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    raw.seek(0)
    return raw


class TextLines:
    """The lines of a file as text (UTF-8, a BOM dropped, gunzipped when it starts with the gzip
    magic; LF, CRLF and CR end lines alike), read a buffer at a time so that CSV importers stream
    in bounded memory. A decoding or gzip error surfaces a buffer ahead of the line being read:
    `located_error` then rescans the file a line at a time to name the line it is on."""

    def __init__(self, path: str):
        self.path = path
        self._text = io.TextIOWrapper(_open_raw(path), encoding="utf-8-sig", newline="")

    def __iter__(self) -> Iterator[str]:
        return iter(self._text)

    def located_error(self) -> TraceError:
        """The TraceError of the first undecodable line (bad UTF-8 or corrupt gzip data)."""
        line, ended = 1, False
        decode = codecs.getincrementaldecoder("utf-8-sig")().decode
        with _open_raw(self.path) as raw:
            while True:
                try:
                    chunk = raw.readline(1 << 16)
                    text = decode(chunk, final=not chunk)
                except UnicodeDecodeError as e:
                    return TraceError(f"{self.path}:{line + ended}: not UTF-8 text: {e.reason}")
                except (OSError, EOFError, zlib.error) as e:
                    return TraceError(f"{self.path}:{line + ended}: truncated or corrupt gzip data: {e}")
                if not chunk:
                    return TraceError(f"{self.path}: cannot read: the file changed while it was read")
                for piece in io.StringIO(text, newline=""):
                    line += ended
                    ended = piece.endswith(("\n", "\r"))

    def close(self) -> None:
        self._text.close()

    def __enter__(self) -> "TextLines":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load_json(path: str) -> Any:
    """Decode a whole JSON document; a syntax error names line and column. Nesting deeper than
    orjson's limit (1024) is refused there, so nothing downstream recurses without bound.
    NaN and Infinity (Python's json writes them) are accepted."""
    data = read_bytes(path)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        err = e
    if "depth limit" not in err.msg and (b"NaN" in data or b"Infinity" in data):
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            pass
    what = "truncated JSON (unexpected end of file)" if err.pos >= len(data.rstrip()) else f"invalid JSON: {err.msg}"
    if "depth limit" in err.msg:
        what = "JSON nested too deeply (more than 1024 levels)"
    raise TraceError(f"{path}:{err.lineno}:{err.colno}: {what}") from None


def sniff(path: str, n: int = 4096) -> bytes:
    """The first bytes of the (decompressed) file, for format detection; a located TraceError
    when the gzip stream is corrupt there."""
    try:
        with open(path, "rb") as f:
            head = f.read(n)
            if head[:2] == GZIP_MAGIC:
                f.seek(0)
                with gzip.GzipFile(fileobj=f) as g:
                    try:
                        return g.read(n)
                    except (OSError, EOFError, zlib.error) as e:
                        raise TraceError(f"{path}:1: truncated or corrupt gzip data: {e}") from None
            return head
    except OSError as e:
        raise TraceError(f"{path}: cannot read: {e.strerror or e}") from None

"""Loading JSON inputs (Chrome traces, cupti records, raw recordings), gzip or plain, with
errors that name the file and the line and column where decoding failed."""

from __future__ import annotations

import gzip
import json
import zlib
from typing import Any

import orjson

from spec.errors import TraceError

GZIP_MAGIC = b"\x1f\x8b"


def read_bytes(path: str) -> bytes:
    """The file's bytes, gunzipped if it starts with the gzip magic (whatever its name)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TraceError(f"{path}: cannot read: {e.strerror or e}") from None
    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise TraceError(f"{path}: truncated or corrupt gzip data: {e}") from None
    return data


def load_json(path: str) -> Any:
    """Decode a whole JSON document; a syntax error names line and column."""
    data = read_bytes(path)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:  # orjson's message has only a char offset: ask json for line and column
        return json.loads(data)
    except UnicodeDecodeError as e:
        raise TraceError(f"{path}: not UTF-8 text: {e}") from None
    except json.JSONDecodeError as e:
        what = "truncated JSON (unexpected end of file)" if e.pos >= len(data.rstrip()) else f"invalid JSON: {e.msg}"
        raise TraceError(f"{path}:{e.lineno}:{e.colno}: {what}") from None
    except ValueError as e:
        raise TraceError(f"{path}: invalid JSON: {e}") from None


def sniff(path: str, n: int = 4096) -> bytes:
    """The first bytes of the (decompressed) file, for format detection; b'' if unreadable."""
    try:
        with open(path, "rb") as f:
            head = f.read(n)
            if head[:2] == GZIP_MAGIC:
                f.seek(0)
                with gzip.GzipFile(fileobj=f) as g:
                    return g.read(n)
            return head
    except (OSError, EOFError, zlib.error):
        return b""

"""Output files written whole or not at all: a temporary file beside the target, renamed over it.

The temporary file gets the permissions a plain `open(path, "w")` would give (0666 less the
umask), not mkstemp's private 0600, so the renamed output is readable like any other file."""

from __future__ import annotations

import os
import tempfile
from typing import IO

from spec.errors import TraceError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def temp_beside(path: str) -> tuple[IO[bytes], str]:
    """An open binary temporary file in `path`'s directory, and its name."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".gpcheck-", suffix=".tmp", dir=directory)
        os.fchmod(fd, 0o666 & ~_umask())
    except OSError as e:
        raise TraceError(f"{path}: cannot write: {e.strerror or e}") from None
    return os.fdopen(fd, "wb"), tmp


class AtomicFile:
    """A binary file that appears at `path` only when committed; aborting leaves `path` as it was."""

    def __init__(self, path: str):
        self.path = path
        self.file, self._tmp = temp_beside(path)
        self._done = False

    def commit(self) -> None:
        if self._done:
            return
        try:
            self.file.close()
            os.replace(self._tmp, self.path)
        except OSError as e:
            self.abort()
            raise TraceError(f"{self.path}: cannot write: {e.strerror or e}") from None
        self._done = True

    def abort(self) -> None:
        if self._done:
            return
        self._done = True
        try:
            self.file.close()
        finally:
            try:
                os.unlink(self._tmp)
            except OSError:
                pass


def write_atomic(path: str, data: bytes) -> None:
    """Write `data` to `path` whole or not at all."""
    out = AtomicFile(path)
    try:
        out.file.write(data)
    except OSError as e:
        out.abort()
        raise TraceError(f"{path}: cannot write: {e.strerror or e}") from None
    out.commit()

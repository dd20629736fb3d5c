"""Output files written whole or not at all: a temporary file beside the target, flushed to disk
(fsync) and renamed over it (os.replace, atomic on POSIX).

The temporary file is removed on every failure: `abort()` on an exception (including
`gpcheck.checker.core.budget.Stop` after SIGINT/SIGTERM, which unwinds through every `with`), at interpreter
exit for any file still open (atexit), and by `remove_temp_files()`, which the budget's watchdog
calls before it ends a process that did not stop by itself.

The temporary file gets the permissions a plain `open(path, "w")` would give (0666 less the
umask), not mkstemp's private 0600, so the renamed output is readable like any other file."""

from __future__ import annotations

import atexit
import errno
import os
import stat
import tempfile
from typing import IO

from gpcheck.spec.errors import TraceError

TEMP_PREFIX, TEMP_SUFFIX = ".gpcheck-", ".tmp"
_live: set[str] = set()  # temporary files created and not yet renamed or removed


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _refuse_non_regular(path: str) -> None:
    """The rename must never replace a device node, a FIFO, a socket or a directory (run as root,
    `--perfetto /dev/full` replaced the device with a regular file): OSError if `path` exists
    and is not a regular file (through symbolic links). The commands refuse such targets before
    any work (checker/cli/outputs.py `check_target`); this is the writer's own guard."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError:
        return  # a dangling link's loop or a permission problem: the rename itself reports it
    if not stat.S_ISREG(mode):
        raise OSError(errno.EEXIST, "not a regular file (a directory, a device, a FIFO or a socket): "
                                    "not replaced")


def temp_beside(path: str) -> tuple[IO[bytes], str]:
    """An open binary temporary file in `path`'s directory, and its name (registered for
    removal at exit until `forget_temp` is called). OSError-based TraceError for a target that
    exists and is not a regular file."""
    try:
        _refuse_non_regular(path)
    except OSError as e:
        raise TraceError(f"{path}: cannot write: {e.strerror or e}") from None
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX, dir=directory)
    except OSError as e:
        raise TraceError(f"{path}: cannot write: {e.strerror or e}") from None
    _live.add(tmp)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
    except OSError as e:
        os.close(fd)
        os.unlink(tmp)
        forget_temp(tmp)
        raise TraceError(f"{path}: cannot write: {e.strerror or e}") from None
    return os.fdopen(fd, "wb"), tmp


def forget_temp(tmp: str) -> None:
    _live.discard(tmp)


def remove_temp_files() -> None:
    """Remove every temporary output file this process still has (at exit, or before a forced
    exit: checker/core/budget.py)."""
    for tmp in list(_live):
        try:
            os.unlink(tmp)
        except OSError:
            pass
        _live.discard(tmp)


atexit.register(remove_temp_files)


class _Guarded:
    """The temporary file as writers see it: a write that fails (a full disk, a file-size limit:
    ENOSPC, EFBIG) aborts the output and raises TraceError naming the target, as any other
    failure to write it, instead of an OSError that ends as an internal error (issue 36)."""

    def __init__(self, owner: "AtomicFile", raw: IO[bytes]):
        self._owner = owner
        self._raw = raw

    def write(self, data: bytes) -> int:
        try:
            return self._raw.write(data)
        except OSError as e:
            self._owner.abort()
            raise TraceError(f"{self._owner.path}: cannot write: {e.strerror or e}") from None

    def flush(self) -> None:
        try:
            self._raw.flush()
        except OSError as e:
            self._owner.abort()
            raise TraceError(f"{self._owner.path}: cannot write: {e.strerror or e}") from None

    def __getattr__(self, name: str) -> object:
        return getattr(self._raw, name)


class AtomicFile:
    """A binary file that appears at `path` only when committed; aborting leaves `path` as it was."""

    def __init__(self, path: str):
        self.path = path
        self._raw, self._tmp = temp_beside(path)
        self.file: IO[bytes] = _Guarded(self, self._raw)  # type: ignore[assignment]
        self._done = False

    def commit(self) -> None:
        if self._done:
            return
        try:
            self._raw.flush()
            os.fsync(self._raw.fileno())
            self._raw.close()
            _refuse_non_regular(self.path)
            os.replace(self._tmp, self.path)
        except OSError as e:
            self.abort()
            raise TraceError(f"{self.path}: cannot write: {e.strerror or e}") from None
        except BaseException:  # a Stop (signal) between the write and the rename
            self.abort()
            raise
        forget_temp(self._tmp)
        self._done = True

    def abort(self) -> None:
        if self._done:
            return
        self._done = True
        try:
            self._raw.close()
        except OSError:
            pass
        finally:
            try:
                os.unlink(self._tmp)
            except OSError:
                pass
            forget_temp(self._tmp)


def write_atomic(path: str, data: bytes) -> None:
    """Write `data` to `path` whole or not at all."""
    out = AtomicFile(path)
    try:
        out.file.write(data)
    except OSError as e:
        out.abort()
        raise TraceError(f"{path}: cannot write: {e.strerror or e}") from None
    except BaseException:
        out.abort()
        raise
    out.commit()

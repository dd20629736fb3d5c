"""The user's cache directory for what gpcheck derives and can rebuild at any time: the
generated numba modules and their machine code (gpmodel/jit.py, gpmodel/numba_cache.py), the
kept native kernels (gpmodel/native.py) and the parse tables of the spec grammar
(spec/parser.py). Lives here, at the bottom of the layers, so that the front end can use it
without importing the engines. Nothing in it is ever required: a missing, stale, foreign or
unwritable entry only costs the time to build it again.

NOTE(cache-trust): what protects a run from its cache is two things together.
  * The directory is private: created 0700, and used only when it is owned by this user and
    neither it nor a folder above it can be written by anyone else (a folder above may be
    world-writable with the sticky bit, as /tmp is). Otherwise it is refused with one warning
    and the run has no persistent cache: a private directory made for this process alone by
    `tempfile.mkdtemp` (never a fixed name in a shared temporary folder, which another user
    could create first) and removed at exit. So only this user (or root) can put a file there.
  * Every entry is keyed and checked by the content it was built from, on load: the native
    kernels by the generated module's hash, the kernel, the format and the llvmlite/numba/CPU key,
    which the object's only exported symbol carries as well; numba's files by a digest of their
    name and bytes recorded when gpcheck wrote them (gpmodel/numba_cache.py), checked before numba
    unpickles them; the grammar tables as JSON (no pickle), keyed by the grammar's text and lark's
    version. A file copied from another model, left by another version, truncated, or planted
    without its digest fails its check and is rebuilt; nothing unverified is unpickled or run.
The digests live beside the files, so they stop accidents and foreign files, not a process of
this same user that rewrites both a file and its digest: such a process can already edit
gpcheck itself or the user's shell start-up files, so the cache adds no power to it.

Writes that fail (a full disk, a file-size limit, a read-only file system) leave no temporary
file and make the entry "not cached" (gpmodel/jit.py, native.py, numba_cache.py, spec/parser.py)."""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import stat
import sys
import tempfile
from pathlib import Path

_chosen: tuple[str, Path, bool] | None = None  # (the configured path, the directory, persistent?)
_warned: set[str] = set()


def warn_once(message: str) -> None:
    """One `gpcheck: warning: ...` line on stderr per distinct message and process."""
    if message in _warned:
        return
    _warned.add(message)
    try:
        sys.stderr.write(f"gpcheck: warning: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed stderr: the warning is only advice
        pass


def configured_dir() -> Path:
    """$GPCHECK_CACHE_DIR, else $XDG_CACHE_HOME/gpcheck/jit, else ~/.cache/gpcheck/jit."""
    env = os.environ.get("GPCHECK_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "gpcheck" / "jit"


def unsafe_reason(path: Path) -> str | None:
    """Why `path` (an existing directory) may not hold a cache this user trusts, or None: it
    must be a real directory owned by this user, writable by no one else, under folders no one
    else can rename it in (group/world-writable ones only with the sticky bit)."""
    if not hasattr(os, "geteuid"):
        return None  # no POSIX owners to check
    uid = os.geteuid()
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"cannot inspect it ({e.strerror})"
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(path)
        except OSError as e:
            return f"cannot inspect it ({e.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if st.st_uid != uid:
        return f"it is owned by user id {st.st_uid}, not by this user ({uid})"
    if st.st_mode & 0o022:
        return f"others can write it (mode {stat.S_IMODE(st.st_mode):04o}; chmod 700 it)"
    for parent in Path(os.path.realpath(path)).parents:
        try:
            pst = os.stat(parent)
        except OSError:
            continue
        if pst.st_mode & 0o022 and not pst.st_mode & stat.S_ISVTX:
            return f"others can rename it: {parent} is writable by others (mode {stat.S_IMODE(pst.st_mode):04o})"
    return None


def _private(base: Path) -> str | None:
    """Create `base` (0700) if needed; why it cannot be used, or None."""
    try:
        if not base.exists():
            base.parent.mkdir(parents=True, exist_ok=True)
            base.mkdir(mode=0o700, exist_ok=True)
    except OSError as e:
        return f"cannot create it ({e.strerror or e})"
    reason = unsafe_reason(base)
    if reason:
        return reason
    if not os.access(base, os.W_OK | os.X_OK):
        return "it is not writable"
    return None


_process: Path | None = None


def private_dir() -> Path:
    """A private directory for this process only (0700, a new unique name, never a fixed one
    another user could create first), removed at exit. Where none can be made, a random name
    that does not exist: every read of the cache then misses and every write fails quietly."""
    global _process
    if _process is None or not _process.is_dir():
        try:
            _process = Path(tempfile.mkdtemp(prefix="gpcheck-nocache-"))
            atexit.register(shutil.rmtree, _process, True)
        except OSError:  # no writable temporary folder either: a random name that nothing reads
            _process = Path(tempfile.gettempdir()) / f"gpcheck-nocache-{secrets.token_hex(16)}"
    return _process


def cache_dir() -> Path:
    """The cache directory (NOTE(cache-trust)): the configured one when it is private to this
    user, else (after one warning) a private directory for this process alone."""
    global _chosen
    base = configured_dir()
    if _chosen is not None and _chosen[0] == str(base) and (not _chosen[2] or base.is_dir()):
        return _chosen[1]
    reason = _private(base)
    if reason is None:
        _chosen = (str(base), base, True)
    else:
        warn_once(f"not using the cache directory {base}: {reason}; running without a persistent cache")
        _chosen = (str(base), private_dir(), False)
    return _chosen[1]


def is_persistent() -> bool:
    """Whether `cache_dir()` outlives this process (False: refused, a per-process directory)."""
    cache_dir()
    return bool(_chosen and _chosen[2])


def write_atomically(target: Path, data: bytes, mode: int = 0o600) -> bool:
    """Write `data` to `target` whole (a temporary file beside it, then a rename) or not at all;
    whether it was written. A failure (a full disk, a file-size limit, a read-only file system)
    removes the temporary file and is not an error: the entry is simply not cached."""
    tmp: str | None = None
    try:
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        return True
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False

"""numba's cache files of gpcheck's generated modules, checked before numba unpickles them.

numba keeps a compiled function as an index file (`.nbi`) and data files (`.nbc`), both pickles,
and unpickles the index before it looks at anything else: a file planted or damaged there runs
code or crashes the process (an `EOFError` from a truncated index). For the generated modules
(names `gpcheck_jit_*`, NOTE(cache-trust) in spec/usercache.py) `install` makes numba's
`IndexDataCacheFile`:
  * write each file whole or not at all (a full disk, a file-size limit, a read-only folder: the
    function is just not cached) and then a digest beside it, `NAME.sha256`: SHA-256 of the
    file's name and bytes;
  * read a file's bytes once, and unpickle them only when that digest matches; a file without
    one, another one's digest (a file copied under this name), or any failure to unpickle counts
    as not cached, so numba compiles again and rewrites it.
Other modules' numba caches in the same process are left exactly as numba handles them.
Imports numba: called only by gpmodel/jit.py before it executes a generated module."""

from __future__ import annotations

import hashlib
import io
import os
import pickle
from typing import Any

from gpcheck.spec.usercache import write_atomically

PREFIX = "gpcheck_jit_"  # the generated modules' names (gpmodel/jit.py _module_name)
SUFFIX = ".sha256"
_installed = False


def digest(name: str, data: bytes) -> str:
    """The digest kept beside a cache file called `name` holding `data`."""
    return hashlib.sha256(name.encode() + b"\0" + data).hexdigest()


def read_verified(path: str) -> bytes | None:
    """The bytes of a cache file when its digest file matches them, else None."""
    name = os.path.basename(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
        with open(path + SUFFIX, "rb") as f:
            kept = f.read(128).decode("ascii", "replace").strip()
    except OSError:
        return None
    return data if kept == digest(name, data) else None


def write_verified(path: str, data: bytes) -> bool:
    """Write a cache file and then its digest, each whole or not at all; whether both were."""
    from pathlib import Path

    target = Path(path)
    return (write_atomically(target, data)
            and write_atomically(target.with_name(target.name + SUFFIX), digest(target.name, data).encode()))


def install() -> None:
    """Route numba's cache files of the generated modules through the checks above (once)."""
    global _installed
    if _installed:
        return
    from numba.core import caching

    cls = caching.IndexDataCacheFile
    original = {name: getattr(cls, name) for name in ("_load_index", "_save_index", "_load_data", "_save_data")}

    def ours(self: Any) -> bool:
        return os.path.basename(self._index_path).startswith(PREFIX)

    def _load_index(self: Any) -> dict[Any, Any]:
        if not ours(self):
            return original["_load_index"](self)
        data = read_verified(self._index_path)
        if data is None:
            return {}
        try:
            stream = io.BytesIO(data)
            version = pickle.load(stream)
            if version != self._version:
                return {}
            stamp, overloads = pickle.loads(stream.read())
        except Exception:  # noqa: BLE001 - a file we wrote that does not load: compile again
            return {}
        return overloads if stamp == self._source_stamp and isinstance(overloads, dict) else {}

    def _save_index(self: Any, overloads: dict[Any, Any]) -> None:
        if not ours(self):
            return original["_save_index"](self, overloads)
        data = pickle.dumps(self._version, protocol=-1) + self._dump((self._source_stamp, overloads))
        write_verified(self._index_path, data)

    def _load_data(self: Any, name: str) -> Any:
        if not ours(self):
            return original["_load_data"](self, name)
        data = read_verified(self._data_path(name))
        if data is None:
            raise OSError(f"{name}: not a verified cache file")  # numba's load: a cache miss
        try:
            return pickle.loads(data)
        except Exception as e:  # noqa: BLE001 - as above
            raise OSError(f"{name}: {e}") from None

    def _save_data(self: Any, name: str, data: Any) -> None:
        if not ours(self):
            return original["_save_data"](self, name, data)
        write_verified(self._data_path(name), self._dump(data))

    cls._load_index = _load_index
    cls._save_index = _save_index
    cls._load_data = _load_data
    cls._save_data = _save_data
    _installed = True

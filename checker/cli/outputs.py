"""The files a command reads and the files it will write: no output may be one of its inputs,
and no two outputs of one run may be the same file.

Every subcommand with an output flag builds an `OutputPlan` from its inputs and claims each
output path (the user's, and every name derived from it) *before any work*, so that a mistake
such as `gpcheck verify mine.gpspec --itf mine.gpspec` is a usage error (exit 2) and the spec is
never touched. "The same file" means the same path, or the same file through a symbolic link
(paths are resolved) or a hard link (existing files are compared by device and inode)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from gpcheck.spec.errors import UsageError

Identity = tuple[int, int] | str


def identity(path: str | Path) -> Identity:
    """What makes two paths the same file: (device, inode) of an existing file, else the
    resolved absolute path (a file that does not exist yet is named by where it will be)."""
    try:
        st = os.stat(path)
        return (st.st_dev, st.st_ino)
    except (OSError, ValueError):
        return os.path.realpath(os.path.abspath(path))


def check_target(flag: str, path: str) -> None:
    """Refuse, before any work, an output target gpcheck cannot write whole: gpcheck writes a
    temporary file beside it and renames it over the target (traces/atomic.py), which would
    replace a device such as /dev/full, a FIFO or a socket with a regular file, and fails on a
    directory, in a directory that is missing or not writable, or with a name too long for the
    filesystem. UsageError (exit 2) naming the flag and the reason."""
    kind = non_regular_kind(path)
    if kind is not None:
        raise UsageError(f"{flag} {path}: {kind}, not a regular file; give a file name "
                         "(gpcheck writes this output whole, to a new or regular file)")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UsageError(f"{flag} {path}: no such directory {os.path.dirname(path) or parent}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: cannot write in the directory {parent} (read-only or no permission)")
    try:
        name_max = os.pathconf(parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    if len(os.fsencode(os.path.basename(path))) > name_max:
        raise UsageError(f"{flag} {path}: file name too long (at most {name_max} bytes on this filesystem)")


def non_regular_kind(path: str | Path) -> str | None:
    """What an existing `path` is when it is not a regular file (followed through symbolic
    links): "a directory", "a device", "a FIFO", "a socket"; None for a regular file or none."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    return "a socket" if stat.S_ISSOCK(mode) else "not a file"


@dataclass
class OutputPlan:
    """The inputs of one run (as `(role, path)`) and the outputs claimed so far."""

    inputs: list[tuple[str, str]] = field(default_factory=list)
    _claimed: dict[Identity, tuple[str, str]] = field(default_factory=dict)

    def read(self, role: str, path: str | Path | None) -> "OutputPlan":
        """Note an input (None is ignored: an absent optional input)."""
        if path is not None:
            self.inputs.append((role, str(path)))
        return self

    def claim(self, flag: str, path: str | Path) -> str:
        """Reserve `path` as the output of `flag`; UsageError if it is an input of this run or
        another output of it (or `-`: outputs are files, standard output carries the report).
        Returns the path."""
        path = str(path)
        if path.strip() in ("", "-"):
            raise UsageError(f"{flag} {path!r}: give a file name (gpcheck writes this output to a file; "
                             "standard output carries the report, or --json's object)")
        check_target(flag, path)
        ident = identity(path)
        real = os.path.realpath(os.path.abspath(path))
        for role, src in self.inputs:
            if identity(src) == ident or os.path.realpath(os.path.abspath(src)) == real:
                same = "is" if os.path.abspath(src) == os.path.abspath(path) else f"is the same file as"
                raise UsageError(f"{flag} {path} {same} the {role} {src}: gpcheck never writes over a file it reads")
        other = self._claimed.get(ident)
        if other is not None and other != (flag, path):
            raise UsageError(f"{flag} {path} and {other[0]} {other[1]} are the same file: one output "
                             "would replace the other")
        self._claimed[ident] = (flag, path)
        return path

    def claim_all(self, flag: str, paths: Iterable[str | Path]) -> list[str]:
        return [self.claim(flag, p) for p in paths]


def plan_outputs(args: Any, info: Any, outputs: Iterable[tuple[str, str | None]]) -> OutputPlan:
    """The plan of a command that reads a trace (`info`, gpcheck.traces.sources.TraceInfo) and a model
    (`--model SPEC`, or the bundled model the trace names), claiming `outputs` ((flag, path),
    None paths skipped)."""
    from gpcheck.spec import bundled_models, resolve_spec_path

    plan = OutputPlan().read("trace", info.path)
    if getattr(args, "model", None) is not None:
        plan.read("model", resolve_spec_path(args.model))
    elif info.model and info.model in bundled_models():
        plan.read("model", bundled_models()[info.model])
    for flag, path in outputs:
        if path:
            plan.claim(flag, path)
    return plan

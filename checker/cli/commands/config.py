"""Project configuration: defaults for the command line, read from `gpcheck.toml` or from the
`[tool.gpcheck]` table of `pyproject.toml`, in the current folder or the nearest one above it
(as pytest and ruff find theirs). A flag given on the command line wins over the file.

    [tool.gpcheck]              # in gpcheck.toml: the same tables at the top level
    const = { N = 4, CAP = 2 }  # --const N=4 --const CAP=2 for every command that takes --const

    [tool.gpcheck.verify]       # a command's options, each a long option without its "--"
    engine = "pdr"
    timeout = 120
    property = ["no_loss"]      # a list repeats the flag; --property on the command line replaces it

A key the command does not have, a table of no command, or a value of the wrong type is a usage
error naming the file and line.
`GPCHECK_NO_CONFIG=1` ignores the files."""

from __future__ import annotations

import argparse
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from gpcheck.spec.errors import UsageError

FILES = ("gpcheck.toml", "pyproject.toml")


def find(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest configuration at or above `start`: (file, its gpcheck table), or None."""
    for folder in (start, *start.parents):
        for name in FILES:
            path = folder / name
            if not path.is_file():
                continue
            try:
                doc = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as e:
                raise UsageError(f"{path}: cannot read the configuration: {e}") from None
            except tomllib.TOMLDecodeError as e:
                raise UsageError(f"{path}: not valid TOML: {e}") from None
            if name == "pyproject.toml":
                table = doc.get("tool", {}).get("gpcheck")
                if table is None:
                    continue
            else:
                table = doc
            if not isinstance(table, dict):
                raise UsageError(f"{path}: [tool.gpcheck] must be a table")
            return path, table
    return None


def _line(path: Path, key: str) -> int:
    """The line where `key` is set (for error messages); 1 when it cannot be found."""
    try:
        for i, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.match(rf"\s*\"?{re.escape(key)}\"?\s*=", text):
                return i
    except OSError:
        pass
    return 1


def _options(sub: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {s[2:]: a for a in sub._actions for s in a.option_strings if s.startswith("--")}


def _tokens(path: Path, key: str, value: Any, action: argparse.Action) -> list[str]:
    flag = f"--{key}"
    where = f"{path}:{_line(path, key)}"
    if key == "const":
        if not isinstance(value, dict) or not all(isinstance(v, (int, bool)) for v in value.values()):
            raise UsageError(f"{where}: const must be a table of integers, e.g. const = {{ N = 4 }}")
        return [t for name, v in value.items() for t in (flag, f"{name}={int(v)}")]
    if action.nargs == 0:  # a switch: true turns it on
        if not isinstance(value, bool):
            raise UsageError(f"{where}: {key} is a switch: write {key} = true or false")
        return [flag] if value else []
    values = value if isinstance(value, list) else [value]
    if isinstance(value, list) and not isinstance(action, argparse._AppendAction):
        raise UsageError(f"{where}: {key} takes one value, not a list")
    if not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in values):
        raise UsageError(f"{where}: {key} must be a string or a number")
    return [t for v in values for t in (flag, str(v))]


def defaults_argv(command: str, sub: argparse.ArgumentParser, given: list[str], cwd: Path,
                  commands: set[str]) -> list[str]:
    """The flags the configuration adds to `gpcheck COMMAND`, placed before the command line's
    own so that those win (`given`: the words after the command name; `commands`: every command's
    name, so that a table for another command is not an error)."""
    if os.environ.get("GPCHECK_NO_CONFIG"):
        return []
    found = find(cwd)
    if found is None:
        return []
    path, table = found
    options = _options(sub)
    chosen: dict[str, Any] = {}
    for key, value in table.items():
        if key == "const":
            if "const" in options:
                chosen["const"] = value
        elif not isinstance(value, dict):
            raise UsageError(f"{path}:{_line(path, key)}: {key!r}: put a command's options in its own table, "
                             f"e.g. [tool.gpcheck.verify] (only `const` applies to every command)")
        elif key not in commands:
            raise UsageError(f"{path}:{_line(path, key)}: [{key}]: not a gpcheck command "
                             f"(one of: {', '.join(sorted(commands))})")
    for key, value in table.get(command, {}).items() if isinstance(table.get(command), dict) else ():
        if key not in options:
            raise UsageError(f"{path}:{_line(path, key)}: gpcheck {command} has no option --{key}")
        chosen[key] = value
    out: list[str] = []
    typed = set(given)
    for key, value in chosen.items():
        flag = f"--{key}"
        if key != "const" and (flag in typed or any(w.startswith(flag + "=") for w in given)):
            continue  # the command line gives it: the file's value is dropped
        out += _tokens(path, key, value, options[key])
    return out


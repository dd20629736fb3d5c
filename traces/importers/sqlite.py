"""Read-only SQLite access for the database importers (nsys, rocpd), with every failure turned
into a TraceError naming the file and the table.

Why columns, not versions: the nsys exporter documents that its schema "may likely change"
between versions and creates tables lazily; rocpd adds UUID-suffixed tables behind views. So
importers ask which tables and columns exist (`PRAGMA table_info`) and select only those.
"""

from __future__ import annotations

import os
import pathlib
import sqlite3
from typing import Any, Iterator, Sequence

from gpcheck.checker.core import budget
from gpcheck.spec.errors import TraceError

MAGIC = b"SQLite format 3\x00"
PROGRESS_STEPS = 100_000  # SQLite virtual-machine steps between two looks at the budget


def _stop_requested() -> int:
    return 1 if budget.stopped() else 0


def _failed(e: Exception, where: str, hint: str = "") -> TraceError:
    """A query's failure as a TraceError; a query aborted for the budget raises budget.Stop."""
    budget.check()
    return TraceError(f"{where}: {e}{hint}")


def is_sqlite(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(16) == MAGIC
    except OSError:
        return False


def _text(raw: bytes) -> str:
    """TEXT values as str; bytes that are not UTF-8 become U+FFFD (names and labels are
    metadata: a damaged one is shown, not fatal)."""
    return raw.decode("utf-8", "replace")


class Database:
    """An SQLite file opened read-only (`file:...?mode=ro`): the input is never modified."""

    def __init__(self, path: str):
        self.path = path
        if not os.path.isfile(path):
            raise TraceError(f"{path}: no such file")
        if not is_sqlite(path):
            raise TraceError(f"{path}: byte 0: not an SQLite database (its first 16 bytes are not \"SQLite format 3\")")
        uri = pathlib.Path(path).resolve().as_uri() + "?mode=ro"
        try:
            self.conn = sqlite3.connect(uri, uri=True)
            self.conn.text_factory = _text
            # a query runs in C, where no signal handler runs: SQLite asks this every N steps,
            # and a non-zero answer aborts it, so SIGINT/SIGTERM/--timeout stop a long query
            self.conn.set_progress_handler(_stop_requested, PROGRESS_STEPS)
            self._tables = {r[0]: r[1] for r in self.conn.execute(
                "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')")}
        except (sqlite3.DatabaseError, UnicodeDecodeError) as e:
            raise _failed(e, f"{path}: table sqlite_master (the schema)", " (truncated or corrupt?)") from None

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Database":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def tables(self) -> set[str]:
        return set(self._tables)

    def kind(self, name: str) -> str | None:
        """'table' or 'view' (None if absent)."""
        return self._tables.get(name)

    def has(self, table: str) -> bool:
        return table in self._tables

    def columns(self, table: str) -> list[str]:
        """Column names of a table or view, in order."""
        try:
            return [r[1] for r in self.conn.execute(f'PRAGMA table_info("{table}")')]
        except (sqlite3.DatabaseError, UnicodeDecodeError) as e:
            raise _failed(e, f"{self.path}: table {table}") from None

    def require(self, table: str, needed: Sequence[str]) -> list[str]:
        """The table's columns; a TraceError naming the missing ones if any is absent."""
        if not self.has(table):
            raise TraceError(f"{self.path}: no table {table}")
        cols = self.columns(table)
        missing = [c for c in needed if c not in cols]
        if missing:
            raise TraceError(f"{self.path}: table {table} lacks column(s) {', '.join(missing)} "
                             f"(has: {', '.join(cols)})")
        return cols

    def rows(self, table: str, cols: Sequence[str], where: str = "") -> Iterator[tuple[Any, ...]]:
        """Rows of the given columns (rowid first), streamed; errors name the table."""
        sel = ", ".join(f'"{c}"' for c in cols)
        sql = f'SELECT rowid, {sel} FROM "{table}" {where}' if self._tables[table] == "table" else \
            f'SELECT NULL, {sel} FROM "{table}" {where}'
        try:
            cur = self.conn.execute(sql)
            while True:
                batch = cur.fetchmany(4096)
                if not batch:
                    return
                yield from batch
        except (sqlite3.DatabaseError, UnicodeDecodeError) as e:
            raise _failed(e, f"{self.path}: table {table}") from None

    def scalar_map(self, table: str, key: str, value: str) -> dict[Any, Any]:
        return {r[1]: r[2] for r in self.rows(table, [key, value])}

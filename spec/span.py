"""Source positions carried by AST and IR nodes (never part of their equality)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    file: str
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


NO_SPAN = Span("<builtin>", 0, 0, 0, 0)

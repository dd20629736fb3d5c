"""The error hierarchy and the located diagnostics that user-facing errors carry."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from gpcheck.spec.span import Span


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    severity: Severity
    span: Span | None
    message: str
    notes: tuple[tuple[Span | None, str], ...] = ()


@dataclass
class Diagnostics:
    """A collector passed explicitly through a phase; a phase gate raises if it holds errors."""

    source: dict[str, str] = field(default_factory=dict)  # file name -> text, for carets
    items: list[Diagnostic] = field(default_factory=list)

    def error(self, span: Span | None, message: str, *notes: tuple[Span | None, str]) -> None:
        self.items.append(Diagnostic(Severity.ERROR, span, message, tuple(notes)))

    def warning(self, span: Span | None, message: str) -> None:
        self.items.append(Diagnostic(Severity.WARNING, span, message))

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity is Severity.ERROR]

    def gate(self, exc: type["SpecError"]) -> None:
        if self.errors:
            raise exc(list(self.errors), dict(self.source))


class GpcheckError(Exception):
    """Root of every error gpcheck reports to a user (exit code 2 on the command line)."""


class UsageError(GpcheckError):
    """A bad flag, argument or API call."""


class SpecError(GpcheckError):
    """One or more located problems in a spec; `render()` formats them with carets."""

    def __init__(self, diagnostics: list[Diagnostic], source: dict[str, str] | None = None):
        self.diagnostics = diagnostics
        self.source = source or {}
        super().__init__(self.render())

    def render(self) -> str:
        from gpcheck.spec.diagnostics import render_text

        return render_text(self.diagnostics, self.source)

    @property
    def first(self) -> Diagnostic:
        return self.diagnostics[0]


class SpecSyntaxError(SpecError):
    pass


class SpecTypeError(SpecError):
    pass


class ConstantError(SpecError):
    """A `--const` override that is unknown, malformed, or makes a type invalid."""


class TraceError(GpcheckError):
    """A malformed trace or import input; the message names the file and line or table."""


class OutputError(GpcheckError):
    """An output the command cannot write: standard output full or closed, an output file's
    target that is not a regular file (a directory, a device, a FIFO) or cannot be created."""

"""Helpers the generated successor code calls, and the modelling-error exception.

Generated code raises `Fault(site, value)`; `CompiledModel` turns it into a `ModelError`
that names the action instance, the message and the source position of the faulty site."""

from __future__ import annotations

from dataclasses import dataclass

from gpcheck.spec.errors import GpcheckError
from gpcheck.spec.span import Span


class Fault(Exception):
    """Raised by generated code: `site` indexes the compiled model's fault table."""

    def __init__(self, site: int, value: int):
        super().__init__(site, value)
        self.site = site
        self.value = value


@dataclass(frozen=True)
class FaultSite:
    instance: int | None  # action instance id, None inside a property
    kind: str  # "range" | "index" | "division"
    message: str  # with {value} where the offending value goes
    span: Span


class ModelError(GpcheckError):
    """A modelling error (out-of-range write, bad index, division by zero) in one step."""

    def __init__(self, site: FaultSite, value: int, state: tuple[int, ...] | None = None):
        self.site = site
        self.value = value
        self.state = state
        super().__init__(f"{site.span}: {site.message.format(value=value)}")

    @property
    def message(self) -> str:
        return self.site.message.format(value=self.value)


def ix(i: int, lo: int, hi: int, site: int) -> int:
    """Position of index `i` in `lo..hi`, or a fault."""
    if lo <= i <= hi:
        return i - lo
    raise Fault(site, i)


def div(a: int, b: int, site: int) -> int:
    if b == 0:
        raise Fault(site, a)
    return a // b


def mod(a: int, b: int, site: int) -> int:
    if b == 0:
        raise Fault(site, a)
    return a % b


def fail(site: int, value: int) -> None:
    raise Fault(site, value)

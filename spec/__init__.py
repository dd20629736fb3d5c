"""The gpspec language: grammar, parser, type checker and the typed IR every engine reads."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpcheck.spec.errors import (ConstantError, GpcheckError, SpecError, SpecSyntaxError, SpecTypeError,
                                     TraceError, UsageError)
    from gpcheck.spec.load import bundled_models, load_source, load_spec, parse_const_overrides, resolve_spec_path

__all__ = [
    "ConstantError", "GpcheckError", "SpecError", "SpecSyntaxError", "SpecTypeError", "TraceError",
    "UsageError", "bundled_models", "load_source", "load_spec", "parse_const_overrides", "resolve_spec_path",
]

# Imported on first use (PEP 562): `gpcheck.spec.errors` is needed by every command and by the
# pytest plugin, the parser (lark, the grammar) only by those that read a spec.
_LOAD = {"bundled_models", "load_source", "load_spec", "parse_const_overrides", "resolve_spec_path"}


def __getattr__(name: str) -> Any:
    """A name of `__all__`, imported from gpcheck.spec.errors or gpcheck.spec.load on first use."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module("gpcheck.spec.load" if name in _LOAD else "gpcheck.spec.errors")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

"""The gpspec language: grammar, parser, type checker and the typed IR every engine reads."""

from gpcheck.spec.errors import ConstantError, GpcheckError, SpecError, SpecSyntaxError, SpecTypeError, TraceError, UsageError
from gpcheck.spec.load import bundled_models, load_source, load_spec, parse_const_overrides, resolve_spec_path

__all__ = [
    "ConstantError", "GpcheckError", "SpecError", "SpecSyntaxError", "SpecTypeError", "TraceError",
    "UsageError", "bundled_models", "load_source", "load_spec", "parse_const_overrides", "resolve_spec_path",
]

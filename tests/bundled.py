"""The bundled models, each loaded once per test process.

Test modules parametrize over every bundled model when they are imported, and each xdist worker
imports every test module: test_fast_explicit.py, test_compiled_options.py and
test_library_with_plugin.py loaded the 21 models 105 times per worker, about 6 s of each
worker's 22 s of collection. `ir.Model` is immutable (frozen dataclasses), so one instance can
serve every test that reads it."""

from __future__ import annotations

from functools import lru_cache

from gpcheck.spec import ir, load_spec


@lru_cache(maxsize=None)
def bundled_model(name: str) -> ir.Model:
    """`load_spec(name)` at the default constants, once per process."""
    return load_spec(name)

"""Hostile inputs for every parser and importer (issue 19): the input kinds put together. The
seeds and mutators are in fuzz_specs.py, fuzz_traces.py and fuzz_imports.py, what they share
(`Case`, `is_located`, the value, byte and gzip mutators) in fuzz_mutate.py.

A `Case` is some files and a `gpcheck` command line over them. The generators here are plain
functions of a `random.Random`, so the long run (tests/quality/fuzz_run.py, seeded) and the CI
slice (tests/quality/test_fuzz_slice.py, hypothesis `st.randoms()`) share them; specs also get a
hypothesis strategy that derives random sentences from the gpspec grammar itself
(`grammar_specs`).

Input kinds: `spec` (gpspec text), `trace` (gpcheck JSON Lines, plain and gzip), `itf`, and one
kind per import format (`nsys`, `rocpd`, `kineto`, `chrome`, `rocprof`, `cupti`, `record`).
Mutations: by token and byte, truncation, deep nesting, huge numbers and sizes, CR/CRLF line
endings (specs); by field, type, nesting, line and compression (traces and JSON inputs); by
cell, column and row (CSV); by value type, table and page corruption (SQLite).
"""

from __future__ import annotations

import random
from typing import Iterator

from fuzz_imports import import_case
from fuzz_mutate import Case, is_located
from fuzz_specs import grammar_specs, spec_case, spec_seeds
from fuzz_traces import itf_case, itf_seeds, trace_case, trace_seeds

KINDS = ("spec", "trace", "itf", "nsys", "rocpd", "kineto", "chrome", "rocprof", "cupti", "record")

__all__ = ["KINDS", "Case", "Generator", "grammar_specs", "is_located"]


class Generator:
    """Seeds loaded once; `case(kind, rng)` one hostile input of that kind."""

    def __init__(self) -> None:
        self.specs = spec_seeds()
        self.traces = trace_seeds()
        self._itf: dict[str, tuple[bytes, str]] | None = None

    @property
    def itfs(self) -> dict[str, tuple[bytes, str]]:
        if self._itf is None:
            self._itf = itf_seeds()
        return self._itf

    def case(self, kind: str, rng: random.Random, fast: bool = False) -> Case:
        """One input of `kind`; `fast` keeps to commands that take milliseconds (the CI slice)."""
        if kind == "spec":
            return spec_case(rng, self.specs, fast)
        if kind == "trace":
            return trace_case(rng, self.traces)
        if kind == "itf":
            return itf_case(rng, self.itfs)
        return import_case(rng, kind)

    def cases(self, kind: str, n: int, seed: int) -> Iterator[Case]:
        rng = random.Random(f"{kind}-{seed}")
        for _ in range(n):
            yield self.case(kind, rng)

"""The CI slice of the issue-19 fuzzers (tests/quality/fuzzcases.py): hostile inputs of every
kind through `gpcheck`, in process. No exception may escape `main`, none may be reported as an
internal error, every exit 2 must name a location, and a command that exits 0 must have written
its outputs. The long run with time and memory limits is tests/quality/fuzz_run.py."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpcheck.checker.cli.command import main
from fuzzcases import KINDS, Generator, grammar_specs, is_located
from gpcheck.spec import SpecError, load_source

SLICE = settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def gen() -> Generator:
    g = Generator()
    if not g.specs or not g.traces:
        pytest.skip("seed specs or corpus traces missing")
    return g


def run_case(case, root, capsys):  # type: ignore[no-untyped-def]
    names = set(case.files) | set(case.outputs) | {"o.json", "o.itf.json", "o.jsonl", "o.jsonl.gz"}
    for name, data in case.files.items():
        (root / name).write_bytes(data)
    argv = [str(root / a) if a in names else a for a in case.argv]
    rc = main(argv)
    err = capsys.readouterr().err
    why = f"{case.kind} {case.mutation}: {case.argv} -> {rc}\n{err[-2000:]}"
    assert "internal error" not in err, why
    assert rc in (0, 1, 2, 3), why
    if rc == 2:
        assert is_located(err, case.input), why
    if rc == 0:
        assert all((root / o).exists() for o in case.outputs), why


@pytest.mark.parametrize("kind", KINDS)
@settings(SLICE, max_examples=8)  # the default run; 20 per kind in the slow test below
@given(rng=st.randoms(use_true_random=False))
def test_hostile_inputs_give_located_errors(kind, rng, gen, tmp_path_factory, capsys):
    run_case(gen.case(kind, rng, fast=True), tmp_path_factory.mktemp(kind), capsys)


@pytest.mark.slow  # 20 cases per kind (9 s of CPU); fast: test_hostile_inputs_give_located_errors (the same generator, 8)
@pytest.mark.parametrize("kind", KINDS)
@SLICE
@given(rng=st.randoms(use_true_random=False))
def test_hostile_inputs_give_located_errors_20_cases(kind, rng, gen, tmp_path_factory, capsys):
    run_case(gen.case(kind, rng, fast=True), tmp_path_factory.mktemp(kind), capsys)


@SLICE
@given(text=grammar_specs())
def test_grammar_sentences_parse_and_errors_are_located(text, tmp_path_factory, capsys):
    """Every sentence of the grammar parses: what fails is the type checker, with a location."""
    root = tmp_path_factory.mktemp("g")
    (root / "g.gpspec").write_text(text, newline="")
    rc = main(["check", str(root / "g.gpspec")])
    err = capsys.readouterr().err
    assert rc in (0, 2), err
    assert "syntax" not in err and "unexpected" not in err, err
    if rc == 2:
        assert is_located(err, "g.gpspec"), err


@SLICE
@given(text=grammar_specs(), cut=st.integers(0, 10_000), junk=st.sampled_from(["@", ")", "9" * 30, "{", "\xff"]))
def test_positions_do_not_depend_on_line_endings(text, cut, junk):
    lf = text.replace("\r\n", "\n").replace("\r", "\n")
    pos = cut % (len(lf) + 1)
    bad = lf[:pos] + junk + lf[pos:]
    where = set()
    for eol in ("\n", "\r\n", "\r"):
        try:
            load_source(bad.replace("\n", eol), "e.gpspec")
            where.add(None)
        except SpecError as e:
            d = e.first
            where.add((d.span.line, d.span.column, d.message) if d.span else (None, None, d.message))
    assert len(where) == 1, where

"""The for-all tests' re-check of a printed invariant: each lemma `verify_for_all` printed,
added to the model as an `invariant`, must hold in small instances by the explicit engine (the
issue's acceptance: a printed invariant is something a user can add to the model and re-check)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from gpcheck.checker import Verdict, verify
from gpcheck.spec import load_source


def recheck_lemmas(src: str, invariant: str, sizes: list[dict[str, int]]) -> None:
    """Assert that every lemma of `invariant` (one per line, `and ` between them) holds in the
    model `src` at each of `sizes` (constants)."""
    lemmas = [line.removeprefix("and ").strip() for line in invariant.split("\n")]
    extra = "".join(f"\ninvariant mined_{i}: {text}" for i, text in enumerate(lemmas))
    for consts in sizes:
        report = verify(load_source(src + extra, "mined.gpspec", consts))
        for i in range(len(lemmas)):
            assert report.result(f"mined_{i}").verdict is Verdict.PROVED, (consts, lemmas[i])


def write_spec(tmp_path: Path, text: str, name: str = "m.gpspec") -> Path:
    """`text` as a spec file in the test's folder (`verify_for_all` and the CLI take a path)."""
    path = tmp_path / name
    path.write_text(text)
    return path


def assert_never_proved_beyond(path: Path, prop: str, holds: list[dict[str, int]], fails: dict[str, int],
                               lower: dict[str, int]) -> object:
    """`prop` holds at the sizes `holds` and is violated at `fails` (the explicit engine), and
    `--for-all` over the constants of `lower` never calls it proved. Returns the for-all report."""
    from gpcheck.checker.api.for_all import verify_for_all

    for consts in holds:
        assert verify(path, consts=consts).result(prop).verdict is Verdict.PROVED, consts
    assert verify(path, consts=fails).result(prop).verdict is Verdict.VIOLATED, fails
    rep = verify_for_all(path, list(lower), lower, timeout=120)
    assert rep.result(prop).verdict is not Verdict.PROVED, rep.result(prop)
    return rep


def read_back_inductive(src: str, names: list[str], hyps: list[str], goals: list[str],
                        check_encoder: Callable[[object], None] | None = None) -> tuple[bool, bool]:
    """(initiation, consecution) of the invariants `goals` of `src` (their conjunction) relative
    to its invariants `hyps`, with the constants `names` symbolic (each at least 1), as the
    for-all encoder reads the text: printed lemmas added to a model are read back this way.
    In its own Z3 context with its names reset, as a for-all run is (NOTE(fresh-context)): in the
    shared context, after the rest of the suite, Z3's nonlinear search once took another path
    and ran for more than 14 minutes. `check_encoder` sees the encoder first (its counter groups)."""
    import z3

    from gpcheck.checker.engines.param.encode import reset_names
    from gpcheck.checker.engines.param.extract import extract
    from gpcheck.checker.engines.param.induct import Consecution
    from gpcheck.checker.engines.param.forall_run import _encoder
    from gpcheck.checker.engines.smt.session import Deadline, fresh_context

    with fresh_context():
        reset_names()
        pm = extract(lambda c: load_source(src, "lemmas.gpspec", c), names, {}, {n: 1 for n in names})
        enc = _encoder(pm, [*hyps, *goals])
        if check_encoder is not None:
            check_encoder(enc)
        invs = {p.name: p.expr for p in enc.model.invariants}
        s, t = enc.state("s."), enc.state("t.")
        sol = z3.Solver()
        sol.add(*enc.facts, enc.init(s), z3.Not(z3.And(*[enc.holds(invs[g], s) for g in goals])))
        cons = Consecution(enc, s, t, [enc.holds(invs[h], s) for h in hyps],
                           z3.Not(z3.And(*[enc.holds(invs[g], t) for g in goals])))
        return sol.check() == z3.unsat, cons.check(range(len(hyps)), Deadline(None)).verdict == "unsat"

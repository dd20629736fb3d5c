"""The for-all tests' re-check of a printed invariant: each lemma `verify_for_all` printed,
added to the model as an `invariant`, must hold in small instances by the explicit engine (the
issue's acceptance: a printed invariant is something a user can add to the model and re-check)."""

from __future__ import annotations

from pathlib import Path

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

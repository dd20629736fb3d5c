"""The Z3 queries of a run, for the determinism tests (NOTE(term-names) in
checker/engines/param/encode.py): every `Solver.check` as the digest of the solver's SMT text (its
declarations, names included, and assertions in order), the assumptions and the answer.

Two runs of one command that ask the same queries in the same order decide and print the same;
a name or an order that follows a memory address (`id()`) shows up here as a differing digest
even where the printed lemmas happen to agree.

As a script, `python tests/querylog.py OUT ARGS...` runs `gpcheck ARGS...` with the queries
recorded and writes their digests to the file OUT, one a line."""

from __future__ import annotations

import hashlib
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import z3


@contextmanager
def recording() -> Iterator[list[str]]:
    """A block in which every `z3.Solver.check` appends one line (its digest) to the list."""
    log: list[str] = []
    check = z3.Solver.check

    def logged(self: z3.Solver, *assumptions: z3.ExprRef) -> z3.CheckSatResult:
        text = self.sexpr() + "\n;; assuming " + " ".join(a.sexpr() for a in assumptions)
        r = check(self, *assumptions)
        log.append(f"{hashlib.md5(text.encode()).hexdigest()} {r}")
        return r

    z3.Solver.check = logged  # type: ignore[method-assign]
    try:
        yield log
    finally:
        z3.Solver.check = check  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    from gpcheck.checker.cli.command import main as cli

    out, args = Path(argv[0]), argv[1:]
    with recording() as log:
        try:
            code = cli(args)
        finally:
            out.write_text("".join(line + "\n" for line in log))
    return code


if __name__ == "__main__":
    root = str(Path(__file__).resolve().parents[1])
    if root not in sys.path:
        sys.path.insert(0, root)
    sys.exit(main(sys.argv[1:]))

"""`gpcheck verify-claims` (formerly `gpcheck claims`, still accepted): the claims of the
comparison tables of the project's seed analysis, "GPreempt (NVIDIA) vs AMD CWSR" (seed 002,
2026-01-29, part 4: table 4.1 the mechanisms, table 4.2 typical scenarios), checked row by row
against the model library: which model and property decide each claim, the outcome, and the
live evidence (counterexample lengths, proofs, and the best/worst latencies computed from the
rt_latency model with the seeds' constants)."""

from __future__ import annotations

import argparse

from gpcheck.checker.api import ENGINES
from gpcheck.checker.claims import Outcome, check_claims
from gpcheck.checker import budget
from gpcheck.checker.commands.flags import add_timeout_flag
from gpcheck.checker.commands.common import write_out
from gpcheck.checker.report import to_json_bytes


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("verify-claims", aliases=["claims"], parents=[common],
                       help="verify the GPreempt-vs-CWSR comparison table's claims against the models "
                            "(formerly `claims`)",
                       description="Verify, row by row against the bundled model library, the claims of the "
                                   "comparison tables in the project's seed analysis \"GPreempt (NVIDIA) vs AMD "
                                   "CWSR\" (seed 002, 2026-01-29, part 4: table 4.1 compares the mechanisms, "
                                   "table 4.2 typical scenarios). Each row gets an outcome (confirmed, refuted, "
                                   "confirmed only under stated parameters or in the best case, not decided by a "
                                   "model) and the live evidence: the model properties that decide it, recomputed "
                                   "on every run. Exit 1 when some row's evidence no longer supports its outcome. "
                                   "`gpcheck claims` is the old name of this command.")
    p.add_argument("--engine", choices=ENGINES, default="explicit",
                   help="engine for the evidence checks (default %(default)s)")
    add_timeout_flag(p, "the checks")
    p.add_argument("--no-progress", action="store_true", help="no progress display on stderr")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    budget.limit_time(args.timeout)
    rows = check_claims(args.engine)
    changed = [r for r in rows if r.outcome is Outcome.CHANGED]
    if args.json:
        counts: dict[str, int] = {}
        for r in rows:
            counts[r.outcome.value] = counts.get(r.outcome.value, 0) + 1
        write_out(to_json_bytes({"rows": [r.to_json() for r in rows], "summary": counts, "ok": not changed}))
        return 1 if changed else 0
    out = ["seed 002 (\"GPreempt (NVIDIA) vs AMD CWSR\", 2026-01-29) part 4, tables 4.1 and 4.2, "
           "checked against the model library", ""]
    for r in rows:
        out.append(f"{r.ident:<7} {r.side:<8} {r.topic}: \"{r.claim}\"")
        out.append(f"        -> {r.outcome.value.upper()}" + (f": {r.why}" if r.why else ""))
        for e in r.evidence:
            out.append(f"           {'ok ' if e.ok else 'BAD'} {e.text()}")
    counts2: dict[str, int] = {}
    for r in rows:
        counts2[r.outcome.value] = counts2.get(r.outcome.value, 0) + 1
    out.append("")
    out.append("summary: " + ", ".join(f"{n} {k}" for k, n in counts2.items()))
    if changed:
        out.append("evidence changed for: " + ", ".join(f"{r.ident} {r.side}" for r in changed))
    write_out("\n".join(out) + "\n")
    return 1 if changed else 0

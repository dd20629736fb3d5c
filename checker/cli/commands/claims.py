"""`gpcheck verify-claims` (formerly `gpcheck claims`, still accepted): the claims of the
comparison tables of the project's seed analysis, "GPreempt (NVIDIA) vs AMD CWSR" (seed 002,
2026-01-29, part 4: table 4.1 the mechanisms, table 4.2 typical scenarios), checked row by row
against the model library: which model and property decide each claim, the outcome, and the
live evidence (counterexample lengths, proofs, and the best/worst latencies computed from the
rt_latency model with the seeds' constants)."""

from __future__ import annotations

import argparse

from gpcheck.checker.api.model_api import ENGINES
from gpcheck.checker.regression.claims import RULE, Outcome, check_claims
from gpcheck.checker.core import budget
from gpcheck.checker.cli.commands.flags import add_timeout_flag
from gpcheck.checker.cli.commands.common import write_out
from gpcheck.checker.report.render import to_json_bytes


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("verify-claims", aliases=["claims"], parents=[common],
                       help="verify the GPreempt-vs-CWSR comparison table's claims against the models "
                            "(formerly `claims`)",
                       description="Verify, row by row against the bundled model library, the claims of the "
                                   "comparison tables in the project's seed analysis \"GPreempt (NVIDIA) vs AMD "
                                   "CWSR\" (seed 002, 2026-01-29, part 4: table 4.1 compares the mechanisms, "
                                   "table 4.2 typical scenarios). Each row gets an outcome (confirmed, refuted, "
                                   "confirmed only under stated parameters or in the best case, not decided by a "
                                   "model), derived by one stated rule from the row's checks: model properties at stated "
                                   "constants and numbers the models compute, recomputed on every run, and code "
                                   "readings with the file and line they rest on. Exit 1 when the rule derives another "
                                   "outcome than a row's text argues, or a verdict the text quotes changed. "
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
        write_out(to_json_bytes({"rule": RULE, "rows": [r.to_json() for r in rows], "summary": counts, "ok": not changed}))
        return 1 if changed else 0
    out = ["seed 002 (\"GPreempt (NVIDIA) vs AMD CWSR\", 2026-01-29) part 4, tables 4.1 and 4.2, "
           "checked against the model library", f"outcome rule: {RULE}", ""]
    for r in rows:
        out.append(f"{r.ident:<7} {r.side:<8} {r.topic}: \"{r.claim}\"")
        out.append(f"        -> {r.outcome.value.upper()}" + (f": {r.why}" if r.why else ""))
        for e in r.evidence:
            mark = ("ok " if e.ok else "BAD") if e.role == "detail" else ("agrees   " if e.ok else "disagrees")
            out.append(f"           {mark} {e.role}: {e.text()}")
        for m in r.measures:
            out.append(f"           {m.role}: {m.text()}")
        for c in r.code:
            out.append(f"           {c.text()}")
        if r.evidence:  # NOTE(assumption-use): what the row's live checks rest on
            rests = "; ".join(f"{a} ({', '.join(checks)})" for a, checks in r.assumptions.items())
            out.append(f"           assumptions: {rests or 'none'}")
    counts2: dict[str, int] = {}
    for r in rows:
        counts2[r.outcome.value] = counts2.get(r.outcome.value, 0) + 1
    out.append("")
    out.append("summary: " + ", ".join(f"{n} {k}" for k, n in counts2.items()))
    if changed:
        out.append("evidence changed for: " + ", ".join(f"{r.ident} {r.side}" for r in changed))
    write_out("\n".join(out) + "\n")
    return 1 if changed else 0

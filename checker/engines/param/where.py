"""Where a for-all run's `unknown` comes from, in the user's terms: the reasons the encoder and the
error exclusion give name an action, a property or a variable ("action poll can fail ...",
"held: a counted array read other than at a row"); this adds the file, line and column of that
declaration and, for the usual causes, a hint of what to write so that the proof can go on."""

from __future__ import annotations

import re

from gpcheck.spec import ir

HINT_CAN_FAIL = ("hint: the lemmas do not rule out a modelling error of this step (a write out of "
                 "its range, an index out of bounds, a division by zero) for some size: state what "
                 "keeps it in range as an `invariant` (for a ghost counter, relate it to the state it "
                 "counts, e.g. `invariant c_is_count: c == count k in 0..N-1: st[k] == Done`) and run again")
HINT_FRAGMENT = ("hint: the language reference's section \"The fragment --for-all proves\" says what "
                 "the proof handles; run the explicit engine at a size (`--const NAME=K`) meanwhile")


def _spans(model: ir.Model) -> dict[str, tuple[str, object]]:
    out: dict[str, tuple[str, object]] = {}
    for a in model.actions:
        out.setdefault(f"action {a.name}", ("action", a.span))
    for kind, props in (("invariant", model.invariants), ("transition", model.transitions),
                        ("liveness", model.liveness), ("latency", model.latencies)):
        for p in props:
            out.setdefault(f"{kind} {p.name}", (kind, p.span))
    for v in model.vars:
        out.setdefault(v.name, ("var", v.span))
    return out


def _where(span: object) -> str | None:
    line = getattr(span, "line", 0)
    if not line:
        return None
    return f"{getattr(span, 'file', '?')}:{line}:{getattr(span, 'column', 1)}"


def locate(model: ir.Model, reason: str) -> str:
    """`reason` with the declaration it names located, and a hint for the usual causes; unchanged
    when it names nothing of the model or is located already."""
    if not reason or re.search(r"\(at [^()]*:\d+:\d+\)", reason):
        return reason
    spans = _spans(model)
    found = None
    for m in re.finditer(r"\b(action|invariant|transition|liveness|latency) ([A-Za-z_][A-Za-z0-9_]*)", reason):
        if f"{m.group(1)} {m.group(2)}" in spans:
            found = (m.end(), spans[f"{m.group(1)} {m.group(2)}"][1])
            break
    if found is None:
        for m in re.finditer(r"(?:^|: )([A-Za-z_][A-Za-z0-9_]*)(?=[: ])", reason):
            if m.group(1) in spans and spans[m.group(1)][0] == "var":
                found = (m.end(), spans[m.group(1)][1])
                break
    out = reason
    if found is not None:
        where = _where(found[1])
        if where is not None:
            out = f"{reason[:found[0]]} (at {where}){reason[found[0]:]}"
    if "can fail in a state where" in reason:
        out += f"; {HINT_CAN_FAIL}"
    elif "outside the parameterised fragment" in reason:
        out += f"; {HINT_FRAGMENT}"
    return out

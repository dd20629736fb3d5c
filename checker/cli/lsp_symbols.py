"""What `gpcheck lsp` knows about the names of a spec, for hover and go-to-definition: every
constant, variable, type, enum member, action and property of the checked model, with where it is
declared and a short description (its declaration, type or value, and its doc comment).

Built from the typed IR of the buffer (`spec.load_source`), so hover shows what the engines see:
a constant's value, a variable's resolved type. Positions are 1-based lines and code-point
columns, as gpcheck's spans; checker/cli/lsp.py converts them to the client's encoding."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpcheck.spec import ir

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Symbol:
    name: str
    kind: str  # const, var, enum, struct, member, symmetric, action, invariant, ...
    text: str  # Markdown shown on hover
    line: int  # where the name is declared (1-based); 0 when not in this file
    column: int  # 1-based code-point column of the name


def _find_name(lines: list[str], line: int, name: str) -> tuple[int, int]:
    """(line, column) of `name` on source line `line`, or on the first line below it that has it."""
    for i in range(max(line, 1) - 1, min(len(lines), max(line, 1) + 4)):
        m = re.search(rf"\b{re.escape(name)}\b", lines[i])
        if m:
            return i + 1, m.start() + 1
    return line, 1


def _decl(lines: list[str], pattern: str) -> tuple[int, int]:
    """(line, column) of the first line matching `pattern`'s group 1 (a declaration), or (0, 0)."""
    rx = re.compile(pattern)
    for i, text in enumerate(lines):
        m = rx.search(text)
        if m:
            return i + 1, m.start(1) + 1
    return 0, 0


def symbols(model: ir.Model, source: str, file: str) -> dict[str, Symbol]:
    """Every declared name of `model` (checked from `source`, named `file`)."""
    lines = source.splitlines()
    out: dict[str, Symbol] = {}

    def here(span: object) -> bool:
        return getattr(span, "file", None) == file and getattr(span, "line", 0) > 0

    def add(name: str, kind: str, text: str, span: object | None = None, pattern: str | None = None) -> None:
        if span is not None and here(span):
            line, col = _find_name(lines, span.line, name)  # type: ignore[attr-defined]
        elif pattern is not None:
            line, col = _decl(lines, pattern)
        else:
            line, col = 0, 0
        out.setdefault(name, Symbol(name, kind, text, line, col))

    def doc(d: str) -> str:
        return f"\n\n{d}" if d else ""

    for c in model.constants:
        add(c.name, "const", f"```gpspec\nconst {c.name} = {c.value}\n```\n(default {c.default}){doc(c.doc)}", c.span)
    for e in model.enums:
        add(e.name, "enum", f"```gpspec\nenum {e.name} {{ {', '.join(e.members)} }}\n```", None,
            rf"\benum\s+({re.escape(e.name)})\b")
        for mem in e.members:
            add(mem, "member", f"`{mem}`: a member of enum `{e.name}`", None,
                rf"\benum\s+{re.escape(e.name)}\b.*?\b({re.escape(mem)})\b")
    for s in model.structs:
        fields = ", ".join(f"{f}: {t}" for f, t in s.fields)
        add(s.name, "struct", f"```gpspec\nstruct {s.name} {{ {fields} }}\n```", None,
            rf"\bstruct\s+({re.escape(s.name)})\b")
    for t in model.symmetric:
        add(str(t.symmetric), "symmetric", f"```gpspec\nsymmetric {t.symmetric} = {t.lo}..{t.hi}\n```", None,
            rf"\bsymmetric\s+({re.escape(str(t.symmetric))})\b")
    for v in model.vars:
        add(v.name, "var", f"```gpspec\nvar {v.name}: {v.type}\n```{doc(v.doc)}", v.span)
    for a in model.actions:
        params = ", ".join(f"{p.name}: {p.type}" for p in a.params)
        flags = " ".join(w for w, on in (("internal", a.internal), ("fair", a.fair)) if on)
        head = f"{flags + ' ' if flags else ''}action {a.name}" + (f"({params})" if params else "")
        add(a.name, "action", f"```gpspec\n{head}\n```", a.span)
    props: list[tuple[str, str, object]] = [(p.name, "invariant", p.span) for p in model.invariants]
    props += [(p.name, "transition", p.span) for p in model.transitions]
    props += [(p.name, "liveness", p.span) for p in model.liveness]
    props += [(p.name, "latency", p.span) for p in model.latencies]
    props += [(p.name, "constraint", p.span) for p in model.constraints]
    for name, kind, span in props:
        body = lines[span.line - 1].strip() if here(span) and span.line <= len(lines) else f"{kind} {name}"  # type: ignore[attr-defined]
        add(name, kind, f"```gpspec\n{body}\n```", span)
    return out


_QUALIFIED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\[\]]*\])?(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def qualified_at(line_text: str, column: int) -> str | None:
    """An instance's name under `column` (NOTE(instances)): `gpu0.rptr` or `gpu[i].rptr` (as
    `gpu.rptr`) when the cursor is on its last part, else None."""
    for m in _QUALIFIED.finditer(line_text):
        last = m.group(0).rsplit(".", 1)[1]
        if m.end() - len(last) + 1 <= column <= m.end() + 1:
            return re.sub(r"\[[^\[\]]*\]", "", m.group(0))
    return None


def word_at(line_text: str, column: int) -> str | None:
    """The name under 1-based code-point `column` of a line (or just before it), if any."""
    for m in _WORD.finditer(line_text):
        if m.start() + 1 <= column <= m.end() + 1:
            return m.group(0)
    return None

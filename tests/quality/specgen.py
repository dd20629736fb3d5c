"""Hypothesis strategies for small random gpspec models that type-check by construction.

The models mix every feature the two backends must agree on: bounded ints, bools, an enum,
arrays indexed by ints and by the enum, `any` initial values, action parameters used as
indexes, `let`, `if`/`else`, `for`, folds, `if-then-else`, division and modulo (with zero
divisors), dynamic indexes that can fall outside their domain and writes that can leave their
range (modelling errors), requires before and after them, invariants, a transition property,
and optionally fair actions with a liveness property, `terminal`, `allow deadlock` and a
`constraint`. Properties never fail to
evaluate (no division, only static or binder indexes), so a modelling error is always a step's.
`tiny=True` drops the arrays, for exhaustive state enumeration with Z3."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

ENUM = ("A", "B", "C")


@dataclass(frozen=True)
class _Scope:
    tiny: bool
    safe: bool  # property context: no modelling errors possible
    ints: tuple[str, ...]  # int-valued names in scope (vars, params, lets, binders)
    enums: tuple[str, ...]
    bools: tuple[str, ...]
    primed: bool = False  # transition property: primed variables allowed


def _int(draw: st.DrawFn, sc: _Scope, depth: int = 0) -> str:
    leaves = list(sc.ints) + ["0", "1", "2", "3", "N"]
    if not sc.tiny:
        leaves += ["a[0]", "a[2]"]
    if sc.primed:
        leaves += ["x'", "y'"]
    kind = draw(st.integers(0, 9 if depth < 2 else 0))
    if kind <= 3:
        return draw(st.sampled_from(leaves))
    if kind == 4:
        op = draw(st.sampled_from(["+", "-", "*"] + ([] if sc.safe else ["/", "%"])))
        rhs = draw(st.sampled_from(["1", "2", "3"])) if op == "*" else _int(draw, sc, depth + 1)
        return f"({_int(draw, sc, depth + 1)} {op} {rhs})"
    if kind == 5:
        return f"(if {_bool(draw, sc, depth + 1)} then {_int(draw, sc, depth + 1)} else {_int(draw, sc, depth + 1)})"
    if kind == 6 and not sc.tiny:
        if sc.safe:
            return f"a[{draw(st.sampled_from(['0', '1', '2']))}]"
        return f"a[{_int(draw, sc, depth + 1)}]"
    if kind == 7 and not sc.tiny:
        fold = draw(st.sampled_from(["count {k} in 0..2: a[{k}] > {v}", "sum {k} in 0..2: a[{k}]",
                                     "max {k} in 0..2: a[{k}]", "min {k} in 0..2: a[{k}] + {v}"]))
        return "(" + fold.format(k=f"k{depth}", v=draw(st.sampled_from(["0", "1", "x"]))) + ")"
    if kind == 8:
        return f"(count k{depth} in 0..N: k{depth} < {_int(draw, sc, depth + 1)})"
    return f"(-{draw(st.sampled_from(leaves))} + 3)"


def _enum(draw: st.DrawFn, sc: _Scope, depth: int = 0) -> str:
    leaves = list(sc.enums) + list(ENUM) + (["e'"] if sc.primed else [])
    if depth < 2 and draw(st.integers(0, 4)) == 0:
        return f"(if {_bool(draw, sc, depth + 1)} then {_enum(draw, sc, depth + 1)} else {_enum(draw, sc, depth + 1)})"
    return draw(st.sampled_from(leaves))


def _bool(draw: st.DrawFn, sc: _Scope, depth: int = 0) -> str:
    kind = draw(st.integers(0, 9 if depth < 2 else 2))
    if kind == 0:
        op = draw(st.sampled_from(["<", "<=", "==", "!=", ">", ">="]))
        return f"{_int(draw, sc, depth + 1)} {op} {_int(draw, sc, depth + 1)}"
    if kind == 1:
        leaves = list(sc.bools) + ["true", "false"] + (["b'"] if sc.primed else [])
        return draw(st.sampled_from(leaves))
    if kind == 2:
        return f"{_enum(draw, sc, depth + 1)} {draw(st.sampled_from(['==', '!=']))} {_enum(draw, sc, depth + 1)}"
    if kind == 3:
        return f"not ({_bool(draw, sc, depth + 1)})"
    if kind in (4, 5):
        op = draw(st.sampled_from(["and", "or", "implies"]))
        return f"({_bool(draw, sc, depth + 1)} {op} {_bool(draw, sc, depth + 1)})"
    if kind == 6 and not sc.tiny:
        q = draw(st.sampled_from(["all", "any"]))
        k = f"k{depth}"
        return f"({q} {k} in 0..2: a[{k}] {draw(st.sampled_from(['<=', '>', '!=']))} {_int(draw, sc, depth + 1)})"
    if kind == 7 and not sc.tiny:
        idx = _enum(draw, sc, depth + 1)
        return f"f[{idx}]"
    if kind == 8:
        return f"(if {_bool(draw, sc, depth + 1)} then {_bool(draw, sc, depth + 1)} else {_bool(draw, sc, depth + 1)})"
    return f"(any k{depth} in 0..N: k{depth} == {_int(draw, sc, depth + 1)})"


def _stmts(draw: st.DrawFn, sc: _Scope, n: int, depth: int, lets: list[int]) -> list[str]:
    out: list[str] = []
    for _ in range(n):
        kind = draw(st.integers(0, 9 if depth < 1 else 6))
        if kind in (0, 1):
            out.append(f"require {_bool(draw, sc)}")
        elif kind == 2:
            out.append(f"{draw(st.sampled_from(['x', 'y']))} = {_int(draw, sc)}")
        elif kind == 3:
            out.append(f"b = {_bool(draw, sc)}")
        elif kind == 4:
            out.append(f"e = {_enum(draw, sc)}")
        elif kind == 5 and not sc.tiny:
            out.append(f"a[{_int(draw, sc)}] = {_int(draw, sc)}")
        elif kind == 6 and not sc.tiny:
            out.append(f"f[{_enum(draw, sc)}] = {_bool(draw, sc)}")
        elif kind == 7:
            name = f"t{len(lets)}"
            lets.append(0)
            out.append(f"let {name} = {_int(draw, sc)}")
            sc = _Scope(sc.tiny, sc.safe, sc.ints + (name,), sc.enums, sc.bools)
        elif kind == 8:
            th = _stmts(draw, sc, draw(st.integers(1, 2)), depth + 1, lets)
            el = _stmts(draw, sc, draw(st.integers(0, 2)), depth + 1, lets)
            text = f"if {_bool(draw, sc)} {{ " + "; ".join(th) + " }"
            if el:
                text += " else { " + "; ".join(el) + " }"
            out.append(text)
        elif kind == 9 and not sc.tiny:
            inner = _Scope(sc.tiny, sc.safe, sc.ints + ("j",), sc.enums, sc.bools)
            out.append(f"for j in 0..1 {{ a[j + {_int(draw, sc)}] = {_int(draw, inner)} }}")
        else:
            out.append(f"x = {_int(draw, sc)}")
    return out


@st.composite
def spec_text(draw: st.DrawFn, tiny: bool = False) -> str:
    """A small well-typed gpspec model (see the module docstring)."""
    lines = ["model rnd", f"const N = {draw(st.integers(1, 3))}", "enum E { A, B, C }",
             f"var x: 0..3 = {draw(st.sampled_from(['0', '1', 'any']))}",
             f"var y: 0..N = {draw(st.sampled_from(['0', 'N']))}",
             f"var b: bool = {draw(st.sampled_from(['false', 'true', 'any']))}",
             f"var e: E = {draw(st.sampled_from(['A', 'C']))}"]
    if not tiny:
        lines += [f"var a: [0..2] -> 0..3 = {draw(st.sampled_from(['0', '[0, 1, 2]', '[3, 0, 1]']))}",
                  f"var f: [E] -> bool = {draw(st.sampled_from(['false', '[true, false, true]']))}"]
    base = _Scope(tiny, False, ("x", "y"), ("e",), ("b",))
    for i in range(draw(st.integers(1, 3))):
        param = draw(st.sampled_from(["", "(p: 0..2)", "(q: E)", "(c: bool)"]))
        sc = base
        if param == "(p: 0..2)":
            sc = _Scope(tiny, False, sc.ints + ("p",), sc.enums, sc.bools)
        elif param == "(q: E)":
            sc = _Scope(tiny, False, sc.ints, sc.enums + ("q",), sc.bools)
        elif param == "(c: bool)":
            sc = _Scope(tiny, False, sc.ints, sc.enums, sc.bools + ("c",))
        body = _stmts(draw, sc, draw(st.integers(1, 4)), 0, [])
        lines.append(f"action act{i}{param} {{\n    " + "\n    ".join(body) + "\n}")
    safe = _Scope(tiny, True, ("x", "y"), ("e",), ("b",))
    for i in range(draw(st.integers(1, 2))):
        lines.append(f"invariant inv{i}: {_bool(draw, safe)}")
    if draw(st.booleans()):
        primed = _Scope(tiny, True, ("x", "y"), ("e",), ("b",), primed=True)
        lines.append(f"transition tr: {_bool(draw, primed)}")
    if draw(st.booleans()):
        n_actions = sum(1 for line in lines if line.startswith("action "))
        fair = draw(st.lists(st.integers(0, n_actions - 1), unique=True))
        for i in sorted(fair):
            lines.append(f"fair action act{i}")
        form = draw(st.integers(0, 2))
        if form == 0:
            lines.append(f"liveness live: eventually {_bool(draw, safe)}")
        elif form == 1:
            lines.append(f"liveness live: always eventually {_bool(draw, safe)}")
        else:
            lines.append(f"liveness live: {_bool(draw, safe)} leads_to {_bool(draw, safe)}")
    ending = draw(st.integers(0, 3))
    if ending == 1:
        lines.append(f"terminal: {_bool(draw, safe)}")
    elif ending == 2:
        lines.append("allow deadlock")
    if draw(st.integers(0, 4)) == 0:
        lines.append(f"constraint c: {_bool(draw, safe)}")
    return "\n".join(lines) + "\n"

"""Hypothesis strategy for random gpspec models that type-check by construction, covering the
whole language for differential testing against the reference semantics (tests/reference/).

Beyond tests/quality/specgen.py: structs (one with an array field), arrays of structs, nested
arrays, arrays indexed by an enum or by bool, whole arrays and structs assigned and compared at
once, negative ranges, constants at their edges (0, 1, negative, a derived constant, ranges
`1..Z` and `0..K` that are empty), folds over empty and large ranges (nested within the type
checker's MAX_UNROLL), `/` and `%` with negative operands and zero divisors, writes and indexes
that can leave their range, `else if` chains, invariants / transition properties / terminal
predicates / constraints that can fail to evaluate, `terminal` (one or two predicates), `allow
deadlock`, `constraint` (one or two), internal and parameterised actions (several parameters,
enum and bool parameters), fair actions with several liveness properties, and several
properties of each kind in one model.

`Features` turns constructs off (for a CI slice that must avoid a known, listed engine bug, or
for shrinking); the state space stays small (at most `MAX_PRODUCT` combinations of the declared
types) so that the reference can enumerate it."""

from __future__ import annotations

from dataclasses import dataclass, replace

from hypothesis import strategies as st

from gpcheck.spec.limits import MAX_UNROLL

MAX_PRODUCT = 4096  # product of the variables' type sizes

# Types: ("int", lo, hi) | ("bool",) | ("enum", name) | ("arr", index type, elem type) | ("struct", name)
ENUMS = {"E": ("A", "B", "C"), "U": ("Only",)}
STRUCTS = {"S": (("lo", ("int", -2, 1)), ("on", ("bool",))), "P": (("v", ("int", 0, 2)), ("k", ("enum", "E"))),
           "Q": (("arr", ("arr", ("bool",), ("int", 0, 1))), ("n", ("int", 0, 1)))}


@dataclass(frozen=True)
class Features:
    """Which constructs the generator may use (all by default)."""

    fallible_properties: bool = True  # properties, terminal and constraints that may fail to evaluate
    liveness: bool = True
    constraint: bool = True
    transitions: bool = True
    large_folds: bool = True


@dataclass(frozen=True)
class _Scope:
    vars: tuple[tuple[str, tuple], ...]  # state variables with their types
    locals: tuple[tuple[str, tuple], ...]  # parameters, lets, binders
    consts: dict
    safe: bool  # no modelling error possible (static or binder indexes, no division)
    primed: bool = False  # transition property: may read the next state
    unroll: int = 1  # iterations of the enclosing `for` loops and folds (at most MAX_UNROLL)

    def with_local(self, name: str, t: tuple) -> "_Scope":
        return replace(self, locals=self.locals + ((name, t),))

    def with_binder(self, name: str, t: tuple, size: int) -> "_Scope":
        """Inside a fold or `for` loop over `size` values bound to `name`."""
        return replace(self, locals=self.locals + ((name, t),), unroll=self.unroll * max(size, 1))

    def fits(self, size: int) -> bool:
        """Whether one more loop or fold over `size` values stays within the type checker's
        MAX_UNROLL (spec/limits.py): a spec past it is not well-formed."""
        return self.unroll * max(size, 1) <= MAX_UNROLL


def _size(t: tuple, consts: dict) -> int:
    if t[0] == "int":
        return max(0, _bound(t[2], consts) - _bound(t[1], consts) + 1)
    if t[0] == "bool":
        return 2
    if t[0] == "enum":
        return len(ENUMS[t[1]])
    if t[0] == "struct":
        out = 1
        for _, ft in STRUCTS[t[1]]:
            out *= _size(ft, consts)
        return out
    return _size(t[2], consts) ** _size(t[1], consts)


def _bound(b: int | str, consts: dict) -> int:
    return consts[b] if isinstance(b, str) else b


def _type_text(t: tuple) -> str:
    if t[0] == "int":
        return f"{t[1]}..{t[2]}"
    if t[0] == "bool":
        return "bool"
    if t[0] in ("enum", "struct"):
        return t[1]
    return f"[{_type_text(t[1])}] -> {_type_text(t[2])}"


def _has(t: tuple, kind: str) -> bool:
    """Whether a scalar of `kind` (int, bool, enum:NAME) is reachable inside type `t`."""
    if t[0] == "arr":
        return _has(t[2], kind)
    if t[0] == "struct":
        return any(_has(ft, kind) for _, ft in STRUCTS[t[1]])
    return _kind(t) == kind


def _kind(t: tuple) -> str:
    return f"enum:{t[1]}" if t[0] == "enum" else t[0]


# --------------------------------------------------------------------------- expressions
def _lit(draw: st.DrawFn, kind: str) -> str:
    if kind == "int":
        return draw(st.sampled_from(["0", "1", "2", "3", "-1", "-2", "N", "Z", "M"]))
    if kind == "bool":
        return draw(st.sampled_from(["true", "false"]))
    return draw(st.sampled_from(ENUMS[kind[5:]]))


def _expr(draw: st.DrawFn, sc: _Scope, kind: str, depth: int = 0) -> str:
    """An expression of scalar `kind`: int, bool or enum:NAME."""
    if depth >= 3 or draw(st.integers(0, 9)) < 3:
        return _leaf(draw, sc, kind, depth)
    if kind == "int":
        return _int_op(draw, sc, depth)
    if kind == "bool":
        return _bool_op(draw, sc, depth)
    return f"(if {_expr(draw, sc, 'bool', depth + 1)} then {_expr(draw, sc, kind, depth + 1)} else {_expr(draw, sc, kind, depth + 1)})"


def _leaf(draw: st.DrawFn, sc: _Scope, kind: str, depth: int) -> str:
    locals_ = [n for n, t in sc.locals if _kind(t) == kind]
    vars_ = [(n, t) for n, t in sc.vars if _has(t, kind)]
    choice = draw(st.integers(0, 3))
    if choice == 0 or (not locals_ and not vars_):
        return _lit(draw, kind)
    if choice == 1 and locals_:
        return draw(st.sampled_from(locals_))
    if not vars_:
        return _lit(draw, kind)
    name, t = draw(st.sampled_from(vars_))
    base = name + ("'" if sc.primed and draw(st.booleans()) else "")
    return _read(draw, sc, base, t, kind, depth)


def _read(draw: st.DrawFn, sc: _Scope, base: str, t: tuple, kind: str, depth: int) -> str:
    """A read of a scalar of `kind` inside `base` of type `t` (indexes and fields as needed)."""
    if t[0] == "arr":
        return _read(draw, sc, f"{base}[{_index(draw, sc, t[1], depth)}]", t[2], kind, depth)
    if t[0] == "struct":
        fields = [f for f, ft in STRUCTS[t[1]] if _has(ft, kind)]
        f = draw(st.sampled_from(fields))
        return _read(draw, sc, f"{base}.{f}", dict(STRUCTS[t[1]])[f], kind, depth)
    return base


def _index(draw: st.DrawFn, sc: _Scope, t: tuple, depth: int) -> str:
    if t[0] != "int":
        return _expr(draw, sc, _kind(t), depth + 1)
    lo, hi = _bound(t[1], sc.consts), _bound(t[2], sc.consts)
    binders = [n for n, bt in sc.locals if bt == ("int", lo, hi)]
    if sc.safe or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from([str(v) if v >= 0 else f"({v})" for v in range(lo, hi + 1)] + binders))
    return _expr(draw, sc, "int", depth + 1)


def _int_op(draw: st.DrawFn, sc: _Scope, depth: int) -> str:
    kind = draw(st.integers(0, 7))
    sub = lambda: _expr(draw, sc, "int", depth + 1)  # noqa: E731
    if kind <= 1:
        return f"({sub()} {draw(st.sampled_from(['+', '-', '*']))} {sub()})"
    if kind == 2:
        if sc.safe:
            return f"({sub()} {draw(st.sampled_from(['/', '%']))} {draw(st.sampled_from(['2', '3', '(-2)', '(-3)']))})"
        return f"({sub()} {draw(st.sampled_from(['/', '%']))} {sub()})"
    if kind == 3:
        return f"(-{sub()})"
    if kind == 4:
        return f"(if {_expr(draw, sc, 'bool', depth + 1)} then {sub()} else {sub()})"
    k = f"k{depth}"
    fold = draw(st.sampled_from(["sum", "count", "min", "max"]))
    dom = _fold_domain(draw, sc, nonempty=fold in ("min", "max"))
    inner = sc.with_binder(k, ("int", *dom), dom[1] - dom[0] + 1)
    body = _expr(draw, inner, "bool" if fold == "count" else "int", depth + 1)
    return f"({fold} {k} in {dom[0]}..{dom[1]}: {body})"


def _fold_domain(draw: st.DrawFn, sc: _Scope, nonempty: bool) -> tuple[int, int]:
    doms = [(0, 2), (-2, 1), (0, sc.consts["N"]), (-1, sc.consts["M"] + 3)]
    if not nonempty:
        doms += [(1, sc.consts["Z"]), (3, 2), (0, sc.consts["K"])]
    if draw(st.integers(0, 5)) == 0 and sc.consts.get("_large"):
        doms = [(-30, 70)]
    doms = [d for d in doms if sc.fits(d[1] - d[0] + 1)] or [(0, 0)]
    return draw(st.sampled_from(doms))


def _bool_op(draw: st.DrawFn, sc: _Scope, depth: int) -> str:
    kind = draw(st.integers(0, 9))
    b = lambda: _expr(draw, sc, "bool", depth + 1)  # noqa: E731
    if kind == 8:
        return f"(({b()}) {draw(st.sampled_from(['==', '!=']))} ({b()}))"
    if kind == 9:
        pair = _compound_pair(draw, sc, depth)
        if pair is not None:
            return f"({pair[0]} {draw(st.sampled_from(['==', '!=']))} {pair[1]})"
        return b()
    if kind <= 1:
        return f"{_expr(draw, sc, 'int', depth + 1)} {draw(st.sampled_from(['<', '<=', '==', '!=', '>', '>=']))} {_expr(draw, sc, 'int', depth + 1)}"
    if kind == 2:
        return f"({b()} {draw(st.sampled_from(['and', 'or', 'implies']))} {b()})"
    if kind == 3:
        return f"not {b()}"
    if kind == 4:
        return f"{_expr(draw, sc, 'enum:E', depth + 1)} {draw(st.sampled_from(['==', '!=']))} {_expr(draw, sc, 'enum:E', depth + 1)}"
    if kind == 5:
        return f"(if {b()} then {b()} else {b()})"
    k = f"k{depth}"
    q = draw(st.sampled_from(["all", "any"]))
    dom = draw(st.sampled_from(["E", "bool", "range"]))
    if dom == "range" or not sc.fits(3):
        lo, hi = _fold_domain(draw, sc, nonempty=False)
        return f"({q} {k} in {lo}..{hi}: {_expr(draw, sc.with_binder(k, ('int', lo, hi), hi - lo + 1), 'bool', depth + 1)})"
    t = ("enum", "E") if dom == "E" else ("bool",)
    return f"({q} {k} in {dom}: {_expr(draw, sc.with_binder(k, t, _size(t, {})), 'bool', depth + 1)})"


# --------------------------------------------------------------------------- statements
def _target(draw: st.DrawFn, sc: _Scope) -> tuple[str, tuple]:
    name, t = draw(st.sampled_from(sc.vars))
    text = name
    while t[0] in ("arr", "struct"):
        if t[0] == "arr":
            text += f"[{_index(draw, sc, t[1], 1)}]"
            t = t[2]
        else:
            f, ft = draw(st.sampled_from(STRUCTS[t[1]]))
            text += f".{f}"
            t = ft
    return text, t


def _compound_pair(draw: st.DrawFn, sc: _Scope, depth: int) -> tuple[str, str] | None:
    """Two places holding a whole array or struct of the same type (`s` and `o`, `r[i]` and
    `r[j]`, `h[i]` and `q.arr`, ...), for a whole-value assignment or comparison; None if the
    model has no such pair."""
    places: list[tuple[str, tuple]] = []
    for name, t in sc.vars:
        base = name + ("'" if sc.primed and draw(st.booleans()) else "")
        if t[0] == "struct" or (t[0] == "arr" and t[2][0] in ("int", "bool", "enum")):
            places.append((base, t))
        if t[0] == "arr" and t[2][0] in ("struct", "arr"):
            places.append((f"{base}[{_index(draw, sc, t[1], depth)}]", t[2]))
        if t == ("struct", "Q"):
            places.append((f"{base}.arr", dict(STRUCTS["Q"])["arr"]))
    pairs = [(p, q) for p, pt in places for q, qt in places if pt == qt]
    return draw(st.sampled_from(pairs)) if pairs else None


def _value_for(draw: st.DrawFn, sc: _Scope, target: str, t: tuple) -> str:
    if t[0] != "int" or draw(st.integers(0, 2)) == 0:
        return _expr(draw, sc, _kind(t), 1)
    return draw(st.sampled_from([f"{target} + 1", f"{target} - 1", f"({target} + 1) % 3", f"{_bound(t[1], sc.consts)}"]))


def _stmts(draw: st.DrawFn, sc: _Scope, n: int, depth: int) -> list[str]:
    out: list[str] = []
    for _ in range(n):
        kind = draw(st.integers(0, 8 if depth < 2 else 4))
        if kind <= 1:
            out.append(f"require {_expr(draw, sc, 'bool')}")
        elif kind <= 4:
            pair = _compound_pair(draw, sc, depth) if kind == 4 else None
            if pair is not None and "'" not in pair[0]:  # a whole array or struct at once
                out.append(f"{pair[0]} = {pair[1]}")
                continue
            target, t = _target(draw, sc)
            out.append(f"{target} = {_value_for(draw, sc, target, t)}")
        elif kind == 5:
            name = f"t{depth}_{len(out)}"
            out.append(f"let {name} = {_expr(draw, sc, 'int')}")
            sc = sc.with_local(name, ("int", None, None))
        elif kind == 6:
            then = _stmts(draw, sc, draw(st.integers(1, 2)), depth + 1)
            els = _stmts(draw, sc, draw(st.integers(0, 2)), depth + 1)
            text = f"if {_expr(draw, sc, 'bool')} {{ " + "\n".join(then) + " }"
            if els and draw(st.integers(0, 2)) == 0:  # an `else if` chain
                text += f" else if {_expr(draw, sc, 'bool')} {{ " + "\n".join(els) + " }"
                els = _stmts(draw, sc, draw(st.integers(0, 1)), depth + 1)
            out.append(text + (" else { " + "\n".join(els) + " }" if els else ""))
        else:
            lo, hi = _fold_domain(draw, replace(sc, consts={**sc.consts, "_large": False}), nonempty=False)
            j = f"j{depth}"
            body = _stmts(draw, sc.with_binder(j, ("int", lo, hi), hi - lo + 1), draw(st.integers(1, 2)), depth + 1)
            out.append(f"for {j} in {lo}..{hi} {{ " + "\n".join(body) + " }")
    return out


# --------------------------------------------------------------------------- models
_VARS = [
    ("x", ("int", -2, 2), ["0", "-2", "any"]),
    ("y", ("int", 0, "N"), ["0", "N"]),
    ("b", ("bool",), ["false", "true", "any"]),
    ("e", ("enum", "E"), ["A", "C", "any"]),
    ("u", ("enum", "U"), ["Only"]),
    ("a", ("arr", ("int", 0, 2), ("int", 0, 3)), ["0", "[0, 1, 2]", "[3, 0, 1]"]),
    ("w", ("arr", ("int", 0, "N"), ("int", -1, 1)), ["0", "-1"]),
    ("f", ("arr", ("enum", "E"), ("bool",)), ["false", "[true, false, true]", "any"]),
    ("g", ("arr", ("bool",), ("int", 0, 2)), ["0", "[2, 1]", "any"]),
    ("s", ("struct", "S"), ["{ lo: -1, on: false }", "{ lo: 1, on: true }", "any"]),
    ("r", ("arr", ("int", 0, 1), ("struct", "P")), ["{ v: 0, k: A }", "[{ v: 2, k: B }, { v: 0, k: C }]"]),
    ("h", ("arr", ("int", 0, 1), ("arr", ("bool",), ("int", 0, 1))), ["0", "[[1, 0], [0, 1]]"]),
    ("z", ("int", "M", 0), ["M", "0"]),
    ("o", ("struct", "S"), ["{ lo: 0, on: true }", "any"]),
    ("d", ("arr", ("int", 0, 2), ("int", 0, 3)), ["1", "[3, 2, 1]"]),
    ("sq", ("struct", "Q"), ["{ arr: 0, n: 1 }", "{ arr: [1, 0], n: 0 }"]),
]

_PARAMS = ["", "(p: 0..2)", "(q: E)", "(c: bool)", "(n: -1..1)", "(p: 0..1, c: bool)", "(q: E, n: M..0)"]  # an empty parameter domain is a type error


def _param_locals(text: str, consts: dict) -> tuple[tuple[str, tuple], ...]:
    out = []
    for part in text.strip("()").split(","):
        if not part.strip():
            continue
        name, typ = (x.strip() for x in part.split(":"))
        if typ == "E":
            out.append((name, ("enum", "E")))
        elif typ == "bool":
            out.append((name, ("bool",)))
        else:
            lo, hi = (_bound(int(v) if v.lstrip("-").isdigit() else v, consts) for v in typ.split(".."))
            out.append((name, ("int", lo, hi)))
    return tuple(out)


def _resolved(t: tuple, consts: dict) -> tuple:
    if t[0] == "int":
        return ("int", _bound(t[1], consts), _bound(t[2], consts))
    if t[0] == "arr":
        return ("arr", _resolved(t[1], consts), _resolved(t[2], consts))
    return t


@st.composite
def rich_spec(draw: st.DrawFn, features: Features = Features()) -> str:
    """A well-typed gpspec model with a small state space (see the module docstring)."""
    consts = {"N": draw(st.sampled_from([0, 1, 2])), "Z": 0, "M": draw(st.sampled_from([-1, -2, 0]))}
    consts["K"] = consts["N"] * 2 + consts["Z"] - 1  # derived: -1 (an empty `0..K`), 1 or 3
    lines = ["model rich", f"const N = {consts['N']}", "const Z = 0", f"const M = {consts['M']}",
             "const K = N * 2 + Z - 1", "enum E { A, B, C }", "enum U { Only }",
             "struct S { lo: -2..1, on: bool }", "struct P { v: 0..2, k: E }",
             "struct Q { arr: [bool] -> 0..1, n: 0..1 }"]
    chosen = draw(st.lists(st.sampled_from(range(len(_VARS))), min_size=1, max_size=5, unique=True))
    vars_: list[tuple[str, tuple]] = []
    product = 1
    for i in sorted(chosen):
        name, t, inits = _VARS[i]
        init = draw(st.sampled_from(inits))
        if product * _size(t, consts) > MAX_PRODUCT:
            continue
        product *= _size(t, consts)
        vars_.append((name, _resolved(t, consts)))
        lines.append(f"var {name}: {_type_text(t)} = {init}")
    consts_scope = {**consts, "_large": features.large_folds}
    base = _Scope(tuple(vars_), (), consts_scope, safe=False)
    n_actions = draw(st.integers(1, 4))
    fair_names = []
    for i in range(n_actions):
        params = draw(st.sampled_from(_PARAMS))
        sc = replace(base, locals=_param_locals(params, consts), safe=draw(st.booleans()))
        body = _stmts(draw, sc, draw(st.integers(1, 4)), 0)
        prefix = draw(st.sampled_from(["", "", "internal ", "fair ", "fair internal "]))
        if "fair" in prefix:
            fair_names.append(f"act{i}")
        lines.append(f"{prefix}action act{i}{params} {{\n    " + "\n    ".join(body) + "\n}")
    if draw(st.booleans()):
        extra = [f"act{i}" for i in range(n_actions) if f"act{i}" not in fair_names and draw(st.booleans())]
        if extra:
            lines.append("fair action " + ", ".join(extra))
    prop_scope = replace(base, safe=not (features.fallible_properties and draw(st.integers(0, 3)) == 0))
    for i in range(draw(st.integers(1, 3))):
        lines.append(f"invariant inv{i}: {_expr(draw, prop_scope, 'bool')}")
    if features.transitions:
        for i in range(draw(st.integers(0, 2))):
            lines.append(f"transition tr{i}: {_expr(draw, replace(prop_scope, primed=True), 'bool')}")
    constrained = features.constraint and draw(st.integers(0, 4)) == 0
    if features.liveness and not constrained:  # LANGUAGE.md leaves liveness under a constraint open
        live_scope = prop_scope
        for i in range(draw(st.integers(0, 2))):
            form = draw(st.integers(0, 2))
            q = _expr(draw, live_scope, "bool")
            if form == 0:
                lines.append(f"liveness live{i}: eventually {q}")
            elif form == 1:
                lines.append(f"liveness live{i}: always eventually {q}")
            else:
                lines.append(f"liveness live{i}: {_expr(draw, live_scope, 'bool')} leads_to {q}")
    ending = draw(st.integers(0, 3))
    if ending == 1:
        for _ in range(draw(st.integers(1, 2))):  # several terminal predicates: any of them
            lines.append(f"terminal: {_expr(draw, prop_scope, 'bool')}")
    elif ending == 2:
        lines.append("allow deadlock")
    if constrained:
        for i in range(draw(st.integers(1, 2))):  # several constraints: all of them
            lines.append(f"constraint c{i}: {_expr(draw, prop_scope, 'bool')}")
    return "\n".join(lines) + "\n"

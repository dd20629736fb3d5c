"""The small expression language of event mappings (docs/event-mapping.md): conditions,
arguments, observed values and constants computed from a recorded event or a trace header.

Why not gpspec expressions: a mapping reads JSON values (strings such as kernel names, nested
objects such as `meta` or the header's `source.params`), which gpspec has no type for. The text is
parsed with Python's `ast` module in `eval` mode and interpreted here over a fixed set of node
kinds; nothing the user wrote is ever executed (no `eval`). Every error carries the column of the
offending node, so the mapping loader can say `file:line:col`."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

_DIGITS = re.compile(r"(-?\d+)(?!.*\d)")


class ExprError(Exception):
    """A bad expression (`col` is 0-based within the expression text) or a failed evaluation."""

    def __init__(self, message: str, col: int = 0):
        super().__init__(message)
        self.message = message
        self.col = col


_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}
_CMPS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
FUNCTIONS = ("index", "first_seen", "count", "counted", "int", "len", "has", "min", "max")


@dataclass(frozen=True)
class Expr:
    """A parsed mapping expression; `text` is the source, `tree` the checked `ast` node."""

    text: str
    tree: ast.expr

    def eval(self, env: Mapping[str, Any], state: "EvalState | None" = None) -> Any:
        """The value in `env` (names: `args`, `meta`, `t`, `action`, `header`, the rule's `let`s,
        a step's loop variable). A name or field the event lacks is None; arithmetic or an order
        comparison on None is an ExprError (a missing field is reported, never guessed)."""
        return _Eval(env, state or EvalState()).run(self.tree)

    def names(self) -> set[str]:
        """The free names the expression reads (for the loader's checks)."""
        return {n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name)} - {"True", "False", "None"}


class EvalState:
    """What persists between evaluations over one trace: `first_seen`'s table of values in the
    order they were first passed to it (so `first_seen(meta.pid)` numbers processes 0, 1, ... in
    the order the mapping meets them), and `count`'s occurrences per value (`counted` reads them)."""

    def __init__(self) -> None:
        self.seen: dict[Any, int] = {}
        self.counts: dict[Any, int] = {}  # `count`: times each value was passed so far


def parse_expr(text: str) -> Expr:
    """Parse and check `text`; ExprError with a column on a syntax error or a construct the
    language does not have."""
    if not isinstance(text, str):
        raise ExprError(f"expected an expression string, got {type(text).__name__}")
    try:
        tree = ast.parse(text.strip() and text, mode="eval").body
    except SyntaxError as e:
        raise ExprError(f"syntax error: {e.msg}", max((e.offset or 1) - 1, 0)) from None
    _check(tree)
    return Expr(text, tree)


def _check(node: ast.AST) -> None:
    ok = (ast.Constant, ast.Name, ast.Attribute, ast.Subscript, ast.BinOp, ast.UnaryOp, ast.BoolOp,
          ast.Compare, ast.IfExp, ast.Call, ast.Load, ast.Tuple, ast.List)
    ops = tuple(_BINOPS) + tuple(_CMPS) + (ast.And, ast.Or, ast.Not, ast.USub)
    for n in ast.walk(node):
        if isinstance(n, (ast.operator, ast.cmpop, ast.boolop, ast.unaryop)):
            if not isinstance(n, ops):
                raise ExprError(f"operator {type(n).__name__} is not part of the mapping language", _col(node))
            continue
        if not isinstance(n, ok):
            raise ExprError(f"{type(n).__name__} is not part of the mapping language "
                            f"(fields, numbers, strings, + - * // %, comparisons, and/or/not, "
                            f"x if c else y, {', '.join(FUNCTIONS)})", _col(n))
        if isinstance(n, ast.Constant) and not isinstance(n.value, (int, str, bool, type(None))):
            raise ExprError(f"constant {n.value!r}: only integers, strings, true/false", _col(n))
        if isinstance(n, ast.Call):
            if not isinstance(n.func, ast.Name) or n.func.id not in FUNCTIONS or n.keywords:
                raise ExprError(f"unknown function (the functions: {', '.join(FUNCTIONS)})", _col(n))
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Slice):
            raise ExprError("slices are not part of the mapping language", _col(n))


def _col(n: ast.AST) -> int:
    return int(getattr(n, "col_offset", 0))


class _Eval:
    def __init__(self, env: Mapping[str, Any], state: EvalState):
        self.env = env
        self.state = state

    def run(self, n: ast.expr) -> Any:
        m = getattr(self, "_" + type(n).__name__)
        return m(n)

    def _Constant(self, n: ast.Constant) -> Any:
        return n.value

    def _Name(self, n: ast.Name) -> Any:
        if n.id in ("true", "True"):
            return True
        if n.id in ("false", "False"):
            return False
        if n.id not in self.env:
            raise ExprError(f"unknown name '{n.id}' (names here: {', '.join(sorted(self.env))})", _col(n))
        return self.env[n.id]

    def _Attribute(self, n: ast.Attribute) -> Any:
        base = self.run(n.value)
        if base is None:
            return None
        if isinstance(base, Mapping):
            return base.get(n.attr)
        raise ExprError(f"'.{n.attr}' of a {type(base).__name__} value", _col(n))

    def _Subscript(self, n: ast.Subscript) -> Any:
        base = self.run(n.value)
        key = self.run(n.slice)
        if base is None:
            return None
        if isinstance(base, Mapping):
            return base.get(key if not isinstance(key, int) else str(key), base.get(key))
        if isinstance(base, (list, tuple, str)) and isinstance(key, int) and not isinstance(key, bool):
            return base[key] if -len(base) <= key < len(base) else None
        raise ExprError(f"cannot index a {type(base).__name__} value with {key!r}", _col(n))

    def _num(self, v: Any, n: ast.AST, what: str) -> Any:
        if v is None:
            raise ExprError(f"{what}: the event has no such field (None)", _col(n))
        return v

    def _BinOp(self, n: ast.BinOp) -> Any:
        a = self._num(self.run(n.left), n.left, ast.unparse(n.left))
        b = self._num(self.run(n.right), n.right, ast.unparse(n.right))
        if isinstance(n.op, (ast.FloorDiv, ast.Mod)) and b == 0:
            raise ExprError(f"division by zero in {ast.unparse(n)}", _col(n))
        try:
            return _BINOPS[type(n.op)](a, b)
        except TypeError:
            raise ExprError(f"{ast.unparse(n)}: cannot combine {type(a).__name__} and {type(b).__name__}", _col(n)) from None

    def _UnaryOp(self, n: ast.UnaryOp) -> Any:
        v = self.run(n.operand)
        if isinstance(n.op, ast.Not):
            return not v
        v = self._num(v, n.operand, ast.unparse(n.operand))
        if not isinstance(v, int):
            raise ExprError(f"-{v!r}: not a number", _col(n))
        return -v

    def _BoolOp(self, n: ast.BoolOp) -> Any:
        if isinstance(n.op, ast.And):
            return all(self.run(v) for v in n.values)
        return any(self.run(v) for v in n.values)

    def _Compare(self, n: ast.Compare) -> bool:
        left = self.run(n.left)
        for op, right_n in zip(n.ops, n.comparators):
            right = self.run(right_n)
            if isinstance(op, (ast.Eq, ast.NotEq)):
                ok = _CMPS[type(op)](left, right)
            elif left is None or right is None:
                ok = False  # an order test on a missing field is false, not an error
            else:
                try:
                    ok = _CMPS[type(op)](left, right)
                except TypeError:
                    raise ExprError(f"{ast.unparse(n)}: cannot compare {type(left).__name__} and {type(right).__name__}", _col(n)) from None
            if not ok:
                return False
            left = right
        return True

    def _IfExp(self, n: ast.IfExp) -> Any:
        return self.run(n.body) if self.run(n.test) else self.run(n.orelse)

    def _Tuple(self, n: ast.Tuple) -> Any:
        return tuple(self.run(e) for e in n.elts)

    def _List(self, n: ast.List) -> Any:
        return [self.run(e) for e in n.elts]

    def _Call(self, n: ast.Call) -> Any:
        name = n.func.id  # type: ignore[attr-defined]
        if name == "has":
            if len(n.args) != 1:
                raise ExprError("has(FIELD) takes one argument", _col(n))
            return self.run(n.args[0]) is not None
        vals = [self.run(a) for a in n.args]
        if name in ("min", "max"):
            if not vals or any(v is None for v in vals):
                raise ExprError(f"{name}(): a missing value", _col(n))
            return (min if name == "min" else max)(vals)
        if len(vals) != 1:
            raise ExprError(f"{name}() takes one argument", _col(n))
        v = vals[0]
        if name == "index":
            # the last integer in a kernel name: "be:k4" -> 4, "rt:1" -> 1
            if isinstance(v, int) and not isinstance(v, bool):
                return v
            m = _DIGITS.search(v) if isinstance(v, str) else None
            if m is None:
                raise ExprError(f"index({v!r}): no number in it", _col(n))
            return int(m.group(1))
        if name == "first_seen":
            key = repr(v)
            if key not in self.state.seen:
                self.state.seen[key] = len(self.state.seen)
            return self.state.seen[key]
        if name == "count":  # the n-th time this value is passed (1, 2, ...)
            key = repr(v)
            self.state.counts[key] = self.state.counts.get(key, 0) + 1
            return self.state.counts[key]
        if name == "counted":  # how many times count() has had this value so far
            return self.state.counts.get(repr(v), 0)
        if name == "int":
            if isinstance(v, bool):
                return int(v)
            if isinstance(v, int):
                return v
            try:
                return int(v)
            except (TypeError, ValueError):
                raise ExprError(f"int({v!r}): not an integer", _col(n)) from None
        if v is None:
            raise ExprError("len(): a missing value", _col(n))
        return len(v)

"""A state predicate evaluated over every state at once, slot by slot as numpy columns (issue 35,
item 3: the latency pass after `--device cuda` decoded millions of states into tuples and called
the predicate on each, about 90 us a state).

The predicate's text is the Python core's (gpmodel/compile.py prints it from the IR); this module
accepts it only when it is made of slot reads `s[k]`, integer and boolean constants,
comparisons, `and`/`or`/`not`, `+`, `-`, `*` and conditional expressions whose every value,
bounded from the slots' ranges, stays within 2^62, and rewrites it into numpy operations on
the slot columns (`and` -> `&` of truth values, ...). Such an expression cannot fail to
evaluate (no index, division or call) nor wrap in int64, so evaluating both sides of
`and`/`or` gives the same truth value (and a cost the same number) as the per-state code.
Anything else: None, and the caller evaluates state by state as before."""

from __future__ import annotations

import ast
from typing import Callable

import numpy as np

_CMP = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_ARITH = (ast.Add, ast.Sub, ast.Mult)


class _Refused(Exception):
    pass


def _truth(node: ast.expr) -> ast.expr:
    """A node's truth value as a numpy boolean expression."""
    if isinstance(node, (ast.Compare, ast.BoolOp)) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
        return node
    return ast.Compare(left=node, ops=[ast.NotEq()], comparators=[ast.Constant(0)])


LIMIT = 1 << 62  # every intermediate value of an accepted expression lies within +-LIMIT


def _bounds(node: ast.expr, ranges: dict[int, tuple[int, int]], names: dict[str, int]) -> tuple[int, int]:
    """Lowest and highest value `node` can take in states whose slot k lies in ranges[k] (a
    truth value: 0..1); _Refused past LIMIT, so that no int64 operation below can wrap."""
    if isinstance(node, (ast.Compare, ast.BoolOp)):
        for sub in ast.iter_child_nodes(node):
            if isinstance(sub, ast.expr):
                _bounds(sub, ranges, names)
        return 0, 1
    if isinstance(node, ast.UnaryOp):
        lo, hi = _bounds(node.operand, ranges, names)
        return (0, 1) if isinstance(node.op, ast.Not) else (-hi, -lo) if isinstance(node.op, ast.USub) else (lo, hi)
    if isinstance(node, ast.Constant) and type(node.value) in (int, bool):
        out = (int(node.value), int(node.value))
    elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value in ranges:
        out = ranges[node.slice.value]
    elif isinstance(node, ast.Name) and node.id in names:
        out = (names[node.id], names[node.id])
    elif isinstance(node, ast.IfExp):
        _bounds(node.test, ranges, names)
        a, b = _bounds(node.body, ranges, names), _bounds(node.orelse, ranges, names)
        out = (min(a[0], b[0]), max(a[1], b[1]))
    elif isinstance(node, ast.BinOp) and isinstance(node.op, _ARITH):
        (a, b), (c, d) = _bounds(node.left, ranges, names), _bounds(node.right, ranges, names)
        if isinstance(node.op, ast.Add):
            out = (a + c, b + d)
        elif isinstance(node.op, ast.Sub):
            out = (a - d, b - c)
        else:
            products = (a * c, a * d, b * c, b * d)
            out = (min(products), max(products))
    else:
        raise _Refused(type(node).__name__)
    if not (-LIMIT <= out[0] and out[1] <= LIMIT):
        raise _Refused("beyond 64 bits")
    return out


class _Rewrite(ast.NodeTransformer):
    def __init__(self, names: dict[str, int]) -> None:
        self.slots: set[int] = set()
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.names:  # an action parameter of a cost, fixed per instance
            return ast.Constant(self.names[node.id])
        raise _Refused("name")

    def generic_visit(self, node: ast.AST) -> ast.AST:
        raise _Refused(type(node).__name__)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if (isinstance(node.value, ast.Name) and node.value.id == "s" and isinstance(node.slice, ast.Constant)
                and type(node.slice.value) is int):
            self.slots.add(node.slice.value)
            return ast.Name(id=f"c{node.slice.value}", ctx=ast.Load())
        raise _Refused("subscript")

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if type(node.value) in (int, bool):
            return node
        raise _Refused("constant")

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        if not all(isinstance(op, _CMP) for op in node.ops):
            raise _Refused("comparison")
        terms = [self.visit(node.left)] + [self.visit(c) for c in node.comparators]
        pairs: list[ast.expr] = [ast.Compare(left=a, ops=[op], comparators=[b])
                                 for a, op, b in zip(terms, node.ops, terms[1:])]
        out = pairs[0]
        for p in pairs[1:]:  # a chain a < b < c: (a < b) & (b < c)
            out = ast.BinOp(left=out, op=ast.BitAnd(), right=p)
        return out

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        op: ast.operator = ast.BitAnd() if isinstance(node.op, ast.And) else ast.BitOr()
        values = [_truth(self.visit(v)) for v in node.values]
        out = values[0]
        for v in values[1:]:
            out = ast.BinOp(left=out, op=op, right=v)
        return out

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        if isinstance(node.op, ast.Not):
            return ast.UnaryOp(op=ast.Invert(), operand=_truth(self.visit(node.operand)))
        if isinstance(node.op, (ast.USub, ast.UAdd)):
            return ast.UnaryOp(op=node.op, operand=self.visit(node.operand))
        raise _Refused("unary")

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        if not isinstance(node.op, _ARITH):
            raise _Refused("operator")
        return ast.BinOp(left=self.visit(node.left), op=node.op, right=self.visit(node.right))

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        call = ast.Attribute(value=ast.Name(id="np", ctx=ast.Load()), attr="where", ctx=ast.Load())
        return ast.Call(func=call, args=[_truth(self.visit(node.test)), self.visit(node.body), self.visit(node.orelse)],
                        keywords=[])


def column_predicate(source: str, ranges: dict[int, tuple[int, int]]) -> tuple[Callable[[dict[int, np.ndarray], int], np.ndarray], set[int]] | None:
    """(fn, slots) for the predicate `source` (`def NAME(s): return EXPR`, gpmodel/compile.py's
    text): fn(columns, n) is its truth value in n states, columns[k] slot k's values (each
    within ranges[k]); None when the expression holds anything beyond what the module docstring
    lists, or a value of it may leave 64 bits."""
    return _columns(source, ranges, {}, truth=True)


def column_value(source: str, ranges: dict[int, tuple[int, int]],
                 names: dict[str, int]) -> tuple[Callable[[dict[int, np.ndarray], int], np.ndarray], set[int]] | None:
    """As column_predicate for an integer expression (`def NAME(s, p0, ...): return EXPR`, a
    cost), the parameters fixed by `names`: fn(columns, n) gives its int64 values."""
    return _columns(source, ranges, names, truth=False)


def _columns(source: str, ranges: dict[int, tuple[int, int]], names: dict[str, int], truth: bool) -> tuple[Callable[[dict[int, np.ndarray], int], np.ndarray], set[int]] | None:
    fndef = ast.parse(source).body[0]
    if not (isinstance(fndef, ast.FunctionDef) and len(fndef.body) == 1 and isinstance(fndef.body[0], ast.Return)
            and fndef.body[0].value is not None):
        return None
    rw = _Rewrite(names)
    try:
        _bounds(fndef.body[0].value, ranges, names)
        expr = rw.visit(fndef.body[0].value)
    except _Refused:
        return None
    if truth:
        expr = _truth(expr)
    order = sorted(rw.slots)
    tree = ast.parse(f"def vec({', '.join(f'c{k}' for k in order)}):\n    return 0\n")
    tree.body[0].body[0].value = expr  # type: ignore[attr-defined]
    env: dict[str, object] = {"np": np}
    exec(compile(ast.fix_missing_locations(tree), "<gpmodel.vector_pred>", "exec"), env)  # noqa: S102 - the IR's printed expression only
    vec = env["vec"]
    dtype = np.bool_ if truth else np.int64

    def fn(columns: dict[int, np.ndarray], n: int) -> np.ndarray:
        out = vec(*(columns[k] for k in order))  # type: ignore[operator]
        return np.broadcast_to(np.asarray(out, dtype=dtype), (n,))

    return fn, rw.slots

"""A model with symbolic constants, recovered from a few instances of it.

The type checker resolves every constant to an integer (`ir.Model` is one instance). To prove
a property for every value of some constants, `extract` loads the model at a base point and
once more with each named constant moved by one, walks the instances' IRs in parallel and
fits every integer that differs (a range bound, a literal, an initial value) as an affine
function of the constants; one more instance, every named constant moved, checks the fit. A
value that is not affine gets a second try (NOTE(product-fit)): a polynomial of degree at most
two in the constants (`NB * BLEN + 1`, a saturation bound), fitted exactly on as many further
instances as it has monomials and checked on two more. A structure that changes with the
constants, or a value that is neither (`N * W * L`, `2 ** N`), is reported as unsupported,
never guessed.

Initial values are per slot in the IR; an array's must be one value per element field
(`var ops: [..] -> 0..L = 0`), read off any element."""

from __future__ import annotations

import dataclasses
import enum
import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Mapping, Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.smt.terms import subterms

BASE = 5  # base value of the first named constant; the next ones get 7, 9, ... (distinct values)


class Unsupported(Exception):
    """The model (or a property) is outside what the parameterised engine handles."""


@dataclass
class ParamModel:
    """The base instance's IR, with the integers that depend on the named constants."""

    model: ir.Model  # the base instance
    names: tuple[str, ...]  # the constants made symbolic
    consts: dict[str, z3.ArithRef]  # their Z3 symbols
    lower: dict[str, int]  # each constant's lower bound
    base: dict[str, int]
    _sym: dict[tuple[int, str | int], z3.ArithRef]
    _keep: list[object]  # the base nodes the keys' ids refer to (kept alive)
    inits: list[dict[tuple[str, ...], "z3.ArithRef | None"]]  # per var: leaf field path -> initial value
    # pairs of named constants the model multiplies (a fitted `NB * BLEN + 1`, or `NB * BLEN` in
    # an expression): the candidates' product columns (checker/engines/param/mine.py, NOTE(product-fit))
    products: tuple[tuple[str, str], ...] = ()

    def num(self, node: object, fld: "str | int", value: int) -> z3.ArithRef:
        """The symbolic value of integer `value` stored at `node.fld` (or `node[fld]`)."""
        hit = self._sym.get((id(node), fld))
        return hit if hit is not None else z3.IntVal(value)

    def symbolic(self, node: object, fld: "str | int") -> bool:
        return (id(node), fld) in self._sym

    def sizes_ok(self) -> z3.BoolRef:
        """Every named constant at or above its lower bound."""
        return z3.And(*[self.consts[n] >= self.lower[n] for n in self.names])


def _flatten(x: Any, out: list[tuple[object, "str | int", int]], shape: list[object], skip_init: bool) -> None:
    """Integers of an IR value in walk order as (container, field, value); everything else
    goes to `shape`, which must agree between instances."""
    if isinstance(x, bool) or x is None or isinstance(x, (str, enum.Enum, float)):
        shape.append(x)
        return
    if isinstance(x, int):
        raise AssertionError("bare int")
    if isinstance(x, (tuple, list)):
        shape.append(("seq", len(x)))
        for i, v in enumerate(x):
            if isinstance(v, int) and not isinstance(v, bool):
                out.append((x, i, v))
            else:
                _flatten(v, out, shape, skip_init)
        return
    if dataclasses.is_dataclass(x):
        shape.append(type(x).__name__)
        for f in dataclasses.fields(x):
            if f.name == "span" or (skip_init and isinstance(x, ir.Var) and f.name == "init"):
                continue
            if isinstance(x, ir.Model) and f.name in ("expectations", "doc", "description", "file", "constants",
                                                      "nonaffine"):
                continue
            v = getattr(x, f.name)
            if isinstance(v, int) and not isinstance(v, bool):
                out.append((x, f.name, v))
            else:
                _flatten(v, out, shape, skip_init)
        return
    raise Unsupported(f"unexpected IR value {type(x).__name__}")


def _var_inits(v: ir.Var) -> dict[tuple[str, ...], int | None]:
    """One initial value per element field of `v` (array indices dropped from the paths)."""
    out: dict[tuple[str, ...], int | None] = {}
    for (path, _), val in zip(ir.leaf_paths(v.type), v.init):
        key = tuple(a for a in path if isinstance(a, str))
        if key in out and out[key] != val:
            raise Unsupported(f"variable {v.name}: elements start with different values")
        out[key] = val
    return out


def _refuse_nonaffine(model: ir.Model, names: Sequence[str]) -> None:
    """NOTE(nonaffine-constants): an integer folded from `N / 10` or `if N == 4 then 1 else 0`
    fits an affine function at the few sizes `extract` loads (it is constant there) and is
    still no affine function of N: the type checker says which constants such a fold depends
    on, and those cannot be made symbolic. A product of two terms that depend on them (a
    two-set clause: `NB * BLEN`) is left to the degree-two fit (NOTE(product-fit)), exact for
    what is at most quadratic; a product of three (a three-set clause) is refused here, since a
    cubic can pass through every point that fit loads."""
    from gpcheck.spec.affinity import nonaffine_in

    for clause, where in model.nonaffine:
        if len(clause) != 2 and nonaffine_in(tuple(frozenset(part) for part in clause), set(names)):
            used = sorted({c for part in clause for c in part if c in names})
            how = "a product of three terms" if len(clause) > 2 else "a division, a modulo or a condition"
            raise Unsupported(f"{where}: a constant expression that depends on {', '.join(used)} through {how} "
                              f"is not a polynomial of degree at most two in {', '.join(names)}")


def extract(load: Callable[[Mapping[str, int]], ir.Model], names: Sequence[str], fixed: Mapping[str, int],
            lower: Mapping[str, int]) -> ParamModel:
    """The parameterised model: `load(consts)` type-checks one instance."""
    base = {n: BASE + 2 * i for i, n in enumerate(names)}
    points = [dict(fixed, **base)]
    for n in names:
        points.append(dict(points[0], **{n: base[n] + 1}))
    check = dict(points[0], **{n: base[n] + 3 + i for i, n in enumerate(names)})
    models = [load(p) for p in points] + [load(check)]
    _refuse_nonaffine(models[0], names)
    flats, shapes, inits = [], [], []
    for m in models:
        out: list[tuple[object, str | int, int]] = []
        shape: list[object] = []
        _flatten(m, out, shape, skip_init=True)
        flats.append(out)
        shapes.append(shape)
        inits.append([_var_inits(v) for v in m.vars])
    if any(s != shapes[0] for s in shapes) or any(len(f) != len(flats[0]) for f in flats):
        raise Unsupported("the model's structure changes with the constants")
    consts = {n: z3.Int(n) for n in names}
    products = _Products(load, names, points[0], shapes[0], len(flats[0]))

    def fit(values: list[int], where: str, value_at: Callable[[list], int]) -> z3.ArithRef | None:
        """An affine function of the named constants through the points, or None if constant;
        else a polynomial of degree two (NOTE(product-fit)), `value_at` reading the value
        in another instance's flattening."""
        b = values[0]
        deltas = [values[1 + i] - b for i in range(len(names))]
        predicted = b + sum(d * (check[n] - base[n]) for d, n in zip(deltas, names))
        if predicted != values[-1]:
            return products.fit(value_at, consts, where)
        if not any(deltas):
            return None
        e: z3.ArithRef = z3.IntVal(b - sum(d * base[n] for d, n in zip(deltas, names)))
        for d, n in zip(deltas, names):
            if d:
                e = e + d * consts[n]
        return z3.simplify(e)

    sym: dict[tuple[int, str | int], z3.ArithRef] = {}
    keep: list[object] = []
    for pos, (node, fld, _) in enumerate(flats[0]):
        e = fit([f[pos][2] for f in flats], f"a value at {type(node).__name__}.{fld}",
                lambda m, pos=pos: m[0][pos][2])
        if e is None:
            continue
        key = (id(node), fld)
        if key in sym and not sym[key].eq(e):
            raise Unsupported("an IR node shared between places that depend differently on the constants")
        sym[key] = e
        keep.append(node)
    var_inits: list[dict[tuple[str, ...], z3.ArithRef | None]] = []
    for vi, v in enumerate(models[0].vars):
        d: dict[tuple[str, ...], z3.ArithRef | None] = {}
        for key, val in inits[0][vi].items():
            if val is None:
                d[key] = None
                continue
            vals = [i[vi][key] for i in inits]
            if any(x is None for x in vals):
                raise Unsupported(f"variable {v.name}: initial value changes with the constants")
            e = fit(vals, f"the initial value of {v.name}",  # type: ignore[arg-type]
                    lambda m, vi=vi, key=key: _init_value(m[1][vi], key, v.name))
            d[key] = z3.IntVal(val) if e is None else e
        var_inits.append(d)
    pm = ParamModel(models[0], tuple(names), consts, {n: lower.get(n, 1) for n in names}, base, sym, keep,
                    var_inits)
    pm.products = _products_of(pm, [*sym.values(), *[e for d in var_inits for e in d.values() if e is not None]])
    return pm


def consts_in(e: z3.ExprRef, names: Sequence[str]) -> set[str]:
    """The named constants that occur in `e`."""
    return {x.decl().name() for x in subterms([e]) if z3.is_const(x) and x.decl().name() in names}


def _products_of(pm: ParamModel, fitted: Sequence[z3.ArithRef]) -> tuple[tuple[str, str], ...]:
    """The pairs (n, m) of named constants, n <= m in the names' order, that some fitted value
    or some `*` of the model's expressions multiplies."""
    order = {n: k for k, n in enumerate(pm.names)}
    found: set[tuple[str, str]] = set()

    def add(a: set[str], b: set[str]) -> None:
        for n in a:
            for m in b:
                found.add((n, m) if order[n] <= order[m] else (m, n))

    for e in fitted:
        todo = [e]
        while todo:
            x = todo.pop()
            if z3.is_mul(x):
                parts = [consts_in(c, pm.names) for c in x.children()]
                for i, j in itertools.combinations(range(len(parts)), 2):
                    add(parts[i], parts[j])
            todo.extend(x.children())

    def symbolic(x: object) -> set[str]:
        if isinstance(x, ir.Lit) and pm.symbolic(x, "value"):
            return consts_in(pm.num(x, "value", x.value), pm.names)
        return set()

    seen: set[int] = set()
    todo_nodes: list[object] = [pm.model]
    while todo_nodes:
        x = todo_nodes.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, ir.Binary) and x.op is ir.BinOp.MUL:
            add(symbolic(x.lhs), symbolic(x.rhs))
        if isinstance(x, (tuple, list)):
            todo_nodes.extend(v for v in x if not isinstance(v, (int, str, float, bool, enum.Enum)) and v is not None)
        elif dataclasses.is_dataclass(x):
            for f in dataclasses.fields(x):
                v = getattr(x, f.name)
                if f.name != "span" and v is not None and not isinstance(v, (int, str, float, bool, enum.Enum)):
                    todo_nodes.append(v)
    return tuple(sorted(found, key=lambda p: (order[p[0]], order[p[1]])))


def _init_value(inits: dict[tuple[str, ...], int | None], key: tuple[str, ...], name: str) -> int:
    val = inits[key]
    if val is None:
        raise Unsupported(f"variable {name}: initial value changes with the constants")
    return val


PRODUCT_CHECKS = 2  # instances beyond the fitted ones that a degree-two fit must also match


class _Products:
    """NOTE(product-fit): values that are polynomials of degree at most two in the named
    constants (`NB * BLEN + 1`: the block-ticks of NB blocks of BLEN ticks). The monomials 1,
    n, n * m (n <= m in the names' order) get one instance each: the base point, each constant
    one and two above it, each pair one above; their values give the coefficients exactly
    (fractions), which must be integers; PRODUCT_CHECKS more instances (every constant moved
    by different amounts) must match the polynomial, or the value is reported as unsupported.
    The instances are loaded only when some value is not affine, so affine models load
    nothing more and their terms are as before."""

    def __init__(self, load: Callable[[Mapping[str, int]], ir.Model], names: Sequence[str],
                 base: Mapping[str, int], shape: list[object], size: int) -> None:
        self.load, self.names, self.base, self.shape, self.size = load, list(names), dict(base), shape, size
        self._got: tuple[list[tuple[dict[str, int], tuple]], list[tuple[dict[str, int], tuple]]] | None = None

    def monomials(self) -> list[tuple[str, ...]]:
        return [()] + [(n,) for n in self.names] + list(itertools.combinations_with_replacement(self.names, 2))

    def _instances(self) -> tuple[list[tuple[dict[str, int], tuple]], list[tuple[dict[str, int], tuple]]]:
        """(point, (flattening, var inits)) for the fitted points, then the checks; loaded once."""
        if self._got is None:
            b = self.base
            pts = [dict(b)]
            for n in self.names:
                pts += [dict(b, **{n: b[n] + 1}), dict(b, **{n: b[n] + 2})]
            for n, m in itertools.combinations(self.names, 2):
                pts.append(dict(b, **{n: b[n] + 1, m: b[m] + 1}))
            for k in range(PRODUCT_CHECKS):
                pts.append(dict(b, **{n: b[n] + 3 + k + 2 * i for i, n in enumerate(self.names)}))
            got = []
            for p in pts:
                m = self.load(p)
                out: list[tuple[object, str | int, int]] = []
                shape: list[object] = []
                _flatten(m, out, shape, skip_init=True)
                if shape != self.shape or len(out) != self.size:
                    raise Unsupported("the model's structure changes with the constants")
                got.append(({n: p[n] for n in self.names}, (out, [_var_inits(v) for v in m.vars])))
            fitted = len(pts) - PRODUCT_CHECKS
            self._got = got[:fitted], got[fitted:]
        return self._got

    def fit(self, value_at: Callable[[tuple], int], consts: Mapping[str, z3.ArithRef], where: str) -> z3.ArithRef:
        fitted, checks = self._instances()
        monos = self.monomials()

        def row(p: Mapping[str, int]) -> list[Fraction]:
            out = []
            for mono in monos:
                v = 1
                for n in mono:
                    v *= p[n]
                out.append(Fraction(v))
            return out

        coef = _solve([row(p) for p, _ in fitted], [Fraction(value_at(m)) for _, m in fitted])
        unsupported = Unsupported(f"{where} is not a polynomial of degree at most two in {', '.join(self.names)}")
        if coef is None or any(c.denominator != 1 for c in coef):
            raise unsupported
        for p, m in checks:
            if sum(c * x for c, x in zip(coef, row(p))) != value_at(m):
                raise unsupported
        e: z3.ArithRef = z3.IntVal(int(coef[0]))
        for c, mono in zip(coef[1:], monos[1:]):
            if c:
                term: z3.ArithRef = consts[mono[0]]
                for n in mono[1:]:
                    term = term * consts[n]
                e = e + int(c) * term
        return z3.simplify(e)


def _solve(a: list[list[Fraction]], b: list[Fraction]) -> list[Fraction] | None:
    """The unique solution of the square system a x = b (Gauss-Jordan over fractions), or None."""
    n = len(a)
    m = [list(r) + [v] for r, v in zip(a, b)]
    for col in range(n):
        piv = next((r for r in range(col, n) if m[r][col] != 0), None)
        if piv is None:
            return None
        m[col], m[piv] = m[piv], m[col]
        for r in range(n):
            if r != col and m[r][col] != 0:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return [m[r][n] / m[r][r] for r in range(n)]

"""A model with symbolic constants, recovered from a few instances of it.

The type checker resolves every constant to an integer (`ir.Model` is one instance). To prove
a property for every value of some constants, `extract` loads the model at a base point and
once more with each named constant moved by one, walks the instances' IRs in parallel and
fits every integer that differs (a range bound, a literal, an initial value) as an affine
function of the constants; one more instance, every named constant moved, checks the fit. A
structure that changes with the constants, or a value that is not affine in them (`N * W`), is
reported as unsupported, never guessed.

Initial values are per slot in the IR; an array's must be one value per element field
(`var ops: [..] -> 0..L = 0`), read off any element."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import z3

from gpcheck.spec import ir

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
    on, and those cannot be made symbolic."""
    from gpcheck.spec.affinity import nonaffine_in

    for clause, where in model.nonaffine:
        if nonaffine_in(tuple(frozenset(part) for part in clause), set(names)):
            used = sorted({c for part in clause for c in part if c in names})
            raise Unsupported(f"{where}: a constant expression that depends on {', '.join(used)} through a "
                              f"division, a modulo, a product or a condition is not an affine function of "
                              f"{', '.join(names)}")


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

    def fit(values: list[int], where: str) -> z3.ArithRef | None:
        """An affine function of the named constants through the points, or None if constant."""
        b = values[0]
        deltas = [values[1 + i] - b for i in range(len(names))]
        predicted = b + sum(d * (check[n] - base[n]) for d, n in zip(deltas, names))
        if predicted != values[-1]:
            raise Unsupported(f"{where} is not an affine function of {', '.join(names)}")
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
        e = fit([f[pos][2] for f in flats], f"a value at {type(node).__name__}.{fld}")
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
            e = fit(vals, f"the initial value of {v.name}")  # type: ignore[arg-type]
            d[key] = z3.IntVal(val) if e is None else e
        var_inits.append(d)
    return ParamModel(models[0], tuple(names), consts, {n: lower.get(n, 1) for n in names}, base, sym, keep,
                      var_inits)

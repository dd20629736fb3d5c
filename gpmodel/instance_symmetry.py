"""Symmetry over identical named instances: `use M as a(...)`, `use M as b(...)` with equal
constants (NOTE(instance-symmetry)).

NOTE(instance-symmetry): two named instances of one module (spec/instances.py) have variables
`a.x` and `b.x` of equal types and initial values when their constants are equal. Swapping them
(every `a.` name for the `b.` one and back) is an automorphism of the transition system when
the model, so renamed, is the same model: every variable's image has its type and initial
value, every action's renamed body (cost, time, fairness and parameters included) is the body of
an action (the instance's own `a.act` that of `b.act`; an action of the using model that of
another of the using model's), and every property, constraint, terminal predicate, assumption
and cover is mapped to one of its kind (an instance's `a.p` to `b.p`; the using model's own to
itself). The comparison is on the IR, structurally, with each local renumbered by first
appearance (their ids differ between copies), so the check is exact: a model that tells the
instances apart anywhere (a using-model action for `a` alone, `a.x + 2 * b.x` in a property,
different constants) is not reduced, and the reason says where.

Instances that pass are grouped (every transposition within a group is an automorphism, so the
group's every permutation is) and the canonical state sorts each group's slot blocks (the block
of `a` is its variables' slots in one order common to the group): one representative per orbit,
exactly. A property `a.p` then holds in every reachable state iff `a.p` and its images hold in
every representative: checker/api/explicit_run.py gives each property the worst verdict of its
images and, when only an image is violated, the image's counterexample renamed back (a renamed
behaviour is a behaviour), replayed by gpmodel before it is reported.

Used under `--symmetry on` only (`auto` keeps the unreduced search of such a model: the
reduction is not declared by the user, as a `symmetric` type is)."""

from __future__ import annotations

import dataclasses
from typing import Any

from gpcheck.spec import ir

State = tuple[int, ...]


class InstanceSymmetry:
    """The canonical form of states under the permutations of identical named instances, with
    the maps a renamed counterexample needs; `active` is False when no group has two instances."""

    def __init__(self, model: ir.Model, groups: list[list[str]], blocks: dict[str, list[int]]) -> None:
        self.model = model
        self.groups = groups
        self.blocks = blocks  # instance -> its slots, in the group's common order
        self.active = any(len(g) >= 2 for g in groups)
        self.exact = True
        self.types: list[Any] = []  # no symmetric types: NOTE(symmetry)'s reports read `describe`

    @property
    def group_size(self) -> int:
        n = 1
        for g in self.groups:
            n *= _factorial(len(g))
        return n

    def describe(self) -> dict[str, int]:
        return {"instances " + ", ".join(g): len(g) for g in self.groups}

    def canonical(self, s: State) -> State:
        out = list(s)
        for g in self.groups:
            rows = sorted(tuple(s[j] for j in self.blocks[i]) for i in g)
            for inst, row in zip(g, rows):
                for j, v in zip(self.blocks[inst], row):
                    out[j] = v
        return tuple(out)

    def swap_action(self, a: str, b: str, name: str) -> str:
        """The action `name` becomes when instances a and b are exchanged."""
        amap = action_map(self.model, a, b)
        assert not isinstance(amap, str)
        return amap.get(name, name)

    def swap_state(self, a: str, b: str, s: State) -> State:
        """The state with instances a and b exchanged."""
        out = list(s)
        for ja, jb in zip(self.blocks[a], self.blocks[b]):
            out[ja], out[jb] = s[jb], s[ja]
        return tuple(out)


def find(model: ir.Model) -> tuple[InstanceSymmetry | None, list[str]]:
    """The instance symmetry of `model` (None when no two named instances are interchangeable),
    and for each pair of same-shaped instances that is not, the reason."""
    from gpcheck.spec.instances import instance_groups

    named = [n for n, arr in instance_groups(model).items() if not arr]
    shapes: dict[str, tuple[Any, ...]] = {}
    for inst in named:
        vs = sorted((v for v in model.vars if v.name.startswith(inst + ".")), key=lambda v: v.name)
        shapes[inst] = tuple((v.name[len(inst) + 1:], _shape(v.type, {}, {}), v.init) for v in vs)
    why: list[str] = []
    groups: list[list[str]] = []
    for inst in named:
        if not shapes[inst]:
            continue
        for g in groups:
            if shapes[g[0]] == shapes[inst]:
                reason = _swap_breaks(model, g[0], inst)
                if reason is None:
                    g.append(inst)
                else:
                    why.append(f"instances {g[0]} and {inst}: {reason}")
                break
        else:
            groups.append([inst])
    groups = [g for g in groups if len(g) >= 2]
    if not groups:
        return None, why
    offsets = model.var_offsets()
    blocks: dict[str, list[int]] = {}
    for g in groups:
        for inst in g:
            vs = sorted((v for v in model.vars if v.name.startswith(inst + ".")), key=lambda v: v.name)
            blocks[inst] = [j for v in vs for j in range(offsets[v.index], offsets[v.index] + ir.slot_count(v.type))]
    return InstanceSymmetry(model, groups, blocks), why


def renamed(name: str, a: str, b: str) -> str:
    """A name with instance a's prefix exchanged for b's and back."""
    if name.startswith(a + "."):
        return b + name[len(a):]
    if name.startswith(b + "."):
        return a + name[len(b):]
    return name


def _swap_breaks(model: ir.Model, a: str, b: str) -> str | None:
    """None when exchanging instances a and b maps the model to itself; else where it does not."""
    by_name = {v.name: v for v in model.vars}
    vmap = {v.index: by_name[renamed(v.name, a, b)].index for v in model.vars if renamed(v.name, a, b) in by_name}
    if len(vmap) != len(model.vars):
        return "their variables differ"
    for v in model.vars:
        w = model.vars[vmap[v.index]]
        if _shape(v.type, {}, {}) != _shape(w.type, {}, {}) or v.init != w.init:
            return f"'{v.name}' and '{w.name}' differ in type or initial value"
    ident = {i: i for i in vmap}

    def shape(x: Any, m: dict[int, int]) -> Any:
        return _shape(x, m, {})

    amap = action_map(model, a, b)
    if isinstance(amap, str):
        return amap
    groups = [("invariant", model.invariants), ("transition property", model.transitions),
              ("liveness property", model.liveness), ("latency", model.latencies),
              ("constraint", model.constraints), ("assumption", model.assumptions), ("cover", model.covers)]
    for kind, props in groups:
        own = {p.name: p for p in props}
        for p in props:
            image = own.get(renamed(p.name, a, b))
            if image is None or shape(_unnamed(p), vmap) != shape(_unnamed(image), ident):
                return f"{kind} '{p.name}' tells them apart"
    terms = sorted(repr(shape(t, ident)) for t in model.terminals)
    if terms != sorted(repr(shape(t, vmap)) for t in model.terminals):
        return "a terminal predicate tells them apart"
    return None


def var_map(model: ir.Model, a: str, b: str) -> dict[int, int]:
    by_name = {v.name: v for v in model.vars}
    return {v.index: by_name[renamed(v.name, a, b)].index for v in model.vars if renamed(v.name, a, b) in by_name}


def action_map(model: ir.Model, a: str, b: str) -> dict[str, str] | str:
    """Each action's image when instances a and b are exchanged (an instance's own action: its
    namesake in the other; a using-model action: one whose body is its renamed body), or where
    there is none."""
    vmap = var_map(model, a, b)
    ident = {i: i for i in vmap}
    pool: dict[Any, list[str]] = {}
    for act in model.actions:
        pool.setdefault(_shape(_unnamed(act), ident, {}), []).append(act.name)
    out: dict[str, str] = {}
    for act in model.actions:
        image = renamed(act.name, a, b)
        names = pool.get(_shape(_unnamed(act), vmap, {}), [])
        if image != act.name:
            if image not in names:
                return f"action '{act.name}' renamed is not '{image}'"
        elif not names:
            return f"action '{act.name}' tells them apart"
        else:
            image = act.name if act.name in names else names[0]
        out[act.name] = image
    return out


def _unnamed(x: Any) -> Any:
    """A declaration without its name (the names are what the swap maps, compared apart)."""
    return dataclasses.replace(x, name="") if dataclasses.is_dataclass(x) and hasattr(x, "name") else x


def _shape(x: Any, vmap: dict[int, int], syms: dict[int, int]) -> Any:
    """`x` as nested tuples, variables renamed by `vmap`, locals numbered by first appearance,
    spans left out."""
    if isinstance(x, ir.VarRef):
        return ("var", vmap.get(x.var, x.var), x.primed)
    if isinstance(x, ir.Binary) and x.op in _COMMUTE and (x.op in _STRICT or not (_may_fail(x.lhs) or _may_fail(x.rhs))):
        # the renamed `a.x == b.x` is `b.x == a.x`: operands in a fixed order (and/or only where
        # neither operand can fail: they short-circuit, so their order decides which error is met)
        ops = sorted((_shape(x.lhs, vmap, syms), _shape(x.rhs, vmap, syms)), key=repr)
        return ("Binary", x.op, ops[0], ops[1], _shape(x.type, vmap, syms))
    if isinstance(x, ir.Symbol):
        if x.id not in syms:
            syms[x.id] = len(syms)
        return ("sym", syms[x.id], _shape(x.type, vmap, syms))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (type(x).__name__,) + tuple(_shape(getattr(x, f.name), vmap, syms)
                                           for f in dataclasses.fields(x) if f.compare)
    if isinstance(x, (tuple, list)):
        return tuple(_shape(y, vmap, syms) for y in x)
    if isinstance(x, dict):
        return tuple(sorted((k, _shape(v, vmap, syms)) for k, v in x.items()))
    return x


_STRICT = frozenset({ir.BinOp.ADD, ir.BinOp.MUL, ir.BinOp.EQ, ir.BinOp.NE})
_COMMUTE = _STRICT | {ir.BinOp.AND, ir.BinOp.OR}


def _may_fail(e: Any) -> bool:
    """Can evaluating `e` fail with a modelling error (a dynamic index, a division)?"""
    if isinstance(e, ir.Index) and not isinstance(e.index, ir.Lit):
        return True
    if isinstance(e, ir.Binary) and e.op in (ir.BinOp.DIV, ir.BinOp.MOD):
        return True
    if dataclasses.is_dataclass(e) and not isinstance(e, type):
        return any(_may_fail(getattr(e, f.name)) for f in dataclasses.fields(e) if f.compare)
    if isinstance(e, tuple):
        return any(_may_fail(y) for y in e)
    return False


def _factorial(n: int) -> int:
    out = 1
    for k in range(2, n + 1):
        out *= k
    return out


__all__ = ["InstanceSymmetry", "find", "renamed"]

"""`refines M with { var := expr, ... }`: a refinement mapping, resolved against both models.

    refines kfd_monitor(T_MON = T_MON) with { clock := clock, hp_work := wptr[HP] - rptr[HP], ... }

NOTE(refinement): as in TLA+, the mapping gives every variable of the abstract model M an
expression over the concrete (this) model's state; the concrete model refines M when the image
of every initial state is an initial state of M and the image of every step is a step of M or a
stutter (the image does not change). Only this safety part is checked (M's fairness is not: a
concrete behaviour may stop where M's fairness would go on); checker/engines/explicit/refinement.py does it,
and checker/engines/smt/refine.py by induction (`--engine kind` / `pdr`, NOTE(refinement-induction)).

Here the declaration is resolved into a `Refinement` the engines can run: M is loaded like a
`use`d module (a bundled model's name or a quoted path) with its constants bound by the
`(C = expr)` list (expressions in this model's constants), and every mapping expression is
type-checked in this model's scope once per slot of the abstract variable it maps (an array or
struct is mapped slot by slot: `e[i]`, `e.f`), so that the engines evaluate plain scalar IR
expressions of the concrete model. A bool maps to a bool, an integer to an integer (a value
outside M's range is reported when a state maps there), an enum to an enum whose members the
concrete values are named by (matched by name). Errors are located at the declaration.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Mapping

from gpcheck.spec import ir
from gpcheck.spec import syntax as S
from gpcheck.spec.errors import Diagnostics, SpecError, SpecTypeError
from gpcheck.spec.span import Span

CheckSpec = Callable[[S.Spec, Mapping[str, int], dict[str, str]], ir.Model]  # spec/typecheck.py check_spec

_MAP = "refines.map."   # invariant names of the mapping's slot expressions (dotted: no user can write them)
_CONST = "refines.const."


@dataclass(frozen=True)
class Refinement:
    """A resolved `refines` declaration: the abstract model and, for each of its slots (in
    layout order), the concrete model's scalar expression and the abstract slot's type."""

    module: str
    abstract: ir.Model
    slots: tuple[tuple[str, ir.Expr, ir.ScalarType], ...]  # (abstract slot path, concrete expr, abstract type)
    span: Span


def find_refines(spec: S.Spec, diags: Diagnostics) -> S.RefinesDecl | None:
    """The spec's one `refines` declaration (a second one is an error)."""
    found = [d for d in spec.decls if isinstance(d, S.RefinesDecl)]
    for d in found[1:]:
        diags.error(d.span, "a model refines at most one model", (found[0].span, "first declared here"))
    return found[0] if found else None


def attach(model: ir.Model, spec: S.Spec, overrides: Mapping[str, int], source: dict[str, str],
           check: CheckSpec) -> ir.Model:
    """`model` with its resolved refinement (NOTE(refinement)); raises SpecError for a bad one.
    `check` is the type checker's `check_spec`, passed in by it (this module sits above it)."""
    diags = Diagnostics(source=source)
    decl = find_refines(spec, diags)
    diags.gate(SpecTypeError)
    if decl is None:
        return model
    if "refines" in model.property_names():  # the refinement's result is reported under this name
        diags.error(decl.span, "refines: the model declares a property named 'refines', the name of the "
                               "refinement's result: rename that property")
        diags.gate(SpecTypeError)
    return replace(model, refinement=resolve(spec, decl, overrides, source, check))


def resolve(spec: S.Spec, decl: S.RefinesDecl, overrides: Mapping[str, int], source: dict[str, str],
            check_spec: CheckSpec) -> Refinement:
    """The abstract model and the mapping as IR expressions of the concrete model. `spec` is the
    composed concrete spec. Raises SpecError (located) for a bad module or mapping."""
    from gpcheck.spec.compose import find_module
    from gpcheck.spec.parser import parse_spec

    diags = Diagnostics(source=source)
    found = find_module(decl, spec.file, diags, source)
    diags.gate(SpecTypeError)
    assert found is not None
    file, text = found
    module = parse_spec(text, file)
    if any(isinstance(d, S.RefinesDecl) for d in module.decls):  # M's own refinement is M's to check
        module = replace(module, decls=tuple(d for d in module.decls if not isinstance(d, S.RefinesDecl)))
    plain = replace(spec, decls=tuple(d for d in spec.decls if not isinstance(d, S.RefinesDecl)))
    # the bound constants' values, as this model computes them
    consts: dict[str, int] = {}
    if decl.bindings:
        extra = tuple(S.ConstDecl(_CONST + n, v, span=sp) for n, v, sp in decl.bindings)
        cm = check_spec(replace(plain, decls=plain.decls + extra), overrides, dict(source))
        consts = {c.name[len(_CONST):]: c.value for c in cm.constants if c.name.startswith(_CONST)}
    try:
        abstract = check_spec(module, consts, source)
    except SpecError as e:
        # a binding of a constant M does not have, or M's own errors: say so at the declaration
        diags.error(decl.module_span, f"refines: model '{decl.module}' cannot be loaded with these constants: "
                                      f"{e.diagnostics[0].message}")
        diags.gate(SpecTypeError)
        raise
    targets: list[tuple[str, tuple[ir.Accessor, ...], S.Expr, Span]] = []
    for target, value, sp in decl.mapping:
        t = _target(target, abstract, diags, decl.module)
        if t is not None:
            if any(o[0] == t[0] and o[1] == t[1] for o in targets):
                diags.error(sp, f"refines: {_slot_name(*t)} is mapped twice")
            targets.append((t[0], t[1], value, sp))
    diags.gate(SpecTypeError)
    # one invariant `E == E` per abstract slot: the type checker types E in this model's scope
    probes: list[S.Decl] = []
    wanted: list[tuple[str, ir.ScalarType, Span]] = []
    missing: list[str] = []
    for v in abstract.vars:
        for path, st in ir.leaf_paths(v.type):
            cover = [m for m in targets if m[0] == v.name and path[:len(m[1])] == m[1]]
            if not cover:
                missing.append(_slot_name(v.name, path))
                continue
            _, tpath, e, sp = max(cover, key=lambda m: len(m[1]))  # the most specific target
            x, t = e, _sub_type(v.type, tpath)
            for acc in path[len(tpath):]:
                if isinstance(t, ir.StructType):
                    x, t = S.FieldE(x, str(acc), sp), dict(t.fields)[str(acc)]
                else:
                    assert isinstance(t, ir.ArrayType) and isinstance(acc, int)
                    x, t = S.IndexE(x, _literal(t.index, acc, sp), sp), t.elem
            probes.append(S.InvariantDecl(f"{_MAP}{len(wanted)}", S.BinE(ir.BinOp.EQ, x, x, sp), sp))
            wanted.append((_slot_name(v.name, path), st, sp))
    if missing:
        more = f" and {len(missing) - 6} more" if len(missing) > 6 else ""
        diags.error(decl.span, f"refines: the mapping gives no expression for {', '.join(missing[:6])}{more} "
                               "(every variable of the abstract model is mapped)")
    diags.gate(SpecTypeError)
    checked = check_spec(replace(plain, decls=plain.decls + _abstract_enums(plain, abstract, decl.span) + tuple(probes)),
                         overrides, dict(source))
    exprs = {inv.name: inv.expr for inv in checked.invariants if inv.name.startswith(_MAP)}
    slots: list[tuple[str, ir.Expr, ir.ScalarType]] = []
    for k, (path, st, sp) in enumerate(wanted):
        x = exprs[f"{_MAP}{k}"]
        assert isinstance(x, ir.Binary)
        lhs = x.lhs
        if not _compatible(lhs.type, st):
            diags.error(sp, f"refines: {path} of '{decl.module}' is {_describe(st)}, the mapping gives {_describe(lhs.type)}")
        slots.append((path, lhs, st))
    diags.gate(SpecTypeError)
    return Refinement(decl.module, abstract, tuple(slots), decl.span)


def _abstract_enums(spec: S.Spec, abstract: ir.Model, sp: Span) -> tuple[S.Decl, ...]:
    """M's enums, so that the mapping can name their members: those this model does not declare
    (an enum of the same name here is matched member by member at run time), and only where no
    member's name is taken here."""
    taken: set[str] = set()
    for d in spec.decls:
        name = getattr(d, "name", None)
        if isinstance(name, str):
            taken.add(name)
        if isinstance(d, S.EnumDecl):
            taken.update(m for m, _ in d.members)
    return tuple(S.EnumDecl(e.name, tuple((m, sp) for m in e.members), sp) for e in abstract.enums
                 if e.name not in taken and not taken & set(e.members))


def _target(e: S.Expr, abstract: ir.Model, diags: Diagnostics, module: str) -> tuple[str, tuple[ir.Accessor, ...]] | None:
    """A mapping's target: an abstract variable and the constant path into it (None after an error)."""
    path: list[ir.Accessor] = []
    node = e
    while not isinstance(node, S.Name):
        if isinstance(node, S.FieldE):
            path.append(node.name)
            node = node.base
        elif isinstance(node, S.IndexE):
            v = _constant(node.index, abstract)
            if v is None:
                diags.error(node.index.span, "refines: a target's index is a literal (an integer, true/false, "
                                             f"an enum member or a constant of '{module}')")
                return None
            path.append(v)
            node = node.base
        else:
            diags.error(node.span, "refines: a target is a variable of the abstract model, or an element or field of one")
            return None
    path.reverse()
    var = next((v for v in abstract.vars if v.name == node.name), None)
    if var is None:
        names = ", ".join(v.name for v in abstract.vars)
        diags.error(node.span, f"refines: '{module}' has no variable {node.name} (its variables: {names})")
        return None
    t: ir.Type = var.type
    for acc in path:
        if isinstance(t, ir.StructType) and isinstance(acc, str) and dict(t.fields).get(acc) is not None:
            t = dict(t.fields)[acc]
        elif isinstance(t, ir.ArrayType) and isinstance(acc, int) and acc in ir.domain_values(t.index):
            t = t.elem
        else:
            diags.error(e.span, f"refines: {_slot_name(var.name, tuple(path))} is not a part of {var.name} ({var.type})")
            return None
    return var.name, tuple(path)


def _constant(e: S.Expr, abstract: ir.Model) -> int | None:
    match e:
        case S.IntLit(value=v):
            return v
        case S.Neg(operand=S.IntLit(value=v)):
            return -v
        case S.BoolLit(value=b):
            return int(b)
        case S.Name(name=n):
            for en in abstract.enums:
                if n in en.members:
                    return en.members.index(n)
            return abstract.const_values.get(n)
    return None


def _sub_type(t: ir.Type, path: tuple[ir.Accessor, ...]) -> ir.Type:
    for acc in path:
        t = dict(t.fields)[str(acc)] if isinstance(t, ir.StructType) else t.elem  # type: ignore[union-attr]
    return t


def _literal(t: ir.Type, v: int, sp: Span) -> S.Expr:
    """An index value (a slot value) written as source: an int, a bool or an enum member."""
    if isinstance(t, ir.BoolType):
        return S.BoolLit(bool(v), sp)
    if isinstance(t, ir.EnumType):
        return S.Name(t.members[v], sp)
    return S.IntLit(v, sp) if v >= 0 else S.Neg(S.IntLit(-v, sp), sp)


def _slot_name(var: str, path: tuple[ir.Accessor, ...]) -> str:
    return var + "".join(f".{a}" if isinstance(a, str) else f"[{a}]" for a in path)


def _compatible(concrete: ir.Type, abstract: ir.ScalarType) -> bool:
    if isinstance(abstract, ir.BoolType):
        return isinstance(concrete, ir.BoolType)
    if isinstance(abstract, ir.IntType):
        return isinstance(concrete, ir.IntType)
    return isinstance(concrete, ir.EnumType)


def _describe(t: ir.Type) -> str:
    if isinstance(t, ir.BoolType):
        return "a bool"
    if isinstance(t, ir.IntType):
        return "an integer"
    if isinstance(t, ir.EnumType):
        return f"a {t.name}"
    return f"a {t}"


__all__ = ["Refinement", "attach", "find_refines", "resolve"]

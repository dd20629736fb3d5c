"""The gpspec abstract syntax tree: what the parser produces and the type checker reads.

Names are still strings and constants still expressions here; `typecheck` resolves both and
emits `gpcheck.spec.ir`. Nodes compare without their spans."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from gpcheck.spec.ir import BinOp, FoldKind, LivenessKind
from gpcheck.spec.span import NO_SPAN, Span


def _span() -> Span:
    return field(default=NO_SPAN, compare=False, repr=False)  # type: ignore[return-value]


# --------------------------------------------------------------------------- expressions
@dataclass(frozen=True, slots=True)
class IntLit:
    value: int
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class BoolLit:
    value: bool
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Name:
    name: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Prime:
    operand: "Expr"
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class IndexE:
    base: "Expr"
    index: "Expr"
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class FieldE:
    base: "Expr"
    name: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Neg:
    operand: "Expr"
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Not:
    operand: "Expr"
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class BinE:
    op: BinOp
    lhs: "Expr"
    rhs: "Expr"
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class IteE:
    cond: "Expr"
    then: "Expr"
    else_: "Expr"
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class FoldE:
    kind: FoldKind
    name: str
    domain: "TypeExpr"
    body: "Expr"
    span: Span = _span()


Expr = Union[IntLit, BoolLit, Name, Prime, IndexE, FieldE, Neg, Not, BinE, IteE, FoldE]


# --------------------------------------------------------------------------- types
@dataclass(frozen=True, slots=True)
class BoolT:
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class RangeT:
    lo: Expr
    hi: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class NamedT:
    name: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class ArrayT:
    index: "TypeExpr"
    elem: "TypeExpr"
    span: Span = _span()


TypeExpr = Union[BoolT, RangeT, NamedT, ArrayT]


# --------------------------------------------------------------------------- initialisers
@dataclass(frozen=True, slots=True)
class AnyInit:
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class ListInit:
    items: tuple["Init", ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class StructInit:
    items: tuple[tuple[str, "Init"], ...]
    span: Span = _span()


Init = Union[Expr, AnyInit, ListInit, StructInit]


# --------------------------------------------------------------------------- statements
@dataclass(frozen=True, slots=True)
class RequireS:
    cond: Expr
    span: Span = _span()
    assumption: str | None = None  # `require assume NAME: EXPR`: the assumption's name


@dataclass(frozen=True, slots=True)
class AssignS:
    target: Expr
    value: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class IfS:
    cond: Expr
    then: tuple["Stmt", ...]
    else_: tuple["Stmt", ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class ForS:
    name: str
    domain: TypeExpr
    body: tuple["Stmt", ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class LetS:
    name: str
    value: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class CallS:
    """`call NAME(args)`: the named action's body runs here, in this step (spec/compose.py
    inlines it before type checking; the type checker never sees one)."""

    name: str
    args: tuple[Expr, ...]
    span: Span = _span()


Stmt = Union[RequireS, AssignS, IfS, ForS, LetS, CallS]


# --------------------------------------------------------------------------- declarations
@dataclass(frozen=True, slots=True)
class ConstDecl:
    name: str
    value: Expr
    doc: str = ""
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class EnumDecl:
    name: str
    members: tuple[tuple[str, Span], ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class StructDecl:
    name: str
    fields: tuple[tuple[str, TypeExpr, Span], ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class VarDecl:
    name: str
    type: TypeExpr
    init: Init
    doc: str = ""
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: TypeExpr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class ActionDecl:
    name: str
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    internal: bool = False
    fair: bool = False
    span: Span = _span()
    # NOTE(retired-cost): the span of a retired `cost EXPR` clause, kept only to report it (spec/typecheck.py)
    cost: Span | None = None
    timing: "Timing | None" = None  # NOTE(timed): `time L..U` / `urgent` (None: untimed)


@dataclass(frozen=True, slots=True)
class Timing:
    """`time L..U` (upper None: `time L..`, no deadline); `time E` is E..E; `urgent` is 0..0."""

    lower: Expr
    upper: Expr | None
    urgent: bool = False
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class FairDecl:
    names: tuple[tuple[str, Span], ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class InvariantDecl:
    name: str
    expr: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class TransitionDecl:
    name: str
    expr: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Each:
    """NOTE(instance-properties): a property of an array of instances, stated once per element:
    `element` (the name `NAME.self` its expressions use) ranges over `index`, and the element's
    property is named `NAME[v].prop` (`instance` is NAME)."""

    instance: str
    element: str
    index: "TypeExpr"


@dataclass(frozen=True, slots=True)
class LivenessDecl:
    name: str
    kind: LivenessKind
    p: Expr | None
    q: Expr
    span: Span = _span()
    each: "Each | None" = None  # NOTE(instance-properties) in spec/instances.py


@dataclass(frozen=True, slots=True)
class TerminalDecl:
    expr: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class AllowDeadlock:
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class ConstraintDecl:
    name: str
    expr: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class ExpectDecl:
    property: str
    verdict: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class SymmetricDecl:
    """`symmetric NAME = lo..hi`: a named index type whose values the model treats alike.
    `symmetric` is False for one spliced in by `use` (spec/compose.py): the using model may tell
    the values apart, so there the name is a plain range."""

    name: str
    range: RangeT
    span: Span = _span()
    symmetric: bool = True


@dataclass(frozen=True, slots=True)
class UseDecl:
    """`use MODULE(CONST = expr, ...) driving ACTION, ...`: splice another model's declarations
    in (spec/compose.py expands it before type checking). `module` is a bundled model's name, or
    a file path relative to the using file when `is_path`."""

    module: str
    is_path: bool
    bindings: tuple[tuple[str, Expr, Span], ...]
    driven: tuple[tuple[str, Span], ...]
    module_span: Span = _span()
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class InstanceDecl:
    """`use MODULE as NAME(CONST = expr, ...) driving ACTION, ...`, or with `[INDEX]` after NAME
    an array of instances (spec/instances.py expands it before type checking): the module's
    declarations with their names qualified by the instance (`NAME.var`, `NAME.action`)."""

    module: str
    is_path: bool
    name: str
    index: TypeExpr | None
    bindings: tuple[tuple[str, Expr, Span], ...]
    driven: tuple[tuple[str, Span], ...]
    module_span: Span = _span()
    name_span: Span = _span()
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class RefinesDecl:
    """`refines MODULE(CONST = expr, ...) with { var := expr, ... }`: a refinement mapping from this
    model's states to MODULE's (spec/refines.py, checked by checker/engines/explicit/refinement.py)."""

    module: str
    is_path: bool
    bindings: tuple[tuple[str, Expr, Span], ...]
    mapping: tuple[tuple[Expr, Expr, Span], ...]  # (target: a variable, or an element/field of one; expression)
    module_span: Span = _span()
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class LatencyDecl:
    """`latency NAME: from P to Q [within B]` (NOTE(latency) in spec/ir.py)."""

    name: str
    p: Expr
    q: Expr
    within: Expr | None = None
    span: Span = _span()
    each: "Each | None" = None  # NOTE(instance-properties) in spec/instances.py


@dataclass(frozen=True, slots=True)
class AssumeDecl:
    """`assume NAME: EXPR`: a model assumption (NOTE(assumptions) in spec/ir.py)."""

    name: str
    expr: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class CoverDecl:
    """`cover NAME: EXPR`: is a state satisfying EXPR reachable?"""

    name: str
    expr: Expr
    span: Span = _span()


Decl = Union[
    ConstDecl, EnumDecl, StructDecl, VarDecl, ActionDecl, FairDecl, InvariantDecl,
    TransitionDecl, LivenessDecl, TerminalDecl, AllowDeadlock, ConstraintDecl, ExpectDecl,
    SymmetricDecl,
    UseDecl,
    InstanceDecl,
    RefinesDecl,
    LatencyDecl,
    AssumeDecl,
    CoverDecl,
]


@dataclass(frozen=True, slots=True)
class Spec:
    file: str
    name: str
    description: str
    doc: str
    decls: tuple[Decl, ...]
    span: Span = _span()

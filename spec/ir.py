# over 600 lines: one job, the IR's node types (a closed union per category) and their small helpers, read together
"""The typed intermediate representation: the only input of every engine.

A `Model` is one *instance* of a spec: every constant already has its final value (after
`--const` overrides), every range is a pair of Python ints, every name is resolved to a
`Var` (by index into `Model.vars`) or a `Symbol` (a parameter, `let`, `for` or quantifier
binder, with a model-unique id). Nothing here refers to lark or to the AST.

State layout (NOTE(slots)): a state is a flat sequence of scalar *slots*. Each variable
occupies `slot_count(var.type)` consecutive slots, in declaration order; arrays are laid out
element by element, structs field by field (recursively). A bool slot holds 0/1, an enum slot
the member's index, an int slot the integer. `leaf_paths` gives the accessor path of each slot
and is the one definition of this order that the interpreter, the Z3 encoding and the trace
formats share.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Iterator, Union

from gpcheck.spec.span import Span, NO_SPAN


# ---------------------------------------------------------------------------------------------
# Types


@dataclass(frozen=True, slots=True)
class BoolType:
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True, slots=True)
class IntType:
    """An integer range `lo..hi`; `lo`/`hi` are None for the unbounded type of expressions.

    `symmetric` names the symmetric type (`symmetric NAME = lo..hi`) a value belongs to, else
    None. It takes no part in equality or hashing: every engine treats a symmetric value as the
    integer it is; only the type checker (which keeps the model symmetric) and the symmetry
    reduction read it (NOTE(symmetry))."""

    lo: int | None = None
    hi: int | None = None
    symmetric: str | None = field(default=None, compare=False)

    @property
    def bounded(self) -> bool:
        return self.lo is not None and self.hi is not None

    def size(self) -> int:
        assert self.lo is not None and self.hi is not None
        return self.hi - self.lo + 1

    def __str__(self) -> str:
        return "int" if not self.bounded else f"{self.lo}..{self.hi}"


@dataclass(frozen=True, slots=True)
class EnumType:
    name: str
    members: tuple[str, ...]

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class ArrayType:
    index: "IntType | EnumType | BoolType"
    elem: "Type"

    def __str__(self) -> str:
        return f"[{self.index}] -> {self.elem}"


@dataclass(frozen=True, slots=True)
class StructType:
    name: str
    fields: tuple[tuple[str, "Type"], ...]

    def field_type(self, name: str) -> "Type | None":
        for f, t in self.fields:
            if f == name:
                return t
        return None

    def __str__(self) -> str:
        return self.name


ScalarType = Union[BoolType, IntType, EnumType]
Type = Union[BoolType, IntType, EnumType, ArrayType, StructType]
INT = IntType()
BOOL = BoolType()


def is_scalar(t: Type) -> bool:
    return isinstance(t, (BoolType, IntType, EnumType))


def domain_values(t: "IntType | EnumType | BoolType") -> range:
    """The slot values of a finite scalar domain, in order (used for indexes and parameters)."""
    if isinstance(t, BoolType):
        return range(0, 2)
    if isinstance(t, EnumType):
        return range(0, len(t.members))
    assert t.lo is not None and t.hi is not None
    return range(t.lo, t.hi + 1)


def slot_count(t: Type) -> int:
    if isinstance(t, ArrayType):
        return len(domain_values(t.index)) * slot_count(t.elem)
    if isinstance(t, StructType):
        return sum(slot_count(ft) for _, ft in t.fields)
    return 1


# An accessor path from a variable to one of its slots: ints are array index values (the
# domain value, not the position), strings are struct field names.
Accessor = Union[int, str]


def leaf_paths(t: Type) -> list[tuple[tuple[Accessor, ...], ScalarType]]:
    """Every slot of a value of type `t`, in layout order, with its path and scalar type."""
    if isinstance(t, ArrayType):
        sub = leaf_paths(t.elem)
        return [((v, *p), st) for v in domain_values(t.index) for p, st in sub]
    if isinstance(t, StructType):
        out: list[tuple[tuple[Accessor, ...], ScalarType]] = []
        for name, ft in t.fields:
            out.extend(((name, *p), st) for p, st in leaf_paths(ft))
        return out
    return [((), t)]


def slot_offset(t: Type, acc: Accessor) -> tuple[int, Type]:
    """Offset (in slots) of one accessor step inside a value of type `t`, and the sub-type."""
    if isinstance(t, ArrayType):
        assert isinstance(acc, int)
        pos = acc - domain_values(t.index).start
        return pos * slot_count(t.elem), t.elem
    assert isinstance(t, StructType) and isinstance(acc, str)
    off = 0
    for name, ft in t.fields:
        if name == acc:
            return off, ft
        off += slot_count(ft)
    raise KeyError(acc)


def scalar_in_range(t: ScalarType, v: int) -> bool:
    if isinstance(t, BoolType):
        return v in (0, 1)
    if isinstance(t, EnumType):
        return 0 <= v < len(t.members)
    return (t.lo is None or v >= t.lo) and (t.hi is None or v <= t.hi)


def format_scalar(t: ScalarType, v: int) -> "int | bool | str":
    """The user-facing value of a slot: True/False, the enum member's name, or the int."""
    if isinstance(t, BoolType):
        return bool(v)
    if isinstance(t, EnumType):
        return t.members[v] if 0 <= v < len(t.members) else v
    return v


# ---------------------------------------------------------------------------------------------
# Expressions


class UnOp(enum.Enum):
    NEG = "-"
    NOT = "not"


class BinOp(enum.Enum):
    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"
    MOD = "%"
    EQ = "=="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    AND = "and"
    OR = "or"
    IMPLIES = "implies"


ARITH_OPS = frozenset({BinOp.ADD, BinOp.SUB, BinOp.MUL, BinOp.DIV, BinOp.MOD})
ORDER_OPS = frozenset({BinOp.LT, BinOp.LE, BinOp.GT, BinOp.GE})
EQUALITY_OPS = frozenset({BinOp.EQ, BinOp.NE})
LOGIC_OPS = frozenset({BinOp.AND, BinOp.OR, BinOp.IMPLIES})


class FoldKind(enum.Enum):
    ALL = "all"
    ANY = "any"
    COUNT = "count"
    SUM = "sum"
    MIN = "min"
    MAX = "max"


@dataclass(frozen=True, slots=True)
class Symbol:
    """A local name: action parameter, `let`, `for` variable or quantifier binder."""

    id: int
    name: str
    type: Type
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Lit:
    """A scalar literal: its slot value (bool 0/1, enum member index, int) and type."""

    value: int
    type: ScalarType
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class VarRef:
    var: int  # index into Model.vars
    type: Type
    primed: bool = False
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class LocalRef:
    sym: Symbol
    span: Span = field(default=NO_SPAN, compare=False, repr=False)

    @property
    def type(self) -> Type:
        return self.sym.type


@dataclass(frozen=True, slots=True)
class Index:
    base: "Expr"
    index: "Expr"
    type: Type
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Field:
    base: "Expr"
    name: str
    type: Type
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Unary:
    op: UnOp
    operand: "Expr"
    type: Type
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Binary:
    """`==`/`!=` may compare aggregates of one type (slot by slot); every other operator is scalar."""

    op: BinOp
    lhs: "Expr"
    rhs: "Expr"
    type: Type
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Ite:
    cond: "Expr"
    then: "Expr"
    else_: "Expr"
    type: Type
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Fold:
    """`all/any/count/sum/min/max binder in domain: body`; the domain is a constant finite type.

    `min`/`max` over an empty domain are rejected by the type checker."""

    kind: FoldKind
    binder: Symbol
    body: "Expr"
    type: Type
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


Expr = Union[Lit, VarRef, LocalRef, Index, Field, Unary, Binary, Ite, Fold]


def walk_expr(e: Expr) -> Iterator[Expr]:
    """Every sub-expression of `e`, `e` first."""
    yield e
    match e:
        case Index(base=b, index=i):
            yield from walk_expr(b)
            yield from walk_expr(i)
        case Field(base=b):
            yield from walk_expr(b)
        case Unary(operand=o):
            yield from walk_expr(o)
        case Binary(lhs=l, rhs=r):
            yield from walk_expr(l)
            yield from walk_expr(r)
        case Ite(cond=c, then=t, else_=f):
            yield from walk_expr(c)
            yield from walk_expr(t)
            yield from walk_expr(f)
        case Fold(body=b):
            yield from walk_expr(b)
        case _:
            pass


# ---------------------------------------------------------------------------------------------
# Statements


@dataclass(frozen=True, slots=True)
class Require:
    cond: Expr
    ordinal: int  # 0-based position among the action's requires, in source order
    span: Span = field(default=NO_SPAN, compare=False, repr=False)
    # NOTE(assumptions): the name of the model assumption this guard states (`require assume
    # NAME: EXPR`, or a guard the type checker added for `assume NAME: EXPR`), else None
    assumption: str | None = None


@dataclass(frozen=True, slots=True)
class Assign:
    """`target = value`; target is an unprimed VarRef/Index/Field path, and the value has the
    target's type (an aggregate target is assigned slot by slot from an aggregate value)."""

    target: Expr
    value: Expr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class If:
    cond: Expr
    then: tuple["Stmt", ...]
    else_: tuple["Stmt", ...]
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class For:
    """`for binder in lo..hi { body }` with constant bounds (unrolled by every backend)."""

    binder: Symbol
    lo: int
    hi: int
    body: tuple["Stmt", ...]
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Let:
    sym: Symbol
    value: Expr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


Stmt = Union[Require, Assign, If, For, Let]

# NOTE(step-semantics): statements run in order; a later statement sees earlier assignments.
# An instance is enabled iff every `require` on its executed path holds. Execution of an
# instance stops at the first failing `require` (disabled, no error) or at the first modelling
# error (out-of-range write, bad index, division by zero); a modelling error is reported only
# when every `require` executed before it held. Both backends implement exactly this.
# Expressions compute over unbounded integers; only writes into variables and indexes are
# range-checked. `/` and `%` are Python's floor division and modulo (so `-7 / 2 == -4`).
# A `let` name is visible in the rest of its block; `for` bodies are unrolled in order.

# NOTE(predicate-errors): a predicate that fails to evaluate. Every state predicate of a model
# (`Model.state_predicates`: invariants, constraints, terminal predicates, the p and q of
# liveness properties) is evaluated in every reachable state, and every transition property
# on every step (from a reachable state inside the constraints), whatever was found violated
# before and whichever properties were asked for; evaluation short-circuits as `and`, `or`,
# `implies`, `if`, `all` and `any` do. A modelling error in that evaluation (a bad index, a
# division by zero) is a violation of `range` in that state (on that step), as an action
# instance's modelling error is. For its own property the predicate counts as false there:
# the invariant or transition property is violated, the constraint does not hold (the state is
# not expanded), the terminal predicate does not hold, p or q of a liveness property does not
# hold. Every engine (the explicit search, the Z3 encodings, the witness replay) implements
# exactly this.


# NOTE(symmetry): a `symmetric NAME = lo..hi` type is a scalarset (Murphi; Ip and Dill 1996):
# the model treats its values alike, so every permutation of them (applied at once to the
# positions of arrays indexed by the type, to slots holding a value of it and to action
# arguments of it) maps reachable states to reachable states, steps to steps, errors to errors,
# and keeps the truth of every invariant, transition property, constraint, terminal predicate
# and liveness property. The type checker (spec/typecheck.py, `_Checker._sym_*`) admits only
# models where that holds: values of the type are compared only with == / != against values of
# the same type, used only to index arrays indexed by it, never mixed with integers (no
# literals, arithmetic, ordering, int-indexed arrays); initial values do not single one out;
# a `for` over it touches only what its own value indexes and holds no `require` (so the
# iteration order does not matter), and an `all`/`any` over it has a body that cannot fail to
# evaluate (it short-circuits in order). gpmodel/symmetry.py canonicalises states under the
# permutations; checker/engines/explicit/explicit.py searches the quotient and un-permutes counterexamples.

# ---------------------------------------------------------------------------------------------
# Declarations


@dataclass(frozen=True, slots=True)
class Var:
    index: int
    name: str
    type: Type
    init: tuple[int | None, ...]  # one entry per slot; None = any value of the slot's type
    doc: str = ""
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Action:
    name: str
    params: tuple[Symbol, ...]  # each Symbol.type is a finite scalar domain
    body: tuple[Stmt, ...]
    internal: bool = False
    fair: bool = False
    span: Span = field(default=NO_SPAN, compare=False, repr=False)
    time: "Timing | None" = None  # NOTE(timed): `time L..U` / `urgent`; None: untimed (0..)

    @property
    def require_count(self) -> int:
        return sum(1 for s in iter_stmts(self.body) if isinstance(s, Require))


@dataclass(frozen=True, slots=True)
class Timing:
    """NOTE(timed): the time bounds of an action, `time L..U` (`upper` None: `time L..`, no
    deadline; `time E` is E..E; `urgent` is 0..0). L and U are integer expressions over the
    constants, the action's parameters and the state, evaluated when an instance becomes enabled
    (and again when it fires and stays enabled). Semantics (timed transition systems,
    Henzinger-Manna-Pnueli): an instance continuously enabled for t time units may fire once
    t >= L and must fire or become disabled before t exceeds U; time passes for all enabled
    instances at once. A spec with a `time` anywhere is *timed*: checker/engines/timed/ decides it with
    zones. `cost` is retired (NOTE(retired-cost)). docs/timed.md is the reference."""

    lower: "Expr"
    upper: "Expr | None"
    urgent: bool = False
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


def iter_stmts(body: tuple[Stmt, ...]) -> Iterator[Stmt]:
    """Every statement of a block, nested ones included, in source order."""
    for s in body:
        yield s
        if isinstance(s, If):
            yield from iter_stmts(s.then)
            yield from iter_stmts(s.else_)
        elif isinstance(s, For):
            yield from iter_stmts(s.body)


class PropertyKind(enum.Enum):
    INVARIANT = "invariant"
    TRANSITION = "transition"
    LIVENESS = "liveness"
    DEADLOCK = "deadlock"
    RANGE = "range"
    LATENCY = "latency"


class LivenessKind(enum.Enum):
    EVENTUALLY = "eventually"  # from every initial state, q eventually holds
    ALWAYS_EVENTUALLY = "always eventually"  # q holds infinitely often
    LEADS_TO = "leads_to"  # whenever p holds, q holds then or later


@dataclass(frozen=True, slots=True)
class Invariant:
    name: str
    expr: Expr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class TransitionProperty:
    """A predicate over (state, next state); primed VarRefs read the next state."""

    name: str
    expr: Expr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Liveness:
    name: str
    kind: LivenessKind
    p: Expr | None  # only for LEADS_TO
    q: Expr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Latency:
    """`latency NAME: from P to Q [within B]`.

    NOTE(latency): elapsed time in the one timed semantics (NOTE(timed), docs/timed.md). A
    *measurement* starts at time 0 in an initial P-state and at every step from a non-P state into
    a P-state, and ends at the first later step into a Q-state (0 when the state is both). The
    property reports the exact least and greatest measurement over every behaviour, each with a
    witness; the greatest is unbounded (null, with a lasso) only when a time-divergent behaviour
    avoids Q forever after a start. `within B`: holds iff the greatest is at most B; without it,
    iff the greatest is bounded. checker/engines/timed/latency.py computes it on the zone graph.
    An untimed action is `0..` (it may wait forever), so on a spec with no `time` at all time can
    pass forever in every state: the greatest measurement is 0 where every start is a Q-state and
    unbounded otherwise (the lasso stays in the start's state), the least is 0 where Q can be
    reached from a start. Every engine that decides it gives exactly that (with a warning that the
    spec has no `time`); the engines without clocks answer `unknown` (docs/timed.md, "A latency
    on an untimed spec"). The legacy `cost` that summed durations along one interleaving is
    retired (NOTE(retired-cost) in spec/retired.py)."""

    name: str
    p: Expr
    q: Expr
    within: int | None = None
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Constraint:
    name: str
    expr: Expr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


# NOTE(assumptions): what a model assumes, named so that every proof can say what it rests on.
# `assume NAME: EXPR` without primes is a state assumption: behaviours stay inside it. The type
# checker lowers it to guards every engine already honours: an initial state outside it does not
# exist (`Model.initial_assumptions`, read wherever initial states are made: gpmodel/model.py,
# gpmodel/jit.py, checker/engines/smt/encode.py, checker/engines/param/encode.py) and a `require` at the end of
# every action's body (where the variables hold the post-state) keeps each step inside it. With
# primes it is a step assumption: a step violating it is not taken; it is lowered to a `require`
# at the end of every action's body, with `x'` read as the variable's value there and `x` as a
# scalar `let` snapshot taken at the body's start (spec/assume.py). `require assume NAME: EXPR`
# is one guard of one action. Every such `Require` carries `assumption=NAME`, so an engine can
# drop or relax one assumption (checker/api/assumptions.py) and the SMT engines can track it.


@dataclass(frozen=True, slots=True)
class Assumption:
    """A named model assumption. `kind`: "state" (a state predicate), "step" (primed: a
    predicate on steps) or "guard" (`require assume` in the actions listed in `actions`)."""

    name: str
    kind: str
    expr: Expr | None  # the declared predicate (None for a guard: each action has its own)
    actions: tuple[str, ...] = ()
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Cover:
    """`cover NAME: EXPR`: is a state satisfying EXPR reachable (inside the assumptions)?"""

    name: str
    expr: Expr
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Expectation:
    """`expect PROPERTY: VERDICT`: the verdict a model is known to have (for regression runs)."""

    property: str
    verdict: str  # one of EXPECTABLE_VERDICTS
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


# `holds` accepts proved or holds_to_bound; the others must match exactly.
EXPECTABLE_VERDICTS = ("proved", "holds", "holds_to_bound", "violated", "unknown", "reached", "unreachable")
BUILTIN_PROPERTIES = ("deadlock", "range")  # results every engine reports; no user property may take these names


@dataclass(frozen=True, slots=True)
class Constant:
    name: str
    value: int
    default: int
    doc: str = ""
    overridden: bool = False
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Model:
    name: str
    description: str
    doc: str  # the comment block that follows the `model` line
    file: str
    constants: tuple[Constant, ...]
    enums: tuple[EnumType, ...]
    structs: tuple[StructType, ...]
    vars: tuple[Var, ...]
    actions: tuple[Action, ...]
    invariants: tuple[Invariant, ...]
    transitions: tuple[TransitionProperty, ...]
    liveness: tuple[Liveness, ...]
    terminals: tuple[Expr, ...]
    constraints: tuple[Constraint, ...]
    allow_deadlock: bool
    expectations: tuple[Expectation, ...]
    # The symmetric types declared (NOTE(symmetry)), each an IntType with `symmetric` set.
    symmetric: tuple[IntType, ...] = ()
    latencies: tuple[Latency, ...] = ()  # NOTE(latency)
    # NOTE(nonaffine-constants): (clause, "file:line:col") for each integer the type checker folded
    # from a constant expression that is not affine in the symbolic constants when every set of
    # constants in the clause has a symbolic one (`const D = N / 10`: ((N,),); `0..NB*BLEN`:
    # ((NB,), (BLEN,)); spec/affinity.py). One instance's IR cannot show that dependence; `--for-all`
    # must not take such an integer for affine.
    nonaffine: tuple[tuple[tuple[tuple[str, ...], ...], str], ...] = field(default=(), compare=False, repr=False)
    assumptions: tuple[Assumption, ...] = ()  # NOTE(assumptions)
    covers: tuple[Cover, ...] = ()
    # NOTE(refinement): the resolved `refines` declaration (spec/refines.py's Refinement), or None
    refinement: object | None = field(default=None, compare=False, repr=False)

    @property
    def initial_assumptions(self) -> tuple[Expr, ...]:
        """The state assumptions: an initial state that violates one does not exist."""
        return tuple(a.expr for a in self.assumptions if a.kind == "state" and a.expr is not None)

    @property
    def const_values(self) -> dict[str, int]:
        return {c.name: c.value for c in self.constants}

    def var_offsets(self) -> list[int]:
        """The first slot of each variable (NOTE(slots))."""
        out, off = [], 0
        for v in self.vars:
            out.append(off)
            off += slot_count(v.type)
        return out

    @property
    def slot_total(self) -> int:
        return sum(slot_count(v.type) for v in self.vars)

    def action(self, name: str) -> Action | None:
        for a in self.actions:
            if a.name == name:
                return a
        return None

    def state_predicates(self) -> list[tuple[str | None, Expr]]:
        """Every state predicate, each evaluated in every reachable state (NOTE(predicate-errors)),
        with the property it belongs to: an invariant's or liveness property's name, None for a
        constraint (needed whatever is checked), "deadlock" for a terminal predicate."""
        out: list[tuple[str | None, Expr]] = [(p.name, p.expr) for p in self.invariants]
        out += [(None, c.expr) for c in self.constraints] + [("deadlock", e) for e in self.terminals]
        for p in self.liveness:
            out += ([(p.name, p.p)] if p.p is not None else []) + [(p.name, p.q)]
        return out

    def property_names(self) -> list[str]:
        return (
            [p.name for p in self.invariants]
            + [p.name for p in self.transitions]
            + [p.name for p in self.liveness]
            + [p.name for p in self.latencies]
            + [c.name for c in self.covers]
        )

    @property
    def has_time(self) -> bool:
        """Whether some action has a `time` bound or is `urgent` (NOTE(timed)): the spec is
        decided in the timed semantics (checker/engines/timed/)."""
        return any(a.time is not None for a in self.actions)

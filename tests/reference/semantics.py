"""A deliberately plain interpreter of gpspec, written from the language description
(../shared/LANGUAGE.md and the README's "gpspec language" section), not from `gpmodel` or
`gpcheck.spec.ir`: it only borrows the parser's AST (`gpcheck.spec.parser.parse_spec`).

It exists to judge the engines, so it favours obviousness over speed: values are plain Python
values (int, bool, enum member name, tuples for arrays and structs), a state is a tuple with one
value per variable, and every expression is evaluated by walking the AST.

Decisions the description leaves implicit, taken as the README states them:
- `and`, `or`, `implies` and `if-then-else` evaluate lazily (left to right); `all`/`any` stop at
  the first element that decides them, in domain order; `count`, `sum`, `min`, `max` evaluate
  every element.
- Integers are unbounded inside expressions; only writes (against the variable's declared range)
  and indexes (against the array's index domain) are checked; `/` and `%` are floor division
  and modulo; a zero divisor is a modelling error.
- A step runs the statements in order; the first failing `require` disables the instance, the
  first modelling error (reached with every earlier `require` true) is an error of the instance.
- Module instances (`use M as NAME(...)`, `use M as NAME[INDEX](...)`, docs/language.md): an
  instance is one variable whose value is the module's whole state (a record of its variables; an
  array of instances is an array of them), read as `NAME.x` / `NAME[i].x` like a struct field. An
  instance's action runs the module's own step on that part of the state (the module is a model of
  its own here, with its constants); the element of an array is the action's first argument. Its
  properties hold of every element. The JSON shape names the module's variables `NAME.x` (an
  array's: one list entry per element). `driving` and `call` are not described here.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Mapping

from gpcheck.spec import syntax as S
from gpcheck.spec.parser import parse_spec

Value = Any  # int | bool | str (enum member) | tuple (array elements / struct fields)
State = tuple


class ModellingError(Exception):
    """A write out of range, an index out of range or a division by zero."""


class Disabled(Exception):
    """A `require` failed: the action instance is not enabled."""


# --------------------------------------------------------------------------- types
@dataclass(frozen=True)
class BoolType:
    def values(self) -> list[Value]:
        return [False, True]


@dataclass(frozen=True)
class IntType:
    lo: int
    hi: int

    def values(self) -> list[Value]:
        return list(range(self.lo, self.hi + 1))


@dataclass(frozen=True)
class EnumType:
    name: str
    members: tuple[str, ...]

    def values(self) -> list[Value]:
        return list(self.members)


@dataclass(frozen=True)
class StructType:
    name: str
    fields: tuple[tuple[str, Any], ...]

    def values(self) -> list[Value]:
        return [tuple(c) for c in itertools.product(*(t.values() for _, t in self.fields))]

    def field_index(self, name: str) -> int:
        return [f for f, _ in self.fields].index(name)


@dataclass(frozen=True)
class ArrayType:
    index: Any  # IntType | EnumType | BoolType
    elem: Any

    def values(self) -> list[Value]:
        return [tuple(c) for c in itertools.product(*(self.elem.values() for _ in self.index.values()))]

    def position(self, idx: Value) -> int:
        domain = self.index.values()
        if idx not in domain or isinstance(idx, bool) != isinstance(domain[0], bool):
            raise ModellingError(f"index {idx} out of range {domain[0]}..{domain[-1]}")
        return domain.index(idx)


@dataclass(frozen=True)
class InstanceType:
    """The state of one module instance: a record with one field per module variable."""

    name: str
    model: Any  # Model (the module, its constants bound)

    @property
    def fields(self) -> tuple[tuple[str, Any], ...]:
        return tuple(self.model.vars)

    def values(self) -> list[Value]:
        return self.model.initial_states()  # only initial values are ever enumerated (`any` is the module's)

    def field_index(self, name: str) -> int:
        return [f for f, _ in self.fields].index(name)


@dataclass(frozen=True)
class Scoped:
    """A property of a module instance: `expr` of module `model`, in the instance's state (every
    element's, for an array)."""

    var: str
    model: Any
    expr: Any
    array: bool


def contains(t: Any, v: Value) -> bool:
    """Whether value `v` lies in type `t` (ranges checked element by element)."""
    if isinstance(t, IntType):
        return not isinstance(v, bool) and t.lo <= v <= t.hi
    if isinstance(t, ArrayType):
        return all(contains(t.elem, x) for x in v)
    if isinstance(t, (StructType, InstanceType)):
        return all(contains(ft, x) for (_, ft), x in zip(t.fields, v))
    return True


# --------------------------------------------------------------------------- the model
@dataclass
class Action:
    name: str
    params: list[tuple[str, Any]]
    body: tuple
    internal: bool
    fair: bool
    scope: Any = None  # a module instance's action: (instance variable, module action, is an array)


@dataclass
class Model:
    consts: dict[str, int]
    enums: dict[str, EnumType]
    members: dict[str, str]  # member name -> enum name
    structs: dict[str, StructType]
    vars: list[tuple[str, Any]]
    inits: list[Any]
    actions: list[Action]
    invariants: list[tuple[str, Any]] = field(default_factory=list)
    transitions: list[tuple[str, Any]] = field(default_factory=list)
    liveness: list[tuple[str, str, Any, Any]] = field(default_factory=list)  # name, kind, p, q
    terminals: list[Any] = field(default_factory=list)
    allow_deadlock: bool = False
    constraints: list[tuple[str, Any]] = field(default_factory=list)
    symmetric: dict[str, IntType] = field(default_factory=dict)  # `symmetric NAME = lo..hi`: a plain range here
    latencies: list[tuple[str, Any, Any, int | None]] = field(default_factory=list)  # name, p, q, within

    @property
    def var_index(self) -> dict[str, int]:
        return {name: i for i, (name, _) in enumerate(self.vars)}

    def instances(self) -> list[tuple[Action, tuple[Value, ...]]]:
        """Every action instance: an action and one value per parameter, in declaration order."""
        out = []
        for a in self.actions:
            for args in itertools.product(*(t.values() for _, t in a.params)):
                out.append((a, tuple(args)))
        return out

    def initial_states(self) -> list[State]:
        per_var = [_init_values(self, t, init) for (_, t), init in zip(self.vars, self.inits)]
        return [tuple(c) for c in itertools.product(*per_var)]


def load(text: str, consts: Mapping[str, int] | None = None, modules: Mapping[str, str] | None = None) -> Model:
    """Parse `text` and resolve its declarations into a `Model` (constants overridden by `consts`;
    `modules`: the text of each module an instance names, by its quoted path)."""
    spec = parse_spec(text, "ref.gpspec")
    overrides = dict(consts or {})
    m = Model({}, {}, {}, {}, [], [], [])
    instance_consts: dict[str, dict[str, int]] = {}  # `--const NAME.C=v` of an instance's constant
    for k, v in overrides.items():
        if "." in k:
            inst, c = k.rsplit(".", 1)
            instance_consts.setdefault(inst, {})[c] = v
    fair_names: set[str] = set()
    for d in spec.decls:
        if isinstance(d, S.ConstDecl):
            m.consts[d.name] = overrides[d.name] if d.name in overrides else _const(m, d.value)
        elif isinstance(d, S.EnumDecl):
            m.enums[d.name] = EnumType(d.name, tuple(n for n, _ in d.members))
            for n, _ in d.members:
                m.members[n] = d.name
        elif isinstance(d, S.StructDecl):
            m.structs[d.name] = StructType(d.name, tuple((n, _type(m, t)) for n, t, _ in d.fields))
        elif isinstance(d, S.VarDecl):
            m.vars.append((d.name, _type(m, d.type)))
            m.inits.append(d.init)
        elif isinstance(d, S.ActionDecl):
            params = [(p.name, _type(m, p.type)) for p in d.params]
            m.actions.append(Action(d.name, params, d.body, d.internal, d.fair))
        elif isinstance(d, S.FairDecl):
            fair_names.update(n for n, _ in d.names)
        elif isinstance(d, S.InvariantDecl):
            m.invariants.append((d.name, d.expr))
        elif isinstance(d, S.TransitionDecl):
            m.transitions.append((d.name, d.expr))
        elif isinstance(d, S.LivenessDecl):
            m.liveness.append((d.name, d.kind.value, d.p, d.q))
        elif isinstance(d, S.TerminalDecl):
            m.terminals.append(d.expr)
        elif isinstance(d, S.AllowDeadlock):
            m.allow_deadlock = True
        elif isinstance(d, S.ConstraintDecl):
            m.constraints.append((d.name, d.expr))
        elif isinstance(d, S.SymmetricDecl):
            m.symmetric[d.name] = _type(m, d.range)
        elif isinstance(d, S.LatencyDecl):
            m.latencies.append((d.name, d.p, d.q, None if d.within is None else _const(m, d.within)))
        elif isinstance(d, S.InstanceDecl):
            _instance(m, d, dict(modules or {}), instance_consts.get(d.name, {}))
    for a in m.actions:
        a.fair = a.fair or a.name in fair_names
    return m


def _instance(m: Model, d: Any, modules: dict[str, str], overrides: dict[str, int]) -> None:
    """A module instance: one state variable holding the module's state, its actions and properties."""
    bound = {n: _const(m, e) for n, e, _ in d.bindings}
    bound.update(overrides)
    sub = load(modules[d.module], bound, modules)
    t: Any = InstanceType(d.name, sub)
    array = d.index is not None
    if array:
        t = ArrayType(_type(m, d.index), t)
    m.vars.append((d.name, t))
    m.inits.append(_InstanceInit())
    for en in sub.enums.values():  # the module's enum members are values the using model names too
        m.enums.setdefault(en.name, en)
        for member in en.members:
            m.members.setdefault(member, en.name)
    for name, c in sub.consts.items():
        m.consts[f"{d.name}.{name}"] = c
    element = [(f"{d.name}.self", t.index)] if array else []
    fair = {a.name for a in sub.actions if a.fair}
    for a in sub.actions:
        m.actions.append(Action(f"{d.name}.{a.name}", element + a.params, a.body, a.internal, a.name in fair,
                                scope=(d.name, a, array)))
    for name, e in sub.invariants:
        m.invariants.append((f"{d.name}.{name}", Scoped(d.name, sub, e, array)))
    for name, e in sub.transitions:
        m.transitions.append((f"{d.name}.{name}", Scoped(d.name, sub, e, array)))
    for name, e in sub.constraints:
        m.constraints.append((f"{d.name}.{name}", Scoped(d.name, sub, e, array)))
    for e in sub.terminals:
        m.terminals.append(Scoped(d.name, sub, e, array))
    m.allow_deadlock = m.allow_deadlock or sub.allow_deadlock


class _InstanceInit:
    """The initialiser of an instance variable: the module's initial states."""


def _const(m: Model, e: Any) -> int:
    return Evaluator(m, (), None).eval(e, {})


def _type(m: Model, t: Any) -> Any:
    if isinstance(t, S.BoolT):
        return BoolType()
    if isinstance(t, S.RangeT):
        return IntType(_const(m, t.lo), _const(m, t.hi))
    if isinstance(t, S.NamedT):
        if t.name in m.enums:
            return m.enums[t.name]
        if t.name in m.symmetric:
            return m.symmetric[t.name]
        return m.structs[t.name]
    if isinstance(t, S.ArrayT):
        return ArrayType(_type(m, t.index), _type(m, t.elem))
    raise TypeError(t)


def _init_values(m: Model, t: Any, init: Any) -> list[Value]:
    """Every value an initialiser allows for type `t` (`any` allows all of them)."""
    if isinstance(init, _InstanceInit):
        if isinstance(t, ArrayType):
            return [tuple(c) for c in itertools.product(*(t.elem.values() for _ in t.index.values()))]
        return t.values()
    if isinstance(init, S.AnyInit):
        return t.values()
    if isinstance(init, S.ListInit):
        assert isinstance(t, ArrayType), "list initialiser of a non-array"
        per = [_init_values(m, t.elem, i) for i in init.items]
        return [tuple(c) for c in itertools.product(*per)]
    if isinstance(t, ArrayType):  # one value (or struct literal) for every element
        per = _init_values(m, t.elem, init)
        return [tuple(c) for c in itertools.product(*(per for _ in t.index.values()))]
    if isinstance(init, S.StructInit):
        given = dict(init.items)
        per = [_init_values(m, ft, given[f]) for f, ft in t.fields]
        return [tuple(c) for c in itertools.product(*per)]
    if isinstance(t, StructType):
        per_field = [_init_values(m, ft, init) for _, ft in t.fields]
        return [tuple(c) for c in itertools.product(*per_field)]
    v = Evaluator(m, (), None).eval(init, {})
    assert contains(t, v), f"initial value {v} outside its type"
    return [v]


# --------------------------------------------------------------------------- evaluation
def _domain(m: Model, d: Any) -> list[Value]:
    """The values of a fold's or `for`'s domain (a range may be empty)."""
    if isinstance(d, S.RangeT):
        return list(range(_const(m, d.lo), _const(m, d.hi) + 1))
    return _type(m, d).values()


class Evaluator:
    """Evaluates expressions in one state (and, for primed expressions, its successor)."""

    def __init__(self, m: Model, state: State | list, nxt: State | None) -> None:
        self.m = m
        self.state = state
        self.nxt = nxt
        self.index = m.var_index
        self.types = [t for _, t in m.vars]

    def eval(self, e: Any, env: dict[str, Value]) -> Value:
        if isinstance(e, S.IntLit):
            return e.value
        if isinstance(e, S.BoolLit):
            return e.value
        if isinstance(e, S.Name):
            if e.name in env:
                return env[e.name]
            if e.name in self.index:
                return self.state[self.index[e.name]]
            if e.name in self.m.consts:
                return self.m.consts[e.name]
            if e.name in self.m.members:
                return e.name
            raise NameError(e.name)
        if isinstance(e, S.Prime):
            assert self.nxt is not None, "primed expression outside a transition property"
            return Evaluator(self.m, self.nxt, None).eval(e.operand, env)
        if isinstance(e, S.IndexE):
            base = self.eval(e.base, env)
            t = self.type_of(e.base, env)
            return base[t.position(self.eval(e.index, env))]
        if isinstance(e, S.FieldE):
            try:
                bt = self.type_of(e.base, env) if _lvalue_shaped(e.base) else None
            except (KeyError, TypeError):
                bt = None
            if isinstance(bt, InstanceType) and e.name in bt.model.consts:
                return bt.model.consts[e.name]
            base = self.eval(e.base, env)
            return base[self.type_of(e.base, env).field_index(e.name)]
        if isinstance(e, S.Neg):
            return -self.eval(e.operand, env)
        if isinstance(e, S.Not):
            return not self.eval(e.operand, env)
        if isinstance(e, S.IteE):
            return self.eval(e.then if self.eval(e.cond, env) else e.else_, env)
        if isinstance(e, S.BinE):
            return self._binary(e.op.value, e.lhs, e.rhs, env)
        if isinstance(e, S.FoldE):
            return self._fold(e.kind.value, e.name, _domain(self.m, e.domain), e.body, env)
        raise TypeError(e)

    def _binary(self, op: str, lhs: Any, rhs: Any, env: dict[str, Value]) -> Value:
        a = self.eval(lhs, env)
        if op == "and":
            return bool(a) and bool(self.eval(rhs, env))
        if op == "or":
            return bool(a) or bool(self.eval(rhs, env))
        if op == "implies":
            return (not a) or bool(self.eval(rhs, env))
        b = self.eval(rhs, env)
        if op in ("/", "%"):
            if b == 0:
                raise ModellingError("division by zero")
            return a // b if op == "/" else a % b
        return {
            "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
            "==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b,
            "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b,
        }[op]()

    def _fold(self, kind: str, name: str, domain: list[Value], body: Any, env: dict[str, Value]) -> Value:
        if kind == "all":
            return all(self.eval(body, {**env, name: v}) for v in domain)  # stops at the first false
        if kind == "any":
            return any(self.eval(body, {**env, name: v}) for v in domain)  # stops at the first true
        vals = [self.eval(body, {**env, name: v}) for v in domain]
        if kind == "count":
            return sum(1 for v in vals if v)
        if kind == "sum":
            return sum(vals)
        return min(vals) if kind == "min" else max(vals)

    def type_of(self, e: Any, env: dict[str, Value]) -> Any:
        """The declared type of an lvalue-shaped expression (a variable, element or field)."""
        if isinstance(e, S.Name):
            return self.types[self.index[e.name]]
        if isinstance(e, S.Prime):
            return self.type_of(e.operand, env)
        if isinstance(e, S.IndexE):
            return self.type_of(e.base, env).elem
        if isinstance(e, S.FieldE):
            st = self.type_of(e.base, env)
            return dict(st.fields)[e.name]
        raise TypeError(f"no declared type for {e}")


# --------------------------------------------------------------------------- steps
def _lvalue_shaped(e: Any) -> bool:
    return isinstance(e, S.Name) or isinstance(e, (S.IndexE, S.FieldE)) and _lvalue_shaped(e.base) \
        or isinstance(e, S.Prime) and _lvalue_shaped(e.operand)


def step(m: Model, action: Action, args: tuple[Value, ...], s: State) -> State | None:
    """The state after `action(args)` from `s`, or None if a `require` fails; raises
    ModellingError on a modelling error reached before any failing `require`."""
    if action.scope is not None:  # a module instance's action: the module's step on its part
        var, sub_action, array = action.scope
        i = m.var_index[var]
        t = m.vars[i][1]
        if array:
            pos = t.position(args[0])
            part = step(t.elem.model, sub_action, args[1:], s[i][pos])
            if part is None:
                return None
            return s[:i] + (_replace(s[i], [pos], part),) + s[i + 1:]
        part = step(t.model, sub_action, args, s[i])
        return None if part is None else s[:i] + (part,) + s[i + 1:]
    state = list(s)
    env = {name: v for (name, _), v in zip(action.params, args)}
    try:
        _run(m, action.body, state, env)
    except Disabled:
        return None
    return tuple(state)


def _run(m: Model, body: tuple, state: list, env: dict[str, Value]) -> None:
    env = dict(env)  # a `let` is visible in the rest of its own block only
    ev = Evaluator(m, state, None)
    for st in body:
        if isinstance(st, S.RequireS):
            if not ev.eval(st.cond, env):
                raise Disabled
        elif isinstance(st, S.LetS):
            env[st.name] = ev.eval(st.value, env)
        elif isinstance(st, S.IfS):
            _run(m, st.then if ev.eval(st.cond, env) else st.else_, state, env)
        elif isinstance(st, S.ForS):
            for v in _domain(m, st.domain):
                _run(m, st.body, state, {**env, st.name: v})
        elif isinstance(st, S.AssignS):
            _assign(ev, st.target, ev.eval(st.value, env), state, env)
        else:
            raise TypeError(st)


def _assign(ev: Evaluator, target: Any, value: Value, state: list, env: dict[str, Value]) -> None:
    """Write `value` at `target` (a variable, element or field), checking the declared range."""
    t = ev.type_of(target, env)
    if not contains(t, value):
        raise ModellingError(f"write of {value} outside the declared range")
    path: list[tuple[Any, Any]] = []  # (container type, position) from the variable down
    node = target
    while not isinstance(node, S.Name):
        ct = ev.type_of(node.base, env)
        pos = ct.position(ev.eval(node.index, env)) if isinstance(node, S.IndexE) else ct.field_index(node.name)
        path.append((ct, pos))
        node = node.base
    path.reverse()
    i = ev.index[node.name]
    state[i] = _replace(state[i], [p for _, p in path], value)


def _replace(container: Value, positions: list[int], value: Value) -> Value:
    if not positions:
        return value
    head, rest = positions[0], positions[1:]
    items = list(container)
    items[head] = _replace(items[head], rest, value)
    return tuple(items)


def holds(m: Model, e: Any, s: State, nxt: State | None = None) -> bool:
    """Evaluate a predicate (raises ModellingError when it fails to evaluate)."""
    if isinstance(e, Scoped):
        i = m.var_index[e.var]
        parts = list(s[i]) if e.array else [s[i]]
        nexts = (list(nxt[i]) if e.array else [nxt[i]]) if nxt is not None else [None] * len(parts)
        return all(holds(e.model, e.expr, p, q) for p, q in zip(parts, nexts))
    return bool(Evaluator(m, s, nxt).eval(e, {}))


# --------------------------------------------------------------------------- JSON shape
def to_json(m: Model, s: State) -> dict[str, Any]:
    """A state as the README's JSON shape: int-indexed arrays as lists, enum/bool-indexed ones
    as objects keyed by member name / "false" / "true", structs as objects."""
    out: dict[str, Any] = {}
    for (name, t), v in zip(m.vars, s):
        inst = t.elem if isinstance(t, ArrayType) and isinstance(t.elem, InstanceType) else t
        if isinstance(inst, InstanceType):  # the module's variables as NAME.x (an array's: per element)
            parts = [to_json(inst.model, p) for p in (v if inst is not t else [v])]
            for k in parts[0] if parts else to_json(inst.model, inst.model.initial_states()[0]):
                out[f"{name}.{k}"] = [p[k] for p in parts] if inst is not t else parts[0][k]
        else:
            out[name] = _json_value(t, v)
    return out


def _json_value(t: Any, v: Value) -> Any:
    if isinstance(t, ArrayType):
        elems = [_json_value(t.elem, x) for x in v]
        if isinstance(t.index, IntType):
            return elems
        keys = [str(k).lower() if isinstance(k, bool) else k for k in t.index.values()]
        return dict(zip(keys, elems))
    if isinstance(t, StructType):
        return {f: _json_value(ft, x) for (f, ft), x in zip(t.fields, v)}
    return v


def from_json(m: Model, d: Mapping[str, Any]) -> State:
    """The inverse of `to_json` (raises KeyError / ValueError on a malformed state)."""
    out = []
    used: set[str] = set()
    for name, t in m.vars:
        inst = t.elem if isinstance(t, ArrayType) and isinstance(t.elem, InstanceType) else t
        if isinstance(inst, InstanceType):
            keys = [k for k in d if k.startswith(name + ".")]
            used.update(keys)
            sub = {k[len(name) + 1:]: d[k] for k in keys}
            if inst is t:
                out.append(from_json(inst.model, sub))
            else:
                n = len(t.index.values())
                out.append(tuple(from_json(inst.model, {k: v[j] for k, v in sub.items()}) for j in range(n)))
        else:
            if name not in d:
                raise ValueError(f"state lacks variable {name}")
            used.add(name)
            out.append(_from_json_value(t, d[name]))
    if used != set(d):
        raise ValueError(f"state has variables {sorted(d)}, the model {[n for n, _ in m.vars]}")
    return tuple(out)


def _from_json_value(t: Any, v: Any) -> Value:
    if isinstance(t, ArrayType):
        if isinstance(t.index, IntType):
            items = list(v)
        else:
            keys = [str(k).lower() if isinstance(k, bool) else k for k in t.index.values()]
            if set(v) != set(keys):
                raise ValueError(f"array keys {sorted(v)} != {keys}")
            items = [v[k] for k in keys]
        if len(items) != len(t.index.values()):
            raise ValueError("array length")
        return tuple(_from_json_value(t.elem, x) for x in items)
    if isinstance(t, StructType):
        return tuple(_from_json_value(ft, v[f]) for f, ft in t.fields)
    if isinstance(t, BoolType) and not isinstance(v, bool):
        raise ValueError(f"{v!r} is not a bool")
    return v


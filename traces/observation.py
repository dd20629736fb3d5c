"""Observations and action arguments of trace events, resolved against one model instance.

An observation (an event's `state`, the header's `init`) names slots of the flat state
(NOTE(slots) in spec/ir.py) by dotted path or nested value; this module turns it into a
`Match`: the observed slot positions and their values, so that matching a candidate state is
one C-level `itemgetter` call and a tuple comparison. Compiling is cached by the *shape* of the
observation (its keys, nested sizes), so a million events with the same keys cost one compile
and a generated extractor per event. Why here and not in gpmodel: the rules for what a trace may
write (lists by position, member names, out-of-range values) are the trace format's, see
docs/trace-format.md.

Bad input (an unknown variable, a wrong kind of value, an unknown enum member) raises
`TraceError`; an integer outside a variable's declared range is *not* bad input: it is kept,
matches no state, and replay reports the divergence.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Callable, NamedTuple

from gpcheck.spec import ir
from gpcheck.spec.errors import TraceError

Value = Any


def _index_key(t: ir.ArrayType, v: int) -> str:
    if isinstance(t.index, ir.EnumType):
        return t.index.members[v]
    if isinstance(t.index, ir.BoolType):
        return "true" if v else "false"
    return str(v)


class Match(NamedTuple):
    """Observed slots and their values; `full` when every slot of the state is observed.
    (A NamedTuple: one is built per replayed event.)"""

    slots: tuple[int, ...]
    values: tuple[int, ...]
    full: bool

    def matches(self, state: tuple[int, ...]) -> bool:
        """Whether `state` agrees with every observed slot (replay uses a faster getter)."""
        if self.full:
            return state == self.values
        return all(state[i] == v for i, v in zip(self.slots, self.values))

    def mismatches(self, state: tuple[int, ...]) -> list[tuple[int, int, int]]:
        """(slot, observed value, state's value) for every disagreeing slot."""
        return [(i, v, state[i]) for i, v in zip(self.slots, self.values) if state[i] != v]


class _Fallback(Exception):
    """The fast extractor met a shape it was not generated for."""


class Observer:
    """Compiles observations and arguments for one `ir.Model` (see module doc)."""

    def __init__(self, model: ir.Model):
        self.model = model
        self.slot_names: list[str] = []
        self.slot_types: list[ir.ScalarType] = []
        self._vars = {v.name: v for v in model.vars}
        self._offsets = dict(zip((v.name for v in model.vars), model.var_offsets()))
        for v in model.vars:
            for path, st in ir.leaf_paths(v.type):
                self.slot_names.append(self._dotted(v, path))
                self.slot_types.append(st)
        self.size = len(self.slot_names)
        self._enum_index = {
            e.name: {m: i for i, m in enumerate(e.members)} for e in model.enums
        }
        # shape key -> (extractor(dict) -> tuple | raises, slots, full, getter)
        self._fast: dict[tuple[Any, ...], tuple[Callable[[dict[str, Any]], tuple[int, ...]], tuple[int, ...], bool]] = {}

    @staticmethod
    def _dotted(v: ir.Var, path: tuple[ir.Accessor, ...]) -> str:
        parts = [v.name]
        t: ir.Type = v.type
        for acc in path:
            if isinstance(t, ir.ArrayType):
                parts.append(_index_key(t, int(acc)))
                t = t.elem
            else:
                assert isinstance(t, ir.StructType)
                parts.append(str(acc))
                ft = t.field_type(str(acc))
                assert ft is not None
                t = ft
        return ".".join(parts)

    # ------------------------------------------------------------------ paths and values
    def _resolve(self, key: str, t: ir.Type, off: int, comp: str, where: str) -> tuple[ir.Type, int]:
        """One accessor step `comp` inside a value of type `t` at slot `off`."""
        if isinstance(t, ir.ArrayType):
            idx = t.index
            if isinstance(idx, ir.EnumType):
                if comp not in idx.members:
                    raise TraceError(f"{where}: '{key}': {comp!r} is not a member of {idx.name} ({', '.join(idx.members)})")
                pos = idx.members.index(comp)
            elif isinstance(idx, ir.BoolType):
                if comp not in ("true", "false"):
                    raise TraceError(f"{where}: '{key}': a bool index is written true or false, got {comp!r}")
                pos = int(comp == "true")
            else:
                try:
                    i = int(comp)
                except ValueError:
                    raise TraceError(f"{where}: '{key}': array index {comp!r} is not an integer") from None
                assert idx.lo is not None and idx.hi is not None
                if not idx.lo <= i <= idx.hi:
                    raise TraceError(f"{where}: '{key}': index {i} is outside {idx}")
                pos = i - idx.lo
            return t.elem, off + pos * ir.slot_count(t.elem)
        if isinstance(t, ir.StructType):
            ft = t.field_type(comp)
            if ft is None:
                raise TraceError(
                    f"{where}: '{key}': {t.name} has no field {comp!r} (fields: {', '.join(f for f, _ in t.fields)})"
                )
            return ft, off + ir.slot_offset(t, comp)[0]
        raise TraceError(f"{where}: '{key}': {comp!r} selects inside a scalar of type {t}")

    def scalar(self, t: ir.ScalarType, value: Any, key: str, where: str) -> int:
        """A written scalar as a slot value (out-of-range ints are kept, see module doc)."""
        if isinstance(t, ir.BoolType):
            if isinstance(value, bool):
                return int(value)
            raise TraceError(f"{where}: '{key}' is a bool: expected true or false, got {value!r}")
        if isinstance(t, ir.EnumType):
            if isinstance(value, str) and value in t.members:
                return t.members.index(value)
            raise TraceError(f"{where}: '{key}' is a {t.name}: expected one of {', '.join(t.members)}, got {value!r}")
        if isinstance(value, bool) or not isinstance(value, int):
            raise TraceError(f"{where}: '{key}' is an integer ({t}): got {value!r}")
        return value

    def _walk(self, key: str, t: ir.Type, off: int, value: Any, where: str, out: dict[int, int]) -> None:
        if isinstance(value, dict):
            if ir.is_scalar(t):
                raise TraceError(f"{where}: '{key}' is a {t}, not an array or struct")
            for k, v in value.items():
                st, so = t, off
                for comp in str(k).split("."):
                    st, so = self._resolve(key, st, so, comp, where)
                self._walk(f"{key}.{k}", st, so, v, where, out)
        elif isinstance(value, list):
            if not isinstance(t, ir.ArrayType):
                raise TraceError(f"{where}: '{key}' is a {t}, not an array: a list cannot be observed there")
            n = len(ir.domain_values(t.index))
            if len(value) != n:
                raise TraceError(f"{where}: '{key}' has {n} elements, the list gives {len(value)}")
            w = ir.slot_count(t.elem)
            base = ir.domain_values(t.index).start
            for i, v in enumerate(value):
                self._walk(f"{key}.{_index_key(t, base + i)}", t.elem, off + i * w, v, where, out)
        else:
            if not ir.is_scalar(t):
                raise TraceError(f"{where}: '{key}' is a {t}: observe it as an object or list, or name its elements")
            sv = self.scalar(t, value, key, where)  # type: ignore[arg-type]
            if out.get(off, sv) != sv:
                raise TraceError(f"{where}: '{key}' is observed twice with different values")
            out[off] = sv

    def _head(self, key: str) -> tuple[str, list[str]]:
        """The variable a dotted key names and the path inside it: the longest prefix that is a
        variable, as an instance's variables are dotted (`gpu0.rptr.1`: NOTE(instances))."""
        comps = key.split(".")
        for n in range(len(comps), 1, -1):
            head = ".".join(comps[:n])
            if head in self._vars:
                return head, comps[n:]
        return comps[0], comps[1:]

    def slots_of(self, obs: dict[str, Any], where: str) -> dict[int, int]:
        """The generic (slow, validating) path: {slot: value}."""
        out: dict[int, int] = {}
        for k, v in obs.items():
            head, comps = self._head(str(k))
            var = self._vars.get(head)
            if var is None:
                raise TraceError(f"{where}: unknown state variable '{head}' (variables: {', '.join(self._vars)})")
            t, off = var.type, self._offsets[head]
            for comp in comps:
                t, off = self._resolve(k, t, off, comp, where)
            self._walk(str(k), t, off, v, where, out)
        return out

    def compile(self, obs: dict[str, Any], where: str) -> Match:
        """An observation as a `Match` (validating)."""
        slots = self.slots_of(obs, where)
        order = sorted(slots)
        full = len(order) == self.size
        return Match(tuple(order), tuple(slots[i] for i in order), full)

    # ------------------------------------------------------------------ fast path
    def fast(self, obs: dict[str, Any], where: Callable[[], str]) -> Match:
        """Like `compile`, but cached per top-level key set: a generated extractor reads the
        values in slot order. Exact: the extractor checks every size, key and value kind it
        relies on and falls back to `compile` otherwise. `where()` gives the location for
        errors (built only when needed)."""
        entry = self._fast.get(tuple(obs))
        if entry is not None:
            try:
                return Match(entry[1], entry[0](obs), entry[2])
            except (_Fallback, KeyError, TypeError, IndexError, AttributeError):
                return self.compile(obs, where())
        w = where()
        m = self.compile(obs, w)
        self._fast[tuple(obs)] = self._generate(obs, m, w)
        return m

    def _generate(self, obs: dict[str, Any], m: Match, where: str) -> tuple[Callable[[dict[str, Any]], tuple[int, ...]], tuple[int, ...], bool]:
        """Generate `extract(d) -> values in slot order` for observations shaped like `obs`."""
        lines: list[str] = []
        exprs: dict[int, str] = {}  # slot -> expression
        consts: dict[str, Any] = {"_Fallback": _Fallback}
        counter = [0]
        ints: list[str] = []  # locals that must hold real ints (checked together at the end)

        def fresh() -> str:
            counter[0] += 1
            return f"v{counter[0]}"

        def gen(expr: str, t: ir.Type, off: int, value: Any) -> None:
            if isinstance(value, dict):
                name = fresh()
                lines.append(f"{name} = {expr}")
                lines.append(f"if type({name}) is not dict or len({name}) != {len(value)}: raise _Fallback")
                for k, v in value.items():
                    st, so = t, off
                    for comp in str(k).split("."):
                        st, so = self._resolve(k, st, so, comp, where)
                    gen(f"{name}[{k!r}]", st, so, v)
            elif isinstance(value, list):
                assert isinstance(t, ir.ArrayType)
                name = fresh()
                lines.append(f"{name} = {expr}")
                lines.append(f"if type({name}) is not list or len({name}) != {len(value)}: raise _Fallback")
                w = ir.slot_count(t.elem)
                for i, v in enumerate(value):
                    gen(f"{name}[{i}]", t.elem, off + i * w, v)
            else:
                if isinstance(t, ir.EnumType):
                    tab = fresh()
                    consts[tab] = self._enum_index[t.name]
                    exprs[off] = f"{tab}[{expr}]"
                elif isinstance(t, ir.BoolType):
                    # only a real bool may pass: `True is True`; ints fall back (and fail there)
                    exprs[off] = f"(1 if {expr} is True else 0 if {expr} is False else _bad())"
                else:
                    name = fresh()
                    lines.append(f"{name} = {expr}")
                    ints.append(name)
                    exprs[off] = name

        for k, v in obs.items():
            head, comps = self._head(str(k))
            var = self._vars[head]
            t, off = var.type, self._offsets[head]
            for comp in comps:
                t, off = self._resolve(k, t, off, comp, where)
            gen(f"d[{k!r}]", t, off, v)

        def _bad() -> int:
            raise _Fallback

        consts["_bad"] = _bad
        assert sorted(exprs) == list(m.slots), (sorted(exprs), m.slots)
        for i in range(0, len(ints), 16):
            chunk = ints[i:i + 16]
            lines.append(f"if {' or '.join(f'type({n}) is not int' for n in chunk)}: raise _Fallback")
        body = "\n    ".join(lines + [f"return ({', '.join(exprs[i] for i in m.slots)},)"])
        src = f"def extract(d):\n    {body}\n"
        ns: dict[str, Any] = dict(consts)
        exec(compile(src, "<observation>", "exec"), ns)
        return ns["extract"], m.slots, m.full

    # ------------------------------------------------------------------ arguments
    def arg_values(self, action: ir.Action, args: dict[str, Any], where: str) -> tuple[int | None, ...]:
        """Slot values of an event's arguments, one per parameter in order (None: not given)."""
        by_name = {p.name: i for i, p in enumerate(action.params)}
        out: list[int | None] = [None] * len(action.params)
        for k, v in args.items():
            i = by_name.get(k)
            if i is None:
                params = ", ".join(p.name for p in action.params) or "none"
                raise TraceError(f"{where}: action '{action.name}' has no parameter '{k}' (parameters: {params})")
            t = action.params[i].type
            assert ir.is_scalar(t)
            out[i] = self.scalar(t, v, k, where)  # type: ignore[arg-type]
        return tuple(out)

    def format_args(self, action: ir.Action, args: tuple[int, ...]) -> dict[str, Any]:
        """Instance arguments as users write them (the inverse of `arg_values`)."""
        return {p.name: ir.format_scalar(p.type, a) for p, a in zip(action.params, args)}  # type: ignore[arg-type]

    def slot_getter(self, slots: tuple[int, ...]) -> Callable[[tuple[int, ...]], Any]:
        """A C-level getter returning the tuple of `slots` of a state."""
        if len(slots) == 1:
            i = slots[0]
            return lambda s: (s[i],)
        if not slots:
            return lambda s: ()
        return itemgetter(*slots)

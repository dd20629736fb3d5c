"""The compact state representation: a flat tuple of small ints (NOTE(slots) in spec/ir.py),
and its translation to and from the values users read (bools, enum names, lists, dicts)."""

from __future__ import annotations

from typing import Any, Iterator

from gpcheck.spec import ir


def _path_key(acc: ir.Accessor, t: ir.Type) -> str:
    """How one accessor step is written in a dotted path: index value, member name, field."""
    if isinstance(t, ir.ArrayType):
        if isinstance(t.index, ir.EnumType):
            return t.index.members[int(acc)]
        if isinstance(t.index, ir.BoolType):
            return "true" if acc else "false"
    return str(acc)


class Layout:
    """Slot positions of every variable of one model instance."""

    def __init__(self, model: ir.Model):
        self.model = model
        self.offsets = model.var_offsets()
        self.size = model.slot_total
        self.slot_types: list[ir.ScalarType] = []
        self.slot_names: list[str] = []
        for v in model.vars:
            for path, st in ir.leaf_paths(v.type):
                self.slot_types.append(st)
                self.slot_names.append(self._dotted(v, path))
        self.slot_index = {n: i for i, n in enumerate(self.slot_names)}
        self.var_by_name = {v.name: v for v in model.vars}

    @staticmethod
    def _dotted(v: ir.Var, path: tuple[ir.Accessor, ...]) -> str:
        parts = [v.name]
        t: ir.Type = v.type
        for acc in path:
            parts.append(_path_key(acc, t))
            t = t.elem if isinstance(t, ir.ArrayType) else t.field_type(str(acc))  # type: ignore[union-attr,assignment]
        return ".".join(parts)

    # ------------------------------------------------------------------ decode
    def decode(self, s: tuple[int, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for v, off in zip(self.model.vars, self.offsets):
            out[v.name], _ = self._decode_value(v.type, s, off)
        return out

    def _decode_value(self, t: ir.Type, s: tuple[int, ...], off: int) -> tuple[Any, int]:
        if isinstance(t, ir.ArrayType):
            items = []
            for _ in ir.domain_values(t.index):
                val, off = self._decode_value(t.elem, s, off)
                items.append(val)
            if isinstance(t.index, ir.EnumType):
                return dict(zip(t.index.members, items)), off
            if isinstance(t.index, ir.BoolType):
                return {"false": items[0], "true": items[1]}, off
            return items, off
        if isinstance(t, ir.StructType):
            rec = {}
            for name, ft in t.fields:
                rec[name], off = self._decode_value(ft, s, off)
            return rec, off
        return ir.format_scalar(t, s[off]), off + 1

    def flatten(self, s: tuple[int, ...]) -> dict[str, Any]:
        """{dotted slot name: user value}, e.g. {"waves_run.3": 1, "task": "Waiting"}."""
        return {n: ir.format_scalar(t, v) for n, t, v in zip(self.slot_names, self.slot_types, s)}

    # ------------------------------------------------------------------ encode
    def encode_scalar(self, t: ir.ScalarType, value: Any, where: str) -> int:
        """A user value (bool, enum name, int) as a slot value; ValueError names `where`."""
        if isinstance(t, ir.BoolType):
            if isinstance(value, bool):
                return int(value)
            if value in (0, 1) and not isinstance(value, str):
                return int(value)
            raise ValueError(f"{where}: expected true or false, got {value!r}")
        if isinstance(t, ir.EnumType):
            if isinstance(value, str) and value in t.members:
                return t.members.index(value)
            raise ValueError(f"{where}: expected one of {', '.join(t.members)}, got {value!r}")
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{where}: expected an integer, got {value!r}")
        if not ir.scalar_in_range(t, value):
            raise ValueError(f"{where}: {value} is outside {t}")
        return value

    def observe(self, obs: dict[str, Any]) -> dict[int, int]:
        """Partial observation (nested or dotted keys) → {slot: value}; ValueError on unknowns."""
        out: dict[int, int] = {}
        for name, value in self._flatten_obs(obs, ""):
            if name not in self.slot_index:
                # A whole aggregate given as a value at a prefix is flattened by _flatten_obs.
                raise ValueError(f"unknown state variable or element '{name}'")
            k = self.slot_index[name]
            out[k] = self.encode_scalar(self.slot_types[k], value, name)
        return out

    def _flatten_obs(self, obs: Any, prefix: str) -> Iterator[tuple[str, Any]]:
        if isinstance(obs, dict):
            for k, v in obs.items():
                key = f"{prefix}.{k}" if prefix else str(k)
                if key in self.slot_index:
                    yield key, v
                else:
                    yield from self._flatten_obs(v, key)
        elif isinstance(obs, list):
            base = self._list_base(prefix)
            for i, v in enumerate(obs):
                key = f"{prefix}.{base + i}"
                if key in self.slot_index:
                    yield key, v
                else:
                    yield from self._flatten_obs(v, key)
        else:
            yield prefix, obs

    def _list_base(self, prefix: str) -> int:
        """The lowest index of the int-indexed array at dotted `prefix` (lists start there)."""
        t: ir.Type | None = None
        parts = prefix.split(".")
        v = self.var_by_name.get(parts[0])
        if v is None:
            return 0
        t = v.type
        for p in parts[1:]:
            if isinstance(t, ir.ArrayType):
                t = t.elem
            elif isinstance(t, ir.StructType):
                t = t.field_type(p)
            else:
                return 0
        if isinstance(t, ir.ArrayType) and isinstance(t.index, ir.IntType):
            return t.index.lo or 0
        return 0

    def encode(self, state: dict[str, Any]) -> tuple[int, ...]:
        """A full decoded state (as `decode` gives) → slot tuple; ValueError if incomplete."""
        slots = self.observe(state)
        missing = [self.slot_names[i] for i in range(self.size) if i not in slots]
        if missing:
            raise ValueError(f"state is missing {', '.join(missing[:5])}{'...' if len(missing) > 5 else ''}")
        return tuple(slots[i] for i in range(self.size))

"""ITF, the Informal Trace Format of Apalache and Quint (ADR-015), read and written.

Why: counterexamples and traces in ITF open in the ITF trace viewers, itf-py/itf-rs and
Quint/Apalache tooling, and ITF traces from those tools replay against gpcheck models.

Encoding choices (documented in docs/trace-format.md, "ITF"):

- bool → `true`/`false`; int → always `{"#bigint": "n"}` (ADR-015 since 2023-09: plain JSON
  numbers are no longer allowed); enum member → its name as a string.
- struct → a record (plain object); array → a function `{"#map": [[index, value], ...]}` in
  index order, the index encoded like a value of the index type (so `[1..3] -> T` keeps its
  real indexes, and enum-indexed arrays have string keys).
- `#meta` of the trace: `format`, `format-description`, `source` (the spec file), `description`,
  `generator: "gpcheck"`, `model`, `constants`, and `varTypes` (ADR-002 type strings: `Int`,
  `Bool`, `Str`, `(Int -> T)`, `{ f: T }`) so Apalache can read the file back.
- `#meta` of each state: `index`, and for every state after the first, `action` and `args`
  (the action instance that produced it; args as plain JSON values).
- `loop` (a lasso) is the Counterexample's `loop`.

Reading accepts more than gpcheck writes: plain JSON numbers, arrays as JSON lists or `#tup`
(listed from the lowest index), enum members as variants `{"tag": NAME, "value": ...}`,
Quint's qualified names (`module::var`) and its `mbt::actionTaken` / `mbt::nondetPicks`
variables (used as the action and arguments). A state without an action becomes an event
with action `"*"` (any action) for replay. With the model, values are decoded to exactly
the shapes `gpmodel`'s `layout.decode` produces, so write → read is the identity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import orjson

from gpcheck.checker.core.verdict import Counterexample, Step
from gpcheck.spec import ir
from gpcheck.spec.errors import TraceError
from gpcheck.spec.limits import MAX_INT
from gpcheck.traces.atomic import write_atomic
from gpcheck.traces.format import Event, TraceHeader

FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"


# ---------------------------------------------------------------------------------------------
# Values


def _int(v: int) -> dict[str, str]:
    return {"#bigint": str(v)}


def encode_value(t: ir.Type, v: Any) -> Any:
    """A decoded value (as `layout.decode` gives) of type `t` as an ITF value."""
    if isinstance(t, ir.BoolType):
        return bool(v)
    if isinstance(t, ir.IntType):
        return _int(v)
    if isinstance(t, ir.EnumType):
        return v
    if isinstance(t, ir.StructType):
        return {f: encode_value(ft, v[f]) for f, ft in t.fields}
    assert isinstance(t, ir.ArrayType)
    idx = t.index
    if isinstance(idx, ir.EnumType):
        return {"#map": [[m, encode_value(t.elem, v[m])] for m in idx.members]}
    if isinstance(idx, ir.BoolType):
        return {"#map": [[b, encode_value(t.elem, v["true" if b else "false"])] for b in (False, True)]}
    assert idx.lo is not None
    return {"#map": [[_int(idx.lo + i), encode_value(t.elem, x)] for i, x in enumerate(v)]}


def type_string(t: ir.Type) -> str:
    """The ADR-002 type of a gpcheck type (enums are strings)."""
    if isinstance(t, ir.BoolType):
        return "Bool"
    if isinstance(t, ir.IntType):
        return "Int"
    if isinstance(t, ir.EnumType):
        return "Str"
    if isinstance(t, ir.StructType):
        return "{ " + ", ".join(f"{f}: {type_string(ft)}" for f, ft in t.fields) + " }"
    return f"({type_string(t.index)} -> {type_string(t.elem)})"


def _preview(x: Any) -> str:
    """A value for an error message, at most 80 characters (orjson refuses deep nesting)."""
    try:
        text = orjson.dumps(x).decode()
    except TypeError:
        return "a value nested too deeply"
    return text if len(text) <= 80 else text[:77] + "..."


def _bad(where: str, t: ir.Type, x: Any) -> TraceError:
    return TraceError(f"{where}: expected a value of type {t}, got {_preview(x)}")


def _bigint(s: str, where: str) -> int:
    """The integer of a `#bigint` string, within +-2^62 (MAX_INT: no model value is larger)."""
    s = s.strip()
    if not s.lstrip("-").isdigit():
        raise TraceError(f"{where}: malformed #bigint {_preview(s)}")
    if len(s) > 20:
        raise TraceError(f"{where}: #bigint of {len(s)} digits out of range (at most 2^62 in magnitude)")
    v = int(s)
    if abs(v) > MAX_INT:
        raise TraceError(f"{where}: #bigint {s} out of range (at most 2^62 in magnitude)")
    return v


def _scalar_in(x: Any, where: str) -> Any:
    """An ITF scalar as a Python value: #bigint → int, variants → tag, plain values as is."""
    if isinstance(x, dict):
        if set(x) == {"#bigint"} and isinstance(x["#bigint"], str):
            return _bigint(x["#bigint"], where)
        if set(x) == {"tag", "value"} and isinstance(x["tag"], str):
            return x["tag"]
    return x


def decode_value(t: ir.Type, x: Any, where: str) -> Any:
    """An ITF value as the decoded value of type `t` (the shape `layout.decode` gives)."""
    if isinstance(t, ir.BoolType):
        if isinstance(x, bool):
            return x
        raise _bad(where, t, x)
    if isinstance(t, ir.IntType):
        v = _scalar_in(x, where)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        raise _bad(where, t, x)
    if isinstance(t, ir.EnumType):
        v = _scalar_in(x, where)
        if isinstance(v, str) and v in t.members:
            return v
        raise _bad(where, t, x)
    if isinstance(t, ir.StructType):
        if not isinstance(x, dict) or set(x) != {f for f, _ in t.fields}:
            raise _bad(where, t, x)
        return {f: decode_value(ft, x[f], f"{where}.{f}") for f, ft in t.fields}
    assert isinstance(t, ir.ArrayType)
    dom = list(ir.domain_values(t.index))
    items: list[Any]
    if isinstance(x, dict) and set(x) == {"#map"} and isinstance(x["#map"], list):
        by_key: dict[int, Any] = {}
        for pair in x["#map"]:
            if not isinstance(pair, list) or len(pair) != 2:
                raise TraceError(f"{where}: a #map entry must be a [key, value] pair")
            k = _index_in(t.index, pair[0], where)
            by_key[k] = pair[1]
        if sorted(by_key) != dom:
            raise TraceError(f"{where}: the #map must give exactly the indexes of {t.index}")
        items = [by_key[k] for k in dom]
    elif isinstance(x, list) or (isinstance(x, dict) and set(x) == {"#tup"} and isinstance(x["#tup"], list)):
        items = x if isinstance(x, list) else x["#tup"]
        if len(items) != len(dom):
            raise TraceError(f"{where}: expected {len(dom)} elements, got {len(items)}")
    else:
        raise _bad(where, t, x)
    vals = [decode_value(t.elem, it, f"{where}.{_key_text(t.index, k)}") for it, k in zip(items, dom)]
    if isinstance(t.index, ir.EnumType):
        return dict(zip(t.index.members, vals))
    if isinstance(t.index, ir.BoolType):
        return {"false": vals[0], "true": vals[1]}
    return vals


def _key_text(t: ir.Type, k: int) -> str:
    return str(ir.format_scalar(t, k)).lower() if isinstance(t, ir.BoolType) else str(ir.format_scalar(t, k))  # type: ignore[arg-type]


def _index_in(t: ir.Type, x: Any, where: str) -> int:
    """A #map key as the slot value of the index type."""
    v = _scalar_in(x, where)
    if isinstance(t, ir.BoolType) and isinstance(v, bool):
        return int(v)
    if isinstance(t, ir.EnumType) and isinstance(v, str) and v in t.members:
        return t.members.index(v)
    if isinstance(t, ir.IntType) and isinstance(v, int) and not isinstance(v, bool):
        return v
    raise TraceError(f"{where}: bad #map key {_preview(x)} for index type {t}")


_MAX_PLAIN_DEPTH = 64


def plain_value(x: Any, where: str = "", depth: int = 0) -> Any:
    """An ITF value without type information: #bigint → int, #tup/#set → list, #map → dict
    (keys as strings) or a list of pairs, variants → {"tag", "value"} kept as is. Malformed
    encodings and nesting past 64 levels are TraceErrors at `where`."""
    if depth > _MAX_PLAIN_DEPTH:
        raise TraceError(f"{where}: value nested too deeply (more than {_MAX_PLAIN_DEPTH} levels)")
    d = depth + 1
    if isinstance(x, list):
        return [plain_value(y, where, d) for y in x]
    if isinstance(x, dict):
        if set(x) == {"#bigint"}:
            if not isinstance(x["#bigint"], str):
                raise TraceError(f"{where}: malformed #bigint {_preview(x)}")
            return _bigint(x["#bigint"], where)
        if set(x) == {"#tup"} or set(x) == {"#set"}:
            items = next(iter(x.values()))
            if not isinstance(items, list):
                raise TraceError(f"{where}: malformed {next(iter(x))} {_preview(x)}: expected a list")
            return [plain_value(y, where, d) for y in items]
        if set(x) == {"#map"}:
            entries = x["#map"]
            if not isinstance(entries, list) or not all(isinstance(p, list) and len(p) == 2 for p in entries):
                raise TraceError(f"{where}: malformed #map {_preview(x)}: expected a list of [key, value] pairs")
            pairs = [(plain_value(k, where, d), plain_value(v, where, d)) for k, v in entries]
            if all(isinstance(k, (int, str, bool)) for k, _ in pairs):
                return {(str(k).lower() if isinstance(k, bool) else str(k)): v for k, v in pairs}
            return [list(p) for p in pairs]
        return {k: plain_value(v, where, d) for k, v in x.items()}
    return x


# ---------------------------------------------------------------------------------------------
# Whole traces


def to_itf(
    model: ir.Model,
    steps: Sequence[Step],
    loop: int | None = None,
    description: str | None = None,
) -> dict[str, Any]:
    """A behaviour (Counterexample steps: decoded states) as an ITF object."""
    meta: dict[str, Any] = {
        "format": "ITF",
        "format-description": FORMAT_DESCRIPTION,
        "source": model.file,
        "description": description or f"gpcheck behaviour of {model.name}",
        "generator": "gpcheck",
        "model": model.name,
        "constants": model.const_values,
        "varTypes": {v.name: type_string(v.type) for v in model.vars},
    }
    states = []
    for i, st in enumerate(steps):
        smeta: dict[str, Any] = {"index": i}
        if st.action is not None:
            smeta["action"] = st.action
            smeta["args"] = st.args
        if st.time is not None:  # NOTE(timed): the step's time stamp (and its duration's start)
            smeta["time"] = st.time
            if st.since is not None:
                smeta["since"] = st.since
        obj: dict[str, Any] = {"#meta": smeta}
        for v in model.vars:
            obj[v.name] = encode_value(v.type, st.state[v.name])
        states.append(obj)
    out: dict[str, Any] = {"#meta": meta, "vars": [v.name for v in model.vars], "states": states}
    if loop is not None:
        out["loop"] = loop
    return out


def write_itf(counterexample: Counterexample, model: ir.Model, path: str, description: str | None = None) -> None:
    """Write a counterexample (or any behaviour) as an ITF file, atomically."""
    obj = to_itf(model, counterexample.steps, counterexample.loop, description)
    write_atomic(path, orjson.dumps(obj, option=orjson.OPT_INDENT_2) + b"\n")


@dataclass
class ItfTrace:
    """An ITF trace decoded against a model: `states` are decoded (layout.decode shapes),
    `actions[i]`/`args[i]` the step into state i (None when the file does not say)."""

    path: str
    meta: dict[str, Any]
    states: list[dict[str, Any]]
    actions: list[str | None]
    args: list[dict[str, Any]]
    loop: int | None = None
    constants: dict[str, int] = field(default_factory=dict)

    def to_counterexample(self) -> Counterexample:
        steps = tuple(
            Step(None if i == 0 else self.actions[i], {} if i == 0 else self.args[i], s) for i, s in enumerate(self.states)
        )
        return Counterexample(steps, self.loop)

    def header(self, model: ir.Model) -> TraceHeader:
        return TraceHeader(
            model=self.meta.get("model") if isinstance(self.meta.get("model"), str) else model.name,
            constants=self.constants,
            init=self.states[0] if self.states else None,
            extra={"logs_internal": True, "source": "itf", "itf": self.path, **({"loop": self.loop} if self.loop is not None else {})},
        )

    def events(self) -> Iterator[Event]:
        """Replay events: one per state after the first (`line` = state index)."""
        for i in range(1, len(self.states)):
            yield Event(self.actions[i] or "*", self.args[i] if self.actions[i] else {}, self.states[i], line=i)


def load_itf_object(path: str) -> dict[str, Any]:
    """The raw JSON object of an ITF file, shape-checked (`vars`, `states`)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TraceError(f"{path}: cannot open ITF trace: {e.strerror or e}") from None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        what = "JSON nested too deeply (more than 1024 levels)" if "depth limit" in e.msg else f"invalid JSON: {e.msg}"
        raise TraceError(f"{path}:{e.lineno}:{e.colno}: {what}") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("states"), list):
        raise TraceError(f"{path}:1:1: not an ITF trace: expected an object with \"vars\" and \"states\"")
    if "vars" in obj and (not isinstance(obj["vars"], list) or not all(isinstance(v, str) for v in obj["vars"])):
        raise TraceError(f"{path}: \"vars\" must be a list of strings")
    if "loop" in obj and obj["loop"] is not None and (not isinstance(obj["loop"], int) or isinstance(obj["loop"], bool)):
        raise TraceError(f"{path}: \"loop\" must be an integer")
    return obj


def _unqualified(name: str) -> str:
    return name.rsplit("::", 1)[-1] if "::" in name and not name.startswith("mbt::") else name


def read_itf(path: str, model: ir.Model) -> ItfTrace:
    """Read an ITF trace of `model`; every state must give every model variable."""
    obj = load_itf_object(path)
    meta = obj.get("#meta") if isinstance(obj.get("#meta"), dict) else {}
    consts = meta.get("constants") if isinstance(meta.get("constants"), dict) else {}
    constants = {k: v for k, v in consts.items() if isinstance(v, int) and not isinstance(v, bool)}
    states: list[dict[str, Any]] = []
    actions: list[str | None] = []
    argss: list[dict[str, Any]] = []
    var_names = {v.name for v in model.vars}
    for i, raw in enumerate(obj["states"]):
        where = f"{path}: states[{i}]"
        if not isinstance(raw, dict):
            raise TraceError(f"{where}: a state must be an object")
        vals = {_unqualified(k): v for k, v in raw.items() if not k.startswith("#") and not k.startswith("mbt::")}
        missing = var_names - set(vals)
        if missing:
            raise TraceError(f"{where}: missing variable(s) {', '.join(sorted(missing))}")
        extra = set(vals) - var_names
        if extra:
            raise TraceError(f"{where}: unknown variable(s) {', '.join(sorted(extra))} (the model {model.name} has {', '.join(v.name for v in model.vars)})")
        states.append({v.name: decode_value(v.type, vals[v.name], f"{where}.{v.name}") for v in model.vars})
        action, args = _step_of(raw, where)
        actions.append(action)
        argss.append(args)
    loop = obj.get("loop")
    if loop is not None and not 0 <= loop < max(len(states), 1):
        raise TraceError(f"{path}: \"loop\" {loop} is not a state index")
    return ItfTrace(path, meta, states, actions, argss, loop, constants)


def _step_of(raw: dict[str, Any], where: str) -> tuple[str | None, dict[str, Any]]:
    """The action that produced a state: gpcheck's `#meta`, else Quint's `mbt::` variables."""
    smeta = raw.get("#meta")
    if isinstance(smeta, dict) and isinstance(smeta.get("action"), str):
        args = smeta.get("args") or {}
        if not isinstance(args, dict):
            raise TraceError(f"{where}: #meta.args must be an object")
        return smeta["action"], {k: _arg_value(v, f"{where}.#meta.args.{k}") for k, v in args.items()}
    act = raw.get("mbt::actionTaken")
    if isinstance(act, str) and act and act not in ("init", "q::init"):
        picks = raw.get("mbt::nondetPicks")
        args = {}
        if isinstance(picks, dict):
            for k, v in picks.items():
                if isinstance(v, dict) and v.get("tag") == "Some":
                    args[k] = _arg_value(v.get("value"), f"{where}.mbt::nondetPicks.{k}")
        return act, args
    return None, {}


def _arg_value(v: Any, where: str) -> Any:
    """An action argument: a scalar (a variant stands for its tag, as enum members do in
    values); anything else is a TraceError at `where` (parameters range over scalars)."""
    x = plain_value(v, where)
    if isinstance(x, dict) and set(x) == {"tag", "value"} and isinstance(x["tag"], str):
        x = x["tag"]
    if not isinstance(x, (int, str)):  # bool is an int
        raise TraceError(f"{where}: an argument must be an integer, bool or enum member, got {_preview(v)}")
    return x


def itf_events(path: str, model: ir.Model) -> tuple[TraceHeader, "ItfEvents"]:
    """Header and events of an ITF trace, for replay (the file is read whole: ITF is one JSON value)."""
    tr = read_itf(path, model)
    return tr.header(model), ItfEvents(tr)


class ItfEvents:
    """Iterable of the replay events of an ITF trace; `path` and `unit` name locations."""

    unit = "state"

    def __init__(self, tr: ItfTrace):
        self.tr = tr
        self.path = tr.path

    def __iter__(self) -> Iterator[Event]:
        return self.tr.events()

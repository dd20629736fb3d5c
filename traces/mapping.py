"""Event mappings: which recorded events are which actions of a mechanism model
(docs/event-mapping.md). A mapping is a TOML file kept beside its model
(`spec/models/reef_rewind.map.toml` next to `reef_rewind.gpspec`), in the spirit of TLA+ trace
validation's action wrappers: each `[[event]]` rule matches recorded events (by action name and a
condition) and says which model steps they are, with which arguments and which observed
variables; `hidden` names the model actions the recorder cannot see, which replay may take between
events; `[[timing]]` entries say which durations of the trace a model bound constrains.

This module only loads and checks the file; checker/engines/replay/mapped.py applies it. Every problem is a
`MappingError` (a GpcheckError: exit 2) naming `file:line:col`."""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

from gpcheck.spec import ir
from gpcheck.spec.errors import GpcheckError
from gpcheck.traces.mapexpr import Expr, ExprError, parse_expr

OBSERVE_ACTION = "mapping_observation"  # the no-op step an observation-only rule becomes
SUFFIX = ".map.toml"
_TOP_KEYS = {"model", "description", "hidden", "max_hidden", "unmatched", "constants", "event", "timing", "time_unit_ns"}
_RULE_KEYS = {"match", "when", "let", "ignore", "action", "args", "observe", "step", "note"}
_STEP_KEYS = {"action", "args", "observe", "repeat", "var", "note"}
_TIMING_KEYS = {"name", "action", "event", "when", "value", "from", "from_when", "to", "to_when", "key", "from_at",
                "lower", "upper", "unit_ns", "fit", "note"}


class MappingError(GpcheckError):
    """A bad mapping file; the message starts with `file:line:col:`."""


@dataclass(frozen=True)
class KeyTemplate:
    """An observed slot's dotted path with `{expr}` holes: `sv.{tsg}.{meta.block}`."""

    parts: tuple[str | Expr, ...]
    text: str

    def render(self, env: dict[str, Any], state: Any) -> str:
        out = []
        for p in self.parts:
            if isinstance(p, str):
                out.append(p)
            else:
                v = p.eval(env, state)
                out.append(str(int(v)) if isinstance(v, bool) else str(v))
        return "".join(out)

    @property
    def head(self) -> str | None:
        """The variable the path starts with, when it is literal."""
        first = self.parts[0] if self.parts else ""
        if isinstance(first, str):
            return re.split(r"[.]", first, maxsplit=1)[0] or None
        return None


@dataclass(frozen=True)
class Step:
    """One model step a recorded event becomes (`action` None: an observation only)."""

    action: str | None
    args: tuple[tuple[str, Expr], ...]
    observe: tuple[tuple[KeyTemplate, Expr], ...]
    repeat: Expr | None
    var: str
    where: str


@dataclass(frozen=True)
class Rule:
    """`[[event]]`: recorded events named `match` (`*`: any) for which `when` holds."""

    match: str
    when: Expr | None
    lets: tuple[tuple[str, Expr], ...]
    steps: tuple[Step, ...]
    ignore: bool
    where: str


@dataclass(frozen=True)
class Timing:
    """`[[timing]]`: durations the trace shows for a model action. Either `value` (a duration in
    one event, ns) on events `event`/`when`, or the time from a `from` event to the next `to` event
    (paired by `key` when given; `from_at`: the instant the `from` event opens it, default its
    stamp). `lower`/`upper`: the model's bounds, expressions over its
    constants in model time units (`unit_ns` ns each); absent: the action's `time L..U`."""

    name: str
    action: str
    event: str | None
    when: Expr | None
    value: Expr | None
    from_: str | None
    from_when: Expr | None
    to: str | None
    to_when: Expr | None
    key: Expr | None
    lower: str | None
    upper: str | None
    unit_ns: int
    where: str
    fit: str | None = None  # the constant `gpcheck calibrate` fits (default: the one a bound names)
    from_at: Expr | None = None  # the instant a `from` event opens the duration (ns; default: its stamp t)


@dataclass(frozen=True)
class Mapping:
    file: str
    model: str
    hidden: tuple[str, ...]
    max_hidden: int | None
    unmatched: str  # "error" or "ignore"
    constants: tuple[tuple[str, Expr, str], ...]  # (name, expr over `header`, where)
    rules: tuple[Rule, ...]
    timings: tuple[Timing, ...] = ()
    description: str = ""
    source: str = field(default="", repr=False)
    time_unit_ns: int = 1000  # a timed model's time unit in trace nanoseconds (timed replay; default us)


class _Locator:
    """Positions of keys in a TOML text, by table path: enough for the located errors of the
    simple layout mapping files use (one key per line, inline tables on one line)."""

    def __init__(self, text: str):
        self.pos: dict[tuple[Any, ...], tuple[int, int]] = {}
        table: tuple[Any, ...] = ()
        counts: dict[tuple[Any, ...], int] = {}
        for ln, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"\[\[\s*([A-Za-z_.]+)\s*\]\]", line)
            if m:
                names = m.group(1).split(".")
                parent = table[: 2 * (len(names) - 1)] if len(names) > 1 else ()
                base = parent + (names[-1],)
                counts[base] = counts.get(base, -1) + 1
                table = base + (counts[base],)
                self.pos[table] = (ln, raw.index("[") + 1)
                continue
            m = re.match(r"\[\s*([A-Za-z_.]+)\s*\]", line)
            if m:
                table = tuple(m.group(1).split("."))
                self.pos[table] = (ln, raw.index("[") + 1)
                continue
            m = re.match(r'\s*("([^"]*)"|[A-Za-z0-9_-]+)\s*=\s*', raw)
            if m:
                key = m.group(2) if m.group(2) is not None else m.group(1)
                self.pos[table + (key,)] = (ln, m.end() + 1)
                for im in re.finditer(r'("([^"]*)"|[A-Za-z_][A-Za-z0-9_]*)\s*=\s*', raw[m.end():]):
                    ik = im.group(2) if im.group(2) is not None else im.group(1)
                    self.pos.setdefault(table + (key, ik), (ln, m.end() + im.end() + 1))

    def at(self, *path: Any) -> tuple[int, int]:
        for n in range(len(path), 0, -1):
            if path[:n] in self.pos:
                return self.pos[path[:n]]
        return (1, 1)


class _Loader:
    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        self.loc = _Locator(text)

    def where(self, *path: Any) -> str:
        ln, col = self.loc.at(*path)
        return f"{self.path}:{ln}:{col}"

    def fail(self, path: tuple[Any, ...], msg: str, col_shift: int = 0) -> MappingError:
        ln, col = self.loc.at(*path)
        return MappingError(f"{self.path}:{ln}:{col + col_shift}: {msg}")

    def expr(self, path: tuple[Any, ...], v: Any) -> Expr:
        if isinstance(v, bool):
            v = "true" if v else "false"
        if isinstance(v, int):
            v = str(v)
        if not isinstance(v, str):
            raise self.fail(path, f"expected an expression (a string or a number), got {type(v).__name__}")
        try:
            return parse_expr(v)
        except ExprError as e:
            raise self.fail(path, f"{e.message} in {v!r}", 1 + e.col) from None

    def key_template(self, path: tuple[Any, ...], key: str) -> KeyTemplate:
        parts: list[str | Expr] = []
        pos = 0
        for m in re.finditer(r"\{([^{}]*)\}", key):
            if m.start() > pos:
                parts.append(key[pos:m.start()])
            try:
                parts.append(parse_expr(m.group(1)))
            except ExprError as e:
                raise self.fail(path, f"{e.message} in the key {key!r}") from None
            pos = m.end()
        if pos < len(key):
            parts.append(key[pos:])
        if any(isinstance(p, str) and ("{" in p or "}" in p) for p in parts):
            raise self.fail(path, f"unbalanced braces in the key {key!r}")
        return KeyTemplate(tuple(parts), key)

    def table(self, path: tuple[Any, ...], v: Any, keys: set[str], what: str) -> dict[str, Any]:
        if not isinstance(v, dict):
            raise self.fail(path, f"{what} must be a table")
        for k in v:
            if k not in keys:
                raise self.fail(path + (k,), f"unknown key '{k}' in {what} (keys: {', '.join(sorted(keys))})")
        return v

    def step(self, path: tuple[Any, ...], d: dict[str, Any]) -> Step:
        action = d.get("action")
        if action is not None and (not isinstance(action, str) or not action):
            raise self.fail(path + ("action",), "action must be a model action's name")
        args_d = d.get("args", {})
        if not isinstance(args_d, dict):
            raise self.fail(path + ("args",), "args must be a table: { PARAM = \"EXPR\", ... }")
        obs_d = d.get("observe", {})
        if not isinstance(obs_d, dict):
            raise self.fail(path + ("observe",), "observe must be a table: { \"var.path\" = \"EXPR\", ... }")
        if action is None and not obs_d:
            raise self.fail(path, "a step needs an action, or an observation (observe) when it is no step of the model")
        if action is None and args_d:
            raise self.fail(path + ("args",), "args without an action")
        var = d.get("var", "i")
        if not isinstance(var, str) or not var.isidentifier():
            raise self.fail(path + ("var",), "var must be a name")
        return Step(
            action,
            tuple((k, self.expr(path + ("args", k), e)) for k, e in args_d.items()),
            tuple((self.key_template(path + ("observe", k), k), self.expr(path + ("observe", k), e)) for k, e in obs_d.items()),
            self.expr(path + ("repeat",), d["repeat"]) if "repeat" in d else None,
            var,
            self.where(*path),
        )

    def rule(self, i: int, d: Any) -> Rule:
        path: tuple[Any, ...] = ("event", i)
        d = self.table(path, d, _RULE_KEYS, "[[event]]")
        match = d.get("match")
        if not isinstance(match, str) or not match:
            raise self.fail(path + ("match",) if "match" in d else path, "[[event]] needs match = \"RECORDED_ACTION\" (or \"*\")")
        lets_d = d.get("let", {})
        if not isinstance(lets_d, dict):
            raise self.fail(path + ("let",), "let must be a table: { NAME = \"EXPR\", ... }")
        for k in lets_d:
            if not k.isidentifier():
                raise self.fail(path + ("let", k), f"let name {k!r} is not a name")
        ignore = d.get("ignore", False)
        if not isinstance(ignore, bool):
            raise self.fail(path + ("ignore",), "ignore must be true or false")
        steps: list[Step] = []
        inline = {k: d[k] for k in ("action", "args", "observe") if k in d}
        if inline:
            steps.append(self.step(path, inline))
        for j, s in enumerate(d.get("step", []) if isinstance(d.get("step", []), list) else [None]):
            sp = path + ("step", j)
            steps.append(self.step(sp, self.table(sp, s, _STEP_KEYS, "[[event.step]]")))
        if ignore and steps:
            raise self.fail(path + ("ignore",), "a rule with ignore = true has no steps")
        if not ignore and not steps:
            raise self.fail(path, "a rule needs an action, [[event.step]] tables or ignore = true")
        return Rule(match, self.expr(path + ("when",), d["when"]) if "when" in d else None,
                    tuple((k, self.expr(path + ("let", k), e)) for k, e in lets_d.items()),
                    tuple(steps), ignore, self.where(*path))

    def timing(self, i: int, d: Any) -> Timing:
        path: tuple[Any, ...] = ("timing", i)
        d = self.table(path, d, _TIMING_KEYS, "[[timing]]")
        for k in ("name", "action"):
            if not isinstance(d.get(k), str) or not d.get(k):
                raise self.fail(path + (k,) if k in d else path, f"[[timing]] needs {k} = \"...\"")
        single = "value" in d or "event" in d
        pair = "from" in d or "to" in d
        if single == pair or (single and not ("value" in d and "event" in d)) or (pair and not ("from" in d and "to" in d)):
            raise self.fail(path, "[[timing]] gives either event and value (a duration recorded in one event) "
                                  "or from and to (the time between two events)")
        if "from_at" in d and not pair:
            raise self.fail(path + ("from_at",), "from_at (when a from event opens the duration) needs from and to")
        for k in ("event", "from", "to"):
            if k in d and (not isinstance(d[k], str) or not d[k]):
                raise self.fail(path + (k,), f"{k} must be a recorded action's name")
        for k in ("lower", "upper"):
            if k in d and not isinstance(d[k], (str, int)) or isinstance(d.get(k), bool):
                raise self.fail(path + (k,), f"{k} must be a constant expression of the model")
        unit = d.get("unit_ns", 1000)
        if not isinstance(unit, int) or isinstance(unit, bool) or unit <= 0:
            raise self.fail(path + ("unit_ns",), "unit_ns must be a positive integer (ns per model time unit)")

        def ex(k: str) -> Expr | None:
            return self.expr(path + (k,), d[k]) if k in d else None

        return Timing(d["name"], d["action"], d.get("event"), ex("when"), ex("value"), d.get("from"), ex("from_when"),
                      d.get("to"), ex("to_when"), ex("key"),
                      str(d["lower"]) if "lower" in d else None, str(d["upper"]) if "upper" in d else None,
                      unit, self.where(*path), d.get("fit") if isinstance(d.get("fit"), str) else None,
                      ex("from_at") if pair else None)

    def load(self) -> Mapping:
        try:
            data = tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as e:
            m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
            ln, col = (m.group(1), m.group(2)) if m else ("1", "1")
            msg = re.sub(r"\s*\(at .*\)$", "", str(e))
            raise MappingError(f"{self.path}:{ln}:{col}: TOML: {msg}") from None
        for k in data:
            if k not in _TOP_KEYS:
                raise self.fail((k,), f"unknown key '{k}' (keys: {', '.join(sorted(_TOP_KEYS))})")
        model = data.get("model")
        if not isinstance(model, str) or not model:
            raise self.fail(("model",), "the mapping needs model = \"MODEL_NAME\"")
        hidden = data.get("hidden", [])
        if not isinstance(hidden, list) or not all(isinstance(h, str) for h in hidden):
            raise self.fail(("hidden",), "hidden must be a list of action names")
        mh = data.get("max_hidden")
        if mh is not None and (not isinstance(mh, int) or isinstance(mh, bool) or mh < 0):
            raise self.fail(("max_hidden",), "max_hidden must be a non-negative integer (absent: any number, lazily)")
        unmatched = data.get("unmatched", "error")
        if unmatched not in ("error", "ignore"):
            raise self.fail(("unmatched",), "unmatched must be \"error\" or \"ignore\"")
        consts = data.get("constants", {})
        if not isinstance(consts, dict):
            raise self.fail(("constants",), "[constants] must be a table: NAME = \"EXPR over header\"")
        events = data.get("event", [])
        if not isinstance(events, list) or not events:
            raise self.fail(("event",), "the mapping needs [[event]] rules")
        timings = data.get("timing", [])
        if not isinstance(timings, list):
            raise self.fail(("timing",), "timing must be [[timing]] tables")
        desc = data.get("description", "")
        unit = data.get("time_unit_ns", 1000)
        if not isinstance(unit, int) or isinstance(unit, bool) or unit <= 0:
            raise self.fail(("time_unit_ns",), "time_unit_ns must be a positive integer (the model's time unit in ns)")
        return Mapping(
            self.path, model, tuple(hidden), mh, unmatched,
            tuple((k, self.expr(("constants", k), v), self.where("constants", k)) for k, v in consts.items()),
            tuple(self.rule(i, r) for i, r in enumerate(events)),
            tuple(self.timing(i, t) for i, t in enumerate(timings)),
            desc if isinstance(desc, str) else "", self.text, unit,
        )


def load_mapping(path: str) -> Mapping:
    """Read and check the syntax of the mapping file `path` (MappingError, located)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise MappingError(f"{path}: no such mapping file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise MappingError(f"{path}: cannot read the mapping: {e}") from None
    return _Loader(path, text).load()


def parse_mapping(text: str, path: str = "<string>") -> Mapping:
    """The mapping in `text` (for tests and the API)."""
    return _Loader(path, text).load()


def mapping_beside(model: ir.Model) -> str:
    """The mapping file kept beside the model's spec: `NAME.map.toml` in its directory."""
    base = model.file[: -len(".gpspec")] if model.file.endswith(".gpspec") else model.file
    return base + SUFFIX


def check_against(m: Mapping, model: ir.Model) -> None:
    """The names the mapping uses exist in the model: actions, their parameters, the variables
    observed (literal heads), the constants; MappingError at the first that does not."""
    loader = _Loader(m.file, m.source)
    if m.model != model.name:
        raise loader.fail(("model",), f"the mapping is for model '{m.model}', not '{model.name}'")
    actions = {a.name: a for a in model.actions}
    if OBSERVE_ACTION in actions:
        raise loader.fail(("model",), f"the model has an action named {OBSERVE_ACTION}, which mappings reserve")
    names = ", ".join(actions)
    for h in m.hidden:
        if h not in actions:
            raise loader.fail(("hidden",), f"hidden action '{h}' is not an action of {model.name} ({names})")
    consts = {c.name for c in model.constants}
    for name, _, _ in m.constants:
        if name not in consts:
            raise loader.fail(("constants", name), f"'{name}' is not a constant of {model.name}")
    varnames = {v.name for v in model.vars}
    for i, r in enumerate(m.rules):
        for j, s in enumerate(r.steps):
            path: tuple[Any, ...] = ("event", i) if j == 0 and len(r.steps) == 1 else ("event", i, "step", j)
            _check_step(loader, path, s, actions, varnames, model.name)
    for i, t in enumerate(m.timings):
        if t.action not in actions:
            raise loader.fail(("timing", i, "action"), f"'{t.action}' is not an action of {model.name} ({names})")
        if t.fit is not None and t.fit not in consts:
            raise loader.fail(("timing", i, "fit"), f"'{t.fit}' is not a constant of {model.name}")


def _check_step(loader: _Loader, path: tuple[Any, ...], s: Step, actions: dict[str, ir.Action], varnames: set[str],
                model: str) -> None:
    if s.action is not None:
        a = actions.get(s.action)
        if a is None:
            raise MappingError(f"{s.where}: '{s.action}' is not an action of {model} ({', '.join(actions)})")
        params = {p.name for p in a.params}
        for k, _ in s.args:
            if k not in params:
                raise MappingError(f"{s.where}: action {s.action} has no parameter '{k}' "
                                   f"(its parameters: {', '.join(sorted(params)) or 'none'})")
    for key, _ in s.observe:
        head = key.head
        if head is not None and head not in varnames:
            raise MappingError(f"{s.where}: observed '{key.text}': {model} has no variable '{head}'")


def resolve_mapping(arg: str, model: ir.Model) -> str:
    """`--map FILE`, or `--map` alone (`arg` == "") for the file beside the model."""
    if arg:
        return arg
    path = mapping_beside(model)
    if not os.path.exists(path):
        raise MappingError(f"{model.file}: no mapping beside the model ({path}); give one with --map FILE")
    return path

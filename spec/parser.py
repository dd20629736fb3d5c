"""gpspec text → AST (`gpcheck.spec.syntax`). The only module that imports lark; no Tree or Token
escapes it. Syntax errors become `SpecSyntaxError` with file:line:column and the tokens that
were expected, in words."""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import lark
from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from gpcheck.spec import syntax as S
from gpcheck.spec.errors import Diagnostic, Severity, SpecSyntaxError
from gpcheck.spec.ir import BinOp, FoldKind, LivenessKind
from gpcheck.spec.limits import MAX_INT, MAX_NESTING, MAX_SOURCE_CHARS, normalize_newlines, source_lines
from gpcheck.spec.span import Span
from gpcheck.spec.usercache import cache_dir, is_persistent, write_atomically


GRAMMAR_TABLES_FORMAT = 1  # the layout of the kept tables (below): part of their key
_BUILD_OPTIONS: dict[str, Any] = {"parser": "lalr", "maybe_placeholders": True}
_LOAD_OPTIONS: dict[str, Any] = {"propagate_positions": True}  # options lark takes at load time
_TUPLE, _PAIRS = "\x00tuple", "\x00pairs"  # JSON tags: never keys of lark's own dicts


@lru_cache(maxsize=1)
def _lark() -> Lark:
    """The LALR parser of grammar.lark. Its tables are kept in the user's cache directory as
    JSON (0.1-0.4 s to build, 0.03 s to load, in every gpcheck process), not with lark's own
    `cache=`, which unpickles the file before it compares the grammar's hash (NOTE(cache-trust)
    in spec/usercache.py). The file is used only when its key (the grammar's text, lark's
    version, this format) is the one expected; anything else is rebuilt and rewritten."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    grammar = _grammar_text()
    key = hashlib.sha256("\0".join([str(GRAMMAR_TABLES_FORMAT), lark.__version__, grammar,
                                     repr(sorted({**_BUILD_OPTIONS, **_LOAD_OPTIONS}.items()))]).encode()).hexdigest()
    file = cache_dir() / "spec-grammar.tables.json"
    kept = _read_tables(file, key)
    if kept is not None:
        try:
            return Lark._load_from_dict(kept["data"], kept["memo"], **_LOAD_OPTIONS)
        except Exception:  # noqa: BLE001 - tables that do not load are rebuilt below
            pass
    parser = Lark(grammar, **_BUILD_OPTIONS, **_LOAD_OPTIONS)
    try:
        data, memo = parser.memo_serialize([TerminalDef, Rule])
        data["options"] = {n: v for n, v in data["options"].items()
                           if n not in _LOAD_OPTIONS and n not in ("import_paths", "source_path", "cache")}
        blob = json.dumps({"key": key, "data": _tag(data), "memo": _tag(memo)}, separators=(",", ":"))
    except (TypeError, ValueError):  # lark's serialised form changed: no kept tables
        return parser
    if is_persistent():  # a per-process directory would not outlive this process
        write_atomically(file, blob.encode())
    return parser


def _grammar_text() -> str:
    return (resources.files("gpcheck.spec") / "grammar.lark").read_text(encoding="utf-8")


def _read_tables(file: Path, key: str) -> dict[str, Any] | None:
    """The kept tables when the file holds exactly those of `key`, else None (never raises)."""
    try:
        doc = json.loads(file.read_bytes(), object_hook=_untag)
    except (OSError, ValueError, TypeError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("key") != key or not isinstance(doc.get("data"), dict):
        return None
    return doc


def _tag(x: Any) -> Any:
    """Lark's serialised tables as JSON: tuples and dicts with keys other than strings tagged."""
    if isinstance(x, dict):
        if all(isinstance(k, str) for k in x):
            return {k: _tag(v) for k, v in x.items()}
        return {_PAIRS: [[_tag(k), _tag(v)] for k, v in x.items()]}
    if isinstance(x, tuple):
        return {_TUPLE: [_tag(v) for v in x]}
    if isinstance(x, list):
        return [_tag(v) for v in x]
    if x is None or isinstance(x, (str, int, float)):
        return x
    raise TypeError(f"cannot keep {type(x).__name__} in the grammar tables")


def _untag(obj: dict[str, Any]) -> Any:
    if len(obj) == 1:
        if _PAIRS in obj:
            return {k: v for k, v in obj[_PAIRS]}
        if _TUPLE in obj:
            return tuple(obj[_TUPLE])
    return obj


_OPS = {op.value: op for op in BinOp}
_READABLE = {
    "NAME": "a name",
    "INT": "an integer",
    "STRING": 'a "quoted description"',
    "COMPARE": "a comparison",
    "ADDOP": "'+' or '-'",
    "MULOP": "'*', '/' or '%'",
    "$END": "end of file",
}


def _expected_words(names: set[str] | frozenset[str]) -> str:
    words = set()
    for name in names:
        if name in _READABLE:
            words.add(_READABLE[name])
            continue
        try:
            term = _lark().get_terminal(name)
        except KeyError:
            words.add(name)
            continue
        pat = term.pattern
        if pat.type == "str":
            words.add(f"'{pat.value}'")
        else:
            words.add(name.lower())
    ordered = sorted(words)
    if len(ordered) > 12:
        ordered = ordered[:12] + ["..."]
    return ", ".join(ordered)


def _syntax_error(err: UnexpectedInput, file: str, text: str) -> SpecSyntaxError:
    line, col = max(err.line, 1), max(err.column, 1)
    width = 1
    if isinstance(err, UnexpectedToken):
        tok = err.token
        if tok.type == "$END":
            msg = f"unexpected end of file; expected {_expected_words(err.expected)}"
            lines = source_lines(text.rstrip("\n"))
            line, col = len(lines), len(lines[-1]) + 1
        else:
            width = max(len(str(tok)), 1)
            msg = f"unexpected {_describe_token(tok)}; expected {_expected_words(err.expected)}"
    elif isinstance(err, UnexpectedCharacters):
        ch = text[err.pos_in_stream] if 0 <= err.pos_in_stream < len(text) else "?"
        msg = f"unexpected character {ch!r}"
        if err.allowed:
            msg += f"; expected {_expected_words(err.allowed)}"
    elif isinstance(err, UnexpectedEOF):
        msg = f"unexpected end of file; expected {_expected_words(set(err.expected))}"
    else:  # pragma: no cover - lark has no other subclasses
        msg = str(err)
    span = Span(file, line, col, line, col + width)
    return SpecSyntaxError([Diagnostic(Severity.ERROR, span, msg)], {file: text})


def _describe_token(tok: Token) -> str:
    if tok.type == "NAME":
        return f"name '{tok}'"
    if tok.type == "INT":
        return f"integer {tok}"
    return f"'{tok}'"


def parse_spec(text: str, file: str = "<string>") -> S.Spec:
    """Parse gpspec source into an AST; raises SpecSyntaxError on the first syntax error, or
    on nesting deeper than `MAX_NESTING` (spec/limits.py: every later stage recurses over the
    tree). CR and CRLF line ends count as LF.

    The AST is immutable (frozen dataclasses and tuples), so one parse of a text serves every
    later load of the same text and file: a model loaded again with other constants (a mapped
    replay's two loads, a sweep's instances, a corpus run's jobs) skips lark, which is most of a
    load (0.15 s of reef_rewind's). Errors are raised again each time, never kept."""
    return _parse_spec(normalize_newlines(text), file)


@lru_cache(maxsize=128)
def _parse_spec(text: str, file: str) -> S.Spec:
    if len(text) > MAX_SOURCE_CHARS:
        line = text.count("\n", 0, MAX_SOURCE_CHARS) + 1
        col = MAX_SOURCE_CHARS - text.rfind("\n", 0, MAX_SOURCE_CHARS)
        msg = f"spec too long: {len(text)} characters (the limit is {MAX_SOURCE_CHARS}); it goes past it here"
        raise SpecSyntaxError([Diagnostic(Severity.ERROR, Span(file, line, col, line, col + 1), msg)], {file: text})
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as err:
        raise _syntax_error(err, file, text) from None
    _check_depth(tree, file, text)
    try:
        return _Builder(file, text).transform(tree)  # type: ignore[no-any-return]
    except VisitError as err:
        if isinstance(err.orig_exc, SpecSyntaxError):
            raise err.orig_exc from None
        raise


def _check_depth(tree: Tree[Token], file: str, text: str) -> None:
    """Refuse a tree deeper than MAX_NESTING, located at the construct that crosses the limit
    (walked with an explicit stack: the tree may be arbitrarily deep)."""
    stack: list[tuple[Tree[Token], int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NESTING:
            line, col = _first_position(node)
            span = Span(file, line, col, line, col + 1)
            msg = (f"nested too deeply: more than {MAX_NESTING} levels of nested expressions, statements or "
                   f"types (split it with 'let' or separate declarations)")
            raise SpecSyntaxError([Diagnostic(Severity.ERROR, span, msg)], {file: text})
        stack.extend((c, depth + 1) for c in node.children if isinstance(c, Tree))


def _first_position(node: Tree[Token]) -> tuple[int, int]:
    meta = node.meta
    if not getattr(meta, "empty", True):
        return meta.line, meta.column
    for tok in node.scan_values(lambda v: isinstance(v, Token)):
        return tok.line or 1, tok.column or 1
    return 1, 1


def _trailing_comment(lines: list[str], line: int) -> str:
    if 1 <= line <= len(lines):
        m = re.search(r"#\s?(.*)$", lines[line - 1])
        if m:
            return m.group(1).strip()
    return ""


@v_args(inline=True, meta=True)
class _Builder(Transformer[Any, Any]):
    """Bottom-up construction of the AST; every node gets the span of its lark `meta`."""

    def __init__(self, file: str, text: str):
        super().__init__()
        self.file = file
        self.lines = source_lines(text)

    def _sp(self, meta: Any) -> Span:
        if getattr(meta, "empty", True):
            return Span(self.file, 0, 0, 0, 0)
        return Span(self.file, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tok(self, tok: Token) -> Span:
        end_col = tok.end_column if tok.end_column is not None else tok.column + len(tok)
        return Span(self.file, tok.line or 0, tok.column or 0, tok.end_line or tok.line or 0, end_col)

    # ----------------------------------------------------------------- file
    def start(self, meta: Any, model: tuple[str, str, int], *decls: Any) -> S.Spec:
        name, desc, line = model
        doc_lines = []
        i = line  # the line after `model`
        while i < len(self.lines) and not self.lines[i].strip():
            i += 1
        while i < len(self.lines) and self.lines[i].lstrip().startswith("#"):
            text = self.lines[i].lstrip()[1:].rstrip()  # the comment's own indentation kept (aligned columns)
            doc_lines.append(text[1:] if text.startswith(" ") else text)
            i += 1
        return S.Spec(self.file, name, desc, "\n".join(doc_lines).strip("\n"), tuple(decls), self._sp(meta))

    def model_decl(self, meta: Any, name: Token, desc: Token | None) -> tuple[str, str, int]:
        return str(name), (str(desc)[1:-1] if desc is not None else ""), meta.end_line

    # ----------------------------------------------------------------- declarations
    def const_decl(self, meta: Any, name: Token, value: S.Expr) -> S.ConstDecl:
        return S.ConstDecl(str(name), value, _trailing_comment(self.lines, meta.end_line), self._sp(meta))

    def enum_decl(self, meta: Any, name: Token, *members: Token) -> S.EnumDecl:
        return S.EnumDecl(str(name), tuple((str(m), self._tok(m)) for m in members), self._sp(meta))

    def symmetric_decl(self, meta: Any, name: Token, rng: S.RangeT) -> S.SymmetricDecl:
        return S.SymmetricDecl(str(name), rng, self._sp(meta))

    def struct_decl(self, meta: Any, name: Token, *fields: tuple[str, S.TypeExpr, Span]) -> S.StructDecl:
        return S.StructDecl(str(name), tuple(fields), self._sp(meta))

    def field_decl(self, meta: Any, name: Token, type_: S.TypeExpr) -> tuple[str, S.TypeExpr, Span]:
        return (str(name), type_, self._sp(meta))

    def var_decl(self, meta: Any, name: Token, type_: S.TypeExpr, init: S.Init) -> S.VarDecl:
        return S.VarDecl(str(name), type_, init, _trailing_comment(self.lines, meta.end_line), self._sp(meta))

    def action_decl(self, meta: Any, *children: Any) -> S.ActionDecl:
        mods = {c.type for c in children if isinstance(c, Token) and c.type in ("INTERNAL", "FAIR")}
        name, params, cost, timing, body = children[len(mods):]
        return S.ActionDecl(str(name), params or (), body, "INTERNAL" in mods, "FAIR" in mods, self._sp(meta),
                            cost=cost, timing=timing)

    def cost(self, meta: Any, e: S.Expr) -> Span:
        # NOTE(retired-cost): `cost` is parsed only to be reported with its location (spec/typecheck.py)
        return self._sp(meta)

    # NOTE(timed): `time L..U`, `time L..`, `time E` and `urgent action` (= `time 0`)
    def time_range(self, meta: Any, lo: S.Expr, hi: S.Expr) -> S.Timing:
        return S.Timing(lo, hi, False, self._sp(meta))

    def time_open(self, meta: Any, lo: S.Expr) -> S.Timing:
        return S.Timing(lo, None, False, self._sp(meta))

    def time_exact(self, meta: Any, e: S.Expr) -> S.Timing:
        return S.Timing(e, e, False, self._sp(meta))

    def urgent_action_decl(self, meta: Any, *children: Any) -> S.ActionDecl:
        mods = [c for c in children if isinstance(c, Token) and c.type in ("INTERNAL", "FAIR", "URGENT")]
        name, params, body = children[len(mods):]
        zero = S.IntLit(0, self._tok(next(m for m in mods if m.type == "URGENT")))
        span = self._sp(meta)
        kinds = {m.type for m in mods}
        return S.ActionDecl(str(name), params or (), body, "INTERNAL" in kinds, "FAIR" in kinds, span,
                            timing=S.Timing(zero, zero, True, span))

    def params(self, meta: Any, *ps: S.Param | None) -> tuple[S.Param, ...]:
        return tuple(p for p in ps if p is not None)

    def param(self, meta: Any, name: Token, type_: S.TypeExpr) -> S.Param:
        return S.Param(str(name), type_, self._sp(meta))

    def fair_decl(self, meta: Any, _fair: Token, *names: Token) -> S.FairDecl:
        return S.FairDecl(tuple((str(n), self._tok(n)) for n in names), self._sp(meta))

    def invariant_decl(self, meta: Any, name: Token, e: S.Expr) -> S.InvariantDecl:
        return S.InvariantDecl(str(name), e, self._sp(meta))

    def transition_decl(self, meta: Any, name: Token, e: S.Expr) -> S.TransitionDecl:
        return S.TransitionDecl(str(name), e, self._sp(meta))

    def liveness_decl(self, meta: Any, name: Token, t: tuple[LivenessKind, S.Expr | None, S.Expr]) -> S.LivenessDecl:
        return S.LivenessDecl(str(name), t[0], t[1], t[2], self._sp(meta))

    def eventually(self, meta: Any, q: S.Expr) -> tuple[LivenessKind, None, S.Expr]:
        return (LivenessKind.EVENTUALLY, None, q)

    def always_eventually(self, meta: Any, q: S.Expr) -> tuple[LivenessKind, None, S.Expr]:
        return (LivenessKind.ALWAYS_EVENTUALLY, None, q)

    def leads_to(self, meta: Any, p: S.Expr, q: S.Expr) -> tuple[LivenessKind, S.Expr, S.Expr]:
        return (LivenessKind.LEADS_TO, p, q)

    def terminal_decl(self, meta: Any, e: S.Expr) -> S.TerminalDecl:
        return S.TerminalDecl(e, self._sp(meta))

    def allow_deadlock(self, meta: Any) -> S.AllowDeadlock:
        return S.AllowDeadlock(self._sp(meta))

    def constraint_decl(self, meta: Any, name: Token, e: S.Expr) -> S.ConstraintDecl:
        return S.ConstraintDecl(str(name), e, self._sp(meta))

    def expect_decl(self, meta: Any, prop: Token, verdict: Token) -> S.ExpectDecl:
        return S.ExpectDecl(str(prop), str(verdict), self._sp(meta))

    def use_decl(self, meta: Any, ref: tuple[str, bool, Span], args: Any, *rest: Any) -> S.UseDecl:
        driven = tuple((str(n), self._tok(n)) for n in rest if isinstance(n, Token) and n.type == "NAME")
        module, is_path, msp = ref
        return S.UseDecl(module, is_path, tuple(args or ()), driven, msp, self._sp(meta))

    def instance_decl(self, meta: Any, ref: tuple[str, bool, Span], _as: Token, name: Token,
                      index: S.TypeExpr | None, args: Any, *rest: Any) -> S.InstanceDecl:
        driven = tuple((str(n), self._tok(n)) for n in rest if isinstance(n, Token) and n.type == "NAME")
        module, is_path, msp = ref
        return S.InstanceDecl(module, is_path, str(name), index, tuple(args or ()), driven, msp,
                              self._tok(name), self._sp(meta))

    def instance_index(self, meta: Any, dom: S.TypeExpr) -> S.TypeExpr:
        return dom

    def refines_decl(self, meta: Any, ref: tuple[str, bool, Span], args: Any, *maps: Any) -> S.RefinesDecl:
        module, is_path, msp = ref
        return S.RefinesDecl(module, is_path, tuple(args or ()), tuple(m for m in maps if m is not None),
                             msp, self._sp(meta))

    def refine_map(self, meta: Any, target: S.Expr, value: S.Expr) -> tuple[S.Expr, S.Expr, Span]:
        return (target, value, self._sp(meta))

    def module_ref(self, meta: Any, tok: Token) -> tuple[str, bool, Span]:
        if tok.type == "STRING":
            return str(tok)[1:-1], True, self._tok(tok)
        return str(tok), False, self._tok(tok)

    def use_args(self, meta: Any, *args: tuple[str, S.Expr, Span] | None) -> tuple[tuple[str, S.Expr, Span], ...]:
        return tuple(a for a in args if a is not None)

    def use_arg(self, meta: Any, name: Token, value: S.Expr) -> tuple[str, S.Expr, Span]:
        return (str(name), value, self._tok(name))
    def latency_decl(self, meta: Any, name: Token, p: S.Expr, q: S.Expr, within: S.Expr | None) -> S.LatencyDecl:
        return S.LatencyDecl(str(name), p, q, within, self._sp(meta))

    # ----------------------------------------------------------------- types and inits
    def bool_type(self, meta: Any) -> S.BoolT:
        return S.BoolT(self._sp(meta))

    def range(self, meta: Any, lo: S.Expr, hi: S.Expr) -> S.RangeT:
        return S.RangeT(lo, hi, self._sp(meta))

    def named_type(self, meta: Any, name: Token) -> S.NamedT:
        return S.NamedT(str(name), self._sp(meta))

    def array_type(self, meta: Any, index: S.TypeExpr, elem: S.TypeExpr) -> S.ArrayT:
        return S.ArrayT(index, elem, self._sp(meta))

    def any_init(self, meta: Any, _tok: Token) -> S.AnyInit:
        return S.AnyInit(self._sp(meta))

    def list_init(self, meta: Any, *items: S.Init) -> S.ListInit:
        return S.ListInit(tuple(items), self._sp(meta))

    def struct_init(self, meta: Any, *items: Any) -> S.StructInit:
        pairs = tuple((str(items[i]), items[i + 1]) for i in range(0, len(items), 2))
        return S.StructInit(pairs, self._sp(meta))

    # ----------------------------------------------------------------- statements
    def block(self, meta: Any, *stmts: S.Stmt) -> tuple[S.Stmt, ...]:
        return tuple(stmts)

    def require(self, meta: Any, e: S.Expr) -> S.RequireS:
        return S.RequireS(e, self._sp(meta))

    def require_assume(self, meta: Any, name: Token, e: S.Expr) -> S.RequireS:
        return S.RequireS(e, self._sp(meta), str(name))

    def assume_decl(self, meta: Any, name: Token, e: S.Expr) -> S.AssumeDecl:
        return S.AssumeDecl(str(name), e, self._sp(meta))

    def cover_decl(self, meta: Any, name: Token, e: S.Expr) -> S.CoverDecl:
        return S.CoverDecl(str(name), e, self._sp(meta))

    def assign(self, meta: Any, target: S.Expr, value: S.Expr) -> S.AssignS:
        return S.AssignS(target, value, self._sp(meta))

    def if_stmt(self, meta: Any, cond: S.Expr, then: tuple[S.Stmt, ...], else_: Any = None) -> S.IfS:
        if else_ is None:
            rest: tuple[S.Stmt, ...] = ()
        elif isinstance(else_, S.IfS):
            rest = (else_,)
        else:
            rest = else_
        return S.IfS(cond, then, rest, self._sp(meta))

    def for_stmt(self, meta: Any, name: Token, domain: S.TypeExpr, body: tuple[S.Stmt, ...]) -> S.ForS:
        return S.ForS(str(name), domain, body, self._sp(meta))

    def let_stmt(self, meta: Any, name: Token, value: S.Expr) -> S.LetS:
        return S.LetS(str(name), value, self._sp(meta))

    def call_stmt(self, meta: Any, name: Token, *args: S.Expr | None) -> S.CallS:
        return S.CallS(str(name), tuple(a for a in args if a is not None), self._sp(meta))

    def call_instance(self, meta: Any, inst: Token, name: Token, *args: S.Expr | None) -> S.CallS:
        """`call g.act(args)`: an instance's action (spec/instances.py)."""
        return S.CallS(f"{inst}.{name}", tuple(a for a in args if a is not None), self._sp(meta))

    def call_element(self, meta: Any, inst: Token, index: S.Expr, name: Token, *args: S.Expr | None) -> S.CallS:
        """`call g[i].act(args)`: an action of element i of an array of instances, called with the
        element as its first argument (spec/instances.py)."""
        return S.CallS(f"{inst}.{name}", (index,) + tuple(a for a in args if a is not None), self._sp(meta))

    # ----------------------------------------------------------------- expressions
    def int_lit(self, meta: Any, tok: Token) -> S.IntLit:
        digits = str(tok).lstrip("0")
        if len(digits) > len(str(MAX_INT)) or int(tok) > MAX_INT:
            msg = f"integer literal too large ({len(digits)} digits; the limit is 2^62 = {MAX_INT})"
            raise SpecSyntaxError([Diagnostic(Severity.ERROR, self._tok(tok), msg)], {self.file: "\n".join(self.lines)})
        return S.IntLit(int(tok), self._sp(meta))

    def true_lit(self, meta: Any) -> S.BoolLit:
        return S.BoolLit(True, self._sp(meta))

    def false_lit(self, meta: Any) -> S.BoolLit:
        return S.BoolLit(False, self._sp(meta))

    def name(self, meta: Any, tok: Token) -> S.Name:
        return S.Name(str(tok), self._sp(meta))

    def index(self, meta: Any, base: S.Expr, idx: S.Expr) -> S.IndexE:
        return S.IndexE(base, idx, self._sp(meta))

    def field(self, meta: Any, base: S.Expr, name: Token) -> S.FieldE:
        return S.FieldE(base, str(name), self._sp(meta))

    def prime(self, meta: Any, e: S.Expr) -> S.Prime:
        return S.Prime(e, self._sp(meta))

    def neg(self, meta: Any, e: S.Expr) -> S.Expr:
        if isinstance(e, S.IntLit):
            return S.IntLit(-e.value, self._sp(meta))
        return S.Neg(e, self._sp(meta))

    def not_(self, meta: Any, e: S.Expr) -> S.Not:
        return S.Not(e, self._sp(meta))

    def binop(self, meta: Any, lhs: S.Expr, op: Token, rhs: S.Expr) -> S.BinE:
        return S.BinE(_OPS[str(op)], lhs, rhs, self._sp(meta))

    compare = binop

    def and_(self, meta: Any, lhs: S.Expr, rhs: S.Expr) -> S.BinE:
        return S.BinE(BinOp.AND, lhs, rhs, self._sp(meta))

    def or_(self, meta: Any, lhs: S.Expr, rhs: S.Expr) -> S.BinE:
        return S.BinE(BinOp.OR, lhs, rhs, self._sp(meta))

    def implies(self, meta: Any, lhs: S.Expr, rhs: S.Expr) -> S.BinE:
        return S.BinE(BinOp.IMPLIES, lhs, rhs, self._sp(meta))

    def ite(self, meta: Any, c: S.Expr, a: S.Expr, b: S.Expr) -> S.IteE:
        return S.IteE(c, a, b, self._sp(meta))

    def fold_kind(self, meta: Any, tok: Token) -> FoldKind:
        return FoldKind(str(tok))

    def fold(self, meta: Any, kind: FoldKind, name: Token, domain: S.TypeExpr, body: S.Expr) -> S.FoldE:
        return S.FoldE(kind, str(name), domain, body, self._sp(meta))

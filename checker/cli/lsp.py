"""`gpcheck lsp`: a language server for .gpspec files (Language Server Protocol 3.17 over stdio)
that publishes the parser's and the type checker's diagnostics as the user types.

What it does: full-text document sync; on open, change and save it runs `spec.load_source` on
the buffer (nothing is explored: the same work as `gpcheck check`) and publishes every error
with its range and notes, or an empty list once the file checks. Hover shows a name's
declaration (a constant's value, a variable's type, an action's parameters, a property's
definition) and its doc comment; go-to-definition jumps to where it is declared
(checker/cli/lsp_symbols.py), from the last version of the buffer that checked. Requests it does not
know are answered with MethodNotFound; notifications it does not know are ignored, as the
protocol asks.

Why its own small JSON-RPC loop and not pygls: the protocol subset a diagnostics-only server
needs is a few messages (initialize, didOpen/didChange/didSave/didClose, shutdown, exit), and
a dependency with its own release cycle for them was not worth it; the loop is deterministic,
synchronous and tested end to end (tests/unit/test_lsp.py).

Positions: LSP lines and characters are 0-based, gpcheck's spans 1-based and counted in code
points. The server announces the `positionEncoding` it uses (LSP 3.17): UTF-32 (code points) when
the client offers it, else UTF-8 when offered, else LSP's default UTF-16, and converts every
position between the client's units and code points (they differ after any character past
U+FFFF, or any non-ASCII one in UTF-8)."""

from __future__ import annotations

import copy
import json
import sys
from typing import IO, Any
from urllib.parse import unquote, urlparse

from gpcheck.spec.errors import GpcheckError, Severity, SpecError

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
MAX_MESSAGE = 64 * 1024 * 1024  # bytes of one message's body; a longer one is skipped and answered with an error
_SEVERITY = {Severity.ERROR: 1, Severity.WARNING: 2, Severity.NOTE: 3}


def uri_to_path(uri: str) -> str:
    """`file:///a/b%20c.gpspec` -> `/a/b c.gpspec`; anything else is kept as the name."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def diagnostics(text: str, uri: str) -> list[dict[str, Any]]:
    """The LSP diagnostics of one buffer: every parse or type error of the spec, [] if it checks
    (positions in code points)."""
    return check(text, uri)[0]


def check(text: str, uri: str) -> tuple[list[dict[str, Any]], Any]:
    """(the buffer's diagnostics, its typed model or None when it does not check)."""
    from gpcheck.spec import load_source

    name = uri_to_path(uri)
    try:
        model = load_source(text, name)
    except SpecError as e:
        return [_lsp_diagnostic(d, name) for d in e.diagnostics], None
    except GpcheckError as e:  # a limit (spec/limits.py) or another located problem without a span
        return [{"range": _range(1, 1, 1, 1), "severity": 1, "source": "gpcheck", "message": str(e)}], None
    return [], model


ENCODINGS = ("utf-32", "utf-8", "utf-16")  # in the order the server prefers them


def to_client(line_text: str, column: int, encoding: str) -> int:
    """A 0-based code-point column of a line in the client's units."""
    if encoding == "utf-32":
        return column
    head = line_text[:column]
    units = len(head.encode("utf-16-le")) // 2 if encoding == "utf-16" else len(head.encode("utf-8"))
    return units + max(0, column - len(line_text))  # past the end: as many units as code points


def from_client(line_text: str, character: int, encoding: str) -> int:
    """A client's 0-based column (in its units) of a line as a 0-based code-point column."""
    if encoding == "utf-32":
        return character
    units = 0
    for i, ch in enumerate(line_text):
        if units >= character:
            return i
        units += (2 if ord(ch) > 0xFFFF else 1) if encoding == "utf-16" else len(ch.encode("utf-8"))
    return len(line_text) + max(0, character - units)


def _range(line: int, col: int, end_line: int, end_col: int) -> dict[str, Any]:
    line, col = max(line, 1), max(col, 1)
    if (end_line, end_col) <= (line, col):
        end_line, end_col = line, col + 1
    return {"start": {"line": line - 1, "character": col - 1},
            "end": {"line": end_line - 1, "character": end_col - 1}}


def _lsp_diagnostic(d: Any, name: str) -> dict[str, Any]:
    span = d.span
    if span is None or span.line <= 0:
        rng = _range(1, 1, 1, 1)
    else:
        rng = _range(span.line, span.column, span.end_line, span.end_column)
    out: dict[str, Any] = {"range": rng, "severity": _SEVERITY.get(d.severity, 1), "source": "gpcheck",
                           "message": d.message}
    related = []
    for note_span, note in d.notes:
        if note_span is not None and note_span.line > 0 and note_span.file == name:
            related.append({"location": {"uri": "", "range": _range(note_span.line, note_span.column,
                                                                    note_span.end_line, note_span.end_column)},
                            "message": note})
        else:
            out["message"] += f"\n{note}"
    if related:
        out["relatedInformation"] = related
    return out


class Server:
    """One client on a pair of binary streams."""

    def __init__(self, inp: IO[bytes], out: IO[bytes]):
        self.inp = inp
        self.out = out
        self.docs: dict[str, str] = {}
        self.checked: dict[str, tuple[str, list[dict[str, Any]]]] = {}  # uri -> (text, its diagnostics)
        self.good: dict[str, tuple[str, Any]] = {}  # uri -> (the last text that checked, its model)
        self.encoding = "utf-16"  # LSP's default, until the client offers another
        self.shutdown = False

    # ------------------------------------------------------------------ framing
    def read(self) -> dict[str, Any] | None:
        """The next message, None at the end of the input."""
        length = None
        while True:
            line = self.inp.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                break
            key, _, value = line.decode("ascii", "replace").partition(":")
            if key.strip().lower() == "content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    length = None
        if length is None or length < 0:
            self.send({"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST,
                                                                 "message": "missing Content-Length"}})
            return {}
        if length > MAX_MESSAGE:
            while length > 0:  # skip it in pieces, never holding it whole
                piece = self.inp.read(min(length, 1 << 20))
                if not piece:
                    return None
                length -= len(piece)
            self._error(None, INVALID_REQUEST, f"message longer than {MAX_MESSAGE} bytes, skipped")
            return {}
        body = self.inp.read(length)
        try:
            msg = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            self._error(None, PARSE_ERROR, f"not a JSON message: {str(e)[:200]}")
            return {}
        if not isinstance(msg, dict):
            self._error(None, INVALID_REQUEST, "a JSON-RPC message is a JSON object")
            return {}
        return msg

    def _error(self, ident: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}})

    def send(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg, ensure_ascii=False).encode("utf-8")
        self.out.write(f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body)
        self.out.flush()

    # ------------------------------------------------------------------ dispatch
    def serve(self) -> int:
        """Answer messages until `exit`; the exit code is 0 after a `shutdown`, else 1. A
        malformed message (wrong types, missing fields, a bad id) is answered with a JSON-RPC
        error when it is a request, dropped when it is a notification, and the server goes on."""
        try:
            return self._serve()
        except (BrokenPipeError, ConnectionError):
            return 0 if self.shutdown else 1  # the client went away: nothing left to answer

    def _serve(self) -> int:
        while True:
            msg = self.read()
            if msg is None:
                return 0 if self.shutdown else 1
            if not msg:
                continue
            method = msg.get("method")
            if method == "exit":
                return 0 if self.shutdown else 1
            try:
                self._dispatch(msg, method)
            except Exception as e:  # noqa: BLE001 - a bad message must not end the session
                if "id" in msg and _valid_id(msg["id"]):
                    self._error(msg["id"], INTERNAL_ERROR, f"{type(e).__name__}: {str(e)[:200]}")

    def _dispatch(self, msg: dict[str, Any], method: Any) -> None:
        if method is None:
            return  # a response to a request of ours (we send none), or junk without a method
        ident = msg.get("id")
        if "id" in msg and not _valid_id(ident):
            self._error(None, INVALID_REQUEST, "the id of a request is a number or a string")
            return
        if not isinstance(method, str):
            if "id" in msg:
                self._error(ident, INVALID_REQUEST, "the method of a request is a string")
            return
        params = msg.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            if "id" in msg:
                self._error(ident, INVALID_PARAMS, f"the params of {method} are not an object")
            return
        if "id" in msg:
            self._request(ident, method, params)
        else:
            self._notification(method, params)

    def _request(self, ident: Any, method: str, params: dict[str, Any]) -> None:
        if method == "initialize":
            from gpcheck.checker.cli.command import version

            caps = params.get("capabilities")
            general = caps.get("general") if isinstance(caps, dict) else None
            offered = general.get("positionEncodings") if isinstance(general, dict) else None
            offered = [e for e in offered if isinstance(e, str)] if isinstance(offered, list) else []
            self.encoding = next((e for e in ENCODINGS if e in offered), "utf-16")
            result: Any = {"capabilities": {"positionEncoding": self.encoding,
                                            "textDocumentSync": {"openClose": True, "change": 1,
                                                                 "save": {"includeText": True}},
                                            "hoverProvider": True, "definitionProvider": True},
                           "serverInfo": {"name": "gpcheck", "version": version()}}
        elif method in ("textDocument/hover", "textDocument/definition"):
            found = self._symbol_at(params)
            if isinstance(found, str):
                self._error(ident, INVALID_PARAMS, found)
                return
            if found is None:
                result = None
            elif method == "textDocument/hover":
                result = {"contents": {"kind": "markdown", "value": found[1].text}}
            elif found[1].line <= 0:
                result = None  # declared in a module this buffer uses, not in the buffer
            else:
                uri, sym = found
                line_text = self._line(uri, sym.line)
                start = to_client(line_text, sym.column - 1, self.encoding)
                end = to_client(line_text, sym.column - 1 + len(sym.name), self.encoding)
                result = {"uri": uri, "range": {"start": {"line": sym.line - 1, "character": start},
                                                "end": {"line": sym.line - 1, "character": end}}}
        elif method == "shutdown":
            self.shutdown = True
            result = None
        else:
            self.send({"jsonrpc": "2.0", "id": ident,
                       "error": {"code": METHOD_NOT_FOUND, "message": f"gpcheck lsp does not handle {method}"}})
            return
        self.send({"jsonrpc": "2.0", "id": ident, "result": result})

    def _notification(self, method: str, params: dict[str, Any]) -> None:
        doc = params.get("textDocument")
        uri = doc.get("uri") if isinstance(doc, dict) else None
        if not isinstance(uri, str):
            return
        if method == "textDocument/didOpen":
            self.docs[uri] = str(doc.get("text", ""))
        elif method == "textDocument/didChange":
            changes = params.get("contentChanges")
            if isinstance(changes, list) and changes and isinstance(changes[-1], dict) and "text" in changes[-1]:
                self.docs[uri] = str(changes[-1]["text"])  # full sync: the last change is the text
        elif method == "textDocument/didSave":
            if "text" in params:
                self.docs[uri] = str(params["text"])
        elif method == "textDocument/didClose":
            self.docs.pop(uri, None)
            self.checked.pop(uri, None)
            self.good.pop(uri, None)
            self.publish(uri, [])
            return
        else:
            return
        if uri in self.docs:
            self.publish(uri, self._diagnostics(uri, self.docs[uri]))

    def _line(self, uri: str, line: int) -> str:
        """Line `line` (1-based) of the document's current text, '' past its end."""
        lines = self.docs.get(uri, "").splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def _symbol_at(self, params: dict[str, Any]) -> "tuple[str, Any] | str | None":
        """(uri, Symbol) of the name at a request's position; None where there is none; the
        problem with the request's params as a string."""
        from gpcheck.checker.cli.lsp_symbols import qualified_at, symbols, word_at

        doc, pos = params.get("textDocument"), params.get("position")
        uri = doc.get("uri") if isinstance(doc, dict) else None
        if not isinstance(uri, str) or not isinstance(pos, dict):
            return "textDocument.uri and position are required"
        line, char = pos.get("line"), pos.get("character")
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (line, char)):
            return "position.line and position.character are non-negative integers"
        good = self.good.get(uri)
        if good is None:
            return None
        text = self._line(uri, line + 1)
        word = word_at(text, from_client(text, char, self.encoding) + 1)
        if word is None:
            return None
        table = symbols(good[1], good[0], uri_to_path(uri))
        dotted = qualified_at(text, from_client(text, char, self.encoding) + 1)
        sym = (table.get(dotted) if dotted else None) or table.get(word)
        return None if sym is None else (uri, sym)

    def _diagnostics(self, uri: str, text: str) -> list[dict[str, Any]]:
        """`diagnostics`, computed again only when the text changed since the last check of this
        document (a save or a change that leaves it as it was does not re-check a large spec)."""
        last = self.checked.get(uri)
        if last is not None and last[0] == text:
            return copy.deepcopy(last[1])
        try:
            items, model = check(text, uri)
            if model is not None:
                self.good[uri] = (text, model)
        except RecursionError:
            items = [{"range": _range(1, 1, 1, 1), "severity": 1, "source": "gpcheck",
                      "message": "the spec nests too deeply to be checked"}]
        self.checked[uri] = (text, copy.deepcopy(items))
        return items

    def publish(self, uri: str, items: list[dict[str, Any]]) -> None:
        """Send a document's diagnostics, their positions in the client's units."""
        for d in items:
            for rel in d.get("relatedInformation", []):
                rel["location"]["uri"] = uri
            for r in [d["range"]] + [rel["location"]["range"] for rel in d.get("relatedInformation", [])]:
                for end in ("start", "end"):
                    p = r[end]
                    p["character"] = to_client(self._line(uri, p["line"] + 1), p["character"], self.encoding)
        self.send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                   "params": {"uri": uri, "diagnostics": items}})


def _valid_id(ident: Any) -> bool:
    """JSON-RPC ids are numbers, strings or null (booleans are not numbers here)."""
    return ident is None or isinstance(ident, str) or (isinstance(ident, (int, float)) and not isinstance(ident, bool))


def serve_stdio() -> int:
    """Run the server on this process's stdin and stdout."""
    return Server(sys.stdin.buffer, sys.stdout.buffer).serve()

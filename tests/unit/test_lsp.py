"""Issue 17 item 8: `gpcheck lsp` speaks the Language Server Protocol over stdio and publishes
the parser's and type checker's diagnostics of the buffer as it changes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpcheck.checker.cli.lsp import Server, diagnostics, uri_to_path

ROOT = Path(__file__).resolve().parents[2]
URI = "file:///tmp/some%20dir/x.gpspec"
BAD = "model x\nvar a: 0..3 = 0\naction f { a = b }\n"
GOOD = "model x\nvar a: 0..3 = 0\naction f { require a < 3\n a = a + 1 }\nallow deadlock\n"


def frame(msg: dict[str, Any]) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def unframe(data: bytes) -> list[dict[str, Any]]:
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        n = int(head.split(b":")[1])
        out.append(json.loads(rest[:n]))
        data = rest[n:]
    return out


def test_diagnostics_of_a_buffer():
    assert uri_to_path(URI) == "/tmp/some dir/x.gpspec"
    [d] = diagnostics(BAD, URI)
    assert d["range"] == {"start": {"line": 2, "character": 15}, "end": {"line": 2, "character": 16}}
    assert d["severity"] == 1 and d["message"] == "unknown name 'b'" and d["source"] == "gpcheck"
    assert diagnostics(GOOD, URI) == []
    syntax = diagnostics("model x\nvar a 0..3\n", URI)
    assert syntax and syntax[0]["range"]["start"]["line"] == 1
    several = diagnostics("model x\nvar a: 0..3 = 0\naction f { a = b\n a = c }\n", URI)
    assert [d["message"] for d in several] == ["unknown name 'b'", "unknown name 'c'"]


def test_a_session_in_process():
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen",
         "params": {"textDocument": {"uri": URI, "languageId": "gpspec", "version": 1, "text": BAD}}},
        {"jsonrpc": "2.0", "method": "textDocument/didChange",
         "params": {"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": GOOD}]}},
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {}},
        {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 9}},
        {"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": URI}}},
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    out = io.BytesIO()
    code = Server(io.BytesIO(b"".join(frame(m) for m in messages)), out).serve()
    assert code == 0
    replies = unframe(out.getvalue())
    assert replies[0]["id"] == 1 and replies[0]["result"]["capabilities"]["textDocumentSync"]["change"] == 1
    published = [r["params"] for r in replies if r.get("method") == "textDocument/publishDiagnostics"]
    assert [len(p["diagnostics"]) for p in published] == [1, 0, 0]  # open (bad), change (good), close
    hover = next(r for r in replies if r.get("id") == 2)
    assert hover["error"]["code"] == -32602  # hover without a document and a position
    assert replies[-1] == {"jsonrpc": "2.0", "id": 3, "result": None}


def test_exit_without_shutdown_is_an_error_and_bad_frames_are_answered():
    out = io.BytesIO()
    data = b"Content-Length: 5\r\n\r\n{bad}" + frame({"jsonrpc": "2.0", "method": "exit"})
    assert Server(io.BytesIO(data), out).serve() == 1
    assert unframe(out.getvalue())[0]["error"]["code"] == -32700


def test_gpcheck_lsp_over_stdio():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "gpcheck", "lsp"], env=env, capture_output=True, timeout=120,
                          input=b"".join(frame(m) for m in [
                              {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
                              {"jsonrpc": "2.0", "method": "textDocument/didOpen",
                               "params": {"textDocument": {"uri": URI, "text": BAD}}},
                              {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
                              {"jsonrpc": "2.0", "method": "exit"}]))
    assert proc.returncode == 0, proc.stderr
    replies = unframe(proc.stdout)
    assert replies[0]["result"]["serverInfo"]["name"] == "gpcheck"
    assert replies[1]["params"]["diagnostics"][0]["message"] == "unknown name 'b'"


# Issue 36: well-framed but malformed messages each ended the server; each is answered (a request)
# or dropped (a notification), and the session goes on to check a document and shut down cleanly.
MALFORMED: list[tuple[bytes, int | None]] = [  # (the message, the error code a reply carries; None: no reply)
    (frame({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": [1, 2]}), -32602),  # params not an object
    (frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": "x"}), None),
    (frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": "x"}}), None),  # missing fields
    (frame({"jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": URI}, "contentChanges": {"text": 1}}}), None),
    (frame([1, 2, 3]), -32600),  # not an object
    (frame("a string"), -32600),
    (frame({"jsonrpc": "2.0", "id": {"a": 1}, "method": "initialize"}), -32600),  # bad ids
    (frame({"jsonrpc": "2.0", "id": [1], "method": "shutdown"}), -32600),
    (frame({"jsonrpc": "2.0", "id": True, "method": "initialize"}), -32600),
    (frame({"jsonrpc": "2.0", "id": 8, "method": 42}), -32600),  # a method that is not a string
    (frame({"jsonrpc": "2.0", "id": 9, "method": "workspace/whatever", "params": 5}), -32602),  # unknown, bad params
    (frame({"jsonrpc": "2.0", "method": "$/unknown", "params": [None]}), None),
    (b"Content-Length: 20001\r\n\r\n" + b"[" * 10000 + b"]" * 10000 + b" ", -32700),  # nested past recursion
    (b"Content-Length: 4\r\n\r\n\xff\xfe\x00\x01", -32700),
]


def test_malformed_messages_are_answered_and_the_server_goes_on():
    tail = [frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": URI, "text": BAD}}}),
            frame({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}), frame({"jsonrpc": "2.0", "method": "exit"})]
    for message, code in MALFORMED:
        out = io.BytesIO()
        assert Server(io.BytesIO(message + b"".join(tail)), out).serve() == 0, message[:80]
        replies = unframe(out.getvalue())
        errors = [r for r in replies if "error" in r]
        assert [e["error"]["code"] for e in errors] == ([code] if code is not None else []), (message[:80], replies)
        published = [r for r in replies if r.get("method") == "textDocument/publishDiagnostics"]
        assert published and published[-1]["params"]["diagnostics"][0]["message"] == "unknown name 'b'"
        assert replies[-1] == {"jsonrpc": "2.0", "id": 99, "result": None}


def test_malformed_messages_over_stdio():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    data = b"".join(m for m, _ in MALFORMED) + frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) \
        + frame({"jsonrpc": "2.0", "method": "exit"})
    proc = subprocess.run([sys.executable, "-m", "gpcheck", "lsp"], env=env, capture_output=True, timeout=120, input=data)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr[-2000:]
    replies = unframe(proc.stdout)
    assert [r["error"]["code"] for r in replies if "error" in r] == [c for _, c in MALFORMED if c is not None]
    assert replies[-1] == {"jsonrpc": "2.0", "id": 2, "result": None}


def test_an_unchanged_document_is_not_checked_again(monkeypatch):
    import gpcheck.checker.cli.lsp as lsp

    calls = []
    real = lsp.check
    monkeypatch.setattr(lsp, "check", lambda text, uri: calls.append(uri) or real(text, uri))
    doc = {"uri": URI, "text": BAD}
    messages = [{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": doc}},
                {"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {"textDocument": {"uri": URI}, "text": BAD}},
                {"jsonrpc": "2.0", "method": "textDocument/didChange",
                 "params": {"textDocument": {"uri": URI}, "contentChanges": [{"text": BAD}]}},
                {"jsonrpc": "2.0", "method": "textDocument/didChange",
                 "params": {"textDocument": {"uri": URI}, "contentChanges": [{"text": GOOD}]}},
                {"jsonrpc": "2.0", "method": "exit"}]
    out = io.BytesIO()
    Server(io.BytesIO(b"".join(frame(m) for m in messages)), out).serve()
    published = [r["params"]["diagnostics"] for r in unframe(out.getvalue())]
    assert [len(d) for d in published] == [1, 1, 1, 0]  # every notification is answered ...
    assert published[0] == published[1] == published[2]
    assert len(calls) == 2  # ... but only a new text is checked


def _session(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = io.BytesIO()
    Server(io.BytesIO(b"".join(frame(m) for m in messages)), out).serve()
    return unframe(out.getvalue())


def _open(text: str, encodings: list[str] | None = None) -> list[dict[str, Any]]:
    caps = {"general": {"positionEncodings": encodings}} if encodings is not None else {}
    return [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": caps}},
            {"jsonrpc": "2.0", "method": "textDocument/didOpen",
             "params": {"textDocument": {"uri": URI, "languageId": "gpspec", "version": 1, "text": text}}}]


# an astral character (two UTF-16 units, four UTF-8 bytes) in a comment before the error
ASTRAL = "model x\nvar a: 0..3 = 0\naction f { require a < 3 # \U0001F680 go\n a = b }\n"
ASTRAL_SAME_LINE = "model x\nvar a: 0..3 = 0 # \U0001F680\naction f { a = \"\U0001F680\" }\n"


@pytest.mark.parametrize("offered, chosen", [(None, "utf-16"), (["utf-16"], "utf-16"), (["utf-8", "utf-16"], "utf-8"),
                                             (["utf-16", "utf-32"], "utf-32")])
def test_position_encoding_is_negotiated(offered, chosen):
    replies = _session(_open(GOOD, offered))
    assert replies[0]["result"]["capabilities"]["positionEncoding"] == chosen


def test_columns_after_an_astral_character_are_in_the_clients_units():
    text = "model x \"\U0001F680 two\" var a: 0..3 = 0 action f { a = b }\n"  # one line: newlines are not needed
    col = text.splitlines()[0].index("= b") + 2  # code points
    for enc, expected in (("utf-32", col), ("utf-16", col + 1), ("utf-8", col + 3)):
        pub = [r for r in _session(_open(text, [enc])) if r.get("method") == "textDocument/publishDiagnostics"]
        starts = [d["range"]["start"] for d in pub[0]["params"]["diagnostics"]]
        assert {"line": 0, "character": expected} in starts, (enc, starts)


HOVER_SPEC = """model h
const N = 3        # kernels the host submits
enum St { Idle, Busy }
var st: St = Idle
var done: 0..N = 0   # kernels finished
action run { require st == Idle and done < N
    st = Busy }
action finish { require st == Busy
    st = Idle
    done = done + 1 }
invariant bounded: done <= N
"""


def _ask(method: str, line: int, character: int, encodings: list[str] | None = None) -> Any:
    replies = _session(_open(HOVER_SPEC, encodings) + [
        {"jsonrpc": "2.0", "id": 7, "method": method,
         "params": {"textDocument": {"uri": URI}, "position": {"line": line, "character": character}}}])
    return next(r for r in replies if r.get("id") == 7)["result"]


def test_hover_shows_the_declaration_and_its_comment():
    line = HOVER_SPEC.splitlines().index("    done = done + 1 }")
    hover = _ask("textDocument/hover", line, 5)
    assert "var done: 0..3" in hover["contents"]["value"] and "kernels finished" in hover["contents"]["value"]
    inv = HOVER_SPEC.splitlines().index("invariant bounded: done <= N")
    hover = _ask("textDocument/hover", inv, len("invariant bounded: done <= ") + 0)
    assert "const N = 3" in hover["contents"]["value"] and "kernels the host submits" in hover["contents"]["value"]
    assert "a member of enum `St`" in _ask("textDocument/hover", 3, len("var st: St = I"))["contents"]["value"]
    assert _ask("textDocument/hover", 0, 0) is None  # `model` is a keyword: hover on declared names only
    assert _ask("textDocument/hover", 4, 30) is None  # inside a comment, past the names


def test_definition_jumps_to_the_declaration():
    line = HOVER_SPEC.splitlines().index("    done = done + 1 }")
    loc = _ask("textDocument/definition", line, 12)
    assert loc["uri"] == URI and loc["range"]["start"] == {"line": 4, "character": 4}
    assert loc["range"]["end"] == {"line": 4, "character": 8}
    loc = _ask("textDocument/definition", 5, len("action run { require st == I"))
    assert loc["range"]["start"] == {"line": 2, "character": HOVER_SPEC.splitlines()[2].index("Idle")}

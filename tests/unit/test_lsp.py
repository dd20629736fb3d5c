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

from gpcheck.checker.lsp import Server, diagnostics, uri_to_path

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
    assert hover["error"]["code"] == -32601  # hover: not handled
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

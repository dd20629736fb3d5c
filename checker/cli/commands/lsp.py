"""`gpcheck lsp`: the .gpspec language server (checker/cli/lsp.py) on stdin/stdout, for editors: it
publishes the parser's and type checker's diagnostics as you type. The TextMate grammar for
syntax highlighting is `docs/editors/gpspec.tmLanguage.json` (`gpcheck docs editors`)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("lsp", help="run the .gpspec language server on stdin/stdout (for editors)",
                       description="Run a Language Server Protocol server for .gpspec files on stdin/stdout: "
                                   "full-text sync, and on every open, change and save the parser's and type "
                                   "checker's diagnostics (nothing is explored). Point your editor's LSP client "
                                   "at `gpcheck lsp` for *.gpspec files; `gpcheck docs editors` says how, and "
                                   "where the TextMate grammar for highlighting is.")
    p.add_argument("--stdio", action="store_true",
                   help="talk over stdin/stdout (the default and only transport; accepted because clients pass it)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from gpcheck.checker.cli.lsp import serve_stdio

    return serve_stdio()

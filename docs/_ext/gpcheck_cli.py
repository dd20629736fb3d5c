"""Sphinx extension: the `gpcheck-cli` directive prints, for the top-level command and for each
subcommand, exactly what `gpcheck ... --help` prints (argparse's own formatting, at 100 columns),
so the CLI reference is generated from the parser and cannot drift from it."""

from __future__ import annotations

import argparse
import os
from typing import Any

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def _help_pages() -> list[tuple[str, str]]:
    from gpcheck.checker.cli.command import build_parser

    os.environ["COLUMNS"] = "100"
    parser = build_parser()
    pages = [("gpcheck", parser.format_help())]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:  # aliases share one parser
                    seen.add(id(sub))
                    pages.append((f"gpcheck {name}", sub.format_help()))
    return pages


class CliDirective(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        out: list[nodes.Node] = []
        for title, text in _help_pages():
            section = nodes.section(ids=[nodes.make_id(title)])
            section += nodes.title(text=title)
            section += nodes.literal_block(text, text, language="text")
            out.append(section)
        return out


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("gpcheck-cli", CliDirective)
    return {"parallel_read_safe": True, "version": "1"}

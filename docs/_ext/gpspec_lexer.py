"""Sphinx extension: a Pygments lexer for ```gpspec blocks (keywords, comments, numbers)."""

from __future__ import annotations

from typing import Any

from pygments.lexer import RegexLexer, words
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text


class GpspecLexer(RegexLexer):
    name = "gpspec"
    aliases = ["gpspec"]
    filenames = ["*.gpspec"]
    tokens = {
        "root": [
            (r"#.*$", Comment.Single),
            (r'"[^"\n]*"', String),
            (words(("model", "const", "var", "enum", "struct", "symmetric", "action", "internal", "fair", "require",
                    "if", "else", "for", "in", "invariant", "transition", "liveness", "latency", "from", "to", "within",
                    "terminal", "allow", "deadlock", "constraint", "expect", "use", "cost", "time", "urgent", "assume",
                    "cover", "all", "any", "sum", "min", "max", "and", "or", "not", "implies", "eventually", "always",
                    "leads_to", "true", "false"), suffix=r"\b"), Keyword),
            (r"\d+", Number),
            (r"[A-Za-z_][A-Za-z0-9_]*'?", Name),
            (r"[-+*/%<>=!]=?|\.\.|->", Operator),
            (r"[{}\[\]():,.]", Punctuation),
            (r"\s+", Text),
        ]
    }


def setup(app: Any) -> dict[str, Any]:
    app.add_lexer("gpspec", GpspecLexer)
    return {"parallel_read_safe": True, "version": "1"}

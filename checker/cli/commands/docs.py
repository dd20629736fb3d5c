"""`gpcheck docs [TOPIC]`: list the documentation shipped with gpcheck, or print one document
(the language reference, the trace format, the tutorial), so that an installed wheel carries
what `--help` and the error messages point at."""

from __future__ import annotations

import argparse

from gpcheck.checker.cli.commands.common import write_out
from gpcheck.checker.cli.manual import TOPICS, doc_path, docs_dir
from gpcheck.checker.report.render import to_json_bytes
from gpcheck.spec.errors import UsageError


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("docs", parents=[common], help="list or print the documentation",
                       description="With no TOPIC, list the documents shipped with gpcheck and where they are; "
                                   "with a TOPIC, print it (Markdown).")
    p.add_argument("topic", nargs="?", choices=list(TOPICS), metavar="TOPIC",
                   help="one of: " + ", ".join(TOPICS))
    p.add_argument("--path", action="store_true", help="print the document's file name instead of its text")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    root = docs_dir()
    if root is None:
        raise UsageError("the documentation is not installed with this copy of gpcheck")
    if args.topic is None:
        listing = [{"topic": t, "file": str(root / f), "about": about} for t, (f, about) in TOPICS.items()]
        if args.json:
            write_out(to_json_bytes({"docs": listing}))
        else:
            width = max(len(t) for t in TOPICS)
            lines = [f"{d['topic']:<{width}}  {d['about']}\n{'':<{width}}  {d['file']}" for d in listing]
            write_out("\n".join(lines) + "\n\nprint one with: gpcheck docs TOPIC\n")
        return 0
    path = doc_path(args.topic)
    assert path is not None
    if args.json:
        write_out(to_json_bytes({"topic": args.topic, "file": str(path), "text": path.read_text(encoding="utf-8")}))
    elif args.path:
        write_out(f"{path}\n")
    else:
        write_out(path.read_text(encoding="utf-8"))
    return 0

"""The `gpcheck` command: argparse subcommands, each in `checker/commands/`.

`main` is the only place that turns a user error into a message and exit code 2; no
subcommand prints a Python traceback for bad input."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Callable, Sequence

from spec.errors import GpcheckError, SpecError

# Subcommand modules, each with `register(subparsers, common) -> None`.
COMMANDS = (
    "checker.commands.verify",
    "checker.commands.check",
    "checker.commands.simulate",
    "checker.commands.replay",
    "checker.commands.export",
    "checker.commands.import_",
    "checker.commands.models",
    "checker.commands.explain",
    "checker.commands.claims",
    "checker.commands.sweep",
)

EXIT_OK, EXIT_VIOLATED, EXIT_USAGE, EXIT_UNKNOWN = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gpcheck", description="Formal models and trace checking for GPU preemption.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    common = _Parser(add_help=False)
    common.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    for name in COMMANDS:
        importlib.import_module(name).register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except SpecError as e:
        sys.stderr.write(e.render() + "\n")
        return EXIT_USAGE
    except GpcheckError as e:
        sys.stderr.write(f"gpcheck: error: {e}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("gpcheck: interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_OK


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()

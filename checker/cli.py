"""The `gpcheck` command: argparse subcommands, each in `checker/commands/`.

`main` is the only place that turns a user error into a message and exit code 2; no
subcommand prints a Python traceback for bad input."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Callable, Sequence

from checker import budget
from checker.commands.flags import add_memory_flag
from spec.errors import GpcheckError, SpecError
from traces.atomic import remove_temp_files

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
    add_memory_flag(common)
    for name in COMMANDS:
        importlib.import_module(name).register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # a usage error (message printed) or --help: the exit code
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    max_memory = args.max_memory if args.max_memory is not None else budget.default_max_memory()
    budget.on_hard_exit(remove_temp_files)
    global _stopped
    try:
        with budget.activate(max_memory=max_memory):
            code = _run(args)
            _stopped = budget.stopped() is not None
            # a report printed after SIGINT/SIGTERM (partial: `unknown`, reason interrupted)
            return budget.signal_exit_code() or code
    except budget.Stop as e:
        _stopped = True
        sys.stderr.write(f"gpcheck: {e.text}\n")
        return e.exit_code


def _run(args: argparse.Namespace) -> int:
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
    except Exception as e:  # noqa: BLE001 - last resort: a bug must not show as a traceback either
        sys.stderr.write(f"gpcheck: internal error: {_describe(e)} (a bug in gpcheck: please report it "
                         f"with the input that caused it)\n")
        return EXIT_USAGE


def _describe(e: BaseException) -> str:
    try:
        text = str(e)
    except Exception:  # noqa: BLE001 - str() of an exception can itself fail
        text = ""
    return f"{type(e).__name__}: {text[:300]}" if text else type(e).__name__


_stopped = False  # the last `main` was stopped by its budget (signal, timeout, memory)


def entry() -> None:
    code = main()
    if _stopped:
        # leave at once: tearing down the interpreter (Z3's objects, large state sets) can take
        # longer than the second a stopped command has to end
        remove_temp_files()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    entry()

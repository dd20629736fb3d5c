"""The `gpcheck` command: argparse subcommands, each in `checker/cli/commands/`.

`main` is the only place that turns a user error into a message and exit code 2; no
subcommand prints a Python traceback for bad input."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from typing import Callable, Sequence

from gpcheck.checker.core import budget, progress
from gpcheck.checker.report import textout
from gpcheck.checker.cli.commands.flags import add_memory_flag
from gpcheck.spec.errors import GpcheckError, OutputError, SpecError
from gpcheck.checker.cli.commands.common import StdoutError, stdout_failure
from gpcheck.traces.atomic import remove_temp_files

# Subcommand modules, each with `register(subparsers, common) -> None`.
COMMANDS = (
    "gpcheck.checker.cli.commands.verify",
    "gpcheck.checker.cli.commands.check",
    "gpcheck.checker.cli.commands.simulate",
    "gpcheck.checker.cli.commands.replay",
    "gpcheck.checker.cli.commands.export",
    "gpcheck.checker.cli.commands.import_",
    "gpcheck.checker.cli.commands.models",
    "gpcheck.checker.cli.commands.explain",
    "gpcheck.checker.cli.commands.claims",
    "gpcheck.checker.cli.commands.sweep",
    "gpcheck.checker.cli.commands.docs",
    "gpcheck.checker.cli.commands.lsp",
    "gpcheck.checker.cli.commands.completion",
    "gpcheck.checker.cli.commands.calibrate",
)

# the subcommand names each module registers (aliases included): a command line that names one
# builds only its parser, so that `gpcheck verify` does not import every other command's modules
COMMAND_NAMES = {
    "verify": "gpcheck.checker.cli.commands.verify", "check": "gpcheck.checker.cli.commands.check",
    "simulate": "gpcheck.checker.cli.commands.simulate", "replay": "gpcheck.checker.cli.commands.replay",
    "export": "gpcheck.checker.cli.commands.export", "import": "gpcheck.checker.cli.commands.import_",
    "models": "gpcheck.checker.cli.commands.models", "explain": "gpcheck.checker.cli.commands.explain",
    "verify-claims": "gpcheck.checker.cli.commands.claims", "claims": "gpcheck.checker.cli.commands.claims",
    "sweep": "gpcheck.checker.cli.commands.sweep", "docs": "gpcheck.checker.cli.commands.docs",
    "lsp": "gpcheck.checker.cli.commands.lsp", "completion": "gpcheck.checker.cli.commands.completion",
    "calibrate": "gpcheck.checker.cli.commands.calibrate",
}

EXIT_OK, EXIT_VIOLATED, EXIT_USAGE, EXIT_UNKNOWN = 0, 1, 2, 3


_json_errors = False  # --json was asked for: errors also go to stdout as a JSON object
_stdout_broken = False  # standard output refused a write: nothing more is sent there


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        if _json_errors:
            _print_json_error(f"{self.prog}: {message}", "usage")
        raise SystemExit(EXIT_USAGE)

    def _print_message(self, message: str, file: object = None) -> None:
        # argparse drops a failed write of --help or a usage message; a help that did not reach
        # standard output is an error (exit 2), as a report that did not
        if not message:
            return
        stream = file if file is not None else sys.stderr
        try:
            stream.write(message)  # type: ignore[attr-defined]
            if stream is sys.stdout:
                stream.flush()  # type: ignore[attr-defined]
        except BrokenPipeError:
            pass
        except (AttributeError, OSError, ValueError) as e:
            if stream is sys.stdout:
                raise StdoutError(stdout_failure(e)) from None


def _print_json_error(exc: BaseException | str, kind: str) -> None:
    """Under --json, the error as `{"error": {"file", "line", "column", "message"}}` on stdout
    (checker/report/error_report.py); the text on stderr stays as it is."""
    from gpcheck.checker.cli.commands.common import wrote_report
    from gpcheck.checker.report.error_report import error_object
    from gpcheck.checker.report.render import to_json_bytes

    if wrote_report() or _stdout_broken:  # the report is out already, or stdout cannot take one
        return
    try:
        sys.stdout.buffer.write(to_json_bytes(error_object(exc, kind)) + b"\n")
        sys.stdout.flush()
    except (BrokenPipeError, ValueError, OSError):
        pass


def version() -> str:
    """The installed distribution's version, else the source tree's (pyproject.toml)."""
    from importlib import metadata

    try:
        return metadata.version("gpcheck")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


class _Version(argparse.Action):
    """--version: argparse's version action, with the version looked up only when asked for
    (reading the installed distribution's metadata takes tens of milliseconds)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        parser._print_message(f"gpcheck {version()}\n", sys.stdout)
        parser.exit()


_EPILOG = """documentation: `gpcheck docs` lists it; `gpcheck docs tutorial` (a first model, trace and test),
`gpcheck docs language` (the gpspec language), `gpcheck docs trace-format` (traces, replay).
exit codes: 0 nothing violated or unknown, 1 something violated (or a trace diverges), 2 bad input
or usage, 3 nothing violated but something unknown, 130/143 stopped by SIGINT/SIGTERM."""


def _columns(text: str) -> int:
    from gpcheck.checker.cli.commands.flags import count

    n = count(text)
    if n < textout.MIN_WIDTH:
        raise argparse.ArgumentTypeError(f"at least {textout.MIN_WIDTH} columns")
    return n


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser; given the command line `argv`, with only the subcommand that it names
    (its usage, help and errors are the same), else with every subcommand."""
    parser = _Parser(prog="gpcheck", description="Formal models and trace checking for GPU preemption.",
                     epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=_Version, help="print gpcheck's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    common = _Parser(add_help=False)
    common.add_argument("--json", action="store_true",
                        help="print one JSON object instead of text (errors too: {\"error\": {\"file\", \"line\", "
                             "\"column\", \"message\"}}; same exit codes)")
    common.add_argument("--width", type=_columns, default=None, metavar="COLUMNS",
                        help="width of text output (default: the terminal's, else $COLUMNS, else 100)")
    add_memory_flag(common)
    named = COMMAND_NAMES.get(argv[0]) if argv else None
    if argv and argv[0] == "--version":  # argparse prints it and exits before it needs a subcommand
        return parser
    for name in (named,) if named else COMMANDS:
        importlib.import_module(name).register(sub, common)
    return parser


def _with_config(parser: argparse.ArgumentParser, words: list[str]) -> list[str]:
    """The command line with the project configuration's defaults put in front of the user's own
    flags (checker/cli/commands/config.py)."""
    if not words or words[0] not in COMMAND_NAMES:
        return words
    sub = next((a.choices.get(words[0]) for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if sub is None:
        return words
    from pathlib import Path

    from gpcheck.checker.cli.commands.config import defaults_argv

    extra = defaults_argv(words[0], sub, words[1:], Path.cwd(), set(COMMAND_NAMES))
    return [words[0], *extra, *words[1:]] if extra else words


def main(argv: Sequence[str] | None = None) -> int:
    global _json_errors, _stdout_broken
    _stdout_broken = False
    words = list(sys.argv[1:] if argv is None else argv)
    _json_errors = "--json" in words[:words.index("--")] if "--" in words else "--json" in words
    parser = build_parser(words)
    if words[:1] != ["--version"]:  # which needs none of the commands' code (it prints and exits)
        from gpcheck.checker.cli.commands.common import reset_report

        reset_report()
    try:
        words = _with_config(parser, words)
    except GpcheckError as e:
        sys.stderr.write(f"gpcheck: error: {e}\n")
        if _json_errors:
            _print_json_error(e, _error_kind(e))
        return EXIT_USAGE
    try:
        args = parser.parse_args(words)
    except SystemExit as e:  # a usage error (message printed) or --help: the exit code
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    except StdoutError as e:  # --help or --version could not be printed
        _stdout_broken = True
        sys.stderr.write(f"gpcheck: error: {e}\n")
        return EXIT_USAGE
    max_memory = getattr(args, "max_memory", None)
    max_memory = max_memory if max_memory is not None else budget.default_max_memory()
    textout.set_width(getattr(args, "width", None))
    budget.on_hard_exit(remove_temp_files)
    global _stopped
    try:
        with budget.activate(max_memory=max_memory), \
                progress.reporting(enabled=not getattr(args, "no_progress", False)):
            code = _run(args)
            _stopped = budget.stopped() is not None
            # a report printed after SIGINT/SIGTERM (partial: `unknown`, reason interrupted)
            return budget.signal_exit_code() or code
    except budget.Stop as e:
        _stopped = True
        sys.stderr.write(f"gpcheck: {e.text}\n")
        if _json_errors:
            _print_json_error(e.text, "stopped")
        return e.exit_code


def _run(args: argparse.Namespace) -> int:
    global _stdout_broken
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except SpecError as e:
        sys.stderr.write(e.render() + "\n")
        sys.stderr.write(f"gpcheck: the language is described in {_docs_hint('language')}\n")
        if _json_errors:
            _print_json_error(e, "spec")
        return EXIT_USAGE
    except OutputError as e:  # standard output or an output file cannot be written
        _stdout_broken = _stdout_broken or isinstance(e, StdoutError)
        sys.stderr.write(f"gpcheck: error: {e}\n")
        if _json_errors:
            _print_json_error(e, "output")
        return EXIT_USAGE
    except GpcheckError as e:
        sys.stderr.write(f"gpcheck: error: {e}\n")
        if _json_errors:
            _print_json_error(e, _error_kind(e))
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("gpcheck: interrupted\n")
        if _json_errors:
            _print_json_error("interrupted", "stopped")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:  # noqa: BLE001 - last resort: a bug must not show as a traceback either
        sys.stderr.write(f"gpcheck: internal error: {_describe(e)} (a bug in gpcheck: please report it "
                         f"with the input that caused it)\n")
        if _json_errors:
            _print_json_error(f"internal error: {_describe(e)}", "internal")
        return EXIT_USAGE


def _docs_hint(topic: str) -> str:
    from gpcheck.checker.cli.manual import pointer

    return pointer(topic)


def _error_kind(e: GpcheckError) -> str:
    from gpcheck.spec.errors import TraceError, UsageError

    if isinstance(e, TraceError):
        return "trace"
    if isinstance(e, UsageError):
        return "usage"
    return "input"


def _describe(e: BaseException) -> str:
    try:
        text = str(e)
    except Exception:  # noqa: BLE001 - str() of an exception can itself fail
        text = ""
    return f"{type(e).__name__}: {text[:300]}" if text else type(e).__name__


_stopped = False  # the last `main` was stopped by its budget (signal, timeout, memory)


def _stop_before_work(signum: int, frame: object) -> None:
    """SIGINT/SIGTERM while gpcheck starts (imports, argument parsing): nothing has been done or
    written yet, so leave quietly with 128 + the signal instead of a KeyboardInterrupt traceback.
    `budget.activate` installs the real handlers once a command runs."""
    sys.stderr.write("gpcheck: interrupted before any work\n")
    os._exit(128 + signum)


def entry() -> None:
    """The `gpcheck` command: `main`, then leave at once (`_leave`)."""
    for s in budget.SIGNALS:
        signal.signal(s, _stop_before_work)
    if sys.stderr is None:  # started with descriptor 2 closed: messages go nowhere, not into a traceback
        sys.stderr = open(os.devnull, "w")
    if sys.stdout is None:
        sys.stderr.write("gpcheck: error: standard output is closed: nowhere to print the report "
                         "(redirect it to a file or /dev/null)\n")
        os._exit(EXIT_USAGE)
    code = main()
    if _stopped:
        remove_temp_files()
    _leave(code)


def _flush_std() -> bool:
    """Flush stdout and stderr; False when stdout held text it could not write (a full disk,
    /dev/full: the report is incomplete) and no error was reported for it yet."""
    ok = True
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except BrokenPipeError:
            pass
        except (ValueError, OSError):
            ok = ok and stream is not sys.stdout
    return ok or _stdout_broken


def _leave(code: int) -> None:
    """End the process once the command is done: wait for its other non-daemon threads, flush
    the standard streams, run the atexit handlers (they close what asked to be closed), flush
    again and exit without tearing the interpreter down. The teardown frees every object one by
    one (Z3's, the state sets, numpy's and the JIT's) and takes up to a tenth of a second after
    a search, longer than the second a stopped command has to end. Only the command line leaves
    this way; the API (`main`) returns."""
    import atexit
    import threading

    if not _stopped:
        for t in threading.enumerate():
            if t is not threading.current_thread() and not t.daemon and t.is_alive():
                t.join()
    if not _flush_std() and code in (EXIT_OK, EXIT_VIOLATED, EXIT_UNKNOWN):  # a report that did not get out
        sys.stderr.write(f"gpcheck: error: {stdout_failure(None)}\n")
        code = EXIT_USAGE
    try:
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001 - as at a normal exit: a failing handler does not change the code
        pass
    _flush_std()
    os._exit(code)


if __name__ == "__main__":
    entry()

"""`python -m gpcheck ...` and the `gpcheck` console script: the `gpcheck` command.

`entry` makes SIGINT/SIGTERM end the process quietly (exit 128 + the signal, no traceback)
before anything else is imported: importing `gpcheck.checker.cli.command` imports `gpcheck.checker`,
whose API takes most of a second to import, and a Ctrl-C in that time was a KeyboardInterrupt
traceback (issue 36). `checker/core/budget.py` installs the real handlers once a command runs. Only
`os` and `_signal` (the built-in C module, without `signal`'s enum import) are imported here:
both are in the interpreter before its first line runs."""

import os

import _signal as signal


def _stop_before_work(signum: int, frame: object) -> None:
    try:
        os.write(2, b"gpcheck: interrupted before any work\n")
    except OSError:
        pass
    os._exit(128 + signum)


def entry() -> None:
    """The `gpcheck` command (checker/cli/command.py `entry`), with the quiet stop installed first."""
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, _stop_before_work)
    from gpcheck.checker.cli.command import entry as command

    command()


if __name__ == "__main__":
    entry()

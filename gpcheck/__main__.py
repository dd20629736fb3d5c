"""`python -m gpcheck ...` and the `gpcheck` console script: the `gpcheck` command.

`entry` makes SIGINT/SIGTERM end the process quietly (exit 128 + the signal, no traceback)
before anything else is imported: importing `gpcheck.checker.cli.command` imports `gpcheck.checker`,
whose API takes most of a second to import, and a Ctrl-C in that time was a KeyboardInterrupt
traceback (issue 36). Both ways of running the command import the `gpcheck` package before this
module runs a line, so the package installs the quiet stop first when it is imported as the command
(gpcheck/__init__.py `_run_as_the_command`); `checker/core/budget.py` installs the real handlers once a
command runs."""

from gpcheck import _install_quiet_stop


def entry() -> None:
    """The `gpcheck` command (checker/cli/command.py `entry`), with the quiet stop installed first."""
    _install_quiet_stop()  # already on when this package was imported as the command; not if imported otherwise
    from gpcheck.checker.cli.command import entry as command

    command()


if __name__ == "__main__":
    entry()

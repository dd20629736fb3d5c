"""`gpcheck completion SHELL`: print a tab-completion script for bash, zsh or tcsh, generated
from gpcheck's argument parser by shtab (a maintained generator of static completion scripts: no
Python runs at completion time, unlike argcomplete's hook).

    gpcheck completion bash > ~/.local/share/bash-completion/completions/gpcheck
    gpcheck completion zsh > ~/.zfunc/_gpcheck      # with fpath+=(~/.zfunc) before compinit"""

from __future__ import annotations

import argparse

from gpcheck.checker.cli.commands.common import write_out
from gpcheck.spec.errors import UsageError

SHELLS = ("bash", "zsh", "tcsh")


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("completion", help="print a shell completion script (bash, zsh, tcsh)",
                       description="Print a tab-completion script for SHELL, generated from gpcheck's "
                                   "commands and options. bash: gpcheck completion bash > "
                                   "~/.local/share/bash-completion/completions/gpcheck; zsh: gpcheck completion "
                                   "zsh > ~/.zfunc/_gpcheck (with fpath+=(~/.zfunc) before compinit).")
    p.add_argument("shell", choices=SHELLS, metavar="SHELL", help="one of: " + ", ".join(SHELLS))
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        import shtab
    except ImportError:
        raise UsageError("shell completion needs the shtab package: python -m pip install shtab") from None
    from gpcheck.checker.cli.command import build_parser

    write_out(shtab.complete(build_parser(), shell=args.shell))
    return 0

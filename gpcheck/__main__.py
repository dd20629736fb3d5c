"""`python -m gpcheck ...`: the `gpcheck` command."""

from gpcheck.checker.cli import entry

if __name__ == "__main__":
    entry()

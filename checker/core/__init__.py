"""Verdicts, the resource budget and the progress line: what every stage of `checker/` shares.

May import: `gpcheck.spec` only (traces/ imports this package, so nothing above it may be imported here)."""

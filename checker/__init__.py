"""Engines and front ends: explicit search, liveness, Z3 engines, reports, the `gpcheck` command."""

from checker.api import ENGINES, load, verify
from checker.verdict import Counterexample, Report, Result, Step, Verdict

__all__ = ["ENGINES", "Counterexample", "Report", "Result", "Step", "Verdict", "load", "verify"]

"""Minimal specs on which an engine disagreed with the reference semantics (issue 11 and the
differential runs, shrunk by hypothesis; /work/diff-findings.md has the story of each).
tests/quality/test_differential.py runs each against the engines named; a case whose engine bug
is still open names the finding in `open_finding` and is a strict expected failure."""

from __future__ import annotations

from dataclasses import dataclass

ALL = ("explicit", "bmc", "kind", "pdr", "auto")


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    engines: tuple[str, ...] = ALL
    open_finding: str = ""


REGRESSIONS = [
    Case("kind_shared_base_case", """model m
var x: 0..10 = 0
var done: bool = false
action inc  { require not done and x < 10; x = x + 1 }
action stop { require not done and x == 0; done = true }
allow deadlock
invariant p1: x < 10
invariant p2: not done
"""),
    Case("kind_shared_base_case_deadlock", """model m
var x: 0..10 = 0
var done: bool = false
action inc  { require not done and x < 10; x = x + 1 }
action stop { require not done and x == 0; done = true }
terminal: x == 10
invariant p1: x < 10
"""),
    Case("explicit_stops_evaluating_violated_invariant", """model m
var i: 0..3 = 0
var a: [0..2] -> 0..2 = 0
action step { require i < 3; i = i + 1 }
allow deadlock
invariant p: a[i] == 1
"""),
    Case("constraint_fails_to_evaluate", """model m
var i: 0..3 = 0
var a: [0..2] -> 0..2 = 0
action step { require i < 3; i = i + 1 }
allow deadlock
constraint c: a[i] == 0
"""),
    Case("transition_fails_to_evaluate", """model m
var i: 0..3 = 0
var a: [0..2] -> 0..2 = 0
action step { require i < 3; i = i + 1 }
allow deadlock
transition t: a[i'] == a[i]
"""),
    Case("terminal_fails_to_evaluate", """model m
var i: 0..3 = 0
var a: [0..2] -> 0..2 = 0
action step { require i < 3; i = i + 1 }
terminal: a[i] == 0
"""),
    Case("liveness_predicate_fails_to_evaluate", """model m
var i: 0..3 = 0
var a: [0..2] -> 0..2 = 0
fair action step { require i < 3; i = i + 1 }
allow deadlock
liveness l: eventually a[i] == 2
"""),
    Case("lasso_liveness_shared_unrolling", """model m
var x: 0..3 = 0
fair action inc { require x < 3 and x != 1; x = x + 1 }
action jump { require x == 0; x = 1 }
liveness p1: always eventually x != 3
liveness p2: eventually x == 3
"""),
    Case("kind_self_loop_transition_error", """model k
var s: bool = false
action act0 { s = s }
transition tr1: (0 / 0) < 0
"""),  # kind proved range, then tr1 assuming range: range's step errors need the open-ended path
]

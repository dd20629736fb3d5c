"""Small random specs with module instances (issue 32): one module, instantiated by name with
different constants and as an array, composed with a using model that reads and writes the
instances' state. Seeded and deterministic; every spec parses and type-checks by construction.
Used by test_instance_differential.py (every engine against tests/reference/)."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class InstanceSpec:
    module: str  # the text of "mod.gpspec"
    top: str     # the using model, which names "mod.gpspec"


def _guard(r: random.Random) -> str:
    return r.choice(["x < K", "x > 0", "not f", "f", "p == A", "p != B", "x + 1 <= K and not f", "true"])


def module_text(r: random.Random) -> str:
    lines = ['model mod "a random module"', f"const K = {r.randint(1, 2)}", "enum Ph { A, B }",
             f"var x: 0..K = {r.choice(['0', '0', 'any'])}", "var f: bool = false", "var p: Ph = A"]
    lines.append(f"action inc {{ require {_guard(r)}; require x < K; x = x + 1 }}")
    lines.append(f"action flip {{ require {_guard(r)}; f = not f; p = if f then A else B }}")
    if r.random() < 0.6:
        lines.append(f"action drop(d: 1..2) {{ require x >= d and {_guard(r)}; x = x - d }}")
    if r.random() < 0.5:
        lines.append("fair action inc")
    lines.append(f"invariant m_inv: {r.choice(['x <= K', 'not (f and x == K)', 'p == A or x > 0', 'x + 1 <= K or f'])}")
    if r.random() < 0.3:
        lines.append("transition m_step: x' >= x or x' == 0 or f")
    if r.random() < 0.3:
        lines.append("allow deadlock")
    return "\n".join(lines) + "\n"


def top_text(r: random.Random) -> str:
    arrays = r.random() < 0.7
    named_b = r.random() < (0.3 if arrays else 0.8)
    lines = ['model top "instances of mod"', f"const KA = {r.randint(1, 2)}",
             f'use "mod.gpspec" as a(K = KA)']
    if named_b:
        lines.append(f'use "mod.gpspec" as b(K = {r.choice([1, 1, 2])})')
    if arrays:
        lines.append(f'use "mod.gpspec" as g[0..1](K = 1)')
    lines.append("var c: 0..2 = 0")
    reads = ["a.x", "a.K"] + (["b.x"] if named_b else []) + (["g[i].x"] if arrays else [])
    flags = ["a.f"] + (["b.f"] if named_b else []) + (["g[i].f"] if arrays else [])
    param = "(i: 0..1)" if arrays else ""
    lines.append(f"action sync{param} {{ require c < 2 and {r.choice(reads)} >= {r.randint(0, 1)}; "
                 f"c = c + 1; {r.choice(flags)} = {r.choice(['true', 'false', 'not ' + r.choice(flags)])} }}")
    lines.append(f"action back {{ require c > 0 and {r.choice(['a.p == A', 'a.p == B', 'not a.f'])}; c = c - 1 }}")
    if arrays and not named_b and r.random() < 0.6:
        lines.append("action poke(i: 0..1) { require g[i].x < g[i].K; g[i].x = g[i].x + 1 }")
    props = ["not (a.f and c == 2)", "a.x <= KA", "c < 2 or a.x == 0"]
    if arrays:
        props += ["all i in 0..1: g[i].x <= g[i].K", "not (g[0].f and g[1].f and c == 1)", "(count i in 0..1: g[i].f) < 2"]
    if named_b:
        props += ["a.x + b.x < 3", "not (a.f and b.f)"]
    for k, e in enumerate(r.sample(props, 2)):
        lines.append(f"invariant t{k}: {e}")
    if r.random() < 0.3:
        lines.append("constraint small: c < 2")
    return "\n".join(lines) + "\n"


def instance_spec(seed: int) -> InstanceSpec:
    r = random.Random(seed)
    return InstanceSpec(module_text(r), top_text(r))


__all__ = ["InstanceSpec", "instance_spec"]

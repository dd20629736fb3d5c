"""Random gpspec models with symmetric types (NOTE(symmetry)), symmetric by construction.

Each model declares one or two symmetric types (2 or 3 values), per-element state (arrays
indexed by them, of ints, bools, an enum, nested int-indexed arrays, arrays indexed by both
types, pointers holding a symmetric value), shared scalars, and actions whose parameters range
over the symmetric types: guards comparing symmetric values with == / !=, folds over the types,
`for` loops touching their own element, writes that can leave their range (range violations),
and invariants, transition properties, a deadlock check, sometimes a constraint or `allow
deadlock`, and sometimes a liveness property (so the reduction's refusal is exercised).

Deterministic: `sym_spec(seed)` is a pure function of the seed. Used by tests/unit/test_symmetry.py
(reduced vs unreduced search, orbit counts, counterexample replay, the reference semantics)."""

from __future__ import annotations

import random


def sym_spec(seed: int, liveness: bool | None = None, small: bool = False) -> str:
    """One random symmetric spec; `small` keeps its state space to a few thousand states (for
    the reference semantics, which enumerates every state)."""
    r = random.Random(seed)
    k = r.choice([2, 3])
    two = r.random() < 0.35 and not small
    j = r.choice([2, 3]) if two else 0
    lines = [f'model sym{seed} "random symmetric model {seed}"', f"const K = {k}", "symmetric P = 0..K-1"]
    if two:
        lines += [f"const J = {j}", "symmetric Q = 0..J-1"]
    lines.append("enum Ph { Idle, Busy, Done }")
    amax = r.choice([1, 2] if small else [1, 2, 3])
    gmax = r.choice([1, 2] if small else [2, 3, 4])
    lines += [
        f"var a: [P] -> 0..{amax} = 0",
        f"var b: [P] -> bool = {r.choice(['true', 'false'])}",
        "var ph: [P] -> Ph = Idle",
        f"var g: 0..{gmax} = 0",
    ]
    has_own = r.random() < 0.7
    has_ptr = r.random() < 0.5 and not (small and k == 3)
    has_nest = r.random() < 0.5 and not small
    if has_own:
        lines += ["var own: P = any", "var held: bool = false"]
    if has_ptr:
        lines.append("var ptr: [P] -> P = any")
    if has_nest:
        lines.append("var m: [P] -> [0..1] -> 0..1 = 0")
    if two:
        lines.append("var link: [P] -> [Q] -> bool = false")

    def guard(p: str, other: str | None) -> str:
        opts = [f"a[{p}] < {amax}", f"b[{p}]", f"not b[{p}]", f"ph[{p}] == Idle", f"ph[{p}] != Done",
                f"g < {gmax}", f"(count x in P: b[x]) <= g", f"(all x in P: a[x] <= a[{p}])",
                f"(any x in P: ph[x] == Busy)"]
        if other:
            opts += [f"{p} != {other}", f"{p} == {other}", f"a[{p}] <= a[{other}]"]
        if has_own:
            opts += [f"own == {p}", f"own != {p}", "held", "not held"]
        if has_ptr:
            opts += [f"ptr[{p}] == {p}", f"ptr[{p}] != {p}", f"b[ptr[{p}]]"]
        if has_nest:
            opts += [f"m[{p}][0] == 0", f"m[{p}][1] < 1"]
        return r.choice(opts)

    def stmt(p: str, other: str | None, q: str | None) -> str:
        opts = [f"a[{p}] = a[{p}] + 1", f"a[{p}] = 0", f"b[{p}] = not b[{p}]", f"ph[{p}] = Busy",
                f"ph[{p}] = if ph[{p}] == Busy then Done else Idle", "g = g + 1",
                f"g = count x in P: ph[x] != Idle", "for x in P { b[x] = not b[x] }",
                f"for x in P {{ if ph[x] == Done {{ a[x] = 0 }} }}"]
        if other:
            opts += [f"a[{other}] = a[{p}]", f"b[{p}] = b[{other}]"]
        if has_own:
            opts += [f"own = {p}\n    held = true", "held = false", f"a[own] = a[own] + 1"]
            if other:
                opts.append(f"own = if b[{p}] then {p} else {other}")
        if has_ptr:
            opts += [f"ptr[{p}] = {other or p}", f"a[ptr[{p}]] = a[{p}]", f"for x in P {{ ptr[x] = x }}"]
        if has_nest:
            opts += [f"m[{p}][g % 2] = 1 - m[{p}][g % 2]", f"m[{p}][1] = m[{p}][0]"]
        if q:
            opts += [f"link[{p}][{q}] = not link[{p}][{q}]", f"for y in Q {{ link[{p}][y] = false }}"]
        return r.choice(opts)

    n_actions = r.randint(2, 4)
    for ai in range(n_actions):
        params = ["p: P"]
        other = None
        q = None
        if r.random() < 0.5:
            params.append("r: P")
            other = "r"
        if two and r.random() < 0.6:
            params.append("q: Q")
            q = "q"
        body = [f"    require {guard('p', other)}"]
        if r.random() < 0.5:
            body.append(f"    require {guard('p', other)}")
        for _ in range(r.randint(1, 3)):
            body.append("    " + stmt("p", other, q).replace("\n", "\n    "))
        fair = "fair " if r.random() < 0.6 else ""
        lines.append(f"{fair}action act{ai}({', '.join(params)}) {{\n" + "\n".join(body) + "\n}")
    if r.random() < 0.5:
        lines.append("action reset {\n    require all x in P: ph[x] == Done\n    for x in P { ph[x] = Idle }\n    g = 0\n}")

    invs = [f"all x in P: a[x] <= {r.randint(0, amax)}", f"(count x in P: b[x]) <= {r.randint(0, k)}",
            f"not (all x in P: ph[x] == Done)", f"g < {r.randint(1, gmax)}",
            f"(sum x in P: a[x]) <= {r.randint(0, k * amax)}", "all x in P: all y in P: x != y implies a[x] + a[y] <= 3"]
    if has_own:
        invs += ["held implies b[own]", "held implies ph[own] != Done"]
    if has_ptr:
        invs += ["all x in P: ptr[x] == x or b[x]"]
    if two:
        invs += ["(count x in P: any y in Q: link[x][y]) <= 1"]
    for n, text in enumerate(r.sample(invs, r.randint(1, 3))):
        lines.append(f"invariant inv{n}: {text}")
    trans = ["g' >= g", "all x in P: a[x]' >= a[x]", "all x in P: ph[x] == Done implies ph[x]' == Done"]
    if has_own:
        trans.append("held implies own' == own or not held'")
    for n, text in enumerate(r.sample(trans, r.randint(0, 2))):
        lines.append(f"transition tr{n}: {text}")
    want_live = r.random() < 0.2 if liveness is None else liveness
    if want_live:
        lines.append("liveness live0: eventually (any x in P: ph[x] == Done)")
    extra = r.random()
    if extra < 0.2:
        lines.append("allow deadlock")
    elif extra < 0.5:
        lines.append("terminal: all x in P: ph[x] != Idle")
    if r.random() < 0.15:
        lines.append(f"constraint small: g < {gmax}")
    return "\n".join(lines) + "\n"

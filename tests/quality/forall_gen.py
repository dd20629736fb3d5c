"""The spec generator of the `--for-all` soundness fuzzer (tests/quality/forall_fuzz.py).

A spec is a few *pieces* over one to three named constants (`N`, `M`, `K`), each piece a
fragment the engine reaches: counters bounded by a constant, saturating increments, arrays
`[0..N-1]` with parameterised actions `i: 0..N-1`, `for i in 0..N-1` loops, `all/any/count/sum`
folds over symbolic ranges, pointers into arrays, nullable references (`0..N` with N for none),
pipelines, slot arrays accumulating per stream (the counter abstraction), a lock over owner
flags, two-parameter writes, shifting loops, snapshots, enum-valued tasks, the ring example's
shape, a two-dimensional array, a count inside an action, differences that grow with N, derived
constants (`const D = N / 9`, `if N == 4 then ...`), constraints. Each piece offers properties
of three sorts: true at every size, true only up to some size beyond the sampled ones (a counter
reaching 5 only when N >= 5, `count(...) <= 3`, `D == 0`), and false already at a small size
(the hints are informative only: the explicit engine is the judge). `generate(seed, index)` is
deterministic on any machine (`random.Random` of a string); `rich_cases` takes
tests/quality/richgen.py's whole-language specs instead."""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

CONSTS = ("N", "M", "K")


# ----------------------------------------------------------------------------------------- specs


@dataclass
class Piece:
    """Declarations over one constant, with its properties (text, kind: 'all' true at every
    size, 'upto' true only up to some size, 'small' false at a small size; informative only:
    the explicit engine is the judge)."""

    consts: list[str] = field(default_factory=list)  # extra `const` lines (derived constants)
    vars: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    props: list[tuple[str, str]] = field(default_factory=list)


def _counter(r: random.Random, c: str, u: str) -> Piece:
    """A counter up to the constant, maybe reset; thresholds on it."""
    v = f"c{u}"
    top = r.choice([c, f"{c} + 1"])
    p = Piece(vars=[f"var {v}: 0..{top} = {'any' if r.random() < 0.15 else 0}"],
              actions=[f"action inc{u} {{\n    require {v} < {top}\n    {v} = {v} + 1\n}}"])
    if r.random() < 0.5:
        p.actions.append(f"action reset{u} {{\n    require {v} == {top}\n    {v} = 0\n}}")
    t = r.randint(3, 6)
    p.props += [(f"{v} <= {top}", "all"), (f"{v} <= {t}", "upto"), (f"{v} < 1", "small"),
                (f"{v} != {t} or {c} >= {t}", "all"), (f"{v} + 1 <= 2 * {c} + 1", "all")]
    p.props.append((f"{v}' <= {v} + 1", "all"))
    return p


def _saturating(r: random.Random, c: str, u: str) -> Piece:
    """`s = if s <= C then s + 1 else s`: it stops at C + 1."""
    v = f"s{u}"
    k = r.choice(["", " - 1"])
    p = Piece(vars=[f"var {v}: 0..{c} + 1 = 0"],
              actions=[f"action sat{u} {{\n    {v} = if {v} <= {c}{k} then {v} + 1 else {v}\n}}"])
    t = r.randint(4, 7)
    p.props += [(f"{v} <= {c} + 1", "all"), (f"{v} <= {c}", "small"), (f"{v} <= {t}", "upto"),
                (f"{v}' >= {v}", "all"), (f"{v}' == {v} + 1 or {v}' == {v}", "all")]
    return p


def _flags(r: random.Random, c: str, u: str) -> Piece:
    """Bool flags per index, set one at a time, cleared by a loop."""
    v = f"f{u}"
    p = Piece(vars=[f"var {v}: [0..{c}-1] -> bool = false"],
              actions=[f"action set{u}(i: 0..{c}-1) {{\n    require not {v}[i]\n    {v}[i] = true\n}}"])
    if r.random() < 0.6:
        p.actions.append(f"action clear{u} {{\n    for i in 0..{c}-1 {{\n        {v}[i] = false\n    }}\n}}")
    t = r.randint(3, 5)
    cnt = f"(count i in 0..{c}-1: {v}[i])"
    p.props += [(f"{cnt} <= {c}", "all"), (f"{cnt} <= {t}", "upto"),
                (f"all i in 0..{c}-1: {v}[i] implies i < {t + 1}", "upto"),
                (f"not (any i in 0..{c}-1: {v}[i])", "small"), (f"{cnt} >= 0", "all"),
                # a fold reading its binder: min(C, t - 1) at the start, so false once C >= t
                (f"(count i in 0..{c}-1: not {v}[i] and i < {t - 1}) != {t - 1} or {c} < {t} or {v}[0]", "upto"),
                (f"{cnt}' <= {cnt} + 1", "all")]
    if r.random() < 0.4:  # a barrier: `all` over the range in a guard, then a round counted
        rd = f"rounds{u}"
        p.vars.append(f"var {rd}: 0..{c} = 0")
        p.actions.append(f"action barrier{u} {{\n    require (all i in 0..{c}-1: {v}[i]) and {rd} < {c}\n"
                         f"    {rd} = {rd} + 1\n    for i in 0..{c}-1 {{\n        {v}[i] = false\n    }}\n}}")
        p.props += [(f"{rd} <= {c}", "all"), (f"{rd} <= {t}", "upto"), (f"{rd} == 0", "small")]
    return p


def _values(r: random.Random, c: str, u: str) -> Piece:
    """Small counters per index, bumped one at a time, maybe decremented by a loop; sums."""
    v = f"a{u}"
    cap = r.randint(1, 3)
    p = Piece(vars=[f"var {v}: [0..{c}-1] -> 0..{cap} = 0"],
              actions=[f"action bump{u}(i: 0..{c}-1) {{\n    require {v}[i] < {cap}\n    {v}[i] = {v}[i] + 1\n}}"])
    if r.random() < 0.5:
        p.actions.append(f"action drain{u} {{\n    for i in 0..{c}-1 {{\n        if {v}[i] > 0 {{\n"
                         f"            {v}[i] = {v}[i] - 1\n        }}\n    }}\n}}")
    t = r.randint(cap + 2, 3 * cap + 3)
    s = f"(sum i in 0..{c}-1: {v}[i])"
    p.props += [(f"(sum i in 0..{c}-1: {v}[i] + i) <= {r.randint(4, 12)}", "upto"),(f"{s} <= {cap} * {c}", "all"), (f"{s} <= {t}", "upto"),
                (f"all i in 0..{c}-1: {v}[i] <= {cap}", "all"),
                (f"(count i in 0..{c}-1: {v}[i] == {cap}) <= {r.randint(2, 4)}", "upto"),
                (f"{s} == 0", "small"), (f"{s}' <= {s} + 1", "all")]
    return p


def _pointer(r: random.Random, c: str, u: str) -> Piece:
    """A pointer that marks the elements it passes; facts about the elements below it."""
    p_, d = f"p{u}", f"d{u}"
    p = Piece(vars=[f"var {p_}: 0..{c} = 0", f"var {d}: [0..{c}-1] -> bool = false"],
              actions=[f"action adv{u} {{\n    require {p_} < {c}\n    {d}[{p_}] = true\n    {p_} = {p_} + 1\n}}"])
    if r.random() < 0.4:
        p.actions.append(f"action rew{u} {{\n    require {p_} == {c}\n    {p_} = 0\n"
                         f"    for i in 0..{c}-1 {{\n        {d}[i] = false\n    }}\n}}")
    t = r.randint(3, 6)
    p.props += [(f"all i in 0..{c}-1: i < {p_} implies {d}[i]", "all"),
                (f"all i in 0..{c}-1: {d}[i] implies i < {p_}", "all"),
                (f"{p_} <= {t}", "upto"), (f"all i in 0..{c}-1: {d}[i] implies i != {t}", "upto"),
                (f"(count i in 0..{c}-1: {d}[i]) == {p_}", "all"), (f"not {d}[0]", "small"),
                (f"{p_}' <= {p_} + 1", "all")]
    return p


def _reference(r: random.Random, c: str, u: str) -> Piece:
    """A nullable reference: `held: 0..C` with C for none."""
    h, busy = f"h{u}", f"b{u}"
    p = Piece(vars=[f"var {h}: 0..{c} = {c}", f"var {busy}: [0..{c}-1] -> bool = false"],
              actions=[f"action take{u}(i: 0..{c}-1) {{\n    require {h} == {c} and not {busy}[i]\n"
                       f"    {h} = i\n    {busy}[i] = true\n}}",
                       f"action give{u} {{\n    require {h} != {c}\n    {busy}[{h}] = false\n    {h} = {c}\n}}"])
    t = r.randint(3, 6)
    p.props += [(f"all i in 0..{c}-1: {busy}[i] implies i == {h}", "all"),
                (f"(count i in 0..{c}-1: {busy}[i]) <= 1", "all"),
                (f"{h} == {c} or {busy}[{h}]", "all"), (f"{h} != {t}", "upto"),
                (f"{h} == {c}", "small")]
    return p


def _difference(r: random.Random, c: str, u: str) -> Piece:
    """Two counters, one chasing the other: their difference grows with the constant."""
    x, y = f"x{u}", f"y{u}"
    p = Piece(vars=[f"var {x}: 0..{c} = 0", f"var {y}: 0..{c} = 0"],
              actions=[f"action lead{u} {{\n    require {x} < {c}\n    {x} = {x} + 1\n}}",
                       f"action chase{u} {{\n    require {y} < {x}\n    {y} = {y} + 1\n}}"])
    t = r.randint(3, 6)
    p.props += [(f"{y} <= {x}", "all"), (f"{x} - {y} <= {c}", "all"), (f"{x} - {y} <= {t}", "upto"),
                (f"{x} - {y} <= 0", "small"), (f"{x}' - {y}' <= {x} - {y} + 1", "all")]
    return p


def _derived(r: random.Random, c: str, u: str) -> Piece:
    """A derived constant; affine ones the engine may use, others it must not take for affine."""
    dname = f"D{u}"
    # the engine fits constants at a few sizes (checker/engines/param/extract.py): a form that is not
    # affine but agrees with an affine one there (`if C == 4 ...`, `C / 9`) must not fool it
    form, kind = r.choice([(f"{c} + 1", "all"), (f"2 * {c}", "all"), (f"{c} / 5", "upto"),
                           (f"if {c} > 4 then 1 else 0", "upto"), (f"{c} % 6", "upto"),
                           (f"if {c} >= 6 then {c} else 0", "upto"), (f"if {c} == 4 then 1 else 0", "upto"),
                           (f"if {c} == 7 then 1 else 0", "upto"), (f"{c} / 9", "upto"),
                           (f"({c} / 5) * 2", "upto"), (f"if {c} < 4 then 0 else 1", "upto")])
    v = f"g{u}"
    p = Piece(consts=[f"const {dname} = {form}"], vars=[f"var {v}: 0..{c} + 1 = 0"],
              actions=[f"action grow{u} {{\n    require {v} < {c}\n    {v} = {v} + 1\n}}"])
    p.props += [(f"{dname} <= {c} + 1" if kind == "all" else f"{dname} == 0", kind),
                (f"{v} + {dname} <= 2 * {c} + 1" if kind == "all" else f"{v} + {dname} <= {c}", kind)]
    if r.random() < 0.5:  # the derived constant in a type
        w = f"z{u}"
        p.vars.append(f"var {w}: 0..{dname} + 1 = 0")
        p.actions.append(f"action zet{u} {{\n    require {w} <= {dname}\n    {w} = {w} + 1\n}}")
        p.props.append((f"{w} <= 1", "upto" if kind == "upto" else "small"))
    return p


def _slots(r: random.Random, c: str, u: str) -> Piece:
    """Two streams' jobs in C slots (value 2: free), a `tick` loop over the slots that
    accumulates work per stream, maybe saturating (the counter abstraction's fragment,
    checker/engines/param/counters.py); job counts bounded by the literal NB."""
    nb = r.randint(1, 3)
    sl, pr, la, dn, wk = (f"{x}{u}" for x in ("slot", "prog", "launched", "done", "work"))
    x = f"{wk}[{sl}[i]]"
    step = 1
    add = r.choice([f"if {x} <= {2 * nb} then {x} + 1 else {x}", f"if {x} < {2 * nb + 1} then {x} + 1 else {x}",
                    f"{x} + 1", f"{x} + 2", f"1 + {x}"])
    if add.endswith("+ 2"):
        step = 2
    p = Piece(vars=[f"var {sl}: [0..{c}-1] -> 0..2 = 2", f"var {pr}: [0..{c}-1] -> 0..1 = 0",
                    f"var {la}: [0..1] -> 0..{nb} = 0", f"var {dn}: [0..1] -> 0..{nb} = 0",
                    f"var {wk}: [0..1] -> 0..{2 * nb * step + 1} = 0"],
              actions=[f"action launch{u}(i: 0..{c}-1, s: 0..1) {{\n    require {sl}[i] == 2 and {la}[s] < {nb}\n"
                       f"    {sl}[i] = s\n    {pr}[i] = 0\n    {la}[s] = {la}[s] + 1\n}}",
                       f"action tick{u} {{\n    require any i in 0..{c}-1: {sl}[i] != 2\n    for i in 0..{c}-1 {{\n"
                       f"        if {sl}[i] != 2 {{\n            {wk}[{sl}[i]] = {add}\n"
                       f"            if {pr}[i] == 1 {{\n                {dn}[{sl}[i]] = {dn}[{sl}[i]] + 1\n"
                       f"                {sl}[i] = 2\n                {pr}[i] = 0\n            }} else {{\n"
                       f"                {pr}[i] = 1\n            }}\n        }}\n    }}\n}}"])
    t = r.randint(3, 5)
    busy = f"(count i in 0..{c}-1: {sl}[i] != 2)"
    p.props += [(f"all s in 0..1: {wk}[s] <= {2 * nb * step} and {dn}[s] <= {la}[s]", "all"),
                (f"{wk}[0] <= {r.randint(2, 2 * nb * step)}", "upto"),
                (f"{busy} <= {t}", "upto" if t < 2 * nb else "all"), (f"{busy} <= {2 * nb}", "all"),
                (f"all s in 0..1: {dn}[s] == {la}[s]", "small"),
                (f"all s in 0..1: {wk}[s]' <= {wk}[s] + {t}", "upto")]
    return p


def _bounded_queue(r: random.Random, c: str, u: str, d: str) -> Piece:
    """A queue of capacity `d` fed from `c` items: facts over two constants."""
    q, sv = f"q{u}", f"sv{u}"
    p = Piece(vars=[f"var {q}: 0..{d} = 0", f"var {sv}: 0..{c} = 0"],
              actions=[f"action enq{u} {{\n    require {q} < {d} and {sv} + {q} < {c}\n    {q} = {q} + 1\n}}",
                       f"action deq{u} {{\n    require {q} > 0\n    {q} = {q} - 1\n    {sv} = {sv} + 1\n}}"])
    t = r.randint(3, 6)
    p.props += [(f"{q} + {sv} <= {c}", "all"), (f"{q} <= {d}", "all"), (f"{q} <= {t}", "upto"),
                (f"{q} + {sv} <= {t}", "upto"), (f"{q} <= {c}", "all"), (f"{sv} == 0", "small"),
                (f"{q}' + {sv}' >= {q} + {sv}", "all")]
    return p


def _pipeline(r: random.Random, c: str, u: str) -> Piece:
    """Items taken in order, held one at a time (a nullable reference), then completed: an
    item below the read position that no stage holds is done (checker/engines/param/refs.py)."""
    rd, h, dn = f"rd{u}", f"hd{u}", f"fin{u}"
    p = Piece(vars=[f"var {rd}: 0..{c} = 0", f"var {h}: 0..{c} = {c}", f"var {dn}: [0..{c}-1] -> bool = false"],
              actions=[f"action pick{u} {{\n    require {h} == {c} and {rd} < {c}\n    {h} = {rd}\n"
                       f"    {rd} = {rd} + 1\n}}",
                       f"action finish{u} {{\n    require {h} != {c}\n    {dn}[{h}] = true\n    {h} = {c}\n}}"])
    t = r.randint(3, 6)
    p.props += [(f"all y in 0..{c}-1: y < {rd} and y != {h} implies {dn}[y]", "all"),
                (f"all y in 0..{c}-1: {dn}[y] implies y < {rd}", "all"),
                (f"{h} == {c} or {h} < {rd}", "all"), (f"(count y in 0..{c}-1: {dn}[y]) <= {t}", "upto"),
                (f"{h} == {c} or {h} + 1 == {rd}", "all"), (f"{rd} <= 1", "small")]
    return p


def _mutex(r: random.Random, c: str, u: str) -> Piece:
    """A lock and its owner flags: facts over two indices (`all i, j: i != j implies ...`)."""
    own, lk = f"own{u}", f"lk{u}"
    p = Piece(vars=[f"var {own}: [0..{c}-1] -> bool = false", f"var {lk}: bool = false"],
              actions=[f"action acq{u}(i: 0..{c}-1) {{\n    require not {lk}\n    {lk} = true\n    {own}[i] = true\n}}",
                       f"action rel{u}(i: 0..{c}-1) {{\n    require {own}[i]\n    {own}[i] = false\n    {lk} = false\n}}"])
    t = r.randint(3, 6)
    p.props += [(f"all i in 0..{c}-1: all j in 0..{c}-1: i != j implies not ({own}[i] and {own}[j])", "all"),
                (f"(count i in 0..{c}-1: {own}[i]) <= 1", "all"), (f"{lk} == (any i in 0..{c}-1: {own}[i])", "all"),
                (f"not {lk}", "small"), (f"all i in 0..{c}-1: {own}[i] implies i < {t}", "upto")]
    return p


def _pairs(r: random.Random, c: str, u: str) -> Piece:
    """An action with two parameters over one range writing one array twice (i == j possible)."""
    a = f"pr{u}"
    p = Piece(vars=[f"var {a}: [0..{c}-1] -> 0..2 = 0"],
              actions=[f"action mark{u}(i: 0..{c}-1, j: 0..{c}-1) {{\n    require {a}[i] == 0 and {a}[j] == 0\n"
                       f"    {a}[i] = 1\n    {a}[j] = 2\n}}"])
    if r.random() < 0.3:
        p.actions.append(f"action unmark{u}(i: 0..{c}-1) {{\n    require {a}[i] == 2\n    {a}[i] = 0\n}}")
    t = r.randint(2, 5)
    p.props += [(f"(count i in 0..{c}-1: {a}[i] == 1) <= (count i in 0..{c}-1: {a}[i] == 2)", "all"),
                (f"(sum i in 0..{c}-1: {a}[i]) <= 2 * {c}", "all"), (f"(count i in 0..{c}-1: {a}[i] != 0) <= {t}", "upto"),
                (f"(count i in 0..{c}-1: {a}[i] == 2) <= 1", "small"),
                (f"(count i in 0..{c}-1: {a}[i] == 1) * 2 <= {c}", "all")]
    return p


def _shift(r: random.Random, c: str, u: str) -> Piece:
    """Loops whose iterations read another index (forward or backward shifts, a test of
    element 0): iterations in order are no parallel update (encode.py must refuse or be exact)."""
    w, g = f"w{u}", f"sd{u}"
    body = r.choice([f"for i in 0..{c}-2 {{\n        {w}[i] = {w}[i + 1]\n    }}",
                     f"for i in 1..{c}-1 {{\n        {w}[i] = {w}[i - 1]\n    }}",
                     f"for i in 0..{c}-1 {{\n        if {w}[0] == 1 {{\n            {w}[i] = 0\n        }}\n    }}",
                     f"for i in 0..{c}-1 {{\n        {w}[i] = 1 - {w}[i]\n    }}"])
    p = Piece(vars=[f"var {w}: [0..{c}-1] -> 0..1 = 0", f"var {g}: bool = false"],
              actions=[f"action seed{u}(i: 0..{c}-1) {{\n    require not {g}\n    {w}[i] = 1\n    {g} = true\n}}",
                       f"action move{u} {{\n    require {g}\n    {body}\n}}"])
    t = r.randint(2, 5)
    cnt = f"(count i in 0..{c}-1: {w}[i] == 1)"
    p.props += [(f"{cnt} <= {t}", "upto"), (f"{cnt} <= {c}", "all"), (f"{cnt} <= 1", "small"),
                (f"{g} or {cnt} == 0", "all"), (f"{cnt}' <= {cnt} + 1", "upto")]
    return p


def _copy(r: random.Random, c: str, u: str) -> Piece:
    """A whole-array assignment (a snapshot) beside per-element writes."""
    src, dst = f"src{u}", f"dst{u}"
    p = Piece(vars=[f"var {src}: [0..{c}-1] -> bool = false", f"var {dst}: [0..{c}-1] -> bool = false"],
              actions=[f"action put{u}(i: 0..{c}-1) {{\n    {src}[i] = true\n}}", f"action snap{u} {{\n    {dst} = {src}\n}}"])
    if r.random() < 0.3:
        p.actions.append(f"action wipe{u}(i: 0..{c}-1) {{\n    {src}[i] = false\n}}")
    t = r.randint(2, 5)
    p.props += [(f"all i in 0..{c}-1: {dst}[i] implies {src}[i]", "all"),
                (f"(count i in 0..{c}-1: {dst}[i]) <= (count i in 0..{c}-1: {src}[i])", "all"),
                (f"(count i in 0..{c}-1: {dst}[i]) <= {t}", "upto"), (f"not {dst}[0]", "small")]
    return p


def _tasks(r: random.Random, c: str, u: str) -> Piece:
    """Tasks with an enum state per index and a counter of the running ones (an enum-valued
    array, `any`, a transition property over primed array elements in a quantifier)."""
    st, run = f"st{u}", f"run{u}"
    cap = r.randint(1, 2)
    p = Piece(consts=[], vars=[f"var {st}: [0..{c}-1] -> TS = Idle", f"var {run}: 0..{cap} = 0"],
              actions=[f"action start{u}(i: 0..{c}-1) {{\n    require {st}[i] == Idle and {run} < {cap}\n"
                       f"    {st}[i] = Busy\n    {run} = {run} + 1\n}}",
                       f"action finish{u}(i: 0..{c}-1) {{\n    require {st}[i] == Busy\n    {st}[i] = Done\n"
                       f"    {run} = {run} - 1\n}}"])
    t = r.randint(2, 5)
    busy = f"(count i in 0..{c}-1: {st}[i] == Busy)"
    p.props += [(f"{busy} == {run}", "all"), (f"{busy} <= {cap}", "all"),
                (f"(count i in 0..{c}-1: {st}[i] == Done) <= {t}", "upto"),
                (f"{run} == 0 or (any i in 0..{c}-1: {st}[i] == Busy)", "all"),
                (f"all i in 0..{c}-1: {st}[i] == Done implies {st}[i]' == Done", "all"),
                (f"all i in 0..{c}-1: {st}[i] != Done", "small")]
    return p


def _ring(r: random.Random, c: str, u: str, d: str) -> Piece:
    """The ring example's shape over two constants: `c` kernels fetched in order through a
    pointer, each running `d` waves counted per kernel (`waves[rptr - 1]`)."""
    wp, rp, busy, pc, wr = (f"{x}{u}" for x in ("wp", "rp", "busy", "pc", "wr"))
    p = Piece(vars=[f"var {wp}: 0..{c} = 0", f"var {rp}: 0..{c} = 0", f"var {busy}: bool = false",
                    f"var {pc}: 0..{d} = 0", f"var {wr}: [0..{c}-1] -> 0..2*{d} = 0"],
              actions=[f"action launch{u} {{\n    require {wp} < {c}\n    {wp} = {wp} + 1\n}}",
                       f"action fetch{u} {{\n    require not {busy} and {rp} < {wp}\n    {busy} = true\n"
                       f"    {pc} = 0\n    {rp} = {rp} + 1\n}}",
                       f"action wave{u} {{\n    require {busy} and {pc} < {d}\n"
                       f"    {wr}[{rp} - 1] = {wr}[{rp} - 1] + 1\n    {pc} = {pc} + 1\n}}",
                       f"action retire{u} {{\n    require {busy} and {pc} == {d}\n    {busy} = false\n}}"])
    t = r.randint(2, 5)
    p.props += [(f"all k in 0..{c}-1: {wr}[k] <= {d}", "all"), (f"all k in 0..{c}-1: {wr}[k] <= {t}", "upto"),
                (f"all k in 0..{c}-1: k >= {rp} implies {wr}[k] == 0", "all"), (f"{rp} <= {wp}", "all"),
                (f"(sum k in 0..{c}-1: {wr}[k]) <= {t} * {d}", "upto"),
                (f"{busy} implies {rp} >= 1", "all"), (f"{wr}[0] == 0", "small"),
                (f"all k in 0..{c}-1: {wr}[k]' >= {wr}[k]", "all")]
    return p


def _nested(r: random.Random, c: str, u: str) -> Piece:
    """A two-dimensional array `[0..C-1] -> [0..1] -> 0..2` (cwsr's shape), written through two
    parameters, reset by a loop over the fixed inner range, with a program counter per row."""
    ops, pc = f"ops{u}", f"pcs{u}"
    p = Piece(vars=[f"var {ops}: [0..{c}-1] -> [0..1] -> 0..2 = 0", f"var {pc}: [0..{c}-1] -> 0..2 = 0"],
              actions=[f"action op{u}(q: 0..{c}-1, j: 0..1) {{\n    require {ops}[q][j] < 2 and {pc}[q] == j\n"
                       f"    {ops}[q][j] = {ops}[q][j] + 1\n    if {ops}[q][j] == 2 {{\n        {pc}[q] = j + 1\n    }}\n}}",
                       f"action reset{u}(q: 0..{c}-1) {{\n    require {pc}[q] == 2\n    for j in 0..1 {{\n"
                       f"        {ops}[q][j] = 0\n    }}\n    {pc}[q] = 0\n}}"])
    t = r.randint(2, 5)
    p.props += [(f"all q in 0..{c}-1: {ops}[q][0] + {ops}[q][1] <= 4", "all"),
                (f"all q in 0..{c}-1: {pc}[q] == 0 implies {ops}[q][1] == 0", "all"),
                (f"all q in 0..{c}-1: {pc}[q] >= 1 implies {ops}[q][0] == 2", "all"),
                (f"all q in 0..{c}-1: all j in 0..1: {ops}[q][j] <= 1 or {pc}[q] > j", "all"),
                (f"all q in 0..{c}-1: {pc}[q] == 2 implies q < {t}", "upto"),
                (f"all q in 0..{c}-1: {ops}[q][1] == 0", "small")]
    return p


def _interval(r: random.Random, c: str, u: str) -> Piece:
    """`count` inside an action, in closed form (`_Exec._interval_count`): bounds and an
    exclusion on the binder, the bounds chosen by the action's parameters."""
    x, lo, hi = (f"{v}{u}" for v in ("ix", "ilo", "ihi"))
    e = r.randint(0, 2)
    p = Piece(vars=[f"var {x}: 0..{c} = 0", f"var {lo}: 0..{c} = 0", f"var {hi}: 0..{c} = 0"],
              actions=[f"action calc{u}(a: 0..{c}, b: 0..{c}) {{\n"
                       f"    {x} = (count k in 0..{c}-1: k >= a and k < b and k != {e})\n"
                       f"    {lo} = a\n    {hi} = b\n}}"])
    t = r.randint(3, 5)
    p.props += [(f"{x} + {lo} <= {hi} or {x} == 0", "all"), (f"{x} <= {t}", "upto"),
                (f"{x} <= {c} - {lo}", "all"), (f"{x} < {c}", "all"),
                (f"{x} != {t} or {hi} - {lo} > {t}", "upto"),
                (f"{x} + 1 >= {hi} - {lo} or {e} >= {hi} or {e} < {lo}", "all"), (f"{x} <= 1", "small")]
    return p


def _window(r: random.Random, c: str, u: str, d: str) -> Piece:
    """Marks over `c` read by folds the ghost counters must get right: one over another
    constant's range `d` (it reads past the array once d > c, where the property fails to
    evaluate: violated), one reading its binder (its start is min(c, t - 1), not c or 0)."""
    m = f"mk{u}"
    p = Piece(vars=[f"var {m}: [0..{c}-1] -> bool = false"],
              actions=[f"action mark{u}(i: 0..{c}-1) {{\n    {m}[i] = true\n}}"])
    t = r.randint(4, 6)
    p.props += [(f"(count k in 0..{d}-1: {m}[k]) >= 0", "mixed"),
                (f"(count k in 0..{c}-1: not {m}[k] and k < {t - 1}) != {t - 1} or {c} < {t} or {m}[0]", "upto"),
                (f"(sum k in 0..{c}-1: if {m}[k] then k else 0) <= {t} or {c} < {t}", "upto"),
                (f"(count k in 0..{c}-1: {m}[k]) <= {c}", "all")]
    return p


PIECES = (_counter, _saturating, _flags, _values, _pointer, _reference, _difference, _derived, _slots,
          _pipeline, _mutex, _pairs, _shift, _copy, _tasks, _nested)


@dataclass(frozen=True)
class Case:
    """One generated spec: its text, the constants named in `--for-all`, the fixed ones."""

    seed: int
    index: int
    text: str
    names: tuple[str, ...]
    props: tuple[tuple[str, str], ...]  # (property name, generator's hint)
    lower: int = 1  # every named constant's lower bound (`--for-all N>=2`)


def generate(seed: int, index: int, kinds: bool = True) -> Case:
    """The spec `index` of `seed` (deterministic on any machine: `random.Random` of a string).
    With `kinds` (issue 38), about a third also get `_stall`'s liveness and latency and half of
    those no `allow deadlock`; without, the specs are those before."""
    r = random.Random(f"forall-fuzz:{seed}:{index}")
    consts = list(CONSTS[:r.choice([1, 1, 2, 2, 3])])
    pieces = []
    for k in range(r.randint(1, 3)):
        if len(consts) > 1 and r.random() < 0.3:
            c, d = r.sample(consts, 2)
            pieces.append(r.choice((_bounded_queue, _ring))(r, c, str(k), d))
        else:
            pieces.append(r.choice(PIECES)(r, r.choice(consts), str(k)))
    props: list[tuple[str, str, str]] = []  # (name, text, hint)
    for k, p in enumerate(pieces):
        picked = r.sample(p.props, min(len(p.props), r.randint(1, 3)))
        for j, (text, hint) in enumerate(picked):
            props.append((f"p{k}_{j}", text, hint))
    arrays = [(v.split()[1].rstrip(":"), v.split("[0..")[1].split("-1]")[0]) for p in pieces for v in p.vars
              if ": [0.." in v and "-1] -> bool" in v]
    extra = random.Random(f"forall-fuzz-extra:{seed}:{index}")  # a stream of its own: the rest stays as it was
    if extra.random() < 0.15:
        pieces.append(_interval(extra, extra.choice(consts), str(len(pieces))))
        picked = extra.sample(pieces[-1].props, 2)
        props += [(f"p{len(pieces) - 1}_{j}", text, hint) for j, (text, hint) in enumerate(picked)]
    if len(consts) > 1 and extra.random() < 0.2:
        c, d = extra.sample(consts, 2)
        pieces.append(_window(extra, c, str(len(pieces)), d))
        picked = extra.sample(pieces[-1].props, 2)
        props += [(f"p{len(pieces) - 1}_{j}", text, hint) for j, (text, hint) in enumerate(picked)]
    if arrays and len(consts) > 1 and r.random() < 0.3:  # a fold over another constant's range than its array's
        arr, own = r.choice(arrays)
        other = r.choice([c for c in consts if c != own])
        # past `own` the body fails to evaluate (an index out of range): the property is violated there
        props.append(("wide", f"(count k in 0..{other}-1: {arr}[k]) >= 0", "mixed"))
    if len(pieces) > 1 and r.random() < 0.3:  # one property across two pieces' constants
        a, b = r.sample(range(len(pieces)), 2)
        ta, tb = r.choice(pieces[a].props)[0], r.choice(pieces[b].props)[0]
        if "'" not in ta + tb:
            props.append(("cross", f"({ta}) or ({tb})", "mixed"))
    kind_rng = random.Random(f"forall-fuzz-kinds:{seed}:{index}")  # issue 38: a stream of its own as well
    live: list[str] = []
    deadlock = False
    if kind_rng.random() < 0.35 and kinds:
        piece, live = _stall(kind_rng, kind_rng.choice(consts), str(len(pieces)))
        pieces.append(piece)
        deadlock = kind_rng.random() < 0.5  # no `allow deadlock`: every size's deadlock is judged
    lines = [f"model fz{seed}_{index}", ""]
    lines += [f"const {c} = {r.choice([2, 2, 3, 5])}" for c in consts]
    lines.append("enum TS { Idle, Busy, Done }")
    for p in pieces:
        lines += p.consts
    for p in pieces:
        lines += p.vars
    lines.append("")
    for p in pieces:
        lines += p.actions
    lines += [""] if deadlock else ["", "allow deadlock"]
    scalars = [v.split()[1].rstrip(":") for p in pieces for v in p.vars if ": 0.." in v]
    if scalars and r.random() < 0.1:  # a constraint: every proof is then only inside it
        lines.append(f"constraint cut: {r.choice(scalars)} <= {r.randint(1, 4)}")
    for name, text, _ in props:
        lines.append(f"{'transition' if chr(39) in text else 'invariant'} {name}: {text}")
    lines += live
    used = [c for c in consts if any(c in line for line in lines if not line.startswith("const"))] or consts[:1]
    names = tuple(c for c in used if r.random() < 0.85) or tuple(used[:1])
    lower = 2 if r.random() < 0.15 else 1
    props += [(t.split(":")[0].split()[1], "", "mixed") for t in live]
    return Case(seed, index, "\n".join(lines) + "\n", names, tuple((n, h) for n, _, h in props), lower)


BIG_COSTS = (1, 3, 2 ** 31, 2 ** 62, 2 ** 63 - 1, 2 ** 63, 2 ** 64 + 3)


def _stall(r: random.Random, c: str, u: str) -> tuple[Piece, list[str]]:
    """Issue 38's dl_all: a fair counter up to the constant that stops at `T` (stuck there: a
    deadlock once nothing else moves, and `eventually` fails for every size above T), with a
    latency. The tick is untimed (`cost` is retired, issue 29: an untimed action may wait
    forever), so the latency is unbounded at every size and --for-all refutes it at a small
    one. Returns the piece and its liveness and latency declarations."""
    v = f"st{u}"
    stop = r.choice([1, 3, 6, 8, 12, 10 ** 6])  # 10**6: never stops at any judged size
    r.choice(BIG_COSTS)  # the retired cost's draw, kept so that each seed's other pieces stay as they were
    p = Piece(vars=[f"var {v}: 0..{c} = 0"],
              actions=[f"fair action tick{u} {{\n    require {v} < {c} and {v} != {stop}\n"
                       f"    {v} = {v} + 1\n}}"])
    p.props += [(f"{v} <= {c}", "all")]
    bound = r.choice([2, 5, 2 ** 62, 4 * 2 ** 31])
    live = [f"liveness reach{u}: eventually {v} == {c}",
            f"latency lat{u}: from {v} == 0 to {v} == {c} within {bound}"]
    return p, live


def rich_cases(seed: int, count: int) -> list[Case]:
    """`count` specs of tests/quality/richgen.py (the whole language: structs, enums, nested
    arrays, division, fallible properties, ...) with their constant N named: most land outside
    the for-all fragment, which must then say `unknown` with a reason, never raise; the rest are
    judged like the generated ones. Deterministic per seed (hypothesis, generate phase only)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    sys.path.insert(0, str(Path(__file__).parent))
    from richgen import rich_spec

    texts: list[str] = []

    @hseed(seed)
    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(rich_spec())
    def collect(text: str) -> None:
        texts.append(text)

    collect()
    out = []
    for k, text in enumerate(texts):
        props = tuple((m.split(":")[0].split()[1], "") for m in text.splitlines()
                      if m.startswith(("invariant ", "transition ")))
        out.append(Case(seed, k, text, ("N",), props))
    return out

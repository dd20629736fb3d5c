"""The Z3 encoding in isolation: NOTE(step-semantics) cases against the interpreter, Python
integer division, short-circuits, bit-vector widths, execution paths, session answers and
the rendering of invariants."""

from __future__ import annotations

import itertools

import pytest
import z3

from gpcheck.gpmodel import ModelError, compile_model
from gpcheck.spec import load_source
from gpcheck.checker.engines.smt.bounds import bv_width, max_magnitude
from gpcheck.checker.engines.smt.encode import Encoder, bv_encoder, step_paths
from gpcheck.checker.engines.smt.render import render_invariant
from gpcheck.checker.engines.smt.session import Deadline, Sat, Session, Unknown, Unsat
from gpcheck.checker.engines.smt.terms import const_int, scalar_lit


def model(src: str):
    return load_source("model t\n" + src + "\nallow deadlock\n", "t.gpspec")


def _value(e: z3.ExprRef) -> int:
    e = z3.simplify(e)
    return (1 if z3.is_true(e) else 0) if z3.is_bool(e) else const_int(e)  # type: ignore[return-value]


def outcomes(src: str):
    """For every state of the model's slot domains and every instance: the interpreter's and
    both encodings' outcome ('error', 'disabled' or the next state)."""
    m = model(src)
    cm = compile_model(m)
    doms = [range(t.lo, t.hi + 1) if hasattr(t, "lo") else range(0, 2) for t in cm.layout.slot_types]
    out = []
    encoders = (Encoder(m), bv_encoder(m))  # built once: a step's terms depend only on its arguments
    for st in itertools.product(*doms):
        for iid, inst in enumerate(cm.instances):
            try:
                r = cm.step(iid, st)
                want = "disabled" if isinstance(r, int) else r
            except ModelError:
                want = "error"
            for enc in encoders:
                ai = m.actions.index(inst.action)
                lits = tuple(scalar_lit(sl.type, v, enc.num) for sl, v in zip(enc.slots, st))
                step = enc.step(ai, lits, enc.instance_args(ai, inst.args))
                got = "error" if _value(step.error) else ("disabled" if not _value(step.enabled)
                                                          else tuple(_value(x) for x in step.next))
                out.append((st, inst.label(), want, got))
    return out


@pytest.mark.parametrize("src", [
    # a require before an error disables; after it, the error stands (NOTE(step-semantics))
    "var x: 0..2 = 0\naction go { require x < 1\n x = x + 3 }",
    "var x: 0..2 = 0\naction go { x = x + 2\n require x < 1 }",
    # Python floor division and modulo, negative operands included, and division by zero
    "var x: 0..4 = 0\nvar y: -3..3 = 0\naction go { y = (x - 2) / (y - 1) }\naction md { y = (x - 2) % (y - 1) }",
    # short-circuits: the skipped operand cannot fail
    "var i: 0..3 = 0\nvar a: [0..2] -> 0..1 = 0\nvar b: bool = false\n"
    "action go { b = i < 3 and a[i] == 0 }\naction gi { b = if i == 3 then true else a[i] == 1 }\n"
    "action ga { b = all k in 0..1: a[i + k] == 0 }",
    # dynamic reads and writes, in branches, with lets and loops
    "var i: 0..2 = 0\nvar a: [0..2] -> 0..2 = 0\naction go(p: 0..2) { let j = (i + p) % 3\n"
    " if a[j] < 2 { a[j] = a[j] + 1 } else { require i != p\n a[p] = 0 }\n for k in 0..1 { i = a[k] } }",
])
def test_encodings_agree_with_the_interpreter_on_every_state(src):
    bad = [(st, lab, want, got) for st, lab, want, got in outcomes(src) if want != got]
    assert not bad, bad[:5]


def test_bit_vector_width_covers_every_intermediate_value():
    m = model("var x: 0..100 = 0\nvar a: [0..9] -> 0..50 = 0\naction go { x = (sum k in 0..9: a[k] * 3) / 7 }")
    assert max_magnitude(m) >= 10 * 50 * 3
    assert 2 ** (bv_width(m) - 1) > 2 * 10 * 50 * 3


def test_execution_paths_partition_and_make_indexes_static():
    m = model("var i: 0..2 = 0\nvar a: [0..2] -> 0..3 = 0\naction go { a[i] = a[i] + 1\n i = (i + 1) % 3 }")
    enc = Encoder(m)
    s = enc.state(0)
    paths = step_paths(enc, 0, s, (), limit=16)
    assert len(paths) == 4  # one per value of i, and the (here infeasible) one outside 0..2
    sol = z3.Solver()
    sol.add(enc.in_range(s))
    assert sol.check(z3.Not(z3.Or([p.cond for p in paths]))) == z3.unsat  # they cover every state
    for p, q in itertools.combinations(paths, 2):
        assert sol.check(p.cond, q.cond) == z3.unsat  # and are disjoint
    feasible = [p for p in paths if sol.check(p.enabled) == z3.sat]
    assert len(feasible) == 3
    for p in feasible:  # every index on a path is static: no ite-chains left
        assert not any(z3.is_app(x) and x.decl().kind() == z3.Z3_OP_ITE for x in p.next)


def test_session_answers_and_deadline():
    sess = Session(Deadline(None))
    x = z3.Int("x")
    sess.add(x > 0)
    assert isinstance(sess.check(), Sat)
    with sess.frame():
        sess.add(x < 0)
        assert isinstance(sess.check(), Unsat)
    assert isinstance(sess.check(), Sat)
    expired = Session(Deadline(0.0))
    assert expired.check() == Unknown("timeout")


def test_rendered_invariants_use_gpspec_names():
    m = model("enum S { Idle, Busy }\nvar s: S = Idle\nvar w: [0..1] -> 0..3 = 0\nvar b: bool = false")
    enc = Encoder(m)
    st = enc.state(0)
    v = [z3.Var(i, t.sort()) for i, t in enumerate(st)]
    inv = z3.And(z3.Not(v[0] == 1), v[1] + -1 * v[2] <= 0, z3.Or(v[3], z3.Not(v[2] >= 2)))
    text = render_invariant(enc, inv, st)
    assert "s != Busy" in text and "w[0] <= w[1]" in text and "w[1] <= 1" in text and "b" in text
    assert text.count("\nand ") == 2
    assert render_invariant(enc, z3.And(v[1] >= 0, v[2] <= 3), st) == "true"  # types say as much

"""checker/engines/param/instantiate.py: instantiation only weakens a hypothesis (its unsat answers
are proofs), puts a term only at binders of the same index range, and skolemizing a goal
keeps it satisfiable exactly when it was."""

from __future__ import annotations

import z3

from gpcheck.checker.engines.param.encode import ParamEncoder
from gpcheck.checker.engines.param.extract import extract
from gpcheck.checker.engines.param.instantiate import Instantiator, clear_interrupt, skolemize
from gpcheck.spec import load_source

SRC = """model two_ranges
const N = 2
const M = 3
var a: [0..N-1] -> 0..9 = 0
var b: [0..M-1] -> 0..9 = 0
action set(i: 0..N-1, j: 0..M-1) { a[i] = b[j] }
allow deadlock
invariant both: (all i in 0..N-1: a[i] <= 9) and (all j in 0..M-1: b[j] <= 9)
"""


def _setup():
    clear_interrupt()  # an earlier test may have stopped a budget (interrupting Z3)
    pm = extract(lambda c: load_source(SRC, "two.gpspec", c), ["N", "M"], {}, {"N": 1, "M": 1})
    enc = ParamEncoder(pm)
    s, t = enc.state("s."), enc.state("t.")
    return enc, s, t, Instantiator(enc, [s, t])


def test_terms_go_only_to_binders_of_their_range():
    enc, s, t, inst = _setup()
    name, branch = enc.branches(s, t)[0]
    terms = inst.index_terms([branch])
    assert sorted(len(v) for v in terms.values()) == [1, 1]  # i indexes a (0..N-1), j indexes b (0..M-1)
    hyp = enc.in_range(s)  # all i: a[i] in range, all j: b[j] in range
    expanded = inst.expand(hyp, terms)

    def quantifiers(f):
        return (1 if z3.is_quantifier(f) else 0) + sum(quantifiers(c) for c in f.children())

    assert quantifiers(hyp) == 2 and quantifiers(expanded) == 0
    text = str(expanded)
    a_idx = [x for k, v in terms.items() for x in v if "set.i" in str(x)]
    b_idx = [x for k, v in terms.items() for x in v if "set.j" in str(x)]
    assert a_idx and b_idx
    assert f"s.a[{a_idx[0]}]" in text and f"s.b[{b_idx[0]}]" in text
    assert f"s.a[{b_idx[0]}]" not in text and f"s.b[{a_idx[0]}]" not in text


def test_expansion_is_implied_by_the_hypothesis():
    """hyp and not expand(hyp) is unsatisfiable: a weakening, so an unsat query stays a proof."""
    enc, s, t, inst = _setup()
    terms = inst.index_terms([f for _, f in enc.branches(s, t)])
    hyp = enc.in_range(s)
    sol = z3.Solver()
    sol.add(*enc.facts, hyp, z3.Not(inst.expand(hyp, terms)))
    assert sol.check() == z3.unsat
    # and it is strictly weaker: an element not at a term may be out of range
    sol = z3.Solver()
    sol.add(*enc.facts, inst.expand(hyp, terms), z3.Not(hyp))
    assert sol.check() == z3.sat


def test_skolemized_goal_is_equisatisfiable():
    enc, s, t, inst = _setup()
    model = enc.model
    prop = model.invariants[0]
    goal = z3.Not(enc.holds(prop.expr, s))
    sk = skolemize(goal, "g")
    for extra in ([], [enc.in_range(s)]):
        a, b = z3.Solver(), z3.Solver()
        a.add(*enc.facts, goal, *extra)
        b.add(*enc.facts, sk, *extra)
        assert a.check() == b.check()
    assert "g!" in str(sk) and not z3.is_quantifier(sk)


def test_consecution_asks_mbqi_once_more_where_e_matching_gives_up():
    """`Consecution(retry_steps=)`: a check E-matching leaves `unknown` (incomplete
    quantifiers) is asked again with MBQI, and its `unsat` (with the core) counts; without
    it the answer stays `unknown`."""
    from gpcheck.checker.engines.param.induct import Consecution
    from gpcheck.checker.engines.smt.session import Deadline

    enc, s, t, _ = _setup()
    x = z3.Int("x")
    f = z3.Function("f", z3.IntSort(), z3.IntSort())
    # contradictory, but no ground term of f for E-matching to instantiate with
    hyp = z3.And(z3.ForAll([x], z3.Implies(x > 0, f(x) > 0)), z3.ForAll([x], f(x) < 0))
    goal = z3.BoolVal(True)
    plain = Consecution(enc, s, t, [hyp], goal).check([0], Deadline(None))
    assert plain.verdict == "unknown" and "incomplete quantifiers" in plain.reason
    again = Consecution(enc, s, t, [hyp], goal, retry_steps=10_000_000).check([0], Deadline(None))
    assert again.verdict == "unsat" and again.core == {0}
    assert Consecution(enc, s, t, [hyp], goal, retry_steps=10_000_000).check([], Deadline(None)).verdict == "sat"

"""The fixed-size Houdini's bulk evaluation (checker/engines/param/finite.py `_GroupTable`) agrees
with one `_Group.holds` call per candidate and state, on first- and second-round templates
(three-counter atoms included)."""

from __future__ import annotations

import numpy as np
import pytest

from gpcheck.checker.engines.param.encode import ParamEncoder
from gpcheck.checker.engines.param.extract import extract
from gpcheck.checker.engines.param.finite import _instance
from gpcheck.checker.engines.param.prove import Candidate, mine
from gpcheck.checker.engines.smt.mining import Atom, sample_states
from gpcheck.checker.engines.smt.session import Deadline
from gpcheck.spec import load_spec


def _ring(examples):
    """The ring example with N and B symbolic: its loader, extraction, encoder, and the states
    sampled at two small instances that mining reads."""
    from gpcheck.gpmodel import compile_model

    path = examples / "ring.gpspec"
    load = lambda c: load_spec(path, c)  # noqa: E731
    pm = extract(load, ["N", "B"], {}, {"N": 1, "B": 1})
    enc = ParamEncoder(pm)
    samples = []
    for point in ({"N": 2, "B": 1}, {"N": 3, "B": 2}):
        cm = compile_model(load(point))
        states, _ = sample_states(cm, 2_000, Deadline(None))
        samples.append((point, [cm.layout.decode(s) for s in states]))
    return load, pm, enc, samples


@pytest.mark.parametrize("wide", [False, True])
def test_bulk_evaluation_agrees_with_each_candidate(examples, wide):
    from gpcheck.gpmodel import compile_model

    load, _, enc, samples = _ring(examples)
    cands = mine(enc, samples, wide)
    if wide:  # a three-counter atom, true or false, in every view that has three columns
        cands += [Candidate(c.view, Atom((), "le", ((1, 0), (1, 1), (-1, 2)), 0)) for c in cands
                  if len(c.view.columns) >= 3][:20]
    assert cands
    point = {"N": 3, "B": 2}
    ck, _ = _instance(enc, load, point, cands)
    cm = compile_model(load(point))
    states, _ = sample_states(cm, 300, Deadline(None))
    # reachable states and one-slot changes of them (where candidates fail)
    rows = np.asarray(states, dtype=np.int64)
    bumped = rows.copy()
    bumped[:, 0] = np.where(bumped[:, 0] > 0, bumped[:, 0] - 1, bumped[:, 0] + 1)
    posts = np.concatenate([rows[::7], bumped[::5]])
    which = np.arange(len(cands))
    got = ck.table.holds_all(posts, which)
    want = [all(ck.atoms[k].holds(tuple(int(x) for x in p)) for p in posts) for k in which]
    assert got.tolist() == want
    assert not all(want) and any(want)  # the check tells the two apart
    sat = ck.table.rows_satisfying(posts[:10], which[:40])
    assert sat.tolist() == [all(ck.atoms[k].holds(tuple(int(x) for x in p)) for k in which[:40]) for p in posts[:10]]


def test_core_says_whether_the_property_is_not_inductive_or_out_of_steps(examples):
    """`FixedSize.core` tells "not inductive relative to these candidates" apart from "Z3 ran
    out of its step budget" (both used to read "no proof at N=..."), and finds a core when
    there is one."""
    from gpcheck.checker.engines.param.finite import FixedSize

    load, pm, enc, samples = _ring(examples)
    cands = mine(enc, samples)
    fixed = FixedSize(enc, load, {"N": 2, "B": 2}, cands)
    pool = fixed.survivors(range(len(cands)), Deadline(None))
    assert pool
    prop = next(p for p in pm.model.invariants if p.name == "no_reexecution")
    core, why = fixed.core(pool, prop, Deadline(None))
    assert core and set(core) <= set(pool) and why == ""
    none, why = fixed.core([], prop, Deadline(None))  # no_reexecution alone is not inductive
    assert none is None and why == "not inductive relative to them"
    none, why = fixed.core(pool, prop, Deadline(None, steps=1))
    assert none is None and why == "Z3 gave no answer (step limit)"

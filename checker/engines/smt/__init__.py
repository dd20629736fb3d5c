"""The Z3 side of gpcheck: the only package that imports z3 (ARCHITECTURE.md).

    terms.py   Z3 values of expressions (Int or bit-vector numbers), folding constructors
    bounds.py  interval analysis: the bit-vector width at which nothing overflows
    encode.py  the IR as formulas: slots per step, init, SSA steps, T, errors, deadlock,
               execution paths (NOTE(step-semantics) exactly)
    props.py   safety properties as `bad`/`ok` formulas at path positions; conjunct splitting
    session.py one solver: frames, deadline, seed, Sat | Unsat | Unknown(reason)
    decode.py  models back to slot tuples, instances and Counterexamples
    bmc.py     incremental BMC (shortest counterexamples; proof when every behaviour ends)
    kind.py    k-induction with simple paths
    pdr.py     explicit proposals first (lemmas, reachset), then Spacer over Horn clauses with a
               per-conjunct localisation abstraction, strengthened by the lemmas
    mining.py  candidate atoms (ranges, differences, conditional facts) from sampled states
    lemmas.py  Houdini over mined atoms; properties by induction relative to the lemmas
    reachset.py  the explicit reachable set as a shared decision diagram, checked inductive
    lasso.py   liveness counterexamples: fair lassos by BMC
    render.py  Z3 formulas (Spacer's invariants) in gpspec syntax
    tracefill.py  replay's Z3 fallback (NOTE(replay-z3))

Engines are selected by checker/api/smt_dispatch.py (`run_engine`); every counterexample they return
is replayed through gpmodel there (checker/engines/smt/witness.py)."""

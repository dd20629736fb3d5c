"""The engines: explicit search and its liveness pass, the Z3 engines (bmc, k-induction, PDR), the for-all prover and the timed engine.

May import: `gpcheck.spec`, `gpcheck.gpmodel`, `gpcheck.traces`, `gpcheck.checker.core`. Inside: param -> smt -> timed -> explicit (never the other way)."""

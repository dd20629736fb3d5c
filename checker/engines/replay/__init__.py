"""Replay: is a recorded trace a behaviour of a model (search.py, hidden.py: the candidate-state search along the trace, TLA+ trace validation); the report it returns is gpcheck.traces.replay_report's.

May import: `engines.smt` (dead ends, the symbolic fallback), `engines.explicit`, `gpcheck.traces` and below."""

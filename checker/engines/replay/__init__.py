"""Replay: is a recorded trace a behaviour of a model (search.py, hidden.py: the candidate-state search along the trace, TLA+ trace validation; timed.py: a timed spec's untimed abstraction, then the time stamps on the zone graph, NOTE(timed-replay)); the report it returns is gpcheck.traces.replay_report's.

May import: `engines.smt` (dead ends, the symbolic fallback), `engines.timed` (zones), `engines.explicit`, `gpcheck.traces` and below."""

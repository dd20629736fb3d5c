"""The timed engine (NOTE(timed) in spec/ir.py): zones over one clock per timed action instance.

dbm.py (difference-bound matrices), bounds.py (the `time L..U` bounds compiled to Python),
zones.py (the zone graph and the safety search), timeline.py (concrete time stamps for a path of
the zone graph, and the check that a timed behaviour is one of the model's), latency.py (exact
min/max latencies with a measuring clock), engine.py (the Result/Report of a timed run)."""

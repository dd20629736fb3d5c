"""An independent reference semantics of gpspec for differential testing of the engines
(semantics.py: values and steps; explore.py: BFS, deadlock, modelling errors, liveness;
replay.py: checks any engine's counterexample)."""

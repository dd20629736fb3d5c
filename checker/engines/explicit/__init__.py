"""Breadth-first search over the successor function (python and compiled cores), liveness under weak fairness, symmetry's un-permutation.

May import: `gpcheck.spec`, `gpcheck.gpmodel`, `gpcheck.checker.core`."""

"""Reports: rich tables and counterexamples for people, errors as JSON data, a counterexample as a story, the width of text output.

May import: `gpcheck.checker.core`, `gpcheck.traces`, `gpcheck.spec`."""

"""The Python API: `load`, `verify` (model_api), `replay`, `check_trace` (trace_api), the assertions of test suites (testing), the command line of a call (reproduce).

May import: the engines, `report`, `core`, `traces`, `gpmodel`, `spec`."""

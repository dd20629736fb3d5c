"""Many checks at once: parameter sweeps and their reports, trace corpora, the Dask cluster that runs them.

May import: `regression`, `api`, `report`, the engines and below."""

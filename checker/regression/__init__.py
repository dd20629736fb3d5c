"""The project's own checks of its models: the bundled library as one run, `expect` lines, the seed claims.

May import: `api`, `report`, the engines and below."""

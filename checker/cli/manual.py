"""Where the documentation is: `docs/` beside a checkout, or the copy the wheel ships inside the
package (pyproject maps `docs/` to the package's `docs` folder). `gpcheck docs`, `--help` and
error messages point users at these files, so they must exist wherever gpcheck is installed."""

from __future__ import annotations

from pathlib import Path

# topic -> (file under docs/, one-line summary); the order `gpcheck docs` lists them in
TOPICS: dict[str, tuple[str, str]] = {
    "getting-started": ("getting-started.md", "install, the first commands, where to go next"),
    "tutorial": ("tutorial.md", "from an empty file to a verified model, a replayed trace and a pytest test"),
    "language": ("language.md", "the gpspec language reference"),
    "engines": ("engines.md", "which engine to use when, what each verdict means, JSON, sweeps"),
    "for-all": ("for-all.md", "proofs for every size (--for-all) and PDR, and how they work"),
    "api": ("api.md", "the Python API and the pytest plugin"),
    "timed": ("timed.md", "timed specs: `time L..U`, `urgent`, zones, exact latencies in elapsed time"),
    "trace-format": ("trace-format.md", "the trace format, simulate, replay, ITF and Perfetto"),
    "real-traces": ("real-traces.md", "importing real GPU traces (nsys, kineto, rocprof, CUPTI)"),
    "editors": ("editors/README.md", "editor support: the TextMate grammar and `gpcheck lsp`"),
    "fail-safe": ("fail-safe.md", "the cache and the cluster: what is trusted, credentials, failures"),
    "benchmarks": ("benchmarks.md", "every measured figure, with its command, machine and date"),
    "changelog": ("changelog.md", "what changed, wave by wave"),
}


def docs_dir() -> Path | None:
    """The folder holding the documentation: inside the installed package, else the checkout's
    `docs/` (the package's parent folder). None when neither exists."""
    here = Path(__file__).resolve().parents[1]  # checker/ (this module is in checker/cli/)
    for candidate in (here / "docs", here.parent / "docs"):
        if (candidate / "language.md").is_file():
            return candidate
    return None


def doc_path(topic: str) -> Path | None:
    """The file of a topic (a key of TOPICS), or None where the docs are missing."""
    root = docs_dir()
    return None if root is None else root / TOPICS[topic][0]


def pointer(topic: str) -> str:
    """How a message tells the user where to read about `topic`: the command that prints it."""
    return f"`gpcheck docs {topic}`"

"""traces/corpus/sim/models/ holds frozen fixtures (issue 34), not copies of the model library:
every file is listed in its README with the revision it was copied from and its SHA-256, the
files match those hashes (an edit of a fixture changes what the recorded traces mean), and the
corpus's MANIFEST.json names only fixtures that exist."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "traces" / "corpus" / "sim"
FIXTURES = SIM / "models"


def _listed() -> dict[str, tuple[str, str]]:
    """fixture -> (copied from, sha256), from the README's table."""
    rows = re.findall(r"^\| `([^`]+)` \| ([^|]+) \| `([0-9a-f]{64})` \|$", (FIXTURES / "README.md").read_text(), re.M)
    return {name: (origin.strip(), digest) for name, origin, digest in rows}


def test_the_readme_says_what_the_fixtures_are_and_from_which_revision():
    text = (FIXTURES / "README.md").read_text()
    assert text.startswith("# Frozen model fixtures")
    assert re.search(r"revision `[0-9a-f]{7,40}`", text)


def test_every_fixture_is_listed_with_its_hash_and_unchanged():
    listed = _listed()
    assert sorted(listed) == sorted(p.name for p in FIXTURES.glob("*.gpspec"))
    for name, (_, digest) in listed.items():
        assert hashlib.sha256((FIXTURES / name).read_bytes()).hexdigest() == digest, f"{name} was edited"


def test_bundled_origins_name_a_model_of_the_library():
    for name, (origin, _) in _listed().items():
        if origin.startswith("spec/models/"):
            assert (ROOT / origin).is_file(), origin


def test_the_manifest_names_existing_fixtures_only():
    manifest = json.loads((SIM / "MANIFEST.json").read_text())
    used = {e["spec"] for e in manifest["traces"] if e["spec"].startswith("traces/corpus/sim/models/")}
    assert used
    for spec in used:
        assert (ROOT / spec).is_file(), spec

"""The architecture's import rules: lark only in spec/parser.py, z3 only in checker/engines/smt/ and
checker/engines/param/ (--for-all), dask only in checker/distributed/cluster.py, llvmlite only in gpmodel/native.py,
no upward imports (spec ← gpmodel ← checker), and every module imports on its own."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sources import parse

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("spec", "gpmodel", "checker", "traces")
MODULES = sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if "record" not in p.parts)


def _layer(module: str) -> str:
    """`gpcheck.checker.x` -> `checker` (our layers), `z3.x` -> `z3` (anything else)."""
    parts = module.split(".")
    return parts[1] if parts[0] == "gpcheck" and len(parts) > 1 else parts[0]


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {_layer(a.name) for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(_layer(node.module))
    return names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_import_rules(path):
    rel = path.relative_to(ROOT)
    names = imported(path)
    if "lark" in names:
        assert rel == Path("spec/parser.py")
    if "z3" in names:
        assert rel.parts[:3] in (("checker", "engines", "smt"), ("checker", "engines", "param"))
    if names & {"dask", "distributed"}:
        assert rel == Path("checker/distributed/cluster.py")
    if "llvmlite" in names:  # kept native kernels (NOTE(native-kernels))
        assert rel == Path("gpmodel/native.py")
    if rel.parts[0] == "spec":
        assert not names & {"gpmodel", "checker", "traces"}
    if rel.parts[0] == "gpmodel":
        assert not names & {"checker", "traces"}


def test_every_module_imports_alone():
    mods = [".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__") for p in MODULES]
    # One process; our packages are dropped from sys.modules before each import, so every module
    # must import with nothing of ours loaded before it.
    code = (
        "import importlib, sys\n"
        f"ours = {PACKAGES!r}\n"
        "for m in sys.argv[1:]:\n"
        "    for k in [k for k in sys.modules if k.split('.')[0] in ours]:\n"
        "        del sys.modules[k]\n"
        "    try:\n"
        "        importlib.import_module(m)\n"
        "    except Exception as e:\n"
        "        print(m, type(e).__name__, e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code, *mods], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0 and not r.stdout, r.stdout + r.stderr

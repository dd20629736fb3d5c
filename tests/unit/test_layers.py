"""The architecture's import rules: lark only in spec/parser.py, z3 only in checker/engines/smt/ and
checker/engines/param/ (--for-all), dask only in checker/distributed/cluster.py, llvmlite only in gpmodel/native.py,
no upward imports (spec ← gpmodel ← checker), and every module imports on its own."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Iterator

from tests.sources import parse

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("spec", "gpmodel", "checker", "traces")
MODULES = sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if "record" not in p.parts)


def _layer(module: str) -> str:
    """`gpcheck.checker.x` -> `checker` (our layers), `z3.x` -> `z3` (anything else)."""
    parts = module.split(".")
    return parts[1] if parts[0] == "gpcheck" and len(parts) > 1 else parts[0]


def statements(tree: ast.AST) -> Iterator[ast.AST]:
    """Every statement of `tree`, nested ones too: an import is a statement, so the expressions
    (most of a module's nodes, and most of `ast.walk`'s time) are not visited."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):  # the fields holding statements
            children = getattr(node, field, None)
            if isinstance(children, list):
                stack.extend(children)


def imported(path: Path) -> set[str]:
    names = set()
    for node in statements(parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {_layer(a.name) for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(_layer(node.module))
    return names


def broken_rules(rel: Path, names: set[str]) -> list[str]:
    """The import rules the module at `rel` (from the root) breaks by importing `names` (layers)."""
    broken = []
    if "lark" in names and rel != Path("spec/parser.py"):
        broken.append("imports lark (only spec/parser.py may)")
    if "z3" in names and rel.parts[:3] not in (("checker", "engines", "smt"), ("checker", "engines", "param")):
        broken.append("imports z3 (only checker/engines/smt/ and checker/engines/param/ may)")
    if names & {"dask", "distributed"} and rel != Path("checker/distributed/cluster.py"):
        broken.append("imports dask (only checker/distributed/cluster.py may)")
    if "llvmlite" in names and rel != Path("gpmodel/native.py"):  # kept native kernels (NOTE(native-kernels))
        broken.append("imports llvmlite (only gpmodel/native.py may)")
    if rel.parts[0] == "spec" and names & {"gpmodel", "checker", "traces"}:
        broken.append(f"spec imports upward: {sorted(names & {'gpmodel', 'checker', 'traces'})}")
    if rel.parts[0] == "gpmodel" and names & {"checker", "traces"}:
        broken.append(f"gpmodel imports upward: {sorted(names & {'checker', 'traces'})}")
    return broken


RULED = {"lark", "z3", "dask", "distributed", "llvmlite"}  # imports the rules restrict anywhere
UPWARD = {"spec": {"gpmodel", "checker", "traces"}, "gpmodel": {"checker", "traces"}}  # and per layer


def test_import_rules():
    # one test for every module (a test per module was 217 tests' overhead, 4 s of CPU, for
    # microseconds of checking each); each broken rule is named with its module. A module whose
    # text names nothing the rules restrict cannot import it: only the others are parsed.
    assert len(MODULES) > 200
    broken = {}
    for p in MODULES:
        rel = p.relative_to(ROOT)
        text = p.read_text()
        if any(word in text for word in RULED | UPWARD.get(rel.parts[0], set())):
            if b := broken_rules(rel, imported(p)):
                broken[str(rel)] = b
    assert not broken, broken


def test_imports_nested_in_statements_are_found():
    tree = ast.parse("import a\nif x:\n    pass\nelse:\n    import b\nclass C:\n    def f(self):\n        try:\n"
                     "            import c\n        except E:\n            from d.e import f\n        finally:\n"
                     "            from . import g\nmatch v:\n    case 1:\n        import h\n")
    walked = {n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))}
    assert {n for n in statements(tree) if isinstance(n, (ast.Import, ast.ImportFrom))} == walked and len(walked) == 6


def test_a_broken_rule_is_named():
    # the check above can fail: a spec module importing z3 and the checker breaks two rules
    names = {"z3", "checker", "typing"}
    assert broken_rules(Path("spec/planted.py"), names) == [
        "imports z3 (only checker/engines/smt/ and checker/engines/param/ may)", "spec imports upward: ['checker']"]
    assert broken_rules(Path("checker/engines/smt/planted.py"), names) == []


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

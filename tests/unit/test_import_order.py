"""Issue 34: imports run one way, stage by stage, and no module imports itself round a circle.

Read from the source with `ast` (nothing is imported): every `import` and `from ... import` of a
module, at its top or inside a function (a lazy import still ties the two modules together), but
not those under `if TYPE_CHECKING:` (annotations only). `from pkg import name` is an import of the
module `pkg.name` where that is a module, else of `pkg`.

LAYERS lists the stages from the top (front ends) down; a module may import its own layer and the
layers below it, and the packages named together in one layer may not import each other.
ARCHITECTURE.md draws the same order."""

from __future__ import annotations

import ast
import shutil
from functools import lru_cache
from pathlib import Path

import networkx as nx

from tests.sources import parse

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("spec", "gpmodel", "checker", "traces")

# Top to bottom. Several packages in one layer: independent of each other.
LAYERS: list[tuple[str, ...]] = [
    ("gpcheck.checker.cli",),
    ("gpcheck.checker.distributed",),
    ("gpcheck.checker.regression",),
    ("gpcheck.checker.api",),
    ("gpcheck.checker.engines.param", "gpcheck.checker.engines.replay"),
    ("gpcheck.checker.engines.smt",),
    ("gpcheck.checker.engines.timed", "gpcheck.checker.report"),
    ("gpcheck.checker.engines.explicit",),
    ("gpcheck.traces",),
    ("gpcheck.gpmodel",),
    ("gpcheck.checker.core",),
    ("gpcheck.spec",),
]


def module_names(root: Path) -> dict[str, Path]:
    """`gpcheck.checker.core.verdict` -> its file, for every module of the four folders."""
    out = {}
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            name = ".".join(("gpcheck", *path.relative_to(root).with_suffix("").parts)).removesuffix(".__init__")
            out[name] = path
    return out


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


# (level, module, names) of each `from` import, (0, None, names) of each plain `import`
RawImport = tuple[int, "str | None", tuple[str, ...]]


@lru_cache(maxsize=None)
def _raw_imports(text: str, module: str) -> tuple[RawImport, ...]:
    """Every import statement of a source text, not those under `if TYPE_CHECKING:`. Cached on
    the text: each module is parsed once per process, however many trees (the planted copies of
    the tests below) hold it."""
    found: list[RawImport] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child.test):
                for stmt in child.orelse:
                    visit(stmt)
                continue
            if isinstance(child, ast.Import):
                found.append((0, None, tuple(a.name for a in child.names)))
            elif isinstance(child, ast.ImportFrom):
                found.append((child.level, child.module, tuple(a.name for a in child.names)))
            visit(child)

    visit(parse(text, module))  # the module name, the same in every copy of the tree
    return tuple(found)


def imports_of(name: str, path: Path, modules: set[str]) -> set[str]:
    """The modules of ours that `name` imports (module level or lazily, not TYPE_CHECKING only)."""
    found: set[str] = set()
    package = path.name == "__init__.py"
    for level, module, names in _raw_imports(path.read_text(), name):
        if level == 0 and module is None:  # import a, b
            found.update(n for n in names if n in modules)
            continue
        base = module or ""
        if level:
            parts = name.split(".")[: len(name.split(".")) - level + (1 if package else 0)]
            base = ".".join(parts + ([module] if module else []))
        for n in names:
            sub = f"{base}.{n}"
            if sub in modules:
                found.add(sub)
            elif base in modules:
                found.add(base)
    found.discard(name)
    return found


def import_graph(root: Path) -> nx.DiGraph:
    mods = module_names(root)
    graph = nx.DiGraph()
    graph.add_nodes_from(mods)
    for name, path in mods.items():
        graph.add_edges_from((name, dep) for dep in imports_of(name, path, set(mods)))
    return graph


def circles(graph: nx.DiGraph) -> list[list[str]]:
    """Each set of modules that import each other round a circle, sorted."""
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def layer_of(module: str) -> tuple[int, str] | None:
    """(index in LAYERS, the package of that layer) of the longest matching package, or None."""
    best = None
    for i, layer in enumerate(LAYERS):
        for pkg in layer:
            if (module == pkg or module.startswith(pkg + ".")) and (best is None or len(pkg) > len(best[1])):
                best = (i, pkg)
    return best


def against_the_order(graph: nx.DiGraph) -> list[str]:
    """Every import of a higher layer, or of a sibling package of the same layer."""
    bad = []
    for a, b in sorted(graph.edges):
        la, lb = layer_of(a), layer_of(b)
        if la is None or lb is None:
            continue  # gpcheck.checker itself (the API facade, TYPE_CHECKING imports only)
        if lb[0] < la[0] or (lb[0] == la[0] and lb[1] != la[1]):
            bad.append(f"{a} imports {b} ({lb[1]} is above {la[1]})" if lb[0] < la[0]
                       else f"{a} imports {b} (independent packages of one layer)")
    return bad


def test_no_circle_in_the_tree():
    assert circles(import_graph(ROOT)) == []


def test_imports_follow_the_layers():
    assert against_the_order(import_graph(ROOT)) == []


def test_every_module_of_ours_has_a_layer():
    # (gpcheck.checker: the API facade, lazy; gpcheck.checker.engines: a docstring only)
    unplaced = [m for m in module_names(ROOT) if layer_of(m) is None
                and m not in ("gpcheck.checker", "gpcheck.checker.engines")]
    assert unplaced == []


def _copy_tree(tmp_path: Path) -> Path:
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__", "corpus"))
    return tmp_path


def test_a_planted_lazy_circle_is_found(tmp_path):
    root = _copy_tree(tmp_path)
    victim = root / "checker" / "engines" / "explicit" / "liveness.py"
    victim.write_text(victim.read_text() + "\n\ndef _planted():\n"
                      "    from gpcheck.checker.engines.timed import liveness\n")
    graph = import_graph(root)
    assert ["gpcheck.checker.engines.explicit.liveness",
            "gpcheck.checker.engines.timed.liveness"] in circles(graph)
    assert ("gpcheck.checker.engines.explicit.liveness imports gpcheck.checker.engines.timed.liveness"
            " (gpcheck.checker.engines.timed is above gpcheck.checker.engines.explicit)") in against_the_order(graph)


def test_a_planted_circle_through_from_package_import_is_found(tmp_path):
    root = _copy_tree(tmp_path)
    (root / "checker" / "core" / "planted_a.py").write_text("from gpcheck.checker.core import planted_b\n")
    (root / "checker" / "core" / "planted_b.py").write_text(
        "import typing\nif typing.TYPE_CHECKING:\n    pass\nelse:\n    pass\n\n"
        "def f():\n    import gpcheck.checker.core.planted_a\n")
    assert ["gpcheck.checker.core.planted_a", "gpcheck.checker.core.planted_b"] in circles(import_graph(root))


def test_an_upward_import_is_found_and_type_checking_ones_are_not(tmp_path):
    root = _copy_tree(tmp_path)
    verdict = root / "checker" / "core" / "verdict.py"
    verdict.write_text(verdict.read_text() + "\nif TYPE_CHECKING:\n    from gpcheck.checker.api import model_api\n")
    assert against_the_order(import_graph(root)) == []
    verdict.write_text(verdict.read_text() + "\nfrom gpcheck.traces import replay_report\n")
    assert against_the_order(import_graph(root)) == [
        "gpcheck.checker.core.verdict imports gpcheck.traces.replay_report "
        "(gpcheck.traces is above gpcheck.checker.core)"]

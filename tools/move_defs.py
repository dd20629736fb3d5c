"""Move whole top-level definitions (functions, classes, constants) from one module to another,
text unchanged, and fix the imports of both: the tool behind issue 34's splits.

    python tools/move_defs.py SRC.py DST.py NAME [NAME ...] [--doc "DST's docstring"]

The moved code keeps its bytes (with the comment lines right above each definition). DST gets
the imports of SRC that the moved code uses and imports what it uses of SRC's remaining names;
SRC imports back the moved names it still uses or that other modules import from it (so
`from SRC import name` keeps working). Unused imports left in SRC are printed, not removed."""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def module_of(path: Path) -> str:
    return ".".join(("gpcheck", *path.resolve().relative_to(ROOT).with_suffix("").parts)).removesuffix(".__init__")


def bound_names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [n.id for t in node.targets for n in ([t] if isinstance(t, ast.Name) else getattr(t, "elts", []))
                if isinstance(n, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def used_names(nodes: list[ast.stmt]) -> set[str]:
    out = set()
    for n in nodes:
        for x in ast.walk(n):
            if isinstance(x, ast.Name):
                out.add(x.id)
            elif isinstance(x, ast.Constant) and isinstance(x.value, str):  # string annotations
                out.update(re.findall(r"[A-Za-z_]\w*", x.value) if len(x.value) < 200 else ())
    return out


def segment(lines: list[str], node: ast.stmt) -> tuple[int, int]:
    """0-based [start, end) of a definition with its decorators and the comments right above."""
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
    while start > 0 and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    return start, node.end_lineno


def import_lines(tree: ast.Module, src: list[str]) -> list[tuple[ast.stmt, str]]:
    out = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append((node, "".join(src[node.lineno - 1:node.end_lineno])))
    return out


def imports_for(tree: ast.Module, needed: set[str]) -> list[str]:
    """SRC's top-level imports, cut down to the names in `needed`."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        if isinstance(node, ast.ImportFrom):
            keep = [a for a in node.names if (a.asname or a.name) in needed]
            if keep:
                names = ", ".join(a.name if a.asname is None else f"{a.name} as {a.asname}" for a in keep)
                out.append(f"{'from ' + '.' * node.level + (node.module or '')} import {names}\n")
        elif isinstance(node, ast.Import):
            for a in node.names:
                bound = a.asname or a.name.split(".")[0]
                if bound in needed:
                    out.append(f"import {a.name}{'' if a.asname is None else ' as ' + a.asname}\n")
    return out


def external_users(src_mod: str, names: list[str], skip: set[Path]) -> set[str]:
    """Moved names that other files import from SRC or reach as SRC.name."""
    r = subprocess.run(["git", "grep", "-l", "-F", src_mod], cwd=ROOT, capture_output=True, text=True)
    out = set()
    for f in r.stdout.split():
        p = (ROOT / f).resolve()
        if p in skip or not f.endswith((".py", ".md")):
            continue
        text = p.read_text()
        for n in names:
            if re.search(rf"from {re.escape(src_mod)} import [^\n]*\b{n}\b", text) or \
               re.search(rf"from {re.escape(src_mod)} import \([^)]*\b{n}\b", text) or f"{src_mod}.{n}" in text:
                out.add(n)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("names", nargs="+")
    ap.add_argument("--doc", default=None)
    args = ap.parse_args(argv)
    src_path, dst_path = Path(args.src), Path(args.dst)
    text = src_path.read_text()
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    want = set(args.names)
    moved_nodes, segs = [], []
    for node in tree.body:
        b = bound_names(node)
        if b and set(b) <= want:
            moved_nodes.append(node)
            segs.append(segment(lines, node))
        elif set(b) & want:
            sys.exit(f"{b}: moves only together")
    found = {n for node in moved_nodes for n in bound_names(node)}
    if found != want:
        sys.exit(f"not top-level definitions of {src_path}: {sorted(want - found)}")
    parts = []
    for i, (a, b) in enumerate(segs):  # neighbours in SRC stay neighbours (a run of constants)
        adjacent = i > 0 and not "".join(lines[segs[i - 1][1]:a]).strip() and a == segs[i - 1][1]
        parts.append(("" if i == 0 or adjacent else "\n\n") + "".join(lines[a:b]).rstrip("\n") + "\n")
    moved_text = "".join(parts)
    keep_lines = [ln for i, ln in enumerate(lines) if not any(a <= i < b for a, b in segs)]
    rest_text = re.sub(r"\n{4,}", "\n\n\n", "".join(keep_lines))
    rest_tree = ast.parse(rest_text)
    rest_defs = {n for node in rest_tree.body for n in bound_names(node)}
    need = used_names(moved_nodes)
    src_mod, dst_mod = module_of(src_path), module_of(dst_path)
    from_src = sorted((need & rest_defs) - want)
    header_imports = imports_for(tree, need)
    if from_src:
        header_imports.append(f"from {src_mod} import {', '.join(from_src)}\n")
    if dst_path.exists():
        dst_text = dst_path.read_text().rstrip("\n") + "\n\n\n" + moved_text
        if header_imports:
            print("add these imports to", dst_path, "by hand:\n" + "".join(header_imports))
    else:
        doc = args.doc or f"Part of {src_mod}."
        std = [i for i in header_imports if not i.startswith(("from gpcheck", "import gpcheck"))]
        ours = [i for i in header_imports if i not in std]
        header_imports = std + (["\n"] if std and ours else []) + ours
        dst_text = (f'"""{doc}"""\n\nfrom __future__ import annotations\n\n' + "".join(header_imports)
                    + "\n\n" + moved_text)
    # SRC: import back what it still uses or what others import from it
    still = used_names(rest_tree.body) & want
    ext = external_users(src_mod, sorted(want), {src_path.resolve(), dst_path.resolve()})
    back = sorted(still | ext)
    if back:
        last = max((n for n in rest_tree.body if isinstance(n, (ast.Import, ast.ImportFrom))),
                   key=lambda n: n.end_lineno, default=None)
        rl = rest_text.splitlines(keepends=True)
        at = last.end_lineno if last is not None else 0
        line = f"from {dst_mod} import {', '.join(back)}\n"
        if len(line) > 110:
            line = f"from {dst_mod} import (\n" + "".join(f"    {n},\n" for n in back) + ")\n"
        rl.insert(at, line)
        rest_text = "".join(rl)
    dst_path.write_text(dst_text)
    src_path.write_text(rest_text)
    final = ast.parse(rest_text)
    used = used_names(final.body)
    for node in final.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                bound = a.asname or a.name.split(".")[0]
                if bound not in used and bound not in back and not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
                    print(f"{src_path}: unused import {bound}")
    print(f"moved {len(moved_nodes)} definitions ({sum(b - a for a, b in segs)} lines) to {dst_path}; "
          f"{src_path} imports back {back}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

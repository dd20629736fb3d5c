"""Issue 17 item 2: the package carries its docs, licence and typing marker, and its metadata
lists every package of the tree (so a wheel ships all of them and the docs)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("spec", "gpmodel", "checker", "traces")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _prefix() -> str:
    """"gpcheck." once the folders are mapped into one `gpcheck` package, else ""."""
    return "gpcheck." if "gpcheck" in _pyproject()["tool"]["setuptools"]["packages"] else ""


def _data(key: str) -> list[str]:
    data = _pyproject()["tool"]["setuptools"]["package-data"]
    if key == "docs":
        return data.get("gpcheck.docs") or data["checker.docs"]
    return data[_prefix() + key]


def test_every_package_of_the_tree_is_listed():
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    found = {_prefix() + ".".join(p.parent.relative_to(ROOT).parts)
             for pkg in PACKAGES for p in (ROOT / pkg).rglob("__init__.py")}
    missing = found - listed
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(missing)}"
    mapped = set(_pyproject()["tool"]["setuptools"].get("package-dir", {}))
    data_only = {p for p in listed if any(p.startswith(m + ".") for m in mapped)} - found  # e.g. gpcheck.spec.models
    assert listed - found - data_only <= mapped, "a listed package that is neither in the tree nor mapped"


def test_the_build_configuration_is_current():
    """Nothing setuptools warns about at `pip install -e .` (issue 33: ~330 lines of warnings):
    the licence as an SPDX expression with no licence classifier, and every folder that holds
    package data listed as a package (setuptools warns of an importable folder left out)."""
    pyproject = _pyproject()
    project, setuptools = pyproject["project"], pyproject["tool"]["setuptools"]
    assert isinstance(project["license"], str)
    assert "license-files" not in setuptools
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]
    listed = set(setuptools["packages"])
    for package, patterns in setuptools["package-data"].items():
        for pattern in patterns:
            folders = Path(pattern).parent.parts
            for depth in range(1, len(folders) + 1):
                assert ".".join((package, *folders[:depth])) in listed, (package, pattern)
    for package in listed:  # each listed package resolves to a folder of the tree
        mapped = max((k for k in setuptools["package-dir"] if package == k or package.startswith(k + ".")), key=len)
        folder = ROOT / setuptools["package-dir"][mapped] / Path(*package[len(mapped):].split(".")[1:])
        assert folder.is_dir(), package


def test_licence_typing_marker_and_metadata():
    project = _pyproject()["project"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]  # SPDX (PEP 639)
    assert "Typing :: Typed" in project["classifiers"]
    for pkg in PACKAGES:
        assert (ROOT / pkg / "py.typed").is_file()
        assert "py.typed" in _data(pkg)


def test_docs_are_package_data_and_every_topic_exists():
    from gpcheck.checker.cli.manual import TOPICS, docs_dir

    root = docs_dir()
    assert root is not None and root.resolve() == (ROOT / "docs").resolve()
    patterns = _data("docs")
    for topic, (name, _) in TOPICS.items():
        assert (root / name).is_file(), topic
        assert any(Path(name).match(p) for p in patterns), f"{name} is not shipped (package-data)"
    assert (root / "tutorial" / "queue.gpspec").is_file()


def _keywords() -> set[str]:
    grammar = (ROOT / "spec" / "grammar.lark").read_text()
    return set(re.findall(r'"([a-z_]+)"', grammar))


def test_language_reference_mentions_every_keyword():
    text = (ROOT / "docs" / "language.md").read_text()
    missing = sorted(k for k in _keywords() if not re.search(rf"\b{k}\b", text))
    assert not missing, f"docs/language.md does not mention {missing}"


def test_textmate_grammar_covers_every_keyword_and_compiles():
    grammar = json.loads((ROOT / "docs" / "editors" / "gpspec.tmLanguage.json").read_text())
    assert grammar["scopeName"] == "source.gpspec" and "gpspec" in grammar["fileTypes"]
    regexes = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("match"), str):
                regexes.append(node["match"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(grammar)
    for rx in regexes:
        re.compile(rx)  # the patterns keep to the part of Oniguruma that Python's re shares
    words = set(re.findall(r"[a-z_]+", re.sub(r"\\[A-Za-z]", " ", " ".join(regexes))))
    missing = sorted(_keywords() - words)
    assert not missing, f"the TextMate grammar lacks {missing}"


def test_textmate_grammar_scopes_a_model(examples):
    """A tiny tokenizer over the grammar's top-level patterns: keywords, comments and numbers of
    a real model get their scopes."""
    grammar = json.loads((ROOT / "docs" / "editors" / "gpspec.tmLanguage.json").read_text())
    repo = grammar["repository"]
    rules: list[tuple[re.Pattern[str], str]] = []
    for inc in grammar["patterns"]:
        node = repo[inc["include"][1:]]
        for rule in node.get("patterns", [node]):
            scope = rule.get("name") or rule["captures"]["1"]["name"]
            rules.append((re.compile(rule["match"]), scope))
    line = (examples / "ring.gpspec").read_text().splitlines()
    text = next(ln for ln in line if ln.startswith("const N"))
    scopes = []
    pos = 0
    while pos < len(text):
        best = None
        for rx, scope in rules:
            m = rx.search(text, pos)
            if m and m.end() > m.start() and (best is None or m.start() < best[0].start()):
                best = (m, scope)
        if best is None:
            break
        scopes.append((best[0].group(0), best[1]))
        pos = best[0].end()
    assert scopes[0][1].startswith("keyword.declaration")  # `const N`
    assert any(s == "constant.numeric.integer.gpspec" for _, s in scopes)
    assert scopes[-1][1] == "comment.line.number-sign.gpspec"


@pytest.mark.parametrize("topic", ["tutorial", "language", "trace-format", "editors"])
def test_docs_command_prints_each_topic(topic, capsys):
    from gpcheck.checker.cli.command import main

    assert main(["docs", topic]) == 0
    assert capsys.readouterr().out.startswith("# ")

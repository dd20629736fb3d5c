"""Nothing cached can change a result (issue 36, NOTE(cache-trust) in spec/usercache.py): the
cache directory is private or refused; foreign, stale, truncated and malicious files planted in
it are rebuilt, never run or unpickled, and the verdicts and state counts stay those of a cold
run; a cache that cannot be written only costs time."""

from __future__ import annotations

import json
import os
import pickle
import random
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gpcheck.spec import usercache

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "quality"))
import fault_inject as F  # noqa: E402


# ----------------------------------------------------------------------- the directory itself
def _fresh(monkeypatch, path: Path) -> None:
    monkeypatch.setenv("GPCHECK_CACHE_DIR", str(path))
    monkeypatch.setattr(usercache, "_chosen", None)
    monkeypatch.setattr(usercache, "_warned", set())


def test_the_cache_directory_is_created_private(tmp_path, monkeypatch, capsys):
    _fresh(monkeypatch, tmp_path / "a" / "cache")
    assert usercache.cache_dir() == tmp_path / "a" / "cache" and usercache.is_persistent()
    assert stat.S_IMODE(os.stat(tmp_path / "a" / "cache").st_mode) == 0o700
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("how", ["group_writable", "world_writable", "other_owner", "not_a_directory",
                                 "parent_world_writable"])
def test_an_unsafe_cache_directory_is_refused_with_a_warning(how, tmp_path, monkeypatch, capsys):
    base = tmp_path / "cache"
    if how == "parent_world_writable":
        (tmp_path / "open").mkdir()
        os.chmod(tmp_path / "open", 0o777)  # no sticky bit: anyone could rename the cache away
        base = tmp_path / "open" / "cache"
        base.mkdir(mode=0o700)
    elif how == "not_a_directory":
        base.write_text("")
    else:
        base.mkdir(mode=0o700)
        if how == "group_writable":
            os.chmod(base, 0o770)
        elif how == "world_writable":
            os.chmod(base, 0o707)
        else:
            if os.geteuid() != 0:
                pytest.skip("giving a directory to another user needs root")
            os.chown(base, 4242, 4242)
    _fresh(monkeypatch, base)
    got = usercache.cache_dir()
    err = capsys.readouterr().err
    assert got != base and not usercache.is_persistent()
    assert f"not using the cache directory {base}" in err and err.count("\n") == 1
    assert stat.S_IMODE(os.stat(got).st_mode) == 0o700 and os.stat(got).st_uid == os.geteuid()
    assert got.name.startswith("gpcheck-nocache-")  # a fresh mkdtemp name, not a fixed one
    usercache.cache_dir()
    assert capsys.readouterr().err == ""  # warned once


def test_a_failed_write_leaves_nothing(tmp_path, monkeypatch):
    target = tmp_path / "d" / "f.bin"

    def full(*a, **k):
        raise OSError(28, "No space left on device")
    real = os.fdopen

    def failing_fdopen(fd, *a, **k):
        f = real(fd, *a, **k)
        f.write = full
        return f
    monkeypatch.setattr(usercache.os, "fdopen", failing_fdopen)
    assert usercache.write_atomically(target, b"x" * 100) is False
    assert not target.exists() and list((tmp_path / "d").iterdir()) == []


# ----------------------------------------------------------------------- the grammar tables
def _parse_in_child(cache: Path) -> subprocess.CompletedProcess[str]:
    code = ("from gpcheck.spec.parser import parse_spec\n"
            "from gpcheck.spec import load_spec\n"
            "m = load_spec('reef_rewind')\n"
            "print(len(m.invariants), len(m.actions))\n")
    return subprocess.run([sys.executable, "-c", code], env=F.env_for(cache), capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


@pytest.fixture(scope="module")
def grammar_cache(tmp_path_factory, fault_caches):
    """A cache holding the grammar tables (a copy of those the run's warm cache of SPEC keeps,
    tests/conftest.py's `fault_caches`: a child building them cost a second of CPU), and what
    parsing prints (in this process: the same parser, the same tables)."""
    from gpcheck.spec import load_spec

    cache = tmp_path_factory.mktemp("grammar") / "cache"
    cache.mkdir(mode=0o700)
    shutil.copy2(fault_caches[1] / "spec-grammar.tables.json", cache)
    m = load_spec("reef_rewind")
    return cache, subprocess.CompletedProcess([], 0, f"{len(m.invariants)} {len(m.actions)}\n", "")


# truncated and garbage tables take malicious_tables' path (the file is not JSON: spec/parser.py
# _read_tables): slow, with that case their counterpart
GRAMMAR_PLANTS = [*(pytest.param(k, marks=pytest.mark.slow) if k in ("truncated", "garbage") else k
                    for k in ("malicious_tables", "malicious_lark_cache", "truncated", "foreign_key", "garbage"))]


@pytest.mark.parametrize("plant", GRAMMAR_PLANTS)
def test_planted_grammar_tables_never_run_and_change_nothing(plant, grammar_cache, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(grammar_cache[0], cache)
    cold = grammar_cache[1]
    tables = cache / "spec-grammar.tables.json"
    assert tables.exists()
    marker = tmp_path / "ran"
    evil = pickle.dumps(F.Evil(marker))
    if plant == "malicious_tables":
        tables.write_bytes(evil)
    elif plant == "malicious_lark_cache":
        (cache / "spec-grammar.lark-cache").write_bytes(evil)
    elif plant == "truncated":
        tables.write_bytes(tables.read_bytes()[:1000])
    elif plant == "foreign_key":
        doc = json.loads(tables.read_bytes())
        doc["key"] = "0" * 64
        tables.write_text(json.dumps(doc))
    else:
        tables.write_bytes(os.urandom(4096))
    warm = _parse_in_child(cache)
    assert (warm.returncode, warm.stdout) == (cold.returncode, cold.stdout), warm.stderr
    assert not marker.exists() and "Traceback" not in warm.stderr
    assert json.loads(tables.read_bytes())["key"] != "0" * 64  # rebuilt


# ----------------------------------------------------------------------- numba's files, kept kernels
@pytest.fixture(scope="module")
def warm(tmp_path_factory, fault_caches):
    """A warm cache of a small model (the compiled core), one of another, and the reference
    (a copy of tests/conftest.py's `fault_caches`, made once per run)."""
    work = tmp_path_factory.mktemp("faults")
    cache, other, reference = F.copy_caches(*fault_caches, work)
    assert reference[1] is not None
    return work, cache, other, reference


# Kinds that take another kind's path are slow, with that one their counterpart: foreign_numba is
# malicious_nbi's (an index whose digest does not match its name and bytes, refused before it is
# unpickled), but a recompilation of the model's expand (4 s of CPU); foreign_native is
# forged_native_header's and test_a_foreign_native_kernel_is_not_loaded's (a kept kernel refused,
# numba's code used); malicious_tables and malicious_lark_cache are
# test_planted_grammar_tables_never_run_and_change_nothing's (the same tables read by a parse).
SAME_PATH = ("foreign_numba", "foreign_native", "malicious_tables", "malicious_lark_cache")
KINDS = [pytest.param(k, marks=pytest.mark.slow) if k in SAME_PATH else k for k in F.CACHE_FAULTS if k != "none"]


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_of_planted_file_changes_nothing(kind, warm):
    """A numba fault plants over the runtime helpers' files alone (`every=False`: the model's
    module stays warm, a second of recompiling instead of seven); cache_trial checks that each
    planted file was read, refused and written afresh."""
    work, cache, other, reference = warm
    ok, what = F.cache_trial(work, cache, other, kind, random.Random(kind), reference, every=False)
    assert ok, what
    assert "nothing to" not in what and "no " not in what.split(":")[0], what  # the fault was injected


# slow: every generated module recompiled (7 s of CPU each); fast: the same kinds above, planted
# over the runtime helpers' files (the same refusal in gpmodel/numba_cache.py)
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["malicious_nbi", "malicious_nbc", "truncated_nbi_with_digest"])
def test_each_kind_of_planted_numba_file_over_every_file_changes_nothing(kind, warm):
    work, cache, other, reference = warm
    ok, what = F.cache_trial(work, cache, other, kind, random.Random(kind), reference, every=True)
    assert ok, what
    assert "nothing to" not in what and "no " not in what.split(":")[0], what


def test_a_foreign_native_kernel_is_not_loaded(warm):
    from gpcheck.gpmodel import native

    work, cache, other, _ = warm
    mine = sorted((cache / "native").glob("*.expand.*.bin"))[0]
    theirs = sorted((other / "native").glob("*.expand.*.bin"))[0]
    module = mine.name.split(".")[0]
    data = theirs.read_bytes()
    head, _, obj = data.partition(b"\n")
    forged = json.loads(head)
    forged["module"] = module
    forged["entry"] = native.entry_name(module, "expand") if forged.get("key") == native.key() else forged["entry"]
    old = native.cache_dir
    native.cache_dir = lambda: cache  # type: ignore[assignment]
    try:
        for planted in (data, json.dumps(forged).encode() + b"\n" + obj):
            mine.write_bytes(planted)
            assert native.load(module, "expand") is None  # the object's own symbol names the other model
    finally:
        native.cache_dir = old  # type: ignore[assignment]


def _verify_unwritable(cache: Path, spec: Path, reference: tuple) -> None:
    """`gpcheck verify` of `spec` under a file-size limit (EFBIG on every write of more than 512
    bytes): the reference result, no traceback, no temporary file, and no file over 512 bytes
    added to `cache` (nothing that had to be written could be kept)."""
    before = {p.relative_to(cache) for p in cache.rglob("*")}
    code = ("import resource, signal, sys\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))\n"
            "from gpcheck.checker.cli.command import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    r = subprocess.run([sys.executable, "-c", code, "verify", str(spec), "--core", "compiled",
                        "--json", "--no-progress"], env={**F.env_for(cache), "PYTHONDONTWRITEBYTECODE": "1"},  # no short .pyc
                       capture_output=True, text=True, timeout=900)
    assert (r.returncode, F.summary(json.loads(r.stdout))) == reference, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    assert not [p for p in cache.rglob("*") if ".tmp" in p.name]
    assert not [p for p in cache.rglob("*") if p.relative_to(cache) not in before and p.stat().st_size > 512]


def test_an_unwritable_cache_gives_the_same_result_and_no_temporary_files(warm, fault_caches, tmp_path):
    """A cache that cannot be written (a file-size limit) costs time only. The cache is the run's
    pristine warm cache of SPEC (`warm` is damaged by the trials) less what a run must then write:
    the runtime helpers' module (its text and numba's files: the module runs uncached), the
    grammar's tables and the model's kept native kernel (built from numba's warm machine code,
    then not kept). The slow test below writes the model's whole module afresh instead."""
    work, _, _, reference = warm
    cache = tmp_path / "small"
    shutil.copytree(fault_caches[1], cache, symlinks=True)
    helpers = F.runtime_module()
    gone = [p for p in cache.rglob("*") if p.is_file() and (p.name.split(".")[0] == helpers or p.parent.name == "native")]
    gone.append(cache / "spec-grammar.tables.json")
    assert len(gone) > 3 and any(p.parent.name == "native" for p in gone)
    for p in gone:
        p.unlink()
    _verify_unwritable(cache, work / "fault_t.gpspec", reference)
    assert not [p for p in gone if p.exists() and p.stat().st_size > 512]  # none came back


@pytest.mark.slow  # the model's module compiled afresh (7 s of CPU); fast: the test above (the same limit, the helpers' module)
def test_an_unwritable_cache_without_the_models_module_gives_the_same_result(warm, fault_caches, tmp_path):
    """A file-size limit (EFBIG on every cache write of more than 512 bytes): no cache, same result.
    The cache holds the warm modules every model shares, not the model's own: its module is
    written and compiled afresh, and neither its file nor numba's can be written (a cold cache
    took twice the CPU, the shared modules' writes failing the same way)."""
    work, _, _, reference = warm
    cache = tmp_path / "small"
    F.copy_shared_modules(fault_caches[1], cache)  # the run's pristine warm cache (`warm` is damaged by the trials)
    (cache / "spec-grammar.tables.json").unlink()  # the grammar's tables are written afresh too (and fail)
    _verify_unwritable(cache, work / "fault_t.gpspec", reference)

"""No command writes over a file it reads (same path, symbolic or hard link), no two outputs of
one run are the same file, the built-in result names are reserved, and every numeric flag is
validated (ASCII digits, range, finite) with a usage error before any work (issue 20)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from gpcheck.checker.cli.command import main
from gpcheck.checker.cli.commands.flags import memory_size, seconds
from gpcheck.checker.cli.outputs import OutputPlan
from gpcheck.spec import load_source
from gpcheck.spec.errors import SpecError, UsageError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT.parent / "shared" / "spec-examples"
TRACE = ROOT / "traces" / "corpus" / "sim" / "blp-full.jsonl"
RAW = ROOT / "traces" / "corpus" / "real" / "raw" / "kineto_priority.json.gz"


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    if not (EXAMPLES / "rewind.gpspec").exists():
        pytest.skip("no examples")
    shutil.copy(EXAMPLES / "rewind.gpspec", tmp_path / "mine.gpspec")
    shutil.copy(TRACE, tmp_path / "run.jsonl")
    shutil.copy(RAW, tmp_path / "raw.json.gz")
    os.link(tmp_path / "mine.gpspec", tmp_path / "hard.gpspec")
    os.symlink("mine.gpspec", tmp_path / "soft.gpspec")
    os.link(tmp_path / "run.jsonl", tmp_path / "hard.jsonl")
    os.link(tmp_path / "raw.json.gz", tmp_path / "hard.json.gz")
    return tmp_path


def _digests(d: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir()) if p.is_file()}


# (command line, words the error must contain); paths are relative to the work directory
OVERWRITES = [
    (["verify", "mine.gpspec", "--itf", "mine.gpspec"], "--itf mine.gpspec is the spec"),
    (["verify", "mine.gpspec", "--perfetto", "hard.gpspec"], "same file as the spec"),
    (["verify", "soft.gpspec", "--itf", "mine.gpspec"], "same file as the spec"),
    (["verify", "mine.gpspec", "--itf", "soft.gpspec"], "same file as the spec"),
    (["verify", "mine.gpspec", "--itf", "./sub/../mine.gpspec"], "is the spec mine.gpspec"),
    (["verify", "mine.gpspec", "--itf", "cx.json", "--perfetto", "./cx.json"], "are the same file"),
    # a name derived from a property name may not land on the input either
    (["verify", "mine.gpspec", "--itf", "{property}.gpspec", "--property", "no_reexecution"], None),
    (["simulate", "mine.gpspec", "--steps", "3", "--seed", "1", "--out", "hard.gpspec"], "same file as the spec"),
    (["simulate", "mine.gpspec", "--steps", "3", "--seed", "1", "--runs", "2", "--out", "m{run}.gpspec"], None),
    (["replay", "run.jsonl", "--itf", "run.jsonl"], "is the trace"),
    (["replay", "run.jsonl", "--perfetto", "hard.jsonl"], "same file as the trace"),
    (["replay", "run.jsonl", "--model", "blp", "--itf", "a.json", "--perfetto", "a.json"], "are the same file"),
    (["export", "run.jsonl", "--perfetto", "hard.jsonl"], "same file as the trace"),
    (["export", "run.jsonl", "--model", "mine.gpspec", "--itf", "soft.gpspec"], "same file as the model"),
    (["import", "raw.json.gz", "--out", "hard.json.gz"], "same file as the input"),
    (["verify", "--itf", "x.json"], "need a SPEC"),
]


@pytest.mark.parametrize("argv,words", OVERWRITES, ids=lambda a: " ".join(a) if isinstance(a, list) else "")
def test_no_output_over_an_input(work: Path, argv: list[str], words: str | None, capsys, monkeypatch) -> None:
    monkeypatch.chdir(work)
    (work / "sub").mkdir()
    if "{property}" in " ".join(argv):
        # the spec is named like a property: `{property}.gpspec` would be the spec itself
        shutil.copy(work / "mine.gpspec", work / "no_reexecution.gpspec")
        argv = [a if a != "mine.gpspec" else "no_reexecution.gpspec" for a in argv]
    if "m{run}.gpspec" in argv:
        shutil.copy(work / "mine.gpspec", work / "m1.gpspec")
        argv = [a if a != "mine.gpspec" else "m1.gpspec" for a in argv]
    before = _digests(work)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "never writes over a file it reads" in err or "same file" in err or "need a SPEC" in err
    if words:
        assert words in err
    assert _digests(work) == before  # nothing read was touched, nothing was written
    assert not [p for p in os.listdir(work) if p.endswith(".tmp")]


def test_outputs_that_differ_are_written(work: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(work)
    assert main(["verify", "mine.gpspec", "--itf", "cx.itf.json", "--perfetto", "cx.json"]) == 1
    assert (work / "cx.itf.json").stat().st_size > 0 and (work / "cx.json").stat().st_size > 0


def test_output_plan_claims(tmp_path: Path) -> None:
    plan = OutputPlan().read("spec", __file__)
    with pytest.raises(UsageError):
        plan.claim("--itf", __file__)
    plan.claim("--itf", f"{tmp_path}/a.json")
    plan.claim("--itf", f"{tmp_path}/a.json")  # the same claim again is fine
    with pytest.raises(UsageError):
        plan.claim("--perfetto", f"{tmp_path}/./a.json")
    with pytest.raises(UsageError, match="no such directory"):  # refused before the work (issue 36)
        plan.claim("--perfetto", "/nonexistent-dir/a.json")


@pytest.mark.parametrize("name", ["deadlock", "range"])
def test_builtin_result_names_are_reserved(name: str) -> None:
    src = f"model m\n\nvar x: 0..3 = 0\n\naction inc {{\n    require x < 3\n    x = x + 1\n}}\n\ninvariant {name}: x >= 0\n"
    with pytest.raises(SpecError) as e:
        load_source(src, "m.gpspec")
    text = e.value.render()
    assert f"m.gpspec:10:1: error: property '{name}' is a built-in result name" in text


BAD_FLAGS = [
    (["verify", "{spec}", "--engine", "bmc", "--depth", "-1"], "--depth"),
    (["verify", "{spec}", "--timeout", "-1"], "--timeout"),
    (["verify", "{spec}", "--timeout", "0"], "--timeout"),
    (["verify", "{spec}", "--timeout", "nan"], "--timeout"),
    (["verify", "{spec}", "--timeout", "inf"], "--timeout"),
    (["verify", "{spec}", "--timeout", "1e999"], "--timeout"),
    (["verify", "{spec}", "--max-states", "-1"], "--max-states"),
    (["verify", "{spec}", "--max-states", "0"], "--max-states"),
    (["verify", "{spec}", "--max-states", "1_000"], "--max-states"),
    (["verify", "{spec}", "--max-states", "١٠"], "--max-states"),
    (["verify", "{spec}", "--const", "N=٣"], "--const"),
    (["verify", "{spec}", "--const", "N=3_0"], "--const"),
    (["verify", "{spec}", "--max-memory", "lots"], "--max-memory"),
    (["verify", "{spec}", "--max-memory", "-1G"], "--max-memory"),
    (["check", "run.jsonl", "--max-inversion", "-5"], "--max-inversion"),
    (["check", "run.jsonl", "--max-gap", "-1"], "--max-gap"),
    (["check", "run.jsonl", "--gap-threshold", "x"], "--gap-threshold"),
    (["replay", "run.jsonl", "--max-hidden", "-1"], "--max-hidden"),
    (["replay", "run.jsonl", "--max-candidates", "0"], "--max-candidates"),
    (["replay", "run.jsonl", "--timeout", "nan"], "--timeout"),
    (["export", "run.jsonl", "--perfetto", "p.json", "--max-hidden", "-2"], "--max-hidden"),
    (["simulate", "{spec}", "--steps", "-1", "--seed", "1", "--out", "x.jsonl"], "--steps"),
    (["simulate", "{spec}", "--steps", "1", "--seed", "٣", "--out", "x.jsonl"], "--seed"),
    (["simulate", "{spec}", "--steps", "1", "--seed", "1", "--runs", "0", "--out", "x.jsonl"], "--runs"),
    (["simulate", "{spec}", "--steps", "1", "--seed", "1", "--runs", "99999999", "--out", "x{run}.jsonl"], "--runs"),
    (["import", "raw.json.gz", "--out", "t.jsonl", "--stream-priority", "7=٣"], "--stream-priority"),
    (["import", "raw.json.gz", "--out", "t.jsonl", "--timeout", "0"], "--timeout"),
]


@pytest.mark.parametrize("argv,flag", BAD_FLAGS, ids=lambda a: " ".join(a) if isinstance(a, list) else a)
def test_bad_numeric_flags_are_usage_errors(work: Path, argv: list[str], flag: str, capsys, monkeypatch) -> None:
    monkeypatch.chdir(work)
    before = _digests(work)
    assert main([a.replace("{spec}", "mine.gpspec") for a in argv]) == 2
    err = capsys.readouterr().err
    assert flag in err and "Traceback" not in err
    assert _digests(work) == before


def test_flag_parsers() -> None:
    assert memory_size("4G") == 4 << 30
    assert memory_size("512M") == 512 << 20
    assert memory_size("1.5GiB") == 3 << 29
    assert seconds("0.5") == 0.5 and seconds("30") == 30.0


@pytest.mark.parametrize("kwargs", [{"depth": -1, "engine": "bmc"}, {"max_states": 0}, {"timeout": float("nan")},
                                    {"timeout": -1.0}, {"timeout": 0}, {"max_states": 2.5}])
def test_api_limits_are_validated(kwargs: dict) -> None:  # type: ignore[type-arg]
    from gpcheck.checker import verify

    with pytest.raises(UsageError):
        verify(str(EXAMPLES / "rewind.gpspec"), **kwargs)


@pytest.mark.parametrize("argv", [
    ["check", "x.jsonl", "--max-delay", "-5"],
    ["check", "x.jsonl", "--max-blocking", "1e3"],
    ["sweep", "nvidia_streams", "--const", "S=1,2", "--depth", "-1"],
    ["sweep", "nvidia_streams", "--const", "S=1", "--timeout", "nan"],
    ["sweep", "nvidia_streams", "--const", "S=1", "--max-states", "٣"],
    ["sweep", "nvidia_streams", "--const", "S=٣,4"],
])
def test_sweep_and_latency_flags_are_validated(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The flags added with sweeps and latency thresholds use the same validators (ASCII digits,
    in range, finite) as every other numeric flag: a usage error naming the value, before any work."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and ("'٣'" in err or "-5" in err or "1e3" in err or "-1" in err or "nan" in err), err

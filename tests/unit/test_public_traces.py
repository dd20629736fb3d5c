"""Public traces recorded by others (traces/corpus/public/README.md): the MI250 rocprof kernel
trace from amd/HPCTrainingExamples, imported byte for byte as committed and replayed through the
AMD mappings (docs/event-mapping.md) against cwsr and kfd_sched."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from gpcheck.checker.cli.command import main

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "traces" / "corpus" / "public"
TRACE = PUBLIC / "mi250_laplacian.jsonl.gz"
MODELS = ROOT / "spec" / "models"


def _lines() -> list[str]:
    with gzip.open(TRACE, "rt") as f:
        return f.read().splitlines()


def _prefix(tmp: Path, lines: list[str], name: str = "prefix.jsonl") -> Path:
    p = tmp / name
    p.write_text("\n".join(lines) + "\n")
    return p


def test_the_raw_csv_imports_to_the_committed_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.jsonl.gz"
    assert main(["import", str(PUBLIC / "raw" / "mi250_laplacian.results.csv.gz"), "--out", str(out)]) == 0
    with gzip.open(out, "rt") as f:
        assert f.read().splitlines() == _lines()
    head = json.loads(_lines()[0])
    assert head["source"]["format"] == "rocprof" and head["source"]["kernels"] == 1004
    assert (PUBLIC / "raw" / "LICENSE.amd-HPCTrainingExamples").read_text().startswith("MIT License")


# cwsr: the discrete replay and the timing pass (its stamps fit: the timed cwsr times only the
# preemption machinery, and retirement is urgent after an untimed last instruction). kfd_sched:
# `--no-timing`, the discrete mapping only: its instruction tick is the seeds' 2.5 ms (TICK_US), so
# a dispatch takes at least L ticks = 5 ms where the recording's first kernel runs 1,131 us, and the
# timing pass over its hidden ticks did not finish in 300 s on 4 dispatches (docs/timed.md, "The
# AMD models").
@pytest.mark.parametrize("model, flags", [("cwsr", []), ("kfd_sched", ["--no-timing"])])
def test_the_first_30_dispatches_conform_through_the_amd_mapping(model: str, flags: list[str], tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    lines = _lines()[:91]  # the header and 30 dispatches' launch, start, end
    assert sum('"action":"start"' in x for x in lines) == 30
    rc = main(["replay", str(_prefix(tmp_path, lines)), "--model", str(MODELS / f"{model}.gpspec"), "--map",
               "--const", "N=30", "--json", "--no-progress", *flags])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["verdict"] == "conforms" and out["events"] == 60
    assert all(r["verdict"] in ("holds_to_bound", "not_evaluated") for r in out["results"])


def test_a_lost_dispatch_start_diverges_at_its_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _lines()[:91]
    starts = [i for i, x in enumerate(lines) if '"action":"start"' in x]
    lost = starts[4]
    corr = json.loads(lines[lost])["meta"]["corr"]
    kept = lines[:lost] + lines[lost + 1:]
    end = next(i for i, x in enumerate(kept) if '"action":"end"' in x and json.loads(x)["meta"]["corr"] == corr) + 1
    rc = main(["replay", str(_prefix(tmp_path, kept)), "--model", str(MODELS / "cwsr.gpspec"), "--map",
               "--const", "N=30", "--json", "--no-progress"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 1 and out["divergence"]["line"] == end
    assert out["divergence"]["event"]["action"] == "retire"

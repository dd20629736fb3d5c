"""Issue 33: `gpcheck verify --json` has one schema whatever the engine (docs/schema/report.schema.json):
every documented key present in every engine's report, --for-all included."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from gpcheck.checker.cli.command import main

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "schema" / "report.schema.json").read_text())
SPEC = """model sch "a counter"
const N = 2
var x: 0..N = 0
fair action inc { require x < N
    x = x + 1 }
invariant small: x <= N
transition grows: x' >= x
terminal: x == N
"""


@pytest.mark.parametrize("flags", [
    ["--engine", "explicit"], ["--engine", "explicit", "--core", "compiled"], ["--engine", "bmc"],
    ["--engine", "kind"], ["--engine", "pdr"], ["--for-all", "N"], ["--engine", "explicit", "--fingerprint",
                                                                     "--core", "compiled"],
])
def test_every_engine_writes_the_schema(flags: list[str], tmp_path: Path, capsys) -> None:
    spec = tmp_path / "sch.gpspec"
    if "compiled" in flags:
        # the compiled core on test_compiled_options.py's `wide` corner case (an invariant, a
        # transition property, liveness under fairness): the same text, so the numba module the run
        # compiles for that file (SPEC was two cold compilations of 3 s of CPU each, plain and by
        # fingerprints)
        from tests.unit.test_compiled_options import EXTRA

        spec.write_text("model t\n" + EXTRA["wide"])
    else:
        spec.write_text(SPEC)
    code = main(["verify", str(spec), "--json", *flags])
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, SCHEMA)
    assert doc["exit_code"] == code
    assert set(SCHEMA["required"]) <= set(doc)


# a latency, expectations and a declared assumption in three states
LATENCY = """model schlat "a counter with a latency, expectations and an assumption"
const N = 2
var x: 0..N = 0
fair action inc { require x < N
    x = x + 1 }
action reset { require x == N
    x = 0 }
assume bounded: x <= N
invariant small: x <= N
latency settle: from x == 0 to x == N
expect small: proved
expect settle: violated
"""


def test_a_model_with_latency_and_expectations(tmp_path: Path, capsys) -> None:
    spec = tmp_path / "schlat.gpspec"
    spec.write_text(LATENCY)
    assert main(["verify", str(spec), "--json"]) == 0  # the violated latency is expected
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, SCHEMA)
    assert doc["expectations"] is not None and any(r["kind"] == "latency" for r in doc["results"])
    assert any(r["assumptions"] == ["bounded"] for r in doc["results"])


@pytest.mark.slow  # a cold compilation of kfd_monitor (28 s of CPU); fast: test_a_model_with_latency_and_expectations
def test_a_bundled_model_with_latency_and_expectations(capsys) -> None:
    # kfd_monitor: latencies, expectations and a declared assumption at 620 states (cwsr took 14 s of CPU)
    main(["verify", "kfd_monitor", "--json"])
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, SCHEMA)
    assert doc["expectations"] is not None and any(r["kind"] == "latency" for r in doc["results"])


def test_the_schema_rejects_a_report_missing_a_key(tmp_path: Path, capsys) -> None:
    spec = tmp_path / "sch.gpspec"  # the small spec (cwsr's no_loss took 3.5 s of CPU for the same report keys)
    spec.write_text(SPEC)
    main(["verify", str(spec), "--json"])
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, SCHEMA)
    del doc["coverage"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, SCHEMA)

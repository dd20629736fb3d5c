"""Issue 17: the command line and API as a new user meets them: --version, errors as JSON, help
on every flag, output that fits, simulate's property checks and defaults, expect lines in a
single-model run, engines that do not check liveness, and the bugs the issue lists."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from gpcheck.checker.cli.command import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial"

BROKEN = """model broken "a queue with a bug"
const N = 2
var done: 0..N = 0
var busy: bool = false
action start { require not busy and done < N
  busy = true }
action finish { require busy
  busy = false
  done = done + 1 }
invariant idle_at_end: done == N implies not busy
invariant at_most_one: done <= 1
terminal: done == N
"""


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    p = tmp_path / "broken.gpspec"
    p.write_text(BROKEN)
    return p


# ------------------------------------------------------------------ version, help, JSON errors

def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["--version"])
    assert e.value.code == 0
    assert re.match(r"gpcheck \S+", capsys.readouterr().out)


def test_every_flag_and_argument_has_help():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name, p in sub.choices.items():
        for a in p._actions:
            if not a.help or a.help == argparse.SUPPRESS:
                missing.append(f"{name} {a.option_strings or a.dest}")
    assert not missing


def test_the_subcommand_table_names_what_each_module_registers():
    """`gpcheck NAME` builds only NAME's parser (cli.COMMAND_NAMES): every subcommand and alias
    the modules register is in the table, and each entry builds a parser that has its name."""
    from gpcheck.checker.cli.command import COMMAND_NAMES, COMMANDS

    def names(parser: argparse.ArgumentParser) -> set[str]:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return set(sub.choices)

    assert names(build_parser()) == set(COMMAND_NAMES)
    assert set(COMMAND_NAMES.values()) == set(COMMANDS)
    for name in COMMAND_NAMES:
        assert name in names(build_parser([name, "--help"])), name


def test_help_points_at_the_docs(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    assert "gpcheck docs tutorial" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["check", "verify", "simulate"])
def test_bad_spec_under_json_is_a_json_error_with_its_place(capsys, tmp_path, command):
    bad = tmp_path / "bad.gpspec"
    bad.write_text("model x\nvar a: 0..3 = 0\naction f { a = b }\n")
    code, out, err = run(capsys, command, str(bad), "--json")
    assert code == 2
    doc = json.loads(out)
    assert doc["error"] == {"file": str(bad), "line": 3, "column": 16, "message": "unknown name 'b'", "kind": "spec"}
    assert doc["errors"][0]["line"] == 3
    assert "bad.gpspec:3:16" in err  # the text stays on stderr


def test_usage_and_trace_errors_under_json(capsys, tmp_path):
    code, out, _ = run(capsys, "verify", "--bogus", "--json")
    assert code == 2 and json.loads(out)["error"]["kind"] == "usage"
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"gpcheck_trace": 1}\n{"action": \n')
    code, out, _ = run(capsys, "replay", str(trace), "--model", str(TUTORIAL / "queue.gpspec"), "--json")
    assert code == 2
    err = json.loads(out)["error"]
    assert err["file"] == str(trace) and err["line"] == 2 and err["kind"] == "trace"
    code, out, _ = run(capsys, "check", str(trace), "--json")
    assert code == 2 and json.loads(out)["error"]["line"] == 2


def test_no_json_error_without_json(capsys, tmp_path):
    code, out, err = run(capsys, "verify", str(tmp_path / "missing.gpspec"))
    assert code == 2 and out == "" and "no such file" in err


# ------------------------------------------------------------------ output that reads well

def test_text_output_has_no_trailing_spaces_and_gpspec_values(capsys, broken):
    code, out, _ = run(capsys, "verify", str(broken), "--width", "80")
    assert code == 1
    assert not [ln for ln in out.splitlines() if ln != ln.rstrip()]
    assert "done = 0, busy = false" in out  # the initial state in gpspec syntax
    assert "True" not in out and "False" not in out
    assert "busy: false -> true" in out


def test_width_sizes_the_table(capsys):
    _, narrow, _ = run(capsys, "verify", str(TUTORIAL / "queue.gpspec"), "--engine", "kind", "--width", "60")
    _, wide, _ = run(capsys, "verify", str(TUTORIAL / "queue.gpspec"), "--engine", "kind", "--width", "160")
    # wide: the detail is a column of the table; narrow: under it, wrapped to the width
    assert re.search(r"proved\s+kind\s+-\s+\S+s\s+\d+-inductive", wide)
    assert re.search(r"^  done_le_submitted: \d+-inductive\b", narrow, re.M)
    assert max(len(ln) for ln in narrow.splitlines() if not ln.startswith("property")) <= 100


def test_width_flag_is_validated(capsys):
    code, _, err = run(capsys, "verify", "--width", "5")
    assert code == 2 and "at least" in err


# ------------------------------------------------------------------ simulate

def test_simulate_defaults_and_property_checks(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "simulate", str(TUTORIAL / "queue.gpspec"))
    assert code == 0, out
    assert (tmp_path / "queue.sim.jsonl").is_file()  # the default --out
    header = json.loads((tmp_path / "queue.sim.jsonl").read_text().splitlines()[0])
    assert header["seed"] == 0 and header["steps"] == 100
    assert "no violation" in out


def test_simulate_reports_the_first_violation_with_its_seed(capsys, tmp_path, broken):
    out_file = tmp_path / "b.jsonl"
    code, out, _ = run(capsys, "simulate", str(broken), "--seed", "7", "--runs", "2", "--out", str(out_file), "--json")
    assert code == 1
    doc = json.loads(out)
    assert doc["checked"] == ["idle_at_end", "at_most_one"]
    for r, run_ in enumerate(doc["runs"]):
        v = run_["violation"]
        assert v == {"property": "at_most_one", "kind": "invariant", "step": 4, "seed": 7 + r, "error": None}
        lines = Path(run_["file"]).read_text().splitlines()
        assert json.loads(lines[-1])["state"]["done"] == 2  # the trace ends in the violating state
    code, _, _ = run(capsys, "simulate", str(broken), "--out", str(out_file), "--no-check")
    assert code == 0
    code, _, err = run(capsys, "simulate", str(broken), "--out", str(out_file), "--property", "nope")
    assert code == 2 and "at_most_one" in err


def test_simulate_transition_property_violation(capsys, tmp_path):
    spec = tmp_path / "t.gpspec"
    spec.write_text("model t\nvar x: 0..5 = 0\naction inc { require x < 5\n x = x + 1 }\n"
                    "transition small_steps: x' <= 2\nallow deadlock\n")
    code, out, _ = run(capsys, "simulate", str(spec), "--out", str(tmp_path / "t.jsonl"))
    assert code == 1
    assert "transition small_steps violated at step 3 (seed 0)" in out


@pytest.mark.parametrize("argv", [
    ["simulate", "{spec}", "--out", "-"],
    ["verify", "{spec}", "--perfetto", "-"],
    ["verify", "{spec}", "--itf", "-"],
])
def test_dash_is_not_a_file_name(capsys, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, *[a.format(spec=TUTORIAL / "queue.gpspec") for a in argv])
    assert code == 2 and "give a file name" in err
    assert not (tmp_path / "-").exists()


# ------------------------------------------------------------------ expect lines, liveness

def test_expect_lines_in_a_single_model_run(capsys):
    # five properties of five expected verdicts (violated, holds, reached, unreachable; invariants,
    # a transition, reachability): the whole model's liveness and latencies took 2.5 s of CPU more,
    # and every expectation of it at its defaults is test_models.py's test_every_expectation_holds_at_defaults
    wanted = ["no_reexecution", "no_loss", "ring_kept", "launched_between_resets", "preempt_during_restore"]
    code, out, _ = run(capsys, "verify", "reef_rewind", "--json", *(a for p in wanted for a in ("--property", p)))
    doc = json.loads(out)
    assert code == 0 and doc["exit_code"] == 0
    assert doc["expectations"]["surprises"] == []
    assert sorted(m["property"] for m in doc["expectations"]["met"]) == sorted(wanted)
    assert any(m["verdict"] == "violated" for m in doc["expectations"]["met"])
    # the expected violation counts again once the expect lines are ignored (one property: the
    # whole model a second time took 2.5 s of CPU)
    assert run(capsys, "verify", "reef_rewind", "--property", "no_reexecution")[0] == 0
    assert run(capsys, "verify", "reef_rewind", "--property", "no_reexecution", "--ignore-expect")[0] == 1
    code, out, _ = run(capsys, "verify", "reef_rewind", "--const", "N=2")
    assert code == 1 and "expect lines not applied" in out


def test_a_contradicted_expectation_is_a_surprise(capsys, tmp_path):
    spec = tmp_path / "e.gpspec"
    spec.write_text("model e\nvar x: 0..2 = 0\naction inc { require x < 2\n x = x + 1 }\n"
                    "invariant small: x <= 1\ninvariant fine: x <= 2\nexpect small: proved\nexpect fine: holds\n"
                    "allow deadlock\n")
    code, out, _ = run(capsys, "verify", str(spec))
    assert code == 1 and "SURPRISE: small: expected proved, got violated" in out
    spec.write_text(spec.read_text().replace("expect small: proved", "expect small: violated"))
    code, out, _ = run(capsys, "verify", str(spec))
    assert code == 0 and "2 met" in out


def test_engines_without_liveness_do_not_make_it_unknown(capsys):
    spec = str(TUTORIAL / "queue.gpspec")
    code, out, _ = run(capsys, "verify", spec, "--engine", "kind", "--json")
    doc = json.loads(out)
    live = next(r for r in doc["results"] if r["property"] == "all_done")
    assert live["verdict"] == "unknown" and live["reason"].startswith("not checked by this engine")
    assert code == 0
    code, _, _ = run(capsys, "verify", spec, "--engine", "pdr", "--property", "all_done")
    assert code == 3  # asked for by name: it stays unknown


# ------------------------------------------------------------------ the bugs of the issue

def test_check_on_an_itf_file_says_replay(capsys, tmp_path):
    itf = tmp_path / "cx.itf.json"
    code, _, _ = run(capsys, "verify", str(TUTORIAL.parent / "tutorial" / "queue.gpspec"), "--const", "MAXP=0")
    assert code == 0
    itf.write_text('{"#meta": {"format": "ITF"}, "vars": ["x"], "states": [{"x": 1}]}')
    code, _, err = run(capsys, "check", str(itf))
    assert code == 2 and "gpcheck replay" in err and "unexpected" not in err
    other = tmp_path / "profile.json"
    other.write_text('{"traceEvents": []}')
    code, _, err = run(capsys, "check", str(other))
    assert code == 2 and "gpcheck import" in err


def test_check_spec_refuses_property(capsys):
    code, _, err = run(capsys, "check", str(TUTORIAL / "queue.gpspec"), "--property", "all_done")
    assert code == 2 and "gpcheck verify" in err


def test_check_trace_without_kernels_is_not_ok(capsys):
    code, out, _ = run(capsys, "check", str(TUTORIAL / "mine.jsonl"), "--json")
    assert code == 3
    assert {r["status"] for r in json.loads(out)["results"]} == {"unknown"}


def test_import_chrome_refuses_gpchecks_own_export_and_empty_traces(capsys, tmp_path):
    trace = tmp_path / "run.jsonl"
    assert run(capsys, "simulate", str(TUTORIAL / "queue.gpspec"), "--out", str(trace))[0] == 0
    pf = tmp_path / "run.perfetto.json"
    assert run(capsys, "export", str(trace), "--perfetto", str(pf))[0] == 0
    code, _, err = run(capsys, "import", str(pf), "--format", "chrome", "--out", str(tmp_path / "i.jsonl"))
    assert code == 2 and "gpcheck's own Perfetto export" in err
    empty = tmp_path / "empty.json"
    empty.write_text('[{"name": "x", "ph": "i", "ts": 1}]')
    code, _, err = run(capsys, "import", str(empty), "--format", "chrome", "--out", str(tmp_path / "i.jsonl"))
    assert code == 2 and "no duration slices" in err
    assert not (tmp_path / "i.jsonl").exists()


def test_replay_shows_the_failing_require_of_a_bundled_model(capsys):
    # (a bundled model whose corpus trace still matches it: reef_rewind has since grown BE queues)
    trace = ROOT / "traces" / "corpus" / "sim" / "nv_query_group-bad-require.jsonl"
    code, out, _ = run(capsys, "replay", str(trace), "--model", "nv_query_group")
    assert code == 1
    assert re.search(r"require #1 failed \(nv_query_group:\d+: require queried and qres != 4", out)
    assert "True" not in out and "False" not in out


def test_tutorial_files_behave_as_the_tutorial_says(capsys):
    code, out, _ = run(capsys, "verify", str(TUTORIAL / "queue.gpspec"), "--json")
    assert code == 0 and {r["verdict"] for r in json.loads(out)["results"]} == {"proved"}
    code, out, _ = run(capsys, "replay", str(TUTORIAL / "mine.jsonl"), "--model", str(TUTORIAL / "queue.gpspec"))
    assert code == 1 and "require running and not preempted" in out


# The README's API example moved to docs/api.md, where tests/unit/test_docs_examples.py runs it as a doctest.


# ------------------------------------------------------------------ names

def test_verify_claims_is_the_new_name_of_claims():
    p = build_parser()
    assert p.parse_args(["verify-claims"]).run is p.parse_args(["claims"]).run


def test_models_explains_its_abbreviations(capsys):
    code, out, _ = run(capsys, "models")
    assert code == 0
    assert re.search(r"^  LC +latency-critical", out, re.M) and re.search(r"^  BE +best-effort", out, re.M)
    code, out, _ = run(capsys, "models", "reef_rewind")
    assert "research/*.md are the project's code studies" in " ".join(out.split())


def test_one_vocabulary_with_deprecated_aliases(tmp_path):
    from gpcheck.checker.api.reproduce import replay_command, verify_command
    from gpcheck.checker.api.testing import assert_conforms, assert_holds

    spec = str(TUTORIAL / "queue.gpspec")
    assert verify_command(spec).startswith("gpcheck verify")  # prop is optional
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_holds(spec, "done_le_submitted", consts={"N": 2})
        assert replay_command("t.jsonl", spec, format="gpcheck").endswith("--format gpcheck")
    with pytest.warns(DeprecationWarning, match="consts="):
        assert_holds(spec, "done_le_submitted", const={"N": 2})
    with pytest.warns(DeprecationWarning, match="format="):
        assert replay_command("t.jsonl", spec, fmt="itf").endswith("--format itf")
    trace = tmp_path / "r.jsonl"
    assert main(["simulate", spec, "--out", str(trace)]) == 0
    with pytest.warns(DeprecationWarning, match="check_properties="):
        assert_conforms(str(trace), spec, properties=False)
    assert_conforms(str(trace), spec, check_properties=True)


# ------------------------------------------------------------------ progress

def _gpcheck(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ, PYTHONPATH=str(ROOT), **env)
    return subprocess.run([sys.executable, "-m", "gpcheck", *argv], capture_output=True, text=True,
                          env=e, timeout=300)


# kind mines its auxiliary invariants first whatever the time left (NOTE(kind-clock)): within 3 s
# its meter may still show that phase
@pytest.mark.parametrize("engine, word", [("explicit", "states/s"), ("kind", "bound|auxiliary invariants"),
                                          ("bmc", "bound")])
@pytest.mark.slow  # waits out --timeout 3 and 2 s per engine; fast: the progress tests of test_replay_progress.py
def test_progress_lines_without_a_terminal(engine, word):
    model = ["nvidia_streams", "--const", "S=3"] if engine == "explicit" else ["cwsr", "--const", "N=4"]
    proc = _gpcheck("verify", *model, "--engine", engine, "--core", "python", "--timeout", "3", "--depth", "60",
                    GPCHECK_PROGRESS_INTERVAL="0.5")
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("gpcheck: progress: ")]
    assert lines, proc.stderr
    assert any(w in lines[-1] for w in word.split("|")) and "memory" in lines[-1]
    quiet = _gpcheck("verify", *model, "--engine", engine, "--core", "python", "--timeout", "2",
                     "--no-progress", GPCHECK_PROGRESS_INTERVAL="0.5")
    assert "progress" not in quiet.stderr

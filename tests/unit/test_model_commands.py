"""`gpcheck models`, `gpcheck explain` and `gpcheck claims` (issue 4): output shape, exit codes,
and the findings they must show (the parameter that enables a step, the seeds' refuted rows)."""

from __future__ import annotations

import json

import pytest

from gpcheck.checker.claims import Outcome, check_claims, kernel_offset
from gpcheck.checker.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_models_lists_every_model_with_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "models")
    assert code == 0 and "reef_rewind:" in out and "FLAG_HONOURED=0" in out and "cwsr:" in out
    code, out = _run(capsys, "models", "cwsr", "--json")
    d = json.loads(out)
    assert d["model"] == "cwsr" and any(p["name"] == "PREEMPT_TIMEOUT" for p in d["parameters"])
    assert "kfd_device_queue_manager.c" in d["doc"]
    assert main(["models", "no_such_model"]) == 2


def test_explain_blames_the_enabling_parameter(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "explain", "cwsr", "no_loss", "--const", "PREEMPT_TIMEOUT=1")
    assert code == 1
    assert "timeout_reset" in out and "possible only because PREEMPT_TIMEOUT=1" in out
    code, out = _run(capsys, "explain", "reef_rewind", "no_loss", "--const", "READ_AT_LAUNCH=1", "--json")
    d = json.loads(out)
    blamed = {b["name"] for s in d["steps"] for b in s["made_possible_by"]}
    assert code == 1 and "READ_AT_LAUNCH" in blamed and d["length"] == len(d["steps"]) - 1
    code, out = _run(capsys, "explain", "nv_query_group", "control_authorised")
    assert code == 1 and "possible only because BYPASS=1" in out
    code, out = _run(capsys, "explain", "cwsr", "no_reexecution")
    assert code == 0 and "proved" in out and "nothing to explain" in out
    assert main(["explain", "cwsr", "no_such_property"]) == 2


@pytest.mark.slow  # every row of both tables, twice (480 s wall at load 10); fast: test_claims_command_renders_the_rows
def test_claims_rows_and_outcomes(capsys: pytest.CaptureFixture[str]) -> None:
    rows = check_claims()
    assert not [r.ident for r in rows if r.outcome is Outcome.CHANGED]
    by = {(r.ident, r.side): r for r in rows}
    assert by[("4.2.2", "GPreempt")].outcome is Outcome.REFUTED
    assert by[("4.2.9", "AMD")].outcome is Outcome.BEST_CASE
    amd = by[("4.2.9", "AMD")].numbers
    assert (amd["latency_best_us"], amd["latency_worst_us"]) == (20005, 25004)
    gp = by[("4.2.2", "GPreempt")].numbers
    assert (gp["latency_best_us"], gp["latency_worst_us"]) == (20400, 21399)
    assert by[("4.1.17", "AMD")].outcome is Outcome.CONFIRMED
    # issue 15's disputed rows, answered from the timed models
    assert by[("4.2.11", "AMD")].outcome is Outcome.BEST_CASE
    seeds = by[("4.2.11", "AMD")].numbers
    assert seeds["seeds"]["be_delay_best_us"] == 25005 and seeds["rt_work_ends_at_a_wake_up"]["be_delay_best_us"] == 20005
    assert by[("4.2.13", "both")].outcome is Outcome.REFUTED
    assert by[("4.1.16", "AMD")].outcome is Outcome.BEST_CASE
    for ident in ("4.1.4", "4.1.14", "4.1.19", "4.2.5"):
        side = "both" if ident == "4.1.4" else "GPreempt"
        assert by[(ident, side)].outcome is Outcome.UNDER, ident
    assert by[("4.2.5", "GPreempt")].numbers["reexecuted_max_two_arrivals"] == 4
    lat = next(e for e in by[("4.2.11", "AMD")].evidence if e.model == "kfd_monitor")
    assert lat.latency and lat.high is None and lat.witness
    assert kernel_offset(99, 75, 2, 0) == 22
    code, out = _run(capsys, "claims", "--json")
    assert code == 0 and json.loads(out)["ok"] is True


@pytest.mark.parametrize("argv, blamed", [
    # kfd_sched on cwsr: the monitor's unmap of LP also unmaps HP only under HWS (MES=0 shapes it),
    # and the HP queue is reset only with the timeout fault on
    (["kfd_sched", "hp_undisturbed"], "MES"),
    (["kfd_sched", "hp_survives", "--const", "PREEMPT_TIMEOUT=1"], "PREEMPT_TIMEOUT"),
    # xsched: a wrong idempotence label is what makes level 3 restart k1
    (["xsched", "reexec_idempotent_only", "--const", "LABEL=7"], "LABEL"),
    (["xsched", "reexec_idempotent_only", "--const", "LEVEL=2"], "LEVEL"),
    # REEF issue #2: the swapped order lets the queued kernel start before the flag is visible
    (["reef_flag_race", "preemption_effective"], "ORDER"),
    # GPreempt on HIP: checking lc_cnt before registering is the race
    (["gp_hip_suspend", "preemption_effective"], None),
    # reef_rewind's stale input happens under every setting of its switches
    (["reef_rewind", "no_stale_input"], None),
])
def test_explain_the_issue_16_findings(capsys: pytest.CaptureFixture[str], argv: list[str],
                                       blamed: str | None) -> None:
    code, out = _run(capsys, "explain", *argv, "--json")
    d = json.loads(out)
    assert code == 1 and d["steps"] and all(s["note"] for s in d["steps"][1:] if s["action"] != "flag_land")
    names = {b["name"] for s in d["steps"] for b in s["made_possible_by"]}
    if blamed is not None:
        assert blamed in names, names


def test_claims_command_renders_the_rows(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The default run's check of `gpcheck verify-claims` (the whole table, above, is `slow`):
    the command over table 4.1 alone, its rows' live evidence, the text and the JSON."""
    import gpcheck.checker.commands.claims as command
    from gpcheck.checker.claims import Context, table_41

    rows = table_41(Context())  # the evidence, checked once for both renderings
    monkeypatch.setattr(command, "check_claims", lambda engine="explicit": rows)
    code, out = _run(capsys, "verify-claims", "--json")
    d = json.loads(out)
    assert code == 0 and d["ok"] is True and d["rows"]
    by = {(r["row"], r["side"]): r["outcome"] for r in d["rows"]}
    assert by[("4.1.17", "AMD")] == Outcome.CONFIRMED.value
    assert by[("4.1.4", "both")] == Outcome.UNDER.value and by[("4.1.16", "AMD")] == Outcome.BEST_CASE.value
    code, out = _run(capsys, "claims", "--no-progress")
    assert code == 0 and "4.1.17" in out and "CONFIRMED" in out and out.rstrip().splitlines()[-1].startswith("summary: ")

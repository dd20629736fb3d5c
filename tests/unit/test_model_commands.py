"""`gpcheck models`, `gpcheck explain` and `gpcheck claims` (issue 4): output shape, exit codes,
and the findings they must show (the parameter that enables a step, the seeds' refuted rows)."""

from __future__ import annotations

import json

import pytest

from gpcheck.checker.regression.claims import Outcome, check_claims, kernel_offset
from gpcheck.checker.regression.claims_rule import Code, Evidence, Measure, Row, derive, settle
from gpcheck.checker.core.verdict import Verdict
from gpcheck.checker.cli.command import main


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


# cwsr with one dispatch of one-op waves (N=1, L=1): the same findings; at the defaults the proof of
# no_reexecution finds its assumptions on the timed model without each (21 s of CPU, against 0.4 s)
SMALL_CWSR = ("--const", "N=1", "--const", "L=1")


def test_explain_blames_the_enabling_parameter(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "explain", "cwsr", "no_loss", "--const", "PREEMPT_TIMEOUT=1", *SMALL_CWSR)
    assert code == 1
    assert "timeout_reset" in out and "possible only because PREEMPT_TIMEOUT=1" in out
    code, out = _run(capsys, "explain", "reef_rewind", "no_loss", "--const", "READ_AT_LAUNCH=1", "--json")
    d = json.loads(out)
    blamed = {b["name"] for s in d["steps"] for b in s["made_possible_by"]}
    assert code == 1 and "READ_AT_LAUNCH" in blamed and d["length"] == len(d["steps"]) - 1
    code, out = _run(capsys, "explain", "nv_query_group", "control_authorised")
    assert code == 1 and "possible only because BYPASS=1" in out
    code, out = _run(capsys, "explain", "cwsr", "no_reexecution", *SMALL_CWSR)
    assert code == 0 and "proved" in out and "nothing to explain" in out
    assert main(["explain", "cwsr", "no_such_property"]) == 2


@pytest.mark.slow  # every row of both tables, twice (480 s wall at load 10); fast: test_claims_command_renders_the_rows
def test_claims_rows_and_outcomes(capsys: pytest.CaptureFixture[str]) -> None:
    rows = check_claims()
    assert not [r.ident for r in rows if r.outcome is Outcome.CHANGED]
    # every outcome is the rule's (NOTE(claims-rule)), and every row rests on live evidence or on a
    # code reading with its file and line
    assert all(r.outcome is derive(r) for r in rows)
    assert all(r.evidence or r.code for r in rows)
    assert all(":" in c.where or "line" in c.where or "(" in c.where for r in rows for c in r.code)
    by = {(r.ident, r.side): r for r in rows}
    assert len(rows) == 49
    # GPreempt's numbers come from reef_rewind (the code's busy poll), not from the refuted 1 ms poll
    gp = by[("4.2.2", "GPreempt")].numbers
    assert (gp["latency_best_us"], gp["latency_worst_us"]) == (20311, 20311)
    assert (gp["detection_best_us"], gp["detection_worst_us"]) == (0, 0)
    for ident, side in (("4.2.1", "GPreempt"), ("4.2.2", "GPreempt"), ("4.2.12", "both"), ("4.2.13", "both")):
        assert by[(ident, side)].outcome is Outcome.REFUTED, ident
        assert any(e.model == "reef_rewind" for e in by[(ident, side)].evidence), ident
    assert by[("4.2.6", "GPreempt")].outcome is Outcome.UNDER
    assert by[("4.2.6", "GPreempt")].measures[0].all_agree      # exactly the seeds' 20.3 ms, under their costs
    assert by[("4.2.9", "AMD")].outcome is Outcome.BEST_CASE
    amd = by[("4.2.9", "AMD")].numbers
    assert (amd["latency_best_us"], amd["latency_worst_us"]) == (20005, 25005)
    assert by[("4.1.17", "AMD")].outcome is Outcome.CONFIRMED
    # the review's rows: GPreempt 4.1.3, 4.1.8, 4.1.18 under stated parameters; AMD's monitoring cell
    # refuted by the doorbell read
    for ident in ("4.1.3", "4.1.8", "4.1.18"):
        assert by[(ident, "GPreempt")].outcome is Outcome.UNDER, ident
    mon = by[("4.1.6", "AMD")]
    assert mon.outcome is Outcome.REFUTED and any(e.prop == "hp_detected" and e.role == "claim" and not e.ok
                                                  for e in mon.evidence)
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
    # issue 32: NVIDIA's own explicit preemption beside REEF and CWSR (4.1.12), MAKE_REALTIME's CTA (4.1.11)
    nv = by[("4.1.12", "both")].numbers
    assert nv["nvidia_preempt"] == {"min_us": 0, "max_us": 300}
    assert nv["nvidia_preempt_no_realtime"] == {"min_us": 200, "max_us": 1424}
    assert any(e.model == "nvidia_preempt" and e.ok for e in by[("4.1.11", "GPreempt")].evidence)


def test_claims_rule_derives_each_outcome() -> None:
    """NOTE(claims-rule) on hand-made checks: each outcome, and a text that argues another is reported."""
    def row(stated: Outcome, *checks: object) -> Row:
        r = Row("x", "GPreempt", "t", "c", stated, "why")
        for c in checks:
            (r.evidence if isinstance(c, Evidence) else r.measures if isinstance(c, Measure) else r.code).append(c)  # type: ignore[arg-type]
        return r

    def e(ok: bool, role: str) -> Evidence:
        return Evidence("m", "p", (), "proved", Verdict.PROVED if ok else Verdict.VIOLATED, role=role)

    assert derive(row(Outcome.CONFIRMED, e(True, "claim"), e(True, "scope"))) is Outcome.CONFIRMED
    assert derive(row(Outcome.CONFIRMED, e(False, "claim"), e(False, "scope"))) is Outcome.REFUTED
    assert derive(row(Outcome.CONFIRMED, e(True, "claim"), e(False, "scope"))) is Outcome.UNDER
    assert derive(row(Outcome.CONFIRMED, e(True, "claim"), e(False, "worst"))) is Outcome.BEST_CASE
    assert derive(row(Outcome.CONFIRMED, e(False, "detail"))) is Outcome.NOT_DECIDED
    assert derive(row(Outcome.CONFIRMED, Code("f.c:1", "narrows"))) is Outcome.UNDER
    assert derive(row(Outcome.CONFIRMED, Code("f.c:1", "agrees"), Code("g.c:2", "disagrees"))) is Outcome.REFUTED
    assert derive(row(Outcome.CONFIRMED, Code("f.c:1", "undecided"))) is Outcome.NOT_DECIDED
    assert derive(row(Outcome.CONFIRMED, Measure("t", 5, 5, 5, 5, "s"))) is Outcome.CONFIRMED
    assert derive(row(Outcome.CONFIRMED, Measure("t", 5, 5, 5, 9, "s"))) is Outcome.BEST_CASE
    assert derive(row(Outcome.CONFIRMED, Measure("t", 5, 5, 6, 9, "s"))) is Outcome.REFUTED
    assert derive(row(Outcome.CONFIRMED, Measure("t", 5, 5, 5, None, "s"))) is Outcome.BEST_CASE
    assert derive(row(Outcome.CONFIRMED, e(True, "claim"), Measure("t", 2, 3, 4, 4, "s", role="scope"))) is Outcome.UNDER
    # the text argues one outcome, the rule derives another: evidence changed
    r = settle(row(Outcome.CONFIRMED, e(False, "claim")))
    assert r.outcome is Outcome.CHANGED and r.derived is Outcome.REFUTED and "the rule derives" in r.why
    # a verdict the text quotes changed: evidence changed, whatever the rule says
    r = settle(row(Outcome.CONFIRMED, e(True, "claim"), e(False, "detail")))
    assert r.outcome is Outcome.CHANGED and r.derived is Outcome.CONFIRMED


def test_claims_command_prints_the_rule_and_each_checks_standing(capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import gpcheck.checker.cli.commands.claims as cmd
    r = Row("4.1.6", "AMD", "monitoring", "kernel space + MMIO", Outcome.REFUTED, "why",
            [Evidence("kfd_sched", "hp_detected", (), "holds", Verdict.VIOLATED, role="claim")],
            code=[Code("kfd_priv.h:L478-487", "disagrees")])
    monkeypatch.setattr(cmd, "check_claims", lambda engine: [settle(r)])
    code, out = _run(capsys, "verify-claims")
    assert code == 0 and "outcome rule:" in out and "disagrees claim: kfd_sched.hp_detected" in out
    assert "code reading kfd_priv.h:L478-487: disagrees" in out
    code, out = _run(capsys, "verify-claims", "--json")
    d = json.loads(out)
    assert code == 0 and d["ok"] and d["rule"] and d["rows"][0]["derived"] == "refuted"
    assert d["rows"][0]["evidence"][0]["role"] == "claim" and d["rows"][0]["code"][0]["shows"] == "disagrees"


@pytest.mark.parametrize("argv, blamed", [
    # kfd_sched on cwsr: the monitor's unmap of LP also unmaps HP only under HWS (MES=0 shapes it),
    # and the HP queue is reset only with the timeout fault on
    # (with the monitor repaired to read the real rptr; the seeds' doorbell read never preempts)
    (["kfd_sched", "hp_undisturbed", "--const", "RPTR_READ=1"], "MES"),
    # slow (about 3 s of CPU: kfd_sched with its timeout fault on); the same explain of kfd_sched
    # with RPTR_READ=1 is the case above, its blame of a switch (MES) the same path
    pytest.param(["kfd_sched", "hp_survives", "--const", "PREEMPT_TIMEOUT=1", "--const", "RPTR_READ=1"],
                 "PREEMPT_TIMEOUT", marks=pytest.mark.slow),
    (["kfd_sched", "hp_detected"], "RPTR_READ"),
    # xsched: the level-3 interrupt (the code marks every kernel killable) is what restarts k1's block;
    # the paper's whole relaunch (RESTORE=0) is what makes level 2 re-run k1's finished block
    (["xsched", "reexec_idempotent_only"], "LEVEL"),
    (["xsched", "reexec_idempotent_only", "--const", "LEVEL=2", "--const", "RESTORE=0"], "RESTORE"),
    # REEF issue #2: the swapped order lets the queued kernel start before the flag is visible
    (["reef_flag_race", "preemption_effective"], "ORDER"),
    # GPreempt on HIP: the LC kernels launch before the daemon suspends (and, with DAEMON_FIRST=1,
    # checking lc_cnt before registering is the race)
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


def test_models_keeps_the_comment_blocks_alignment(capsys) -> None:
    """Issue 33: `gpcheck models M` printed the model's comment block with every line's own
    indentation stripped, so its aligned columns of code citations collapsed."""
    from gpcheck.checker.cli.command import main

    assert main(["models", "cwsr"]) == 0
    out = capsys.readouterr().out
    assert "  #   amdkfd/kfd_device_queue_manager.c" in out
    assert "  #     execute_queues_cpsch  L2368-2382" in out


@pytest.mark.slow  # table 4.1's live evidence: about 2 min of CPU since the outcomes are derived (docs/claims.md)
def test_claims_command_renders_the_rows(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The default run's check of `gpcheck verify-claims` (the whole table, above, is `slow`):
    the command over table 4.1 alone, its rows' live evidence, the text and the JSON."""
    import gpcheck.checker.cli.commands.claims as command
    from gpcheck.checker.regression.claims import Context, table_41

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


def test_claims_rows_show_the_assumptions_their_evidence_rests_on(capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 30: each row says which model assumptions its live checks carry (a proof's: those it
    used; a violation's: those in force), in the text and the JSON; a row whose checks rest on
    none says `none`."""
    import gpcheck.checker.cli.commands.claims as cmd
    from gpcheck.checker.regression.claims import Context

    ctx = Context()
    loss = ctx.check("cwsr", "no_loss", "proved", role="claim", Q=1)
    kept = ctx.check("cwsr", "ring_kept", "holds", role="claim", Q=1)
    assert loss.verdict is Verdict.PROVED and loss.assumptions == ("copy_save",) and kept.assumptions == ()
    rows = [settle(Row("4.1.1", "AMD", "t", "c", Outcome.CONFIRMED, "why", [loss, kept])),
            settle(Row("4.1.2", "AMD", "t", "c", Outcome.CONFIRMED, "why", [kept]))]
    monkeypatch.setattr(cmd, "check_claims", lambda engine: rows)
    code, out = _run(capsys, "verify-claims")
    assert code == 0 and "assumptions: cwsr.copy_save (cwsr.no_loss)" in out and "assumptions: none" in out
    assert "cwsr.no_loss [Q=1]: proved, timed; assumes copy_save" in out  # cwsr is timed: the timed engine (its abstraction proved it)
    code, out = _run(capsys, "verify-claims", "--json")
    d = json.loads(out)
    assert d["rows"][0]["assumptions"] == {"cwsr.copy_save": ["cwsr.no_loss"]} and d["rows"][1]["assumptions"] == {}
    assert d["rows"][0]["evidence"][0]["assumptions"] == ["copy_save"]

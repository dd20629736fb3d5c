"""checker/engines/smt/tracefill.py: the Z3 fallback of replay past the candidate limit (NOTE(replay-z3)).

Each trace here is also replayed explicitly (the default limit is far above what these small
models need), and the symbolic verdict must agree with it: conforms, or the same diverging
line. A conforming verdict comes with a filled-in behaviour that must replay through gpmodel."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from gpcheck.checker.cli.command import main
from gpcheck.checker.engines.smt import tracefill
from gpcheck.checker.engines.smt.tracefill import FillResult, Witness, fill_trace
from gpcheck.gpmodel import CompiledModel, compile_model
from gpcheck.spec import load_source
from gpcheck.traces.format import Event, TraceHeader, write_trace
from gpcheck.checker.engines.replay.search import ReplayOptions, Replayer, SymbolicRequest, memory_source

STOCK = """model stock "Unobserved stock levels and hidden refills: the Z3 fallback fills them in"
var stock: [0..2] -> 0..3 = any
var taken: 0..15 = 0
var pending: 0..2 = 0

action take(i: 0..2) {
    require stock[i] > 0
    stock[i] = stock[i] - 1
    taken = taken + 1
}

action request {
    require pending < 2
    pending = pending + 1
}

internal action refill(i: 0..2) {
    require pending > 0 and stock[i] < 3
    pending = pending - 1
    stock[i] = stock[i] + 1
}

invariant bounded: taken <= 15
"""

# The same interface, but `take` forgets to decrement: a witness found for STOCK does not replay.
WRONG = STOCK.replace("    stock[i] = stock[i] - 1\n", "")


@pytest.fixture(scope="module")
def cm() -> CompiledModel:
    return compile_model(load_source(STOCK, "stock.gpspec"))


def _take(i: int | None, taken: int | None = None) -> Event:
    return Event("take", {} if i is None else {"i": i}, None if taken is None else {"taken": taken})


# stock is never observed: 64 initial candidates. Three takes of 0 before any request pin
# stock[0] = 3; the fourth needs the hidden refill after the request.
GOOD = [_take(0, 1), _take(0, 2), _take(0, 3), Event("request", {}), _take(0, 4), _take(1, 5),
        Event("request", {}), Event("request", {}), _take(2, 6), _take(0, 7), _take(0, 8)]


def _replay(cm: CompiledModel, events: list[Event], header: TraceHeader | None = None, **opt: Any):  # type: ignore[no-untyped-def]
    return Replayer(cm, ReplayOptions(**opt)).replay(memory_source(header or TraceHeader(), events, "t.jsonl"), "t.jsonl")


def _symbolic(cm: CompiledModel, events: list[Event], monkeypatch: pytest.MonkeyPatch,
              header: TraceHeader | None = None, limit: int = 8):  # type: ignore[no-untyped-def]
    """Replay past a small candidate limit, recording the requests handed to the fallback; the
    explicit replay (default limit) must agree."""
    seen: list[SymbolicRequest] = []
    real = tracefill.replay_symbolic

    def spy(req: SymbolicRequest):  # type: ignore[no-untyped-def]
        seen.append(req)
        return real(req)

    monkeypatch.setattr(tracefill, "replay_symbolic", spy)
    rep = _replay(cm, events, header, max_candidates=limit)
    assert len(seen) == 1, "the candidate limit was not reached"
    explicit = _replay(cm, events, header)
    assert explicit.peak_candidates > limit
    assert rep.conforms == explicit.conforms
    if explicit.divergence is not None:
        assert rep.divergence is not None and rep.divergence.line == explicit.divergence.line
    return rep, seen[0]


def _check_witness(cm: CompiledModel, res: FillResult, events: list[Event], from_line: int = 1,
                   start: tuple[tuple[int, ...], ...] | None = None) -> Witness:
    """The filled-in behaviour: every step through `cm.step`, one non-hidden step per logged event
    from `from_line` on (that action, at that line), hidden steps internal; it starts in one of
    `start`, or, from the initial states, written as a fully observed trace (hidden steps logged)
    it replays explicitly."""
    w = res.witness
    assert res.conforms is True and w is not None
    s = w.start
    for st in w.steps:
        assert cm.step(st.iid, s) == st.state
        s = st.state
    numbered = [(e.line or i + 2, e) for i, e in enumerate(events)]
    want = [(line, e.action) for line, e in numbered if line >= from_line]
    got = [(st.line, cm.instances[st.iid].action.name) for st in w.steps if not st.hidden]
    assert [line for line, _ in got] == [line for line, _ in want]
    assert all(g == e or e == "*" for (_, g), (_, e) in zip(got, want))
    assert all(cm.instances[st.iid].action.internal for st in w.steps if st.hidden)
    if start is not None:
        assert w.start in start  # one of replay's explicit candidates before `from_line`
    else:  # from the initial states: the behaviour as a fully observed trace replays explicitly
        full = [Event(cm.instances[st.iid].action.name, cm.instances[st.iid].arg_dict(), cm.layout.decode(st.state))
                for st in w.steps]
        header = TraceHeader(init=cm.layout.decode(w.start), extra={"logs_internal": True})
        assert _replay(cm, full, header).conforms is True
    return w


def test_unobserved_values_are_filled_in(cm: CompiledModel, monkeypatch: pytest.MonkeyPatch) -> None:
    rep, req = _symbolic(cm, GOOD, monkeypatch)
    assert req.start is None and req.from_line == 1  # 64 initial candidates > 8
    assert rep.conforms is True and rep.exit_code == 3  # properties are not evaluated symbolically
    assert "Z3 fallback" in (rep.reason or "") and "re-checked through gpmodel" in (rep.reason or "")
    res = fill_trace(req, cm=cm)
    w = _check_witness(cm, res, GOOD)
    assert res.events == len(GOOD)
    assert cm.layout.decode(w.start)["stock"][0] == 3  # three takes before any refill
    assert [cm.instances[st.iid].label() for st in w.steps[:5]] == ["take(i=0)"] * 3 + ["request", "refill(i=0)"]


def test_changed_event_diverges_at_its_line(cm: CompiledModel, monkeypatch: pytest.MonkeyPatch) -> None:
    # the request at line 5 becomes a fourth take of 0: no refill can happen before it
    bad = GOOD[:3] + [_take(0, 4)] + GOOD[4:]
    rep, _ = _symbolic(cm, bad, monkeypatch)
    d = rep.divergence
    assert rep.conforms is False and rep.exit_code == 1 and d is not None and d.line == 5
    assert d.event == {"action": "take", "args": {"i": 0}, "state": {"taken": 4}}
    assert "'take' is not enabled" in d.reason and "32 internal steps" in d.reason and "Z3" in d.reason
    # an observation changed at line 7: enabled, but it cannot produce taken = 9
    bad = GOOD[:5] + [_take(1, 9)] + GOOD[6:]
    monkeypatch.undo()
    rep, _ = _symbolic(cm, bad, monkeypatch)
    d = rep.divergence
    assert d is not None and d.line == 7 and "cannot produce the observed state" in d.reason


def test_fallback_from_the_middle_of_a_trace(cm: CompiledModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """Arguments left out: the candidate set outgrows the limit at line 3; replay hands over its
    explicit candidates (`start`) and the events from that line on."""
    header = TraceHeader(init={"stock": [3, 3, 3]})
    good = [_take(None), _take(None), Event("request", {}), _take(0, 3), _take(0, 4), _take(0, 5)]
    rep, req = _symbolic(cm, good, monkeypatch, header, limit=4)
    assert req.from_line == 3 and req.start is not None and len(req.start) == 3
    assert rep.conforms is True
    _check_witness(cm, fill_trace(req, cm=cm), good, req.from_line, req.start)
    # stock[0] is 3 at most and one refill is pending: a fifth take of 0 is one too many
    monkeypatch.undo()
    bad = good + [_take(0, 6), _take(0, 7)]
    rep, _ = _symbolic(cm, bad, monkeypatch, header, limit=4)
    assert rep.divergence is not None and rep.divergence.line == 9


def test_any_action_events(cm: CompiledModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """`"*"` (some step, internal ones included) is matched by any instance."""
    events = GOOD[:3] + [Event("*", {})] + GOOD[4:]
    rep, req = _symbolic(cm, events, monkeypatch)
    assert rep.conforms is True
    _check_witness(cm, fill_trace(req, cm=cm), events)


def test_restarts_keep_the_witness(cm: CompiledModel) -> None:
    """A fully observed event pins the state (a new solver segment); so does a state that the
    observations determine (enumerated at a batch boundary, here with internal steps logged)."""
    full = {"stock": [0, 3, 3], "taken": 3, "pending": 0}
    events = GOOD[:2] + [Event("take", {"i": 0}, full)] + GOOD[3:]
    events = [e._replace(line=i + 2) for i, e in enumerate(events)]
    req = SymbolicRequest(cm.model, TraceHeader(), memory_source(TraceHeader(), events), None, 1, 32)
    res = fill_trace(req, cm=cm)
    assert res.segments == 2
    _check_witness(cm, res, events)
    # internal steps logged (K = 0): the three stock slots are observed one by one, after which
    # the enumeration at a batch boundary finds a single state
    logged = [Event("take", {"i": i}, {f"stock.{i}": 2}) for i in range(3)]
    for c in range(10):
        logged += [Event("request", {}), Event("refill", {"i": c % 3}), Event("take", {"i": c % 3})]
    logged = [e._replace(line=i + 2) for i, e in enumerate(logged)]
    header = TraceHeader(extra={"logs_internal": True})
    req = SymbolicRequest(cm.model, header, memory_source(header, logged), None, 1, 0)
    res = fill_trace(req, cm=cm)
    assert res.conforms is True and res.segments >= 2 and res.events == len(logged)
    _check_witness(cm, res, logged)
    assert _replay(cm, logged, header).conforms is True


def test_a_witness_that_does_not_replay_is_not_claimed(cm: CompiledModel) -> None:
    """NOTE(honest-verdicts): Z3 answers for STOCK, gpmodel executes WRONG: undecided, never conforms."""
    req = SymbolicRequest(cm.model, TraceHeader(), memory_source(TraceHeader(), GOOD), None, 1, 32)
    res = fill_trace(req, cm=compile_model(load_source(WRONG, "wrong.gpspec")))
    assert res.conforms is None and "internal error" in res.reason and "gpmodel" in res.reason
    assert fill_trace(req, cm=cm).conforms is True


def test_solver_timeout_is_undecided(cm: CompiledModel) -> None:
    req = SymbolicRequest(cm.model, TraceHeader(), memory_source(TraceHeader(), GOOD), None, 1, 32)
    res = fill_trace(req, cm=cm, timeout=0.0)
    assert res.conforms is None and "timeout" in res.reason and "line" in res.reason


def test_cli_replay_past_the_candidate_limit(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    spec = tmp_path / "stock.gpspec"
    spec.write_text(STOCK)
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    write_trace(str(good), TraceHeader("stock"), GOOD)
    write_trace(str(bad), TraceHeader("stock"), GOOD[:3] + [_take(0, 4)] + GOOD[4:])
    assert main(["replay", str(good), "--model", str(spec)]) == 0  # explicitly: 64 candidates at most
    capsys.readouterr()
    assert main(["replay", str(good), "--model", str(spec), "--max-candidates", "8"]) == 3
    out = capsys.readouterr().out
    assert "conforms" in out and "Z3 fallback" in out
    assert main(["replay", str(good), "--model", str(spec), "--max-candidates", "8", "--json"]) == 3
    js = orjson.loads(capsys.readouterr().out)
    assert js["verdict"] == "conforms" and "Z3 fallback" in js["reason"]
    assert main(["replay", str(bad), "--model", str(spec), "--max-candidates", "8"]) == 1
    out = capsys.readouterr().out
    assert f"diverges at {bad}:5: 'take' is not enabled" in out

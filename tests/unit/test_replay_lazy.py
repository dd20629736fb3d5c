"""The lazy hidden-step search (NOTE(lazy-replay), checker/engines/replay/hidden.py) gives the exhaustive search's
verdict, divergence line and property verdicts: on every corpus trace where the exhaustive search
(any number of hidden steps) finishes, and on a fast slice of randomly thinned simulated traces
(the long run is tests/quality/lazy_agreement.py). And it is what makes realistic traces replay."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "quality"))

from lazy_agreement import run, summary  # noqa: E402

from gpcheck.gpmodel import compile_model  # noqa: E402
from gpcheck.spec import load_source, load_spec  # noqa: E402
from gpcheck.traces.format import Event, TraceHeader, read_trace  # noqa: E402
from gpcheck.checker.engines.replay.search import (
    UNBOUNDED,
    ReplayOptions,
    Replayer,
    file_source,
    memory_source,
)  # noqa: E402
from gpcheck.traces.sources import open_source, peek  # noqa: E402

CORPUS = ROOT / "traces" / "corpus" / "sim"
REAL = ROOT / "traces" / "corpus" / "real"
MANIFEST = orjson.loads((CORPUS / "MANIFEST.json").read_bytes())["traces"]
LIMIT = 20_000


def _both(model: Any, source: Any, name: str) -> tuple[Any, Any]:
    cm = compile_model(model)
    exh = Replayer(cm, ReplayOptions(engine="exhaustive", max_hidden=UNBOUNDED, max_candidates=LIMIT)).replay(source, name)
    replayer = Replayer(cm, ReplayOptions(engine="lazy", max_candidates=LIMIT))
    replayer.hidden.dead_end_after = 0  # NOTE(lazy-dead-ends) from the first state: the strictest check
    return exh, replayer.replay(source, name)


def _slow(file: str) -> bool:
    """The default run's sample of the corpus: each model's trace without observations (the
    widest hidden search), with its state observed (`-bad-state`: a divergence line), hidden
    (`.gz`) and its other named traces; slow (about 15 s of CPU together): nvidia_tsg-none.jsonl
    (932 candidates, 9 s, most of it the dead-end proofs from the first state; cwsr-none,
    reef_rewind-none, ... stay), and each model's `-full` trace (every state observed: the least
    hidden search, its `-none` twin stays) and `-bad-require` (a divergence like its `-bad-state`
    twin's, which stays)."""
    return file == "nvidia_tsg-none.jsonl" or file.endswith(("-full.jsonl", "-bad-require.jsonl"))


@pytest.mark.parametrize("entry", [pytest.param(e, id=e["file"], marks=[pytest.mark.slow] if _slow(e["file"]) else [])
                                   for e in MANIFEST])
def test_corpus_trace_agrees(entry: dict[str, Any]) -> None:
    spec = (ROOT / entry["spec"]).resolve()
    if not spec.exists():
        pytest.skip(f"{entry['spec']} is not available")
    model = load_spec(spec, entry["constants"])
    info = peek(str(CORPUS / entry["file"]), entry["format"])
    exh, lazy = _both(model, open_source(info, model), entry["file"])
    if exh.conforms is None:
        pytest.skip("the exhaustive search does not finish on this trace")
    assert summary(lazy) == summary(exh)


REAL_TRACES = ["priority_high_vs_low", "priority_equal", "kineto_priority", "cupti_probe_records"]
# In the default run a prefix of each recording (the first 40 events of the priority ones: 92
# candidates for the exhaustive search, 3 for the lazy one; 80 of kineto_priority: 48), about 0.5 s
# of CPU each; the whole recordings (2 to 3 s each) are slow
REAL_PREFIX = {"priority_high_vs_low": 40, "priority_equal": 40, "kineto_priority": 80, "cupti_probe_records": None}


@pytest.mark.parametrize("name, prefix", [(n, REAL_PREFIX[n]) for n in REAL_TRACES]
                         + [pytest.param(n, None, marks=pytest.mark.slow, id=f"{n}-whole")
                            for n in REAL_TRACES if REAL_PREFIX[n] is not None])
def test_real_trace_agrees(name: str, prefix: int | None) -> None:
    path = str(REAL / f"{name}.jsonl.gz")
    header, events = read_trace(path)
    model = load_spec("nvidia_streams", header.constants)
    source = file_source(path) if prefix is None else memory_source(header, events[:prefix], name)
    exh, lazy = _both(model, source, name)
    assert exh.conforms is True and summary(lazy) == summary(exh)
    assert lazy.peak_candidates <= exh.peak_candidates


# the first 80 events in the default run (52 and 84 candidates, under 0.5 s of CPU each); the first
# 150 (4 to 7 s each) are slow
@pytest.mark.parametrize("name, length", [(n, 80) for n in ("kineto_train_infer_priority", "kineto_train_infer_equal")]
                         + [pytest.param(n, 150, marks=pytest.mark.slow)
                            for n in ("kineto_train_infer_priority", "kineto_train_infer_equal")])
def test_realistic_trace_prefix_agrees(name: str, length: int) -> None:
    """The realistic-size recordings are past the exhaustive search (hours at 19,491 events); their
    first 80 or 150 events are not (about 50 to 80 candidates), whole and with one `end` left out:
    same verdict, divergence line and property verdicts."""
    header, events = read_trace(str(REAL / f"{name}.jsonl.gz"))
    model = load_spec("nvidia_streams", header.constants)
    prefix = events[:length]
    exh, lazy = _both(model, memory_source(header, prefix, name), name)
    assert exh.conforms is True and summary(lazy) == summary(exh)
    i = [k for k, e in enumerate(prefix) if e.action == "end"][10]
    cut = prefix[:i] + prefix[i + 1:]
    exh, lazy = _both(model, memory_source(header, cut, name), name)
    assert exh.conforms is False and summary(lazy) == summary(exh)


def test_thinned_simulated_traces_agree() -> None:
    # 25 cases: every bundled model and example spec once (cases go round the 25; about 1 s of CPU
    # past compiling them: case 27, cwsr's second, alone takes 1.5 s); the 120 of the slow twin below
    tally, problems = run(25, seed=11)
    assert not problems, "\n".join(problems[:5])
    assert tally.compared >= 22  # the exhaustive side finished on nearly all of them


@pytest.mark.slow  # 10 s of CPU; test_thinned_simulated_traces_agree runs the first 25 of these cases
def test_thinned_simulated_traces_agree_120_cases() -> None:
    tally, problems = run(120, seed=11)
    assert not problems, "\n".join(problems[:5])
    assert tally.compared >= 100  # the exhaustive side finished on nearly all of them


def test_realistic_trace_replays_and_a_lost_completion_diverges_at_its_line(tmp_path) -> None:
    """The 6,497-kernel Kineto trace (thousands of unobserved queue splits for the exhaustive
    search) conforms with a handful of candidates; without one completion it diverges at the
    next start of that stream, as the observation check says."""
    path = str(REAL / "kineto_train_infer_priority.jsonl.gz")
    header, events = read_trace(path)
    cm = compile_model(load_spec("nvidia_streams", header.constants))
    rep = Replayer(cm).replay(file_source(path), path)
    assert rep.conforms is True and rep.events == len(events) and rep.peak_candidates < 50
    assert rep.max_hidden is None and rep.exit_code == 0
    i = [k for k, e in enumerate(events) if e.action == "end"][100]  # past the exhaustive tests' 80-event prefixes
    stream = events[i].args["stream"]
    nxt = next(e for e in events[i + 1:] if e.action == "start" and e.args["stream"] == stream)
    # the events up to a few past that start (the replay stops at the divergence)
    cut = [e for k, e in enumerate(events) if k != i and e.line <= nxt.line + 10]
    rep = Replayer(cm).replay(memory_source(header, cut), "cut")
    assert rep.conforms is False and rep.divergence is not None
    assert rep.divergence.line == nxt.line  # events keep their file lines


def test_bounded_hidden_steps_keep_the_exhaustive_search() -> None:
    """`--max-hidden K` is a bound the lazy search cannot honour: it keeps the exhaustive one."""
    cm = compile_model(load_source("""model m "two bumps needed"
var n: 0..3 = 0
internal action bump { require n < 2
  n = n + 1 }
action go { require n == 2
  n = 3 }
""", "m.gpspec"))
    src = memory_source(TraceHeader(), [Event("go", {})], "t")
    assert Replayer(cm, ReplayOptions(max_hidden=1)).replay(src, "t").conforms is False
    rep = Replayer(cm).replay(src, "t")
    assert rep.conforms is True and rep.max_hidden is None

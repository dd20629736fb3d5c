"""Regenerate traces/corpus/sim/: simulated traces of the example specs and of the bundled
models, conforming ones and deliberately broken ones, with MANIFEST.json giving each trace's
expected replay verdict. Run from the repository root:

    python tests/tools/make_trace_corpus.py

Expectations are set by construction, not by running replay: a simulated trace conforms; a
trace with event i replaced by a disabled action diverges at that line on the `require` that
gpmodel's step reports; property verdicts of fully observed traces come from evaluating the
model's invariants and transition properties directly on the simulated behaviour. Bundled
models are snapshotted into traces/corpus/sim/models/ so that later edits of the library do
not silently change what the corpus means (the live models are covered by the round-trip
tests)."""

from __future__ import annotations

import hashlib
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from gpcheck.checker.api.model_api import verify  # noqa: E402
from gpcheck.gpmodel import CompiledModel, compile_model  # noqa: E402
from gpcheck.gpmodel.simulate import simulate  # noqa: E402
from gpcheck.spec import bundled_models, ir, load_spec  # noqa: E402
from gpcheck.traces.emit import events_of, header_for, write_behaviour  # noqa: E402
from gpcheck.traces.format import Event, write_trace  # noqa: E402
from gpcheck.traces.itf import write_itf  # noqa: E402

OUT = ROOT / "traces" / "corpus" / "sim"
EXAMPLES = "../shared/spec-examples"
STEPS = 40

ANY_INIT = '''model any_init "An unobserved initial value: replay keeps one candidate per value"

var x: 0..1 = any                   # never changed, observed only by some traces
var n: 0..3 = 0

action tick {
    require n < 3
    n = n + 1
}

invariant x_zero: x == 0
'''

WIDE = '''model wide "Six unobserved initial values: a million initial candidates, past replay's limit"

var a: [0..5] -> 0..9 = any
var n: 0..3 = 0

action tick {
    require n < 3
    n = n + 1
}

invariant small: all i in 0..5: a[i] <= 9
'''


def ground_truth(cm: CompiledModel, states: list[tuple[int, ...]]) -> dict[str, str]:
    """Each invariant / transition property on one behaviour: violated or holds_to_bound."""
    out: dict[str, str] = {}
    for inv, fn in cm.invariants:
        out[inv.name] = "violated" if any(not fn(s) for s in states) else "holds_to_bound"
    for tp, fn2 in cm.transitions:
        out[tp.name] = "violated" if any(not fn2(a, b) for a, b in zip(states, states[1:])) else "holds_to_bound"
    return out


def pick_seed(cm: CompiledModel) -> int:
    """The seed in 0..49 giving the longest behaviour (most distinct actions on ties)."""
    best, key = 0, (-1, -1)
    for seed in range(50):
        beh = list(simulate(cm, STEPS, random.Random(seed)))
        k = (len(beh), len({cm.instances[i].action.name for i, _ in beh[1:]}))
        if k > key:
            best, key = seed, k
    return best


def entry(file: str, spec: str, consts: dict[str, int], expect: dict[str, Any], note: str, **extra: Any) -> dict[str, Any]:
    e: dict[str, Any] = {"file": file, "spec": spec, "constants": consts, "format": "itf" if file.endswith(".itf.json") else "gpcheck"}
    e.update(extra)
    e["expect"] = expect
    e["note"] = note
    return e


def broken_require(cm: CompiledModel, beh: list[tuple[int | None, tuple[int, ...]]]) -> tuple[int, str, dict[str, Any], int, int] | None:
    """(event index, action, args, failing require ordinal, its source line): the first event in
    the second half whose pre-state disables every instance of some action."""
    for i in range(max(1, len(beh) // 2), len(beh)):
        pre = beh[i - 1][1]
        for a in cm.model.actions:
            ids = [j for j, inst in enumerate(cm.instances) if inst.action.name == a.name]
            if not ids or a.name == cm.instances[beh[i][0]].action.name:  # type: ignore[index]
                continue
            res = [cm.step(j, pre) for j in ids]
            if all(type(r) is int for r in res):
                inst = cm.instances[ids[0]]
                ordinal = res[0]
                line = cm.require_of(a, ordinal).span.line  # type: ignore[arg-type]
                return i, a.name, inst.arg_dict(), ordinal, line  # type: ignore[return-value]
    return None


def broken_state(cm: CompiledModel, beh: list[tuple[int | None, tuple[int, ...]]]) -> tuple[int, dict[str, Any], str, Any] | None:
    """(event index, altered observed state, path, new value): one slot of the state after the
    middle event set to another value of its type."""
    i = max(1, len(beh) // 2)
    s = list(beh[i][1])
    names = list(cm.layout.flatten(beh[i][1]))
    types = [st for v in cm.model.vars for _, st in ir.leaf_paths(v.type)]
    for k, st in enumerate(types):
        if isinstance(st, ir.BoolType):
            s[k] = 1 - s[k]
        elif isinstance(st, ir.EnumType) and len(st.members) > 1:
            s[k] = (s[k] + 1) % len(st.members)
        elif isinstance(st, ir.IntType) and st.lo is not None and st.hi is not None and st.hi > st.lo:
            s[k] = s[k] + 1 if s[k] < st.hi else s[k] - 1
        else:
            continue
        t = tuple(s)
        return i, cm.layout.decode(t), names[k], ir.format_scalar(st, s[k])
    return None


def corpus_for(name: str, spec_ref: str, consts: dict[str, int], out: list[dict[str, Any]]) -> None:
    model = load_spec(ROOT / spec_ref if not spec_ref.startswith("../") else (ROOT / spec_ref).resolve(), consts)
    cm = compile_model(model)
    seed = pick_seed(cm)
    beh = list(simulate(cm, STEPS, random.Random(seed)))
    truth = ground_truth(cm, [s for _, s in beh])
    code = 1 if "violated" in truth.values() else 0
    has_internal = any(a.internal for a in model.actions)
    tag = name + "".join(f"-{k}{v}" for k, v in consts.items())

    f = f"{tag}-full.jsonl"
    write_behaviour(str(OUT / f), cm, beh, observe="full", internal=True, source="gpcheck simulate", seed=seed)
    out.append(entry(f, spec_ref, consts, {"verdict": "conforms", "exit": code, "properties": truth},
                     "every step logged with the whole state; property verdicts from the simulated behaviour"))
    f = f"{tag}-none.jsonl"
    write_behaviour(str(OUT / f), cm, beh, observe="none", internal=True, source="gpcheck simulate", seed=seed)
    out.append(entry(f, spec_ref, consts, {"verdict": "conforms"}, "every step logged, no state observed"))
    if has_internal:
        f = f"{tag}-hidden.jsonl.gz"
        write_behaviour(str(OUT / f), cm, beh, observe="changed", internal=False, source="gpcheck simulate", seed=seed)
        out.append(entry(f, spec_ref, consts, {"verdict": "conforms"},
                         "internal actions left out (replay inserts them), only changed slots observed"))

    header = header_for(cm, beh[0][1], observe="full", internal=True, source="gpcheck simulate", seed=seed)
    events = list(events_of(cm, beh, observe="full", internal=True))
    br = broken_require(cm, beh)
    if br is not None:
        i, action, args, ordinal, rline = br
        evs = list(events)
        evs[i - 1] = Event(action, args, None)
        f = f"{tag}-bad-require.jsonl"
        write_trace(str(OUT / f), header, evs)
        out.append(entry(f, spec_ref, consts, {"verdict": "diverges", "exit": 1, "line": i + 1, "outcome": "require",
                                               "require_ordinal": ordinal, "require_line": rline},
                         f"event {i} replaced by '{action}', disabled there by its require on line {rline}"))
    bs = broken_state(cm, beh)
    if bs is not None:
        i, state, path, value = bs
        evs = list(events)
        evs[i - 1] = evs[i - 1]._replace(state=state)
        f = f"{tag}-bad-state.jsonl"
        write_trace(str(OUT / f), header, evs)
        out.append(entry(f, spec_ref, consts, {"verdict": "diverges", "exit": 1, "line": i + 1, "outcome": "state", "path": path},
                         f"the state observed after event {i} has {path} = {value}, which no step produces"))


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "models").mkdir(parents=True)
    out: list[dict[str, Any]] = []
    for n in ("ring", "rewind", "peterson", "starve"):
        corpus_for(n, f"{EXAMPLES}/{n}.gpspec", {}, out)
    corpus_for("starve", f"{EXAMPLES}/starve.gpspec", {"AGING": 1}, out)
    for name, path in bundled_models().items():
        shutil.copy(path, OUT / "models" / path.name)
        corpus_for(name, f"traces/corpus/sim/models/{path.name}", {}, out)

    # The rewind re-execution counterexample, as logged by a recorder, three ways.
    spec = f"{EXAMPLES}/rewind.gpspec"
    model = load_spec((ROOT / spec).resolve())
    cm = compile_model(model)
    cx = verify(model).result("no_reexecution").counterexample
    assert cx is not None
    beh = [(None, cm.layout.encode(cx.steps[0].state))] + [
        (cm.find_instance(st.action, st.args), cm.layout.encode(st.state)) for st in cx.steps[1:]  # type: ignore[arg-type]
    ]
    n = len(cx.steps) - 1
    k = write_behaviour(str(OUT / "rewind-reexecution.jsonl"), cm, beh, observe="full", internal=True,
                        source="verify counterexample")
    out.append(entry("rewind-reexecution.jsonl", spec, {},
                     {"verdict": "conforms", "exit": 1, "first_violation_line": k + 1,
                      "properties": {"no_reexecution": "violated", "in_order": "holds_to_bound"}},
                     "the shortest no_reexecution counterexample, every step logged"))
    # Hidden internal steps: the violating step (an internal wave) is the last one, so a trace of
    # the logged actions alone ends before it; one more logged launch puts it in the trace.
    launch = cm.find_instance("launch", {})
    assert launch is not None
    after = cm.step(launch, beh[-1][1])
    assert type(after) is tuple
    k = write_behaviour(str(OUT / "rewind-reexecution-hidden.jsonl"), cm, beh + [(launch, after)], observe="full",
                        internal=False, source="verify counterexample")
    out.append(entry("rewind-reexecution-hidden.jsonl", spec, {},
                     {"verdict": "conforms", "exit": 1, "first_violation_line": k + 1,
                      "properties": {"no_reexecution": "violated", "in_order": "holds_to_bound"}},
                     "the counterexample plus one launch, internal steps hidden: replay must insert the "
                     "re-executing wave before the last launch (waves_run is observed there)"))
    k = write_behaviour(str(OUT / "rewind-reexecution-trailing.jsonl"), cm, beh, observe="full", internal=False,
                        source="verify counterexample")
    out.append(entry("rewind-reexecution-trailing.jsonl", spec, {},
                     {"verdict": "conforms", "exit": 0,
                      "properties": {"no_reexecution": "holds_to_bound", "in_order": "holds_to_bound"}},
                     "the counterexample with internal steps hidden ends at the last launch: the "
                     "re-executing wave comes after every logged event, so replay does not invent it"))
    write_itf(cx, model, str(OUT / "rewind-reexecution.itf.json"))
    out.append(entry("rewind-reexecution.itf.json", spec, {}, {"verdict": "conforms", "exit": 1, "first_violation_line": n,
                                                               "properties": {"no_reexecution": "violated", "in_order": "holds_to_bound"}},
                     "the counterexample as ITF (gpcheck verify --itf); first_violation_line is a state index"))

    # Unobserved values: the property depends on them; too many candidates.
    (OUT / "models" / "any_init.gpspec").write_text(ANY_INIT)
    (OUT / "models" / "wide.gpspec").write_text(WIDE)
    any_spec = "traces/corpus/sim/models/any_init.gpspec"
    ticks = [Event("tick", {}, {"n": i}) for i in (1, 2, 3)]
    from gpcheck.traces.format import TraceHeader

    for f, init, exp, note in (
        ("any_init-unobserved.jsonl", None, {"verdict": "conforms", "exit": 3, "properties": {"x_zero": "unknown"}},
         "x is never observed: x_zero is violated on one of the two reconstructions"),
        ("any_init-x0.jsonl", {"x": 0, "n": 0}, {"verdict": "conforms", "exit": 0, "properties": {"x_zero": "holds_to_bound"}},
         "x observed 0 in the initial state"),
        ("any_init-x1.jsonl", {"x": 1}, {"verdict": "conforms", "exit": 1, "properties": {"x_zero": "violated"}, "first_violation_line": 1},
         "x observed 1 in the initial state: violated from the header line on"),
        ("any_init-bad-init.jsonl", {"n": 2}, {"verdict": "diverges", "exit": 1, "line": 1},
         "the initial state observes n = 2, the model declares 0"),
    ):
        write_trace(str(OUT / f), TraceHeader("any_init", {}, init), ticks)
        out.append(entry(f, any_spec, {}, exp, note))
    write_trace(str(OUT / "wide-limit.jsonl"), TraceHeader("wide", {}, None), ticks)
    out.append(entry("wide-limit.jsonl", "traces/corpus/sim/models/wide.gpspec", {},
                     {"verdict": "conforms", "exit": 3},
                     "10^6 initial candidates: past --max-candidates the Z3 fallback matches the trace; "
                     "properties are not evaluated then (unknown)"))
    write_trace(str(OUT / "wide-limit-bad.jsonl"), TraceHeader("wide", {}, None),
                [Event("tick", {}, {"n": i}) for i in (1, 2, 2)])
    out.append(entry("wide-limit-bad.jsonl", "traces/corpus/sim/models/wide.gpspec", {},
                     {"verdict": "diverges", "exit": 1, "line": 4},
                     "10^6 initial candidates: the Z3 fallback finds that the third tick cannot observe n = 2"))

    manifest = {
        "about": "Simulated and hand-made traces with their expected `gpcheck replay` verdicts; "
                 "regenerate with python tests/tools/make_trace_corpus.py. `spec` is relative to "
                 "the repository root; `expect.line` is the diverging line (ITF: state index); "
                 "`exit` is the replay exit code (absent: not checked).",
        "traces": out,
    }
    (OUT / "MANIFEST.json").write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n")
    revision = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True).stdout.strip() or "unknown"
    (OUT / "models" / "README.md").write_text(models_readme(OUT / "models", revision))
    print(f"{len(out)} traces in {OUT}")


def models_readme(folder: Path, revision: str) -> str:
    """The README of the frozen model fixtures: what they are, the revision they were copied
    from, and each file's SHA-256 (tests/unit/test_corpus_fixtures.py checks the files against it)."""
    rows = []
    for path in sorted(folder.glob("*.gpspec")):
        origin = "spec/models/" + path.name if path.name in {p.name for p in bundled_models().values()} \
            else "written by tests/tools/make_trace_corpus.py"
        rows.append(f"| `{path.name}` | {origin} | `{hashlib.sha256(path.read_bytes()).hexdigest()}` |")
    return (README_HEAD.format(revision=revision) + "\n| fixture | copied from | SHA-256 |\n|---|---|---|\n"
            + "\n".join(rows) + "\n")


README_HEAD = """# Frozen model fixtures of the simulated trace corpus

Fixtures, not the model library: the models the traces of `traces/corpus/sim/` were simulated
from, copied when the corpus was generated (revision `{revision}`), so that later edits of the
bundled library (`spec/models/`) do not change what the recorded traces mean. The bundled models
have changed since; these copies must not: `tests/unit/test_corpus_fixtures.py` checks every file
against the hash below. The live models are covered by the round-trip tests
(`tests/unit/test_trace_cli.py`, `tests/unit/test_replay.py`).

To move the corpus to the current models, regenerate it whole (`python
tests/tools/make_trace_corpus.py` rewrites the traces, MANIFEST.json, these copies and this file).
"""


if __name__ == "__main__":
    main()

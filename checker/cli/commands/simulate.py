"""`gpcheck simulate SPEC [--steps N] [--seed S] [--out FILE]`: seeded random behaviours as
traces, each checked against the model's invariants and transition properties on the way (as
TLC's and Quint's simulators do): a behaviour stops at its first violation, which is reported
with its seed, and the command exits 1.

The same arguments always give the same files: the only randomness is `random.Random`
seeded with `--seed` (run i of `--runs R` uses seed S+i, recorded in its header).
Defaults: seed 0, 100 steps, the trace in `MODEL.sim.jsonl` in the current folder."""

from __future__ import annotations

import argparse
import os
import random
import sys
from typing import Any, Iterator

import orjson

from gpcheck.checker.core import budget
from gpcheck.checker.cli.commands.common import add_const_flag, consts_of, write_out
from gpcheck.checker.cli.commands.flags import add_timeout_flag, count, non_negative
from gpcheck.checker.cli.outputs import OutputPlan
from gpcheck.gpmodel import CompiledModel, ModelError, compile_model
from gpcheck.gpmodel.monitor import Monitor, Violation
from gpcheck.gpmodel.simulate import simulate
from gpcheck.spec import ir, load_spec, resolve_spec_path
from gpcheck.spec.errors import UsageError
from gpcheck.traces.emit import OBSERVE_LEVELS, write_behaviour

MAX_RUNS = 100_000  # behaviours (files) one command may write
DEFAULT_STEPS = 100


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("simulate", parents=[common],
                       help="random behaviours of a model: check its invariants and transition properties, write traces",
                       description="Generate seeded random behaviours of a model, check every invariant and "
                                   "transition property along each (stopping a behaviour at its first violation, "
                                   "exit 1), and write each in the gpcheck trace format (`gpcheck docs trace-format`). "
                                   "The same seed gives the same file.")
    p.add_argument("spec", metavar="SPEC", help="a .gpspec file or a bundled model name")
    add_const_flag(p)
    p.add_argument("--steps", type=non_negative, default=DEFAULT_STEPS, metavar="N",
                   help=f"model steps per behaviour (internal ones included; default {DEFAULT_STEPS}); a behaviour "
                        "ends early where no action is enabled or at a property's violation")
    p.add_argument("--seed", type=non_negative, default=0, metavar="S",
                   help="seed of the random choices (default 0; run i of --runs uses S+i)")
    p.add_argument("--property", action="append", default=None, metavar="NAME",
                   help="check only this invariant or transition property (repeatable; default: all of them)")
    p.add_argument("--no-check", action="store_true", help="check no property: only write the behaviours")
    p.add_argument("--runs", type=count, default=1, metavar="R",
                   help="write R behaviours; FILE gets a -0, -1, ... suffix (or put {run} in FILE)")
    p.add_argument("--no-internal", action="store_true",
                   help="leave internal actions out of the trace (replay then inserts them)")
    p.add_argument("--observe", choices=OBSERVE_LEVELS, default="full",
                   help="state written with each event: the whole state (default), the changed slots, or none")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="trace file to write (.jsonl, or .jsonl.gz; default MODEL.sim.jsonl in the current folder)")
    add_timeout_flag(p)
    p.set_defaults(run=run)


def run_path(out: str, run: int, runs: int) -> str:
    """The file of run `run`: `{run}` in FILE replaced, or `-run` before the extension."""
    if "{run}" in out:
        return out.replace("{run}", str(run))
    if runs == 1:
        return out
    base = os.path.basename(out)
    stem, dot, ext = base.partition(".")
    name = f"{stem}-{run}{dot}{ext}"
    return os.path.join(os.path.dirname(out), name)


def run(args: argparse.Namespace) -> int:
    if args.runs > MAX_RUNS:
        raise UsageError(f"--runs {args.runs}: at most {MAX_RUNS} behaviours per command")
    budget.limit_time(args.timeout)
    plan = OutputPlan().read("spec", resolve_spec_path(args.spec))
    model = load_spec(args.spec, consts_of(args))
    out = args.out if args.out is not None else f"{model.name}.sim.jsonl"
    plan.claim_all("--out", [run_path(out, r, args.runs) for r in range(args.runs)])
    cm = compile_model(model)
    monitor = None if args.no_check else Monitor(cm, _wanted(model, args.property))
    written = []
    code = 0
    for r in range(args.runs):
        seed = args.seed + r
        path = run_path(out, r, args.runs)
        if os.path.lexists(path):
            sys.stderr.write(f"gpcheck: replacing {path} (written before)\n")
        steps: list[int] = [0]
        error: list[str] = []
        violated: list[Violation] = []

        clock: list[int] = [0]  # NOTE(timed): the time stamp of the last step of a timed spec

        def counted():  # type: ignore[no-untyped-def]
            it = _behaviour(cm, args.steps, random.Random(seed), clock)
            prev = None
            try:
                for item in it:
                    budget.check()  # SIGINT/SIGTERM/--timeout: the file being written is dropped
                    if item[0] is not None:
                        steps[0] += 1
                    yield item
                    bad = monitor.check(steps[0], prev, item[1]) if monitor is not None else None
                    if bad is not None:  # the trace ends with the violating state
                        violated.append(bad)
                        return
                    prev = item[1]
            except ModelError as e:
                error.append(str(e))

        timed = {"timed": True} if model.has_time else {}
        n = write_behaviour(path, cm, counted(), observe=args.observe, internal=not args.no_internal,
                            source="gpcheck simulate", seed=seed, run=r, steps=args.steps, **timed)
        ended = "error" if error else "violation" if violated else (
            "steps" if steps[0] == args.steps else "no enabled action")
        item: dict[str, Any] = {"file": path, "seed": seed, "events": n, "steps": steps[0], "ended": ended}
        if model.has_time:
            item["time"] = clock[0]
        if error:
            item["error"] = error[0]
            code = 1
        if violated:
            v = violated[0]
            item["violation"] = {"property": v.property, "kind": v.kind, "step": v.step, "seed": seed,
                                 "error": v.error}
            code = 1
        written.append(item)
    checked = monitor.names if monitor is not None else []
    if args.json:
        write_out(orjson.dumps({"model": model.name, "constants": model.const_values, "checked": checked,
                                "runs": written}))
    else:
        lines = []
        for w in written:
            end = {"steps": "", "no enabled action": ", ended where no action is enabled",
                   "violation": ", stopped at the violation"}.get(w["ended"], "")
            at = f", time {w['time']}" if "time" in w else ""
            lines.append(f"{w['file']}: {w['events']} events, {w['steps']} steps{at} (seed {w['seed']}{end})")
            if "error" in w:
                lines.append(f"  modelling error after step {w['steps']}: {w['error']}")
            if "violation" in w:
                v = w["violation"]
                again = "" if model.has_time else f": gpcheck replay {w['file']} --model {args.spec}"  # NOTE(timed)
                lines.append(f"  {Violation(v['property'], v['kind'], v['step'], v['error']).text()} "
                             f"(seed {v['seed']}); the trace ends there{again}")
        bad = sum("violation" in w for w in written)
        if checked:
            lines.append(f"checked {len(checked)} properties ({', '.join(checked)}) on {len(written)} "
                         f"behaviour{'s' if len(written) != 1 else ''}: "
                         + (f"{bad} violated" if bad else "no violation"))
        write_out("\n".join(lines) + "\n")
    return code


def _behaviour(cm: CompiledModel, steps: int, rng: random.Random, clock: list[int]) -> Iterator[tuple[Any, ...]]:
    """The behaviour to write: gpmodel's untimed simulation, or for a timed spec the integer-time
    one (checker/engines/timed/simulate.py) with each event's time stamp in its `meta`."""
    if not cm.model.has_time:
        yield from simulate(cm, steps, rng)
        return
    from gpcheck.checker.engines.timed.simulate import simulate_timed

    for st in simulate_timed(cm, steps, rng):
        clock[0] = st.time
        meta = {"time": st.time} if st.since is None else {"time": st.time, "since": st.since}
        yield st.iid, st.state, meta


def _wanted(model: ir.Model, names: list[str] | None) -> list[str] | None:
    """The --property names, each an invariant or transition property of the model."""
    if names is None:
        return None
    checkable = [p.name for p in model.invariants] + [p.name for p in model.transitions]
    unknown = [n for n in names if n not in checkable]
    if unknown:
        raise UsageError(f"--property {', '.join(unknown)}: simulate checks invariants and transition properties; "
                         f"this model has {', '.join(checkable) or 'none'}")
    return names

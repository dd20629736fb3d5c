"""`gpcheck simulate SPEC --steps N --seed S --out FILE`: seeded random behaviours as traces.

The same arguments always give the same files: the only randomness is `random.Random`
seeded with `--seed` (run i of `--runs R` uses seed S+i, recorded in its header)."""

from __future__ import annotations

import argparse
import os
import random

import orjson

from checker import budget
from checker.commands.common import add_const_flag, consts_of, write_out
from checker.commands.flags import add_timeout_flag, count, non_negative
from checker.outputs import OutputPlan
from gpmodel import ModelError, compile_model
from gpmodel.simulate import simulate
from spec import load_spec, resolve_spec_path
from spec.errors import UsageError
from traces.emit import OBSERVE_LEVELS, write_behaviour

MAX_RUNS = 100_000  # behaviours (files) one command may write


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("simulate", parents=[common], help="write random behaviours of a model as traces",
                       description="Write seeded random behaviours of a model in the gpcheck trace format "
                                   "(docs/trace-format.md). The same seed gives the same file.")
    p.add_argument("spec", metavar="SPEC", help="a .gpspec file or a bundled model name")
    add_const_flag(p)
    p.add_argument("--steps", type=non_negative, required=True, metavar="N",
                   help="model steps per behaviour (internal ones included); a behaviour ends early "
                        "where no action is enabled")
    p.add_argument("--seed", type=non_negative, required=True, metavar="S")
    p.add_argument("--runs", type=count, default=1, metavar="R",
                   help="write R behaviours; FILE gets a -0, -1, ... suffix (or put {run} in FILE)")
    p.add_argument("--no-internal", action="store_true",
                   help="leave internal actions out of the trace (replay then inserts them)")
    p.add_argument("--observe", choices=OBSERVE_LEVELS, default="full",
                   help="state written with each event: the whole state (default), the changed slots, or none")
    p.add_argument("--out", required=True, metavar="FILE", help="trace file to write (.jsonl, or .jsonl.gz)")
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
    plan.claim_all("--out", [run_path(args.out, r, args.runs) for r in range(args.runs)])
    model = load_spec(args.spec, consts_of(args))
    cm = compile_model(model)
    written = []
    code = 0
    for r in range(args.runs):
        seed = args.seed + r
        path = run_path(args.out, r, args.runs)
        steps: list[int] = [0]
        error: list[str] = []

        def counted():  # type: ignore[no-untyped-def]
            it = simulate(cm, args.steps, random.Random(seed))
            try:
                for item in it:
                    budget.check()  # SIGINT/SIGTERM/--timeout: the file being written is dropped
                    if item[0] is not None:
                        steps[0] += 1
                    yield item
            except ModelError as e:
                error.append(str(e))

        n = write_behaviour(path, cm, counted(), observe=args.observe, internal=not args.no_internal,
                            source="gpcheck simulate", seed=seed, run=r, steps=args.steps)
        item = {"file": path, "seed": seed, "events": n, "steps": steps[0],
                "ended": "error" if error else ("steps" if steps[0] == args.steps else "no enabled action")}
        if error:
            item["error"] = error[0]
            code = 1
        written.append(item)
    if args.json:
        write_out(orjson.dumps({"model": model.name, "constants": model.const_values, "runs": written}))
    else:
        lines = []
        for w in written:
            end = {"steps": "", "no enabled action": ", ended where no action is enabled"}.get(w["ended"], "")
            lines.append(f"{w['file']}: {w['events']} events, {w['steps']} steps (seed {w['seed']}{end})")
            if "error" in w:
                lines.append(f"  modelling error after step {w['steps']}: {w['error']}")
        write_out("\n".join(lines) + "\n")
    return code

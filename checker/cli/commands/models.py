"""`gpcheck models [MODEL]`: the bundled model library: each model's description, its parameters
with their defaults and documentation, and its properties with the verdicts it expects. With a
MODEL name, also the comment block that cites the code the model follows."""

from __future__ import annotations

import argparse
from typing import Any

from gpcheck.checker.report import textout
from gpcheck.checker.cli.commands.common import write_out
from gpcheck.checker.report.render import to_json_bytes
from gpcheck.spec import bundled_models, ir, load_spec
from gpcheck.spec.errors import UsageError
from gpcheck.spec.show import wrap_text
from gpcheck.checker.cli.commands.model_page import SOURCES


# The abbreviations the bundled models' descriptions and documentation use, explained where they
# appear (issue 17: `models` used them unexplained).
GLOSSARY: dict[str, str] = {
    "LC": "latency-critical (task, context or inference: the one to serve first)",
    "BE": "best-effort (the background work that gets preempted)",
    "RT": "real-time (REEF's name for a latency-critical task)",
    "HP": "high priority",
    "LP": "low priority",
    "TSG": "timeslice group (NVIDIA: channels scheduled together on the runlist)",
    "CWSR": "compute-wave save/restore (AMD: preemption that saves every wave's state)",
    "CILP": "compute-instruction-level preemption (NVIDIA)",
    "HWS": "hardware scheduler (AMD's microcode that maps queues)",
    "KFD": "the amdkfd kernel driver",
    "AQL": "architected queuing language (AMD's dispatch-packet queue format)",
    "HQD": "hardware queue descriptor (a queue slot in the GPU)",
    "MQD": "memory queue descriptor (a queue's state in memory)",
    "CU": "compute unit",
    "SM": "streaming multiprocessor (NVIDIA's compute unit)",
    "CTA": "cooperative thread array (a CUDA thread block)",
    "CP": "command processor",
    "WFI": "wait for idle (NVIDIA preemption at a kernel boundary)",
    "LDS": "local data share (AMD's on-chip shared memory)",
    "PC": "program counter",
    "REEF": "the REEF GPU scheduler (SJTU-IPADS), whose reset path GPreempt's HIP client uses",
}


def glossary_for(texts: list[str]) -> dict[str, str]:
    """The GLOSSARY entries whose abbreviation occurs (as a word) in one of `texts`."""
    import re

    words = set(re.findall(r"\b[A-Z]{2,5}\b", "\n".join(texts)))
    return {k: v for k, v in GLOSSARY.items() if k in words}


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("models", parents=[common], help="list the bundled models and their parameters",
                       description="List the bundled GPU preemption models with their parameters "
                                   "(constants, defaults, documentation) and expected verdicts.")
    p.add_argument("model", nargs="?", metavar="MODEL", help="show one model in full")
    p.add_argument("--markdown", action="store_true",
                   help="with MODEL: print its documentation page (Markdown: constants, properties with their "
                        "expected and checked verdicts, latency figures, the code it cites)")
    p.set_defaults(run=run)


def describe(model: ir.Model) -> dict[str, Any]:
    """A model's listing as data (the JSON form and the source of the text form)."""
    expected = {e.property: e.verdict for e in model.expectations}
    props = [(p.name, "invariant") for p in model.invariants] + [(p.name, "transition") for p in model.transitions]
    props += [(p.name, "liveness") for p in model.liveness]
    props += [(p.name, "latency") for p in model.latencies]
    return {
        "model": model.name,
        "description": model.description,
        "file": model.file,
        "doc": model.doc,
        "parameters": [{"name": c.name, "default": c.default, "doc": c.doc} for c in model.constants],
        "properties": [{"name": n, "kind": k, "expected": expected.get(n)} for n, k in props],
    }


def render(d: dict[str, Any], full: bool) -> str:
    lines = [f"{d['model']}: {d['description']}"]
    if full and d["doc"]:
        lines += ["", *("  # " + line if line else "  #" for line in d["doc"].splitlines()), ""]
    width = max((len(f"{p['name']}={p['default']}") for p in d["parameters"]), default=0)
    for p in d["parameters"]:
        lines.append(f"    {p['name'] + '=' + str(p['default']):<{width}}  {p['doc']}")
    props = ", ".join(f"{p['name']} ({p['expected'] or 'no expectation'})" for p in d["properties"])
    lines.append(f"    properties: {props}")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    names = list(bundled_models())
    if args.model is not None and args.model not in names:
        raise UsageError(f"{args.model}: not a bundled model (bundled: {', '.join(names)})")
    if args.markdown:
        if args.model is None:
            raise UsageError("--markdown needs a MODEL (one of: " + ", ".join(names) + ")")
        from gpcheck.checker.cli.commands.model_page import model_page

        write_out(model_page(load_spec(args.model)))
        return 0
    chosen = [args.model] if args.model else names
    data = [describe(load_spec(n)) for n in chosen]
    texts = [render(d, full=args.model is not None) for d in data]
    terms = glossary_for(texts)
    if args.json:
        if args.model:
            write_out(to_json_bytes({**data[0], "glossary": terms, "sources": SOURCES}))
        else:
            write_out(to_json_bytes(data))
    else:
        tail = ["", "abbreviations:"] + [f"  {k:<5} {v}" for k, v in terms.items()] if terms else []
        if args.model is not None:
            tail += ["", *wrap_text(SOURCES, textout.width(), "")]
        write_out("\n".join(texts) + ("\n".join(tail) + "\n" if tail else ""))
    return 0

"""gpcheck traces and ITF files for the issue-19 fuzzers: seeds (the simulated corpus; ITF
counterexamples of the example specs) and mutations by header, event field, line, nesting,
bytes and compression, run through replay and export."""

from __future__ import annotations

import gzip
import json
import random

from fuzz_mutate import EXAMPLES, MODELS, SIM, Case, dump_json, gzip_damage, huge_numbers, mutate_bytes, mutate_obj

def trace_seeds() -> dict[str, bytes]:
    """Corpus traces whose header names a bundled model (replayable without --model)."""
    out = {}
    for p in sorted(SIM.glob("*.jsonl*")):
        data = gzip.decompress(p.read_bytes()) if p.name.endswith(".gz") else p.read_bytes()
        head = json.loads(data.split(b"\n", 1)[0])
        if (MODELS / f"{head.get('model')}.gpspec").exists() and len(data) < 200_000:
            out[p.name.removesuffix(".gz")] = data
    return out


def trace_case(rng: random.Random, seeds: dict[str, bytes]) -> Case:
    name, data = rng.choice(sorted(seeds.items()))
    lines = data.split(b"\n")
    r = rng.random()
    if r < 0.2:  # header fields
        head = json.loads(lines[0])
        if rng.random() < 0.5 and head.get("constants"):
            k = rng.choice(sorted(head["constants"]))
            head["constants"][k] = huge_numbers(rng)
            what = f"header-const {k}"
        else:
            head, what = mutate_obj(rng, head)
            what = "header:" + what
        lines[0] = dump_json(rng, head)
    elif r < 0.55 and len(lines) > 2:  # event fields
        i = rng.randrange(1, len(lines) - 1)
        try:
            ev = json.loads(lines[i])
        except ValueError:
            ev = {}
        ev, what = mutate_obj(rng, ev, rng.randrange(1, 3))
        lines[i] = dump_json(rng, ev)
        what = f"event:{what}"
    elif r < 0.65 and len(lines) > 2:
        i = rng.randrange(1, len(lines) - 1)
        op = rng.randrange(3)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[i])
        else:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        what = ["del-line", "dup-line", "cut-line"][op]
    elif r < 0.7 and len(lines) > 2:
        i = rng.randrange(1, len(lines) - 1)
        d = rng.choice([100, 1500, 100_000])
        lines[i] = b'{"action": "x", "state": {"a": ' + b"[" * d + b"1" + b"]" * d + b"}}"
        what = f"deep-state{d}"
    else:
        joined, what = mutate_bytes(rng, b"\n".join(lines))
        lines = joined.split(b"\n")
    body = b"\n".join(lines)
    gz = rng.random() < 0.4
    fname = "t.jsonl.gz" if gz else "t.jsonl"
    if gz:
        if rng.random() < 0.5:
            body, w2 = gzip_damage(rng, body)
            what += "+" + w2
        else:
            body = gzip.compress(body, mtime=0)
    cmd = rng.randrange(4)
    if cmd == 0:
        argv, outs = ["replay", fname], []
    elif cmd == 1:
        argv, outs = ["export", fname, "--perfetto", "o.json"], ["o.json"]
    elif cmd == 2:
        argv, outs = ["replay", fname, "--itf", "o.itf.json", "--perfetto", "o.json"], ["o.json"]
    else:
        argv, outs = ["export", fname, "--itf", "o.itf.json"], []
    return Case("trace", what, {fname: body}, argv, fname, outs)


# ---------------------------------------------------------------------------------------------
# ITF


def itf_seeds() -> dict[str, tuple[bytes, str]]:
    """ITF files of counterexamples of the example specs (name -> (bytes, spec file))."""
    from gpcheck.checker import verify
    from gpcheck.traces.itf import to_itf

    out = {}
    for f, consts in (("rewind.gpspec", {"N": 3}), ("starve.gpspec", {})):
        p = EXAMPLES / f
        if not p.exists():
            continue
        rep = verify(str(p), consts=consts, max_states=20000)
        for r in rep.results:
            if r.counterexample is not None:
                from gpcheck.spec import load_spec

                obj = to_itf(load_spec(str(p), consts), r.counterexample.steps, r.counterexample.loop)
                out[f"{f}-{r.property}"] = (json.dumps(obj).encode(), str(p))
                break
    return out


def itf_case(rng: random.Random, seeds: dict[str, tuple[bytes, str]]) -> Case:
    name, (data, spec) = rng.choice(sorted(seeds.items()))
    if rng.random() < 0.75:
        obj, what = mutate_obj(rng, json.loads(data), rng.randrange(1, 4))
        body = dump_json(rng, obj)
    else:
        body, what = mutate_bytes(rng, data)
    argv = ["replay", "f.itf.json", "--model", spec] if rng.random() < 0.6 else \
        ["export", "f.itf.json", "--model", spec, "--perfetto", "o.json"]
    return Case("itf", what, {"f.itf.json": body}, argv, "f.itf.json")

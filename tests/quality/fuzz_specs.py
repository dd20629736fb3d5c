"""gpspec inputs for the issue-19 fuzzers: seeds (the example specs and the bundled models),
mutations by token and byte, deep nesting, huge sizes, line endings, and the grammar itself
as a hypothesis strategy (`grammar_specs`)."""

from __future__ import annotations

import random
import re

from fuzz_mutate import EXAMPLES, MODELS, ROOT, Case, mutate_bytes

_KEYWORDS = ["model", "const", "enum", "struct", "var", "action", "internal", "fair", "invariant", "transition",
             "liveness", "terminal", "allow", "deadlock", "constraint", "expect", "require", "if", "else", "then",
             "for", "in", "let", "all", "any", "count", "sum", "min", "max", "not", "and", "or", "implies",
             "eventually", "always", "leads_to", "bool", "true", "false"]
_PUNCT = ["(", ")", "{", "}", "[", "]", ",", ":", ";", "=", "==", "..", "->", "'", ".", "+", "-", "*", "/", "%",
          "<", "<=", "@", "#", '"', "\t", "\n"]
_TOKEN = re.compile(r"\s+|#[^\n]*|\w+|\.\.|->|[=!<>]=|\S")


def spec_seeds() -> dict[str, str]:
    out = {}
    for d in (EXAMPLES, MODELS):
        if d.is_dir():
            for p in sorted(d.glob("*.gpspec")):
                out[p.name] = p.read_text()
    return out


def deep_spec(rng: random.Random) -> tuple[str, str]:
    """A spec whose nesting (parentheses, operators, blocks, types, initialisers) is deep."""
    d = rng.choice([40, 60, 120, 500, 1200, 5000, 50_000])
    kind = rng.randrange(8)
    head = "model deep\nvar x: 0..3 = 0\nvar b: bool = false\n"
    if kind == 0:
        return head + f"invariant i: {'(' * d}x{')' * d} >= 0\n", f"parens{d}"
    if kind == 1:
        return head + f"invariant i: {'not ' * d}b\n", f"not{d}"
    if kind == 2:
        return head + f"invariant i: {' + '.join(['x'] * d)} >= 0\n", f"plus{d}"
    if kind == 3:
        return head + f"action a {{ {'if b { ' * d} x = 1 {'}' * d} }}\n", f"if{d}"
    if kind == 4:
        return head + f"var a: {'[0..1] -> ' * d}bool = false\n", f"array-type{d}"
    if kind == 5:
        return head + f"invariant i: {'-' * d}x <= 3\n", f"neg{d}"
    if kind == 6:
        return head + f"invariant i: {'if b then ' * d}true{' else false' * d}\n", f"ite{d}"
    return head + f"invariant i: {' and '.join(['b'] * d)}\n", f"and{d}"


def huge_spec(rng: random.Random) -> tuple[str, str]:
    """A spec with a constant, range or array too large to enumerate."""
    big = rng.choice(["10000000", "1000000000", "2147483648", "99999999999999999999", "9" * 5000,
                      "10*10*10*10*10*10*10*10*10*10*10*10", "N*N*N*N*N*N*N*N*N*N*N*N*N*N*N*N*N*N*N*N*N*N"])
    kind = rng.randrange(7)
    head = f"model huge\nconst N = {rng.choice(['8', '100000', '1000000000'])}\nconst M = {big}\n"
    if kind == 0:
        return head + "var x: 0..M = 0\naction a { x = x + 1 }\nallow deadlock\n", "range-var"
    if kind == 1:
        return head + "var a: [0..M] -> bool = false\naction t { a[0] = true }\n", "array"
    if kind == 2:
        return head + "var x: 0..M = any\naction t { require x > 0 }\nallow deadlock\n", "any-init"
    if kind == 3:
        return head + "var c: 0..3 = 0\naction t(p: 0..M) { c = 1 }\n", "param"
    if kind == 4:
        return head + "var c: 0..3 = 0\ninvariant i: all k in 0..M: k >= 0\n", "fold"
    if kind == 5:
        return head + "var c: 0..3 = 0\naction t { for k in 0..M { c = 1 } }\n", "for"
    return head + "var a: [0..N] -> [0..N] -> [0..N] -> 0..3 = 0\naction t { a[0][0][0] = 1 }\n", "array3"


def mutate_spec_tokens(rng: random.Random, text: str) -> tuple[str, str]:
    toks = _TOKEN.findall(text)
    what = []
    for _ in range(rng.randrange(1, 4)):
        if not toks:
            break
        i = rng.randrange(len(toks))
        op = rng.randrange(5)
        if op == 0:
            del toks[i]
            what.append("del")
        elif op == 1:
            toks.insert(i, toks[i])
            what.append("dup")
        elif op == 2 and i + 1 < len(toks):
            toks[i], toks[i + 1] = toks[i + 1], toks[i]
            what.append("swap")
        elif op == 3:
            toks.insert(i, rng.choice(_KEYWORDS + _PUNCT))
            what.append("insert")
        else:
            ints = [j for j, t in enumerate(toks) if t.isdigit()]
            if ints:
                toks[rng.choice(ints)] = rng.choice(["1000000000", "99999999999999999999", "9" * 5000, "0", "4096"])
                what.append("int")
    return "".join(toks), "tokens:" + ",".join(what)


def spec_case(rng: random.Random, seeds: dict[str, str], fast: bool = False) -> Case:
    """One mutated spec, checked (`check`) or verified with small limits (`verify`; never
    when `fast`)."""
    name, text = rng.choice(sorted(seeds.items()))
    r = rng.random()
    if r < 0.35:
        text, what = mutate_spec_tokens(rng, text)
    elif r < 0.5:
        data, what = mutate_bytes(rng, text.encode())
        return _spec_case(rng, data, "bytes:" + what, fast)
    elif r < 0.65:
        text, what = deep_spec(rng)
    elif r < 0.8:
        text, what = huge_spec(rng)
    else:
        text, what = mutate_spec_tokens(rng, text)
        text = text.replace("\n", rng.choice(["\r\n", "\r"]))
        what = "eol+" + what
    return _spec_case(rng, text.encode(), what, fast)


def _spec_case(rng: random.Random, data: bytes, what: str, fast: bool = False) -> Case:
    argv = ["check", "f.gpspec"] if fast or rng.random() < 0.6 else \
        ["verify", "f.gpspec", "--max-states", "3000", "--timeout", "5"]
    return Case("spec", what, {"f.gpspec": data}, argv, "f.gpspec")


# -- the grammar as a hypothesis strategy

_VOCAB = {"NAME": ["x", "y", "b", "N", "A", "B", "S", "a", "k", "p", "go", "int"], "INT": ["0", "1", "2", "3", "7"],
          "STRING": ['"doc"']}


def _grammar() -> tuple[dict[str, list[list[str]]], dict[str, str]]:
    """The gpspec grammar's rules (name -> alternatives) and literal terminals."""
    from lark import Lark

    g = Lark.open(str(ROOT / "spec" / "grammar.lark"), parser="lalr")
    rules: dict[str, list[list[str]]] = {}
    for r in g.rules:
        rules.setdefault(r.origin.name, []).append([s.name for s in r.expansion])
    lits = {t.name: t.pattern.value for t in g.terminals if t.pattern.type == "str"}
    return rules, lits


def grammar_specs(max_depth: int = 6):  # type: ignore[no-untyped-def]
    """Hypothesis strategy: gpspec text derived at random from the grammar's own rules
    (syntactically valid; names from a small vocabulary so that some also type-check), joined
    by random whitespace: spaces, LF, CRLF, CR or comments."""
    from hypothesis import strategies as st

    rules, lits = _grammar()

    @st.composite
    def derive(draw):  # type: ignore[no-untyped-def]
        out: list[str] = []
        stack: list[tuple[str, int]] = [("start", 0)]
        while stack:
            sym, depth = stack.pop()
            if sym in rules:
                alts = rules[sym]
                if depth >= max_depth:  # prefer the shortest alternative to terminate
                    alts = sorted(alts, key=len)[:1]
                alt = draw(st.sampled_from(alts))
                stack.extend((s, depth + 1) for s in reversed(alt))
            elif sym in lits:
                out.append(lits[sym])
            else:
                out.append(draw(st.sampled_from(_VOCAB.get(sym, ["x"]))))
        seps = draw(st.lists(st.sampled_from([" ", "\n", "\r\n", "\r", " # c\n", "\t"]), min_size=1, max_size=3))
        return "".join(t + seps[i % len(seps)] for i, t in enumerate(out))

    return derive()

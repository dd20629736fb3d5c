"""The for-all prover's candidate lemmas (a mined atom quantified over a view's indices) as Z3
formulas, and as gpspec text (`render_lemmas`, `affine_text`): what prove.py and the second
round's template modules (errors, finite, guards, pointer, refs, beyond) share, below all of them."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import z3

from gpcheck.spec import ir
from gpcheck.checker.engines.param.encode import ParamEncoder, PState
from gpcheck.checker.engines.param.extract import Unsupported
from gpcheck.checker.engines.param.mine import View
from gpcheck.checker.engines.smt.mining import Atom


ENGINE = "forall"
_QVARS = itertools.count()


@dataclass
class Candidate:
    view: View
    atom: Atom

    def formula(self, enc: ParamEncoder, s: PState, xs: Sequence[z3.ArithRef] | None = None) -> z3.BoolRef:
        """The candidate in `s`: quantified over the view's indices, or at `xs` (a skolem)."""
        if enc.counters is not None and any(d.key == enc.counters.key for d in self.view.domains):
            from gpcheck.checker.engines.param.counters import row_formula

            used = self.atom.slots()  # only the columns the atom reads (another may name the row's index)
            return row_formula(enc, self.view.domains, self.view.distinct,
                               lambda ys: self.atom.z3([c.term(s, ys) if k in used else None  # type: ignore[misc]
                                                        for k, c in enumerate(self.view.columns)]),
                               s.counts, violation=xs is not None)
        quantified = xs is None
        if xs is None:
            k = next(_QVARS)  # not id(self): names steer Z3's search, and runs must agree
            xs = [z3.Int(f"{n}!q{k}@{d.key}") for n, d in zip(self.view.names, self.view.domains)]
        cols = [c.term(s, xs) for c in self.view.columns]
        body = self.atom.z3(cols)
        dom = _domain(self.view, xs)
        if not quantified:
            return z3.And(dom, z3.Not(body))  # the violation at xs
        if not xs:
            return body
        return z3.ForAll(list(xs), z3.Implies(dom, body))


def _domain(view: View, xs: Sequence[z3.ArithRef]) -> z3.BoolRef:
    conds = [z3.And(d.lo <= x, x <= d.hi) for d, x in zip(view.domains, xs)]
    if view.distinct:
        conds.append(xs[0] != xs[1])
    return z3.And(*conds)


def render_lemmas(enc: ParamEncoder, cands: Sequence[Candidate]) -> str:
    """The lemmas as one gpspec conjunction, one per line."""
    return "\nand ".join(render_candidate(enc, c) for c in cands) if cands else "true"


def render_candidate(enc: ParamEncoder, c: Candidate) -> str:
    """`all x in 0..N-1: (cond implies body)` in gpspec syntax."""
    v, a = c.view, c.atom
    cols = v.columns
    conds = [_cond_text(cols[i], val, True) for i, val in a.cond]
    if a.kind == "ne":
        body = _cond_text(cols[a.terms[0][1]], a.k, False)
    else:
        body = _linear_text(a, cols)
    text = body if not conds else f"({' and '.join(conds)} implies {body})"
    if v.distinct:
        text = f"({v.names[0]} != {v.names[1]} implies {text})"
    for name, d in reversed(list(zip(v.names, v.domains))):
        dom = d.symmetric or d.tname or f"{affine_text(d.lo)}..{affine_text(d.hi)}"  # a symmetric, enum or bool index by its type's name
        text = f"(all {name} in {dom}: {text})"
    return text


def _cond_text(col: object, val: int, positive: bool) -> str:
    if col.eq_text is not None:  # type: ignore[attr-defined]
        return col.eq_text(val, positive)  # type: ignore[attr-defined]
    t = col.type  # type: ignore[attr-defined]
    name = col.name  # type: ignore[attr-defined]
    if isinstance(t, ir.BoolType):
        return name if bool(val) == positive else f"not {name}"
    return f"{name} {'==' if positive else '!='} {ir.format_scalar(t, val)}"


def _linear_text(a: Atom, cols: Sequence[object]) -> str:
    terms = list(a.terms)
    k = a.k
    if all(c < 0 for c, _ in terms):
        terms = [(-c, i) for c, i in terms]
        op, k = ">=", -k
    else:
        op = "<="
        terms.sort(key=lambda t: -t[0])
    parts = []
    for n, (c, i) in enumerate(terms):
        name = cols[i].name  # type: ignore[attr-defined]
        if n == 0:
            parts.append(name if c == 1 else f"{c} * {name}")
        else:
            parts.append(f"+ {name}" if c == 1 else (f"- {name}" if c == -1 else
                                                     (f"+ {c} * {name}" if c > 0 else f"- {-c} * {name}")))
    if len(terms) == 2 and terms[1][0] == -1 and terms[0][0] == 1:
        x, y = cols[terms[0][1]].name, cols[terms[1][1]].name  # type: ignore[attr-defined]
        return f"{x} {op} {y}" + (f" + {k}" if k > 0 else (f" - {-k}" if k < 0 else ""))
    return f"{' '.join(parts)} {op} {k}"


def affine_text(e: z3.ExprRef) -> str:
    """An affine term over the constants in gpspec syntax (`N - 1`, `2 * B`), products of
    constants included (`N * L - 1`, NOTE(product-fit))."""
    e = z3.simplify(e)
    terms = list(e.children()) if z3.is_add(e) else [e]
    const = 0
    parts: list[tuple[int, str]] = []

    def monomial(x: z3.ExprRef) -> str:
        if z3.is_const(x) and not z3.is_int_value(x):
            return x.decl().name()
        if z3.is_mul(x) and all(z3.is_const(y) and not z3.is_int_value(y) for y in x.children()):
            return " * ".join(y.decl().name() for y in x.children())
        raise Unsupported(f"a range bound {e} that is not affine")

    for x in terms:
        if z3.is_int_value(x):
            const += x.as_long()  # type: ignore[attr-defined]
        elif z3.is_mul(x) and z3.is_int_value(x.arg(0)):
            rest = x.children()[1:]
            parts.append((x.arg(0).as_long(),  # type: ignore[attr-defined]
                          monomial(rest[0] if len(rest) == 1 else z3.Product(*rest))))
        else:
            parts.append((1, monomial(x)))
    text = ""
    for c, n in parts:
        piece = n if abs(c) == 1 else f"{abs(c)} * {n}"
        text = (piece if c > 0 else f"-{piece}") if not text else f"{text} {'+' if c > 0 else '-'} {piece}"
    if not text:
        return str(const)
    if const:
        text += f" + {const}" if const > 0 else f" - {-const}"
    return text

"""Symmetry reduction: the canonical representative of a state's orbit under the permutations
of the model's symmetric types (NOTE(symmetry) in spec/ir.py).

A permutation moves the slots of arrays indexed by a symmetric type (positions) and renames
slots holding a value of it (values); `spec.symmetry.slot_roles` says which slots do what.

Canonical form (exact: one representative per orbit). Each value i of a symmetric type gets a
*signature* computed from the slots that mention it, built so that the signature of π(i) in
π(s) is the signature of i in s for every permutation π (values of the slots where i is the
only symmetric index, in order; for the other slots mentioning it, a multiset per slot family,
with a symmetric value written as "is it i"). The candidate permutations are those that sort
the values by signature; within a tie every order is tried, except where swapping the tied
values leaves the state unchanged. The canonical state is the least image (as a tuple) over the
candidates. The candidates of s and of π(s) give the same set of images, so every state of an
orbit gets the same representative. Pure Python: the Python core imports no numpy."""

from __future__ import annotations

import itertools
from operator import itemgetter
from typing import Callable, Iterator, Sequence

from spec import ir
from spec.symmetry import SlotRole, slot_roles

State = tuple[int, ...]
Perm = tuple[tuple[int, ...], ...]  # per reduced type: the new value of each value (by position)


class Symmetry:
    """Canonicalisation for one model instance; `active` is False when no symmetric type has
    two or more values (nothing to reduce)."""

    def __init__(self, model: ir.Model):
        self.types = [t for t in model.symmetric if t.size() >= 2]
        self.names = [t.symmetric for t in self.types]
        self.active = bool(self.types)
        self.roles: list[SlotRole] = slot_roles(model)
        self._getters: dict[Perm, Callable[[State], State]] = {}
        self._sig_plans = [self._signature_plan(k) for k in range(len(self.types))]
        self._value_slots = [(j, self.names.index(r.value)) for j, r in enumerate(self.roles)
                             if r.value in self.names]

    @property
    def group_size(self) -> int:
        """How many permutations the reduction quotients by."""
        n = 1
        for t in self.types:
            n *= _factorial(t.size())
        return n

    def describe(self) -> str:
        return ", ".join(f"{t.symmetric} ({t.size()} values)" for t in self.types)

    # ------------------------------------------------------------------ permutations
    def identity(self) -> Perm:
        return tuple(tuple(range(t.size())) for t in self.types)

    def apply(self, perm: Perm, s: State) -> State:
        """π(s): the state with every symmetric position and value renamed by `perm`."""
        g = self._getters.get(perm)
        if g is None:
            g = self._getter(perm)
            if len(self._getters) < 50_000:
                self._getters[perm] = g
        t = g(s)
        if not self._value_slots:
            return t
        out = list(t)
        for j, k in self._value_slots:
            lo = self.types[k].lo
            out[j] = perm[k][out[j] - lo] + lo  # type: ignore[operator]
        return tuple(out)

    def _getter(self, perm: Perm) -> Callable[[State], State]:
        n = len(self.roles)
        src = [0] * n
        for j, role in enumerate(self.roles):
            dest = j
            for name, i, stride in role.levels:
                if name in self.names:
                    k = self.names.index(name)
                    lo = self.types[k].lo
                    dest += (perm[k][i - lo] + lo - i) * stride  # type: ignore[operator]
            src[dest] = j
        if n == 1:
            return lambda s: (s[src[0]],)
        if n == 0:
            return lambda s: ()
        return itemgetter(*src)  # type: ignore[return-value]

    # ------------------------------------------------------------------ canonical form
    def canonical(self, s: State) -> State:
        """The least state of s's orbit among the signature-sorting permutations."""
        best: State | None = None
        for perm in self._candidates(s):
            t = self.apply(perm, s)
            if best is None or t < best:
                best = t
        assert best is not None
        return best

    def _candidates(self, s: State) -> Iterator[Perm]:
        per_type: list[list[tuple[int, ...]]] = []
        for k, t in enumerate(self.types):
            sigs = self._signatures(k, s)
            order = sorted(range(t.size()), key=sigs.__getitem__)
            groups: list[list[int]] = []
            for pos in order:
                if groups and sigs[groups[-1][0]] == sigs[pos]:
                    groups[-1].append(pos)
                else:
                    groups.append([pos])
            choices: list[Sequence[tuple[int, ...]]] = []
            for grp in groups:
                if len(grp) == 1 or self._stabilised(k, grp, s):
                    choices.append((tuple(grp),))
                else:
                    choices.append(list(itertools.permutations(grp)))
            maps = []
            for combo in itertools.product(*choices):
                new = [0] * t.size()
                pos = 0
                for grp_order in combo:
                    for old in grp_order:
                        new[old] = pos  # the value at sorted position `pos` becomes lo + pos
                        pos += 1
                maps.append(tuple(new))
            per_type.append(maps)
        for combo in itertools.product(*per_type):
            yield tuple(combo)

    def _stabilised(self, k: int, grp: list[int], s: State) -> bool:
        """Do the transpositions of neighbours in `grp` (which generate every permutation of
        it) all leave s unchanged? Then any order of the group gives the same images."""
        for a, b in zip(grp, grp[1:]):
            perm = list(self.identity())
            sw = list(perm[k])
            sw[a], sw[b] = b, a
            perm[k] = tuple(sw)
            if self.apply(tuple(perm), s) != s:
                return False
        return True

    def _signature_plan(self, k: int) -> list[tuple[Callable[[State], tuple[int, ...]] | None,
                                                    list[tuple[int, object, int]]]]:
        """Per value of type k: a getter of the slots where it is the only symmetric index (in
        layout order), and the other slots mentioning it as (slot, family key, mode) with mode
        0 the value, 1 "equals this value", 2 a symmetric value of another type (ignored)."""
        t = self.types[k]
        name = self.names[k]
        assert t.lo is not None
        plans = []
        for i in range(t.lo, t.hi + 1):  # type: ignore[operator]
            plain: list[int] = []
            rest: list[tuple[int, object, int]] = []
            for j, role in enumerate(self.roles):
                mine = [p for p, (n, v, _) in enumerate(role.levels) if n == name and v == i]
                if not mine and role.value != name:
                    continue
                if len(role.levels) == 1 and mine and role.value is None:
                    plain.append(j)
                    continue
                base = j - sum((v - self.types[self.names.index(n)].lo) * st  # type: ignore[operator]
                               for n, v, st in role.levels if n in self.names)
                mode = 1 if role.value == name else (2 if role.value in self.names else 0)
                rest.append((j, (base, tuple(mine)), mode))
            getter = itemgetter(*plain) if len(plain) > 1 else (
                (lambda s, j=plain[0]: (s[j],)) if plain else None)
            plans.append((getter, rest))  # type: ignore[arg-type]
        return plans  # type: ignore[return-value]

    def _signatures(self, k: int, s: State) -> list[tuple[object, ...]]:
        lo = self.types[k].lo
        out = []
        for pos, (getter, rest) in enumerate(self._sig_plans[k]):
            i = lo + pos  # type: ignore[operator]
            feats = sorted((fam, (s[j] == i) if mode == 1 else (0 if mode == 2 else s[j]))
                           for j, fam, mode in rest) if rest else ()
            out.append((getter(s) if getter is not None else (), tuple(feats)))
        return out

    # ------------------------------------------------------------------ instances
    def permute_args(self, perm: Perm, action: ir.Action, args: tuple[int, ...]) -> tuple[int, ...]:
        """The arguments of the instance π(a): symmetric parameters renamed."""
        out = []
        for p, v in zip(action.params, args):
            name = p.type.symmetric if isinstance(p.type, ir.IntType) else None
            if name in self.names:
                k = self.names.index(name)
                lo = self.types[k].lo
                v = perm[k][v - lo] + lo  # type: ignore[operator]
            out.append(v)
        return tuple(out)


def _factorial(n: int) -> int:
    out = 1
    for k in range(2, n + 1):
        out *= k
    return out

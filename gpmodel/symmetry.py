"""Symmetry reduction: the canonical representative of a state's orbit under the permutations
of the model's symmetric types (NOTE(symmetry) in spec/ir.py).

A permutation moves the slots of arrays indexed by a symmetric type (positions) and renames
slots holding a value of it (values); `gpcheck.spec.symmetry.slot_roles` says which slots do what.

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
from typing import Callable, Sequence

from gpcheck.spec import ir
from gpcheck.spec.symmetry import SlotRole, slot_roles

State = tuple[int, ...]
# Past this many candidate permutations for one state, ties keep their index order: the state
# chosen is still in the orbit (the search stays sound: every orbit is visited), but an orbit
# may then be visited more than once (`Symmetry.exact` turns False and the report says so).
MAX_CANDIDATES = 5040
Perm = tuple[tuple[int, ...], ...]  # per reduced type: the new value of each value (by position)


class Symmetry:
    """Canonicalisation for one model instance; `active` is False when no symmetric type has
    two or more values (nothing to reduce)."""

    def __init__(self, model: ir.Model):
        self.types = [t for t in model.symmetric if t.size() >= 2]
        self.names = [t.symmetric for t in self.types]
        self.active = bool(self.types)
        self.exact = True  # every canonical form so far was the orbit's least candidate image
        # levels of types with a single value move nothing: dropped
        self.roles: list[SlotRole] = [SlotRole(tuple(x for x in r.levels if x[0] in self.names),
                                               r.value if r.value in self.names else None)
                                      for r in slot_roles(model)]
        self._getters: dict[Perm, Callable[[State], State]] = {}
        self._sig_plans = [self._signature_plan(k) for k in range(len(self.types))]
        # a type whose every mentioning slot is plain (sole symmetric index, no symmetric value):
        # equal signatures mean identical elements, so a tie needs no search
        self._plain_only = [all(not multi and not holds for _, multi, holds in plan) for plan in self._sig_plans]
        self._identity = tuple(tuple(range(t.size())) for t in self.types)
        self._sizes = [t.size() for t in self.types]
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
        return self._identity

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
        per_type = self._candidates(s)
        if len(per_type) == 1 and len(per_type[0]) == 1:
            return self.apply((per_type[0][0],), s)
        best: State | None = None
        for perm in itertools.product(*per_type):
            t = self.apply(perm, s)
            if best is None or t < best:
                best = t
        assert best is not None
        return best

    def _candidates(self, s: State) -> list[list[tuple[int, ...]]]:
        """Per type, the value maps that sort its values by signature (every order of a tie
        that the state does not fix)."""
        out: list[list[tuple[int, ...]]] = []
        for k, n in enumerate(self._sizes):
            sigs = self._signatures(k, s)
            order = sorted(range(n), key=sigs.__getitem__)
            tied = [sigs[a] == sigs[b] for a, b in zip(order, order[1:])]
            if not any(tied) or self._plain_only[k]:
                new = [0] * n
                for pos, old in enumerate(order):
                    new[old] = pos  # the value at sorted position `pos` becomes lo + pos
                out.append([tuple(new)])
                continue
            groups: list[list[int]] = [[order[0]]]
            for pos, same in zip(order[1:], tied):
                if same:
                    groups[-1].append(pos)
                else:
                    groups.append([pos])
            open_groups = [grp for grp in groups if len(grp) > 1 and not self._stabilised(k, grp, s)]
            count = 1
            for grp in open_groups:
                count *= _factorial(len(grp))
            if open_groups and count > MAX_CANDIDATES:
                self.exact = False
                open_groups = []
            choices: list[Sequence[tuple[int, ...]]] = []
            for grp in groups:
                if any(grp is g for g in open_groups):
                    choices.append(list(itertools.permutations(grp)))
                else:
                    choices.append((tuple(grp),))
            maps = []
            for combo in itertools.product(*choices):
                new = [0] * n
                pos = 0
                for grp_order in combo:
                    for old in grp_order:
                        new[old] = pos
                        pos += 1
                maps.append(tuple(new))
            out.append(maps)
        return out

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
                                                    list[Callable[[State], tuple[int, ...]]],
                                                    list[list[int]]]]:
        """Per value i of type k: a getter of the slots where i is the only symmetric index (in
        layout order); getters of the other slot families mentioning i at fixed index positions
        (their values are compared as multisets: the other symmetric indices are permuted too);
        and the families of slots holding a value of type k (compared as "how many hold i").
        Families are keyed by the slot's position with every symmetric index at its lowest value
        and by the positions where i stands, so the same families exist for every value."""
        t = self.types[k]
        name = self.names[k]
        assert t.lo is not None and t.hi is not None
        plans = []
        for i in range(t.lo, t.hi + 1):
            plain: list[int] = []
            multi: dict[object, dict[object, list[int]]] = {}
            holds: dict[object, list[int]] = {}
            for j, role in enumerate(self.roles):
                mine = tuple(p for p, (n, v, _) in enumerate(role.levels) if n == name and v == i)
                if not mine and role.value != name:
                    continue
                if len(role.levels) == 1 and mine and role.value is None:
                    plain.append(j)
                    continue
                base = j - sum((v - self.types[self.names.index(n)].lo) * st  # type: ignore[operator]
                               for n, v, st in role.levels)
                if role.value == name:
                    holds.setdefault((base, mine), []).append(j)
                elif role.value is None:
                    # one family per shape of symmetric levels and position of i; its members are
                    # the vectors of slots sharing the other symmetric indices, as a multiset
                    others = tuple((p, v) for p, (n, v, _) in enumerate(role.levels) if p not in mine)
                    shape = tuple(n for n, _, _ in role.levels)
                    multi.setdefault((shape, mine), {}).setdefault(others, []).append(j)
                # a value of another symmetric type says nothing invariant about i: left out
            plans.append((_getter(plain), [[_getter(multi[f][o]) for o in sorted(multi[f])]
                                           for f in sorted(multi, key=repr)],
                          [holds[f] for f in sorted(holds, key=repr)]))
        return plans  # type: ignore[return-value]

    def _signatures(self, k: int, s: State) -> list[tuple[object, ...]]:
        lo = self.types[k].lo
        out: list[tuple[object, ...]] = []
        for pos, (plain, multi, holds) in enumerate(self._sig_plans[k]):
            sig: tuple[object, ...] = plain(s) if plain is not None else ()
            if multi:
                sig = (sig, tuple([tuple(sorted([g(s) for g in fam])) for fam in multi]))  # type: ignore[misc]
            if holds:
                i = lo + pos  # type: ignore[operator]
                sig = (sig, tuple([sum(1 for j in fam if s[j] == i) for fam in holds]))
            out.append(sig)
        return out


def _getter(slots: list[int]) -> Callable[[State], tuple[int, ...]] | None:
    if not slots:
        return None
    if len(slots) == 1:
        j = slots[0]
        return lambda s: (s[j],)
    return itemgetter(*slots)  # type: ignore[return-value]


def _factorial(n: int) -> int:
    out = 1
    for k in range(2, n + 1):
        out *= k
    return out

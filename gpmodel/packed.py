"""Bit-packed states: every slot of the layout (NOTE(slots) in spec/ir.py) stored as `value - lo`
in the fewest bits that hold its domain, slots packed into 64-bit words without straddling one.

The compiled engine (gpmodel/jit.py) keeps each state as `words` signed 64-bit integers; this
module owns where each slot lives, packs and unpacks in Python (for initial states and
counterexamples) and writes the same shifts as source text for the generated code."""

from __future__ import annotations

from dataclasses import dataclass

from gpcheck.spec import ir

WORD_BITS = 64


@dataclass(frozen=True)
class SlotField:
    """Where one slot lives: word number, bit shift, bit width, and the value stored as 0."""

    word: int
    shift: int
    width: int
    lo: int

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1


def _domain(t: ir.ScalarType) -> tuple[int, int] | None:
    """(lowest, highest) slot value of a scalar type, or None if it is unbounded."""
    if isinstance(t, ir.IntType):
        if not t.bounded:
            return None
        assert t.lo is not None and t.hi is not None
        return t.lo, t.hi
    dom = ir.domain_values(t)
    return dom.start, dom.stop - 1


class PackedLayout:
    """Slot → (word, shift, width, lo) for one model instance; `words` 64-bit words a state."""

    def __init__(self, slot_types: list[ir.ScalarType]):
        fields: list[SlotField] = []
        word, used = 0, 0
        for t in slot_types:
            dom = _domain(t)
            if dom is None:
                raise ValueError(f"slot of unbounded type {t} cannot be packed")
            lo, hi = dom
            width = max(1, (hi - lo).bit_length())
            if width > WORD_BITS - 1:
                raise ValueError(f"slot type {t} needs {width} bits")
            if used + width > WORD_BITS - 1:  # bit 63 stays clear: words are non-negative int64
                word, used = word + 1, 0
            fields.append(SlotField(word, used, width, lo))
            used += width
        self.fields = fields
        self.slot_types = slot_types
        self.words = max(1, word + 1 if fields else 1)
        self.bits = sum(f.width for f in fields)

    def pack(self, s: tuple[int, ...]) -> tuple[int, ...]:
        out = [0] * self.words
        for f, v in zip(self.fields, s):
            out[f.word] |= (int(v) - f.lo) << f.shift
        return tuple(out)

    def unpack(self, key: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(((int(key[f.word]) >> f.shift) & f.mask) + f.lo for f in self.fields)

    # ------------------------------------------------------------------ generated source
    def pack_exprs(self, slot_code: list[str]) -> list[str]:
        """One expression per word that packs the slot values given as code."""
        parts: list[list[str]] = [[] for _ in range(self.words)]
        for f, code in zip(self.fields, slot_code):
            v = f"({code})" if f.lo == 0 else f"(({code}) - {f.lo})"
            parts[f.word].append(f"({v} << {f.shift})" if f.shift else v)
        return [" | ".join(p) if p else "0" for p in parts]

    def repack_exprs(self, key: str, changed: dict[int, str]) -> list[str]:
        """One expression per word of a state equal to packed row `key` except for the slots in
        `changed` (slot -> value code): untouched words are copied, touched ones masked."""
        out = []
        for word in range(self.words):
            slots = [k for k, f in enumerate(self.fields) if f.word == word and k in changed]
            if not slots:
                out.append(f"{key}[{word}]")
                continue
            keep = (1 << (WORD_BITS - 1)) - 1
            parts = []
            for k in slots:
                f = self.fields[k]
                keep &= ~(f.mask << f.shift)
                v = f"({changed[k]})" if f.lo == 0 else f"(({changed[k]}) - {f.lo})"
                parts.append(f"({v} << {f.shift})" if f.shift else v)
            out.append(" | ".join([f"({key}[{word}] & {keep})"] + parts))
        return out

    def unpack_expr(self, k: int, key: str) -> str:
        """Code reading slot `k` from the packed row `key` (an array of words)."""
        f = self.fields[k]
        base = f"{key}[{f.word}]"
        shifted = f"({base} >> {f.shift})" if f.shift else base
        value = f"({shifted} & {f.mask})"
        return value if f.lo == 0 else f"({value} + {f.lo})"

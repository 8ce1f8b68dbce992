"""The one way people read and type decoder layers and heads: counted from 1, written `L3 H2` (a layer alone `L3`).

Code and arrays index from 0 (`attention[layer][head]`, JSON and NPZ too), so `L3 H2` is `attention[2][1]`;
`HeadRef` holds those 0-based indices and is the only place that adds or removes the 1. The parser accepts
"L3H2", "L3 H2", "l3h2", "L3" and comma lists, and refuses the old 0-based spelling ("2:1", a bare integer)
with a sentence saying what it now reads, rather than shifting it silently by one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Sequence

Want = Literal["head", "layer", "any"]  # a head (L3H2), a layer (L3), or either

_NAME = re.compile(r"\s*l\s*(\d+)\s*(?:h\s*(\d+))?\s*", re.IGNORECASE)
_OLD_PAIR = re.compile(r"\s*(-?\d+)\s*:\s*(-?\d+)\s*")
_OLD_INT = re.compile(r"\s*(-?\d+)\s*")


class HeadNameError(ValueError):
    """A layer or head spelling that cannot be read, or is not in the model; the message is one sentence."""


@dataclass(frozen=True)
class HeadRef:
    """A decoder layer (head None) or one cross-attention head of it, as 0-based indices."""

    layer: int
    head: int | None = None

    @property
    def name(self) -> str:
        """"L3 H2" (or "L3"), counted from 1."""
        return layer_name(self.layer) if self.head is None else head_name(self.layer, self.head)

    @property
    def description(self) -> str:
        """"decoder layer 3, cross-attention head 2" (or "decoder layer 3"): for tooltips."""
        return head_description(self.layer, self.head)

    def __str__(self) -> str:
        return self.name


def layer_name(layer: int) -> str:
    """0-based layer index -> "L3"."""
    return f"L{layer + 1}"


def head_name(layer: int, head: int) -> str:
    """0-based (layer, head) -> "L3 H2"."""
    return f"L{layer + 1} H{head + 1}"


def head_description(layer: int, head: int | None = None) -> str:
    """0-based (layer, head) -> "decoder layer 3, cross-attention head 2"; head None: "decoder layer 3"."""
    text = f"decoder layer {layer + 1}"
    return text if head is None else f"{text}, cross-attention head {head + 1}"


def names(refs: Sequence[HeadRef]) -> str:
    """"L3H2,L1H1": a list as the parser reads it back (no spaces, so it is one command-line word)."""
    return ",".join(r.name.replace(" ", "") for r in refs)


def _old_spelling(flag: str, text: str, want: Want) -> str | None:
    """The sentence for the old 0-based spelling (L:H pairs, bare integers), or None if it is not one."""
    items = text.split(",")
    matches = [_OLD_PAIR.fullmatch(i) for i in items]
    if all(matches):
        pairs = [(int(m.group(1)), int(m.group(2))) for m in matches if m]
        if all(l >= 0 and h >= 0 for l, h in pairs):
            new = names([HeadRef(l, h) for l, h in pairs])
            return (f"{flag} {text.strip()}: heads are now written like L3H2, counted from 1 "
                    f"({text.strip()} in the old 0-based spelling is {new})")
        return f"{flag} {text.strip()}: heads are now written like L3H2, counted from 1"
    if len(items) == 1 and _OLD_INT.fullmatch(items[0]):
        value = int(items[0])
        if want == "head":
            return f"{flag} {value}: heads are written like L3H2 (decoder layer 3, head 2), counted from 1"
        if value < 0:
            return (f"{flag} {value}: layers are now written like L3, counted from 1 ({value} in the old spelling "
                    f"counted from the last layer)")
        return (f"{flag} {value}: layers are now written like L3, counted from 1 "
                f"({value} in the old 0-based spelling is {layer_name(value)})")
    return None


def _expected(want: Want) -> str:
    if want == "layer":
        return "a decoder layer written like L3 (counted from 1)"
    if want == "head":
        return "heads written like L3H2 (decoder layer 3, head 2; counted from 1), several separated by commas"
    return "heads written like L3H2 or whole layers like L3 (counted from 1), several separated by commas"


def parse_head_refs(text: str, flag: str, want: Want = "any", layers: int | None = None,
                    heads: int | None = None) -> list[HeadRef]:
    """"L3H2,L1" -> [HeadRef(2, 1), HeadRef(0)]; checked against `layers` x `heads` when given.

    `flag` names the option or field in the error, e.g. "--ablate". `want`: "head" refuses a bare layer,
    "layer" refuses a head. HeadNameError (one sentence) for anything else, the old spelling included."""
    old = _old_spelling(flag, text, want)
    if old is not None:
        raise HeadNameError(old)
    refs = []
    for item in text.split(","):
        match = _NAME.fullmatch(item)
        if match is None:
            raise HeadNameError(f"{flag} {text.strip()!r}: expected {_expected(want)}")
        layer, head = int(match.group(1)), None if match.group(2) is None else int(match.group(2))
        spelt = item.strip()
        if layer == 0 or head == 0:
            raise HeadNameError(f"{flag} {spelt}: layers and heads are counted from 1 (L1 H1 is the first head "
                                f"of the first decoder layer)")
        if want == "layer" and head is not None:
            raise HeadNameError(f"{flag} {spelt}: name a layer only, like L{layer} (its heads are averaged)")
        if want == "head" and head is None:
            raise HeadNameError(f"{flag} {spelt}: name a head too, like L{layer}H1")
        refs.append(HeadRef(layer - 1, None if head is None else head - 1))
    if layers is not None:
        check_head_refs(refs, flag, layers, heads)
    return refs


def parse_head_ref(text: str, flag: str, want: Want = "any", layers: int | None = None,
                   heads: int | None = None) -> HeadRef:
    """One layer or head (see parse_head_refs)."""
    refs = parse_head_refs(text, flag, want, layers, heads)
    if len(refs) != 1:
        what = "layer" if want == "layer" else "head"
        raise HeadNameError(f"{flag} {text.strip()}: name one {what}, not {len(refs)}")
    return refs[0]


def check_head_refs(refs: Sequence[HeadRef], flag: str, layers: int, heads: int | None = None) -> None:
    """HeadNameError naming the first reference outside a model of `layers` decoder layers x `heads` heads."""
    for ref in refs:
        if not 0 <= ref.layer < layers:
            raise HeadNameError(f"{flag} {ref.name.replace(' ', '')}: the model has {layers} decoder layers "
                                f"({layer_name(0)}..{layer_name(layers - 1)})")
        if ref.head is not None and heads is not None and not 0 <= ref.head < heads:
            raise HeadNameError(f"{flag} {ref.name.replace(' ', '')}: the model has {heads} heads per decoder layer "
                                f"(H1..H{heads})")


def expand_heads(refs: Sequence[HeadRef], heads: int) -> list[tuple[int, int]]:
    """0-based (layer, head) pairs, a whole layer (head None) giving each of its `heads` heads; no repeats."""
    out: list[tuple[int, int]] = []
    for ref in refs:
        for pair in ([(ref.layer, ref.head)] if ref.head is not None else [(ref.layer, h) for h in range(heads)]):
            if pair not in out:
                out.append(pair)
    return out

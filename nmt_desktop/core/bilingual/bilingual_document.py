"""A bilingual file as a translate-file document: a Block per segment whose target is to be filled, and a
save that writes each target with the format's review marks and the trust estimate.

Which segments: those of translatable units with source text and an empty target; `select(overwrite=True)`
(`translate-file --overwrite`) takes every translatable one, confirmed or not. translate_document.py sets
`target_language` (the model's) and `block_trust` (each block's sentences' QualityEstimates) before save; a
block with no sentence there was taken from a translation memory (`translate-file --tm`: its exact match), not
from the model. `memory_matches` (the memory's fuzzy match of each block, or None; set by translate-file --tm)
are written beside the translation for the reviewer.

A segment a person confirmed (the desk's Ctrl+Enter) is written by its Pending's `confirm` (confirmed.py calls
it): the format's own final state, with this app's machine marks for it removed; `finish` then writes the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from nmt_desktop.core.bilingual.units import BilingualFile, BilingualUnit
from nmt_desktop.core.documents.blocks import Block, DocumentError, TranslatedBlock, check_translated

if TYPE_CHECKING:
    from lxml import etree

    from nmt_desktop.core.bilingual.inline_segments import Segment

# how a person's plain text goes into an XLIFF segment's target element, the source segment's tags placed on
# its words (confirmed.py's placer)
Place = Callable[["Segment", str, "etree._Element"], None]


@dataclass(frozen=True)
class Trust:
    """The trust estimate of a machine-filled segment: the lowest estimated chrF (0-100) of its sentences
    and its band ("high", "medium", "low"), as core/analysis/quality.py gives them."""
    qe: float
    band: str

    @property
    def note(self) -> str:
        return f"machine translation (nmt-desktop), trust {self.band}, estimated chrF {self.qe:.0f}"


@dataclass(frozen=True)
class MemoryMatch:
    """A translation memory's fuzzy match shown to the reviewer: its score (0-100) and its source and target."""
    score: float
    source: str
    target: str

    @property
    def note(self) -> str:
        return f"translation memory match {self.score:.0f}%: {self.target}"


ORIGIN = "nmt-desktop"  # what the XLIFF matches this app writes name as their origin (and replace when run again)
MEMORY_ORIGIN = "nmt-desktop translation memory"


@dataclass(frozen=True)
class Review:
    """What the reviewer is told about a filled segment: the model's trust (None: not estimated), whether the
    translation came from the memory (an exact match) instead of the model, and the memory's fuzzy matches."""
    trust: Trust | None = None
    from_memory: bool = False
    matches: tuple[MemoryMatch, ...] = ()

    MEMORY_NOTE = "translation memory (nmt-desktop): 100% match"


@dataclass
class Pending:
    """A segment the file may have filled: its unit, its blocks (several where the format keeps line breaks
    the model must not see), and how its translation is written (the blocks' runs, what the reviewer is told)."""
    unit: BilingualUnit
    blocks: list[Block]
    write: Callable[[Sequence[TranslatedBlock], Review], None]
    filled: bool | None = None  # whether it has a translation, where not its unit's target alone (PO plurals)
    others: list[BilingualUnit] = field(default_factory=list)  # the other units it fills (PO plural forms)
    # writes a person's confirmed texts (unit id -> text; those of its units that are there) as final
    confirm: Callable[[Mapping[str, str], Place], None] | None = None

    @property
    def has_target(self) -> bool:
        return self.filled if self.filled is not None else bool(self.unit.target.strip())


class BilingualDocument:
    """The Document (core/documents/blocks.py) of a bilingual file: see the module docstring."""

    def __init__(self, path: Path, file: BilingualFile, pending: list[Pending], finish: Callable[[Path, str | None], None]):
        self.path = Path(path)
        self.file = file
        self.pending = pending
        self._finish = finish
        self.target_language: str | None = None
        self.block_trust: list[list] | None = None
        self.memory_matches: list | None = None  # per block: a core/memory Match (entry, score) or None
        self.select(overwrite=False)

    def select(self, overwrite: bool) -> None:
        """Choose the segments to translate: empty ones, or (overwrite) every translatable one."""
        self.chosen = [p for p in self.pending if p.unit.translatable and p.blocks
                       and (overwrite or not p.has_target)]
        self.blocks = [b for p in self.chosen for b in p.blocks]

    @property
    def chosen_units(self) -> list[BilingualUnit]:
        """The units this translation fills, in file order."""
        return [u for p in self.chosen for u in [p.unit, *p.others]]

    @property
    def kept(self) -> int:
        """Segments with a target that this translation leaves as they are."""
        return sum(1 for p in self.pending if p.has_target and p not in self.chosen)

    def language_conflict(self, source: str | None, target: str | None) -> str | None:
        """One sentence when the file names a source or target language other than the model's (de-DE and
        de agree), else None."""
        for side, ours, theirs in (("source", source, self.file.source_language), ("target", target, self.file.target_language)):
            a, b = _primary(ours), _primary(theirs)
            if a and b and len(a) == len(b) and a != b:
                return (f"{self.path.name} is for {side} language {theirs}, but the model's {side} language is "
                        f"{ours}: choose a model for {self.file.source_language or '?'} -> "
                        f"{self.file.target_language or '?'}")
        return None

    def save(self, path: Path, translated: Sequence[TranslatedBlock]) -> None:
        if len(translated) != len(self.blocks):
            raise DocumentError(f"{self.path.name}: {len(translated)} translated blocks for {len(self.blocks)} blocks")
        for block, runs in zip(self.blocks, translated):
            check_translated(block, runs)
        conflict = self.language_conflict(None, self.target_language)
        if conflict:  # the CLI refuses it before translating; the document dialog learns it here
            raise DocumentError(conflict)
        cursor = 0
        for p in self.chosen:
            n = len(p.blocks)
            p.write(translated[cursor: cursor + n], self._review(cursor, n))
            cursor += n
        self._finish(Path(path), self.target_language)

    def finish(self, path: Path) -> None:
        """Write the file as it now is (after `Pending.confirm`) to `path`, a new file."""
        self._finish(Path(path), None)

    def _review(self, start: int, count: int) -> Review:
        """The review of blocks [start, start + count): the lowest trust of their sentences, whether the memory
        gave them (translated, yet no sentence went to the model), the memory's fuzzy matches."""
        trust, from_memory = None, False
        if self.block_trust is not None:
            estimates = [e for trust in self.block_trust[start: start + count] for e in (trust or [])]
            from_memory = not estimates
            if estimates:
                worst = min(estimates, key=lambda e: e.qe)
                trust = Trust(float(worst.qe), str(worst.trust))
        found = [m for m in (self.memory_matches or [])[start: start + count] if m is not None]
        matches = tuple(MemoryMatch(float(m.score), m.entry.source, m.entry.target) for m in found)
        return Review(trust, from_memory, matches)

def _primary(language: str | None) -> str:
    """A language tag's primary subtag, lower case ("de-DE" -> "de", "<de>" -> "de")."""
    return re.split(r"[-_@.]", (language or "").strip("<> ").lower())[0]

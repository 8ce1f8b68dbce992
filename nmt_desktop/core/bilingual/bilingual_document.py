"""A bilingual file as a translate-file document: a Block per segment whose target is to be filled, and a
save that writes each target with the format's review marks and the trust estimate.

Which segments: those of translatable units with source text and an empty target; `select(overwrite=True)`
(`translate-file --overwrite`) takes every translatable one, confirmed or not. translate_document.py sets
`target_language` (the model's) and `block_trust` (each block's sentences' QualityEstimates) before save.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from nmt_desktop.core.bilingual.units import BilingualFile, BilingualUnit
from nmt_desktop.core.documents.blocks import Block, DocumentError, TranslatedBlock, check_translated


@dataclass(frozen=True)
class Trust:
    """The trust estimate of a machine-filled segment: the lowest estimated chrF (0-100) of its sentences
    and its band ("high", "medium", "low"), as core/analysis/quality.py gives them."""
    qe: float
    band: str

    @property
    def note(self) -> str:
        return f"machine translation (nmt-desktop), trust {self.band}, estimated chrF {self.qe:.0f}"


@dataclass
class Pending:
    """A segment the file may have filled: its unit, its blocks (several where the format keeps line breaks
    the model must not see), and how its translation is written (the blocks' runs, the trust or None)."""
    unit: BilingualUnit
    blocks: list[Block]
    write: Callable[[Sequence[TranslatedBlock], Trust | None], None]
    filled: bool | None = None  # whether it has a translation, where not its unit's target alone (PO plurals)
    others: list[BilingualUnit] = field(default_factory=list)  # the other units it fills (PO plural forms)

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
            p.write(translated[cursor: cursor + n], self._trust(cursor, n))
            cursor += n
        self._finish(Path(path), self.target_language)

    def _trust(self, start: int, count: int) -> Trust | None:
        if not self.block_trust:
            return None
        estimates = [e for trust in self.block_trust[start: start + count] for e in (trust or [])]
        if not estimates:
            return None
        worst = min(estimates, key=lambda e: e.qe)
        return Trust(float(worst.qe), str(worst.trust))


def _primary(language: str | None) -> str:
    """A language tag's primary subtag, lower case ("de-DE" -> "de", "<de>" -> "de")."""
    return re.split(r"[-_@.]", (language or "").strip("<> ").lower())[0]

"""Scoring a memory source against a text: a similarity 0-100 (rapidfuzz's normalised Levenshtein distance
over characters: 100 only for the same text) and what differs, word by word (rapidfuzz's edit operations over
the two word sequences), so a translator sees at once which words to change in the memory's target."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rapidfuzz.distance import Levenshtein

from nmt_desktop.core.memory.entries import Entry

_TOKENS = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")


@dataclass(frozen=True)
class Difference:
    """One stretch where the memory's source and the text differ: op "replace", "delete" (words only the memory
    has) or "insert" (words only the text has); memory/text: those words, space-joined ("" for none)."""
    op: str
    memory: str
    text: str

    def describe(self) -> str:
        if self.op == "insert":
            return f"+{self.text}"
        if self.op == "delete":
            return f"-{self.memory}"
        return f"{self.memory} -> {self.text}"


@dataclass
class Match:
    """A memory entry found for a text: its score 0-100 (100: the same source) and the differences."""
    entry: Entry
    score: float
    differences: list[Difference] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return self.score >= 100


SIMILARITY = Levenshtein.normalized_similarity  # 0-1: one minus the character edit distance over the longer length


def score(text: str, source: str) -> float:
    """Similarity 0-100 of two texts (SIMILARITY x 100): what a match's score is."""
    return 100.0 * SIMILARITY(text, source)


def differences(text: str, source: str) -> list[Difference]:
    """The words (and punctuation marks) where `source` (the memory's) differs from `text`."""
    a, b = _TOKENS.findall(source), _TOKENS.findall(text)
    found = []
    for op in Levenshtein.opcodes(a, b):
        if op.tag != "equal":
            found.append(Difference(op.tag, " ".join(a[op.src_start: op.src_end]), " ".join(b[op.dest_start: op.dest_end])))
    return found

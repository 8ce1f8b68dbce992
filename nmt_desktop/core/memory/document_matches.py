"""A translation memory used while a document is translated (`translate-file --tm`): a block whose text the
memory holds exactly is reused as it stands (DocumentOptions.reuse: not sent to the model), and the others'
fuzzy matches of at least `min_score` are gathered for the reviewer (`fuzzy`), with the summary's wording.

Exact reuse is per block (a paragraph, cell, cue or bilingual segment: what a memory's segment is), on its plain
text: a block with a bold word, a link or inline tags inside gets the memory's target with its runs put on the
words the model aligns them to (translate_document.py, core/documents/given_translation.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nmt_desktop.core.memory.entries import Pair
from nmt_desktop.core.memory.fuzzy import Match
from nmt_desktop.core.memory.store import TranslationMemory

FUZZY_MIN = 75.0  # translate-file --tm-min's default: below it a match is rarely quicker to edit than to write
SHOWN = 20  # fuzzy matches listed in the summary (all of them are in `fuzzy`)


@dataclass
class BlockMatch:
    """The best memory match of one block of the document (index into document.blocks)."""
    block: int
    where: str
    text: str
    match: Match


@dataclass
class DocumentMemory:
    """The memory as one document's translation sees it (see the module docstring)."""
    memory: TranslationMemory
    pair: Pair
    min_score: float = FUZZY_MIN
    reused: dict[str, str] = field(default_factory=dict)  # block text -> the memory's target
    fuzzy: list[BlockMatch] = field(default_factory=list)

    def reuse(self, text: str) -> str | None:
        """The memory's target for a block's text (the newest of its exact matches), None without one."""
        found = self.memory.exact(text, self.pair)
        if not found:
            return None
        self.reused[text] = found[0].entry.target
        return found[0].entry.target

    def find_fuzzy(self, blocks, reused_blocks: set[int]) -> list[BlockMatch]:
        """The best match of at least min_score of each block the memory did not answer (blocks: the
        document's, with .text and .where)."""
        self.fuzzy = []
        for index, block in enumerate(blocks):
            text = block.text.strip()
            if index in reused_blocks or not text or getattr(block, "verbatim", False):
                continue
            found = self.memory.search(text, self.pair, 1, self.min_score)
            if found:
                self.fuzzy.append(BlockMatch(index, block.where, text, found[0]))
        return self.fuzzy

    def block_matches(self, count: int) -> list[Match | None]:
        """Per block, its fuzzy match or None (what a bilingual file writes for its reviewer)."""
        matches: list[Match | None] = [None] * count
        for found in self.fuzzy:
            matches[found.block] = found.match
        return matches

    def summary(self, reused_blocks: int) -> list[str]:
        """"memory: 3 segments reused (100% matches), 2 fuzzy matches of 75% or more for review:" and a line
        per fuzzy match (SHOWN at most)."""
        head = (f"memory ({self.pair}): {reused_blocks} segment{'s' if reused_blocks != 1 else ''} reused "
                f"(100% matches), {len(self.fuzzy)} fuzzy match{'es' if len(self.fuzzy) != 1 else ''} of "
                f"{self.min_score:g}% or more for review{':' if self.fuzzy else ''}")
        lines = [head]
        for found in self.fuzzy[:SHOWN]:
            m = found.match
            differs = "; ".join(d.describe() for d in m.differences)
            lines.append(f"  {found.where}: {m.score:.0f}% {m.entry.source!r} -> {m.entry.target!r}"
                         + (f" (differs: {differs})" if differs else ""))
        if len(self.fuzzy) > SHOWN:
            lines.append(f"  and {len(self.fuzzy) - SHOWN} more")
        return lines

"""What every document format reads into and writes back from: blocks (paragraphs, cells, cues) of runs.

A format adapter (formats/*.py) reads a file into `Block`s, one per piece of text that is translated on
its own (a paragraph, a table cell's paragraph, a slide note's paragraph, a subtitle cue, a title, an
alt text), each a list of `Run`s: stretches of text that look the same (a bold word, a link, an inline
code span). The translator (translate_document.py) gives each block back as a `TranslatedBlock`: every
source run exactly once, in the order the translation puts them, each with its new text. The adapter
writes that into a copy of the file and changes nothing else (images, styles, fields, links' targets,
numbering), so run counts and styles survive and a bold word lands on the words aligned to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Hashable, Protocol, Sequence


class DocumentError(ValueError):
    """A document that cannot be read, translated or written: the message is one sentence naming the file
    (and where in it) and what is wrong. Nothing is written when it is raised."""


@dataclass(frozen=True)
class Run:
    """A stretch of a block's text in one look.

    style: equal styles look alike (the adapter's own key: e.g. ("b", "i") or a link's target); None is
    the block's plain text. verbatim: text that must come back unchanged (inline code, a field's result):
    the translator passes it through as a placeholder."""
    text: str
    style: Hashable = None
    verbatim: bool = False


@dataclass
class Block:
    """One unit of text translated on its own. `where` names it for messages and the preview ("page 2
    header, paragraph 1", "slide 3 notes", "cue 12"); `verbatim`: the whole block stays as it is (a code
    block): it is still listed, so the preview shows it, but not translated."""
    runs: list[Run]
    where: str = ""
    verbatim: bool = False

    @property
    def text(self) -> str:
        return "".join(run.text for run in self.runs)


@dataclass(frozen=True)
class TranslatedRun:
    """Source run `index` of its block with its translated text (possibly "" when nothing aligns to it)."""
    index: int
    text: str


# A block's translation: every source run index exactly once, in the translation's order.
TranslatedBlock = list[TranslatedRun]


def untranslated(block: Block) -> TranslatedBlock:
    """A block written back as it was (verbatim blocks, empty ones)."""
    return [TranslatedRun(i, run.text) for i, run in enumerate(block.runs)]


def check_translated(block: Block, translated: Sequence[TranslatedRun], where: str = "") -> None:
    """ValueError unless `translated` names each of the block's runs exactly once (an adapter's guard)."""
    indices = sorted(t.index for t in translated)
    if indices != list(range(len(block.runs))):
        raise ValueError(f"{where or block.where}: a translated block must give each of its "
                         f"{len(block.runs)} runs once, got run indices {indices}")


class Document(Protocol):
    """An open document: its blocks in reading order, and how to write a translated copy."""

    path: Path
    blocks: list[Block]

    def save(self, path: Path, translated: Sequence[TranslatedBlock]) -> None:
        """Write a copy of the source file with block b's runs replaced by translated[b] (one entry per
        block, in `blocks` order); everything else byte-for-byte or structurally as it was. `path` is a
        new file (the caller writes to a temporary name and renames it, so the input is never replaced by
        a partial result)."""
        ...



def write_blocks(name: str, blocks: Sequence[Block], writers: Sequence[Callable[[TranslatedBlock], None]],
                 translated: Sequence[TranslatedBlock]) -> None:
    """Check a document's translation against its blocks, then hand each block's runs to its writer (the
    adapters' save: one writer per block, made when the file was read)."""
    if len(translated) != len(blocks):
        raise DocumentError(f"{name}: {len(translated)} translated blocks for {len(blocks)} blocks")
    for block, runs in zip(blocks, translated):
        check_translated(block, runs)
    for write, runs in zip(writers, translated):
        write(runs)

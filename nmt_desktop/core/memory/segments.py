"""`pair_segments`: a memory file's segments of one language pair as plain (source, target) text, what fine-tuning
on the memory trains on (core/training/memory_data.py reads it through this function, handed to the Trainer by the
command line and the app: the training package does not import the memory, which imports core/documents, which
imports core/analysis, which imports core/training)."""

from __future__ import annotations

from nmt_desktop.core.memory.entries import Pair
from nmt_desktop.core.memory.store import TranslationMemory


def pair_segments(path: str, source: str, target: str) -> list[tuple[str, str]]:
    """Every entry of the pair (Pair.covers: "en" reads "en-us" too), whatever its origin, in the order added;
    TranslationMemoryError in one sentence when the file is not there or not a memory."""
    with TranslationMemory(path, create=False) as memory:
        return [(entry.source, entry.target) for entry in memory.entries(Pair.of(source, target))]

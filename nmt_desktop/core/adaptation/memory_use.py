"""Which memory segments a decoded token came from: the interface the app's marks and hover read.

`Step.memory` (core/decoding/results.py) is a `MemoryUse` on every step whose distribution was mixed with
the memory's neighbours; `Translation.memory_matches` lists the `MemorySource`s that built the sentence's
datastore (weight: the match score / 100).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MemorySource", "MemoryUse"]


@dataclass(frozen=True)
class MemorySource:
    """One memory segment; `weight`: its share of the token's kNN mass (in `MemoryUse.sources`) or its
    match score / 100 (in `Translation.memory_matches`)."""

    entry_id: int
    source: str
    target: str
    weight: float


@dataclass(frozen=True)
class MemoryUse:
    """How one chosen token used the memory."""

    share: float  # of the chosen token's final probability that came from the kNN term, 0-1
    sources: tuple[MemorySource, ...]  # the memory segments whose neighbours voted for the token, largest first

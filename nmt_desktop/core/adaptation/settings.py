"""`Adaptation`: whether and how a `Translator` adapts to a translation memory (core/decoding/translator.py).

The defaults are the values measured best on the dev splits of benchmarks/adaptive.py (benchmarks/RESULTS.md,
"Instant adaptation"); the app toggles `enabled` per model, and `clear()` drops the influence of everything
the memory held until now (only segments confirmed after it count).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Protocol, Sequence

from nmt_desktop.core.adaptation.online_learning import OnlineLearning

__all__ = ["Adaptation", "MemoryLookup"]


class MemoryLookup(Protocol):
    """What adaptation reads of a memory: core/memory/store.TranslationMemory.search (matches with `.entry`
    (`id`, `source`, `target`, `changed`) and `.score` 0-100, exact ones first)."""

    def search(self, text: str, pair: Any, limit: int = 5, min_score: float = 50.0) -> Sequence[Any]: ...


@dataclass
class Adaptation:
    """memory: the memory looked up (`MemoryLookup`); pair: its language pair (core/memory Pair).
    matches: how many memory matches are looked up, each scoring at least `min_score` (what counts as a match:
    online learning's gate reads it); of those, the ones scoring at least `knn_min_score` build the sentence's
    datastore (weaker ones cost everyday sentences chrF on a parliamentary memory: RESULTS round 11).
    k: neighbours per step; temperature: of softmax(-distance / T) over their squared L2 distances.
    weight: λ fixed, or None: adaptive, λ = max(0, 1 - d_nearest / reach) (SK-MT, where reach is T), at most
    `max_weight`; reach None: the temperature. learning: online learning from each confirmed segment
    (online_learning.py; its `enabled` switches it)."""

    memory: MemoryLookup
    pair: Any
    matches: int = 8
    min_score: float = 30.0
    knn_min_score: float = 40.0
    k: int = 16
    temperature: float = 150.0
    weight: float | None = None
    max_weight: float = 0.7
    reach: float | None = None
    enabled: bool = True
    since: float = field(default=0.0)  # Unix seconds: entries changed before it are ignored (`clear`)
    learning: OnlineLearning = field(default_factory=OnlineLearning)
    _held: dict[str, list[Any]] | None = field(default=None, init=False, repr=False, compare=False)

    def clear(self) -> None:
        """Forget the memory's influence so far: only entries confirmed from now on adapt."""
        self.since = time.time()

    def lookup(self, text: str) -> list[Any]:
        """The memory matches that build `text`'s datastore (none when switched off)."""
        if not self.enabled or self.matches <= 0:
            return []
        if self._held is not None and text in self._held:
            return self._held[text]
        found = self.memory.search(text, self.pair, limit=self.matches, min_score=self.min_score)
        matches = [m for m in found if m.entry.changed >= self.since and m.entry.target.strip()]
        if self._held is not None:
            self._held[text] = matches
        return matches

    @contextmanager
    def held_lookups(self) -> Iterator[None]:
        """Within the block each text is looked up once (the CLI's gate and then its decoding ask for the same
        lines); nothing is held after it, so a segment confirmed later is found by the next lookup."""
        self._held = {}
        try:
            yield
        finally:
            self._held = None

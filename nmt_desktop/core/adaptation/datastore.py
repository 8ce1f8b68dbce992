"""The datastore of one search: the memory matches' decoder states (keys) and the tokens that followed them
(values), one block per sentence of the batch, so that a step compares each row only with its own sentence's
keys (the cost grows with the batch, not with its square).

A key is the decoder's final hidden state (what the output projection reads) at one target position of a
memory match, force-decoded on the match's own source; its value is the match's target token at that
position (</s> included). The table is built once per search (core/decoding/memory_states.py) and dropped
with it: nothing is kept between sentences, so a segment confirmed into the memory counts at the next one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
from torch import Tensor

from nmt_desktop.core.adaptation.memory_use import MemorySource

__all__ = ["Datastore", "MatchStates"]


@dataclass(frozen=True)
class MatchStates:
    """One memory match force-decoded: its states (T, D) and its target ids (T,), </s> last."""

    source: MemorySource  # weight: the match score / 100
    sentence: int  # the search's sentence (batch index) it was found for
    keys: Tensor  # (T, D)
    values: Sequence[int]  # (T,)


@dataclass
class Datastore:
    """Every key of a search in per-sentence blocks padded to the longest (K keys): a padded slot has an infinite
    norm, so it is never nearer than a real key and its softmax weight is 0."""

    keys_t: Tensor  # (B, D, K) float32: each sentence's keys, transposed (each step multiplies by them)
    norms: Tensor  # (B, K) squared L2 norm of each key; inf on padding
    values: Tensor  # (B, K) long: the token that followed (0 on padding)
    match: Tensor  # (B, K) long: index into `sources` (0 on padding)
    counts: Tensor  # (B,) long: each sentence's number of keys
    sources: tuple[MemorySource, ...]  # one per match

    @property
    def sentences(self) -> int:
        """B, the search's batch size."""
        return self.keys_t.shape[0]

    @classmethod
    def of(cls, matches: Sequence[MatchStates], sentences: int) -> "Datastore | None":
        """The blocks of these matches (None when there is no key: the search then runs the plain model)."""
        matches = [m for m in matches if len(m.values)]
        if not matches:
            return None
        device, dim = matches[0].keys.device, matches[0].keys.shape[1]
        counts = [0] * sentences
        for m in matches:
            counts[m.sentence] += len(m.values)
        width = max(counts)
        keys_t = torch.zeros(sentences, dim, width, device=device)  # (B, D, K)
        norms = torch.full((sentences, width), float("inf"), device=device)  # (B, K)
        values = torch.zeros(sentences, width, dtype=torch.long)  # (B, K)
        match = torch.zeros(sentences, width, dtype=torch.long)  # (B, K)
        filled = [0] * sentences
        for i, m in enumerate(matches):
            b, start, n = m.sentence, filled[m.sentence], len(m.values)
            keys = m.keys.float()  # (T, D)
            keys_t[b, :, start: start + n] = keys.t()
            norms[b, start: start + n] = (keys * keys).sum(-1)
            values[b, start: start + n] = torch.tensor(list(m.values), dtype=torch.long)
            match[b, start: start + n] = i
            filled[b] += n
        return cls(keys_t, norms, values.to(device), match.to(device), torch.tensor(counts, device=device),
                   tuple(m.source for m in matches))

    def has_keys(self) -> Tensor:
        """(B,) bool: which sentences have keys at all."""
        return self.counts > 0

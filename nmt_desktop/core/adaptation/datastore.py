"""The datastore of one search: the memory matches' decoder states (keys) and the tokens that followed them
(values), for each sentence of the batch, flattened into one table so that a step's lookup is one product.

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
    """Every key of a search, with the sentence it belongs to and the match it came from."""

    keys: Tensor  # (N, D) float32
    norms: Tensor  # (N,) squared L2 norm of each key
    values: Tensor  # (N,) long: the token that followed
    sentence: Tensor  # (N,) long: the batch index of the sentence whose match gave the key
    match: Tensor  # (N,) long: index into `sources`
    sources: tuple[MemorySource, ...]  # one per match
    sentences: int  # B, the search's batch size

    @property
    def keys_t(self) -> Tensor:
        """(D, N): the keys transposed, made once (each step multiplies by it)."""
        if self._keys_t is None:
            self._keys_t = self.keys.t().contiguous()
        return self._keys_t

    def __post_init__(self) -> None:
        self._keys_t: Tensor | None = None

    @classmethod
    def of(cls, matches: Sequence[MatchStates], sentences: int) -> "Datastore | None":
        """The table of these matches (None when there is no key: the search then runs the plain model)."""
        matches = [m for m in matches if len(m.values)]
        if not matches:
            return None
        keys = torch.cat([m.keys.float() for m in matches])  # (N, D)
        values = torch.tensor([v for m in matches for v in m.values], dtype=torch.long)
        sentence = torch.tensor([m.sentence for m in matches for _ in m.values], dtype=torch.long)
        match = torch.tensor([i for i, m in enumerate(matches) for _ in m.values], dtype=torch.long)
        return cls(keys, (keys * keys).sum(-1), values.to(keys.device), sentence.to(keys.device),
                   match.to(keys.device), tuple(m.source for m in matches), sentences)

    def has_keys(self) -> Tensor:
        """(B,) bool: which sentences have keys at all."""
        return torch.bincount(self.sentence, minlength=self.sentences) > 0

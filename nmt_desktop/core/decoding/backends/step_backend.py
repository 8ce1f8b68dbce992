"""The one boundary between the searches and where a decoding step runs.

A search (search.py) encodes its sources, then talks only to a `StepBackend`: `start` builds the
per-search state (the K/V cache) for B rows from the encoder output, `step` turns one token per row
into logits (and attention on request), `pick` / `beam_candidates` choose tokens from the logits,
`reorder` keeps the rows that survive. Three implementations give the same tokens
(tests/core/decoding/backends/test_backends.py):

* `ReferenceBackend` (backends/reference.py): the model's own modules (`Transformer.decode`), the only
  one that takes interventions (head mask, mean ablation of heads);
* `PythonBackend` (backends/python.py): the fused single-position step in Python over weights prepared
  once (fused_step.py, prepared_linear.py);
* `CompiledBackend` (backends/compiled.py): the same step and the token choice in C++ (native/).

The `Translator` picks one once (backends/choice.py); a new backend implements this protocol and
gets a name there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
from torch import Tensor

from nmt_desktop.core.model.cache import KVCache
from nmt_desktop.core.model.transformer import EncoderOutput

__all__ = ["DecoderState", "StepBackend", "StepOutput"]


@dataclass
class StepOutput:
    """What one step gives for each of its B rows."""

    logits: Tensor  # (B, V)
    cross_attention: Tensor | None = None  # (B, L, H, S) when asked for
    self_attention: Tensor | None = None  # (B, L, H, length) when asked for, this position included
    hidden: Tensor | None = None  # (B, D) when asked for: the final state the output projection read (kNN-MT's query)


@dataclass
class DecoderState:
    """One search's decoding state; backends extend it with what they keep per row."""

    cache: KVCache

    @property
    def batch_size(self) -> int:
        return self.cache.batch_size


class StepBackend(Protocol):
    """Where the decoder steps and tokens are chosen; one instance serves many searches (and threads)."""

    name: str  # "reference", "python" or "compiled"

    def start(self, enc: EncoderOutput, capacity: int) -> DecoderState:
        """The state of a search over the B rows of `enc` (rows already replicated per beam)."""
        ...

    def step(self, state: DecoderState, tokens: Tensor, need_cross: bool, need_self: bool,
             need_hidden: bool = False) -> StepOutput:
        """Feed one token per row, tokens (B,), at the next position; the state advances. need_hidden: also
        the final hidden state (core/adaptation's query and keys)."""
        ...

    def pick(self, logits: Tensor, k: int, masked: tuple[int, int]) -> tuple[Tensor, Tensor, np.ndarray, np.ndarray]:
        """The greedy pick from logits (R, V), never a `masked` id (pad, eos; -1: none): tokens (R,),
        their log-probs (R, 1) and the top-k alternatives' ids and log-probs (R, k)."""
        ...

    def beam_candidates(self, logits: Tensor, scores: Tensor, k_alt: int, masked: tuple[int, int]
                        ) -> tuple[Tensor, Tensor, Tensor, np.ndarray, np.ndarray]:
        """Beam search's best 2K expansions per sentence from logits (B*K, V) and beam scores (B, K):
        scores, flat indices beam * V + token and token log-probs (B, 2K), best first, and each row's
        top k_alt alternatives (B*K, k_alt); see selection.beam_candidates."""
        ...

    def reorder(self, state: DecoderState, indices: Tensor, cross: bool = True) -> None:
        """Keep rows `indices` (B',); cross=False: rows only move among beams of one source."""
        ...

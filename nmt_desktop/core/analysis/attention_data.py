"""`AttentionData`: one kind of attention of a translation with its tokens, as plain numpy.

What the attention views show and export (no Qt, no tensors): decoder cross-attention (rows = target
tokens, columns = source tokens), encoder self-attention (source x source) or decoder self-attention
(target x target), as weights (layers, heads, rows, cols) float32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from nmt_desktop.core.analysis.words import join_word, merge_attention, word_groups

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Translation

KINDS = ("cross", "encoder", "decoder")
KIND_TITLES = {"cross": "Cross-attention", "encoder": "Encoder self-attention", "decoder": "Decoder self-attention"}


def head_averages(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(L, H, R, C) -> (each layer's head mean (L, R, C), the mean of all heads (R, C)), float32.

    The one place these averages are computed: streamed rows, finished translations and
    `AttentionData.averages` all come here (means in float64, so a streamed row equals the finished one)."""
    L, H, R, C = weights.shape
    if L == 0 or H == 0:
        return np.zeros((L, R, C), dtype=np.float32), np.zeros((R, C), dtype=np.float32)
    per_layer = weights.mean(axis=1, dtype=np.float64).astype(np.float32)
    overall = weights.mean(axis=(0, 1), dtype=np.float64).astype(np.float32)
    return per_layer, overall


@dataclass
class AttentionData:
    """Weights (layers, heads, rows, cols) float32 with their tokens: rows = target, cols = source."""

    kind: str
    source_tokens: list[str]
    target_tokens: list[str]
    weights: np.ndarray

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown attention kind {self.kind!r}; expected one of {', '.join(KINDS)}")
        self.weights = np.asarray(self.weights, dtype=np.float32)
        if self.weights.ndim != 4:
            raise ValueError(f"weights must be (layers, heads, rows, cols), got shape {self.weights.shape}")
        self.source_tokens, self.target_tokens = list(self.source_tokens), list(self.target_tokens)
        if self.weights.shape[3] != len(self.source_tokens):
            raise ValueError(f"weights have {self.weights.shape[3]} columns for "
                             f"{len(self.source_tokens)} source tokens")
        if self.weights.shape[2] > len(self.target_tokens):
            raise ValueError(f"weights have {self.weights.shape[2]} rows for {len(self.target_tokens)} target tokens")

    @property
    def layers(self) -> int:
        return self.weights.shape[0]

    @property
    def heads(self) -> int:
        return self.weights.shape[1]

    @property
    def rows(self) -> int:
        return self.weights.shape[2]

    @property
    def cols(self) -> int:
        return self.weights.shape[3]

    @staticmethod
    def kinds_of(translation: Translation, hypothesis: int = 0) -> list[str]:
        """The kinds `from_translation` finds in `translation.nbest[hypothesis]`, in `KINDS` order."""
        hyp = translation.nbest[hypothesis]
        found = {"cross": hyp.attention, "encoder": translation.encoder_attention, "decoder": hyp.self_attention}
        return [kind for kind in KINDS if found[kind] is not None]

    @classmethod
    def from_translation(cls, translation: Translation, kind: str = "cross", hypothesis: int = 0) -> "AttentionData":
        """The `kind` attention of `translation.nbest[hypothesis]`; ValueError if the translation lacks it."""
        hyp = translation.nbest[hypothesis]
        if kind == "cross":
            weights, src, tgt = hyp.attention, translation.source_tokens, hyp.tokens
        elif kind == "encoder":
            weights, src, tgt = translation.encoder_attention, translation.source_tokens, translation.source_tokens
        elif kind == "decoder":
            weights, src, tgt = hyp.self_attention, hyp.tokens, hyp.tokens
        else:
            raise ValueError(f"unknown attention kind {kind!r}; expected one of {', '.join(KINDS)}")
        if weights is None:
            raise ValueError(f"this translation has no {KIND_TITLES[kind].lower()}")
        weights = np.asarray(weights, dtype=np.float32)
        return cls(kind, list(src), list(tgt)[: weights.shape[2]], weights)

    def merged(self) -> "AttentionData":
        """Pieces merged into words (`words.word_groups`; special tokens stay columns/rows of their own):
        weights summed over the source pieces of a word and averaged over the target pieces of a word."""
        tgt_tokens = self.target_tokens[: self.rows]
        src_groups, tgt_groups = word_groups(self.source_tokens), word_groups(tgt_tokens)
        weights = merge_attention(self.weights, src_groups, tgt_groups)
        return AttentionData(self.kind, [join_word([self.source_tokens[i] for i in g]) for g in src_groups],
                             [join_word([tgt_tokens[i] for i in g]) for g in tgt_groups], weights)

    def averages(self) -> tuple[np.ndarray, np.ndarray]:
        """(per-layer head mean (layers, rows, cols), overall mean (rows, cols)): `head_averages`."""
        return head_averages(self.weights)

    def matrix(self, layer: int, head: int) -> np.ndarray:
        """One cell's (rows, cols) matrix: a head, a layer's head mean (head -1) or the overall mean (-1, -1)."""
        if layer == -1:
            return self.averages()[1]
        if head == -1:
            return self.averages()[0][layer]
        return self.weights[layer, head]

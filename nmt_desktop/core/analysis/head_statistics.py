"""Head statistics: what each decoder cross-attention head does over a translation's target rows.

`head_stats` (one translation) and `probe_head_stats` (averaged over a probe set, greedy with attention)
give a `HeadStats` per head (layer, head), 0-based; people read and type heads as `L3 H2` (head_names.py).
Entropy, attention sinks (source `</s>`, punctuation), diagonality, monotonicity (Spearman rank
correlation of each row's argmax with the target position) and coverage, from the cross-attention
`(layers, heads, target_len, source_len)` of a `Translation` (rows sum to 1 over the source).
"""

from __future__ import annotations

import unicodedata
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.tokenizer import WORD_START

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.decoding.results import Translation

EOS_PIECE = "</s>"


@dataclass
class HeadStats:
    """Statistics of one cross-attention head (layer, head) over a translation's target rows."""

    layer: int
    head: int
    entropy: float  # mean over target rows of the row's entropy, in nats
    eos_share: float  # mean share of a row's attention on source </s>
    punct_share: float  # mean share of a row's attention on punctuation pieces
    diagonality: float  # mean share of a row's mass within +-1 source position of the rescaled diagonal
    monotonicity: float  # Spearman correlation of each row's argmax source position with the target position
    coverage: float  # share of source tokens (</s> excluded) receiving total attention >= 0.5

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def is_punctuation(piece: str) -> bool:
    """A piece made only of punctuation (after removing the word-start marker)."""
    text = piece.replace(WORD_START, "").strip()
    return bool(text) and all(unicodedata.category(c).startswith("P") for c in text)


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks with ties averaged (for Spearman)."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x), np.float64)
    ranks[order] = np.arange(len(x), dtype=np.float64)
    for value in np.unique(x):
        tie = x == value
        ranks[tie] = ranks[tie].mean()
    return ranks


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman rank correlation; 0.0 when either side is constant or shorter than 2."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if len(x) < 2:
        return 0.0
    rx, ry = _ranks(x), _ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return 0.0
    return float(np.corrcoef(rx, ry)[0, 1])


def attention_stats(attn: np.ndarray, source_tokens: Sequence[str]) -> list[HeadStats]:
    """HeadStats of every head of attention (L, H, T, S) over source pieces `source_tokens` (S)."""
    L, H, T, S = attn.shape
    a = attn.astype(np.float64)
    eos = np.array([t == EOS_PIECE for t in source_tokens])  # (S,)
    punct = np.array([is_punctuation(t) for t in source_tokens])  # (S,)
    entropy = -(a * np.log(np.clip(a, 1e-12, None))).sum(-1).mean(-1)  # (L, H)
    eos_share = a[..., eos].sum(-1).mean(-1)  # (L, H)
    punct_share = a[..., punct].sum(-1).mean(-1)  # (L, H)
    centre = (np.arange(T) + 0.5) * S / T - 0.5  # (T,) diagonal source position of each target row
    near = np.abs(np.arange(S)[None, :] - centre[:, None]) <= 1.0  # (T, S)
    diagonality = (a * near).sum(-1).mean(-1)  # (L, H)
    received = a.sum(2)  # (L, H, S)
    content = ~eos
    coverage = (received[..., content] >= 0.5).mean(-1) if content.any() else np.zeros((L, H))  # (L, H)
    argmax = a.argmax(-1)  # (L, H, T)
    rows = []
    for layer in range(L):
        for head in range(H):
            rows.append(HeadStats(layer, head, float(entropy[layer, head]), float(eos_share[layer, head]),
                                  float(punct_share[layer, head]), float(diagonality[layer, head]),
                                  spearman(argmax[layer, head], np.arange(T)), float(coverage[layer, head])))
    return rows


def head_stats(translation: "Translation") -> list[HeadStats]:
    """HeadStats of every cross-attention head for one translation (its best hypothesis)."""
    if translation.attention is None or translation.attention.shape[2] == 0:
        raise ValueError("head statistics need a translation decoded with attention")
    return attention_stats(translation.attention, translation.source_tokens)


def average_stats(per_sentence: Sequence[list[HeadStats]]) -> list[HeadStats]:
    """Mean of each field over sentences, per (layer, head)."""
    if not per_sentence:
        return []
    fields = ("entropy", "eos_share", "punct_share", "diagonality", "monotonicity", "coverage")
    out = []
    for rows in zip(*per_sentence):
        means = {f: float(np.mean([getattr(r, f) for r in rows])) for f in fields}
        out.append(HeadStats(rows[0].layer, rows[0].head, **means))
    return out


def probe_head_stats(translator: "Translator", sources: Sequence[str], batch_size: int = 16) -> list[HeadStats]:
    """HeadStats averaged over a probe set, each sentence greedily translated with attention."""
    cfg = DecodeConfig(attention=True, alternatives=0)
    translations = translator.translate_batch([s for s in sources if s.strip()], cfg, batch_size=batch_size)
    return average_stats([head_stats(t) for t in translations if t.attention is not None and t.attention.shape[2]])

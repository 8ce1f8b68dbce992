"""How spread out a translation's cross-attention is: the share of target tokens whose attention is diffuse.

A model out of its depth (an input far from its training data) often attends everywhere at once
instead of reading one source word per target token. Here a target token is diffuse when the last
decoder layer's cross-attention row, averaged over heads, has an entropy above `DIFFUSE_ENTROPY` of
the largest possible (ln of the source length): 1.0 is uniform attention, 0.0 one source token.
A translation is diffuse when more than `DIFFUSE_SHARE` of its target tokens are.
"""

from __future__ import annotations

import numpy as np

DIFFUSE_ENTROPY = 0.8  # normalised entropy above which a target token's attention is diffuse
DIFFUSE_SHARE = 0.5  # share of diffuse target tokens above which the translation is diffuse


def normalised_entropy(attention: np.ndarray) -> np.ndarray:
    """Per target token, the entropy of the last layer's head-averaged attention row over the source,
    divided by ln(source length): (L, H, T, S) -> (T,) in [0, 1]. A one-token source gives zeros."""
    a = np.asarray(attention, dtype=np.float64)
    if a.ndim != 4:
        raise ValueError(f"attention must be (layers, heads, target, source), got shape {a.shape}")
    rows = a[-1].mean(axis=0)  # (T, S)
    source_len = rows.shape[1]
    if source_len < 2 or rows.shape[0] == 0:
        return np.zeros(rows.shape[0])
    rows = rows / np.clip(rows.sum(axis=1, keepdims=True), 1e-12, None)
    entropy = -(rows * np.log(np.clip(rows, 1e-12, None))).sum(axis=1)
    return np.clip(entropy / np.log(source_len), 0.0, 1.0)


def diffuse_share(attention: np.ndarray | None, threshold: float = DIFFUSE_ENTROPY) -> float:
    """Share of target tokens whose attention is diffuse (0.0 without attention or target tokens)."""
    if attention is None:
        return 0.0
    entropy = normalised_entropy(attention)
    return float((entropy > threshold).mean()) if entropy.size else 0.0


def is_diffuse(attention: np.ndarray | None, share: float = DIFFUSE_SHARE) -> bool:
    """True when more than `share` of the target tokens have diffuse attention."""
    return diffuse_share(attention) > share

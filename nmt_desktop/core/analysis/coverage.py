"""Coverage warnings: source words that received little attention (possible omissions) and target
tokens no head attends to sharply (diffuse attention), from a `Translation`'s cross-attention
`(layers, heads, target_len, source_len)`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from nmt_desktop.core.analysis.words import join_word, real_words

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Translation


@dataclass
class CoverageWarning:
    """A source word that received little attention, or a target token whose attention is diffuse."""

    kind: Literal["omission", "diffuse"]
    index: int  # source word index (omission) or target token index (diffuse), 0-based
    token: str  # the source word (pieces joined) or the target piece
    value: float  # total attention received (omission) or the sharpest head's row entropy in nats (diffuse)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def coverage_warnings(translation: "Translation", low: float = 0.3,
                      diffuse_entropy: float | None = None) -> list[CoverageWarning]:
    """Possible omissions and diffuse attention.

    omission: a source word (pieces summed, </s> excluded) whose total received attention over
    all target rows, averaged over layers and heads, is below `low`. diffuse: a target token for
    which no head of any layer attends sharply: even the sharpest head's row has an entropy above
    `diffuse_entropy` nats (default 0.4 * ln(source_len)). (The entropy of the average over heads
    is no test: heads that each look at a different word average to a spread row. The default is
    set so that a good model's translations are rarely flagged while mistranslations are, as
    measured on the bundled models in benchmarks/RESULTS.md.)
    """
    attn = translation.attention
    if attn is None or attn.shape[2] == 0:
        return []
    a = attn.astype(np.float64).mean(axis=(0, 1))  # (T, S)
    warnings: list[CoverageWarning] = []
    pieces = translation.source_tokens
    received = a.sum(0)  # (S,)
    for w, members in enumerate(real_words(pieces)):
        total = float(received[members].sum())
        if total < low:
            warnings.append(CoverageWarning("omission", w, join_word([pieces[j] for j in members]), total))
    limit = 0.4 * np.log(max(a.shape[1], 2)) if diffuse_entropy is None else diffuse_entropy
    per_head = attn.astype(np.float64)  # (L, H, T, S)
    entropy = (-(per_head * np.log(np.clip(per_head, 1e-12, None))).sum(-1)).min(axis=(0, 1))  # (T,)
    for t, value in enumerate(entropy):
        if value > limit:
            warnings.append(CoverageWarning("diffuse", t, translation.target_tokens[t], float(value)))
    return warnings

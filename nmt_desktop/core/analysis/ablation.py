"""Head ablation: switching decoder cross-attention heads off, and ranking heads by what that costs.

- `ablation_mask` (zeroing, through `Transformer.decode`'s `head_mask`), `head_means` + `mean_override`
  (mean ablation: a head's output replaced by its mean context over a probe set, a `HeadOverride`).
- `rank_heads`: each head's BLEU drop on a probe set when it is zeroed, greedy and deterministic
  (`probe_subset`: the seeded subset of the probe pairs).

Heads are addressed 0-based as (layer, head); people read and type them as `L3 H2` (head_names.py).
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Sequence

import torch

from nmt_desktop.core.analysis.head_names import head_name
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.model.transformer import HeadOverride

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator


def all_heads(translator: "Translator") -> list[tuple[int, int]]:
    """Every decoder cross-attention head as (layer, head)."""
    return [(l, h) for l in range(translator.config.decoder_layers) for h in range(translator.config.n_heads)]


def ablation_mask(translator: "Translator", heads: Sequence[tuple[int, int]]) -> torch.Tensor:
    """A head_mask (L, H) with 0 at `heads` (zeroing ablation) and 1 elsewhere."""
    cfg = translator.config
    mask = torch.ones(cfg.decoder_layers, cfg.n_heads)
    for layer, head in heads:
        if not (0 <= layer < cfg.decoder_layers and 0 <= head < cfg.n_heads):
            raise ValueError(f"no cross-attention head {head_name(layer, head)} in a model with {cfg.decoder_layers} "
                             f"decoder layers of {cfg.n_heads} heads")
        mask[layer, head] = 0.0
    return mask.to(translator.device)


def head_means(translator: "Translator", probe_sources: Sequence[str], batch_size: int = 16) -> torch.Tensor:
    """Mean cross-attention context (L, H, dh) of each head over a probe set.

    Each source is translated greedily, then its translation is teacher-forced once with
    `decode(..., need_context=True)`; the mean runs over every real target position.
    """
    model, cfg = translator.model, translator.config
    sources = [s for s in probe_sources if s.strip()]
    if not sources:
        raise ValueError("head means need at least one non-empty probe sentence")
    decode_cfg = DecodeConfig(attention=False, alternatives=0)
    total, count = None, 0
    for start in range(0, len(sources), batch_size):
        chunk = sources[start: start + batch_size]
        targets = [t.target_ids for t in translator.translate_batch(chunk, decode_cfg, batch_size=batch_size)]
        src = translator.batch_ids([translator.source_ids(s) for s in chunk])  # (B, S)
        tgt_in = translator.batch_ids([[cfg.decoder_start_id] + t[:-1] if t else [cfg.decoder_start_id]
                                    for t in targets])  # (B, T) right-padded with pad_id
        real = torch.zeros(tgt_in.shape, dtype=torch.bool, device=tgt_in.device)  # (B, T)
        for i, t in enumerate(targets):
            real[i, : max(1, len(t))] = True
        with torch.inference_mode():
            ctx = model.decode(tgt_in, model.encode(src), need_context=True).cross_context  # (B, L, H, T, dh)
        ctx = ctx.float() * real[:, None, None, :, None]
        part = ctx.sum(dim=(0, 3))  # (L, H, dh)
        total = part if total is None else total + part
        count += int(real.sum())
    return total / count


def mean_override(means: torch.Tensor, heads: Sequence[tuple[int, int]]) -> HeadOverride:
    """A HeadOverride replacing `heads` by their means (L, H, dh)."""
    use = torch.zeros(means.shape[:2], dtype=torch.bool, device=means.device)
    for layer, head in heads:
        use[layer, head] = True
    return HeadOverride(means, use)


@dataclass
class HeadImportance:
    """BLEU of the probe set with one head zeroed, and the drop from the intact model's BLEU."""

    layer: int
    head: int
    bleu: float
    bleu_drop: float  # intact BLEU - ablated BLEU (positive: the head helps)

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def probe_subset(pairs: Sequence[tuple[str, str]], max_sentences: int | None, seed: int = 0) -> list[tuple[str, str]]:
    """All pairs, or a seeded random subset of `max_sentences` in file order."""
    pairs = list(pairs)
    if max_sentences is None or max_sentences >= len(pairs):
        return pairs
    keep = sorted(random.Random(seed).sample(range(len(pairs)), max_sentences))
    return [pairs[i] for i in keep]


def rank_heads(translator: "Translator", pairs: Sequence[tuple[str, str]], max_sentences: int | None = None,
               seed: int = 0, batch_size: int = 16) -> list[HeadImportance]:
    """Every cross-attention head's BLEU drop when zeroed, greedy decoding, largest drop first.

    Ties keep (layer, head) order. Deterministic: greedy search, and the probe subset (when
    max_sentences is set) is drawn with `seed`.
    """
    from nmt_desktop.core.training.metrics import corpus_bleu

    probe = probe_subset(pairs, max_sentences, seed)
    if not probe:
        raise ValueError("ranking heads needs at least one probe pair")
    sources, refs = [s for s, _ in probe], [t for _, t in probe]
    cfg = DecodeConfig(attention=False, alternatives=0)

    def bleu(mask: torch.Tensor | None) -> float:
        return corpus_bleu([t.text for t in translator.translate_batch(sources, cfg, batch_size, head_mask=mask)], refs)

    base = bleu(None)
    rows = []
    for layer, head in all_heads(translator):
        score = bleu(ablation_mask(translator, [(layer, head)]))
        rows.append(HeadImportance(layer, head, score, base - score))
    return sorted(rows, key=lambda r: -r.bleu_drop)  # stable: ties stay in (layer, head) order

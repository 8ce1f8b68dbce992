"""Prediction difference: how much the model's belief in each target token drops when a source word is hidden.

For a (source, target) pair the model scores the target once as given, then once per source word with
that word's positions masked out of every attention (its ids set to <pad>, which the encoder's and the
cross-attention's key mask skip; the other words keep their positions). The drop in log p(target token t)
is evidence that t translates the hidden word (Li et al. 2019, "prediction difference"). Unlike attention,
it measures what the model actually *uses*, which is why it aligns far better on the bundled models
(benchmarks/RESULTS.md, "Alignments (issue 23)"). It costs one teacher-forced pass per source word, run
as one batch per `chunk` words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
import torch

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.decoding.results import Translation

__all__ = ["prediction_difference"]


def prediction_difference(translator: "Translator", translation: "Translation",
                          source_groups: Sequence[Sequence[int]], chunk: int = 32) -> np.ndarray:
    """(T, W): drop in log p(target token t) when source word w (the piece indices of `source_groups`) is
    hidden, floored at 0; T counts the target's tokens (</s> included when it has one)."""
    source_ids, target_ids = list(translation.source_ids), list(translation.target_ids)
    if not source_ids:
        raise ValueError("this translation was split into several sentences: align each sentence on its own")
    model, cfg = translator.model, translator.config
    device = translator.device
    T = len(target_ids)
    if T == 0 or not source_groups:
        return np.zeros((T, len(source_groups)))
    tgt_in = torch.tensor([[cfg.decoder_start_id] + target_ids[:-1]], device=device)  # (1, T)
    gold = torch.tensor(target_ids, device=device)  # (T,)

    def logprobs(sources: list[list[int]]) -> torch.Tensor:
        src = torch.tensor(sources, device=device)  # (n, S)
        n = src.shape[0]
        logits = model.decode(tgt_in.expand(n, -1), model.encode(src)).logits.float()  # (n, T, V)
        return torch.log_softmax(logits, -1).gather(2, gold.view(1, T, 1).expand(n, T, 1))[..., 0]  # (n, T)

    drops = []
    with torch.inference_mode():
        base = logprobs([source_ids])  # (1, T)
        for start in range(0, len(source_groups), chunk):
            hidden = []
            for group in source_groups[start: start + chunk]:
                ids = list(source_ids)
                for i in group:
                    ids[i] = cfg.pad_id
                hidden.append(ids)
            drops.append((base - logprobs(hidden)).clamp_min(0).cpu().numpy())  # (n, T)
    return np.concatenate(drops, axis=0).T.astype(np.float64)  # (T, W)

"""Prediction difference: how much the model's belief in each target token drops when a source word is hidden.

For a (source, target) pair the model scores the target once as given, then once per source word with
that word's positions masked out of every attention (its ids set to <pad>, which the encoder's and the
cross-attention's key mask skip; the other words keep their positions). The drop in log p(target token t)
is evidence that t translates the hidden word (Li et al. 2019, "prediction difference"). Unlike attention,
it measures what the model actually *uses*, which is why it aligns far better on the bundled models
(benchmarks/RESULTS.md, "Alignments (issue 23)"). It costs one teacher-forced pass per source word, run
as one batch per `chunk` words; `prediction_differences` runs many sentences' passes in shared batches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Hashable, Sequence

import numpy as np
import torch

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.decoding.results import Translation

__all__ = ["MaskingRequest", "prediction_difference", "prediction_differences"]


def prediction_difference(translator: "Translator", translation: "Translation",
                          source_groups: Sequence[Sequence[int]], chunk: int = 32) -> np.ndarray:
    """(T, W): drop in log p(target token t) when source word w (the piece indices of `source_groups`) is
    hidden, floored at 0; T counts the target's tokens (</s> included when it has one)."""
    return prediction_differences(translator, [(translation, source_groups)], chunk + 1)[0]


def prediction_differences(translator: "Translator", jobs: Sequence[tuple["Translation", Sequence[Sequence[int]]]],
                           rows: int = 33) -> list[np.ndarray]:
    """`prediction_difference` of many (translation, source groups) at once: each job's plain pass and
    its masked ones are rows of shared batches of at most `rows`, sources and targets right-padded (a
    padded source position is masked like a hidden word; a padded target position comes after every real
    one, which the causal mask keeps from them), so many sentences cost a few passes."""
    model, cfg, device = translator.model, translator.config, translator.device
    work: list[tuple[int, int, list[int]]] = []  # (job, group or -1 for the plain pass, source ids)
    for j, (translation, groups) in enumerate(jobs):
        if not translation.source_ids:
            raise ValueError("this translation was split into several sentences: align each sentence on its own")
        if not translation.target_ids or not groups:
            continue
        work.append((j, -1, list(translation.source_ids)))
        for g, group in enumerate(groups):
            ids = list(translation.source_ids)
            for i in group:
                ids[i] = cfg.pad_id
            work.append((j, g, ids))
    scores: dict[tuple[int, int], np.ndarray] = {}  # (job, group) -> (T,) log p of each target token
    with torch.inference_mode():
        for start in range(0, len(work), max(1, rows)):
            batch = work[start: start + rows]
            targets = [list(jobs[j][0].target_ids) for j, _g, _ids in batch]
            S, T = max(len(ids) for *_rest, ids in batch), max(len(t) for t in targets)
            src = torch.tensor([ids + [cfg.pad_id] * (S - len(ids)) for *_rest, ids in batch], device=device)  # (n, S)
            tgt_in = torch.tensor([[cfg.decoder_start_id] + t[:-1] + [cfg.pad_id] * (T - len(t)) for t in targets],
                                  device=device)  # (n, T)
            gold = torch.tensor([t + [cfg.pad_id] * (T - len(t)) for t in targets], device=device)  # (n, T)
            logits = model.decode(tgt_in, model.encode(src)).logits.float()  # (n, T, V)
            lp = torch.log_softmax(logits, -1).gather(2, gold.unsqueeze(-1))[..., 0].cpu().numpy()  # (n, T)
            for (j, g, _ids), row, target in zip(batch, lp, targets):
                scores[(j, g)] = row[:len(target)].astype(np.float64)
    out = []
    for j, (translation, groups) in enumerate(jobs):
        T = len(translation.target_ids)
        if T == 0 or not groups:
            out.append(np.zeros((T, len(groups))))
            continue
        base = scores[(j, -1)]
        out.append(np.stack([np.maximum(base - scores[(j, g)], 0.0) for g in range(len(groups))], axis=1))  # (T, W)
    return out


@dataclass(frozen=True)
class MaskingRequest:
    """A lockstep request (decoding/lockstep.py) for `prediction_difference(translation, groups)`: the
    masking passes of many sentences' repairs share batches (documents/constraints.py)."""
    translation: "Translation"
    groups: tuple[tuple[int, ...], ...]

    def batch_key(self) -> Hashable:
        return ()

    @classmethod
    def run_together(cls, translator: "Translator", requests: Sequence["MaskingRequest"], batch_size: int
                     ) -> list[np.ndarray]:
        return prediction_differences(translator, [(r.translation, r.groups) for r in requests], max(33, batch_size))

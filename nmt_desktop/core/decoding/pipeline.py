"""The one decode pipeline: which search runs, how its steps become hypotheses, and in what batches.

Streaming (`TranslationStream`), batches (`Translator.translate_batch`), documents (document.py) and
scoring (scoring.py) all run a `Search` over a padded batch of `Unit`s (results.py) and name what it
gives with naming.py; none of them picks greedy, beam, sampling or teacher forcing by itself.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np
import torch

from nmt_desktop.core.adaptation.mixture import KnnMixture
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.backends.step_backend import StepBackend
from nmt_desktop.core.decoding.forcing import forced_steps
from nmt_desktop.core.decoding.results import Hypothesis, Step
from nmt_desktop.core.decoding.search import BeamState, Prefix, beam_search, greedy_or_sample, hypothesis_of
from nmt_desktop.core.model.transformer import Transformer


class Search:
    """One search over a batch of sources (B, S): greedy, sampling or beam by `cfg`, teacher forcing when
    `targets` (one id list per row) are given. Iterate for each position's `Step`s; once it has run to the
    end, `hypotheses[b]` holds row b's n-best (attention as wide as the batch) and `encoder_attention`
    (B, L, H, S, S) the encoder's self-attention when asked for. `beam_state`: beam search's tree.
    Stopping early is safe: the search's state is simply dropped. `knn`: the memory's neighbours mixed into the
    searches' steps (core/adaptation; teacher forcing never mixes)."""

    def __init__(self, model: Transformer, src: torch.Tensor, cfg: DecodeConfig, backend: StepBackend,
                 prefix: Prefix | None = None, targets: Sequence[Sequence[int]] | None = None,
                 knn: KnnMixture | None = None):
        self.cfg, self.rows, self.eos = cfg, src.shape[0], model.config.eos_id
        self.beam_state: BeamState | None = None
        if targets is not None:
            self._search = forced_steps(model, src, targets, cfg, backend)
        elif cfg.beam_size > 1:
            self.beam_state = BeamState()
            self._search = beam_search(model, src, cfg, self.beam_state, prefix, backend, knn)
        else:
            self._search = greedy_or_sample(model, src, cfg, prefix, backend, knn)
        self.hypotheses: list[list[Hypothesis]] | None = None
        self.encoder_attention: np.ndarray | None = None

    def __iter__(self) -> Iterator[list[Step]]:
        per_row: list[list[Step]] = [[] for _ in range(self.rows)]  # greedy-like searches: each row's steps
        while True:
            try:
                steps = next(self._search)
            except StopIteration as end:
                self.encoder_attention = end.value
                break
            if self.beam_state is None:
                for step in steps:
                    per_row[step.row].append(step)
            yield steps
        if self.beam_state is not None:
            self.hypotheses, self.encoder_attention = self.beam_state.results, self.beam_state.encoder_attention
        else:
            self.hypotheses = [[hypothesis_of(steps, self.cfg, self.eos)] for steps in per_row]

    def run(self) -> list[list[Hypothesis]]:
        """Run to the end without looking at the steps; the n-best of each row."""
        for _ in self:
            pass
        assert self.hypotheses is not None
        return self.hypotheses


def length_sorted(keys: Sequence, batch_size: int) -> Iterator[list[int]]:
    """Indices of `keys` in batches of at most `batch_size`, shortest key first (ties keep their order), so
    a batch pads little; callers put results back in input order."""
    order = sorted(range(len(keys)), key=keys.__getitem__)
    step = max(1, batch_size)
    for start in range(0, len(order), step):
        yield order[start: start + step]

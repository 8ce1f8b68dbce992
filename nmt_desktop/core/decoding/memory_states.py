"""Building a search's kNN datastore (core/adaptation) from the translation memory: each sentence's best
memory matches force-decoded once, all in one batch, for the decoder's final state at every target position.

The same backend as the search runs the forced decode, so an exact repeat's keys are the very states the
search will reach (distance ~0: the memory's translation comes back). A match whose source or target does not
fit the model is left out; a sentence without matches gets no keys, and a batch without any gets no mixture
(`None`): the search is then the plain model's, bit for bit.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch import Tensor

from nmt_desktop.core.adaptation.datastore import Datastore, MatchStates
from nmt_desktop.core.adaptation.memory_use import MemorySource
from nmt_desktop.core.adaptation.mixture import KnnMixture
from nmt_desktop.core.adaptation.settings import Adaptation
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.backends.step_backend import StepBackend
from nmt_desktop.core.decoding.search import _prepare, keep_rows
from nmt_desktop.core.model.transformer import Transformer

__all__ = ["forced_states", "memory_mixture"]

_PLAIN = DecodeConfig(attention=False)


def forced_states(model: Transformer, backend: StepBackend, src: Tensor, targets: Sequence[Sequence[int]]
                  ) -> list[Tensor]:
    """Teacher forcing of targets (ids, </s> last) on sources (M, S): each row's final states (T_i, D)."""
    max_len = max(len(t) for t in targets)
    with torch.inference_mode():
        state, tokens, _ = _prepare(model, backend, src, _PLAIN, 1, max_len)
        states = torch.zeros(src.shape[0], max_len, model.config.d_model)  # (M, T, D)
    alive = list(range(src.shape[0]))
    for index in range(max_len):
        with torch.inference_mode():
            out = backend.step(state, tokens, False, False, True)
            states[alive, index] = out.hidden.float()
            tokens = torch.tensor([targets[r][index] for r in alive], dtype=torch.long, device=src.device)  # (R,)
        keep = [i for i, r in enumerate(alive) if index + 1 < len(targets[r])]
        if not keep:
            break
        tokens, alive = keep_rows(backend, state, tokens, alive, keep)
    return [states[r, : len(t)] for r, t in enumerate(targets)]


def memory_mixture(model: Transformer, backend: StepBackend, adaptation: Adaptation | None, texts: Sequence[str],
                   source_ids: Callable[[str], list[int]], target_ids: Callable[[str], list[int]],
                   batch_ids: Callable[[Sequence[Sequence[int]]], Tensor]
                   ) -> tuple[KnnMixture | None, list[list[MemorySource]]]:
    """The mixture for a search over `texts` (its batch, in order) and each text's matches that built it.

    source_ids / target_ids: a memory segment's ids as the translator reads them (target without </s>);
    batch_ids: padded (M, S) sources."""
    used: list[list[MemorySource]] = [[] for _ in texts]
    if adaptation is None or not adaptation.enabled:
        return None, used
    limit, eos = model.config.max_positions, model.config.eos_id
    rows: list[tuple[int, MemorySource, list[int], list[int]]] = []  # (sentence, match, source ids, target ids)
    for b, text in enumerate(texts):
        for match in adaptation.lookup(text):
            entry = match.entry
            try:
                src, tgt = source_ids(entry.source), target_ids(entry.target) + [eos]
            except ValueError:  # a segment too long for the model (InputTooLongError) adapts nothing
                continue
            if len(src) > limit or len(tgt) > limit - 1:
                continue
            source = MemorySource(int(entry.id), entry.source, entry.target, float(match.score) / 100.0)
            rows.append((b, source, src, tgt))
            used[b].append(source)
    if not rows:
        return None, used
    states = forced_states(model, backend, batch_ids([r[2] for r in rows]), [r[3] for r in rows])
    store = Datastore.of([MatchStates(source, b, keys.to(model.output_weight.device), tgt)
                          for (b, source, _src, tgt), keys in zip(rows, states)], len(texts))
    if store is None:
        return None, used
    return KnnMixture(store, adaptation.k, adaptation.temperature, adaptation.weight, adaptation.max_weight), used

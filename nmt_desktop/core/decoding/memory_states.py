"""Building a search's kNN datastore (core/adaptation) from the translation memory: each sentence's best
memory matches force-decoded for the decoder's final state at every target position, each segment once however
many sentences match it, in length-sorted chunks (little padding).

The forced decode is one parallel pass of the model's decoder over every position (teacher forcing needs no
step-by-step search), so it costs about one decoding step; its states equal the steps' within float rounding
(tests/core/adaptation), so an exact repeat's keys are the states the search reaches (distance ~0: the
memory's translation comes back). A match whose source or target does not
fit the model is left out; a sentence without matches gets no keys, and a batch without any gets no mixture
(`None`): the search is then the plain model's, bit for bit.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Sequence

import torch
from torch import Tensor

from nmt_desktop.core.adaptation.datastore import Datastore, MatchStates
from nmt_desktop.core.adaptation.kept_states import KeptStates, state_name
from nmt_desktop.core.adaptation.memory_use import MemorySource
from nmt_desktop.core.adaptation.mixture import KnnMixture
from nmt_desktop.core.adaptation.settings import Adaptation
from nmt_desktop.core.model.transformer import Transformer

__all__ = ["CHUNK", "MemoryKeys", "decoded_states", "forced_states", "memory_mixture", "segment_row"]


class MemoryKeys:
    """A translator's forced states of the memory segments it has used, least recently used dropped past `size`:
    in a stream the same segments are matched again and again, and each is force-decoded once. Keyed by the
    entry's id and its text, so an edited segment is decoded anew. `kept`: the states kept beside the memory for
    this model (core/adaptation/kept_states.py), read where this process has not decoded a segment yet and
    given each newly decoded one; None: nothing read or written there.

    `generation` counts in-place weight changes (online learning): a state is kept with the generation it was
    decoded under. Other matches use it however old (as good as fresh, RESULTS); an exact match asks for a state
    of the current weights (`get(key, fresh=True)`), because a repeat is recognised by its states lying at
    distance ~0 from the segment's, which holds only under the same weights."""

    def __init__(self, size: int = 2000):
        self.size = size
        self.kept: KeptStates | None = None
        self.generation = 0
        self._states: OrderedDict[tuple[int, str, str], tuple[int, Tensor]] = OrderedDict()
        # each segment's (source ids, target ids with </s>), None when it does not fit: tokenized once
        self._ids: OrderedDict[tuple[int, str, str], tuple[list[int], list[int]] | None] = OrderedDict()

    def ids(self, key: tuple[int, str, str], make: Callable[[], tuple[list[int], list[int]] | None]
            ) -> tuple[list[int], list[int]] | None:
        """The segment's ids, made by `make` at its first use."""
        if key in self._ids:
            self._ids.move_to_end(key)
            return self._ids[key]
        ids = self._ids[key] = make()
        while len(self._ids) > self.size:
            self._ids.popitem(last=False)
        return ids

    def get(self, key: tuple[int, str, str], fresh: bool = False) -> Tensor | None:
        """The segment's states; with `fresh`, only if decoded under the current weights."""
        held = self._states.get(key)
        if held is None or (fresh and held[0] != self.generation):
            return None
        self._states.move_to_end(key)
        return held[1]

    def segments(self) -> list[tuple[int, str, str]]:
        """The segments whose states are held (entry id, source, target), least recently used first."""
        return list(self._states)

    def put(self, key: tuple[int, str, str], states: Tensor) -> None:
        """Keep states decoded under the current weights."""
        self._states[key] = (self.generation, states)
        self._states.move_to_end(key)
        while len(self._states) > self.size:
            self._states.popitem(last=False)

def forced_states(model: Transformer, src: Tensor, targets: Sequence[Sequence[int]]) -> list[Tensor]:
    """Teacher forcing of targets (ids, </s> last) on sources (M, S) in one parallel decoder pass (not step by
    step: every position at once costs about one step): each row's final states (T_i, D)."""
    cfg = model.config
    width = max(len(t) for t in targets)
    decoder_in = torch.full((len(targets), width), cfg.pad_id, dtype=torch.long, device=src.device)  # (M, T)
    for r, t in enumerate(targets):
        decoder_in[r, : len(t)] = torch.tensor([cfg.decoder_start_id, *t[:-1]], dtype=torch.long)
    with torch.inference_mode():
        hidden = model.decode(decoder_in, model.encode(src), need_hidden=True, need_logits=False).hidden.float()
    return [hidden[r, : len(t)] for r, t in enumerate(targets)]


Row = tuple[int, MemorySource, list[int], list[int]]  # (sentence, segment, source ids, target ids with </s>)


def segment_row(model: Transformer, sentence: int, source: MemorySource, source_ids: Callable[[str], list[int]],
                target_ids: Callable[[str], list[int]], cache: MemoryKeys | None = None) -> Row | None:
    """A memory segment as the model reads it; None when it does not fit the model (it adapts nothing).
    cache: where the segment's ids are kept (a segment is matched by sentence after sentence)."""

    def tokenized() -> tuple[list[int], list[int]] | None:
        try:
            src, tgt = source_ids(source.source), target_ids(source.target) + [model.config.eos_id]
        except ValueError:  # InputTooLongError
            return None
        limit = model.config.max_positions
        return None if len(src) > limit or len(tgt) > limit - 1 else (src, tgt)

    ids = tokenized() if cache is None else cache.ids((source.entry_id, source.source, source.target), tokenized)
    return None if ids is None else (sentence, source, *ids)


CHUNK = 8  # segments per forced pass: length-sorted chunks this small waste little on padding (RESULTS.md)


def decoded_states(model: Transformer, rows: Sequence[Row], batch_ids: Callable[[Sequence[Sequence[int]]], Tensor],
                   cache: MemoryKeys | None) -> list[Tensor]:
    """Each row's forced states (T, D): from the cache, the others decoded (and kept there) once per segment
    (several sentences of a batch often match the same one), in length-sorted chunks of `CHUNK`. An exact match
    (weight 1: the sentence is the segment's source) gets states of the current weights (`MemoryKeys`)."""
    keys = [(s.entry_id, s.source, s.target) for _b, s, _src, _tgt in rows]
    exact = {key for key, (_b, s, _src, _tgt) in zip(keys, rows) if s.weight >= 1.0}
    found: dict[tuple[int, str, str], Tensor] = {}
    todo: dict[tuple[int, str, str], Row] = {}
    for key, row in zip(keys, rows):
        states = None if cache is None else cache.get(key, fresh=key in exact)
        if states is not None:
            found[key] = states
        else:
            todo.setdefault(key, row)
    if cache is not None and cache.kept is not None:  # decoded by an earlier process
        for key in list(todo):
            states = cache.kept.get(state_name(*key))
            # (T, D) as this model reads the segment; else (another tokenizer, a damaged file) decoded again
            if states is not None and tuple(states.shape) == (len(todo[key][3]), model.config.d_model):
                found[key] = states
                cache.put(key, states)
                del todo[key]
    pending = sorted(todo, key=lambda k: (len(todo[k][2]), len(todo[k][3])))
    for start in range(0, len(pending), CHUNK):
        chunk = pending[start: start + CHUNK]
        for key, decoded in zip(chunk, forced_states(model, batch_ids([todo[k][2] for k in chunk]),
                                                     [todo[k][3] for k in chunk])):
            found[key] = decoded.clone()  # not a view of the chunk's tensor: kept alone in the cache
            if cache is not None:
                cache.put(key, found[key])
    if pending and cache is not None and cache.kept is not None:
        cache.kept.put({state_name(*key): found[key] for key in pending})
    return [found[key] for key in keys]


def memory_mixture(model: Transformer, adaptation: Adaptation | None, texts: Sequence[str],
                   source_ids: Callable[[str], list[int]], target_ids: Callable[[str], list[int]],
                   batch_ids: Callable[[Sequence[Sequence[int]]], Tensor], cache: MemoryKeys | None = None
                   ) -> tuple[KnnMixture | None, list[list[MemorySource]]]:
    """The mixture for a search over `texts` (its batch, in order) and each text's matches that built it.

    source_ids / target_ids: a memory segment's ids as the translator reads them (target without </s>);
    batch_ids: padded (M, S) sources. cache: states of segments decoded before (only the others are decoded)."""
    used: list[list[MemorySource]] = [[] for _ in texts]
    if adaptation is None or not adaptation.enabled:
        return None, used
    rows: list[Row] = []
    for b, text in enumerate(texts):
        for match in adaptation.lookup(text):
            if match.score < adaptation.knn_min_score:  # a match (for the gate), too weak to build keys
                continue
            entry = match.entry
            row = segment_row(model, b, MemorySource(int(entry.id), entry.source, entry.target,
                                                     float(match.score) / 100.0), source_ids, target_ids, cache)
            if row is not None:
                rows.append(row)
                used[b].append(row[1])
    if not rows:
        return None, used
    device = model.output_weight.device
    store = Datastore.of([MatchStates(source, b, decoded.to(device), tgt) for (b, source, _src, tgt), decoded
                          in zip(rows, decoded_states(model, rows, batch_ids, cache))], len(texts))
    if store is None:
        return None, used
    return KnnMixture(store, adaptation.k, adaptation.temperature, adaptation.weight, adaptation.max_weight,
                      adaptation.reach), used

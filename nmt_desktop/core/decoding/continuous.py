"""Greedy decoding in which sentences join a running batch and leave it as they finish (continuous batching).

A server's clients each send one sentence and wait for its answer. A batch decoded to its end runs as many
steps as its longest sentence, with ever fewer rows, and the clients it already answered send their next
sentences to a decoder that is busy with the stragglers: at 32 clients such batches cost 1.27x offline's
length-sorted ones and left the decoder idle between them (benchmarks/RESULTS.md, issue 43). Here a finished
row leaves at once (its `Translation` is handed back after that step) and a waiting sentence takes its slot
at the next step, so the batch stays as full as the clients keep it.

Each row has its own position: the compiled step takes a position per row (native/decode_step.cpp's
`row_pos`), writes that row's key and value at its own position, attends to its own cached positions only,
and reads only its own source's positions (`row_src`: no padding bias). Rows live in the first `len(rows)` slots of buffers made
for `capacity` rows; a finished row's slot takes the last row's contents, so the live rows stay a prefix and
every step runs on views. A row's steps, hypothesis and `Translation` are made as `greedy_or_sample` and
`Translator.translate_units` make them, and its tokens are those of a batch of its own (to float rounding,
as any batch's; tests/core/decoding/test_continuous.py).

Only what a server's plain line needs: the compiled backend, greedy choice, no forced prefix, no memory
mixture, no minimum length (`continuous_applies`); everything else takes the ordinary searches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import torch
from torch import Tensor

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.backends.compiled_encoder import encode_sources
from nmt_desktop.core.decoding.naming import translation_of
from nmt_desktop.core.decoding.results import Step, Translation, Unit
from nmt_desktop.core.decoding.search import alternatives, hypothesis_of, masked_ids

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator

__all__ = ["ContinuousGreedy", "Prepared", "continuous_applies"]


def continuous_applies(translator: "Translator", cfg: DecodeConfig) -> bool:
    """Whether `ContinuousGreedy` decodes `cfg` on this translator exactly as its ordinary greedy search would."""
    adapting = translator.adaptation is not None and getattr(translator.adaptation, "enabled", True)
    return (translator.backend.name == "compiled" and cfg.beam_size == 1 and not cfg.sample and cfg.nbest == 1
            and cfg.min_length == 0 and not cfg.self_attention and not adapting)


@dataclass
class Prepared:
    """Sentences encoded for `ContinuousGreedy.join`: their units, target limits, source lengths and each
    decoder layer's cross-attention keys (b*H, dh, s) and values (b*H, s, dh), s their widest source."""

    units: list[Unit]
    limits: list[int]
    lengths: list[int]
    keys_t: list[Tensor]
    values: list[Tensor]

    def split(self, count: int, n_heads: int) -> tuple["Prepared", "Prepared"]:
        """The first `count` sentences and the rest (views, no copies)."""
        heads = count * n_heads
        return (Prepared(self.units[:count], self.limits[:count], self.lengths[:count],
                         [k[:heads] for k in self.keys_t], [v[:heads] for v in self.values]),
                Prepared(self.units[count:], self.limits[count:], self.lengths[count:],
                         [k[heads:] for k in self.keys_t], [v[heads:] for v in self.values]))


@dataclass
class _Row:
    unit: Unit
    tag: Any  # the caller's, handed back with the row's Translation
    max_len: int  # target tokens at most (search.max_target_lengths)
    source_len: int  # S of this row's own source
    steps: list[Step] = field(default_factory=list)


class ContinuousGreedy:
    """A batch of at most `capacity` greedy rows that `join` between steps and leave when they finish."""

    def __init__(self, translator: "Translator", cfg: DecodeConfig, capacity: int = 32):
        if not continuous_applies(translator, cfg):
            raise ValueError("continuous batching needs the compiled backend and plain greedy decoding")
        self.translator, self.cfg, self.capacity = translator, cfg, max(1, capacity)
        self.model = translator.model
        backend = translator.backend
        self._compiled = backend.compiled  # type: ignore[attr-defined]
        self._encoder = backend.encoder  # type: ignore[attr-defined]
        self.n_heads = backend.prepared.n_heads  # type: ignore[attr-defined]
        self.head_dim = backend.prepared.head_dim  # type: ignore[attr-defined]
        self.rows: list[_Row] = []
        self._tokens = torch.zeros(self.capacity, dtype=torch.long)  # (C,) each slot's next input token
        self._positions = torch.zeros(self.capacity, dtype=torch.long)  # (C,) each slot's target position
        self._self_k: list[Tensor] = []  # per layer (C, H, T, dh)
        self._self_v: list[Tensor] = []
        self._keys_t: list[Tensor] = []  # per layer (C*H, dh, S)
        self._values: list[Tensor] = []  # per layer (C*H, S, dh)
        self._sources = torch.ones(self.capacity, dtype=torch.long)  # (C,) each slot's source length

    @property
    def free(self) -> int:
        """Slots a `join` can fill now."""
        return self.capacity - len(self.rows)

    def prepare(self, units: Sequence[Unit]) -> "Prepared":
        """Encode `units` together for a later `join`. It touches no batch state and the compiled encoder
        (backends/compiled_encoder.py: the sentences packed without padding, one call) runs without Python's
        interpreter lock, so another thread may prepare while this one steps (server/encoding_thread.py)."""
        positions = self.model.config.max_positions
        sources = [u.source_ids for u in units]
        lengths = [len(ids) for ids in sources]
        limits = [self.cfg.max_length(n, positions) for n in lengths]  # max_target_lengths, no prefix
        with torch.inference_mode():
            encoded = encode_sources(self._encoder, sources)
        return Prepared(list(units), limits, lengths, encoded.keys_t, encoded.values)

    def join(self, prepared: "Prepared", tags: Sequence[Any]) -> None:
        """Start prepared sentences (at most `free`) at the next step; `tags` come back with their Translations."""
        b, H = len(prepared.units), self.n_heads
        if b > self.free:
            raise ValueError(f"{b} sentences for {self.free} free rows")
        if not b:
            return
        with torch.inference_mode():
            s = prepared.keys_t[0].shape[2]
            self._reserve(s, max(prepared.limits) + 1)
            first = len(self.rows)
            heads = slice(first * H, (first + b) * H)
            for i, (keys_t, values) in enumerate(zip(prepared.keys_t, prepared.values)):
                self._keys_t[i][heads, :, :s] = keys_t
                self._values[i][heads, :s] = values
            self._tokens[first: first + b] = self.model.config.decoder_start_id
            self._positions[first: first + b] = 0
            self._sources[first: first + b] = torch.tensor(prepared.lengths)
        self.rows.extend(_Row(u, t, limit, n) for u, t, limit, n in
                         zip(prepared.units, tags, prepared.limits, prepared.lengths))

    def step(self) -> list[tuple[Any, Translation]]:
        """One decoding step of every row; the rows that finished, as (tag, Translation), leave the batch."""
        if not self.rows:
            return []
        with torch.inference_mode():
            return self._advance(len(self.rows))

    def _advance(self, n: int) -> list[tuple[Any, Translation]]:
        H, cfg, config = self.n_heads, self.cfg, self.model.config
        eos = config.eos_id
        out = self._compiled.run(
            self._tokens[:n], [k[:n] for k in self._self_k], [v[:n] for v in self._self_v],
            [k[: n * H] for k in self._keys_t], [v[: n * H] for v in self._values], None,
            0, cfg.attention, False, False, self._positions[:n], self._sources[:n])
        k = max(1, min(cfg.alternatives, out[0].shape[-1]))
        tokens, chosen, alt_ids, alt_lp = self.translator.backend.pick(
            out[0], k, masked_ids(0, cfg, eos, config.pad_id))  # min_length 0: the same mask at every position
        cross = out[1].float().numpy() if cfg.attention else None  # (n, L, H, S)
        token_list, logprobs = tokens.tolist(), chosen[:, 0].tolist()
        positions = self._positions[:n].tolist()
        finished: list[tuple[Any, Translation]] = []
        keep: list[int] = []
        for j, (row, token, index) in enumerate(zip(self.rows, token_list, positions)):
            row.steps.append(Step(index, token, "", logprobs[j], alternatives(alt_ids[j], alt_lp[j]),
                                  None if cross is None else cross[j, :, :, : row.source_len], is_eos=token == eos))
            if token != eos and index + 1 < row.max_len:
                keep.append(j)
                continue
            hypothesis = hypothesis_of(row.steps, cfg, eos)
            finished.append((row.tag, translation_of(self.translator.tokenizers.target, row.unit, [hypothesis], None)))
        self._tokens[:n] = tokens
        self._positions[:n] += 1
        self._compact(keep)
        if not self.rows and (self._self_k[0].shape[2] > _KEPT or self._keys_t[0].shape[2] > _KEPT):
            self._self_k, self._self_v, self._keys_t, self._values = [], [], [], []  # a long sentence's, not kept
        return finished

    # --- the buffers -----------------------------------------------------------------------------

    def _reserve(self, sources: int, targets: int) -> None:
        """Room for sources of `sources` positions and `targets` target positions in every slot (buffers made
        or grown; a grown buffer keeps what the live rows hold)."""
        C, H, dh = self.capacity, self.n_heads, self.head_dim
        layers = len(self.model.decoder_layers)
        if not self._self_k:
            width, depth = _rounded(sources), _rounded(targets)
            self._self_k = [torch.empty(C, H, depth, dh) for _ in range(layers)]  # a row reads only what it wrote
            self._self_v = [torch.empty(C, H, depth, dh) for _ in range(layers)]
            self._keys_t = [torch.empty(C * H, dh, width) for _ in range(layers)]  # and its own source's width
            self._values = [torch.empty(C * H, width, dh) for _ in range(layers)]
            return
        S, T = self._keys_t[0].shape[2], self._self_k[0].shape[2]
        if sources > S:
            width = _rounded(sources)
            self._keys_t = [_widened(t, 2, width) for t in self._keys_t]
            self._values = [_widened(v, 1, width) for v in self._values]
        if targets > T:
            depth = _rounded(targets)
            self._self_k = [_widened(t, 2, depth) for t in self._self_k]
            self._self_v = [_widened(t, 2, depth) for t in self._self_v]

    def _compact(self, keep: list[int]) -> None:
        """Keep rows `keep` (ascending) as the live prefix: each hole before the new end takes a kept row from
        past it (those rows' buffers copied, not the batch's)."""
        end = len(keep)
        if end == len(self.rows):
            return
        kept = set(keep)
        holes = [j for j in range(end) if j not in kept]
        movers = [j for j in keep if j >= end]  # as many as holes
        rows = list(self.rows)
        for hole, mover in zip(holes, movers):
            rows[hole] = rows[mover]
        self.rows = rows[:end]
        if not holes:
            return
        C, H, dh = self.capacity, self.n_heads, self.head_dim
        order = torch.arange(end)  # (end,) the slot each live row now reads from
        to, frm = torch.tensor(holes), torch.tensor(movers)  # (m,) slots
        order[to] = frm
        reorder = torch.ops.nmt_desktop.reorder_filled  # in place, only the rows that move (native/search_ops.cpp)
        with torch.inference_mode():
            written = int(self._positions.index_select(0, frm).max())  # target positions the movers hold
            reorder([*self._self_k, *self._self_v], order, written)
            S = self._keys_t[0].shape[2]
            reorder([k.view(C, H, dh, S) for k in self._keys_t], order, dh)  # every key of the movers' sources
            reorder([v.view(C, H, S, dh) for v in self._values], order, S)
            for buffer in (self._tokens, self._positions, self._sources):
                buffer.index_copy_(0, to, buffer.index_select(0, frm))


_KEPT = 64  # buffers wider than this (source or target positions) are let go when the search empties


def _rounded(size: int, step: int = 16) -> int:
    return -(-max(size, 1) // step) * step


def _widened(buffer: Tensor, dim: int, size: int) -> Tensor:
    """`buffer` with dimension `dim` widened to `size` (the new part not initialised: no row reads it before
    writing it)."""
    shape = list(buffer.shape)
    old, shape[dim] = shape[dim], size
    wider = torch.empty(shape, dtype=buffer.dtype)
    wider.narrow(dim, 0, old).copy_(buffer)
    return wider

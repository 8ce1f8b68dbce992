"""Explicit key/value cache for incremental decoding.

Decoder self-attention keys and values grow by one position per step (written into a buffer that
doubles when full, so a step costs no copy of the past); cross-attention keys and values are
computed once per source and only reordered. `reorder(indices)` follows beam search. Tensors only:
how a step reads them is the decoding backend's business (core/decoding/backends/step_backend.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass
class LayerKV:
    """One decoder layer's cached tensors, all (B, H, *, dh)."""

    self_k: Tensor  # (B, H, capacity, dh)
    self_v: Tensor  # (B, H, capacity, dh)
    cross_k: Tensor  # (B, H, S, dh)
    cross_v: Tensor  # (B, H, S, dh)


class KVCache:
    """Per-layer K/V for a batch of partial hypotheses; `length` target positions are filled."""

    def __init__(self, layers: list[LayerKV], src_mask: Tensor | None, length: int = 0):
        self.layers = layers
        self.src_mask = src_mask  # (B, 1, 1, S) bool, or None when no source position is padding
        self.length = length

    @classmethod
    def create(cls, cross_kv: list[tuple[Tensor, Tensor]], src_mask: Tensor | None,
               capacity: int = 64) -> "KVCache":
        """Empty self-attention buffers next to precomputed cross-attention K/V (B, H, S, dh)."""
        layers = []
        for k, v in cross_kv:
            B, H, _, dh = k.shape
            empty = k.new_empty(B, H, max(capacity, 1), dh)
            layers.append(LayerKV(empty, torch.empty_like(empty), k, v))
        return cls(layers, src_mask)

    @property
    def batch_size(self) -> int:
        return self.layers[0].cross_k.shape[0]

    def append(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Write new positions k, v (B, H, t, dh) after the filled ones; return all (B, H, length + t, dh).

        `length` moves only in `advance`, once every layer has appended the same step.
        """
        end = self.length + k.shape[2]
        kv = self.reserve(layer, end)
        kv.self_k[:, :, self.length:end] = k
        kv.self_v[:, :, self.length:end] = v
        return kv.self_k[:, :, :end], kv.self_v[:, :, :end]

    def reserve(self, layer: int, end: int) -> LayerKV:
        """Make room for `end` self-attention positions in `layer` (doubling the buffers when full)."""
        kv = self.layers[layer]
        if end > kv.self_k.shape[2]:
            kv.self_k, kv.self_v = self._grow(kv.self_k, end), self._grow(kv.self_v, end)
        return kv

    def advance(self, t: int) -> None:
        self.length += t

    def _grow(self, buf: Tensor, needed: int) -> Tensor:
        B, H, cap, dh = buf.shape
        bigger = buf.new_empty(B, H, max(needed, 2 * cap), dh)
        bigger[:, :, : self.length] = buf[:, :, : self.length]
        return bigger

    def reorder(self, indices: Tensor, cross: bool = True) -> None:
        """Keep batch rows `indices` (LongTensor (B',)), e.g. the parents of surviving beams.

        `cross=False` skips the cross-attention tensors, valid when every row is replaced by a row
        of the same source (beams of one sentence share identical cross K/V).
        """
        for kv in self.layers:
            kv.self_k = kv.self_k.index_select(0, indices)
            kv.self_v = kv.self_v.index_select(0, indices)
        if cross:
            self.reorder_cross(indices)

    def reorder_cross(self, indices: Tensor) -> None:
        """`reorder` of the cross-attention K/V and the source mask only."""
        for kv in self.layers:
            kv.cross_k = kv.cross_k.index_select(0, indices)
            kv.cross_v = kv.cross_v.index_select(0, indices)
        if self.src_mask is not None:
            self.src_mask = self.src_mask.index_select(0, indices)

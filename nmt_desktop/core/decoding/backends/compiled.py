"""The compiled backend: the fused step and the token choice in C++ (native/, built by native_library.py).

The step is `fused_step` in one call (compiled_step.py); continuous batching's encoder is one call too
(compiled_encoder.py); picking tokens, beam candidates and the
reorder of the self-attention cache are one call each into native/search_ops.cpp. Available where
the library is loaded and the model runs on the CPU in float32 or int8 (`compiled_step_applies`).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from nmt_desktop.core.decoding.backends.compiled_encoder import prepare_compiled_encoder
from nmt_desktop.core.decoding.backends.compiled_step import prepare_compiled_step, run_compiled_step
from nmt_desktop.core.decoding.backends.python import FusedState, PythonBackend
from nmt_desktop.core.model.transformer import Transformer

__all__ = ["CompiledBackend"]


class CompiledBackend(PythonBackend):
    """A `PythonBackend` whose step and token choice run in the compiled library."""

    name = "compiled"

    def __init__(self, model: Transformer):
        super().__init__(model)
        self._compiled: object | None = None
        self._encoder: object | None = None

    @property
    def compiled(self) -> object:
        """The C++ `DecodeStep` over the prepared weights, made once."""
        if self._compiled is None:
            self._compiled = prepare_compiled_step(self.prepared)
        return self._compiled

    @property
    def encoder(self) -> object:
        """The C++ `EncodeSources` over the encoder and the cross K/V projections (compiled_encoder.py), made once."""
        if self._encoder is None:
            self._encoder = prepare_compiled_encoder(self.model)
        return self._encoder

    def _run(self, state: FusedState, tokens: Tensor, need_cross: bool, need_self: bool, need_hidden: bool
             ) -> tuple[Tensor, Tensor | None, Tensor | None, Tensor | None]:
        return run_compiled_step(self.compiled, state.cache, state.cross, tokens, need_cross, need_self, need_hidden)

    def pick(self, logits: Tensor, k: int, masked: tuple[int, int]) -> tuple[Tensor, Tensor, np.ndarray, np.ndarray]:
        top_lp, top_ids = torch.ops.nmt_desktop.top_logprobs(logits, k, *masked)  # (R, k) each
        return top_ids[:, 0], top_lp[:, :1], top_ids.numpy(), top_lp.numpy()

    def beam_candidates(self, logits: Tensor, scores: Tensor, k_alt: int, masked: tuple[int, int]
                        ) -> tuple[Tensor, Tensor, Tensor, np.ndarray, np.ndarray]:
        top_scores, top_idx, top_lps, alt_ids, alt_lp = torch.ops.nmt_desktop.beam_candidates(
            logits, scores, k_alt, *masked)
        return top_scores, top_idx, top_lps, alt_ids.numpy(), alt_lp.numpy()

    def reorder(self, state: FusedState, indices: Tensor, cross: bool = True) -> None:
        cache = state.cache
        if indices.shape[0] > cache.layers[0].self_k.shape[0]:  # more rows than before: new buffers
            super().reorder(state, indices, cross)
            return
        # in place, only the filled positions of the rows that change
        buffers = torch.ops.nmt_desktop.reorder_filled(
            [b for kv in cache.layers for b in (kv.self_k, kv.self_v)], indices, cache.length)
        for i, kv in enumerate(cache.layers):
            kv.self_k, kv.self_v = buffers[2 * i], buffers[2 * i + 1]
        if cross:
            cache.reorder_cross(indices)
            state.cross = None

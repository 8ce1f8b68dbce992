"""The fused decoding step run by the compiled library (native/decode_step.cpp), when it is built.

`prepare_native_step` hands a `FusedStep`'s prepared tensors to a C++ `DecodeStep` (no copies: the
same weights, oneDNN / fbgemm layouts and dispatch rules as prepared_linear.py); `run_native_step`
then does the whole step in one call from Python instead of ~30 per layer. Same results as
`fused_step` (tests/core/test_native_step.py; int8 up to the last bit, its query scale being
applied inside baddbmm). CPU only; returns None where it does not apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import Tensor

from nmt_desktop.core.decoding import native_library
from nmt_desktop.core.decoding.cache import KVCache

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.fused_step import CrossState, FusedStep

__all__ = ["prepare_native_step", "run_native_step"]


def prepare_native_step(step: "FusedStep") -> object | None:
    """A `torch.classes.nmt_desktop.DecodeStep` for this step, or None (no library, not on the CPU,
    not float32 / int8, or disabled with NMT_DESKTOP_NATIVE=0)."""
    if step.embedding.device.type != "cpu" or step.embedding.dtype != torch.float32 or not native_library.load():
        return None
    native = torch.classes.nmt_desktop.DecodeStep(step.embedding, float(step.embed_scale), step.positions,
                                                  step.n_heads, step.pre_norm, step.activation,
                                                  float(step.query_scale))
    for linear in [p for layer in step.layers
                   for p in (layer.qkv, layer.self_out, layer.cross_q, layer.cross_out, layer.fc1, layer.fc2)] \
            + [step.output]:
        if linear.int8 is not None:
            native.add_linear_int8(linear.int8)
        else:
            native.add_linear(linear.weight_t, linear.bias, linear.onednn_ok, linear.threaded_ok, linear.one_row_ok)
    norms = [n for layer in step.layers for n in (layer.self_norm, layer.cross_norm, layer.ffn_norm)]
    for norm in norms + ([] if step.final_norm is None else [step.final_norm]):
        native.add_norm(norm.weight, norm.bias, norm.eps)
    return native


def run_native_step(native: object, cache: KVCache, cross: "CrossState", tokens: Tensor, need_cross: bool,
                    need_self: bool = False) -> tuple[Tensor, Tensor | None, Tensor | None]:
    """`fused_step` through the library: tokens (B,) -> logits (B, V), cross-attention (B, L, H, S)
    with need_cross, self-attention (B, L, H, length + 1) with need_self."""
    end = cache.length + 1
    layers = [cache.reserve(i, end) for i in range(len(cache.layers))]
    out = native.run(tokens, [kv.self_k for kv in layers], [kv.self_v for kv in layers], cross.keys_t,
                     cross.values, cross.bias, cache.length, need_cross, need_self)
    cache.advance(1)
    return out[0], out[1] if need_cross else None, out[-1] if need_self else None

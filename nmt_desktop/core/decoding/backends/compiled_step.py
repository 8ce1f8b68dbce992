"""The fused decoding step run by the compiled library (native/decode_step.cpp).

`prepare_compiled_step` hands a `FusedStep`'s prepared tensors to a C++ `DecodeStep` (no copies: the
same weights and oneDNN / fbgemm layouts, and the row counts prepared_linear.py chose for the blocked
layout); `run_compiled_step` then does the whole step in one call from Python instead of ~30 per
layer. Same results as `fused_step` (tests/core/decoding/backends/test_backends.py; int8 up to the last bit, its query
scale being applied inside baddbmm). CPU only.
"""

from __future__ import annotations

import torch
from torch import Tensor

from nmt_desktop.core.decoding.backends import native_library
from nmt_desktop.core.decoding.backends.fused_step import CrossState, FusedStep
from nmt_desktop.core.model.cache import KVCache

__all__ = ["compiled_step_applies", "prepare_compiled_step", "run_compiled_step"]


def compiled_step_applies(weight: Tensor) -> bool:
    """Whether the compiled step can run a model whose embedding is `weight`: the library is loaded
    (built, not disabled with NMT_DESKTOP_NATIVE=0) and the model is on the CPU in float32 / int8."""
    return weight.device.type == "cpu" and weight.dtype == torch.float32 and native_library.load()


def prepare_compiled_step(step: FusedStep) -> object:
    """A `torch.classes.nmt_desktop.DecodeStep` over this step's tensors (see `compiled_step_applies`)."""
    compiled = torch.classes.nmt_desktop.DecodeStep(step.embedding, float(step.embed_scale), step.positions,
                                                    step.n_heads, step.pre_norm, step.activation,
                                                    float(step.query_scale))
    for linear in [p for layer in step.layers
                   for p in (layer.qkv, layer.self_out, layer.cross_q, layer.cross_out, layer.fc1, layer.fc2)] \
            + [step.output]:
        if linear.int8 is not None:
            compiled.add_linear_int8(linear.int8)
        else:
            compiled.add_linear(linear.weight_t, linear.bias, *linear.blocked_from_rows)
    norms = [n for layer in step.layers for n in (layer.self_norm, layer.cross_norm, layer.ffn_norm)]
    for norm in norms + ([] if step.final_norm is None else [step.final_norm]):
        compiled.add_norm(norm.weight, norm.bias, norm.eps)
    return compiled


def run_compiled_step(compiled: object, cache: KVCache, cross: CrossState, tokens: Tensor, need_cross: bool,
                      need_self: bool = False, need_hidden: bool = False
                      ) -> tuple[Tensor, Tensor | None, Tensor | None, Tensor | None]:
    """`fused_step` through the library: tokens (B,) -> logits (B, V), cross-attention (B, L, H, S)
    with need_cross, self-attention (B, L, H, length + 1) with need_self, the final state (B, D) with need_hidden."""
    end = cache.length + 1
    layers = [cache.reserve(i, end) for i in range(len(cache.layers))]
    out = compiled.run(tokens, [kv.self_k for kv in layers], [kv.self_v for kv in layers], cross.keys_t,
                       cross.values, cross.bias, cache.length, need_cross, need_self, need_hidden, None, None)
    cache.advance(1)
    out = list(out)
    hidden = out.pop() if need_hidden else None
    return out[0], out[1] if need_cross else None, out[-1] if need_self else None, hidden

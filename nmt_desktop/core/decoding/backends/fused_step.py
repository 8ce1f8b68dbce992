"""The decoder's single-position step as one flat function over prepared tensors.

A single-position step on the cache is what every search runs per generated token. Through the
modules (`Transformer.decode`, the reference backend) it costs ~50 tensor operations and many
Python calls per layer, which at batch 1 on a small model take longer than the arithmetic.
`FusedStep` holds what that step needs, prepared once per model:

* every projection as one `PreparedLinear` (prepared_linear.py: the fastest weight layout for the
  number of rows; with oneDNN the output projections also add the residual and the first FFN
  layer applies the activation), or the int8 kernel of an int8 model (core/decoding/int8.py);
* the query scale 1/sqrt(dh) folded into the query columns of the float weights;
* cross-attention keys transposed once per source to (B*H, dh, S) and the source padding turned
  into an additive bias, so each cross-attention is `baddbmm`, `softmax`, `bmm`.

`fused_step` then runs ~30 tensor operations per layer and returns the same logits and cross- and
self-attention weights as the modules (equal within float rounding; tests/core/decoding/backends/test_backends.py).
The Python backend runs it; the compiled backend (compiled_step.py) runs the same step in C++ over
the same `FusedStep`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from nmt_desktop.core.decoding.backends.prepared_linear import PreparedLinear, prepare_linear, prepare_weight

from nmt_desktop.core.model.cache import KVCache
from nmt_desktop.core.model.transformer import Transformer

__all__ = ["CrossState", "FusedStep", "cross_state", "fused_step", "prepare_fused_step"]


@dataclass
class FusedNorm:
    shape: tuple[int, ...]  # (D,)
    weight: Tensor | None  # (D,)
    bias: Tensor | None  # (D,)
    eps: float


@dataclass
class FusedLayer:
    """One decoder layer's prepared weights."""

    qkv: PreparedLinear  # (D -> 3D), query part pre-scaled unless int8
    self_out: PreparedLinear
    cross_q: PreparedLinear  # pre-scaled unless int8
    cross_out: PreparedLinear
    fc1: PreparedLinear
    fc2: PreparedLinear
    self_norm: FusedNorm
    cross_norm: FusedNorm
    ffn_norm: FusedNorm


@dataclass
class FusedStep:
    """Everything the fused step needs from a model, prepared once (a snapshot of its weights)."""

    layers: list[FusedLayer]
    embedding: Tensor  # (V, D) target embedding
    embed_scale: float
    positions: Tensor  # (P, D)
    output: PreparedLinear  # (D -> V), logits bias included
    final_norm: FusedNorm | None  # decoder norm (pre-norm models)
    pre_norm: bool
    n_heads: int
    head_dim: int
    query_scale: float  # applied after the query projection (int8: 1/sqrt(dh); float: 1, folded in)
    activation: str


@dataclass
class CrossState:
    """Per-cache cross-attention tensors in the fused layout (rebuilt after rows are dropped)."""

    keys_t: list[Tensor]  # per layer (B*H, dh, S)
    values: list[Tensor]  # per layer (B*H, S, dh)
    bias: Tensor | None  # (B*H, 1, S) 0 at real tokens, -inf at padding; None without padding


def _norm(norm: nn.LayerNorm) -> FusedNorm:
    return FusedNorm(tuple(norm.normalized_shape), norm.weight, norm.bias, norm.eps)


def prepare_fused_step(model: Transformer) -> FusedStep:
    """A `FusedStep` for a `Transformer` (float32 or int8, see core/decoding/int8.py)."""
    cfg = model.config
    dh = cfg.d_model // cfg.n_heads
    int8 = getattr(model, "int8_output", None) is not None
    scale = 1.0 if int8 else dh ** -0.5
    with torch.no_grad():
        layers = [FusedLayer(
            qkv=prepare_linear(layer.self_attn.qkv_proj, scale, slice(0, cfg.d_model)),
            self_out=prepare_linear(layer.self_attn.out_proj),
            cross_q=prepare_linear(layer.cross_attn.q_proj, scale),
            cross_out=prepare_linear(layer.cross_attn.out_proj),
            fc1=prepare_linear(layer.ffn.fc1),
            fc2=prepare_linear(layer.ffn.fc2),
            self_norm=_norm(layer.self_res.norm),
            cross_norm=_norm(layer.cross_res.norm),
            ffn_norm=_norm(layer.ffn_res.norm),
        ) for layer in model.decoder_layers]
        if int8:
            output = prepare_linear(model.int8_output)
        else:
            output = prepare_weight(model.output_weight, model.logits_bias)  # (V, D)
    return FusedStep(layers, model.tgt_embed.weight.detach(), model.embed_scale, model.positions,
                     output, None if model.decoder_norm is None else _norm(model.decoder_norm),
                     cfg.norm == "pre", cfg.n_heads, dh, dh ** -0.5 if int8 else 1.0, cfg.activation)


def cross_state(cache: KVCache, n_heads: int) -> CrossState:
    """The cache's cross-attention K/V in the fused layout (computed once per source / row set)."""
    keys_t, values = [], []
    for kv in cache.layers:
        B, H, S, dh = kv.cross_k.shape
        keys_t.append(kv.cross_k.reshape(B * H, S, dh).transpose(1, 2).contiguous())  # (B*H, dh, S)
        values.append(kv.cross_v.reshape(B * H, S, dh))  # (B*H, S, dh)
    bias = None
    if cache.src_mask is not None:
        B, S = cache.src_mask.shape[0], cache.src_mask.shape[-1]
        keep = cache.src_mask.reshape(B, 1, 1, S).expand(B, n_heads, 1, S).reshape(B * n_heads, 1, S)
        bias = torch.zeros(keep.shape, dtype=keys_t[0].dtype, device=keep.device).masked_fill_(~keep, float("-inf"))
    return CrossState(keys_t, values, bias)


def _layer_norm(x: Tensor, norm: FusedNorm) -> Tensor:
    return torch.layer_norm(x, norm.shape, norm.weight, norm.bias, norm.eps)


def _residual(y: Tensor, norm: FusedNorm, pre_norm: bool) -> Tensor:
    """The stream after a sublayer's output was added to it: post-norm normalises it."""
    return y if pre_norm else _layer_norm(y, norm)


def fused_step(step: FusedStep, cache: KVCache, cross: CrossState, tokens: Tensor, need_cross: bool,
               need_self: bool = False, need_hidden: bool = False
               ) -> tuple[Tensor, Tensor | None, Tensor | None, Tensor | None]:
    """Decode one new position per row (`cross`: the cache's `cross_state`): tokens (B,) -> logits
    (B, V), with need_cross the cross-attention weights (B, L, H, S), with need_self the
    self-attention weights (B, L, H, length + 1) of this position and with need_hidden the final state
    (B, D) the output projection reads. Appends to and advances the cache.

    Attention runs as `bmm` on (B*H, ...) views; every line is one or two tensor operations, as
    the per-operation cost is what a small model's step is made of.
    """
    B = tokens.shape[0]
    H, dh, pre_norm, scale = step.n_heads, step.head_dim, step.pre_norm, step.query_scale
    BH, D = B * H, H * dh
    pos = cache.length
    n = pos + 1
    x = torch.add(step.positions[pos], step.embedding.index_select(0, tokens), alpha=step.embed_scale)  # (B, D)
    cross_weights, self_weights = [], []
    for i, layer in enumerate(step.layers):
        kv = cache.reserve(i, n)
        # self-attention over the cached positions and this one
        h = _layer_norm(x, layer.self_norm) if pre_norm else x
        q, k, v = layer.qkv(h).view(B, 3, H, dh).unbind(1)  # (B, H, dh) each
        kv.self_k.select(2, pos).copy_(k)  # cache (B, H, capacity, dh)
        kv.self_v.select(2, pos).copy_(v)
        q = q.reshape(BH, 1, dh) if scale == 1.0 else torch.mul(q.reshape(BH, 1, dh), scale)  # (B*H, 1, dh)
        capacity = kv.self_k.shape[2]
        keys = kv.self_k.view(BH, capacity, dh).narrow(1, 0, n)  # (B*H, n, dh)
        probs = torch.softmax(torch.bmm(q, keys.transpose(1, 2)), -1)  # (B*H, 1, n)
        if need_self:
            self_weights.append(probs)
        context = torch.bmm(probs, kv.self_v.view(BH, capacity, dh).narrow(1, 0, n))  # (B*H, 1, dh)
        x = _residual(layer.self_out.add(context.view(B, D), x), layer.self_norm, pre_norm)  # (B, D)
        # cross-attention
        h = _layer_norm(x, layer.cross_norm) if pre_norm else x
        q = layer.cross_q(h).view(BH, 1, dh)  # (B*H, 1, dh)
        if scale != 1.0:
            q = torch.mul(q, scale)
        scores = torch.bmm(q, cross.keys_t[i]) if cross.bias is None else \
            torch.baddbmm(cross.bias, q, cross.keys_t[i])  # (B*H, 1, S)
        probs = torch.softmax(scores, -1)
        if need_cross:
            cross_weights.append(probs)
        context = torch.bmm(probs, cross.values[i])  # (B*H, 1, dh)
        x = _residual(layer.cross_out.add(context.view(B, D), x), layer.cross_norm, pre_norm)
        # feed-forward
        h = _layer_norm(x, layer.ffn_norm) if pre_norm else x
        x = _residual(layer.fc2.add(layer.fc1.activated(h, step.activation), x), layer.ffn_norm, pre_norm)
    cache.advance(1)
    if step.final_norm is not None:
        x = _layer_norm(x, step.final_norm)
    return step.output(x), _per_row(cross_weights, B, H), _per_row(self_weights, B, H), x if need_hidden else None


def _per_row(weights: list[Tensor], B: int, H: int) -> Tensor | None:
    """L tensors (B*H, 1, N) -> (B, L, H, N); None for none."""
    if not weights:
        return None
    return torch.stack(weights).view(len(weights), B, H, weights[0].shape[-1]).transpose(0, 1)

"""The encoder run by the compiled library (native/encode_sources.cpp): sources packed without padding, encoded,
and every decoder layer's cross-attention keys and values made in one call.

Continuous batching (core/decoding/continuous.py) encodes the few sentences that arrived between two steps; the
Python encoder's per-operation overhead and the padding to the longest of them made that cost 0.6-1.1 ms a
sentence against 0.3 ms in offline's length-sorted batches (benchmarks/RESULTS.md, issue 43). The keys and values
come in the fused step's layout (fused_step.CrossState: (b*H, dh, s) and (b*H, s, dh)) with zeros past a
source's own length, which the step's per-row source lengths never read. Same results as
`cross_state(model.start_cache(model.encode(src)))` to float rounding (tests/core/decoding/backends/
test_compiled_encoder.py). CPU, float32 or int8, as the compiled step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
from torch import Tensor

from nmt_desktop.core.decoding.backends.prepared_linear import PreparedLinear, prepare_linear
from nmt_desktop.core.model.transformer import Transformer

__all__ = ["EncodedSources", "encode_sources", "prepare_compiled_encoder"]


@dataclass
class EncodedSources:
    """Each decoder layer's cross-attention keys (b*H, dh, s) and values (b*H, s, dh), s the longest source."""

    keys_t: list[Tensor]
    values: list[Tensor]


def prepare_compiled_encoder(model: Transformer) -> object:
    """A `torch.classes.nmt_desktop.EncodeSources` over the model's encoder and its decoder layers' cross K/V
    projections (a snapshot: prepare again after the weights change). Needs the library loaded
    (compiled_step.compiled_step_applies)."""
    cfg = model.config
    dh = cfg.d_model // cfg.n_heads
    int8 = getattr(model, "int8_output", None) is not None
    scale = 1.0 if int8 else dh ** -0.5  # float: folded into the query rows, as the decoder's prepared step
    with torch.no_grad():
        encoder = torch.classes.nmt_desktop.EncodeSources(
            model.source_embedding.weight.detach(), float(model.embed_scale), model.positions, cfg.n_heads,
            len(model.encoder_layers), cfg.norm == "pre", cfg.activation, dh ** -0.5 if int8 else 1.0)
        linears: list[PreparedLinear] = []
        norms = []
        for layer in model.encoder_layers:
            linears += [prepare_linear(layer.self_attn.qkv_proj, scale, slice(0, cfg.d_model)),
                        prepare_linear(layer.self_attn.out_proj), prepare_linear(layer.ffn.fc1),
                        prepare_linear(layer.ffn.fc2)]
            norms += [layer.attn_res.norm, layer.ffn_res.norm]
        linears += [prepare_linear(layer.cross_attn.kv_proj) for layer in model.decoder_layers]
        if model.encoder_norm is not None:
            norms.append(model.encoder_norm)
        for linear in linears:
            if linear.int8 is not None:
                encoder.add_linear_int8(linear.int8)
            else:
                encoder.add_linear(linear.weight_t, linear.bias, *linear.blocked_from_rows)
        for norm in norms:
            encoder.add_norm(norm.weight, norm.bias, norm.eps)
    return encoder


def encode_sources(encoder: object, sources: Sequence[Sequence[int]]) -> EncodedSources:
    """Encode token-id lists (each non-empty, within the model's positions) together, without padding."""
    lengths = torch.tensor([len(ids) for ids in sources], dtype=torch.long)  # (b,)
    tokens = torch.tensor([t for ids in sources for t in ids], dtype=torch.long)  # (sum of lengths,)
    out = encoder.run(tokens, lengths)  # type: ignore[attr-defined]
    half = len(out) // 2
    return EncodedSources(list(out[:half]), list(out[half:]))

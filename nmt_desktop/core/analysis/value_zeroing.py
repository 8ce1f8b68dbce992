"""Value zeroing (Mohebbi et al. 2023, "Quantifying Context Mixing in Transformers"), the all-layers variant.

Why: like ALTI it asks what reaches the output *through the attention's values*, but measures it by an
intervention instead of a decomposition: a token's value vector is zeroed, so no attention can read it,
while its own residual stream and every attention *weight* computation stay as they are.

What is computed here (the simpler of the two variants the issue allows, chosen because it needs no
rollout, which for an encoder-decoder would need ALTI+'s mixing rule again): for each input token j, its
value vector (W_V u_j + b_V, all heads) is set to zero in *every* layer at once:

- a source token j: in every encoder self-attention and every decoder cross-attention (key position j);
- a decoder input position j (0: the start token, j + 1: the target token y_j): in every decoder
  self-attention.

The score of j for target token y_t is the cosine distance 1 - cos(h_t, h_t^(-j)) between the final decoder
state at position t (what the output projection reads: after the final norm of a pre-norm model) with and
without j's values. Rows over (source tokens, decoder input positions) are normalised to sum to one; the
start token's share goes to `start`, so source + prefix + start rows sum to 1 (positions after t score 0:
the causal mask). The paper instead zeroes one layer at a time, compares that layer's outputs and rolls the
per-layer matrices out. Cost: one batched pass of S + T rows (chunks of `ROWS`), no output projection but
for the unperturbed row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from nmt_desktop.core.model.transformer import Transformer

ROWS = 64  # perturbed rows per batched pass


@dataclass
class ValueZeroing:
    """Cosine distances before normalisation and the normalised rows (module docstring), float64."""

    distances: np.ndarray  # (T, S + T): source tokens, then decoder input positions
    full: np.ndarray  # (T, S + T): the same, rows normalised to sum to one
    logprobs: np.ndarray  # (T,)
    n_source: int

    @property
    def source(self) -> np.ndarray:  # (T, S)
        return self.full[:, :self.n_source]

    @property
    def decoder_input(self) -> np.ndarray:  # (T, T): column 0 the start token
        return self.full[:, self.n_source:]


def states(model: Transformer, src: Tensor, tgt_in: Tensor, keep_src: Tensor, keep_tgt: Tensor) -> Tensor:
    """Final decoder states (B, T, D) with values multiplied by keep_src (B, S) in the encoder self-attention
    and the cross-attention, and by keep_tgt (B, T) in the decoder self-attention (1 keeps, 0 zeroes)."""
    ks = keep_src[:, None, :, None].to(torch.float32)  # (B, 1, S, 1): broadcast over heads and dh
    kt = keep_tgt[:, None, :, None].to(torch.float32)  # (B, 1, T, 1)
    x = model._embed(model.source_embedding, src, 0)  # (B, S, D)
    for layer in model.encoder_layers:
        q, k, v = layer.self_attn.project_qkv(layer.attn_res.before(x))  # (B, H, S, dh)
        context, _ = layer.self_attn.attend_heads(q, k, v * ks, None)
        x = layer.attn_res.after(x, layer.self_attn.merge_heads(context))
        x = layer.ffn_res.after(x, layer.ffn(layer.ffn_res.before(x)))
    memory = model.encoder_norm(x) if model.encoder_norm is not None else x  # (B, S, D)
    y = model._embed(model.tgt_embed, tgt_in, 0)  # (B, T, D)
    for layer in model.decoder_layers:
        q, k, v = layer.self_attn.project_qkv(layer.self_res.before(y))  # (B, H, T, dh)
        context, _ = layer.self_attn.attend_heads(q, k, v * kt, None, is_causal=y.shape[1] > 1)
        y = layer.self_res.after(y, layer.self_attn.merge_heads(context))
        q = layer.cross_attn.project_q(layer.cross_res.before(y))  # (B, H, T, dh)
        k, v = layer.cross_attn.project_kv(memory)  # (B, H, S, dh)
        context, _ = layer.cross_attn.attend_heads(q, k, v * ks, None)
        y = layer.cross_res.after(y, layer.cross_attn.merge_heads(context))
        y = layer.ffn_res.after(y, layer.ffn(layer.ffn_res.before(y)))
    return model.decoder_norm(y) if model.decoder_norm is not None else y


def value_zeroing_scores(model: Transformer, src: Tensor, tgt_in: Tensor, targets: Tensor) -> ValueZeroing:
    """src (1, S), tgt_in (1, T), targets (T,): row 0 unperturbed, then one row per input token zeroed."""
    S, T = src.shape[1], tgt_in.shape[1]
    n = S + T
    keep = torch.ones(n + 1, n, device=src.device)  # row 0: nothing zeroed; row 1 + j: input j zeroed
    keep[torch.arange(1, n + 1), torch.arange(n)] = 0.0
    chunks = []
    with torch.no_grad():
        for start in range(0, n + 1, ROWS):
            rows = keep[start:start + ROWS]  # (b, S + T)
            b = rows.shape[0]
            chunks.append(states(model, src.expand(b, -1), tgt_in.expand(b, -1), rows[:, :S], rows[:, S:]))
        h = torch.cat(chunks).double()  # (n + 1, T, D)
        cos = torch.nn.functional.cosine_similarity(h[1:], h[:1], dim=-1)  # (n, T)
        distances = (1.0 - cos).clamp_min(0).T  # (T, n)
        later = torch.arange(T)[None, :] > torch.arange(T)[:, None]  # (T, T): positions the causal mask hides
        distances[:, S:][later] = 0.0  # exactly 0 (float noise of another batch row otherwise)
        logp = torch.log_softmax(model.project(h[:1].float())[0].float(), -1).gather(-1, targets[:, None])[:, 0]
    full = distances / distances.sum(1, keepdim=True).clamp_min(1e-30)
    return ValueZeroing(distances.cpu().numpy(), full.cpu().numpy(), logp.cpu().numpy().astype(np.float64), S)


__all__ = ["ValueZeroing", "states", "value_zeroing_scores"]

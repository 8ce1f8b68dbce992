"""ALTI+ (Ferrando et al. 2022, "Towards Opening the Black Box of NMT: Source and Target Contributions").

Why: attention weights say where a head looks, not how much of the output comes from there; ALTI measures
each input token's share of every attention block's *output*, and ALTI+ carries that through the encoder,
the decoder self-attention and the cross-attention, so each target token gets one distribution over the
source tokens and its target prefix, and a `source_share` (how much the prediction rests on the source).

Per attention block (batch of one, no padding), the output at position i is decomposed exactly into one
vector per input token j (and a bias term nobody owns):

- the mixed value: T_i(x_j) = sum_h A^h_ij W_O^h (W_V^h u_j + b_V^h), u_j the value input (the layer-normed
  stream in a pre-norm model, the stream itself in a post-norm one; the encoder output for cross-attention);
- the residual: the block's stream input x_i is added to its own term (self-attention: j = i), or is a term
  of its own (cross-attention: "the decoder", later split over the prefix by the self-attention rollout);
- post-norm (this repository's `Residual(pre_norm=False)`: LN(x + attn(x))): LN's linear part is applied to
  each term, L(z) = gamma * (z - mean(z)) / sigma_i, with sigma_i the standard deviation of the *whole*
  pre-norm vector (as LN computes it); b_O and beta form the unowned bias. Pre-norm (x + attn(LN(x))):
  the terms are already additive, and the final encoder/decoder norm acts per position (it mixes nothing).

y_i = sum_j T_i(x_j) (the bias left out, as in ALTI), and the contribution of j to i is
c_ij = max(0, ||y_i||_1 - ||y_i - T_i(x_j)||_1), rows normalised to sum to one. The feed-forward blocks act
per position and are skipped, as in ALTI. Rollout: R_enc = C_L ... C_1 over the encoder (S, S); in the
decoder, rows over (source tokens + decoder input positions): self-attention R <- C_self R, cross-attention
R_t <- c_t,dec R_t + sum_s c_t,s [R_enc,s | 0]. Decoder input position 0 is the start token: its share is
kept in `start` and left out of `prefix` (like `attention_rollout`), so source + prefix + start rows sum to 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from nmt_desktop.core.model.layers import MultiHeadAttention, Residual, causal_mask
from nmt_desktop.core.model.transformer import Transformer


@dataclass
class AltiPlus:
    """ALTI+ contributions of a teacher-forced pass (module docstring), float64 numpy arrays."""

    encoder: np.ndarray  # (S, S): R_enc, row s: the share of each source token in encoder output s
    full: np.ndarray  # (T, S + T): per target token, source tokens then decoder input positions (0: start)
    logprobs: np.ndarray  # (T,): log p(y_t | x, y_<t) of the same pass

    @property
    def source(self) -> np.ndarray:  # (T, S)
        return self.full[:, :self.encoder.shape[0]]

    @property
    def decoder_input(self) -> np.ndarray:  # (T, T): column 0 the start token, column j + 1 the token y_j
        return self.full[:, self.encoder.shape[0]:]

    @property
    def source_share(self) -> np.ndarray:  # (T,)
        return self.source.sum(1)


def block_terms(attn: MultiHeadAttention, res: Residual, weights: Tensor, values: Tensor, stream: Tensor,
                own_residual: bool) -> tuple[Tensor, Tensor]:
    """The exact per-input decomposition of one attention block's output (module docstring).

    weights (H, Tq, Tk), values (H, Tk, dh) with their bias, stream (Tq, D) the block's residual input.
    own_residual: self-attention (the residual joins term j = i, Tq == Tk) or cross-attention (the residual
    is term 0, the keys follow). Returns terms (Tq, J, D) and the unowned bias (Tq, D): their sum over J plus
    the bias is the block's output."""
    H, _, dh = values.shape
    w_o = attn.out_proj.weight.view(-1, H, dh)  # (D, H, dh)
    per_head = torch.einsum("hkd,ehd->hke", values, w_o)  # (H, Tk, D): W_O^h v^h_k
    mixed = torch.einsum("hqk,hke->qke", weights.to(per_head.dtype), per_head)  # (Tq, Tk, D)
    if own_residual:
        terms = mixed.clone()
        idx = torch.arange(mixed.shape[0])
        terms[idx, idx] += stream
    else:
        terms = torch.cat([stream[:, None], mixed], 1)  # (Tq, 1 + Tk, D)
    b_o = attn.out_proj.bias if attn.out_proj.bias is not None else torch.zeros_like(stream[0])
    bias = b_o.expand_as(stream)  # (Tq, D)
    if not res.pre_norm:
        whole = terms.sum(1) + bias  # (Tq, D): the vector LN normalises
        sigma = torch.sqrt(whole.var(-1, unbiased=False, keepdim=True) + res.norm.eps)  # (Tq, 1)
        gamma = res.norm.weight
        beta = res.norm.bias if res.norm.bias is not None else torch.zeros_like(gamma)
        terms = gamma * (terms - terms.mean(-1, keepdim=True)) / sigma[:, None]
        bias = gamma * (bias - bias.mean(-1, keepdim=True)) / sigma + beta
    return terms, bias


def contributions(terms: Tensor) -> Tensor:
    """ALTI's measure: terms (Tq, J, D) -> (Tq, J), rows summing to one."""
    y = terms.sum(1, keepdim=True)  # (Tq, 1, D)
    raw = (y.abs().sum(-1) - (y - terms).abs().sum(-1)).clamp_min(0)  # (Tq, J)
    return raw / raw.sum(1, keepdim=True).clamp_min(1e-30)


def alti_plus(model: Transformer, src: Tensor, tgt_in: Tensor, targets: Tensor) -> AltiPlus:
    """ALTI+ of one teacher-forced pass: src (1, S), tgt_in (1, T) (start token first), targets (T,).
    The pass is recomputed layer by layer with the model's own modules (eval mode, no gradients)."""
    S, T = src.shape[1], tgt_in.shape[1]
    with torch.no_grad():
        x = model._embed(model.source_embedding, src, 0)  # (1, S, D)
        r_enc = torch.eye(S, dtype=torch.float64)
        for layer in model.encoder_layers:
            q, k, v = layer.self_attn.project_qkv(layer.attn_res.before(x))  # (1, H, S, dh)
            context, w = layer.self_attn.attend_heads(q, k, v, None, True)  # (1, H, S, dh), (1, H, S, S)
            terms, _ = block_terms(layer.self_attn, layer.attn_res, w[0], v[0], x[0], True)  # (S, S, D)
            r_enc = contributions(terms).double() @ r_enc
            x = layer.attn_res.after(x, layer.self_attn.merge_heads(context))
            x = layer.ffn_res.after(x, layer.ffn(layer.ffn_res.before(x)))
        memory = model.encoder_norm(x) if model.encoder_norm is not None else x  # (1, S, D)

        y = model._embed(model.tgt_embed, tgt_in, 0)  # (1, T, D)
        r_dec = torch.cat([torch.zeros(T, S, dtype=torch.float64), torch.eye(T, dtype=torch.float64)], 1)
        from_source = torch.cat([r_enc, torch.zeros(S, T, dtype=torch.float64)], 1)  # (S, S + T)
        mask = causal_mask(T, T, y.device)
        for layer in model.decoder_layers:
            q, k, v = layer.self_attn.project_qkv(layer.self_res.before(y))  # (1, H, T, dh)
            context, w = layer.self_attn.attend_heads(q, k, v, mask, True)  # (1, H, T, T)
            terms, _ = block_terms(layer.self_attn, layer.self_res, w[0], v[0], y[0], True)  # (T, T, D)
            r_dec = contributions(terms).double() @ r_dec  # (T, S + T)
            y = layer.self_res.after(y, layer.self_attn.merge_heads(context))
            q = layer.cross_attn.project_q(layer.cross_res.before(y))  # (1, H, T, dh)
            k, v = layer.cross_attn.project_kv(memory)  # (1, H, S, dh)
            context, w = layer.cross_attn.attend_heads(q, k, v, None, True)  # (1, H, T, S)
            terms, _ = block_terms(layer.cross_attn, layer.cross_res, w[0], v[0], y[0], False)  # (T, 1 + S, D)
            c = contributions(terms).double()  # (T, 1 + S)
            r_dec = c[:, :1] * r_dec + c[:, 1:] @ from_source
            y = layer.cross_res.after(y, layer.cross_attn.merge_heads(context))
            y = layer.ffn_res.after(y, layer.ffn(layer.ffn_res.before(y)))
        if model.decoder_norm is not None:
            y = model.decoder_norm(y)
        logp = torch.log_softmax(model.project(y)[0].float(), -1).gather(-1, targets[:, None])[:, 0]  # (T,)
    return AltiPlus(r_enc.cpu().numpy(), r_dec.cpu().numpy(), logp.cpu().numpy().astype(np.float64))


__all__ = ["AltiPlus", "alti_plus", "block_terms", "contributions"]

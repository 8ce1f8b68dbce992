"""Building blocks of the Transformer: positions, attention, feed-forward.

Attention masks are boolean and broadcast to `(B, heads, T, S)`; True means "may attend".
Attention returns `(output, weights)`; weights are computed with an explicit softmax only when
asked for, otherwise `scaled_dot_product_attention` runs. Nothing is stored on the modules.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu, "silu": F.silu}


def sinusoidal_positions(n_positions: int, dim: int, layout: str = "interleaved") -> Tensor:
    """Fixed sinusoidal position table `(n_positions, dim)`.

    "interleaved" puts sin on even and cos on odd dimensions (Vaswani et al.); "concat" puts all
    sines first, then all cosines (Marian).
    """
    position = torch.arange(n_positions, dtype=torch.float64)[:, None]  # (P, 1)
    freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float64) * (-math.log(10000.0) / dim))  # (D/2,)
    angles = position * freq  # (P, D/2)
    table = torch.zeros(n_positions, dim, dtype=torch.float64)
    if layout == "interleaved":
        table[:, 0::2] = torch.sin(angles)
        table[:, 1::2] = torch.cos(angles)
    elif layout == "concat":
        table[:, : dim // 2] = torch.sin(angles)
        table[:, dim // 2:] = torch.cos(angles)
    else:
        raise ValueError(f"unknown position layout {layout!r}")
    return table.float()


def causal_mask(t: int, total: int, device: torch.device) -> Tensor | None:
    """Mask (t, total) letting the last t positions of a length-`total` sequence see only their past.

    None when t == 1: a single newest query may attend everything before it.
    """
    if t == 1:
        return None
    query_pos = torch.arange(total - t, total, device=device)[:, None]  # (t, 1)
    return torch.arange(total, device=device)[None, :] <= query_pos  # (t, total)


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, need_weights: bool,
              dropout_p: float = 0.0, is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """Scaled dot-product attention over heads.

    q: (B, H, T, dh); k, v: (B, H, S, dh); mask: bool broadcastable to (B, H, T, S) or None.
    `is_causal` (only with mask None and T == S) lets the fused kernel apply the causal mask.
    Returns the context (B, H, T, dh) and, if `need_weights`, the weights (B, H, T, S) in float32.
    """
    if not need_weights and q.shape[2] > 1:
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal)
        return out, None
    # A single query (a decoding step) is cheaper in plain ops than through the fused kernel.
    if is_causal:
        mask = causal_mask(q.shape[2], k.shape[2], q.device)
    scores = torch.matmul(q, k.transpose(-1, -2)).mul_(q.shape[-1] ** -0.5)  # (B, H, T, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1, dtype=torch.float32)  # (B, H, T, S)
    probs = F.dropout(weights, dropout_p) if dropout_p > 0 else weights
    if probs.dtype != v.dtype:
        probs = probs.to(v.dtype)
    return probs @ v, (weights if need_weights else None)  # (B, H, T, dh), (B, H, T, S)


def linear(layer: nn.Linear, x: Tensor, rows: Tensor | None = None) -> Tensor:
    """`layer(x)` for x (B, T, in). rows: flat indices (N,) into B * T: only those positions are
    computed, the others are zeros (training leaves the padding out this way)."""
    if rows is None:
        return layer(x)
    B, T, _ = x.shape
    y = layer(x.reshape(B * T, -1).index_select(0, rows))  # (N, out)
    return y.new_zeros(B * T, y.shape[-1]).index_copy(0, rows, y).view(B, T, -1)


class MultiHeadAttention(nn.Module):
    """Multi-head attention with fused projections (QKV for self-attention, KV for cross)."""

    def __init__(self, d_model: int, n_heads: int, dropout: float, bias: bool, cross: bool):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.dropout = dropout
        self.cross = cross
        if cross:
            self.q_proj = nn.Linear(d_model, d_model, bias=bias)
            self.kv_proj = nn.Linear(d_model, 2 * d_model, bias=bias)
        else:
            self.qkv_proj = nn.Linear(d_model, 3 * d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def _heads(self, x: Tensor, n: int) -> tuple[Tensor, ...]:
        """(B, T, n * D) -> n tensors of (B, H, T, dh)."""
        B, T, _ = x.shape
        x = x.view(B, T, n, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)  # (n, B, H, T, dh)
        return x.unbind(0)

    def project_qkv(self, x: Tensor, rows: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
        """Self-attention projections of x (B, T, D): q, k, v each (B, H, T, dh); rows as in `linear`."""
        return self._heads(linear(self.qkv_proj, x, rows), 3)

    def project_q(self, x: Tensor, rows: Tensor | None = None) -> Tensor:
        return self._heads(linear(self.q_proj, x, rows), 1)[0]  # (B, H, T, dh)

    def project_kv(self, memory: Tensor, rows: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Cross-attention keys and values of the encoder output (B, S, D): each (B, H, S, dh)."""
        return self._heads(linear(self.kv_proj, memory, rows), 2)

    def attend(self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, need_weights: bool = False,
               head_mask: Tensor | None = None, is_causal: bool = False,
               head_override: tuple[Tensor, Tensor] | None = None,
               rows: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        """Attention on projected heads, then the output projection.

        head_mask: (H,) or (B, H) multiplier on each head's context (0 switches a head off).
        head_override: (means (H, dh), use (H,) bool): heads with use=True get their context
        replaced by the fixed mean (mean ablation). Returns the output (B, T, D) and the weights
        (B, H, T, S) or None.
        """
        context, weights = self.attend_heads(q, k, v, mask, need_weights, head_mask, is_causal, head_override)
        return self.merge_heads(context, rows), weights

    def attend_heads(self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, need_weights: bool = False,
                     head_mask: Tensor | None = None, is_causal: bool = False,
                     head_override: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor | None]:
        """`attend` before the output projection: per-head context (B, H, T, dh) and weights."""
        dropout_p = self.dropout if self.training else 0.0
        context, weights = attention(q, k, v, mask, need_weights, dropout_p, is_causal)  # (B, H, T, dh)
        if head_mask is not None:
            hm = head_mask.to(context.dtype)
            context = context * (hm[:, None, None] if hm.dim() == 1 else hm[:, :, None, None])
        if head_override is not None:
            means, use = head_override  # (H, dh), (H,)
            context = torch.where(use.to(torch.bool)[:, None, None], means.to(context.dtype)[:, None, :], context)
        return context, weights

    def merge_heads(self, context: Tensor, rows: Tensor | None = None) -> Tensor:
        """Per-head context (B, H, T, dh) -> output projection (B, T, D)."""
        B, H, T, dh = context.shape
        return linear(self.out_proj, context.transpose(1, 2).reshape(B, T, H * dh), rows)


class FeedForward(nn.Module):
    """Position-wise feed-forward: linear, activation, dropout, linear."""

    def __init__(self, d_model: int, ffn_dim: int, activation: str, dropout: float, bias: bool):
        super().__init__()
        self.fc1 = nn.Linear(d_model, ffn_dim, bias=bias)
        self.fc2 = nn.Linear(ffn_dim, d_model, bias=bias)
        self.act = ACTIVATIONS[activation]
        self.dropout = dropout

    def forward(self, x: Tensor, rows: Tensor | None = None) -> Tensor:
        """x (B, T, D) -> (B, T, D). rows: flat indices (N,) into B * T of the positions to compute
        (training skips padding this way); the others get zeros."""
        if rows is not None:  # gather once for both products
            B, T, D = x.shape
            flat = x.reshape(B * T, D)
            y = self.forward(flat.index_select(0, rows)[None])[0]  # (N, D)
            # zeros in y's dtype: under CUDA autocast the products are bfloat16 while x is float32, and
            # index_copy does not promote there (it does on the CPU), so training on a GPU stopped at step 1
            return flat.new_zeros(B * T, D, dtype=y.dtype).index_copy(0, rows, y).view(B, T, D)
        h = self.act(self.fc1(x))  # (B, T, F)
        if self.dropout > 0:
            h = F.dropout(h, self.dropout, self.training)
        return self.fc2(h)  # (B, T, D)


class Residual(nn.Module):
    """Residual connection around a sublayer with pre- or post-layer-norm and dropout."""

    def __init__(self, d_model: int, dropout: float, pre_norm: bool, eps: float, bias: bool):
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=eps, bias=bias)
        self.dropout = dropout
        self.pre_norm = pre_norm

    def before(self, x: Tensor) -> Tensor:
        """Input to the sublayer."""
        return self.norm(x) if self.pre_norm else x

    def after(self, x: Tensor, sublayer_out: Tensor) -> Tensor:
        """Add the sublayer output back to the stream."""
        y = x + (F.dropout(sublayer_out, self.dropout, True) if self.training and self.dropout > 0 else sublayer_out)
        return y if self.pre_norm else self.norm(y)

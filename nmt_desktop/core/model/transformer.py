"""The encoder-decoder Transformer of "Attention Is All You Need".

Reads top to bottom: encoder layer, decoder layer, the whole model, the factory. `encode` runs
once per source; `decode` runs either on a whole target prefix (training, teacher forcing) or
incrementally with a `KVCache`. Attention weights are returned, never stored on modules.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from nmt_desktop.core.config import ModelConfig
from nmt_desktop.core.model.cache import KVCache
from nmt_desktop.core.model.layers import FeedForward, MultiHeadAttention, Residual, causal_mask, sinusoidal_positions


@dataclass
class EncoderOutput:
    memory: Tensor  # (B, S, D)
    src_mask: Tensor | None  # (B, 1, 1, S) bool, True at real tokens; None when nothing is padding
    self_attention: Tensor | None = None  # (B, L, H, S, S) when asked for


@dataclass
class DecoderOutput:
    logits: Tensor  # (B, T, V), or (B, 1, V) with last_only
    cross_attention: Tensor | None = None  # (B, L, H, T, S) when asked for
    self_attention: Tensor | None = None  # (B, L, H, T, T_total) when asked for
    cross_context: Tensor | None = None  # (B, L, H, T, dh) per-head cross-attention context when asked for
    hidden: Tensor | None = None  # (B, T, D) the final states the output projection reads, when asked for


@dataclass
class HeadOverride:
    """Mean ablation of decoder cross-attention heads: heads with `use` True read `means` instead."""

    means: Tensor  # (L, H, dh) fixed context per head, e.g. its mean over a probe set
    use: Tensor  # (L, H) bool, True where the head's context is replaced


class EncoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        pre = cfg.norm == "pre"
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.attention_dropout, cfg.bias, cross=False)
        self.ffn = FeedForward(cfg.d_model, cfg.ffn_dim, cfg.activation, cfg.activation_dropout, cfg.bias)
        self.attn_res = Residual(cfg.d_model, cfg.dropout, pre, cfg.layer_norm_eps, cfg.bias)
        self.ffn_res = Residual(cfg.d_model, cfg.dropout, pre, cfg.layer_norm_eps, cfg.bias)

    def forward(self, x: Tensor, mask: Tensor | None, need_weights: bool = False,
                rows: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        """x (B, S, D); rows: flat indices of the non-padding positions, the only ones the linear layers
        compute (the others are zeros, masked out as keys)."""
        q, k, v = self.self_attn.project_qkv(self.attn_res.before(x), rows=rows)  # (B, H, S, dh) each
        out, weights = self.self_attn.attend(q, k, v, mask, need_weights, rows=rows)  # (B, S, D)
        x = self.attn_res.after(x, out)
        x = self.ffn_res.after(x, self.ffn(self.ffn_res.before(x), rows=rows))
        return x, weights


class DecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        pre = cfg.norm == "pre"
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.attention_dropout, cfg.bias, cross=False)
        self.cross_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.attention_dropout, cfg.bias, cross=True)
        self.ffn = FeedForward(cfg.d_model, cfg.ffn_dim, cfg.activation, cfg.activation_dropout, cfg.bias)
        self.self_res = Residual(cfg.d_model, cfg.dropout, pre, cfg.layer_norm_eps, cfg.bias)
        self.cross_res = Residual(cfg.d_model, cfg.dropout, pre, cfg.layer_norm_eps, cfg.bias)
        self.ffn_res = Residual(cfg.d_model, cfg.dropout, pre, cfg.layer_norm_eps, cfg.bias)

    def forward(self, x: Tensor, cross_kv: tuple[Tensor, Tensor], src_mask: Tensor | None,
                cache: KVCache | None, index: int, need_cross: bool, need_self: bool,
                head_mask: Tensor | None, head_override: tuple[Tensor, Tensor] | None = None,
                need_context: bool = False, rows: Tensor | None = None,
                ) -> tuple[Tensor, Tensor | None, Tensor | None, Tensor | None]:
        """x: (B, t, D) new target positions; rows: flat indices of the positions the linear layers compute
        (training: the non-padding ones; right padding is never attended to under the causal mask).

        Returns x, the cross/self weights (or None) and, with need_context, the per-head
        cross-attention context (B, H, t, dh) after head_mask / head_override.
        """
        t = x.shape[1]
        q, k, v = self.self_attn.project_qkv(self.self_res.before(x), rows)  # (B, H, t, dh) each
        past = 0
        if cache is not None:
            past = cache.length
            k, v = cache.append(index, k, v)  # (B, H, past + t, dh)
        if past == 0 and not need_self:
            out, self_w = self.self_attn.attend(q, k, v, None, False, is_causal=t > 1, rows=rows)
        else:
            mask = causal_mask(t, past + t, x.device)
            out, self_w = self.self_attn.attend(q, k, v, mask, need_self, rows=rows)
        x = self.self_res.after(x, out)

        q = self.cross_attn.project_q(self.cross_res.before(x), rows)  # (B, H, t, dh)
        context, cross_w = self.cross_attn.attend_heads(q, *cross_kv, src_mask, need_cross, head_mask,
                                                        head_override=head_override)  # (B, H, t, dh)
        x = self.cross_res.after(x, self.cross_attn.merge_heads(context, rows))  # (B, t, D)
        x = self.ffn_res.after(x, self.ffn(self.ffn_res.before(x), rows))
        return x, cross_w, self_w, (context if need_context else None)


class Transformer(nn.Module):
    """Encoder-decoder Transformer; build it with `build_model(config)`."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.config = cfg
        self.tgt_embed = nn.Embedding(cfg.tgt_vocab_size, cfg.d_model)
        # One vocabulary means one matrix: no duplicate tensor in the state dict.
        self.src_embed = None if cfg.shared_vocab else nn.Embedding(cfg.src_vocab_size, cfg.d_model)
        self.register_buffer("positions", sinusoidal_positions(cfg.max_positions, cfg.d_model, cfg.pos_layout),
                             persistent=False)  # (P, D)
        self.embed_scale = math.sqrt(cfg.d_model) if cfg.scale_embedding else 1.0
        self.encoder_layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.encoder_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.decoder_layers))
        pre = cfg.norm == "pre"
        self.encoder_norm = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps, bias=cfg.bias) if pre else None
        self.decoder_norm = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps, bias=cfg.bias) if pre else None
        self.out_proj = None if cfg.tie_output else nn.Linear(cfg.d_model, cfg.tgt_vocab_size, bias=False)
        self.logits_bias = nn.Parameter(torch.zeros(cfg.tgt_vocab_size)) if cfg.final_logits_bias else None
        self.int8_output: nn.Module | None = None  # int8 output projection of a quantised copy (core/decoding/int8.py)

    @property
    def source_embedding(self) -> nn.Embedding:
        return self.tgt_embed if self.src_embed is None else self.src_embed

    def _embed(self, table: nn.Embedding, ids: Tensor, offset: int) -> Tensor:
        """ids (B, T) -> scaled embeddings plus positions offset..offset+T-1, (B, T, D)."""
        end = offset + ids.shape[1]
        if end > self.config.max_positions:
            raise ValueError(f"sequence of {end} tokens exceeds the model's max_positions ({self.config.max_positions})")
        x = table(ids) * self.embed_scale + self.positions[offset:end]
        return F.dropout(x, self.config.dropout, True) if self.training and self.config.dropout > 0 else x

    def source_mask(self, src: Tensor) -> Tensor | None:
        """(B, 1, 1, S) bool key-padding mask, or None when no position is padding."""
        keep = src != self.config.pad_id  # (B, S)
        return None if bool(keep.all()) else keep[:, None, None, :]

    def encode(self, src: Tensor, need_weights: bool = False, skip_padding: bool = False) -> EncoderOutput:
        """src (B, S) token ids, right- or left-padded with pad_id.

        skip_padding: leave the padding positions out of the linear layers (training; they are zeros,
        masked out as keys, never read).
        """
        mask = self.source_mask(src)
        rows = _flat_rows(src != self.config.pad_id) if skip_padding and mask is not None else None  # (N,)
        x = self._embed(self.source_embedding, src, 0)  # (B, S, D)
        weights = []
        for layer in self.encoder_layers:
            x, w = layer(x, mask, need_weights, rows)
            weights.append(w)
        if self.encoder_norm is not None:
            x = self.encoder_norm(x)
        self_attention = torch.stack(weights, dim=1) if need_weights else None  # (B, L, H, S, S)
        return EncoderOutput(x, mask, self_attention)

    def start_cache(self, enc: EncoderOutput, capacity: int = 64) -> KVCache:
        """A cache holding each decoder layer's cross-attention K/V of this source."""
        cross_kv = [layer.cross_attn.project_kv(enc.memory) for layer in self.decoder_layers]
        return KVCache.create(cross_kv, enc.src_mask, capacity)

    def decode(self, tgt: Tensor, enc: EncoderOutput | None = None, cache: KVCache | None = None,
               need_cross: bool = False, need_self: bool = False, head_mask: Tensor | None = None,
               last_only: bool = False, head_override: HeadOverride | None = None,
               need_context: bool = False, rows: Tensor | None = None, need_hidden: bool = False,
               need_logits: bool = True) -> DecoderOutput:
        """Decode target positions tgt (B, t).

        Without a cache, tgt is the whole right-padded prefix starting with decoder_start_id and
        `enc` is required. With a cache, tgt holds the next position(s) and the cache advances.
        head_mask: (L, H) or (B, L, H) multiplier on the cross-attention heads' outputs.
        head_override: replace chosen heads' cross-attention context by fixed means (mean ablation).
        need_context: also return each cross-attention head's context (`cross_context`).
        need_hidden: also return the final states the output projection reads (`hidden`: kNN-MT's keys);
        need_logits=False skips the output projection (`logits` is then an empty (B, t, 0) tensor).
        rows: bool (B, t): run the linear layers and the output projection on these positions only,
        and on the non-padding source positions (training skips right padding this way: no real
        position reads a padding one); the logits are then (N, V) for the N true entries, row-major.
        """
        if cache is None:
            if enc is None:
                raise ValueError("decode needs the encoder output or a cache")
            src_rows = None if rows is None or enc.src_mask is None else _flat_rows(enc.src_mask[:, 0, 0])  # (N_src,)
            cross = [layer.cross_attn.project_kv(enc.memory, src_rows) for layer in self.decoder_layers]
            src_mask, offset = enc.src_mask, 0
        else:
            cross = [(kv.cross_k, kv.cross_v) for kv in cache.layers]
            src_mask, offset = cache.src_mask, cache.length
        x = self._embed(self.tgt_embed, tgt, offset)  # (B, t, D)
        flat = None if rows is None else _flat_rows(rows)  # (N,)
        cross_ws, self_ws, contexts = [], [], []
        for i, layer in enumerate(self.decoder_layers):
            hm = None if head_mask is None else (head_mask[i] if head_mask.dim() == 2 else head_mask[:, i])
            ho = None if head_override is None else (head_override.means[i], head_override.use[i])
            x, cw, sw, ctx = layer(x, cross[i], src_mask, cache, i, need_cross, need_self, hm, ho, need_context, flat)
            cross_ws.append(cw)
            self_ws.append(sw)
            contexts.append(ctx)
        if cache is not None:
            cache.advance(tgt.shape[1])
        if last_only:
            x = x[:, -1:]
        if self.decoder_norm is not None:
            x = self.decoder_norm(x)
        if flat is not None:
            x = x.reshape(-1, x.shape[-1]).index_select(0, flat)  # (N, D)
        logits = self.project(x) if need_logits else x.new_zeros(*x.shape[:-1], 0)  # (B, t, V) or (N, V)
        return DecoderOutput(
            logits,
            torch.stack(cross_ws, dim=1) if need_cross else None,  # (B, L, H, t, S)
            torch.stack(self_ws, dim=1) if need_self else None,  # (B, L, H, t, past + t)
            torch.stack(contexts, dim=1) if need_context else None,  # (B, L, H, t, dh)
            x if need_hidden else None,  # (B, t, D) or (N, D)
        )

    @property
    def output_weight(self) -> Tensor:
        """The output projection's float weight (V, D): the target embedding when tied."""
        return self.tgt_embed.weight if self.out_proj is None else self.out_proj.weight

    def project(self, x: Tensor) -> Tensor:
        """Decoder states (B, T, D) -> logits (B, T, V)."""
        if self.int8_output is not None:
            return self.int8_output(x)
        return F.linear(x, self.output_weight, self.logits_bias)

    def forward(self, src: Tensor, tgt_in: Tensor, rows: Tensor | None = None) -> Tensor:
        """Teacher-forced logits (B, T, V) for source (B, S) and right-padded decoder input (B, T);
        with `rows` (bool (B, T)) only those positions' logits, (N, V)."""
        return self.decode(tgt_in, self.encode(src, skip_padding=rows is not None), rows=rows).logits


def _flat_rows(keep: Tensor) -> Tensor:
    """bool (B, T) -> the flat indices (N,) of its true entries (one host sync, then index ops only)."""
    return keep.reshape(-1).nonzero().squeeze(1)


def build_model(config: ModelConfig, seed: int | None = None) -> Transformer:
    """Create a Transformer: Xavier-uniform linear weights, zero biases, unit norms.

    Embeddings are drawn from N(0, d_model^-0.5), so that after the sqrt(d_model) scaling tokens
    enter with unit scale, comparable to the sinusoidal positions (as in fairseq / tensor2tensor).
    Xavier on a (vocab, d_model) matrix would make them ~sqrt(vocab / d_model) times smaller than
    the positions, and a small model then learns to read its source very slowly.
    """
    generator_state = torch.random.get_rng_state() if seed is not None else None
    if seed is not None:
        torch.manual_seed(seed)
    model = Transformer(config)
    embeddings = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}
    for name, p in model.named_parameters():
        if id(p) in embeddings:
            nn.init.normal_(p, mean=0.0, std=config.d_model ** -0.5)
        elif p.dim() > 1:
            nn.init.xavier_uniform_(p)
        elif name.endswith("bias") or name == "logits_bias":
            nn.init.zeros_(p)
    if generator_state is not None:
        torch.random.set_rng_state(generator_state)
    return model


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())

"""Test helpers: small random Transformers of every architecture variant, and padded id batches.

Imported as `from random_models import random_model` (tests/ is on sys.path: tests/conftest.py's folder)."""

from __future__ import annotations

import torch

from tiny_models import perturbed_model

from nmt_desktop.core.config import ModelConfig

VOCAB = 41

BASE = dict(src_vocab_size=VOCAB, tgt_vocab_size=VOCAB, d_model=32, n_heads=4, encoder_layers=2,
            decoder_layers=3, ffn_dim=48, max_positions=32, dropout=0.0)

# Every option value appears at least once; several appear in combination with each other.
VARIANTS = {
    "post-relu-shared-tied": dict(),
    "pre-gelu-separate-untied": dict(norm="pre", activation="gelu", shared_vocab=False, src_vocab_size=37,
                                     tie_output=False),
    "post-silu-nobias-concat": dict(activation="silu", bias=False, pos_layout="concat"),
    "pre-relu-concat-logitsbias": dict(norm="pre", pos_layout="concat", final_logits_bias=True, tie_output=False),
    "post-gelu-separate-tied-logitsbias": dict(activation="gelu", shared_vocab=False, src_vocab_size=53,
                                               final_logits_bias=True),
    "pre-silu-nobias-untied-unscaled": dict(norm="pre", activation="silu", bias=False, tie_output=False,
                                            scale_embedding=False),
    "marian-like": dict(activation="silu", pos_layout="concat", final_logits_bias=True, decoder_start_id=0,
                        shared_vocab=False, src_vocab_size=45),
}


def random_model(seed: int = 0, **overrides):
    """A small model in eval mode whose parameters are all perturbed away from their init."""
    return perturbed_model(ModelConfig(**{**BASE, **overrides}), seed)


def padded(seqs: list[list[int]], pad: int, left: bool = False) -> torch.Tensor:
    width = max(map(len, seqs))
    out = torch.full((len(seqs), width), pad, dtype=torch.long)
    for i, s in enumerate(seqs):
        if left:
            out[i, width - len(s):] = torch.tensor(s)
        else:
            out[i, : len(s)] = torch.tensor(s)
    return out

"""The fused single-position decoding step (core/decoding/fused_step.py) and prepared weights (core/decoding/prepared_linear.py).

The module path (`Transformer.decode` through the layers, no prepared weights) is the reference:
the fused step must give the same logits and cross-attention on every architecture variant, in
float32 and int8, through cache growth, dropped rows and beam reordering, and searches must give the
same tokens with and without it.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F
from test_transformer import VARIANTS, padded, random_model
from tiny_models import perturbed_model

from nmt_desktop.core.config import DecodeConfig, ModelConfig
from nmt_desktop.core.decoding.int8 import quantize_int8
from nmt_desktop.core.decoding.prepared_linear import prepare_linear
from nmt_desktop.core.decoding.search import BeamState, beam_search, greedy_or_sample

ATOL = 1e-5


def _twin_caches(model, src):
    """Two caches of one source batch: the fused step's and the module path's (no prepared weights)."""
    enc = model.encode(src)
    fused = model.start_cache(enc, capacity=2)  # small: the self-attention buffers must grow
    plain = model.start_cache(enc, capacity=2)
    plain.fused = plain.linear = plain.output = None
    return fused, plain


def variant_batch(variant: str, int8: bool):
    """A random model of one architecture variant (int8 copy if asked) and a padded 3-sentence batch."""
    model = random_model(**VARIANTS[variant])
    if int8:
        model = quantize_int8(model)
    cfg = model.config
    return model, padded([[5, 6, 7, 8, 9, cfg.eos_id], [10, 11, cfg.eos_id], [12, 13, 14, 15, cfg.eos_id]], cfg.pad_id)


@pytest.mark.parametrize("int8", [False, True], ids=["float32", "int8"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_fused_step_equals_module_path(variant, int8):
    model, src = variant_batch(variant, int8)
    cfg = model.config
    tol = 1e-4 if int8 else ATOL
    with torch.inference_mode():
        fused, plain = _twin_caches(model, src)
        tokens = torch.full((3, 1), cfg.decoder_start_id)
        for step in range(12):
            need_self = step % 2 == 1
            a = model.decode(tokens, cache=fused, need_cross=True, need_self=need_self)
            b = model.decode(tokens, cache=plain, need_cross=True, need_self=need_self)
            assert fused.fused_cross is not None and plain.fused_cross is None  # each took its own path
            assert a.logits.shape == b.logits.shape == (tokens.shape[0], 1, cfg.tgt_vocab_size)
            assert a.cross_attention.shape == b.cross_attention.shape
            torch.testing.assert_close(a.logits, b.logits, atol=tol, rtol=tol)
            torch.testing.assert_close(a.cross_attention, b.cross_attention, atol=tol, rtol=tol)
            if need_self:  # (B, L, H, 1, step + 1)
                assert a.self_attention.shape == b.self_attention.shape == (
                    tokens.shape[0], cfg.decoder_layers, cfg.n_heads, 1, step + 1)
                torch.testing.assert_close(a.self_attention, b.self_attention, atol=tol, rtol=tol)
            else:
                assert a.self_attention is None and b.self_attention is None
            tokens = a.logits[:, -1].argmax(-1, keepdim=True)
            if step == 4:  # a finished sentence leaves the batch (cross K/V reordered too)
                keep = torch.tensor([0, 2])
            elif step == 8:  # beam-style reordering among rows of... here: duplicate the first row
                keep = torch.tensor([0, 0])
            else:
                continue
            for cache in (fused, plain):
                cache.reorder(keep, cross=step == 4)
            tokens = tokens.index_select(0, keep)
        assert fused.length == plain.length == 12


def test_fused_step_masks_source_padding():
    """Padding positions get exactly zero cross-attention and do not change the padded row's logits."""
    model = random_model()
    cfg = model.config
    short = [10, 11, cfg.eos_id]
    with torch.inference_mode():
        alone, _ = _twin_caches(model, torch.tensor([short]))
        batch, _ = _twin_caches(model, padded([short, [5, 6, 7, 8, 9, 10, cfg.eos_id]], cfg.pad_id))
        start = torch.full((1, 1), cfg.decoder_start_id)
        a = model.decode(start, cache=alone, need_cross=True)
        b = model.decode(start.expand(2, 1), cache=batch, need_cross=True)
    torch.testing.assert_close(b.logits[0], a.logits[0], atol=ATOL, rtol=ATOL)
    assert torch.all(b.cross_attention[0, ..., len(short):] == 0)


def test_module_path_serves_what_the_fused_step_does_not():
    """Head masks, mean ablation and context capture take the module path (same logits); the fused
    step's cross-attention tensors are not made."""
    model = random_model()
    cfg = model.config
    src = torch.tensor([[5, 6, 7, cfg.eos_id]])
    start = torch.full((1, 1), cfg.decoder_start_id)
    with torch.inference_mode():
        reference, _ = _twin_caches(model, src)
        expected = model.decode(start, cache=reference).logits
        assert reference.fused_cross is not None
        for kwargs in (dict(head_mask=torch.ones(cfg.decoder_layers, cfg.n_heads)), dict(need_context=True)):
            cache, _ = _twin_caches(model, src)
            out = model.decode(start, cache=cache, **kwargs)
            assert cache.fused_cross is None
            torch.testing.assert_close(out.logits, expected, atol=ATOL, rtol=ATOL)
        assert out.cross_context is not None


def test_fused_step_refuses_positions_beyond_the_model():
    model = random_model(max_positions=4)
    cfg = model.config
    with torch.inference_mode():
        cache, _ = _twin_caches(model, torch.tensor([[5, cfg.eos_id]]))
        token = torch.full((1, 1), cfg.decoder_start_id)
        for _ in range(4):
            model.decode(token, cache=cache)
        with pytest.raises(ValueError, match="exceeds the model's max_positions \\(4\\)"):
            model.decode(token, cache=cache)


@pytest.mark.parametrize("rows", [1, 2, 5, 70])
def test_prepared_linear_equals_linear(rows):
    """Every layout (addmm for one row, oneDNN's blocked weights for several rows of a large matrix)
    and every fused form (plain, + residual, activated) equals F.linear."""
    gen = torch.Generator().manual_seed(rows)
    layer = torch.nn.Linear(256, 512)  # 2^17 weights: large enough for the oneDNN layout
    x = torch.randn(rows, 256, generator=gen)
    residual = torch.randn(rows, 512, generator=gen)
    prepared = prepare_linear(layer)
    with torch.inference_mode():
        expected = F.linear(x, layer.weight, layer.bias)
        torch.testing.assert_close(prepared(x), expected, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(prepared.add(x, residual), expected + residual, atol=1e-4, rtol=1e-4)
        for name, fn in (("relu", F.relu), ("silu", F.silu), ("gelu", F.gelu)):
            torch.testing.assert_close(prepared.activated(x, name), fn(expected), atol=1e-4, rtol=1e-4)
    if torch.backends.mkldnn.is_available():
        assert (prepared._onednn is not None) == (rows > 1)  # made at the first multi-row product only
    small = prepare_linear(torch.nn.Linear(64, 64))
    small(torch.randn(rows, 64))
    assert small._onednn is None  # small matrices always go through addmm


@pytest.mark.parametrize("beam", [1, 4])
def test_searches_equal_with_and_without_the_fused_step(beam):
    """A model wide enough for oneDNN's layout: the same tokens, scores and attention either way."""
    cfg = ModelConfig(src_vocab_size=600, tgt_vocab_size=600, d_model=256, n_heads=4, encoder_layers=1,
                      decoder_layers=2, ffn_dim=512, max_positions=64)
    model = perturbed_model(cfg, seed=3)
    src = padded([[5, 6, 7, 8, 9, cfg.eos_id], [10, 11, cfg.eos_id]], cfg.pad_id)
    decode = DecodeConfig(beam_size=beam, max_len_a=0.0, max_len_b=12, alternatives=3)
    fast = model.fast_weights()
    results = []
    for weights in (fast, dataclasses.replace(fast, step=None)):
        if beam == 1:
            steps = list(greedy_or_sample(model, src, decode, fast=weights))
            results.append([(s.token_ids, s.logprobs, s.cross_attention, s.alt_ids) for s in steps])
        else:
            state = BeamState()
            list(beam_search(model, src, decode, state, fast=weights))
            results.append([(h.token_ids, h.token_logprobs, h.cross_attention, h.alt_ids)
                            for hyps in state.results for h in hyps])
    assert len(results[0]) == len(results[1])
    for (tokens_a, lp_a, attn_a, alt_a), (tokens_b, lp_b, attn_b, alt_b) in zip(*results):
        assert tokens_a == tokens_b and (alt_a == alt_b).all()
        assert lp_a == pytest.approx(lp_b, abs=1e-4)
        assert abs(attn_a - attn_b).max() < 1e-4


def test_prepared_linear_single_row_with_threads():
    """With several threads a single row times a large matrix goes through oneDNN (it splits the
    product over threads); the result is the same, and with one thread addmm serves it."""
    layer = torch.nn.Linear(512, 1024)  # 2^19 weights
    x = torch.randn(1, 512, generator=torch.Generator().manual_seed(0))
    threads = torch.get_num_threads()
    try:
        for n, uses_onednn in ((1, False), (2, True)):
            torch.set_num_threads(n)
            prepared = prepare_linear(layer)
            with torch.inference_mode():
                torch.testing.assert_close(prepared(x), F.linear(x, layer.weight, layer.bias), atol=1e-4, rtol=1e-4)
            if torch.backends.mkldnn.is_available():
                assert (prepared._onednn is not None) == uses_onednn
    finally:
        torch.set_num_threads(threads)

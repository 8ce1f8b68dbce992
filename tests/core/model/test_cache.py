"""KVCache: growth past the initial capacity and reordering (as beam search does) vs. recomputing."""

from __future__ import annotations

import pytest
import torch

from tiny_models import right_padded, perturbed_model

from nmt_desktop.core.model.cache import KVCache
from nmt_desktop.core.config import ModelConfig
from nmt_desktop.core.model.transformer import build_model

ATOL = 1e-5


def random_model(seed: int = 0, **overrides):
    cfg = ModelConfig(**{**dict(src_vocab_size=37, tgt_vocab_size=37, d_model=32, n_heads=4, encoder_layers=2,
                                decoder_layers=2, ffn_dim=48, max_positions=32, dropout=0.0), **overrides})
    return perturbed_model(cfg, seed)




def test_append_advance_and_growth_from_capacity_one():
    B, H, S, dh = 2, 3, 4, 5
    cache = KVCache.create([(torch.randn(B, H, S, dh), torch.randn(B, H, S, dh))], None, capacity=1)
    assert cache.batch_size == 2 and cache.length == 0
    ks, vs = [], []
    for t in (1, 3, 1, 2, 4):  # 11 positions in all: several doublings and a jump past 2x
        k, v = torch.randn(B, H, t, dh), torch.randn(B, H, t, dh)
        ks.append(k)
        vs.append(v)
        all_k, all_v = cache.append(0, k, v)
        assert cache.length == sum(x.shape[2] for x in ks[:-1])  # moves only in advance()
        cache.advance(t)
        assert torch.equal(all_k, torch.cat(ks, 2)) and torch.equal(all_v, torch.cat(vs, 2))
    assert cache.length == 11 and cache.layers[0].self_k.shape[2] >= 11


@pytest.mark.parametrize("capacity", [1, 3, 64])
def test_decoding_through_growth_equals_full_pass(capacity):
    model = random_model(seed=1, norm="pre")
    src = right_padded([[5, 6, 7, 8, 2], [9, 10, 2]])
    tgt = right_padded([[1, 11, 12, 13, 14, 15, 16, 17, 18, 19], [1, 20, 21, 22]])
    with torch.no_grad():
        enc = model.encode(src)
        full = model.decode(tgt, enc, need_cross=True)
        cache = model.start_cache(enc, capacity=capacity)
        for t in range(tgt.shape[1]):
            out = model.decode(tgt[:, t: t + 1], cache=cache, need_cross=True)
            torch.testing.assert_close(out.logits[:, 0], full.logits[:, t], atol=ATOL, rtol=0)
            torch.testing.assert_close(out.cross_attention[:, :, :, 0], full.cross_attention[:, :, :, t],
                                       atol=ATOL, rtol=0)
    assert cache.length == 10


def _prefixes_logits(model, src, prefixes):
    """Teacher-forced last-position logits and cross-attention of each (source, prefix)."""
    with torch.no_grad():
        out = model.decode(torch.tensor(prefixes), model.encode(src), need_cross=True, need_self=True)
    return out.logits[:, -1], out.cross_attention[:, :, :, -1], out.self_attention[:, :, :, -1]


@pytest.mark.parametrize("inference", [False, True])
def test_reorder_with_beam_indices_equals_recomputing(inference):
    """Rows of two sentences, reordered (duplicated, swapped, dropped) mid-decoding, then one more
    step: logits and attention equal a fresh teacher-forced pass over the reordered prefixes."""
    model = random_model(seed=2)
    sources = [[5, 6, 7, 8, 9, 2], [10, 11, 2]]
    src = right_padded(sources)
    prefixes = [[1, 12, 13, 14], [1, 15, 16, 17]]
    ctx = torch.inference_mode() if inference else torch.no_grad()
    with ctx:
        enc = model.encode(src)
        cache = model.start_cache(enc, capacity=2)
        for t in range(4):
            model.decode(torch.tensor(prefixes)[:, t: t + 1], cache=cache)
        order = torch.tensor([1, 0, 1, 1])
        cache.reorder(order)
        assert cache.batch_size == 4 and cache.length == 4
        assert cache.src_mask.shape[0] == 4
        nxt = torch.tensor([[20], [21], [22], [23]])
        out = model.decode(nxt, cache=cache, need_cross=True, need_self=True)
    re_src = right_padded([sources[i] for i in order.tolist()])
    re_prefix = [prefixes[i] + [int(nxt[j, 0])] for j, i in enumerate(order.tolist())]
    logits, cross, self_attn = _prefixes_logits(model, re_src, re_prefix)
    torch.testing.assert_close(out.logits[:, 0], logits, atol=ATOL, rtol=0)
    torch.testing.assert_close(out.cross_attention[:, :, :, 0], cross, atol=ATOL, rtol=0)
    torch.testing.assert_close(out.self_attention[:, :, :, 0], self_attn, atol=ATOL, rtol=0)


def test_reorder_without_cross_for_beams_of_one_sentence():
    """Beam search's reorder(cross=False): K rows of one source keep their shared cross K/V."""
    model = random_model(seed=3, norm="pre", final_logits_bias=True, tie_output=False)
    source = [5, 6, 7, 8, 2]
    K = 3
    src = torch.tensor([source] * K)
    beams = [[1, 12, 13], [1, 14, 15], [1, 16, 17]]
    with torch.no_grad():
        cache = model.start_cache(model.encode(src), capacity=1)
        for t in range(3):
            model.decode(torch.tensor(beams)[:, t: t + 1], cache=cache)
        parents = [2, 2, 0]
        cache.reorder(torch.tensor(parents), cross=False)
        nxt = [[30], [31], [32]]
        out = model.decode(torch.tensor(nxt), cache=cache, need_cross=True)
        # and continue growing past the capacity after the reorder
        out2 = model.decode(torch.tensor([[33], [34], [35]]), cache=cache)
    new = [beams[p] + n for p, n in zip(parents, nxt)]
    logits, cross, _ = _prefixes_logits(model, src, new)
    torch.testing.assert_close(out.logits[:, 0], logits, atol=ATOL, rtol=0)
    torch.testing.assert_close(out.cross_attention[:, :, :, 0], cross, atol=ATOL, rtol=0)
    logits2, _, _ = _prefixes_logits(model, src, [p + [33 + i] for i, p in enumerate(new)])
    torch.testing.assert_close(out2.logits[:, 0], logits2, atol=ATOL, rtol=0)

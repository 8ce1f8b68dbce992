"""ALTI+ (core/analysis/alti.py): rows are distributions, the per-block decomposition is exact, and the whole
result equals a slow reference written plainly here (loops over tokens and heads, weights sliced by hand)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from nmt_desktop.core.analysis import alti as AL
from nmt_desktop.core.analysis import attribution as A
from random_models import VARIANTS, random_model

SENTENCE = "big dog eats red bird"


@pytest.fixture(scope="module")
def own(tiny_translator):
    return tiny_translator.translate(SENTENCE)


def _ids(tr, translation):
    src = torch.tensor([translation.source_ids])
    tgt_in = torch.tensor([[tr.config.decoder_start_id] + translation.target_ids[:-1]])
    return src, tgt_in, torch.tensor(translation.target_ids)


# --- the slow reference ----------------------------------------------------------------------------------


def _split(linear, n):
    """A fused projection's weight/bias as n (W, b) pairs, each (D, D) / (D,): [q | k | v] or [k | v]."""
    D = linear.weight.shape[1]
    bias = linear.bias if linear.bias is not None else torch.zeros(n * D)
    return [(linear.weight[i * D:(i + 1) * D], bias[i * D:(i + 1) * D]) for i in range(n)]


def _ref_block(attn, res, stream, query_in, value_in, causal, cross):
    """One attention block by hand: returns (contributions as a list of rows, new stream (Tq, D))."""
    H, D = attn.n_heads, stream.shape[1]
    dh = D // H
    if cross:
        (wq, bq), = _split(attn.q_proj, 1)
        (wk, bk), (wv, bv) = _split(attn.kv_proj, 2)
    else:
        (wq, bq), (wk, bk), (wv, bv) = _split(attn.qkv_proj, 3)
    wo = attn.out_proj.weight
    bo = attn.out_proj.bias if attn.out_proj.bias is not None else torch.zeros(D)
    Tq, Tk = query_in.shape[0], value_in.shape[0]
    rows, out = [], []
    for i in range(Tq):
        terms = [torch.zeros(D) for _ in range(Tk + (1 if cross else 0))]
        if cross:
            terms[0] = stream[i].clone()
        else:
            terms[i] = terms[i] + stream[i]
        for h in range(H):
            sl = slice(h * dh, (h + 1) * dh)
            q = wq[sl] @ query_in[i] + bq[sl]
            scores = []
            for j in range(Tk):
                k = wk[sl] @ value_in[j] + bk[sl]
                scores.append(float(q @ k) / math.sqrt(dh) if not (causal and j > i) else -math.inf)
            weights = torch.softmax(torch.tensor(scores), 0)
            for j in range(Tk):
                v = wv[sl] @ value_in[j] + bv[sl]
                terms[j + (1 if cross else 0)] = terms[j + (1 if cross else 0)] + weights[j] * (wo[:, sl] @ v)
        whole = sum(terms) + bo
        if not res.pre_norm:
            sigma = torch.sqrt(whole.var(unbiased=False) + res.norm.eps)
            terms = [res.norm.weight * (z - z.mean()) / sigma for z in terms]
            new = F.layer_norm(whole, (D,), res.norm.weight, res.norm.bias, res.norm.eps)
        else:
            new = whole
        y = sum(terms)
        raw = [max(0.0, float(y.abs().sum() - (y - z).abs().sum())) for z in terms]
        rows.append([r / sum(raw) for r in raw])
        out.append(new)
    return rows, torch.stack(out)


def _ffn(layer_res, ffn, x):
    return layer_res.after(x[None], ffn(layer_res.before(x[None])))[0]


def reference_alti(model, src, tgt_in):
    """ALTI+ the slow way: (T, S + T) nested lists."""
    S, T = src.shape[1], tgt_in.shape[1]
    with torch.no_grad():
        x = model._embed(model.source_embedding, src, 0)[0]
        r_enc = np.eye(S)
        for layer in model.encoder_layers:
            u = layer.attn_res.before(x[None])[0]
            c, x = _ref_block(layer.self_attn, layer.attn_res, x, u, u, False, False)
            r_enc = np.array(c) @ r_enc
            x = _ffn(layer.ffn_res, layer.ffn, x)
        memory = model.encoder_norm(x) if model.encoder_norm is not None else x
        y = model._embed(model.tgt_embed, tgt_in, 0)[0]
        r = [[0.0] * S + [1.0 if j == t else 0.0 for j in range(T)] for t in range(T)]
        for layer in model.decoder_layers:
            u = layer.self_res.before(y[None])[0]
            c, y = _ref_block(layer.self_attn, layer.self_res, y, u, u, True, False)
            r = [[sum(c[t][p] * r[p][col] for p in range(T)) for col in range(S + T)] for t in range(T)]
            u = layer.cross_res.before(y[None])[0]
            c, y = _ref_block(layer.cross_attn, layer.cross_res, y, u, memory, False, True)
            new = []
            for t in range(T):
                row = [c[t][0] * r[t][col] for col in range(S + T)]
                for s in range(S):
                    for col in range(S):
                        row[col] += c[t][1 + s] * r_enc[s, col]
                new.append(row)
            r = new
            y = _ffn(layer.ffn_res, layer.ffn, y)
    return np.array(r)


# --- tests -------------------------------------------------------------------------------------------------


def test_rows_are_distributions_and_logprobs_are_the_models(tiny_translator, own):
    a = A.attribute(tiny_translator, own, "alti_plus")
    assert a.start is not None and not a.signed
    total = a.source.sum(1) + a.prefix.sum(1) + a.start
    np.testing.assert_allclose(total, 1.0, atol=1e-5)
    assert a.source.min() >= 0 and a.prefix.min() >= 0 and a.start.min() >= 0
    np.testing.assert_allclose(a.source_share, a.source.sum(1), atol=1e-6)
    assert np.all(a.source_share > 0.05) and np.any(a.source_share < 0.95)  # both sides count
    np.testing.assert_allclose(a.logprobs, own.best.token_logprobs, atol=1e-4)
    # the trained word-for-word model: each target word's largest source share is its own source word
    assert [int(np.argmax(a.source[t, :-1])) for t in range(len(own.target_ids) - 1)] == list(range(5))


def test_equals_the_slow_reference(tiny_translator, own):
    src, tgt_in, targets = _ids(tiny_translator, own)
    fast = AL.alti_plus(tiny_translator.model, src, tgt_in, targets)
    slow = reference_alti(tiny_translator.model, src, tgt_in)
    np.testing.assert_allclose(slow.sum(1), 1.0, atol=1e-6)
    np.testing.assert_allclose(fast.full, slow, atol=2e-5)


@pytest.mark.parametrize("variant", ["pre-gelu-separate-untied", "post-silu-nobias-concat"])
def test_other_architectures_equal_the_slow_reference(variant):
    """Pre-norm (no LN after the block; final norms per position) and bias-free layers."""
    model = random_model(seed=2, **VARIANTS[variant])
    src, tgt_in = torch.tensor([[5, 9, 12, 7, 2]]), torch.tensor([[model.config.decoder_start_id, 6, 11, 8]])
    fast = AL.alti_plus(model, src, tgt_in, torch.tensor([6, 11, 8, 2]))
    np.testing.assert_allclose(fast.full, reference_alti(model, src, tgt_in), atol=2e-5)
    with torch.no_grad():
        logits = model(src, tgt_in)[0]
    expected = torch.log_softmax(logits, -1)[torch.arange(4), torch.tensor([6, 11, 8, 2])].numpy()
    np.testing.assert_allclose(fast.logprobs, expected, atol=1e-4)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_block_decomposition_is_exact(norm):
    """sum of the terms + the unowned bias = the block's real output, for self- and cross-attention."""
    model = random_model(seed=3, norm=norm)
    layer = model.decoder_layers[0]
    gen = torch.Generator().manual_seed(0)
    x, memory = torch.randn(1, 4, 32, generator=gen), torch.randn(1, 6, 32, generator=gen)
    with torch.no_grad():
        q, k, v = layer.self_attn.project_qkv(layer.self_res.before(x))
        context, w = layer.self_attn.attend_heads(q, k, v, None, True)
        real = layer.self_res.after(x, layer.self_attn.merge_heads(context))[0]
        terms, bias = AL.block_terms(layer.self_attn, layer.self_res, w[0], v[0], x[0], True)
        np.testing.assert_allclose(terms.sum(1) + bias, real, atol=1e-5)
        q = layer.cross_attn.project_q(layer.cross_res.before(x))
        k, v = layer.cross_attn.project_kv(memory)
        context, w = layer.cross_attn.attend_heads(q, k, v, None, True)
        real = layer.cross_res.after(x, layer.cross_attn.merge_heads(context))[0]
        terms, bias = AL.block_terms(layer.cross_attn, layer.cross_res, w[0], v[0], x[0], False)
        assert terms.shape == (4, 7, 32)
        np.testing.assert_allclose(terms.sum(1) + bias, real, atol=1e-5)


def test_contribution_measure():
    """One dominant term takes (almost) everything; an opposite term gets nothing (the max(0, .))."""
    terms = torch.tensor([[[4.0, 0.0], [0.1, 0.1], [-1.0, 0.0]]])  # (1, 3, 2)
    c = AL.contributions(terms)[0]
    y = terms[0].sum(0)
    raw = [max(0.0, float(y.abs().sum() - (y - z).abs().sum())) for z in terms[0]]
    np.testing.assert_allclose(c, np.array(raw) / sum(raw), atol=1e-7)
    assert float(c[2]) == 0.0 and float(c[0]) > 0.9


def test_words_keep_rows_distributions(tiny_translator, own):
    w = A.attribute(tiny_translator, own, "alti_plus").words()
    np.testing.assert_allclose(w.source.sum(1) + w.prefix.sum(1) + w.start, 1.0, atol=1e-5)


def test_marian_like_start_token():
    model = random_model(seed=1, **VARIANTS["marian-like"])
    src, tgt_in = torch.tensor([[5, 9, 12, 7, 2]]), torch.tensor([[0, 6, 11, 8]])
    result = AL.alti_plus(model, src, tgt_in, torch.tensor([6, 11, 8, 2]))
    np.testing.assert_allclose(result.full.sum(1), 1.0, atol=1e-6)
    assert result.decoder_input[0, 0] > 0  # the first target token reads only the start token on its side
    assert np.all(np.triu(result.decoder_input, 1) == 0)  # causal: no later decoder input contributes

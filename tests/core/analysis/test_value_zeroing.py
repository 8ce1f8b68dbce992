"""Value zeroing (core/analysis/value_zeroing.py): each score equals re-running the unchanged model with that
token's value vectors zeroed by hand (hooks on the fused projections), rows are distributions, causality."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nmt_desktop.core.analysis import attribution as A
from nmt_desktop.core.analysis import value_zeroing as VZ
from random_models import VARIANTS, random_model

SENTENCE = "big dog eats red bird"


@pytest.fixture(scope="module")
def own(tiny_translator):
    return tiny_translator.translate(SENTENCE)


def _ids(tr, translation):
    src = torch.tensor([translation.source_ids])
    tgt_in = torch.tensor([[tr.config.decoder_start_id] + translation.target_ids[:-1]])
    return src, tgt_in, torch.tensor(translation.target_ids)


def final_states_zeroed(model, src, tgt_in, source_pos=None, target_pos=None):
    """The model's own forward (Transformer.encode / decode), its value vector at one position set to zero
    by forward hooks on the fused projections: qkv_proj (encoder and decoder self-attention: [q | k | v]),
    kv_proj (cross-attention: [k | v]). Returns the final decoder states (T, D) the output projection reads."""
    D = model.config.d_model
    handles, captured = [], {}

    def zero_at(pos, offset):
        def hook(module, args, output):
            output = output.clone()
            output[0, pos, offset:offset + D] = 0.0
            return output
        return hook

    if source_pos is not None:
        for layer in model.encoder_layers:
            handles.append(layer.self_attn.qkv_proj.register_forward_hook(zero_at(source_pos, 2 * D)))
        for layer in model.decoder_layers:
            handles.append(layer.cross_attn.kv_proj.register_forward_hook(zero_at(source_pos, D)))
    if target_pos is not None:
        for layer in model.decoder_layers:
            handles.append(layer.self_attn.qkv_proj.register_forward_hook(zero_at(target_pos, 2 * D)))
    handles.append(model.decoder_layers[-1].register_forward_hook(
        lambda module, args, output: captured.__setitem__("x", output[0])))
    try:
        with torch.no_grad():
            model.decode(tgt_in, model.encode(src))
            x = captured["x"]
            return (model.decoder_norm(x) if model.decoder_norm is not None else x)[0]
    finally:
        for h in handles:
            h.remove()


def by_hand(model, src, tgt_in):
    """(T, S + T) cosine distances, one full model run per zeroed input."""
    S, T = src.shape[1], tgt_in.shape[1]
    base = final_states_zeroed(model, src, tgt_in)
    cols = []
    for j in range(S + T):
        zeroed = final_states_zeroed(model, src, tgt_in, source_pos=j if j < S else None,
                                     target_pos=j - S if j >= S else None)
        cols.append(1 - torch.nn.functional.cosine_similarity(zeroed.double(), base.double(), dim=-1))
    distances = torch.stack(cols, 1).clamp_min(0).numpy()  # (T, S + T)
    distances[:, S:] = np.tril(distances[:, S:])  # the causal mask hides later positions (exactly 0 in the core)
    return distances


def test_equals_zeroing_by_hand(tiny_translator, own):
    model = tiny_translator.model
    src, tgt_in, targets = _ids(tiny_translator, own)
    result = VZ.value_zeroing_scores(model, src, tgt_in, targets)
    expected = by_hand(model, src, tgt_in)
    assert expected.max() > 1e-3  # zeroing does change the states
    np.testing.assert_allclose(result.distances, expected, atol=2e-5)
    np.testing.assert_allclose(result.full, expected / expected.sum(1, keepdims=True), atol=1e-4)


@pytest.mark.parametrize("variant", ["pre-gelu-separate-untied", "marian-like"])
def test_other_architectures_equal_zeroing_by_hand(variant):
    model = random_model(seed=4, **VARIANTS[variant])
    src, tgt_in = torch.tensor([[5, 9, 12, 7, 2]]), torch.tensor([[model.config.decoder_start_id, 6, 11, 8]])
    result = VZ.value_zeroing_scores(model, src, tgt_in, torch.tensor([6, 11, 8, 2]))
    np.testing.assert_allclose(result.distances, by_hand(model, src, tgt_in), atol=2e-5)


def test_rows_are_distributions(tiny_translator, own):
    a = A.attribute(tiny_translator, own, "value_zeroing")
    assert a.start is not None and not a.signed
    np.testing.assert_allclose(a.source.sum(1) + a.prefix.sum(1) + a.start, 1.0, atol=1e-5)
    assert a.source.min() >= 0 and a.prefix.min() >= 0
    np.testing.assert_allclose(a.logprobs, own.best.token_logprobs, atol=1e-4)
    np.testing.assert_allclose(a.source_share, a.source.sum(1), atol=1e-6)
    # word-for-word task: each target word's largest source score is its own source word
    assert [int(np.argmax(a.source[t, :-1])) for t in range(len(own.target_ids) - 1)] == list(range(5))


def test_chunks_give_the_same_scores(tiny_translator, own, monkeypatch):
    src, tgt_in, targets = _ids(tiny_translator, own)
    whole = VZ.value_zeroing_scores(tiny_translator.model, src, tgt_in, targets)
    monkeypatch.setattr(VZ, "ROWS", 3)
    chunked = VZ.value_zeroing_scores(tiny_translator.model, src, tgt_in, targets)
    np.testing.assert_allclose(chunked.full, whole.full, atol=1e-5)

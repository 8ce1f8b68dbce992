"""Token attributions (core/analysis/attribution.py): shapes, integrated gradients' completeness, leave-one-out and
input x gradient against direct recomputations, rollout rows, weights untouched, faithfulness, determinism."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nmt_desktop.core.analysis import attribution as A
from nmt_desktop.core.analysis.words import word_groups
from nmt_desktop.core.decoding.results import Hypothesis, Translation
from nmt_desktop.core.decoding.translator import Translator
from random_models import VARIANTS, random_model
from tiny_models import synthetic_pairs

SENTENCE = "big dog eats red bird"


@pytest.fixture(scope="module")
def own(tiny_translator):
    return tiny_translator.translate(SENTENCE)


@pytest.fixture(scope="module")
def scored(tiny_translator):
    return tiny_translator.score(SENTENCE, "gross hund isst blau vogel")  # one word wrong: a given translation


@pytest.fixture(scope="module")
def results(tiny_translator, own):
    return {m: A.attribute(tiny_translator, own, m) for m in A.METHODS}


def _logprob(model, src, tgt_in, t, target) -> float:
    with torch.no_grad():
        logits = model.decode(tgt_in, model.encode(src)).logits[0, t]
    return float(torch.log_softmax(logits.float(), -1)[target])


def _ids(tr: Translator, translation: Translation):
    src = torch.tensor([translation.source_ids])
    tgt_in = torch.tensor([[tr.config.decoder_start_id] + translation.target_ids[:-1]])
    return src, tgt_in


@pytest.mark.parametrize("which", ["own", "scored"])
@pytest.mark.parametrize("method", A.METHODS)
def test_shapes_and_strictly_lower_triangular_prefix(tiny_translator, own, scored, which, method):
    translation = own if which == "own" else scored
    a = A.attribute(tiny_translator, translation, method)
    S, T = len(translation.source_ids), len(translation.target_ids)
    assert a.method == method and a.level == "token"
    assert a.source.shape == (T, S) and a.prefix.shape == (T, T)
    assert a.source.dtype == np.float32 and a.prefix.dtype == np.float32
    assert a.source_tokens == translation.source_tokens and a.target_tokens == translation.target_tokens
    assert np.all(np.isfinite(a.source)) and np.all(np.isfinite(a.prefix))
    assert np.all(np.triu(a.prefix) == 0)  # y_t's prefix is y_0 .. y_{t-1} only
    assert np.any(np.tril(a.prefix, -1) != 0)  # and it is not all zeros
    assert a.seconds > 0
    # the explained f_t is the decoder's own log-probability of each token
    np.testing.assert_allclose(a.logprobs, translation.best.token_logprobs, atol=1e-4)
    if not a.signed:
        assert a.source.min() >= 0 and a.prefix.min() >= 0


def test_unknown_method_is_refused(tiny_translator, own):
    with pytest.raises(ValueError, match="unknown attribution method"):
        A.attribute(tiny_translator, own, "shap")


@pytest.mark.parametrize("which", ["own", "scored"])
def test_integrated_gradients_completeness(tiny_translator, own, scored, which):
    translation = own if which == "own" else scored
    a = A.integrated_gradients(tiny_translator, translation)
    total = a.source.sum(1) + a.prefix.sum(1)
    expected = a.logprobs - a.baseline_logprobs
    assert np.abs(expected).mean() > 1.0  # the baseline really is far from x
    gap = np.abs(total - expected)
    assert gap.max() < 0.5 and gap.mean() < 0.15  # measured: at most ~0.2 at 16 steps on the tiny model
    # and it is a Riemann sum: more steps, closer
    coarse = A.integrated_gradients(tiny_translator, translation, steps=2)
    fine = A.integrated_gradients(tiny_translator, translation, steps=48)
    gap_of = lambda x: np.abs(x.source.sum(1) + x.prefix.sum(1) - (x.logprobs - x.baseline_logprobs)).mean()
    assert gap_of(fine) < gap_of(coarse)


def test_integrated_gradients_baseline_is_the_zero_embedding(tiny_translator, own):
    a = A.integrated_gradients(tiny_translator, own, steps=2)
    model = tiny_translator.model
    src, tgt_in = _ids(tiny_translator, own)

    def zero(module, args, output):
        out = torch.zeros_like(output)
        if args[0] is tgt_in:  # the decoder start token stays as it is
            out[:, 0] = output[:, 0]
        return out

    handle = model.tgt_embed.register_forward_hook(zero)  # shared vocabulary: source and target
    try:
        expected = [_logprob(model, src, tgt_in, t, own.target_ids[t]) for t in range(len(own.target_ids))]
    finally:
        handle.remove()
    np.testing.assert_allclose(a.baseline_logprobs, expected, atol=1e-4)


@pytest.mark.parametrize("which", ["own", "scored"])
def test_leave_one_out_equals_a_direct_recomputation(tiny_translator, own, scored, which):
    translation = own if which == "own" else scored
    a = A.leave_one_out(tiny_translator, translation)
    model, cfg = tiny_translator.model, tiny_translator.config
    src, tgt_in = _ids(tiny_translator, translation)
    t, i = len(translation.target_ids) - 2, 1
    y = translation.target_ids[t]
    full = _logprob(model, src, tgt_in, t, y)
    changed = src.clone()
    changed[0, i] = cfg.unk_id
    assert a.source[t, i] == pytest.approx(full - _logprob(model, changed, tgt_in, t, y), abs=1e-4)
    j = 0  # the first target token, as the prefix of y_t: decoder input position j + 1
    changed = tgt_in.clone()
    changed[0, j + 1] = cfg.unk_id
    assert a.prefix[t, j] == pytest.approx(full - _logprob(model, src, changed, t, y), abs=1e-4)


def test_input_x_gradient_is_the_derivative_of_scaling_one_token(tiny_translator, own):
    """sum_d e_d * df/de_d = d/de f((1 + e) * embedding of token i) at e = 0: a central finite difference."""
    a = A.input_x_gradient(tiny_translator, own)
    s = A.saliency(tiny_translator, own)
    model = tiny_translator.model
    src, tgt_in = _ids(tiny_translator, own)
    t, i, eps = 2, 1, 1e-3

    def scaled(factor):
        def hook(module, args, output):
            if args[0] is src:
                output = output.clone()
                output[:, i] *= factor
                return output
            return None
        handle = model.tgt_embed.register_forward_hook(hook)
        try:
            return _logprob(model, src, tgt_in, t, own.target_ids[t])
        finally:
            handle.remove()

    derivative = (scaled(1 + eps) - scaled(1 - eps)) / (2 * eps)
    assert a.source[t, i] == pytest.approx(derivative, rel=0.02, abs=2e-3)
    # Cauchy-Schwarz: |e . g| <= |e| |g|
    norm = float(model.tgt_embed.weight[own.source_ids[i]].detach().norm())
    assert abs(a.source[t, i]) <= norm * s.source[t, i] + 1e-5


def _group_rows(groups, values):
    return np.array([np.mean(values[list(g)]) for g in groups])


def test_attention_is_the_mean_cross_attention(tiny_translator, own, results):
    a = results["attention"]
    model = tiny_translator.model
    src, tgt_in = _ids(tiny_translator, own)
    with torch.no_grad():
        dec = model.decode(tgt_in, model.encode(src), need_cross=True, need_self=True)
    L, H = model.config.decoder_layers, model.config.n_heads
    expected = sum(dec.cross_attention[0, l, h] for l in range(L) for h in range(H)) / (L * H)  # (T, S)
    np.testing.assert_allclose(a.source, expected.numpy(), atol=1e-6)
    np.testing.assert_allclose(a.source.sum(1), 1.0, atol=1e-5)
    self_mean = dec.self_attention[0].mean((0, 1)).numpy()  # (T, T)
    np.testing.assert_allclose(a.start, self_mean[:, 0], atol=1e-6)
    np.testing.assert_allclose(a.prefix.sum(1) + a.start, 1.0, atol=1e-5)
    assert a.source_share is None  # two separate distributions: no source share


def test_start_shares(results):
    for method, a in results.items():
        assert (a.start is not None) == (method in A.DISTRIBUTIONS), method
        if a.start is not None:
            assert a.start.shape == (len(a.target_tokens),) and a.start.min() >= 0
            assert a.start[0] > 0  # y_0's only decoder input is the start token
    for method in A.SHARES:
        a = results[method]
        np.testing.assert_allclose(a.source.sum(1) + a.prefix.sum(1) + a.start, 1.0, atol=1e-5)


def test_rollout_rows_are_distributions(results):
    a = results["attention_rollout"]
    np.testing.assert_allclose(a.source.sum(1), 1.0, atol=1e-5)
    assert a.source.min() >= 0
    assert np.all(a.prefix.sum(1) < 1.0)  # the start token's share is left out


def test_no_method_changes_the_model(tiny_translator, own):
    model = tiny_translator.model
    before = {k: v.clone() for k, v in model.state_dict().items()}
    grads = {n: None if p.grad is None else p.grad.clone() for n, p in model.named_parameters()}  # training's last
    for method in A.METHODS:
        a = A.attribute(tiny_translator, own, method)
        A.faithfulness(tiny_translator, own, a, fractions=(0.2,))
        after = model.state_dict()
        assert all(torch.equal(before[k], after[k]) for k in before), method
        for n, p in model.named_parameters():  # no gradient reached a parameter
            assert (p.grad is None) if grads[n] is None else torch.equal(p.grad, grads[n]), (method, n)
        assert not model.training
        assert not model.tgt_embed._forward_hooks  # the hooks are gone


def test_results_are_deterministic(tiny_translator, own, results):
    for method in A.METHODS:
        again = A.attribute(tiny_translator, own, method)
        np.testing.assert_array_equal(again.source, results[method].source)
        np.testing.assert_array_equal(again.prefix, results[method].prefix)
    f1 = A.faithfulness(tiny_translator, own, results["saliency"], seed=3)
    f2 = A.faithfulness(tiny_translator, own, results["saliency"], seed=3)
    for name in f1.per_token:
        np.testing.assert_array_equal(f1.per_token[name], f2.per_token[name])
    other = A.faithfulness(tiny_translator, own, results["saliency"], seed=4)
    assert not np.array_equal(other.per_token["random_comprehensiveness"], f1.per_token["random_comprehensiveness"])
    np.testing.assert_array_equal(other.comprehensiveness, f1.comprehensiveness)  # the method's own ranking


def test_word_level_sums_pieces(tiny_translator, results):
    for method, a in results.items():
        w = a.words()
        src_groups, tgt_groups = word_groups(a.source_tokens), word_groups(a.target_tokens)
        assert w.level == "word" and w.source.shape == (len(tgt_groups), len(src_groups))
        assert w.prefix.shape == (len(tgt_groups), len(tgt_groups)) and np.all(np.triu(w.prefix, 1) == 0)
        assert w.source_tokens[-1] == "</s>"
        first = src_groups[0]
        rows = tgt_groups[0]
        combine = np.mean if method in A.DISTRIBUTIONS else np.sum
        assert w.source[0, 0] == pytest.approx(combine(a.source[rows][:, first].sum(1)), abs=1e-5)
        if method not in A.DISTRIBUTIONS:  # additive methods: the total is kept
            assert w.source.sum() == pytest.approx(a.source.sum(), rel=1e-4, abs=1e-4)
        else:  # shares: rows keep their sums (averaged rows of distributions)
            np.testing.assert_allclose(w.source.sum(1), _group_rows(tgt_groups, a.source.sum(1)), atol=1e-5)
            assert (w.start is None) == (a.start is None)
        with pytest.raises(ValueError):
            w.words()


def test_faithfulness_shapes_and_definitions(tiny_translator, own, results):
    f = A.faithfulness(tiny_translator, own, results["leave_one_out"])
    K, T = len(A.FRACTIONS), len(own.target_ids)
    assert f.fractions == A.FRACTIONS and f.comprehensiveness.shape == (K,)
    assert all(v.shape == (K, T) for v in f.per_token.values())
    assert f.full_logprob == pytest.approx(own.best.logprob, abs=1e-4)
    # a direct recomputation of one comprehensiveness entry: remove token t's top ceil(0.1 * n) source tokens
    model, cfg = tiny_translator.model, tiny_translator.config
    src, tgt_in = _ids(tiny_translator, own)
    t = 1
    n = len(own.source_ids) - 1  # </s> is never removed
    top = np.argsort(-results["leave_one_out"].source[t, :n], kind="stable")[: int(np.ceil(0.1 * n))]
    removed = src.clone()
    removed[0, torch.as_tensor(top)] = cfg.unk_id
    y = own.target_ids[t]
    drop = _logprob(model, src, tgt_in, t, y) - _logprob(model, removed, tgt_in, t, y)
    assert f.per_token["comprehensiveness"][0, t] == pytest.approx(drop, abs=1e-4)


def test_saliency_is_more_comprehensive_than_random_on_the_tiny_model(tiny_translator):
    """Measured true on the tiny model (saliency's AOPC ~4-6 nats vs random's ~1-4 per sentence); asserted on the
    mean over four sentences."""
    comp, rand_comp, suff, rand_suff = [], [], [], []
    for source, _ in synthetic_pairs(4, seed=7):
        translation = tiny_translator.translate(source)
        f = A.faithfulness(tiny_translator, translation, A.saliency(tiny_translator, translation), seed=0)
        comp.append(f.aopc_comprehensiveness)
        rand_comp.append(f.random_aopc_comprehensiveness)
        suff.append(f.aopc_sufficiency)
        rand_suff.append(f.random_aopc_sufficiency)
    assert np.mean(comp) > np.mean(rand_comp)
    assert np.mean(suff) < np.mean(rand_suff)


@pytest.mark.parametrize("variant", ["pre-gelu-separate-untied", "marian-like"])
def test_other_architectures(tiny_trained, variant):
    """Separate source/target embeddings (two hooked modules), pre-norm, Marian's decoder start (<pad>)."""
    model = random_model(seed=1, **VARIANTS[variant])
    translator = Translator(model, tiny_trained[1], name=variant, backend="reference")
    src_ids, tgt_ids = [5, 9, 12, 7, 2], [6, 11, 8, 2]
    translation = Translation("x", src_ids, [f"▁s{i}" for i in src_ids] [:-1] + ["</s>"],
                              [Hypothesis(tgt_ids, [0.0] * 4, 0.0, [], None, tokens=[f"▁t{i}" for i in tgt_ids][:-1] + ["</s>"])])
    ig = A.integrated_gradients(translator, translation, steps=32)
    gap = ig.source.sum(1) + ig.prefix.sum(1) - (ig.logprobs - ig.baseline_logprobs)
    assert np.abs(gap).max() < 0.1 * max(1.0, float(np.abs(ig.logprobs - ig.baseline_logprobs).max()))
    assert np.any(ig.source != 0) and np.any(ig.prefix != 0)
    src, tgt_in = torch.tensor([src_ids]), torch.tensor([[model.config.decoder_start_id] + tgt_ids[:-1]])
    expected = [_logprob(model, src, tgt_in, t, y) for t, y in enumerate(tgt_ids)]
    for method in A.METHODS:
        a = A.attribute(translator, translation, method)
        np.testing.assert_allclose(a.logprobs, expected, atol=1e-4)
        assert np.all(np.triu(a.prefix) == 0)


def test_refuses_int8_and_joined_lines(tiny_trained, tiny_translator, own):
    with pytest.raises(ValueError, match="int8"):
        A.saliency(Translator(*tiny_trained, int8=True), own)
    joined = Translation.joined("a. b.", [own, own])
    with pytest.raises(ValueError, match="segments"):
        A.saliency(tiny_translator, joined)

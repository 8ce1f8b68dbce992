"""Search functions (greedy, sampling, beam) checked against teacher forcing through the model.

The central check: every n-best hypothesis of beam search carries the cross-attention (and token
log-probs, alternatives, self-attention) that a teacher-forced pass over that hypothesis's own
tokens produces, which proves the per-step records are traced through the beam correctly.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tiny_models import perturbed_model, right_padded

from nmt_desktop.core.config import DecodeConfig, ModelConfig
from nmt_desktop.core.decoding.pipeline import Search
from nmt_desktop.core.decoding.search import (BeamState, _sample, beam_search, greedy_or_sample,
                                     length_normalise)
from nmt_desktop.core.decoding.backends.choice import backend_for_search
from nmt_desktop.core.model.transformer import build_model

ATOL = 1e-5
EOS = 2
PAD = 0


def random_model(seed: int = 0, eos_bias: float = 0.0, **overrides):
    """Small perturbed random model; `eos_bias` is added to the </s> logit (final_logits_bias)."""
    cfg = ModelConfig(**{**dict(src_vocab_size=41, tgt_vocab_size=41, d_model=32, n_heads=4, encoder_layers=2,
                                decoder_layers=2, ffn_dim=48, max_positions=48, dropout=0.0,
                                final_logits_bias=True), **overrides})
    model = build_model(cfg, seed=seed)
    # Parameters redrawn here (not build_model's init), so the searches' behaviour that tests rely
    # on (how often </s> wins) does not move when the training init changes. Matrices: N(0, 1/fan_in)
    # (embeddings then enter at unit scale); norm gains 1 + noise; biases noise.
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() > 1:
                p.copy_(torch.randn(p.shape, generator=gen) * p.shape[1] ** -0.5)
            else:
                gain = 1.0 if "norm" in name and name.endswith("weight") else 0.0
                p.copy_(gain + 0.2 * torch.randn(p.shape, generator=gen))
        if model.logits_bias is not None:
            model.logits_bias[cfg.eos_id] += eos_bias
    return model.eval()




def random_sources(n, seed, vocab=41, lengths=(2, 9)):
    gen = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        k = int(torch.randint(lengths[0], lengths[1] + 1, (1,), generator=gen))
        out.append(torch.randint(4, vocab, (k - 1,), generator=gen).tolist() + [EOS])
    return out


def greedy(model, sources, cfg, head_mask=None):
    """Greedy (or sampling) through the pipeline's one dispatch: each row's hypothesis and the encoder attention."""
    assert cfg.beam_size == 1
    search = Search(model, right_padded(sources, model.config.pad_id), cfg, backend_for_search(model, None, head_mask))
    return [row[0] for row in search.run()], search.encoder_attention


def alt_ids(hyp):
    """The top-k ids of every position of a hypothesis."""
    return [[a.token_id for a in alts] for alts in hyp.alternatives]


def beam(model, sources, cfg, head_mask=None):
    state = BeamState()
    steps = list(beam_search(model, right_padded(sources, model.config.pad_id), cfg, state,
                             backend=backend_for_search(model, None, head_mask)))
    return state, steps


def teacher_force(model, source, token_ids):
    """Per-token log-probs (T, V), cross-attention (L, H, T, S) and self-attention (L, H, T, T) of a
    target forced through the model after decoder_start, for one unpadded source. <pad> gets
    -inf, as in the search (it is never generated)."""
    tgt = torch.tensor([[model.config.decoder_start_id] + list(token_ids)])[:, : len(token_ids)]
    with torch.no_grad():
        enc = model.encode(torch.tensor([source]))
        out = model.decode(tgt, enc, need_cross=True, need_self=True)
    logprobs = torch.log_softmax(out.logits[0].float(), -1)
    logprobs[:, model.config.pad_id] = float("-inf")
    return (logprobs, out.cross_attention[0].numpy(),
            out.self_attention[0].numpy())


def check_against_teacher_forcing(model, source, hyp, cfg):
    """hyp (a search.Hyp from a possibly padded batch) agrees with a teacher-forced pass."""
    T, S = len(hyp.token_ids), len(source)
    assert T >= 1
    logprobs, cross, self_attn = teacher_force(model, source, hyp.token_ids)
    forced_lp = logprobs[torch.arange(T), torch.tensor(hyp.token_ids)]
    # Log-probs can be large in magnitude: allow fp32 relative rounding too (batched vs. single GEMMs).
    np.testing.assert_allclose(hyp.token_logprobs, forced_lp.numpy(), atol=ATOL, rtol=1e-5)
    expected_score = length_normalise(float(forced_lp.double().sum()), T, cfg.length_penalty)
    assert hyp.score == pytest.approx(expected_score, abs=1e-4)
    if cfg.attention:
        assert hyp.attention.shape[2] == T
        np.testing.assert_allclose(hyp.attention[..., :S], cross, atol=ATOL, rtol=0)
        assert np.abs(hyp.attention[..., S:]).sum() == 0.0  # batch padding got nothing
    if cfg.self_attention:
        assert hyp.self_attention.shape[-2:] == (T, T)
        np.testing.assert_allclose(hyp.self_attention, self_attn, atol=ATOL, rtol=0)
    if cfg.alternatives:
        top = torch.topk(logprobs, min(cfg.alternatives, logprobs.shape[-1]), dim=-1)
        # Alternatives are ranked; compare the probabilities (ties could swap ids).
        alt_logprobs = np.log([[a.prob for a in alts] for alts in hyp.alternatives])
        np.testing.assert_allclose(alt_logprobs, top.values.numpy(), atol=ATOL, rtol=1e-5)
    assert hyp.finished == (hyp.token_ids[-1] == model.config.eos_id)
    assert model.config.eos_id not in hyp.token_ids[:-1]


# --- beam 1 == greedy ---------------------------------------------------------------------------


def mixed_model(seed, sources, cfg, **overrides):
    """A random model whose </s> bias makes greedy finish some of `sources` and cut others off."""
    for eos_bias in (2.0, 1.0, 3.0, 0.0, 4.0, 1.5, 2.5, 0.5, 5.0):
        model = random_model(seed, eos_bias, **overrides)
        if {h.finished for h in greedy(model, sources, cfg)[0]} == {True, False}:
            return model
    raise AssertionError("test setup: no </s> bias gives both finished and cut-off rows")


@pytest.mark.parametrize("seed, overrides", [
    (0, dict()),
    (1, dict(norm="pre", activation="gelu", tie_output=False)),
    (2, dict(shared_vocab=False, src_vocab_size=50, pos_layout="concat", bias=False)),
])
def test_beam_one_equals_greedy_batched(seed, overrides):
    sources = random_sources(10, seed=seed + 10)
    model = mixed_model(seed, sources, DecodeConfig(max_len_a=1.0, max_len_b=4), **overrides)
    for alpha in (0.0, 1.0):
        cfg_g = DecodeConfig(length_penalty=alpha, max_len_a=1.0, max_len_b=4, self_attention=True)
        cfg_b = DecodeConfig(beam_size=1, length_penalty=alpha, max_len_a=1.0, max_len_b=4, self_attention=True)
        hyps_g, enc_g = greedy(model, sources, cfg_g)
        state, _ = beam(model, sources, cfg_b)
        assert {h.finished for h in hyps_g} == {True, False}, "want both finished and cut-off rows"
        np.testing.assert_allclose(state.encoder_attention, enc_g, atol=ATOL, rtol=0)
        for src, g, bl in zip(sources, hyps_g, state.results):
            assert len(bl) == 1
            b = bl[0]
            assert b.token_ids == g.token_ids
            assert b.finished == g.finished
            assert b.score == pytest.approx(g.score, abs=1e-5)
            np.testing.assert_allclose(b.token_logprobs, g.token_logprobs, atol=ATOL, rtol=0)
            assert alt_ids(b) == alt_ids(g)
            np.testing.assert_allclose(b.attention, g.attention, atol=ATOL, rtol=0)
            np.testing.assert_allclose(b.self_attention, g.self_attention, atol=ATOL, rtol=0)
            check_against_teacher_forcing(model, src, g, cfg_g)


def test_beam_one_equals_greedy_on_trained_model(tiny_trained):
    from tiny_models import synthetic_pairs

    model, tok = tiny_trained
    sources = [tok.source.encode(s) + [model.config.eos_id] for s, _ in synthetic_pairs(24, seed=321)]
    hyps_g, _ = greedy(model, sources, DecodeConfig())
    state, _ = beam(model, sources, DecodeConfig(beam_size=1))
    for g, (b,) in zip(hyps_g, state.results):
        assert b.token_ids == g.token_ids
        assert b.score == pytest.approx(g.score, abs=1e-5)
        np.testing.assert_allclose(b.attention, g.attention, atol=ATOL, rtol=0)


# --- n-best: attention, scores and order traced through the beam -----------------------------------


@pytest.mark.parametrize("K, nbest, alpha", [(4, 3, 1.0), (5, 5, 0.6), (4, 4, 0.0)])
def test_nbest_hypotheses_match_teacher_forcing_random_model(K, nbest, alpha):
    model = random_model(seed=K, eos_bias=2.5, norm="pre")
    sources = random_sources(5, seed=K + 100)
    cfg = DecodeConfig(beam_size=K, nbest=nbest, length_penalty=alpha, max_len_a=1.0, max_len_b=4,
                       self_attention=True, alternatives=4)
    state, _ = beam(model, sources, cfg)
    assert len(state.results) == len(sources)
    lengths = set()
    for src, hyps in zip(sources, state.results):
        assert len(hyps) == nbest
        scores = [h.score for h in hyps]
        assert scores == sorted(scores, reverse=True)
        assert len({tuple(h.token_ids) for h in hyps}) == nbest, "n-best entries must be distinct"
        for h in hyps:
            lengths.add(len(h.token_ids))
            check_against_teacher_forcing(model, src, h, cfg)
    assert len(lengths) > 1, "hypotheses of different lengths make the check meaningful"


@pytest.mark.parametrize("K, nbest", [(4, 3), (5, 4)])
def test_nbest_hypotheses_match_teacher_forcing_trained_model(tiny_trained, K, nbest):
    from tiny_models import synthetic_pairs

    model, tok = tiny_trained
    sources = [tok.source.encode(s) + [model.config.eos_id] for s, _ in synthetic_pairs(6, seed=77 + K)]
    cfg = DecodeConfig(beam_size=K, nbest=nbest, self_attention=True)
    state, steps = beam(model, sources, cfg)
    for src, hyps in zip(sources, state.results):
        assert len(hyps) == nbest
        assert [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)
        for h in hyps:
            check_against_teacher_forcing(model, src, h, cfg)
    for position in steps:  # the streamed best live hypothesis ends in the reported token
        for step in position:
            assert len(step.prefix_ids) == step.index + 1 and step.prefix_ids[-1] == step.token_id


def test_beam_is_at_least_as_good_as_greedy_in_model_score():
    """With no length penalty, the best beam's log-prob is never below greedy's (same length cap)."""
    model = random_model(seed=8, eos_bias=2.0)
    sources = random_sources(8, seed=8)
    kw = dict(length_penalty=0.0, max_len_a=1.0, max_len_b=3)
    hyps_g, _ = greedy(model, sources, DecodeConfig(**kw))
    state, _ = beam(model, sources, DecodeConfig(beam_size=6, **kw))
    for g, hyps in zip(hyps_g, state.results):
        if g.finished:
            assert hyps[0].score >= g.score - 1e-5


# --- sampling -------------------------------------------------------------------------------------


def test_seeded_sampling_is_reproducible_and_seeds_differ():
    model = random_model(seed=5, eos_bias=1.0)
    sources = random_sources(4, seed=5)
    cfg = DecodeConfig(sample=True, temperature=5.0, seed=42, max_len_b=6)
    a, _ = greedy(model, sources, cfg)
    b, _ = greedy(model, sources, cfg)
    assert [h.token_ids for h in a] == [h.token_ids for h in b]
    others = [greedy(model, sources, DecodeConfig(sample=True, temperature=5.0, seed=s, max_len_b=6))[0]
              for s in (1, 2, 3)]
    assert any([h.token_ids for h in o] != [h.token_ids for h in a] for o in others)
    for src, h in zip(sources, a):  # sampled tokens still report their true (untempered) log-probs
        check_against_teacher_forcing(model, src, h, DecodeConfig(sample=True, seed=42, max_len_b=6))


@pytest.mark.parametrize("filters", [dict(top_k=1), dict(top_p=1e-6), dict(top_k=1, top_p=0.5, temperature=3.0)])
def test_degenerate_sampling_equals_greedy(filters):
    model = random_model(seed=6, eos_bias=2.0)
    sources = random_sources(6, seed=6)
    g, _ = greedy(model, sources, DecodeConfig())
    for seed in (0, 1):
        s, _ = greedy(model, sources, DecodeConfig(sample=True, seed=seed, **filters))
        assert [h.token_ids for h in s] == [h.token_ids for h in g]


def test_sample_filters_restrict_the_support():
    logprobs = torch.log_softmax(torch.tensor([[4.0, 3.0, 2.0, 1.0, 0.0, -1.0]]), -1).repeat(400, 1)
    gen = torch.Generator().manual_seed(0)
    drawn = set(_sample(logprobs, DecodeConfig(sample=True, top_k=3, top_p=1.0, temperature=10.0), gen).tolist())
    assert drawn == {0, 1, 2}
    p = logprobs[0].exp()
    cut = float(p[0] + 0.5 * p[1])  # nucleus reaching this mass needs the top two tokens
    drawn = set(_sample(logprobs, DecodeConfig(sample=True, top_p=cut, temperature=1.0), gen).tolist())
    assert drawn == {0, 1}


def test_decoding_leaves_the_global_rng_alone():
    """Unseeded decoding must not reseed torch's global generator (that broke users' seeded runs)."""
    model = random_model(seed=7)
    sources = random_sources(2, seed=7)
    torch.manual_seed(1234)
    expected = torch.rand(4)
    torch.manual_seed(1234)
    greedy(model, sources, DecodeConfig())
    greedy(model, sources, DecodeConfig(sample=True))
    beam(model, sources, DecodeConfig(beam_size=3))
    assert torch.equal(torch.rand(4), expected)


# --- lengths ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["greedy", "beam", "sample"])
def test_min_length_suppresses_eos(mode):
    model = random_model(seed=9, eos_bias=1e3)  # </s> wins at once unless suppressed
    sources = random_sources(5, seed=9)
    cfgs = {"greedy": dict(), "beam": dict(beam_size=3, nbest=3), "sample": dict(sample=True, seed=3)}
    run = beam if mode == "beam" else greedy

    def hyps_of(min_length, best_only=False):
        out = run(model, sources, DecodeConfig(min_length=min_length, **cfgs[mode]))[0]
        return [h for hs in out.results for h in hs[: 1 if best_only else None]] if mode == "beam" else out

    assert all(h.token_ids == [EOS] for h in hyps_of(0, best_only=True))
    for h in hyps_of(4):
        assert h.finished and h.token_ids[-1] == EOS
        assert len(h.token_ids) - 1 >= 4
        assert EOS not in h.token_ids[:-1]


@pytest.mark.parametrize("mode", ["greedy", "beam", "sample"])
def test_pad_is_never_generated(mode):
    """Even when <pad> has by far the highest logit (as transformers does for Marian)."""
    model = random_model(seed=4)
    with torch.no_grad():
        model.logits_bias[model.config.pad_id] += 1e3
    sources = random_sources(4, seed=4)
    cfgs = {"greedy": dict(), "beam": dict(beam_size=3, nbest=3), "sample": dict(sample=True, seed=1)}
    out = (beam if mode == "beam" else greedy)(model, sources, DecodeConfig(max_len_a=0, max_len_b=6, **cfgs[mode]))[0]
    hyps = [h for hs in out.results for h in hs] if mode == "beam" else out
    assert hyps and all(PAD not in h.token_ids and len(h.token_ids) > 0 for h in hyps)


@pytest.mark.parametrize("mode", ["greedy", "beam"])
def test_max_length_is_per_sentence_and_cut_off_is_not_finished(mode):
    """No </s> ever: each sentence stops at a * its own length + b, even in a batch with longer ones."""
    model = random_model(seed=10, eos_bias=-1e4)
    sources = [[5, 6, 2], [7, 8, 9, 10, 11, 12, 13, 14, 2], [15, 2]]
    cfg = DecodeConfig(max_len_a=1.5, max_len_b=2, beam_size=1 if mode == "greedy" else 3,
                       nbest=1 if mode == "greedy" else 2)
    if mode == "greedy":
        per_source = [[h] for h in greedy(model, sources, cfg)[0]]
    else:
        per_source = beam(model, sources, cfg)[0].results
    for src, hyps in zip(sources, per_source):
        for h in hyps:
            assert len(h.token_ids) == cfg.max_length(len(src), model.config.max_positions)
            assert not h.finished and EOS not in h.token_ids
            check_against_teacher_forcing(model, src, h, cfg)
    # and the batch gives each sentence what it gets alone
    for src, hyps in zip(sources, per_source):
        alone = [[h] for h in greedy(model, [src], cfg)[0]] if mode == "greedy" else beam(model, [src], cfg)[0].results
        assert [h.token_ids for h in alone[0]] == [h.token_ids for h in hyps]


def test_max_length_capped_by_max_positions():
    model = random_model(seed=11, eos_bias=-1e4, max_positions=12)
    hyps, _ = greedy(model, [[5, 6, 7, 8, 9, 10, 2]], DecodeConfig(max_len_a=3.0, max_len_b=10))
    assert len(hyps[0].token_ids) == 11 and not hyps[0].finished


# --- attention formats, head masks, inference mode ----------------------------------------------------


@pytest.mark.parametrize("mode", ["greedy", "beam", "sample"])
def test_hypothesis_attention_shapes_and_normalisation(mode):
    model = random_model(seed=12, eos_bias=2.0)
    sources = random_sources(3, seed=12)
    L, H = model.config.decoder_layers, model.config.n_heads
    kw = {"greedy": dict(), "beam": dict(beam_size=4, nbest=2), "sample": dict(sample=True, seed=0)}[mode]
    cfg = DecodeConfig(self_attention=True, **kw)
    if mode == "beam":
        state, _ = beam(model, sources, cfg)
        hyps, enc = [h for hs in state.results for h in hs], state.encoder_attention
    else:
        hyps, enc = greedy(model, sources, cfg)
    S = max(map(len, sources))
    assert enc.shape == (3, model.config.encoder_layers, H, S, S)
    for h in hyps:
        T = len(h.token_ids)
        assert h.attention.shape == (L, H, T, S) and h.attention.dtype == np.float32
        np.testing.assert_allclose(h.attention.sum(-1), 1.0, atol=ATOL)
        assert h.self_attention.shape == (L, H, T, T)
        np.testing.assert_allclose(h.self_attention.sum(-1), 1.0, atol=ATOL)
        assert np.abs(np.triu(h.self_attention, 1)).sum() == 0.0
    no_attn = DecodeConfig(attention=False, **kw)
    plain = beam(model, sources, no_attn)[0].results[0] if mode == "beam" else greedy(model, sources, no_attn)[0]
    assert all(h.attention is None and h.self_attention is None for h in plain)


def test_per_sentence_head_mask_follows_rows_in_greedy_batch():
    model = random_model(seed=13, eos_bias=2.0)
    sources = random_sources(4, seed=13)
    L, H = model.config.decoder_layers, model.config.n_heads
    masks = torch.ones(4, L, H)
    masks[1, :, 0] = 0.0
    masks[3, 0] = 0.0
    cfg = DecodeConfig()
    batch, _ = greedy(model, sources, cfg, head_mask=masks)
    state, _ = beam(model, sources, DecodeConfig(beam_size=1), head_mask=masks)
    for i, src in enumerate(sources):
        alone, _ = greedy(model, [src], cfg, head_mask=masks[i])
        assert batch[i].token_ids == alone[0].token_ids == state.results[i][0].token_ids
        np.testing.assert_allclose(batch[i].token_logprobs, alone[0].token_logprobs, atol=ATOL, rtol=0)


@pytest.mark.parametrize("mode", ["greedy", "beam"])
def test_no_inference_mode_between_steps_and_early_stop(mode):
    model = random_model(seed=14)
    src = right_padded(random_sources(2, seed=14))
    cfg = DecodeConfig(beam_size=1 if mode == "greedy" else 3, max_len_b=8)

    def search():
        return greedy_or_sample(model, src, cfg) if mode == "greedy" else beam_search(model, src, cfg, BeamState())

    gen = search()
    first = next(gen)
    assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()
    next(gen)
    gen.close()  # stop early
    assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()
    again = list(search())
    assert [s.token_id for s in again[0]] == [s.token_id for s in first]
    assert not torch.is_inference_mode_enabled()

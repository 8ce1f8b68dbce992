"""Forced prefixes, head ablation, head statistics and ranking, alignments, coverage, beam tree."""

from __future__ import annotations

import dataclasses
from dataclasses import replace

import numpy as np
import pytest
import torch

from nmt_desktop.core.analysis import alignment
from nmt_desktop.core.analysis import ablation, coverage, head_statistics, pharaoh
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.search import BeamState, beam_search
from tiny_models import reference, synthetic_pairs

SENTENCE = "red cat runs"


@pytest.fixture(scope="module")
def probe():
    return synthetic_pairs(12, seed=5)


# --- forced prefix -------------------------------------------------------------------------------

@pytest.mark.parametrize("beam", [1, 3])
def test_forced_prefix_is_really_forced(tiny_translator, beam):
    tr = tiny_translator
    prefix = tr.target_prefix_ids("hund")  # "red" never translates to "hund"
    free = tr.translate(SENTENCE, DecodeConfig(beam_size=beam))
    assert free.target_ids[: len(prefix)] != prefix
    forced = tr.translate(SENTENCE, DecodeConfig(beam_size=beam), prefix_text="hund")
    assert forced.target_ids[: len(prefix)] == prefix
    assert forced.target_ids[-1] == tr.config.eos_id  # search went on freely to the end
    assert forced.best.token_logprobs[0] < free.best.token_logprobs[0]  # the real (low) log-prob


def test_forced_prefix_steps_and_attention_equal_teacher_forcing(tiny_translator):
    tr, model, cfg = tiny_translator, tiny_translator.model, tiny_translator.config
    prefix = tr.target_prefix_ids("hund katze")
    stream = tr.stream(SENTENCE, DecodeConfig(), prefix=prefix)
    steps = list(stream)
    assert [s.token_id for s in steps[: len(prefix)]] == prefix
    assert [s.forced for s in steps] == [True] * len(prefix) + [False] * (len(steps) - len(prefix))
    ids = stream.result.target_ids
    src = torch.tensor([tr.source_ids(SENTENCE)])
    tgt_in = torch.tensor([[cfg.decoder_start_id] + ids[:-1]])
    with torch.inference_mode():
        out = model.decode(tgt_in, model.encode(src), need_cross=True)
    teacher = out.cross_attention[0].numpy()  # (L, H, T, S)
    np.testing.assert_allclose(stream.result.attention, teacher, atol=1e-5)
    lp = torch.log_softmax(out.logits[0].float(), -1)
    for t, token in enumerate(prefix):
        assert steps[t].logprob == pytest.approx(float(lp[t, token]), abs=1e-4)


def test_prefix_with_eos_is_refused(tiny_translator):
    with pytest.raises(ValueError):
        tiny_translator.translate(SENTENCE, prefix=[tiny_translator.config.eos_id])


# --- ablation --------------------------------------------------------------------------------------

def test_ablating_all_heads_changes_output_none_keeps_it(tiny_translator):
    tr = tiny_translator
    base = tr.translate(SENTENCE)
    assert base.text == reference(SENTENCE)
    none = tr.translate(SENTENCE, head_mask=ablation.ablation_mask(tr, []))
    assert none.target_ids == base.target_ids
    ablated = tr.translate(SENTENCE, head_mask=ablation.ablation_mask(tr, ablation.all_heads(tr)))
    assert ablated.target_ids != base.target_ids


def test_mean_replacement_runs_and_differs_from_zeroing(tiny_translator, probe):
    tr = tiny_translator
    means = ablation.head_means(tr, [s for s, _ in probe])
    assert means.shape == (tr.config.decoder_layers, tr.config.n_heads, tr.config.d_model // tr.config.n_heads)
    heads = ablation.all_heads(tr)
    text = "big dog eats water"
    mean = tr.translate(text, head_override=ablation.mean_override(means, heads))
    zero = tr.translate(text, head_mask=ablation.ablation_mask(tr, heads))
    assert mean.target_ids != zero.target_ids
    nothing = tr.translate(text, head_override=ablation.mean_override(means, []))
    assert nothing.target_ids == tr.translate(text).target_ids


def test_ablation_mask_names_a_missing_head_as_people_write_it(tiny_translator):
    with pytest.raises(ValueError, match="no cross-attention head L9 H1 in a model with 2 decoder layers"):
        ablation.ablation_mask(tiny_translator, [(8, 0)])


# --- statistics and ranking ----------------------------------------------------------------------------

def test_head_stats_rows(tiny_translator, probe):
    tr = tiny_translator
    rows = head_statistics.head_stats(tr.translate(SENTENCE))
    assert [(r.layer, r.head) for r in rows] == ablation.all_heads(tr)
    for r in rows:
        d = r.to_dict()
        assert set(d) == {"layer", "head", "entropy", "eos_share", "punct_share", "diagonality", "monotonicity",
                          "coverage"}
        assert 0 <= r.entropy <= np.log(4) + 1e-6 and 0 <= r.eos_share <= 1 and r.punct_share == 0
        assert 0 <= r.diagonality <= 1 and -1 <= r.monotonicity <= 1 and 0 <= r.coverage <= 1
    last = [r for r in rows if r.layer == 1]
    assert max(r.diagonality for r in last) > 0.9  # a monotone word-by-word task
    avg = head_statistics.probe_head_stats(tr, [s for s, _ in probe])
    assert [(r.layer, r.head) for r in avg] == ablation.all_heads(tr)


def test_attention_stats_on_a_known_matrix():
    eye = np.eye(3)[None, None]  # (1, 1, 3, 3): a perfectly diagonal head
    (row,) = head_statistics.attention_stats(eye, ["a", "▁,", "</s>"])
    assert row.entropy == pytest.approx(0, abs=1e-6) and row.diagonality == 1 and row.monotonicity == 1
    assert row.eos_share == pytest.approx(1 / 3) and row.punct_share == pytest.approx(1 / 3)
    assert row.coverage == 1


def test_rank_heads_deterministic_and_complete(tiny_translator, probe):
    first = ablation.rank_heads(tiny_translator, probe, max_sentences=8, seed=1)
    second = ablation.rank_heads(tiny_translator, probe, max_sentences=8, seed=1)
    assert first == second
    assert sorted((r.layer, r.head) for r in first) == ablation.all_heads(tiny_translator)
    drops = [r.bleu_drop for r in first]
    assert drops == sorted(drops, reverse=True)


# --- alignments and coverage ---------------------------------------------------------------------

def test_argmax_alignment_of_monotone_sentence(tiny_translator):
    tr = tiny_translator
    t = tr.translate(SENTENCE)
    old = alignment.OLD_METHOD  # last layer's attention where a word is predicted, argmax
    assert pharaoh.to_pharaoh(alignment.align(t, old)) == "0-0 1-1 2-2"
    prefix = tr.tokenizers.source.continuing_prefix  # None for byte-level BPE: the same words
    assert pharaoh.to_pharaoh(alignment.align(t, old, continuing_prefix=prefix)) == "0-0 1-1 2-2"
    assert alignment.align(t, replace(old, decision="threshold", threshold=0.3))


def test_pharaoh_round_trip():
    links = [(2, 0), (0, 1), (1, 1), (10, 3)]
    text = pharaoh.to_pharaoh(links)
    assert text == "0-1 1-1 2-0 10-3"
    assert pharaoh.parse_pharaoh(text) == set(links)
    assert pharaoh.parse_pharaoh("") == set()
    with pytest.raises(ValueError):
        pharaoh.parse_pharaoh("1-2 x")


def test_coverage_warnings(tiny_translator):
    t = tiny_translator.translate(SENTENCE)
    assert coverage.coverage_warnings(t) == []
    L, H, T, S = t.attention.shape
    flat = dataclasses.replace(t.best, attention=np.full((L, H, T, S), 1.0 / S, np.float32))
    uniform = dataclasses.replace(t, nbest=[flat])
    kinds = {w.kind for w in coverage.coverage_warnings(uniform, low=T / S + 0.01)}
    assert kinds == {"omission", "diffuse"}
    # every head sharp, each on another source position: the average is spread, but nothing is diffuse
    sharp = np.zeros((L, H, T, S), np.float32)
    for h in range(L * H):
        sharp[h // H, h % H, :, h % S] = 1.0
    spread = dataclasses.replace(t, nbest=[dataclasses.replace(t.best, attention=sharp)])
    assert L * H >= S and not [w for w in coverage.coverage_warnings(spread) if w.kind == "diffuse"]
    one_blurred = sharp.copy()
    one_blurred[:, :, 1] = 1.0 / S  # token 1: every head uniform
    blurred = dataclasses.replace(t, nbest=[dataclasses.replace(t.best, attention=one_blurred)])
    assert [(w.kind, w.index) for w in coverage.coverage_warnings(blurred)] == [("diffuse", 1)]


# --- beam tree -------------------------------------------------------------------------------------------

def test_beam_tree(tiny_translator):
    tr, K = tiny_translator, 3
    cfg = DecodeConfig(beam_size=K)
    state = BeamState()
    src = tr.batch_ids([tr.source_ids(SENTENCE), tr.source_ids("big dog eats water")])
    for _ in beam_search(tr.model, src, cfg, state):
        pass
    tree = state.tree
    assert all(n.id == i for i, n in enumerate(tree))
    for n in tree:
        if n.parent is not None:
            parent = tree[n.parent]
            assert parent.status in ("kept", "forced") and parent.step == n.step - 1
            assert parent.sentence == n.sentence
        else:
            assert n.step == 0
    for b in range(2):
        steps = {n.step for n in tree if n.sentence == b}
        for s in steps:
            kept = [n for n in tree if n.sentence == b and n.step == s and n.status == "kept"]
            assert len(kept) <= K
            assert len([n for n in tree if n.sentence == b and n.step == s]) <= 2 * K
        best = state.results[b][0].token_ids
        ends = [n for n in tree if n.sentence == b and state.node_tokens(n.id) == best]
        assert ends and ends[0].status == "finished"
        rows = state.node_attention(ends[0].id)  # (L, H, t, S)
        S = len(tr.source_ids(SENTENCE if b == 0 else "big dog eats water"))
        np.testing.assert_allclose(rows[..., :S], state.results[b][0].attention[..., :S], atol=1e-6)


def test_beam_tree_with_forced_prefix(tiny_translator):
    tr = tiny_translator
    prefix = tr.target_prefix_ids("hund")
    stream = tr.stream(SENTENCE, DecodeConfig(beam_size=3), prefix=prefix)
    list(stream)
    tree = stream.beam_state.tree
    forced = [n for n in tree if n.status == "forced"]
    assert [n.token for n in forced] == prefix and [n.step for n in forced] == list(range(len(prefix)))
    assert all(n.step >= len(prefix) for n in tree if n.status != "forced")
    assert stream.result.target_ids[: len(prefix)] == prefix

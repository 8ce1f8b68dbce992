"""Continuous batching (nmt_desktop/core/decoding/continuous.py): sentences that join a running batch at
different steps, and leave it as they finish, decode as they do in a batch of their own: the same tokens,
log-probs and cross-attention, on the bundled en-de (4 heads, post-norm), on a random 8-head Marian-like
model whose rows run to their length limits (the buffers grow while rows are live), and with int8 weights."""

from __future__ import annotations

import random

import pytest
import torch

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.continuous import ContinuousGreedy, continuous_applies
from nmt_desktop.core.decoding.translator import Translator
from nmt_desktop.core.locations import bundled_models_dir
from tiny_models import perturbed_model, tiny_config, tiny_tokenizers

SENTENCES = ["The cat sleeps.", "I bought a new car yesterday.", "Where is the nearest train station?",
             "It is raining.", "We went to the market and bought fruit, bread, cheese and some flowers for my "
             "mother, who was ill and could not leave the house for a whole week.", "Tom is here.",
             "Do you speak French?", "The meeting was postponed because the director was travelling.",
             "Yes.", "She reads a book every week, usually in the evening after dinner.", "Thank you very much!",
             "Can you help me carry these heavy boxes up the stairs to the third floor, please?"]
CFG = DecodeConfig(beam_size=1, attention=True, alternatives=0)


@pytest.fixture(scope="module")
def en_de() -> Translator:
    return Translator.load(bundled_models_dir() / "en-de")


def _staggered(translator: Translator, texts: list[str], capacity: int, seed: int, cfg: DecodeConfig = CFG):
    """Every text through one ContinuousGreedy, 1-3 joining between steps as rows free up; Translations in
    input order, and the most rows any step held."""
    search = ContinuousGreedy(translator, cfg, capacity)
    units = translator.units(texts)
    pending, done, widest, rng = list(range(len(units))), [None] * len(units), 0, random.Random(seed)
    while pending or search.rows:
        take = min(search.free, len(pending), rng.randint(0, 3) if search.rows else 1)
        if take:
            picked, pending = pending[:take], pending[take:]
            search.join(search.prepare([units[i] for i in picked]), picked)
        widest = max(widest, len(search.rows))
        for index, translation in search.step():
            done[index] = translation
    return done, widest


def _assert_same(got, expected) -> None:
    for a, b in zip(got, expected):
        assert a.target_ids == b.target_ids and a.text == b.text
        assert a.best.token_logprobs == pytest.approx(b.best.token_logprobs, abs=1e-4)
        assert a.best.attention.shape == b.best.attention.shape  # (L, H, T, S) of its own source
        assert a.best.attention == pytest.approx(b.best.attention, abs=1e-4)


@pytest.mark.parametrize("seed", [0, 1])
def test_rows_joining_and_leaving_decode_as_they_do_alone(en_de, seed):
    expected = [en_de.translate_units([u], CFG)[0] for u in en_de.units(SENTENCES)]
    got, widest = _staggered(en_de, SENTENCES, capacity=5, seed=seed)
    _assert_same(got, expected)
    assert widest == 5  # rows really shared steps, at different positions


def test_an_eight_head_model_running_to_its_length_limits(tmp_path):
    tokenizers = tiny_tokenizers()
    model = perturbed_model(tiny_config(tokenizers, n_heads=8, d_model=64, ffn_dim=96, decoder_layers=2,
                                        activation="silu", pos_layout="concat", final_logits_bias=True), seed=3)
    translator = Translator(model, tokenizers, name="random")
    assert continuous_applies(translator, CFG)
    texts = ["a", "the small green bird sees the big red cat", "red cat", "the big bird", "green", "the cat sees"]
    texts = texts * 2 + ["the small green bird sees the big red cat and the big red bird sees the small green cat"] + texts
    assert len(translator.unit(texts[12]).source_ids) > 16  # joins later and widens the sources' buffers
    expected = [translator.translate_units([u], CFG)[0] for u in translator.units(texts)]
    got, widest = _staggered(translator, texts, capacity=4, seed=2)
    _assert_same(got, expected)
    assert widest == 4 and max(len(t.target_ids) for t in got) > 16  # past the first self-attention buffer's 16


def test_int8_weights(en_de):
    int8 = Translator.load(bundled_models_dir() / "en-de", int8=True)
    expected = [int8.translate_units([u], CFG)[0] for u in int8.units(SENTENCES[:6])]
    got, _ = _staggered(int8, SENTENCES[:6], capacity=3, seed=4)
    assert [g.target_ids for g in got] == [e.target_ids for e in expected]


def test_what_it_cannot_decode_exactly_is_refused(en_de):
    for cfg in (DecodeConfig(beam_size=4), DecodeConfig(min_length=3), DecodeConfig(sample=True)):
        assert not continuous_applies(en_de, cfg)
        with pytest.raises(ValueError, match="continuous batching needs"):
            ContinuousGreedy(en_de, cfg)
    python = Translator.load(bundled_models_dir() / "en-de", backend="python")
    assert not continuous_applies(python, CFG)
    search = ContinuousGreedy(en_de, CFG, capacity=2)
    with pytest.raises(ValueError, match="3 sentences for 2 free rows"):
        search.join(search.prepare(en_de.units(SENTENCES[:3])), [0, 1, 2])


def test_the_compiled_step_reads_each_rows_own_position_and_source(en_de):
    """The step itself (native/decode_step.cpp's row_pos, row_src): two rows at different positions over
    sources of different lengths give what each gives in a batch of its own."""
    search = ContinuousGreedy(en_de, CFG, capacity=2)
    units = en_de.units([SENTENCES[1], SENTENCES[0]])
    search.join(search.prepare(units[:1]), ["long"])
    for _ in range(3):
        assert search.step() == []
    search.join(search.prepare(units[1:]), ["short"])
    assert search._positions[:2].tolist() == [3, 0] and search._sources[:2].tolist() == [
        len(units[0].source_ids), len(units[1].source_ids)]
    done = {}
    while search.rows:
        done.update(search.step())
    _assert_same([done["long"], done["short"]], [en_de.translate_units([u], CFG)[0] for u in units])
    assert torch.equal(torch.tensor(done["short"].target_ids), torch.tensor(en_de.translate_units([units[1]], CFG)[0].target_ids))


def test_a_long_sentences_buffers_are_let_go_when_the_search_empties(en_de):
    search = ContinuousGreedy(en_de, CFG, capacity=4)
    long_text = " ".join([SENTENCES[4], SENTENCES[9], SENTENCES[11]])
    [unit] = en_de.units([long_text], whole=True)
    assert len(unit.source_ids) > 64
    search.join(search.prepare([unit]), ["long"])
    while search.rows:
        search.step()
    assert search._keys_t == [] and search._self_k == []  # not kept for the short sentences that follow
    short = en_de.units(SENTENCES[:2])
    search.join(search.prepare(short), [0, 1])
    done = {}
    while search.rows:
        done.update(search.step())
    assert search._keys_t[0].shape[2] == 16  # made again for what is live
    _assert_same([done[0], done[1]], [en_de.translate_units([u], CFG)[0] for u in short])

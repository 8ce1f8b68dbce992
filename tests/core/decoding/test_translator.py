"""Translator: streaming, batching, long inputs, user-facing attention formats, and the trained
tiny model's quality on the synthetic word-mapping task (tests/tiny_models.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nmt_desktop.core.analysis.words import word_starts
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.document import document_lines, line_units
from nmt_desktop.core.model.transformer import build_model
from nmt_desktop.core.decoding.document import InputTooLongError
from nmt_desktop.core.decoding.translator import TargetLanguageError, Translator, list_codes

from tiny_models import LEXICON, multilingual_translator, reference, synthetic_pairs, tiny_config

ATOL = 1e-5
MODES = {
    "greedy": DecodeConfig(),
    "beam": DecodeConfig(beam_size=4, nbest=3),
    "sample": DecodeConfig(sample=True, seed=7, temperature=1.5),
}


@pytest.fixture(scope="module")
def random_translator(tiny_trained):
    """An untrained model on the trained tokenizers, with max_positions 16 (long-input tests)."""
    _, tok = tiny_trained
    model = build_model(tiny_config(tok, max_positions=16, decoder_layers=3), seed=3)
    return Translator(model, tok, name="random")


@pytest.fixture(scope="module")
def held_out():
    """200 synthetic pairs none of which is among the model's training pairs.

    More than the 50 the accuracy bar was stated for: the 200-step fixture model gets ~86% exact
    match on held-out pairs, and with 50 pairs the estimate's standard deviation is ~5 points, so
    an arbitrary 50 can land below 80% (seed 4242's first 50: 76%) although the model is fine.
    """
    seen = set(synthetic_pairs(2000, seed=10))  # train_tiny(seed=0) trains on seed + 10
    pairs = [p for p in synthetic_pairs(300, seed=4242) if p not in seen]
    assert len(pairs) >= 200
    return pairs[:200]


SENTENCES = ["red cat runs", "big dog sleeps", "small bird eats", "green tree", "sun moon water house"]


def check_translation_formats(tr, translation, cfg):
    L, H = tr.config.decoder_layers, tr.config.n_heads
    S = len(translation.source_ids)
    assert translation.source_tokens == tr.source_pieces(translation.source_ids)
    assert len(translation.nbest) == cfg.nbest
    for h in translation.nbest:
        T = len(h.token_ids)
        assert h.attention.shape == (L, H, T, S) and h.attention.dtype == np.float32
        np.testing.assert_allclose(h.attention.sum(-1), 1.0, atol=ATOL)
        assert len(h.tokens) == len(h.token_logprobs) == len(h.alternatives) == T
        assert h.finished == (T > 0 and h.token_ids[-1] == tr.config.eos_id)
        if h.finished:
            assert h.tokens[-1] == "</s>"
        assert h.text == tr.tokenizers.target.decode(h.token_ids)
        for alts in h.alternatives:
            probs = [a.prob for a in alts]
            assert probs == sorted(probs, reverse=True) and 0 < len(alts) <= cfg.alternatives
        if cfg.self_attention:
            assert h.self_attention.shape == (L, H, T, T)
            np.testing.assert_allclose(h.self_attention.sum(-1), 1.0, atol=ATOL)
            assert np.abs(np.triu(h.self_attention, 1)).sum() == 0.0
    if cfg.self_attention:
        assert translation.encoder_attention.shape == (tr.config.encoder_layers, H, S, S)
        np.testing.assert_allclose(translation.encoder_attention.sum(-1), 1.0, atol=ATOL)
    js = translation.to_json()
    assert "attention" not in js  # the best hypothesis' attention is only in nbest[0]
    att = np.asarray(js["nbest"][0]["attention"])
    assert att.shape == translation.attention.shape
    assert js["target_tokens"] == translation.target_tokens and len(js["nbest"]) == cfg.nbest


# --- formats ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", sorted(MODES))
def test_translation_attention_formats(tiny_translator, random_translator, mode):
    for tr in (tiny_translator, random_translator):
        cfg = DecodeConfig(**{**MODES[mode].__dict__, "self_attention": True})
        for text in SENTENCES[:3]:
            check_translation_formats(tr, tr.translate(text, cfg), cfg)
        for t in tr.translate_batch(SENTENCES, cfg):
            check_translation_formats(tr, t, cfg)


# --- streaming ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["greedy", "sample"])
def test_stream_steps_equal_final_translation(tiny_translator, random_translator, mode):
    for tr in (tiny_translator, random_translator):
        cfg = DecodeConfig(**{**MODES[mode].__dict__, "self_attention": True})
        for text in SENTENCES[:3]:
            stream = tr.stream(text, cfg)
            steps = []
            for step in stream:
                assert not torch.is_inference_mode_enabled()
                steps.append(step)
            result = stream.result
            best = result.best
            S = len(result.source_ids)
            assert len(steps) == len(best.token_ids)
            assert [s.token_id for s in steps] == best.token_ids
            assert [s.index for s in steps] == list(range(len(steps)))
            assert [s.piece for s in steps] == best.tokens
            assert [s.is_eos for s in steps] == [i == tr.config.eos_id for i in best.token_ids]
            np.testing.assert_allclose([s.logprob for s in steps], best.token_logprobs, atol=ATOL)
            for i, s in enumerate(steps):
                L, H = tr.config.decoder_layers, tr.config.n_heads
                assert s.cross_attention.shape == (L, H, S)
                np.testing.assert_allclose(s.cross_attention.sum(-1), 1.0, atol=ATOL)
                np.testing.assert_array_equal(s.cross_attention, best.attention[:, :, i])
                assert s.self_attention.shape == (L, H, i + 1)
                np.testing.assert_array_equal(s.self_attention, best.self_attention[:, :, i, : i + 1])
                assert [a.token_id for a in s.alternatives] == [a.token_id for a in best.alternatives[i]]
                if mode == "greedy":
                    assert s.alternatives[0].token_id == s.token_id
            # The one-shot API gives the same translation.
            again = tr.translate(text, cfg)
            assert again.target_ids == best.token_ids
            np.testing.assert_allclose(again.attention, best.attention, atol=ATOL)


def test_beam_stream_reports_best_prefix(tiny_translator):
    cfg = MODES["beam"]
    for text in SENTENCES[:3]:
        stream = tiny_translator.stream(text, cfg)
        steps = list(stream)
        assert steps
        for i, s in enumerate(steps):
            assert s.index == i and len(s.prefix_ids) == i + 1 and s.prefix_ids[-1] == s.token_id
            assert s.cross_attention.shape == (2, 4, len(stream.unit.source_ids))
        assert stream.result.target_ids == tiny_translator.translate(text, cfg).target_ids
        assert len(stream.result.nbest) == 3


@pytest.mark.parametrize("mode", ["greedy", "beam"])
def test_stopping_a_stream_early_leaks_nothing(tiny_translator, mode):
    cfg = MODES[mode]
    text = "red cat runs big"
    fresh = tiny_translator.translate(text, cfg)

    stream = tiny_translator.stream(text, cfg)
    for i, _ in enumerate(stream):
        assert not torch.is_inference_mode_enabled()
        if i == 1:
            break
    assert stream.result is None
    assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()

    stream = tiny_translator.stream(text, cfg)
    seen = 0
    for _ in stream:
        seen += 1
        stream.close()
    assert seen == 1 and stream.result is None
    assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()

    again = tiny_translator.translate(text, cfg)
    assert again.target_ids == fresh.target_ids and again.score == pytest.approx(fresh.score, abs=1e-6)
    np.testing.assert_allclose(again.attention, fresh.attention, atol=ATOL)
    full = tiny_translator.stream(text, cfg)
    assert len(list(full)) >= 2 and full.result.target_ids == fresh.target_ids


def test_interleaved_streams_do_not_interfere(tiny_translator):
    """Two streams (greedy and beam) advanced alternately, with a translate() call in between,
    each give what they give alone: no state lives on the model or the translator."""
    tr = tiny_translator
    a_text, b_text = "red cat runs big dog", "sun moon water"
    a_cfg, b_cfg = DecodeConfig(self_attention=True), DecodeConfig(beam_size=3, nbest=2)
    a_alone, b_alone = tr.translate(a_text, a_cfg), tr.translate(b_text, b_cfg)
    a, b = tr.stream(a_text, a_cfg), tr.stream(b_text, b_cfg)
    ia, ib = iter(a), iter(b)
    a_steps, b_steps, live = [], [], {"a", "b"}
    while live:
        for name, it, out in (("a", ia, a_steps), ("b", ib, b_steps)):
            if name in live:
                step = next(it, None)
                if step is None:
                    live.discard(name)
                else:
                    out.append(step)
                    tr.translate("green tree")
    assert [s.token_id for s in a_steps] == a_alone.target_ids == a.result.target_ids
    np.testing.assert_allclose(a.result.attention, a_alone.attention, atol=ATOL)
    np.testing.assert_allclose(a.result.best.self_attention, a_alone.best.self_attention, atol=ATOL)
    assert [h.token_ids for h in b.result.nbest] == [h.token_ids for h in b_alone.nbest]
    for x, y in zip(b.result.nbest, b_alone.nbest):
        np.testing.assert_allclose(x.attention, y.attention, atol=ATOL)


def test_without_attention(tiny_translator):
    cfg = DecodeConfig(attention=False, beam_size=2, nbest=2)
    t = tiny_translator.translate("red cat", cfg)
    assert all(h.attention is None for h in t.nbest)
    assert all(h["attention"] is None for h in t.to_json()["nbest"])
    steps = list(tiny_translator.stream("red cat", DecodeConfig(attention=False)))
    assert steps and all(s.cross_attention is None for s in steps)


# --- batching -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["greedy", "beam"])
def test_translate_batch_in_input_order_equals_one_by_one(tiny_translator, random_translator, mode):
    cfg = MODES[mode]
    texts = ["sun moon water house big small tree", "red cat", "", "blue dog sleeps", "   ", "green bird eats tree",
             "cat"]
    for tr in (tiny_translator, random_translator):
        for batch_size in (16, 3, 1, 0):
            results = tr.translate_batch(texts, cfg, batch_size=batch_size)
            assert len(results) == len(texts)
            for text, r in zip(texts, results):
                assert r.source == text
                if not text.strip():
                    assert r.text == "" and r.target_ids == [] and r.source_ids == []
                    continue
                alone = tr.translate(text, cfg)
                assert r.source_ids == alone.source_ids
                assert [h.token_ids for h in r.nbest] == [h.token_ids for h in alone.nbest]
                for a, b in zip(r.nbest, alone.nbest):
                    assert a.score == pytest.approx(b.score, abs=1e-4)
                    np.testing.assert_allclose(a.attention, b.attention, atol=ATOL)
    assert tiny_translator.translate_batch([]) == []


def test_per_input_head_mask_follows_inputs_through_length_sorting(tiny_translator):
    tr = tiny_translator
    L, H = tr.config.decoder_layers, tr.config.n_heads
    texts = ["sun moon water house big small", "red cat", "blue dog sleeps"]
    masks = torch.ones(len(texts), L, H)
    masks[0, :, :3] = 0.0  # only the longest input loses heads
    masks[2, 1, 1:] = 0.0
    results = tr.translate_batch(texts, head_mask=masks, batch_size=2)
    for i, text in enumerate(texts):
        alone = tr.translate(text, head_mask=masks[i])
        assert results[i].target_ids == alone.target_ids
        np.testing.assert_allclose(results[i].attention, alone.attention, atol=ATOL)
    with pytest.raises(ValueError, match="head mask"):
        tr.translate_batch(texts, head_mask=masks[:2])


# --- long inputs --------------------------------------------------------------------------------


def test_too_long_input_is_split_at_sentence_boundaries(random_translator):
    tr = random_translator
    limit = tr.config.max_positions
    sentences = ["red cat runs big dog.", "blue bird sleeps.", "green tree water sun moon!", "small house?"]
    text = " ".join(sentences)
    assert len(tr.source_ids(text)) > limit
    assert all(len(tr.source_ids(s)) <= limit for s in sentences)
    cfg = DecodeConfig()
    result = tr.translate(text, cfg)
    assert [seg.source for seg in result.segments] == sentences
    for seg, sentence in zip(result.segments, sentences):
        alone = tr.translate(sentence, cfg)
        assert seg.target_ids == alone.target_ids
        check_translation_formats(tr, seg, cfg)
    assert result.text == " ".join(seg.text for seg in result.segments)
    assert result.score == pytest.approx(sum(seg.score for seg in result.segments))
    assert result.to_json()["segments"][0]["source"] == sentences[0]
    # In a batch, between a short input and an empty one, order is kept.
    batch = tr.translate_batch(["red cat", text, ""], cfg, batch_size=2)
    assert batch[0].target_ids == tr.translate("red cat", cfg).target_ids
    assert [s.target_ids for s in batch[1].segments] == [s.target_ids for s in result.segments]
    assert batch[2].text == ""


def test_single_too_long_sentence_raises_clear_error(random_translator):
    tr = random_translator
    limit = tr.config.max_positions
    sentence = " ".join(["red cat runs"] * 8)  # no sentence boundary to split at
    n = len(tr.source_ids(sentence))
    assert n > limit
    for call in (lambda: tr.translate(sentence), lambda: tr.stream(sentence),
                 lambda: tr.translate_batch(["ok.", "Fine. " + sentence])):
        with pytest.raises(InputTooLongError) as info:
            call()
        msg = str(info.value)
        assert "red cat runs" in msg and f"at most {limit}" in msg
        if "Fine" not in msg:
            assert f"has {n} tokens" in msg


# --- the trained tiny model -------------------------------------------------------------------------


def test_document_lines_and_units():
    assert document_lines("a\r\n\nb\n") == ["a", "", "b"]
    assert document_lines("") == [""] and document_lines("\n") == [""]
    fits = lambda text: [0] * len(text.split())  # noqa: E731 - a word a token
    assert line_units("  ", fits, 4) == []  # more cases: tests/core/decoding/test_sentences.py
    assert line_units("one two. three four five", fits, 4) == [("one two.", [0, 0]), ("three four five", [0, 0, 0])]
    with pytest.raises(InputTooLongError):
        line_units("one two three four five", fits, 4)


@pytest.mark.parametrize("cfg", [DecodeConfig(), DecodeConfig(beam_size=3, nbest=2)], ids=["greedy", "beam"])
def test_stream_document_follows_the_policy_of_translate_batch(random_translator, cfg):
    """The GUI's document stream and the CLI's translate_batch cut a text the same way and agree."""
    tr = random_translator
    long_line = "red cat runs big dog. blue bird sleeps. green tree water sun moon! small house?"
    text = f"red cat runs\n\n{long_line}\n"
    doc = tr.stream_document(text, cfg)
    assert [(u.line, u.text) for u in doc.units] == [(0, "red cat runs"), (2, "red cat runs big dog."),
                                                     (2, "blue bird sleeps."), (2, "green tree water sun moon!"),
                                                     (2, "small house?")]
    assert doc.units[0].source_tokens == tr.source_pieces(tr.source_ids(doc.units[0].text))
    pairs = list(doc)
    assert [i for i, _ in pairs] == sorted(i for i, _ in pairs) and doc.finished
    for i, unit in enumerate(doc.units):
        steps = [step for j, step in pairs if j == i]
        alone = tr.translate(unit.text, cfg)
        assert doc.results[i].nbest[0].token_ids == alone.target_ids
        if cfg.beam_size == 1:
            assert [s.token_id for s in steps] == alone.target_ids
    lines = doc.translations()
    batch = tr.translate_batch(document_lines(text), cfg)
    assert [t.text for t in lines] == [t.text for t in batch] and lines[1].text == ""
    assert [s.source for s in lines[2].segments] == [u.text for u in doc.units[1:]]


def test_stream_document_refuses_a_too_long_sentence_before_decoding(random_translator):
    with pytest.raises(InputTooLongError):
        random_translator.stream_document("ok.\n" + " ".join(["red cat runs"] * 8))


def test_hypothesis_steps_are_the_streamed_steps(tiny_translator):
    stream = tiny_translator.stream("red cat runs", DecodeConfig())
    streamed = list(stream)
    rebuilt = stream.result.best.steps(tiny_translator.config.eos_id)
    assert [(s.index, s.token_id, s.piece, s.is_eos) for s in rebuilt] == \
        [(s.index, s.token_id, s.piece, s.is_eos) for s in streamed]
    for a, b in zip(rebuilt, streamed):
        assert a.logprob == pytest.approx(b.logprob, abs=1e-5)
        np.testing.assert_allclose(a.cross_attention, b.cross_attention, atol=1e-5)
        assert [x.token_id for x in a.alternatives] == [x.token_id for x in b.alternatives]


def test_trained_model_translates_the_synthetic_task(tiny_translator, held_out):
    sources = [s for s, _ in held_out]
    greedy = tiny_translator.translate_batch(sources, DecodeConfig())
    beam = tiny_translator.translate_batch(sources, DecodeConfig(beam_size=4))
    greedy_acc = np.mean([t.text == ref for t, (_, ref) in zip(greedy, held_out)])
    beam_acc = np.mean([t.text == ref for t, (_, ref) in zip(beam, held_out)])
    assert greedy_acc >= 0.8, (
        f"greedy exact match {greedy_acc:.0%} on {len(held_out)} held-out pairs with "
        f"{torch.get_num_threads()} torch thread(s); the session model (tiny_models.cached_tiny_model) is trained "
        f"300 steps on a fixed thread count, where accuracy is still climbing steeply")
    assert beam_acc >= greedy_acc - 0.03, f"beam {beam_acc:.0%} vs greedy {greedy_acc:.0%}"
    # every correct translation ended with </s>; a tiny model may loop on a few ("rot isst rot isst …": 2 of 200
    # for the session model), which is the model's quality, not the search's, so only a share is bounded
    assert all(t.best.finished for t, (_, ref) in zip(greedy, held_out) if t.text == ref)
    unfinished = [t.text for t in greedy if not t.best.finished]
    assert len(unfinished) <= 0.02 * len(held_out), unfinished
    assert reference("red cat") == "rot katze" and len(LEXICON) == 16


def test_trained_model_cross_attention_is_near_diagonal(tiny_translator, held_out):
    """Averaged over layers and heads, each target word attends most to its aligned source word."""
    tr = tiny_translator
    eos = tr.config.eos_id
    hits = rows = 0
    for src, ref in held_out:
        t = tr.translate(src)
        if t.text != ref:
            continue
        src_ids, tgt_ids = t.source_ids[:-1], t.target_ids[:-1]  # drop </s>
        src_word = np.cumsum(word_starts(tr.source_pieces(src_ids))) - 1
        tgt_word = np.cumsum(word_starts(tr.target_pieces(tgt_ids))) - 1
        n_words = len(src.split())
        assert src_word[-1] == n_words - 1 and tgt_word[-1] == n_words - 1 and eos not in tgt_ids
        avg = t.attention.mean(axis=(0, 1))[: len(tgt_ids), : len(src_ids)]  # (T, S)
        for w in range(n_words):
            row = avg[tgt_word == w].mean(axis=0)  # (S,)
            per_src_word = np.bincount(src_word, weights=row, minlength=n_words)
            hits += int(per_src_word.argmax() == w)
            rows += 1
    assert rows >= 500
    assert hits / rows >= 0.8, f"only {hits}/{rows} target words attend most to their aligned source word"


def test_translator_reuses_one_snapshot_of_the_transposed_weights(tiny_trained, monkeypatch):
    """The transposed copies are made once per Translator (by its backend), not once per search, and
    decode the same."""
    from nmt_desktop.core.decoding.backends import python as python_backend

    model, tok = tiny_trained
    calls = []
    real = python_backend.prepare_fused_step
    monkeypatch.setattr(python_backend, "prepare_fused_step", lambda m: calls.append(1) or real(m))
    tr = Translator(model, tok, backend="python")
    assert tr.backend.name == "python"
    first = [t.target_ids for t in tr.translate_batch(["red cat runs", "big dog sleeps"], DecodeConfig(beam_size=2))]
    again = [t.target_ids for t in tr.translate_batch(["red cat runs", "big dog sleeps"], DecodeConfig(beam_size=2))]
    streamed = [s.token_id for s in tr.stream("red cat runs")]
    assert len(calls) == 1
    assert first == again
    assert streamed == tr.translate("red cat runs").target_ids


# --- target language (multilingual models) ----------------------------------------------------

CODES = [">>fra<<", ">>spa<<", ">>por<<"]


@pytest.fixture(scope="module")
def multilingual(tiny_trained):
    """A random model whose source vocabulary has OPUS-MT-style target-language tokens."""
    return multilingual_translator(tiny_trained, CODES)


def test_ordinary_model_has_no_target_languages(tiny_translator):
    assert tiny_translator.target_languages == [] and tiny_translator.target_language is None
    with pytest.raises(TargetLanguageError, match="not multilingual") as info:
        tiny_translator.target_language = "fra"
    assert len(str(info.value).splitlines()) == 1
    assert tiny_translator.target_language is None
    tiny_translator.target_language = None  # choosing none is always fine


def test_target_language_token_leads_the_source(multilingual):
    tr = multilingual
    code = {c: tr.tokenizers.source.token_to_id(c) for c in CODES}
    eos, plain = tr.config.eos_id, tr.tokenizers.source.encode("red cat runs")
    assert tr.target_languages == CODES
    assert tr.source_ids("red cat runs") == plain + [eos]  # none chosen: nothing prepended
    try:
        tr.target_language = "spa"
        assert tr.target_language == ">>spa<<"
        assert tr.source_ids("red cat runs") == [code[">>spa<<"]] + plain + [eos]
        # a text that starts with a code keeps it (no second one), as MarianTokenizer reads it
        rest = tr.tokenizers.source.encode(" red cat runs")
        assert tr.source_ids(">>fra<< red cat runs") == [code[">>fra<<"]] + rest + [eos]
        assert tr.source_ids(">>xyz<< red cat runs") == [tr.config.unk_id] + rest + [eos]
        tr.target_language = ">>por<<"
        result = tr.translate("red cat runs", DecodeConfig(beam_size=2))
        assert result.source_ids[0] == code[">>por<<"] and result.source_tokens[0] == ">>por<<"
        stream = tr.stream("red cat runs")
        assert stream.unit.source_ids == result.source_ids
        assert [s.token_id for s in stream] == tr.translate("red cat runs").target_ids
        assert [t.source_ids for t in tr.translate_batch(["red cat runs", "big dog"])][0] == result.source_ids
    finally:
        tr.target_language = None
    assert tr.source_ids("red cat runs") == plain + [eos]


def test_unknown_target_language_names_the_valid_ones(multilingual):
    with pytest.raises(TargetLanguageError) as info:
        multilingual.target_language = "deu"
    message = str(info.value)
    assert "unknown target language 'deu'" in message and "fra, spa, por" in message
    assert len(message.splitlines()) == 1 and multilingual.target_language is None


def test_target_language_at_construction(multilingual):
    tr = Translator(multilingual.model, multilingual.tokenizers, target_language="fra")
    assert tr.target_language == ">>fra<<"
    with pytest.raises(TargetLanguageError):
        Translator(multilingual.model, multilingual.tokenizers, target_language="zzz")


def test_list_codes_shortens_long_lists():
    assert list_codes(CODES) == "fra, spa, por"
    many = [f">>l{i:03d}<<" for i in range(300)]
    assert list_codes(many, limit=3) == "l000, l001, l002, ... (300 in all)"

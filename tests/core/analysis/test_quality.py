"""Trust signals (core/analysis/quality.py, quality_features.py): the two teacher-forced passes agree with the
translator's own scoring, the sentence score follows its recipe, and on the bundled en-de model a removed chunk's
source words are flagged, a detached target scores far below the reference, and repeats are found."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nmt_desktop.core.analysis import quality
from nmt_desktop.core.analysis.quality_features import empty_source, read_pairs
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.scoring import target_ids
from nmt_desktop.core.decoding.translator import Translator

PAIRS = [("red cat runs", "rot katze rennt"), ("big dog eats small bird", "gross hund isst klein vogel"),
         ("blue house", "blau haus")]
SOURCE = "The old man with the red hat walked slowly to the small station."
FULL = "Der alte Mann mit dem roten Hut ging langsam zum kleinen Bahnhof."
CUT = "Der alte Mann ging langsam zum kleinen Bahnhof."  # "mit dem roten Hut" removed


@pytest.fixture(scope="module")
def en_de(repo_root) -> Translator:
    return Translator.load(repo_root / "models" / "en-de")


def _ids(translator: Translator, pairs):
    return [(translator.source_ids(s), target_ids(translator.tokenizers.target, translator.config, t))
            for s, t in pairs]


def test_read_pairs_equals_the_translators_scoring(tiny_translator: Translator) -> None:
    readings = read_pairs(tiny_translator, _ids(tiny_translator, PAIRS), batch_size=2)  # padded batches
    scored = tiny_translator.score_batch(PAIRS, DecodeConfig(attention=True))
    for reading, translation in zip(readings, scored):
        assert np.allclose(reading.logprob, translation.best.token_logprobs, atol=1e-4)
        attention = np.asarray(translation.attention).mean(axis=(0, 1))  # (T, S)
        assert np.allclose(reading.attention, attention, atol=1e-5)
        assert np.allclose(reading.coverage, attention.sum(axis=0), atol=1e-4)
        assert reading.preferred.tolist() == [a[0].token_id for a in translation.best.alternatives]


def test_prior_is_the_empty_source_and_entropy_the_full_distribution(tiny_translator: Translator) -> None:
    import torch

    (src, tgt), = _ids(tiny_translator, PAIRS[:1])
    reading = read_pairs(tiny_translator, [(src, tgt)])[0]
    empty = empty_source(tiny_translator, src)
    assert empty == [tiny_translator.config.eos_id]
    model, cfg = tiny_translator.model, tiny_translator.config
    with torch.no_grad():
        tgt_in = torch.tensor([[cfg.decoder_start_id] + tgt])
        logp = torch.log_softmax(model(torch.tensor([empty]), tgt_in).float(), -1)[0]  # (T, V)
        given = torch.log_softmax(model(torch.tensor([src]), tgt_in).float(), -1)[0]  # (T, V)
    gold = tgt + [cfg.eos_id]
    assert np.allclose(reading.prior_logprob, [logp[t, y].item() for t, y in enumerate(gold)], atol=1e-5)
    entropy = -(given.exp() * given).sum(-1).numpy()
    assert np.allclose(reading.entropy, entropy, atol=1e-5)
    assert np.allclose(reading.support, reading.logprob - reading.prior_logprob)


def test_sentence_score_follows_the_recipe() -> None:
    features = {"mean_logprob": -0.5, "neg_entropy": -1.2, "support": 4.0, "length_ratio": 0.1}
    linear = quality.INTERCEPT + sum(quality.WEIGHTS[k] * v for k, v in features.items())
    assert quality.sentence_score(features) == pytest.approx(linear)
    detached = dict(features, support=1.5)  # one nat under the knee
    assert quality.sentence_score(detached) == pytest.approx(
        linear - quality.WEIGHTS["support"] * 2.5 - quality.DETACHED_SLOPE * 1.0)
    short = dict(features, length_ratio=-0.5)
    assert quality.sentence_score(short) == pytest.approx(
        linear - quality.WEIGHTS["length_ratio"] * 0.6 - quality.SHORT_SLOPE * 0.2)
    worse, worst = (quality.sentence_score(dict(features, support=v)) for v in (-5.0, -10.0))
    assert 0.0 < worst < worse < 1.0  # bounded, and still ranked


def test_bounded_is_increasing_and_stays_inside_0_100() -> None:
    xs = np.linspace(-300, 400, 2001)
    ys = np.array([quality.bounded(x) for x in xs])
    assert np.all(np.diff(ys) > 0) and ys.min() > 0 and ys.max() < 100
    assert quality.bounded(42.0) == 42.0
    assert quality.bounded(9.999) == pytest.approx(9.999, abs=1e-3) and quality.bounded(90.001) == pytest.approx(90.001, abs=1e-3)


def test_repeats_are_spans_said_again_right_after() -> None:
    words = "Der Mann Mann ging in den Park in den Park , die die".split()
    assert quality._repeats(words) == [(2, 1), (7, 3), (12, 1)]
    assert quality._repeats("die Frau und die Kinder".split()) == []  # not adjacent


def test_a_removed_chunk_is_flagged_untranslated(en_de: Translator) -> None:
    full, cut = quality.estimate_pairs(en_de, [(SOURCE, FULL), (SOURCE, CUT)])
    assert full.untranslated == []
    assert {"red", "hat"} <= set(cut.untranslated)
    assert set(cut.untranslated) <= {"with", "the", "red", "hat"}
    flag = next(f for f in cut.flags if f.text == "red")
    assert flag.side == "source" and cut.source_words[flag.word] == "red" and "roten" in flag.reason
    assert cut.qe < full.qe and cut.trust != "high"
    assert "may leave out: " in cut.summary and "red" in cut.summary


def test_a_detached_target_scores_far_below_the_reference(en_de: Translator) -> None:
    ref, other = quality.estimate_pairs(en_de, [(SOURCE, FULL), (SOURCE, "Ich habe heute leider keine Zeit.")])
    assert ref.qe - other.qe > 30
    assert other.trust == "low"
    assert any(f.kind == "unsupported" for f in other.flags)
    assert other.features["support"] < quality.DETACHED_KNEE < ref.features["support"]


def test_own_translation_and_given_one_agree_on_the_score(en_de: Translator) -> None:
    translation = en_de.translate(SOURCE, DecodeConfig(alternatives=1))
    mine = quality.estimate_translation(en_de, translation)
    given, = quality.estimate_pairs(en_de, [(SOURCE, translation.text)])
    (own,) = quality.estimate_pairs(en_de, [(SOURCE, None)])
    assert mine.own and own.own and not given.own
    assert mine.qe == pytest.approx(given.qe, abs=1e-6) == pytest.approx(own.qe, abs=1e-6)
    assert own.target == translation.text
    assert mine.target_words[0] == translation.text.split()[0]
    assert mine.perplexity == pytest.approx(math.exp(-mine.features["mean_logprob"]))


def test_repeated_words_are_flagged_with_their_reason(en_de: Translator) -> None:
    est, = quality.estimate_pairs(en_de, [(SOURCE, "Der alte Mann mit dem roten Hut Hut ging langsam zum Bahnhof.")])
    repeated = [f for f in est.flags if f.kind == "repeated"]
    assert [f.text for f in repeated] == ["Hut"] and est.target_words[repeated[0].word] == "Hut"
    assert "twice in a row" in repeated[0].reason


def test_progress_and_cancel(en_de: Translator) -> None:
    seen: list[tuple[int, int]] = []
    pairs = [(SOURCE, FULL)] * 5
    quality.estimate_pairs(en_de, pairs, batch_size=2, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (5, 5) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    with pytest.raises(ValueError, match="cancelled"):
        quality.estimate_pairs(en_de, pairs, batch_size=2, cancelled=lambda: True)


def test_the_models_own_omission_is_flagged(en_de: Translator) -> None:
    source = "My grandmother, who lives in a small village in the mountains, sends us a letter every month."
    translation = en_de.translate(source, DecodeConfig())
    assert "Berg" not in translation.text  # the bundled model drops "in the mountains"
    est = quality.estimate_translation(en_de, translation)
    assert est.untranslated == ["mountains"] and est.flags[0].text == "mountains,"
    assert est.trust != "high" and "No word of the translation depends on it" in est.flags[0].reason

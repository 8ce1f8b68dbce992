"""Teacher-forced scoring (core/decoding/forcing.py, scoring.py) against the searches.

A forced step that sees the same prefix as a greedy step must give the same log-probabilities,
alternatives and attention, on every backend, batched or alone; the Translation it returns is an
ordinary one, so a given target that differs from the model's output shows where the model disagrees.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from tiny_models import TARGET_WORDS

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.backends import native_library
from nmt_desktop.core.decoding.document import InputTooLongError
from nmt_desktop.core.decoding.scoring import disagreements
from nmt_desktop.core.decoding.translator import Translator

BUILT = native_library.load()  # the compiled library is optional: its backend is tried where it loads
BACKENDS = ["reference", "python"] + (["compiled"] if BUILT else [])
SOURCES = ["red cat runs", "big dog eats small bird", "the small green bird sees the big red cat", "cat"]
ATOL = 1e-5


@pytest.fixture(scope="module", params=BACKENDS)
def translator(request, tiny_trained):
    model, tok = tiny_trained
    return Translator(model, tok, name="tiny", backend=request.param)


def test_forced_scores_equal_greedy_logprobs_on_each_backend(translator):
    cfg = DecodeConfig(self_attention=True, alternatives=4)
    decoded = translator.translate_batch(SOURCES, cfg)
    scored = translator.score_batch([(s, d.target_ids) for s, d in zip(SOURCES, decoded)], cfg)
    for d, s in zip(decoded, scored):
        assert s.best.forced and not d.best.forced
        assert s.target_ids == d.target_ids and s.target_tokens == d.target_tokens
        np.testing.assert_allclose(s.best.token_logprobs, d.best.token_logprobs, atol=ATOL)
        np.testing.assert_allclose(s.attention, d.attention, atol=ATOL)
        np.testing.assert_allclose(s.best.self_attention, d.best.self_attention, atol=ATOL)
        assert [[a.token_id for a in alts] for alts in s.best.alternatives] == \
               [[a.token_id for a in alts] for alts in d.best.alternatives]
        assert s.best.logprob == pytest.approx(sum(d.best.token_logprobs), abs=1e-4)
        assert s.best.perplexity == pytest.approx(math.exp(-s.best.logprob / len(s.target_ids)))
        assert disagreements(s.best) == []  # the model's own greedy output: its first choice everywhere


def test_a_batch_scores_as_each_pair_alone(translator):
    pairs = [(s, t) for s, t in zip(SOURCES, ["rot katze", "gross hund isst klein vogel vogel", "katze", ""])]
    together = translator.score_batch(pairs, batch_size=3)
    for pair, batched in zip(pairs, together):
        alone = translator.score(*pair)
        assert batched.target_ids == alone.target_ids
        assert batched.target_tokens[-1] == "</s>"
        np.testing.assert_allclose(batched.best.token_logprobs, alone.best.token_logprobs, atol=ATOL)
        np.testing.assert_allclose(batched.attention, alone.attention, atol=ATOL)


def test_a_given_word_the_model_would_not_say_is_a_disagreement(tiny_translator):
    source = "big dog eats small bird"
    own = tiny_translator.translate(source)
    words = own.text.split()
    other = next(w for w in TARGET_WORDS if w not in words)
    given = " ".join([other] + words[1:])
    scored = tiny_translator.score(source, given)
    found = disagreements(scored.best)
    assert found and found[0].index == 0
    assert found[0].preferred == own.target_tokens[0]
    assert found[0].given_prob < found[0].preferred_prob
    assert scored.best.logprob < own.best.logprob  # the model's own output is more probable to it
    assert scored.attention.shape[2] == len(scored.target_tokens)


def test_bad_targets_are_refused_with_a_sentence(tiny_translator):
    eos = tiny_translator.config.eos_id
    with pytest.raises(ValueError, match="cannot contain </s>"):
        tiny_translator.score("red cat", [5, eos, 6])
    long_target = " ".join(["katze"] * (tiny_translator.config.max_positions + 5))
    with pytest.raises(InputTooLongError, match="split the pair into shorter sentences"):
        tiny_translator.score("red cat", long_target)
    trailing = tiny_translator.score("red cat", [5, 6, eos])  # a final </s> is the one scoring adds
    assert trailing.target_ids == [5, 6, eos]

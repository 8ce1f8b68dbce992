"""core/analysis/attention_spread.py on hand-made attention, and the card's training-length statistic."""

from __future__ import annotations

import numpy as np
import pytest

from nmt_desktop.core.analysis.attention_spread import diffuse_share, is_diffuse, normalised_entropy
from nmt_desktop.core.formats.model_card import render_readme, source_words, trained_sentence_words


def attention(last_layer_rows: np.ndarray, layers: int = 2, heads: int = 2) -> np.ndarray:
    """(L, H, T, S) whose last layer has the given rows in every head; earlier layers uniform."""
    T, S = last_layer_rows.shape
    a = np.full((layers, heads, T, S), 1.0 / S)
    a[-1] = last_layer_rows
    return a


def test_sharp_rows_have_entropy_zero_and_uniform_rows_one() -> None:
    sharp = np.eye(4)
    uniform = np.full((3, 4), 0.25)
    assert normalised_entropy(attention(sharp)) == pytest.approx(np.zeros(4))
    assert normalised_entropy(attention(uniform)) == pytest.approx(np.ones(3))
    assert diffuse_share(attention(sharp)) == 0.0 and not is_diffuse(attention(sharp))
    assert diffuse_share(attention(uniform)) == 1.0 and is_diffuse(attention(uniform))


def test_only_the_last_layer_counts_and_heads_are_averaged() -> None:
    a = attention(np.eye(3))
    a[0] = 1.0 / 3  # a spread earlier layer changes nothing
    assert diffuse_share(a) == 0.0
    two_heads = np.zeros((1, 2, 1, 2))
    two_heads[0, 0, 0] = [1, 0]
    two_heads[0, 1, 0] = [0, 1]  # each head sharp on a different word: the average is uniform
    assert normalised_entropy(two_heads) == pytest.approx([1.0])


def test_share_counts_tokens_above_the_threshold_and_more_than_half_is_diffuse() -> None:
    rows = np.array([[1.0, 0, 0, 0], [0.25, 0.25, 0.25, 0.25], [0.3, 0.3, 0.2, 0.2], [0, 1.0, 0, 0]])
    assert diffuse_share(attention(rows)) == 0.5
    assert not is_diffuse(attention(rows))  # exactly half is not "most"
    assert is_diffuse(attention(rows[1:3]))


def test_degenerate_inputs() -> None:
    assert diffuse_share(None) == 0.0
    assert diffuse_share(np.zeros((1, 1, 0, 5))) == 0.0
    assert normalised_entropy(np.ones((1, 1, 3, 1))).tolist() == [0, 0, 0]  # one source token: nothing to spread
    with pytest.raises(ValueError, match="layers, heads, target, source"):
        normalised_entropy(np.ones((3, 3)))


def test_source_words_and_trained_sentence_words() -> None:
    sentences = [" ".join(["w"] * n) for n in range(1, 101)]
    stats = source_words(sentences)
    assert stats == {"median": 51, "p95": 95, "p99": 99, "max": 100}
    assert source_words([]) == {}
    card = {"data": {"train": "t.tsv", "source_words": stats}}
    assert trained_sentence_words(card) == 99
    assert "99% up to 99 words" in render_readme(card)
    for bad in ({}, {"data": "free text"}, {"data": {"source_words": {"p99": "15"}}},
                {"data": {"source_words": {"p99": True}}}, {"data": {"source_words": None}}):
        assert trained_sentence_words(bad) is None


def test_bundled_cards_state_their_training_sentence_length(repo_root) -> None:
    import json

    for name in ("en-de", "en-fr"):
        path = repo_root / "models" / name / "card.json"
        if not path.exists():
            pytest.skip(f"bundled model {name} not present")
        words = trained_sentence_words(json.loads(path.read_text(encoding="utf-8")))
        assert words is not None and 8 <= words <= 40  # Tatoeba: short everyday sentences

"""What a word is (core/analysis/words.py), pinned on real tokenizers: byte-level BPE (the tokenizers we
train), SentencePiece/Metaspace with >>lang<< tokens (Marian imports) and WordPiece.

Before words.py the rule existed three times (analysis.word_ids, heatmap.word_groups,
Tokenizer.word_starts); the cases where they disagreed are marked "was:".
"""

from __future__ import annotations

import numpy as np
import pytest
import tokenizers
from tokenizers import decoders, models, pre_tokenizers

from nmt_desktop.core.analysis import alignment
from nmt_desktop.core.analysis.attention_data import AttentionData
from nmt_desktop.core.analysis.words import (is_special, join_pieces, merge_attention, word_groups, word_ids,
                                             word_matrix, word_starts, words_of)
from nmt_desktop.core.tokenizer import SPECIAL_TOKENS, Tokenizer

from tiny_models import tiny_tokenizers


@pytest.fixture(scope="module")
def byte_level() -> Tokenizer:
    return tiny_tokenizers().source


@pytest.fixture(scope="module")
def metaspace() -> Tokenizer:
    """A SentencePiece-style vocabulary as a Marian import makes it: "▁" pieces, >>lang<< special tokens."""
    vocab = [("</s>", 0.0), ("<unk>", 0.0), ("<pad>", 0.0), ("▁red", -1.0), ("▁cat", -1.0), ("▁ca", -2.0),
             ("ts", -2.0), ("▁", -3.0)] + [(c, -5.0) for c in "redcatsu"]
    hf = tokenizers.Tokenizer(models.Unigram(vocab, unk_id=1, byte_fallback=False))
    hf.pre_tokenizer = pre_tokenizers.Metaspace()
    hf.decoder = decoders.Metaspace()
    hf.add_special_tokens([tokenizers.AddedToken(t, special=True, normalized=False)
                           for t in ("</s>", "<unk>", "<pad>", ">>fra<<")])
    return Tokenizer.from_str(hf.to_str())


def pieces_of(tok: Tokenizer, text: str, lead: list[str] = (), eos: bool = True) -> list[str]:
    ids = [tok.token_to_id(t) for t in lead] + tok.encode(text) + ([tok.token_to_id("</s>")] if eos else [])
    return tok.pieces(ids)


def test_byte_level_words(byte_level):
    pieces = pieces_of(byte_level, "red cat runs.")
    assert pieces == ["red", "▁cat", "▁runs", ".", "</s>"]
    assert word_groups(pieces) == [[0], [1], [2, 3], [4]]
    assert word_ids(pieces) == [0, 1, 2, 2, None]
    assert words_of(pieces) == ["red", "cat", "runs."]
    assert join_pieces(pieces[:-1]) == "red cat runs."


def test_byte_level_newlines_and_double_spaces_break_words(byte_level):
    pieces = pieces_of(byte_level, "red cat\nbig  dog", eos=False)
    assert pieces == ["red", "▁cat", "\n", "big", "▁", "▁dog"]
    # was: word_ids joined "\n" and "big" to "cat" (a word started only at "▁"), so alignments and
    # coverage saw one word "cat\nbig" where the heatmap saw three
    assert word_groups(pieces) == [[0], [1], [2], [3], [4], [5]]
    assert words_of(pieces) == ["red", "cat", "\n", "big", "▁", "dog"]  # blank words stay visible


def test_special_tokens_are_never_joined(byte_level):
    pieces = byte_level.pieces([1, *byte_level.encode("catdog"), 2, *byte_level.encode("red")])
    assert pieces == ["<s>", "cat", "dog", "</s>", "red"]
    assert word_starts(pieces) == [True, True, False, True, True]
    # was: word_ids gave "red" after </s> the word of "catdog" (no "▁" on it)
    assert word_ids(pieces) == [None, 0, 0, None, 1]
    assert word_groups(pieces) == [[0], [1, 2], [3], [4]]
    assert all(is_special(p) for p in SPECIAL_TOKENS)


def test_metaspace_with_a_language_token(metaspace):
    pieces = pieces_of(metaspace, "red cats", lead=[">>fra<<"])
    assert pieces == [">>fra<<", "▁red", "▁ca", "ts", "</s>"]
    assert is_special(">>fra<<") and not is_special(">>")
    # was: word_ids and the heatmap counted >>fra<< as word 0, so every alignment index was off by one
    assert word_ids(pieces) == [None, 0, 1, 1, None]
    assert words_of(pieces) == ["red", "cats"]
    assert word_groups(pieces) == [[0], [1], [2, 3], [4]]


def test_wordpiece_needs_its_continuing_prefix():
    hf = tokenizers.Tokenizer(models.WordPiece({"[UNK]": 0, "the": 1, "play": 2, "##ing": 3}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.decoder = decoders.WordPiece()
    tok = Tokenizer(hf)
    pieces = tok.pieces(tok.encode("the playing"))
    assert tok.continuing_prefix == "##" and pieces == ["the", "play", "##ing"]
    assert word_starts(pieces, tok.continuing_prefix) == [True, True, False]
    assert word_ids(pieces, "##") == [0, 1, 1]


def test_merge_attention_sums_source_pieces_and_averages_target_pieces():
    attn = np.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]], dtype=np.float32)  # (T=2, S=3)
    src, tgt = ["▁un", "believ", "</s>"], ["▁ab", "c"]
    assert word_ids(src) == [0, 0, None]
    np.testing.assert_allclose(word_matrix(attn, src, tgt), [[(0.5 + 0.8) / 2]])  # specials left out
    merged = merge_attention(attn, word_groups(src), word_groups(tgt))  # specials kept as their own column
    np.testing.assert_allclose(merged, [[(0.5 + 0.8) / 2, 0.35]], rtol=1e-6)
    assert merged.dtype == np.float32
    assert merge_attention(np.zeros((2, 3, 0, 0), np.float32), [], []).shape == (2, 3, 0, 0)


def test_heatmap_alignment_and_coverage_agree_on_the_words(tiny_translator):
    """The merged heatmap's words minus specials are exactly the words alignments and coverage count."""
    t = tiny_translator.translate("red cat runs")
    merged = AttentionData.from_translation(t).merged()
    assert [w for w in merged.source_tokens if not is_special(w)] == words_of(t.source_tokens) == \
        ["red", "cat", "runs"]
    assert [w for w in merged.target_tokens if not is_special(w)] == words_of(t.target_tokens)
    matrix = word_matrix(t.attention.mean(axis=(0, 1)), t.source_tokens, t.target_tokens)
    real_rows = [r for r, w in enumerate(merged.target_tokens) if not is_special(w)]
    real_cols = [c for c, w in enumerate(merged.source_tokens) if not is_special(w)]
    np.testing.assert_allclose(matrix, merged.weights.mean(axis=(0, 1))[np.ix_(real_rows, real_cols)], atol=1e-5)
    links = alignment.align(t, alignment.OLD_METHOD)
    assert max(i for i, _ in links) < len(words_of(t.source_tokens))

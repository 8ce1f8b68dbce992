"""Tests for nmt_desktop.core.training.metrics: sacreBLEU wrappers, signatures, references, edge cases."""

from __future__ import annotations

import pytest
import sacrebleu
from sacrebleu.metrics import BLEU, CHRF

from nmt_desktop.core.training.metrics import (
    MetricError,
    MetricResult,
    bleu,
    chrf,
    corpus_bleu,
    corpus_chrf,
    evaluate,
    reference_streams,
    tokenized_lowercase_bleu,
)

HYPS = ["The cat sat on the mat.", "It is raining heavily today, isn't it?", "He read the book quickly."]
REFS = ["The cat was sitting on the mat.", "It's raining heavily today, isn't it?", "He quickly read the book."]
REFS2 = ["A cat sat on the mat.", "It is raining hard today, is it not?", "He read the book fast."]


def test_identical_text_scores_100():
    assert corpus_bleu(REFS, REFS) == pytest.approx(100.0)
    assert corpus_chrf(REFS, REFS) == pytest.approx(100.0)
    assert tokenized_lowercase_bleu(REFS, REFS) == pytest.approx(100.0)


def test_known_example_matches_sacrebleu_directly():
    expected_bleu = sacrebleu.corpus_bleu(HYPS, [REFS]).score
    assert 0 < expected_bleu < 100
    assert corpus_bleu(HYPS, REFS) == pytest.approx(expected_bleu)
    assert corpus_chrf(HYPS, REFS) == pytest.approx(sacrebleu.corpus_chrf(HYPS, [REFS]).score)


def test_result_carries_sacrebleu_signature():
    metric = BLEU()
    expected = metric.corpus_score(HYPS, [REFS])
    result = bleu(HYPS, REFS)
    assert isinstance(result, MetricResult) and result.name == "BLEU"
    assert result.signature == str(metric.get_signature())
    assert result.signature.startswith("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:")
    assert result.details == str(expected)
    assert str(result).startswith(f"BLEU {expected.score:.2f} (nrefs:1")
    chrf_metric = CHRF()
    chrf_metric.corpus_score(HYPS, [REFS])
    assert chrf(HYPS, REFS).signature == str(chrf_metric.get_signature())
    assert [r.name for r in evaluate(HYPS, REFS)] == ["BLEU", "chrF2"]


def test_tokenized_lowercase_bleu_ignores_case():
    upper = [h.upper() for h in REFS]
    assert corpus_bleu(upper, REFS) < 5
    assert tokenized_lowercase_bleu(upper, REFS) == pytest.approx(100.0)
    expected = BLEU(lowercase=True, tokenize="13a").corpus_score(HYPS, [REFS]).score
    assert tokenized_lowercase_bleu(HYPS, REFS) == pytest.approx(expected)
    assert "case:lc" in bleu(HYPS, REFS, lowercase=True).signature


def test_multiple_reference_streams():
    two = bleu(HYPS, [REFS, REFS2])
    assert two.score == pytest.approx(sacrebleu.corpus_bleu(HYPS, [REFS, REFS2]).score)
    assert two.score > bleu(HYPS, REFS).score
    assert "nrefs:2" in two.signature
    assert corpus_chrf(HYPS, [REFS, REFS2]) == pytest.approx(sacrebleu.corpus_chrf(HYPS, [REFS, REFS2]).score)
    assert corpus_bleu(HYPS, [REFS]) == pytest.approx(corpus_bleu(HYPS, REFS))


def test_empty_hypothesis_list_scores_zero():
    assert corpus_bleu([], []) == 0.0 and corpus_chrf([], []) == 0.0
    empty = bleu([], [[], []])
    assert empty.score == 0.0 and "nrefs:2" in empty.signature and empty.details == ""


def test_empty_lines_are_scored():
    assert corpus_bleu(["", ""], ["a b c d e", "f g h i j"]) == 0.0


def test_mismatched_references_are_refused():
    with pytest.raises(MetricError, match="3 hypotheses but 2 references"):
        corpus_bleu(HYPS, REFS[:2])
    with pytest.raises(MetricError, match="reference stream 2"):
        corpus_bleu(HYPS, [REFS, REFS2[:1]])
    with pytest.raises(MetricError, match="not one string"):
        corpus_bleu(HYPS[:1], "The cat.")
    with pytest.raises(MetricError, match="list of strings"):
        corpus_bleu(HYPS, [REFS[0], 3, REFS[2]])  # type: ignore[list-item]
    with pytest.raises(MetricError, match="hypotheses must be"):
        corpus_bleu("The cat.", ["The cat."])


def test_reference_streams_shapes():
    assert reference_streams(["a", "b"], 2) == [["a", "b"]]
    assert reference_streams([("a", "b"), ["c", "d"]], 2) == [["a", "b"], ["c", "d"]]
    assert reference_streams([], 0) == [[]]


def test_group_references_merges_repeated_sources():
    from nmt_desktop.core.training.metrics import group_references

    pairs = [("a", "A1"), ("b", "B1"), ("a", "A2"), ("c", "C1"), ("a", "A3"), ("b", "B2")]
    sources, streams = group_references(pairs)
    assert sources == ["a", "b", "c"]
    assert streams == [["A1", "B1", "C1"], ["A2", "B2", None], ["A3", None, None]]
    hyps = ["the cat sat on the mat", "a dog ran in the park", "it rains today in town"]
    refs = [("x", hyps[0]), ("x", "a cat was on the mat"), ("y", "the dog ran in a park"), ("y", hyps[1]),
            ("z", hyps[2])]
    sources, streams = group_references(refs)
    assert bleu(hyps, streams).score == pytest.approx(100.0)  # each hypothesis is one of its references
    assert bleu(hyps, streams).signature.startswith("nrefs:var")
    assert chrf(hyps, streams).score == pytest.approx(100.0)
    with pytest.raises(MetricError, match="None marks a missing reference"):
        bleu(["x"], [[None]])

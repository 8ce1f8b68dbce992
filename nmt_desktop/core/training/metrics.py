"""Corpus-level BLEU and chrF: thin wrappers over sacreBLEU.

Scores are sacreBLEU's, on 0..100, computed on detokenized text (sacreBLEU tokenizes internally),
and each `MetricResult` carries sacreBLEU's signature string so numbers can be reported
reproducibly ("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0").

References are either one string per hypothesis (one reference stream) or a list of streams,
sacreBLEU's convention: `refs[k][i]` is the k-th reference of sentence i, and every stream has as
many lines as there are hypotheses; a sentence with fewer references has None in the later streams
(`group_references` builds such streams). An empty hypothesis list scores 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.metrics.base import Metric

References = Sequence[str] | Sequence[Sequence[str]]


class MetricError(ValueError):
    """Hypotheses and references do not line up."""


@dataclass(frozen=True)
class MetricResult:
    """One corpus score with the sacreBLEU signature needed to reproduce it."""

    name: str  # "BLEU" or "chrF2"
    score: float  # 0..100
    signature: str  # e.g. "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
    details: str  # sacreBLEU's summary line (n-gram precisions, brevity penalty ...); "" if no hypotheses

    def __str__(self) -> str:
        return f"{self.name} {self.score:.2f} ({self.signature})"


def bleu(hyps: Sequence[str], refs: References, lowercase: bool = False, tokenize: str = "13a") -> MetricResult:
    """sacreBLEU corpus BLEU; the defaults are sacreBLEU's (cased, 13a tokenization)."""
    return _score(BLEU(lowercase=lowercase, tokenize=tokenize), "BLEU", hyps, refs)


def chrf(hyps: Sequence[str], refs: References) -> MetricResult:
    """sacreBLEU corpus chrF (character 6-grams, beta 2, no word n-grams)."""
    return _score(CHRF(), "chrF2", hyps, refs)


def corpus_bleu(hyps: Sequence[str], refs: References) -> float:
    """Standard sacreBLEU BLEU: cased, 13a tokenization, on detokenized text."""
    return bleu(hyps, refs).score


def corpus_chrf(hyps: Sequence[str], refs: References) -> float:
    """Standard sacreBLEU chrF."""
    return chrf(hyps, refs).score


def tokenized_lowercase_bleu(hyps: Sequence[str], refs: References) -> float:
    """Case-insensitive BLEU: sacreBLEU with lowercase=True and tokenize="13a" (what `sacrebleu -lc`
    reports), for comparison with papers that report lowercased BLEU.

    The text is lowercased and then 13a-tokenized by sacreBLEU, whether it arrives detokenized or
    already tokenized (13a only splits punctuation further, so tokenized input scores about the
    same). It is not multi-bleu.perl: numbers computed on Moses-tokenized (e.g. compound-split)
    text are close to, but not exactly, this score.
    """
    return bleu(hyps, refs, lowercase=True, tokenize="13a").score


def evaluate(hyps: Sequence[str], refs: References) -> list[MetricResult]:
    """Standard BLEU and chrF together."""
    return [bleu(hyps, refs), chrf(hyps, refs)]


def _score(metric: Metric, name: str, hyps: Sequence[str], refs: References) -> MetricResult:
    if isinstance(hyps, str) or not all(isinstance(h, str) for h in hyps):
        raise MetricError("hypotheses must be a list of strings.")
    streams = reference_streams(refs, len(hyps))
    if not hyps:  # sacreBLEU fails on empty input; score a blank line only to get the signature
        metric.corpus_score([""], [[""] for _ in streams])
        return MetricResult(name, 0.0, str(metric.get_signature()), "")
    result = metric.corpus_score(list(hyps), streams)
    return MetricResult(name, float(result.score), str(metric.get_signature()), str(result))


def reference_streams(refs: References, n_hyps: int) -> list[list[str]]:
    """References as sacreBLEU's list of streams, each checked to have `n_hyps` lines."""
    if isinstance(refs, str):
        raise MetricError("references must be a list of strings or a list of reference streams, not one string.")
    if not refs:
        streams = [[]]
    elif all(isinstance(r, str) for r in refs):
        streams = [list(refs)]  # type: ignore[arg-type]
    elif all(not isinstance(s, str) and isinstance(s, Sequence)
             and all(isinstance(r, str) or (k > 0 and r is None) for r in s) for k, s in enumerate(refs)):
        streams = [list(s) for s in refs]  # type: ignore[arg-type]
    else:
        raise MetricError("references must be a list of strings or a list of reference streams (lists of strings; "
                          "None marks a missing reference after the first stream).")
    for k, stream in enumerate(streams):
        if len(stream) != n_hyps:
            which = "references" if len(streams) == 1 else f"lines in reference stream {k + 1}"
            raise MetricError(f"{n_hyps} hypotheses but {len(stream)} {which}.")
    return streams


def group_references(pairs: Sequence[tuple[str, str]]) -> tuple[list[str], list[list[str | None]]]:
    """Merge (source, reference) rows that share a source: the unique sources in first-seen order
    and their references as sacreBLEU streams (None where a source has fewer references).

    Test sets like Tatoeba list one English sentence several times with different valid
    translations; scored row by row, a perfect system loses on every row but one.
    """
    refs: dict[str, list[str]] = {}
    for source, reference in pairs:
        refs.setdefault(source, []).append(reference)
    width = max((len(r) for r in refs.values()), default=1)
    streams = [[r[k] if k < len(r) else None for r in refs.values()] for k in range(width)]
    return list(refs), streams

"""Heads and attribution methods judged over a file of sentence pairs, not one sentence (issue 31; no Qt).

One sentence says little about a head or a method: a head whose ablation changes nothing on the sentence shown
may carry a tenth of the BLEU of a dev set. `dataset_report` runs, over (source, reference) pairs:

- Heads: each decoder cross-attention head zeroed in turn (`ablation.ablation_mask`), the whole file
  re-translated greedily in the translator's batches; the corpus BLEU drop (sacreBLEU, the number
  `ablation.rank_heads` and `nmt-desktop heads` give), the head's statistics averaged over the file
  (`head_statistics.average_stats`, as `probe_head_stats`), and per sentence the sentence BLEU / chrF change.
  A head's telling sentences are those whose sentence chrF drops most when it is off (chrF rather than sentence
  BLEU: BLEU of one short sentence is mostly 0 or 100).
- Methods: every attribution method of `attribution.METHODS` (read at call time: methods are still being
  added) on each sentence's greedy translation, then `attribution.faithfulness` (comprehensiveness and
  sufficiency AOPC, and the seeded random ranking's), averaged over the sentences. A method's telling
  sentences are those where it beats the random ranking by least (`MethodSentence.margin`).

Work comes in units (the intact pass, one pass per head, one (method, sentence)); `progress(done, total)` is
called after each and `cancel()` checked before each, so a GUI thread can show an ETA and stop the run.
`read_pairs` reads the file with the training corpus reader (TSV, TMX), the one `nmt-desktop heads` uses.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np
from sacrebleu.metrics import BLEU, CHRF

from nmt_desktop.core.analysis.ablation import ablation_mask, all_heads
from nmt_desktop.core.analysis.head_names import head_name
from nmt_desktop.core.analysis.head_statistics import HeadStats, average_stats, head_stats
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.training.metrics import corpus_bleu, corpus_chrf

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Translation
    from nmt_desktop.core.decoding.translator import Translator

STAT_FIELDS = ("entropy", "eos_share", "punct_share", "diagonality", "monotonicity", "coverage")
TELLING = 10  # telling sentences kept per head and per method
DEFAULT_BATCH_SIZE = 16  # as `nmt-desktop heads` and `rank_heads`


class ReportCancelled(Exception):
    """`cancel()` said stop; raised between two units of work."""


@dataclass
class SentenceChange:
    """One sentence with one head switched off: its translation and how much its scores dropped."""

    index: int  # into DatasetReport.pairs
    translation: str  # with the head off
    bleu: float  # sentence BLEU (sacreBLEU, effective order) with the head off
    chrf: float  # sentence chrF with the head off
    bleu_drop: float  # intact - ablated (positive: the head helped this sentence)
    chrf_drop: float


@dataclass
class HeadRow:
    """One cross-attention head over the file (layer, head 0-based; `name` is how people read it, L3 H2)."""

    layer: int
    head: int
    bleu: float  # corpus BLEU with the head zeroed
    bleu_drop: float  # intact corpus BLEU - bleu
    chrf_drop: float  # intact corpus chrF - corpus chrF with the head zeroed
    changed: int  # sentences whose translation changed
    stats: HeadStats | None  # averaged over the file's sentences (None: no sentence had attention)
    telling: list[SentenceChange] = field(default_factory=list)  # largest chrF drop first, changed ones only,
    # one per distinct source

    @property
    def name(self) -> str:
        return head_name(self.layer, self.head)


@dataclass
class MethodSentence:
    """One sentence's faithfulness under one method (AOPC over the fractions, mean over target tokens)."""

    index: int
    comprehensiveness: float
    sufficiency: float
    random_comprehensiveness: float
    random_sufficiency: float

    @property
    def margin(self) -> float:
        """How much better than random: (comp - random comp) + (random suff - suff); low: least faithful."""
        return (self.comprehensiveness - self.random_comprehensiveness) + \
            (self.random_sufficiency - self.sufficiency)


@dataclass
class MethodRow:
    """One attribution method's faithfulness averaged over the sentences it could explain."""

    method: str
    comprehensiveness: float  # nan when no sentence could be explained
    sufficiency: float
    random_comprehensiveness: float
    random_sufficiency: float
    seconds_per_sentence: float  # the attribution's own time (faithfulness's perturbations not counted; a
    # repeated source counts its one explanation's time again)
    sentences: int  # explained
    skipped: int  # could not be explained (a segmented line too long to take whole, only special tokens ...)
    error: str | None = None  # the first reason a sentence was skipped
    telling: list[MethodSentence] = field(default_factory=list)  # smallest margin first, one per distinct source


@dataclass
class DatasetReport:
    """Everything `dataset_report` measured; `translations[i]` is the intact model's greedy output of pair i."""

    pairs: list[tuple[str, str]]
    translations: list[str]
    bleu: float  # intact corpus BLEU
    chrf: float
    heads: list[HeadRow]  # (layer, head) order; sort as you like
    methods: list[MethodRow]  # METHODS order
    seconds: float
    sentence_chrf: list[float] = field(default_factory=list)  # intact, per pair

    def head(self, layer: int, head: int) -> HeadRow:
        return next(r for r in self.heads if (r.layer, r.head) == (layer, head))

    def method(self, name: str) -> MethodRow:
        return next(r for r in self.methods if r.method == name)


def read_pairs(path: str | Path, max_lines: int | None = None) -> list[tuple[str, str]]:
    """The first `max_lines` (source, reference) pairs of a TSV (source<TAB>reference) or TMX file, read as
    `nmt-desktop heads --probe` reads them; CorpusError (a ValueError) when there are none."""
    from nmt_desktop.core.training.corpus import CorpusSpec, read_corpus

    pairs = read_corpus(CorpusSpec(path=path)).pairs
    return list(pairs if max_lines is None else pairs[:max_lines])


def current_methods() -> tuple[str, ...]:
    """attribution.METHODS as it is now (read at call time: another module version may have added some)."""
    from nmt_desktop.core.analysis import attribution

    return tuple(attribution.METHODS)


_BLEU = BLEU(effective_order=True)
_CHRF = CHRF()


def sentence_scores(hyp: str, ref: str) -> tuple[float, float]:
    """(sentence BLEU with effective order, sentence chrF) of one hypothesis, sacreBLEU's."""
    return _BLEU.sentence_score(hyp, [ref]).score, _CHRF.sentence_score(hyp, [ref]).score


def dataset_report(translator: "Translator", pairs: Sequence[tuple[str, str]], *,
                   methods: Sequence[str] | None = None, heads: bool = True,
                   batch_size: int = DEFAULT_BATCH_SIZE, seed: int = 0, telling: int = TELLING,
                   progress: Callable[[int, int], None] | None = None,
                   cancel: Callable[[], bool] | None = None) -> DatasetReport:
    """Heads (when `heads`) and attribution `methods` (None: every one of METHODS now; () none) over `pairs`.

    Greedy decoding, deterministic; `seed` is the faithfulness random ranking's. Raises ReportCancelled when
    `cancel()` turns true, ValueError on no pairs or an unknown method."""
    pairs = [(s, r) for s, r in pairs]
    if not pairs:
        raise ValueError("a dataset report needs at least one (source, reference) pair")
    names = current_methods() if methods is None else tuple(methods)
    unknown = [m for m in names if m not in current_methods()]
    if unknown:
        raise ValueError(f"unknown attribution method(s) {', '.join(unknown)}; choose among "
                         f"{', '.join(current_methods())}")
    started = time.perf_counter()
    head_list = all_heads(translator) if heads else []
    total = 1 + len(head_list) + len(names) * len(pairs)
    done = 0

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    def check() -> None:
        if cancel is not None and cancel():
            raise ReportCancelled("the dataset report was cancelled")

    if progress is not None:
        progress(0, total)
    sources, refs = [s for s, _ in pairs], [r for _, r in pairs]
    check()
    # attention=True: the statistics come from the same greedy pass (the text is the one attention=False gives)
    base = translator.translate_batch(sources, DecodeConfig(attention=True, alternatives=0), batch_size)
    base_text = [t.text for t in base]
    base_scores = [sentence_scores(h, r) for h, r in zip(base_text, refs)]
    base_bleu, base_chrf = corpus_bleu(base_text, refs), corpus_chrf(base_text, refs)
    stats = {(s.layer, s.head): s for s in average_stats(
        [head_stats(t) for t in base if t.attention is not None and t.attention.shape[2]])}
    step()

    head_rows = []
    plain = DecodeConfig(attention=False, alternatives=0)
    for layer, head in head_list:
        check()
        mask = ablation_mask(translator, [(layer, head)])  # (L, H)
        texts = [t.text for t in translator.translate_batch(sources, plain, batch_size, head_mask=mask)]
        changes = []
        for i, (hyp, ref) in enumerate(zip(texts, refs)):
            if hyp == base_text[i]:
                continue
            b, c = sentence_scores(hyp, ref)
            changes.append(SentenceChange(i, hyp, b, c, base_scores[i][0] - b, base_scores[i][1] - c))
        changes.sort(key=lambda ch: (-ch.chrf_drop, -ch.bleu_drop, ch.index))
        bleu = corpus_bleu(texts, refs)
        head_rows.append(HeadRow(layer, head, bleu, base_bleu - bleu, base_chrf - corpus_chrf(texts, refs),
                                 len(changes), stats.get((layer, head)), _distinct(changes, sources, telling)))
        step()

    method_rows = []
    for method in names:
        per: list[MethodSentence] = []
        seconds: list[float] = []
        skipped, error = 0, None
        # a source repeated with other references (dev sets have them) has the same translation: explained once
        explained: dict[str, tuple[float, float, float, float, float] | str] = {}
        for i, translation in enumerate(base):
            check()
            if sources[i] not in explained:
                try:
                    explained[sources[i]] = _explain(translator, translation, method, seed, check)
                except ReportCancelled:
                    raise
                except Exception as exc:  # noqa: BLE001 - a sentence (or a new method) that cannot be explained
                    explained[sources[i]] = ' '.join(str(exc).split()) or type(exc).__name__  # is counted, not fatal
            result = explained[sources[i]]
            if isinstance(result, str):
                skipped += 1
                error = error or f"pair {i + 1}: {result}"
            else:
                per.append(MethodSentence(i, *result[:4]))
                seconds.append(result[4])
            step()
        method_rows.append(_method_row(method, per, seconds, skipped, error, sources, telling))
    return DatasetReport(pairs, base_text, base_bleu, base_chrf, head_rows, method_rows,
                         time.perf_counter() - started, [c for _, c in base_scores])


def _explain(translator: "Translator", translation: "Translation", method: str, seed: int,
             check: Callable[[], None]) -> tuple[float, float, float, float, float]:
    """(AOPC comp, suff, random comp, random suff, attribution seconds) of one sentence's greedy translation.
    A line the translator split into sentences is retranslated whole (attributions explain one unit). `check`
    between the attribution and its faithfulness: each can take seconds on a long sentence."""
    from nmt_desktop.core.analysis import attribution

    if translation.segments:
        translation = translator.translate_batch([translation.source], DecodeConfig(alternatives=0),
                                                 whole_lines=True)[0]
        if translation.segments:
            raise ValueError("the line is too long to explain as one unit")
    explained = attribution.attribute(translator, translation, method)
    check()
    faith = attribution.faithfulness(translator, translation, explained, seed=seed)
    return (faith.aopc_comprehensiveness, faith.aopc_sufficiency, faith.random_aopc_comprehensiveness,
            faith.random_aopc_sufficiency, float(explained.seconds))


def _distinct(ranked: list, sources: Sequence[str], limit: int) -> list:
    """The first `limit` of `ranked` (items with an `index`) with a source not seen before in the list."""
    seen: set[str] = set()
    out = []
    for item in ranked:
        if sources[item.index] not in seen and len(out) < limit:
            seen.add(sources[item.index])
            out.append(item)
    return out


def _method_row(method: str, per: list[MethodSentence], seconds: list[float], skipped: int,
                error: str | None, sources: Sequence[str], telling: int) -> MethodRow:
    def mean(name: str) -> float:
        return float(np.mean([getattr(p, name) for p in per])) if per else math.nan

    worst = _distinct(sorted(per, key=lambda p: (p.margin, p.index)), sources, telling)
    return MethodRow(method, mean("comprehensiveness"), mean("sufficiency"), mean("random_comprehensiveness"),
                     mean("random_sufficiency"), float(np.mean(seconds)) if seconds else math.nan, len(per),
                     skipped, error, worst)


HEAD_CSV = ("name", "layer", "head", "bleu", "bleu_drop", "chrf_drop", "changed", *STAT_FIELDS)
METHOD_CSV = ("method", "comprehensiveness", "sufficiency", "random_comprehensiveness", "random_sufficiency",
              "seconds_per_sentence", "sentences", "skipped", "error")


def head_csv_rows(report: DatasetReport) -> list[list[object]]:
    """The Heads table as CSV rows (header first); layer and head 0-based like the CLI's JSON, `name` 1-based."""
    rows: list[list[object]] = [list(HEAD_CSV)]
    for r in report.heads:
        stats = [None if r.stats is None else round(getattr(r.stats, f), 6) for f in STAT_FIELDS]
        rows.append([r.name, r.layer, r.head, round(r.bleu, 4), round(r.bleu_drop, 4), round(r.chrf_drop, 4),
                     r.changed, *stats])
    return rows


def method_csv_rows(report: DatasetReport) -> list[list[object]]:
    """The Methods table as CSV rows (header first)."""
    rows: list[list[object]] = [list(METHOD_CSV)]
    for r in report.methods:
        rows.append([r.method, *(None if math.isnan(v) else round(v, 6) for v in
                                 (r.comprehensiveness, r.sufficiency, r.random_comprehensiveness,
                                  r.random_sufficiency, r.seconds_per_sentence)),
                     r.sentences, r.skipped, r.error or ""])
    return rows

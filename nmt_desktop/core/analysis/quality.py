"""Can I trust this translation, and where not? A sentence score and word flags for a (source, target) pair,
from the model itself: no reference, no second model (issue 31; the recipe's numbers are in
benchmarks/RESULTS.md, "Trust signals").

**The sentence score `qe`** estimates the target's sentence chrF against a human reference (0..100, higher
is better). It is a linear fit, on the model's own translations of the Multi30k validation captions, of four
readings of the two teacher-forced passes of quality_features.py, minus two penalties that are zero for
fluent, faithful targets:

    qe = 64.8 - 1.04 * mean log p(y_t)  + 15.2 * (-mean entropy)  + 3.71 * mean support  + 16.4 * log(T / S)
         - 30 * max(0, 2.5 - mean support)       (detached: the source explains the target no better than nothing)
         - 60 * max(0, -0.3 - log(T / S))        (omission: far fewer target tokens than the source has)

"Support" is the source's pointwise mutual information with each target token, log p(y_t | x) - log p(y_t |
empty source): the plain perplexity cannot tell a fluent sentence about something else from a translation.
The entropy of the model's predictions says how sure it is of the whole sentence, not just of the tokens
given; it is what ranks the model's own translations best (Fomicheva et al. 2020 found the same). T and S
count tokens with </s>. The fit was chosen over the plain sentence perplexity by Kendall tau with sentence
chrF on captions, Tatoeba and Wikipedia-style sentences, and the penalties' knees and slopes by AUROC for
telling references from other sentences' references and from references with 40% of their words cut; the
weights are the bundled en-de model's (other models get the same formula: rank with it, do not read it as
chrF there).

**Word flags** (`WordFlag`, each with a one-sentence reason for a tooltip):
- `untranslated` (source): a source word the target seems to leave out. Evidence: how much the target needs
  the word, the largest drop of a target token's log-probability when the word is hidden (masking.py's
  prediction difference). A given target: it needs the word less than 0.5 nats while the model's own
  translation needs it 1 nat or more (function words, which neither needs, are not flagged). The model's own
  translation: it needs a word of four letters or more less than 0.5 nats (short function words are often
  rendered by word order or inflection, not a word, so they are left out of this test).
- `doubted` (target): a word whose pieces the model found unlikely (p < 0.05) where it preferred another token.
- `unsupported` (target): a word the source does not explain: its support is below -0.5 nats and the model
  is not just copying it from the source (a hallucination sign: low source share).
- `repeated` (target): a word or span said again right after itself ("der der", "in the park in the park").
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence

import numpy as np

from nmt_desktop.core.analysis.quality_features import PairReading, read_pairs
from nmt_desktop.core.analysis.words import join_word, real_words

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Translation
    from nmt_desktop.core.decoding.translator import Translator

FlagKind = Literal["doubted", "untranslated", "unsupported", "repeated"]

# The recipe (module docstring; benchmarks/qe_recipe.py measures it).
INTERCEPT = 64.78
WEIGHTS = {"mean_logprob": -1.04, "neg_entropy": 15.23, "support": 3.71, "length_ratio": 16.37}
DETACHED_KNEE, DETACHED_SLOPE = 2.5, 30.0
SHORT_KNEE, SHORT_SLOPE = -0.3, 60.0
# Word flags.
DOUBT_PROB = 0.05
UNSUPPORTED_SUPPORT = -0.5
UNNEEDED_DROP = 0.5  # nats: a source word no target token loses this much without
CONTENT_LETTERS = 4
OWN_NEEDED_DROP = 1.0  # nats: ... that the model's own translation does depend on
# Trust levels of the one line under a translation.
HIGH, LOW = 60.0, 40.0


@dataclass
class WordFlag:
    """A word the reader should look at twice, and why."""

    side: Literal["source", "target"]
    word: int  # index into QualityEstimate.source_words / target_words
    text: str
    kind: FlagKind
    reason: str  # one sentence, for a tooltip
    strength: float  # 0..1, how strongly the evidence says so

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class QualityEstimate:
    """The trust signals of one (source, target) pair (module docstring)."""

    source: str
    target: str
    own: bool  # the model's own translation (False: a given target, teacher-forced)
    qe: float  # estimated sentence chrF, 0..100; higher is better
    features: dict[str, float]
    source_words: list[str]
    target_words: list[str]
    source_groups: list[list[int]]  # piece indices of each source word (into the scored source tokens)
    target_groups: list[list[int]]  # piece indices of each target word (into the target tokens, </s> excluded)
    flags: list[WordFlag] = field(default_factory=list)

    @property
    def perplexity(self) -> float:
        return math.exp(-self.features["mean_logprob"])

    @property
    def trust(self) -> str:
        """"high", "medium" or "low": qe's band, at most "medium" while a word is flagged untranslated or
        unsupported."""
        band = "high" if self.qe >= HIGH else "medium" if self.qe >= LOW else "low"
        serious = any(f.kind in ("untranslated", "unsupported") for f in self.flags)
        return "medium" if band == "high" and serious else band

    @property
    def untranslated(self) -> list[str]:
        """The source words flagged untranslated, without the punctuation they carry ("mountains," -> "mountains")."""
        return [re.sub(r"^\W+|\W+$", "", f.text) or f.text for f in self.flags if f.kind == "untranslated"]

    @property
    def summary(self) -> str:
        """One line for under the translation."""
        parts = [f"Trust: {self.trust} (estimated chrF {self.qe:.0f})"]
        if self.untranslated:
            parts.append(f"may leave out: {', '.join(self.untranslated)}")
        counts = {k: sum(f.kind == k for f in self.flags) for k in ("doubted", "unsupported", "repeated")}
        named = {"doubted": "doubted", "unsupported": "not supported by the source", "repeated": "repeated"}
        parts += [f"{n} word{'s' if n > 1 else ''} {named[k]}" for k, n in counts.items() if n]
        return " · ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """`qe`'s JSON line."""
        return {"source": self.source, "target": self.target, "own": self.own, "qe": round(self.qe, 3),
                "trust": self.trust, "perplexity": round(self.perplexity, 4),
                "features": {k: round(v, 5) for k, v in self.features.items()},
                "untranslated": self.untranslated, "flags": [f.to_dict() for f in self.flags]}


def sentence_features(reading: PairReading) -> dict[str, float]:
    """The four readings the score is made of, and the two penalties' inputs."""
    T, S = len(reading.target_ids), len(reading.source_ids)
    return {"mean_logprob": float(reading.logprob.mean()), "neg_entropy": float(-reading.entropy.mean()),
            "support": float(reading.support.mean()), "length_ratio": math.log(T / max(S, 1))}


def sentence_score(features: dict[str, float]) -> float:
    """qe from `sentence_features` (the module docstring's formula), kept inside 0..100 by `bounded`."""
    linear = INTERCEPT + sum(WEIGHTS[k] * features[k] for k in WEIGHTS)
    detached = DETACHED_SLOPE * max(0.0, DETACHED_KNEE - features["support"])
    short = SHORT_SLOPE * max(0.0, SHORT_KNEE - features["length_ratio"])
    return bounded(linear - detached - short)


def bounded(x: float) -> float:
    """x itself between 10 and 90; beyond, an exponential approach to 0 or 100. Strictly increasing, so that
    two bad (or two perfect) targets still rank: a clip would tie them and blur every ranking measure."""
    if x < 10.0:
        return 10.0 * math.exp((x - 10.0) / 10.0)
    if x > 90.0:
        return 100.0 - 10.0 * math.exp(-(x - 90.0) / 10.0)
    return float(x)


# --- words ---------------------------------------------------------------------------------------------
def _norm(word: str) -> str:
    return re.sub(r"\W+", "", word.lower())


def _aligned_words(reading: PairReading, src_groups: Sequence[Sequence[int]], tgt_pieces: Sequence[str],
                   tgt_groups: Sequence[Sequence[int]]) -> list[set[str]]:
    """Per source word, the (normalised) target words whose attention peaks on it: the words the model used
    to render it."""
    column = np.full(reading.attention.shape[1], -1)  # (S,) source word of each source token
    for w, group in enumerate(src_groups):
        column[list(group)] = w
    out: list[set[str]] = [set() for _ in src_groups]
    for group in tgt_groups:
        text = _norm(join_word([tgt_pieces[i] for i in group]))
        row = reading.attention[list(group)].mean(axis=0) * (column >= 0)  # (S,)
        if text and row.max() > 0:
            out[column[int(row.argmax())]].add(text)
    return out


def _percent(p: float) -> str:
    return "under 0.1%" if p < 0.001 else f"{p:.1%}"


def _repeats(words: Sequence[str]) -> list[tuple[int, int]]:
    """(start, length) of each span (1..4 words, letters or digits in it) that repeats the span right before it."""
    norm = [_norm(w) for w in words]
    found: list[tuple[int, int]] = []
    covered: set[int] = set()
    for n in (4, 3, 2, 1):
        for start in range(n, len(norm) - n + 1):
            span = norm[start:start + n]
            if span == norm[start - n:start] and all(span) and not covered & set(range(start, start + n)):
                found.append((start, n))
                covered |= set(range(start, start + n))
    return sorted(found)


def _needed(translator: "Translator", reading: PairReading, src_groups: Sequence[Sequence[int]]) -> np.ndarray:
    """(Ws,) per source word, the largest drop of a target token's log-probability when the word is hidden."""
    from nmt_desktop.core.analysis.masking import prediction_difference

    if not src_groups:
        return np.zeros(0)
    ids = SimpleNamespace(source_ids=reading.source_ids, target_ids=reading.target_ids)
    return prediction_difference(translator, ids, src_groups).max(axis=0)  # type: ignore[arg-type]


def _flags(translator: "Translator", reading: PairReading, own_reading: PairReading | None, src_pieces: Sequence[str],
           tgt_pieces: Sequence[str], own_pieces: Sequence[str], src_groups: list[list[int]],
           tgt_groups: list[list[int]], continuing: str | None) -> list[WordFlag]:
    flags: list[WordFlag] = []
    src_words = [join_word([src_pieces[i] for i in g]) for g in src_groups]
    tgt_words = [join_word([tgt_pieces[i] for i in g]) for g in tgt_groups]
    needed = _needed(translator, reading, src_groups)  # (Ws,)
    if own_reading is None:  # the model's own translation: nothing to compare with but the word itself
        for i, word in enumerate(src_words):
            if needed[i] < UNNEEDED_DROP and len(_norm(word)) >= CONTENT_LETTERS and not _norm(word).isdigit():
                flags.append(WordFlag("source", i, word, "untranslated",
                                      f"No word of the translation depends on it: hiding it lowers no target "
                                      f"token's log-probability by {UNNEEDED_DROP} nats or more (at most "
                                      f"{needed[i]:.2f}).", float(1 - needed[i] / UNNEEDED_DROP)))
    else:  # a given target: what the model's own translation needs and this one does not
        own_needed = _needed(translator, own_reading, src_groups)  # (Ws,)
        rendered = _aligned_words(own_reading, src_groups, own_pieces, real_words(own_pieces, continuing))
        for i, word in enumerate(src_words):
            if not (needed[i] < UNNEEDED_DROP <= OWN_NEEDED_DROP <= own_needed[i]) or not _norm(word):
                continue
            words = sorted(w for w in rendered[i] if w)
            said = f" (it renders it as \"{', '.join(words)}\")" if words else ""
            flags.append(WordFlag("source", i, word, "untranslated",
                                  f"The model's own translation depends on it{said}, this one does not: hiding it "
                                  f"lowers no token here by {UNNEEDED_DROP} nats or more (at most {needed[i]:.2f}; "
                                  f"{own_needed[i]:.2f} in the model's own).",
                                  float(min(1.0, own_needed[i] / 5) * (1 - needed[i] / UNNEEDED_DROP))))
    source_texts = {_norm(w) for w in src_words}
    for j, group in enumerate(tgt_groups):
        text = tgt_words[j]
        if not _norm(text):
            continue
        probs = np.exp(reading.logprob[group])  # (pieces,)
        worst = int(np.argmin(probs))
        at = group[worst]
        if probs[worst] < DOUBT_PROB and reading.preferred[at] != reading.target_ids[at]:
            flags.append(WordFlag("target", j, text, "doubted",
                                  f"The model gave it a probability of {_percent(probs[worst])} and preferred "
                                  f"another word here.", float(1 - probs[worst] / DOUBT_PROB)))
        support = float(reading.support[group].sum())
        if support < UNSUPPORTED_SUPPORT and _norm(text) not in source_texts:
            flags.append(WordFlag("target", j, text, "unsupported",
                                  f"The source does not explain it: the model finds it no likelier with this source "
                                  f"than with none (support {support:.2f} nats).", float(min(1.0, -support / 3))))
    for start, n in _repeats(tgt_words):
        for j in range(start, start + n):
            flags.append(WordFlag("target", j, tgt_words[j], "repeated",
                                  f"\"{' '.join(tgt_words[start:start + n])}\" is said twice in a row.", 1.0))
    return flags


# --- estimates -----------------------------------------------------------------------------------------
def _estimate(translator: "Translator", source: str, target: str, reading: PairReading,
              own_reading: PairReading | None) -> QualityEstimate:
    continuing = translator.tokenizers.source.continuing_prefix
    src_pieces = translator.source_pieces(reading.source_ids)
    tgt_pieces = translator.target_pieces(reading.target_ids[:-1])  # </s> left out of the words
    own_pieces = [] if own_reading is None else translator.target_pieces(own_reading.target_ids[:-1])
    src_groups = real_words(src_pieces, continuing)
    tgt_groups = real_words(tgt_pieces, translator.tokenizers.target.continuing_prefix)
    features = sentence_features(reading)
    est = QualityEstimate(source, target, own_reading is None, sentence_score(features), features,
                          [join_word([src_pieces[i] for i in g]) for g in src_groups],
                          [join_word([tgt_pieces[i] for i in g]) for g in tgt_groups], src_groups, tgt_groups)
    est.flags = _flags(translator, reading, own_reading, src_pieces, tgt_pieces, own_pieces, src_groups, tgt_groups,
                       translator.tokenizers.target.continuing_prefix)
    return est


def estimate_translation(translator: "Translator", translation: "Translation") -> QualityEstimate:
    """The trust signals of a finished translation as the app shows it: the model's own (decoded) or a given
    one (scored, `Hypothesis.forced`). Two teacher-forced passes; a given target also gets the model's own
    greedy translation to find what it leaves out."""
    if translation.segments:
        raise ValueError("this translation joins several units: estimate each of its `segments`")
    hyp = translation.best
    if hyp.forced:
        return estimate_pairs(translator, [(translation.source, list(translation.target_ids))])[0]
    eos = translator.config.eos_id
    reading = read_pairs(translator, [(translation.source_ids, [t for t in translation.target_ids if t != eos])])[0]
    return _estimate(translator, translation.source, translation.text, reading, None)


def estimate_pairs(translator: "Translator", pairs: Sequence[tuple[str, "str | Sequence[int] | None"]],
                   batch_size: int = 32, progress: Callable[[int, int], None] | None = None,
                   cancelled: Callable[[], bool] | None = None) -> list[QualityEstimate]:
    """Trust signals of (source, target) pairs in input order; a target of None is replaced by the model's own
    greedy translation (and estimated as such). `progress(done, total)` counts pairs; `cancelled()` stops
    between batches (ValueError: nothing partial comes back)."""
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.scoring import target_ids

    sources = [translator.source_ids(s) for s, _ in pairs]
    own = translator.translate_batch([s for s, _ in pairs], DecodeConfig(alternatives=1), batch_size=batch_size,
                                     whole_lines=True)
    given_ids: list[list[int]] = []
    for (source, target), mine in zip(pairs, own):
        if target is None:
            given_ids.append(list(mine.target_ids))
        else:
            given_ids.append(target_ids(translator.tokenizers.target, translator.config, target))
    stripped = [[t for t in mine.target_ids if t != translator.config.eos_id] for mine in own]
    total = len(pairs)

    def report(done: int, _: int) -> None:
        if progress is not None:
            progress(done, total)

    def stop() -> bool:
        return cancelled is not None and cancelled()

    readings = read_pairs(translator, list(zip(sources, [[t for t in g if t != translator.config.eos_id]
                                                          for g in given_ids])), batch_size, report, stop)
    own_needed = [i for i, (_, target) in enumerate(pairs) if target is not None]
    own_readings = read_pairs(translator, [(sources[i], stripped[i]) for i in own_needed], batch_size,
                              cancelled=stop)
    if stop() or len(readings) < total or len(own_readings) < len(own_needed):
        raise ValueError("quality estimation was cancelled")
    own_by_index = dict(zip(own_needed, own_readings))
    out = []
    for i, ((source, target), reading) in enumerate(zip(pairs, readings)):
        text = own[i].text if target is None else (target if isinstance(target, str)
                                                   else translator.tokenizers.target.decode(list(target)))
        out.append(_estimate(translator, source, text, reading, own_by_index.get(i)))
    return out

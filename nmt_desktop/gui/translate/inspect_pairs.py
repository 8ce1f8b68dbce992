"""What "Inspect this translation" scores: the source and the given translation cut into the same sentence
pairs the Translate tab translates, each scored on its own (no Qt here: it runs on the worker thread).

Why pairs and not one long sentence: the Translate tab translates a text line by line (and a line sentence by
sentence, `core/decoding/document.py`), so the model's own translation of three lines is three decodings. Scoring
the joined text as one sentence asks the model something it was never asked (one long sentence ending once) and
gives another, lower log-probability, with the model's own tokens marked as "not its first choice". Here the
given text is paired with the source line by line and unit by unit, the model's translation of each unit is the
Translate tab's (its very token ids when the text is unchanged), and the sentence scores are the sums over the
pairs: the model's own translation, inspected, scores exactly what it scored when translated.

When the line counts differ (a translation that merges or splits lines), the two texts are scored as one pair,
and `InspectResult.note` says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.document import document_lines, line_units, split_sentences
from nmt_desktop.core.decoding.scoring import Disagreement, disagreements

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.decoding.results import Hypothesis, Translation

# what scoring records: the top-5 alternatives of each position and every attention the views can show
SCORE_CONFIG = DecodeConfig(alternatives=5, attention=True, self_attention=True)


def one_line(text: str) -> str:
    """A pasted text as one sentence pair's side: line breaks and runs of spaces become one space."""
    return " ".join(text.split())


@dataclass(frozen=True)
class ModelUnit:
    """A unit the Translate tab translated: its line, source text, and its translation's text and token ids."""

    line: int
    source: str
    text: str
    token_ids: tuple[int, ...]


@dataclass
class PairPlan:
    """One sentence pair to score: the source, the given target (text, or the model's ids when the text is the
    model's very translation) and the model's translation of that source when the Translate tab has it."""

    line: int
    source: str
    given: str | list[int]
    model_ids: list[int] | None


@dataclass
class ScoredPair:
    line: int  # the source line the pair belongs to
    given: Translation  # the given translation, teacher-forced
    model: Translation  # the model's translation of the same source, teacher-forced the same way


@dataclass
class InspectResult:
    """A given translation scored by the model pair by pair, beside the model's own translation of each source.

    `given` / `model` are the Translations of the pair the attention views show (`shown`); the scores are
    over all pairs."""

    pairs: list[ScoredPair]
    model_source: str  # where the model's translation came from: "the Translate tab" or "greedy decoding"
    note: str = ""  # how the texts were paired, when not line by line
    shown: int = 0

    @property
    def given(self) -> Translation:
        return self.pairs[self.shown].given

    @property
    def model(self) -> Translation:
        return self.pairs[self.shown].model

    @property
    def disagreements(self) -> list[tuple[int, Disagreement]]:
        """(pair, disagreement) over all pairs, in reading order."""
        return [(p, d) for p, pair in enumerate(self.pairs) for d in disagreements(pair.given.best)]

    def score(self, which: str) -> TextScore:
        """The whole text's score: "given" or "model"."""
        return TextScore.of([getattr(pair, which).best for pair in self.pairs])


@dataclass(frozen=True)
class TextScore:
    """A text's log-probability (the sum over its pairs, </s> included), its tokens and perplexity."""

    logprob: float
    tokens: int
    perplexity: float = field(default=float("nan"))

    @classmethod
    def of(cls, hyps: Sequence[Hypothesis]) -> TextScore:
        logprob = float(sum(h.logprob for h in hyps))
        tokens = sum(len(h.token_logprobs) for h in hyps)
        return cls(logprob, tokens, math.exp(-logprob / tokens) if tokens else float("nan"))


def plan_pairs(translator: Translator, source: str, given: str,
               model_units: Sequence[ModelUnit] = ()) -> tuple[list[PairPlan], str]:
    """The sentence pairs of `source` and `given`, and a note when they could not be paired line by line."""
    src_lines = [(n, line) for n, line in enumerate(document_lines(source)) if line.strip()]
    given_lines = [line.strip() for line in document_lines(given) if line.strip()]
    if len(src_lines) != len(given_lines):
        note = (f"Your translation has {len(given_lines)} lines and the source {len(src_lines)}: "
                f"scored as one sentence pair.")
        return [PairPlan(0, one_line(source), one_line(given), None)], note
    plans: list[PairPlan] = []
    for (n, src_line), given_line in zip(src_lines, given_lines):
        units = [text for text, _ids in line_units(src_line, translator.source_ids, translator.config.max_positions)]
        known = [m for m in model_units if m.line == n]
        if [m.source for m in known] != units:
            known = []  # the source changed since the Translate tab translated it
        if known and given_line == " ".join(m.text for m in known):  # the model's translation, unchanged
            plans += [PairPlan(n, m.source, list(m.token_ids), list(m.token_ids)) for m in known]
            continue
        parts = [given_line] if len(units) == 1 else split_sentences(given_line)
        if len(parts) != len(units):  # the sentences do not line up: the line is one pair
            plans.append(PairPlan(n, src_line.strip(), given_line, None))
            continue
        for i, (unit, part) in enumerate(zip(units, parts)):
            model = list(known[i].token_ids) if known else None
            plans.append(PairPlan(n, unit, model if model is not None and part == known[i].text else part, model))
    return plans, ""


def score_text(translator: Translator, source: str, given: str, model_units: Sequence[ModelUnit] = ()) \
        -> InspectResult:
    """Worker thread: score `given` as a translation of `source`, pair by pair, beside the model's translation
    of each pair's source (the Translate tab's `model_units`, else a greedy decoding) in one batch, so both
    scores come from the same model and the same forcing."""
    plans, note = plan_pairs(translator, source, given, model_units)
    missing = [plan for plan in plans if plan.model_ids is None]  # decoded greedily, in one batch
    decoded = translator.translate_batch([plan.source for plan in missing], DecodeConfig(alternatives=0),
                                         whole_lines=True) if missing else []
    for plan, translation in zip(missing, decoded):
        plan.model_ids = list(translation.best.token_ids)
    how = "greedy decoding" if missing else "the Translate tab"
    models = [(plan.source, plan.model_ids) for plan in plans]
    scored = translator.score_batch([(p.source, p.given) for p in plans] + models, SCORE_CONFIG)
    pairs = [ScoredPair(p.line, g, m) for p, g, m in zip(plans, scored[:len(plans)], scored[len(plans):])]
    return InspectResult(pairs, how, note)

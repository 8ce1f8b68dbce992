"""Constrained decoding: a translation that must contain given target text (glossary terms, placeholders).

How: translate as usual, in batches; a sentence whose translation already holds every required text is
done (a term the model translates anyway costs nothing). For a missing one, find where the translation
renders its source words, by the model itself: the source term is masked (masking.py, one teacher-forced
pass) and the target word whose probability drops most is where the model put its translation of the term.
The translation is then decoded again with everything before that word forced as a prefix, followed by
the target term, and the model finishes the sentence after it (forced prefixes run on every decoding
backend and search, and give attention for every token). Repeated for the next missing term, with the
terms already placed kept inside the prefix.

Why not dynamic beam allocation (Post & Vilar 2018): it needs a beam and per-hypothesis constraint
bookkeeping in every search; the forced repair needs neither, works in greedy search, and places the term
where the model's own translation of it was, so the words around it still fit. Measured against no
glossary in benchmarks/RESULTS.md ("Documents, glossaries and do-not-translate").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from nmt_desktop.core.analysis.alignment import piece_word_ids
from nmt_desktop.core.analysis.masking import prediction_difference
from nmt_desktop.core.analysis.words import word_starts
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.pipeline import length_sorted
from nmt_desktop.core.documents.glossary import Term, target_present

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Translation, Unit
    from nmt_desktop.core.decoding.translator import Translator


@dataclass(frozen=True)
class Constraint:
    """Characters [start, end) of a unit's source text must come out as `term.target`."""
    start: int
    end: int
    term: Term


@dataclass
class ConstraintReport:
    """What forcing did: constraints asked for, already met by the model, forced in, and still missing
    (a term whose place could not be found or that would not fit the model)."""
    asked: int = 0
    met: int = 0
    forced: int = 0
    missing: int = 0
    repairs: int = 0  # extra decodes run


def translate_constrained(translator: "Translator", units: Sequence["Unit"], constraints: Sequence[Sequence[Constraint]],
                          cfg: DecodeConfig, batch_size: int = 16, report: ConstraintReport | None = None,
                          on_done: Callable[[int, "Translation"], None] | None = None,
                          cancelled: Callable[[], bool] | None = None) -> list["Translation"]:
    """Each unit's translation (input order), holding every constraint's target text where it can be
    placed. `on_done(index, translation)` as each unit is final; `cancelled()` is checked between batches
    (then the units done so far are returned, the rest None)."""
    report = report if report is not None else ConstraintReport()
    done: list["Translation | None"] = [None] * len(units)
    for picked in length_sorted([len(u.source_ids) for u in units], batch_size):
        if cancelled is not None and cancelled():
            break
        for u, translation in zip(picked, translator.translate_units([units[u] for u in picked], cfg)):
            if constraints[u]:
                translation = repair(translator, units[u], translation, constraints[u], cfg, report)
            done[u] = translation
            if on_done is not None:
                on_done(u, translation)
    return done  # type: ignore[return-value]  (None only when cancelled)


def repair(translator: "Translator", unit: "Unit", translation: "Translation", constraints: Sequence[Constraint],
           cfg: DecodeConfig, report: ConstraintReport) -> "Translation":
    """The translation with each missing constraint forced in at its place (see the module docstring)."""
    met = sum(target_present(translation.text, c.term) for c in constraints)
    kept = 0  # target tokens at the start that hold the terms forced so far
    tried: set[int] = set()
    for _ in range(len(constraints)):
        missing = [i for i, c in enumerate(constraints) if i not in tried and not target_present(translation.text, c.term)]
        if not missing:
            break
        i = missing[0]
        tried.add(i)
        position = term_position(translator, translation, unit, constraints[i], kept)
        before = translator.tokenizers.target.decode(translation.target_ids[:position])
        prefix = translator.target_prefix_ids(f"{before} {constraints[i].term.target}".strip())
        if len(prefix) + 2 > translator.config.max_positions - 1:
            continue
        report.repairs += 1
        translation = _decode_after(translator, unit, prefix, cfg, constraints[i].term, report)
        kept = len(prefix)
    present = sum(target_present(translation.text, c.term) for c in constraints)
    report.asked, report.met = report.asked + len(constraints), report.met + met
    report.forced += max(0, present - met)
    report.missing += len(constraints) - present
    return translation


def _decode_after(translator: "Translator", unit: "Unit", prefix: list[int], cfg: DecodeConfig, term: Term,
                  report: ConstraintReport) -> "Translation":
    """The translation with `prefix` forced. A kept span (a number: source and target the same) must stay
    a word of its own: when the model glues a continuation to it ("2024" + "42"), the step after it is
    decoded again with the best token that starts a word (or ends the sentence) forced instead."""
    wide = replace(cfg, alternatives=max(cfg.alternatives, 8))
    translation = translator.translate_units([unit], wide if term.source == term.target else cfg, prefix=prefix)[0]
    if term.source != term.target:
        return translation
    tokens, after = translation.target_tokens, len(prefix)
    if after >= len(tokens) or not _glued(translator, tokens[after - 1: after + 1]):
        return translation
    alternatives = translation.best.alternatives[after] if after < len(translation.best.alternatives) else []
    eos = translator.config.eos_id
    choice = next((a.token_id for a in alternatives if a.token_id != eos
                   and not _glued(translator, [tokens[after - 1], a.piece])), None)
    if choice is None:  # nothing but a continuation or the end: keep what the model said
        return translation
    report.repairs += 1
    return translator.translate_units([unit], cfg, prefix=prefix + [choice])[0]


def _glued(translator: "Translator", pair: Sequence[str]) -> bool:
    """Whether the second piece continues the first's word with a letter or digit."""
    if len(pair) < 2 or not pair[1] or not pair[1].lstrip("#")[:1].isalnum():
        return False
    return not word_starts(list(pair), translator.tokenizers.target.continuing_prefix)[1]


def source_pieces(unit: "Unit", start: int, end: int) -> list[int]:
    """Indices of the unit's source pieces that hold characters [start, end) of its text."""
    words, spans, position = [], [], 0
    for word in unit.text.split():
        begin = unit.text.index(word, position)
        words.append(word)
        spans.append((begin, begin + len(word)))
        position = begin + len(word)
    inside = {w for w, (b, e) in enumerate(spans) if b < end and e > start}
    try:
        owners = piece_word_ids(unit.source_tokens, words)
    except ValueError:
        return []
    return [p for p, w in enumerate(owners) if w in inside]


def term_position(translator: "Translator", translation: "Translation", unit: "Unit", constraint: Constraint,
                  kept: int) -> int:
    """The target token index (a word's first piece, at or after `kept`) where the model translated the
    constraint's source words: the largest probability drop when they are masked, else the most attention
    on them, else the same relative place as in the source."""
    tokens = translation.target_tokens
    eos = translator.config.eos_id
    length = len(tokens) - (1 if translation.target_ids and translation.target_ids[-1] == eos else 0)
    if length <= kept:
        return length
    pieces = source_pieces(unit, constraint.start, constraint.end)
    scores = np.zeros(length)
    if pieces:
        scores = prediction_difference(translator, translation, [pieces])[:length, 0]  # (T,)
        if scores.max(initial=0.0) < 1e-3 and translation.attention is not None:
            attention = np.asarray(translation.attention, dtype=np.float64)  # (L, H, T, S)
            scores = attention[..., :length, :].mean(axis=(0, 1))[:, pieces].sum(axis=1)  # (T,)
    if not pieces or scores.max(initial=0.0) <= 0:
        relative = constraint.start / max(1, len(unit.text))
        scores = -np.abs(np.arange(length) / max(1, length) - relative)
    scores[:kept] = -np.inf
    best = int(np.argmax(scores))
    starts = word_starts(tokens[:length], translator.tokenizers.target.continuing_prefix)
    while best > kept and not starts[best]:
        best -= 1
    return best


def apply_glossary(translator: "Translator", units: Sequence["Unit"], translations: Sequence["Translation"],
                   terms: Sequence[Term], cfg: DecodeConfig) -> tuple[list["Translation"], ConstraintReport]:
    """Finished translations (the Translate tab's, streamed) with the glossary's terms forced in where the
    model left them out; the others are returned as they are (a term the model used costs nothing)."""
    from nmt_desktop.core.documents.glossary import find_terms

    report = ConstraintReport()
    out = []
    for unit, translation in zip(units, translations):
        found = [Constraint(m.start, m.end, m.term) for m in find_terms(unit.text, terms)]
        out.append(repair(translator, unit, translation, found, cfg, report) if found else translation)
    return out, report

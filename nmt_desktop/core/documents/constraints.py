"""Constrained decoding: a translation that must contain given target text (glossary terms, placeholders).

How: translate as usual, in batches; a sentence whose translation already holds every required text is
done (a term the model translates anyway costs nothing). For a missing one, find where the translation
renders its source words, by the model itself: the source term is masked (masking.py, one teacher-forced
pass) and the target word whose probability drops most is where the model put its translation of the term.
The term is then placed there by placement.py (forced prefixes run on every decoding backend and search,
and give attention for every token): as its own word, with the article before it re-decided, the rest of
the sentence kept, or not at all when it cannot be placed well (the translation stays without it and the
report says why). Repeated for the next missing term, with the terms already placed kept in the prefix.
`ConstraintReport.outcomes` says per term use what happened (term_report.py words it).

Why not dynamic beam allocation (Post & Vilar 2018): it needs a beam and per-hypothesis constraint
bookkeeping in every search; the forced repair needs neither, works in greedy search, and places the term
where the model's own translation of it was, so the words around it still fit. Measured against no
glossary in benchmarks/RESULTS.md ("Documents, glossaries and do-not-translate").
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import numpy as np

from nmt_desktop.core.analysis.alignment import piece_word_ids
from nmt_desktop.core.analysis.masking import MaskingRequest
from nmt_desktop.core.analysis.words import word_starts
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding import threads
from nmt_desktop.core.decoding.lockstep import Procedure, run_lockstep
from nmt_desktop.core.decoding.pipeline import length_sorted
from nmt_desktop.core.documents.glossary import Term, glued_uses, target_as_word
from nmt_desktop.core.documents.number_words import says_number
from nmt_desktop.core.documents.placement import Span, place

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Translation, Unit
    from nmt_desktop.core.decoding.translator import Translator


@dataclass(frozen=True)
class Constraint:
    """Characters [start, end) of a unit's source text must come out as `term.target`; `kept`: a span kept
    as it is (a number, a do-not-translate placeholder) rather than a glossary term."""
    start: int
    end: int
    term: Term
    kept: bool = False
    words: tuple[str, ...] = ()  # a small number's words in the target language, which count as keeping it


@dataclass(frozen=True)
class TermOutcome:
    """What happened to one term in one sentence: "used" (the model's own translation has it), "placed"
    (forced in, the rest of the sentence as it was), "changed" (forced in, the rest changed: `rest` is the
    chrF of the rest against the translation without it), or "not placed" (the translation without it
    was kept, `reason` says why)."""
    term: Term
    status: str
    sentence: str
    kept: bool = False
    rest: float = 100.0
    reason: str = ""


@dataclass
class ConstraintReport:
    """What forcing did: constraints asked for, already met by the model, forced in (`changed` of them
    changed the rest of their sentence), and not placed; `outcomes` one per constraint, in order."""
    asked: int = 0
    met: int = 0
    forced: int = 0
    missing: int = 0
    repairs: int = 0  # extra decodes run
    changed: int = 0
    outcomes: list[TermOutcome] = field(default_factory=list)

    def add(self, outcome: TermOutcome) -> None:
        self.outcomes.append(outcome)
        self.asked += 1
        self.met += outcome.status == "used"
        self.forced += outcome.status in ("placed", "changed")
        self.changed += outcome.status == "changed"
        self.missing += outcome.status == "not placed"

    def extend(self, other: "ConstraintReport") -> None:
        """Add another report's counts and outcomes to this one (the CLI's total over its batches)."""
        for name in ("asked", "met", "forced", "missing", "repairs", "changed"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.outcomes += other.outcomes


REPAIR_ROWS = 128  # sentences whose repairs run together: the rounds cost about the same for 16 rows or 128


def translate_constrained(translator: "Translator", units: Sequence["Unit"], constraints: Sequence[Sequence[Constraint]],
                          cfg: DecodeConfig, batch_size: int = 16, report: ConstraintReport | None = None,
                          on_done: Callable[[int, "Translation"], None] | None = None,
                          cancelled: Callable[[], bool] | None = None) -> list["Translation"]:
    """Each unit's translation (input order), holding every constraint's target text where it can be
    placed. Batches are translated shortest first; the repairs of up to REPAIR_ROWS sentences then run
    together, their decodes batched (decoding/lockstep.py: a round of decodes costs about the same for 16
    sentences or 128, so fewer, fuller rounds are faster). `on_done(index, translation)` as each unit is
    final (a sentence that needs no repair at once); `cancelled()` is checked between batches (then the
    units done so far are returned, the rest None)."""
    report = report if report is not None else ConstraintReport()
    done: list["Translation | None"] = [None] * len(units)
    waiting: dict[int, "Translation"] = {}  # translated, its repair not run yet

    def finish(u: int, translation: "Translation") -> None:
        done[u] = translation
        if on_done is not None:
            on_done(u, translation)

    def repair_waiting() -> None:
        needy = list(waiting)
        repaired = repair_all(translator, [units[u] for u in needy], [waiting[u] for u in needy],
                              [constraints[u] for u in needy], cfg, batch_size, report)
        waiting.clear()
        for u, translation in zip(needy, repaired):
            finish(u, translation)

    for picked in length_sorted([len(u.source_ids) for u in units], batch_size):
        if cancelled is not None and cancelled():
            waiting.clear()
            break
        threads.refresh()  # a long document: the machine's load may have moved (CLI default threads)
        for u, translation in zip(picked, translator.translate_units([units[u] for u in picked], cfg)):
            if constraints[u]:
                waiting[u] = translation
            else:
                finish(u, translation)
        if len(waiting) >= REPAIR_ROWS:
            repair_waiting()
    repair_waiting()
    return done  # type: ignore[return-value]  (None only when cancelled)


def repair_all(translator: "Translator", units: Sequence["Unit"], translations: Sequence["Translation"],
               constraints: Sequence[Sequence[Constraint]], cfg: DecodeConfig, batch_size: int = 16,
               report: ConstraintReport | None = None) -> list["Translation"]:
    """Each unit's final translation from its unforced one, its constraints used or placed (`repair_steps`), the
    repairs of all run together (their decodes batched: decoding/lockstep.py); the outcomes counted in `report`.
    The server's continuous batching decodes the unforced translations in its running search and calls this when
    a request's last sentence ended (server/continuous_decoding.py)."""
    repaired = run_lockstep(translator, [repair_steps(translator, unit, translation, unit_constraints, cfg)
                                         for unit, translation, unit_constraints in zip(units, translations, constraints)],
                            max(batch_size, 64))
    for outcome in repaired:
        if report is not None:
            outcome.add_to(report)
    return [outcome.translation for outcome in repaired]


@dataclass
class Repaired:
    """One sentence's repair: its final translation, one outcome per constraint, and the decodes it took."""
    translation: "Translation"
    outcomes: list[TermOutcome]
    decodes: int

    def add_to(self, report: ConstraintReport) -> None:
        report.repairs += self.decodes
        for outcome in self.outcomes:
            report.add(outcome)


def repair_steps(translator: "Translator", unit: "Unit", translation: "Translation",
                 constraints: Sequence[Constraint], cfg: DecodeConfig) -> Procedure[Repaired]:
    """The translation with each missing constraint placed (placement.py: as its own word, the rest of the
    sentence kept), in source order, the terms placed before kept in the forced prefix; a term that
    cannot be placed well is reported as not placed and the translation stays without it. A placement
    must leave every term used or placed before it standing as its own word and glue no term into another
    word (`broken_terms`), and it is not put on a word that holds one of them ("Fahrkarte" for "ticket"
    over the model's "Klasse" for "class"); the final translation is checked once more, all terms
    together, and falls back to the unforced one, each forced term not placed, should any be broken.
    A procedure (decoding/lockstep.py): many sentences' repairs run together."""
    language = translator.config.tgt_lang.split("_")[0].lower()
    unforced, terms = translation, [c.term for c in constraints]
    words = {c.term: c.words for c in constraints if c.words}
    kept = 0  # target tokens at the start that hold the terms forced so far
    decodes = 0
    standing: list[Term] = []  # the terms used or placed so far: each must stay its own word
    outcomes: list[TermOutcome] = []
    for c in constraints:
        if target_as_word(translation.text, c.term) or says_number(translation.text, c.words):
            outcomes.append(TermOutcome(c.term, "used", unit.text, c.kept))
            standing.append(c.term)
            continue
        spans = yield from term_spans(translator, translation, unit, c, kept, avoid=standing)
        keep = [c.term, *standing]
        placement = yield from place(translator, unit, translation, c.term, spans, cfg, language,
                                     None if c.kept else source_plural(unit.text[c.start:c.end], c.term),
                                     lambda text: broken_terms(text, unforced.text, keep, terms, words), required=c.kept)
        decodes += placement.decodes
        if placement.translation is None:
            outcomes.append(TermOutcome(c.term, "not placed", unit.text, c.kept, placement.rest, placement.reason))
            continue
        translation, kept = placement.translation, placement.kept
        standing.append(c.term)
        outcomes.append(TermOutcome(c.term, placement.status, unit.text, c.kept, placement.rest))
    why = broken_terms(translation.text, unforced.text, standing, terms, words)
    if why:  # not expected (each placement was checked): the last state all terms agree on is the unforced one
        translation = unforced
        outcomes = [o if o.status in ("used", "not placed") else
                    replace(o, status="not placed", reason=f"placing the terms together failed: {why}")
                    for o in outcomes]
    return Repaired(translation, outcomes, decodes)


def broken_terms(text: str, before: str, keep: Sequence[Term], terms: Sequence[Term],
                 words: Mapping[Term, tuple[str, ...]] | None = None) -> str:
    """Why `text` breaks a term of `keep` ("": it does not): the first is the one being placed, the others
    were used or placed before it. Each must stand as its own word (`target_as_word`, inflected too; a small
    number also as one of its `words`: "quinze" for 15) and be glued into another word no more often than in
    `before`, the translation without the glossary (a word that is another of the sentence's `terms` is no glue:
    "Kind" in "Kinderwagen")."""
    for n, term in enumerate(keep):
        name = "it" if n == 0 else f"the term '{term.target}'"
        if not target_as_word(text, term) and not says_number(text, (words or {}).get(term, ())):
            return "it would not stand as its own word" if n == 0 else f"it would push out {name}"
        if glued_uses(text, term, terms) > glued_uses(before, term, terms):
            return f"{name} would be glued into another word"
    return ""


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


def source_plural(found: str, term: Term) -> bool | None:
    """Whether the source words found for a term are an English plural ("hospitals" for "hospital");
    None when the term's own source is written as a plural or the ending says nothing."""
    last, own = found.split()[-1].lower() if found.split() else "", term.source.split()[-1].lower() if term.source.split() else ""
    if own.endswith("s") and not own.endswith(("ss", "us", "is")):
        return None
    if last == own:
        return False
    return last.endswith("s") and not last.endswith(("'s", "’s"))


def term_spans(translator: "Translator", translation: "Translation", unit: "Unit", constraint: Constraint,
               kept: int, count: int = 2, avoid: Sequence[Term] = ()) -> Procedure[list[Span]]:
    """Up to `count` target words (at or after token `kept`), most likely first, where the model translated
    the constraint's source words: the largest probability drops when they are masked, else the most
    attention on them, else the same relative place as in the source. At the end of the translation
    (an empty span) when it has no word there. Each span carries its largest masking drop: a small one
    says the translation has no word for the term there (placement.py then keeps every word). A word that
    is (a word of) a term of `avoid` (used or placed before) is no place for it. A procedure: the masking
    pass is asked for (`MaskingRequest`), so many sentences' passes share batches."""
    tokens = translation.target_tokens
    eos = translator.config.eos_id
    length = len(tokens) - (1 if translation.target_ids and translation.target_ids[-1] == eos else 0)
    if length <= kept:
        return [Span(length, length)]
    pieces = source_pieces(unit, constraint.start, constraint.end)
    scores = np.zeros(length)
    drops = np.full(length, np.inf)  # the masking evidence per token, unknown without source pieces
    if pieces:
        scores = (yield [MaskingRequest(translation, (tuple(pieces),))])[0][:length, 0]  # (T,)
        drops = scores
        if scores.max(initial=0.0) < 1e-3 and translation.attention is not None:
            attention = np.asarray(translation.attention, dtype=np.float64)  # (L, H, T, S)
            scores = attention[..., :length, :].mean(axis=(0, 1))[:, pieces].sum(axis=1)  # (T,)
    if not pieces or scores.max(initial=0.0) <= 0:
        relative = constraint.start / max(1, len(unit.text))
        scores = -np.abs(np.arange(length) / max(1, length) - relative)
    starts = word_starts(tokens[:length], translator.tokenizers.target.continuing_prefix)
    words = [i for i in range(kept, length) if starts[i] or i == kept]  # word starts at or after `kept`
    ends = words[1:] + [length]
    parts = [Term("", part) for t in avoid for part in t.target.split()]
    if parts:
        free = [w for w in range(len(words)) if not any(
            target_as_word(translator.tokenizers.target.decode(translation.target_ids[words[w]: ends[w]]), p)
            for p in parts)]
        if not free:
            return [Span(length, length)]
        words, ends = [words[w] for w in free], [ends[w] for w in free]
    ranked = sorted(range(len(words)), key=lambda w: (-float(scores[words[w]: ends[w]].max()), w))
    return [Span(words[w], ends[w], float(drops[words[w]: ends[w]].max())) for w in ranked[:count]]


def apply_glossary(translator: "Translator", units: Sequence["Unit"], translations: Sequence["Translation"],
                   terms: Sequence[Term], cfg: DecodeConfig) -> tuple[list["Translation"], ConstraintReport]:
    """Finished translations (the Translate tab's, streamed) with the glossary's terms forced in where the
    model left them out; the others are returned as they are (a term the model used costs nothing)."""
    from nmt_desktop.core.documents.glossary import find_terms

    report = ConstraintReport()
    out = list(translations)
    found = [[Constraint(m.start, m.end, m.term) for m in find_terms(unit.text, terms)] for unit in units]
    needy = [i for i, f in enumerate(found) if f]
    for i, repaired in zip(needy, run_lockstep(translator, [repair_steps(translator, units[i], translations[i], found[i],
                                                                         cfg) for i in needy])):
        out[i] = repaired.translation
        repaired.add_to(report)
    return out, report

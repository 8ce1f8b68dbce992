"""Placing one missing term into a translation so that it stands as its own word and the rest survives.

constraints.py finds where the model translated the term's source words (`term_spans`); here the term is
put there and the result judged against the translation without it:

1. The determiner before the place is re-decided with the term after it (determiners.py gives the forms
   of the same case): the model scores each form followed by the term; a form's fit is log p(term | form)
   plus half of log p(form), and another form replaces the model's own only MARGIN ahead of it ("das
   Krankenhaus" -> "die Klinik": the model's own article fitted its own noun). The term alone after each
   form picks the wrong gender for terms the model barely knows ("einen Herr" -> "eine Herr"); the pair's
   full probability keeps the model's own article, which its own noun chose ("Das Klinik"); half of the
   article's weight is the measured middle (benchmarks/RESULTS.md, issue 41). Where the model fused a
   preposition with its article ("ins Krankenhaus"), the preposition is the sentence's: a form written
   apart pays for its article only ("in die Klinik": "die", not "in" + "die").
2. Two ways to go on after the term, both decoded: *continue* (the model finishes the sentence, the step
   after the term forced to start a new word or be punctuation when the model would glue a piece on:
   "Klinik" + "tahre"), and *splice* (the words the model wrote after its own rendering of the term, kept
   as they were: the unforced suffix as guidance), which is refused when the model finds that suffix much
   less likely after the term than after its own word (the term does not fit there).
3. Each result is judged: the term must stand alone (`glossary.target_as_word`, no inflection), and the
   rest of the sentence (the term taken out, and the replaced words out of the translation before) is
   compared by chrF; where masking found no word that translates the term (the model left it out: the
   largest drop under RENDERED), nothing counts as replaced and there is no splice (it would drop the
   word there), so a term that pushes out an unrelated word ("ein weiteres Bett" -> "ein Zimmer") is
   refused. *continue* is kept when the rest is as it was, else *splice* when it fits, else
   *continue* when the rest is still close, else the next place the masking found; a result that breaks
   another term of the sentence (pushes it out or glues a term into another word: the caller's `broken`,
   constraints.py) is refused too; when nothing is acceptable the term is not placed and the translation
   stays as it was, with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Sequence

from nmt_desktop.core.analysis.words import word_starts
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.lockstep import DecodeRequest, Procedure
from nmt_desktop.core.documents.determiners import alternatives, joined, unfused
from nmt_desktop.core.documents.glossary import Term, target_as_word

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Translation, Unit
    from nmt_desktop.core.decoding.translator import Translator

KEEP = 90.0  # chrF of the rest at or above: the sentence is as it was
ACCEPT = 75.0  # below: the term changed too much of the sentence to be forced
FLUENCY = 1.5  # nats per token the kept suffix may lose after the term before a splice is refused
MARGIN = 1.0  # nats another determiner's fit must gain before the model's own is replaced
DETERMINER = 0.5  # weight of the determiner's own log-probability in its fit (the term's counts 1)
RENDERED = 1.5  # nats: a span whose largest masking drop is below did not translate the term's source words
_ELIDED = re.compile(r"^(\w{1,2}['’])(?=\w)")


@dataclass(frozen=True)
class Span:
    """Target tokens [start, end) of the translation where the model rendered a constraint's source;
    `drop`: the largest fall in log-probability there when the source words are masked (inf: unknown)."""
    start: int
    end: int
    drop: float = float("inf")


@dataclass(frozen=True)
class Placement:
    """The outcome of placing one term: the new translation (None: not placed), "placed" or "changed"
    (the rest of the sentence differs), the chrF of the rest against before, and why when not placed."""
    translation: "Translation | None"
    status: str
    rest: float
    reason: str = ""
    decodes: int = 0
    kept: int = 0  # target tokens up to the end of the placed term


def rest_chrf(after: str, term: str, before: str, replaced: str) -> float:
    """chrF of `after` without the term against `before` without the words the term replaced."""
    from sacrebleu.metrics import CHRF

    def without(text: str, part: str) -> str:
        if not part.strip():
            return text
        found = re.search(rf"(?<!\w){re.escape(part.strip())}", text, flags=re.IGNORECASE)
        return text if found is None else (text[:found.start()] + " " + text[found.end():])

    a, b = " ".join(without(after, term).split()), " ".join(without(before, replaced).split())
    if not a and not b:
        return 100.0
    return CHRF().sentence_score(a, [b]).score


def place(translator: "Translator", unit: "Unit", current: "Translation", term: Term, spans: Sequence[Span],
          cfg: DecodeConfig, language: str, plural: bool | None = None,
          broken: Callable[[str], str] | None = None, required: bool = False) -> Procedure[Placement]:
    """`term` placed at the first of `spans` where it fits (the module docstring), else not placed. A
    procedure (decoding/lockstep.py): it yields the decodes it needs, so many sentences' placements run
    together with their decodes batched.
    `plural`: whether the source word is plural (None: unknown), which limits the determiners tried;
    `broken(text)`: why a candidate breaks the sentence's other terms ("": it does not), which refuses it;
    `required`: text the document must keep (do-not-translate spans, numbers): the candidate that changes the
    rest least is taken ("changed") when none fits, since dropping the text loses the user's content."""
    tokenizer = translator.tokenizers.target
    ids = list(current.target_ids)
    length = len(ids) - (1 if ids and ids[-1] == translator.config.eos_id else 0)
    decodes, reason, best_rest = 0, "the model's translation has no place for it", -1.0
    fallback: tuple[float, "Translation", int] | None = None  # (rest, translation, kept) of the best judged candidate
    for span in (_past_determiner(translator, ids, length, s, language) for s in spans):
        head_words = tokenizer.decode(ids[:span.start]).split()
        replaced = tokenizer.decode(ids[span.start:span.end]).strip()
        elided = _ELIDED.match(replaced)
        if elided:  # "l'hôpital": the article stays, the noun is replaced
            head_words.append(elided.group(1))
        target = term.target
        if not head_words and current.text[:1].isupper() and target[:1].islower():
            target = target[:1].upper() + target[1:]  # the term opens the sentence
        shown = Term(term.source, target, term.note)
        prefix, old, new, scored = yield from _with_determiner(translator, unit, head_words, shown, cfg, language,
                                                               plural)
        decodes += scored
        if elided:
            old = old[:len(old) - len(elided.group(1))].rstrip()  # the replaced word holds the elided article
        before_part, after_part = " ".join(x for x in (old, replaced) if x), joined(new, shown.target) if new else shown.target
        if len(prefix) + 2 > translator.config.max_positions - 1:
            return Placement(None, "not placed", 0.0, "the sentence would be too long for the model", decodes)
        tail = ids[span.end:length]
        rendered = span.drop >= RENDERED
        splice = bool(rendered and tail and len(prefix) + len(tail) + 2 <= translator.config.max_positions - 1)
        # _continue looks past a glued piece among 16 alternatives; the splice asks for as many (they change no
        # choice) so that both go to the model as one batch
        wide = replace(cfg, alternatives=max(cfg.alternatives, 16))
        asked = [DecodeRequest([unit], wide, prefix)] + ([DecodeRequest([unit], wide, prefix + tail)] if splice else [])
        answers = yield asked  # continue and splice decoded together
        translation, extra = yield from _continue(translator, unit, prefix, cfg, answers[0][0])
        decodes += len(asked) + extra
        candidates = [("continue", translation)]
        if splice:
            spliced = answers[1][0]
            if _fits(current, span.end, length, spliced, len(prefix), len(tail)):
                candidates.append(("splice", spliced))
            else:
                reason = "the rest of the sentence does not fit after it"
        if not rendered:  # no word there translates the term: every word of the sentence must survive
            before_part = ""
        judged = []
        for kind, translation in candidates:
            if not target_as_word(translation.text, shown, inflected=False):
                reason = "it would be glued into another word"
                continue
            if broken is not None and broken(translation.text):
                reason = broken(translation.text)
                continue
            rest = rest_chrf(translation.text, after_part, current.text, before_part)
            best_rest = max(best_rest, rest)
            judged.append((kind, translation, rest))
            if fallback is None or rest > fallback[0]:
                fallback = (rest, translation, len(prefix))
        for kind, translation, rest in judged:
            if kind == "continue" and rest >= KEEP:
                return Placement(translation, "placed", rest, "", decodes, len(prefix))
        for kind, translation, rest in judged:
            if kind == "splice" and rest >= ACCEPT:
                return Placement(translation, "placed" if rest >= KEEP else "changed", rest, "", decodes, len(prefix))
        for kind, translation, rest in judged:
            if rest >= ACCEPT:
                return Placement(translation, "changed", rest, "", decodes, len(prefix))
        if judged:
            reason = (f"forcing it would change the rest of the sentence (chrF {best_rest:.0f} against the "
                      f"translation without it)")
    if required and fallback is not None:
        return Placement(fallback[1], "changed", fallback[0], "", decodes, fallback[2])
    return Placement(None, "not placed", max(best_rest, 0.0), reason, decodes)


def _past_determiner(translator: "Translator", ids: Sequence[int], length: int, span: Span, language: str) -> Span:
    """The span moved to the word after it when it is a determiner ("das" of "das Krankenhaus", where
    masking the source noun changed the article most): the noun is replaced, the article re-decided."""
    tokenizer = translator.tokenizers.target
    word = tokenizer.decode(ids[span.start:span.end]).strip()
    if span.end >= length or not alternatives(word, language, "x"):
        return span
    starts = word_starts(tokenizer.pieces(ids[span.end:length]), tokenizer.continuing_prefix)  # (rest,)
    end = next((span.end + k for k in range(1, len(starts)) if starts[k]), length)
    return Span(span.end, end, span.drop)


def _with_determiner(translator: "Translator", unit: "Unit", head_words: list[str], term: Term, cfg: DecodeConfig,
                     language: str, plural: bool | None) -> Procedure[tuple[list[int], str, str, int]]:
    """The forced prefix (ids): the words before the place, the determiner that fits the term best (the
    module docstring), and the term; the determiner before and after ("" when none was re-decided), and how
    many scoring passes it took (0 or 1)."""
    encode = translator.target_prefix_ids
    options: list[tuple[list[str], str]] = [(head_words, "")]
    for width in (2, 1):  # "de la", "in der" before "la", "der"
        if len(head_words) >= width:
            before = head_words[-width - 1] if len(head_words) > width else ""
            forms = alternatives(" ".join(head_words[-width:]), language, term.target, plural, before)
            if len(forms) > 1:
                options = [(head_words[:-width], form) for form in forms]
                break
    texts = [" ".join([*words, joined(form, term.target) if form else term.target]) for words, form in options]
    if len(options) == 1:
        return encode(texts[0]), "", "", 0
    targets = [encode(text) for text in texts]
    term_tokens = [len(t) - _common(t, encode(" ".join([*w, f]))) for t, (w, f) in zip(targets, options)]
    shared = min(_common(targets[0], t) for t in targets[1:])  # the words before, as tokens
    scored = (yield [DecodeRequest([unit] * len(targets), replace_cfg(cfg), targets=targets)])[0]
    # log p(term | source, words before, determiner) + DETERMINER * log p(determiner | source, words before)
    # the model wrote a preposition fused with its article ("ins"): the preposition is the sentence's, not
    # chosen, so a form written apart pays for its article only ("in die": "die", not "in" + "die")
    own = options[0][1]
    prep = (len(encode(" ".join([*options[0][0], unfused(own, language).split()[0]]))) - shared
            if unfused(own, language) != own else 0)
    fit = [sum(s.best.token_logprobs[len(t) - k: len(t)])
           + DETERMINER * sum(s.best.token_logprobs[shared + (prep if " " in f else 0): len(t) - k])
           for s, t, k, (_w, f) in zip(scored, targets, term_tokens, options)]
    best = max(range(len(fit)), key=lambda i: (fit[i], -i))
    if fit[best] < fit[0] + MARGIN:  # not clearly better than the model's own
        best = 0
    return targets[best], options[0][1], options[best][1], 1


def _common(a: Sequence[int], b: Sequence[int]) -> int:
    """The length of the common start of two id lists."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def replace_cfg(cfg: DecodeConfig) -> DecodeConfig:
    """Scoring needs no alternatives or attention."""
    return replace(cfg, alternatives=0, beam_size=1, nbest=1)


def _continue(translator: "Translator", unit: "Unit", prefix: list[int], cfg: DecodeConfig,
              translation: "Translation") -> Procedure[tuple["Translation", int]]:
    """`translation` (decoded with `prefix` forced and 16 alternatives a step); when the model glues a
    piece onto the term's last word ("Klinik" + "tahre"), the step after it decoded again with the best
    token that starts a word, is punctuation or ends the sentence (extra decodes: 0 or 1)."""
    tokens, after = translation.target_tokens, len(prefix)
    if after >= len(tokens) or not glued(translator, tokens[after - 1: after + 1]):
        return translation, 0
    alternatives_ = translation.best.alternatives[after] if after < len(translation.best.alternatives) else []
    choice = next((a.token_id for a in alternatives_ if not glued(translator, [tokens[after - 1], a.piece])), None)
    if choice is None:
        return translation, 0
    if choice == translator.config.eos_id:
        return (yield [DecodeRequest([unit], cfg, prefix, targets=[prefix])])[0][0], 1
    return (yield [DecodeRequest([unit], cfg, prefix + [choice])])[0][0], 1


def glued(translator: "Translator", pair: Sequence[str]) -> bool:
    """Whether the second piece continues the first's word with a letter or digit."""
    if len(pair) < 2 or not pair[1] or not pair[1].lstrip("#")[:1].isalnum():
        return False
    return not word_starts(list(pair), translator.tokenizers.target.continuing_prefix)[1]


def _fits(current: "Translation", end: int, length: int, spliced: "Translation", start: int, count: int) -> bool:
    """Whether the kept suffix (and the end of the sentence) is about as likely after the term as after
    the model's own word: mean log-prob per token, within FLUENCY."""
    before = current.best.token_logprobs[end: length + 1]
    after = spliced.best.token_logprobs[start: start + count + 1]
    if not before or not after:
        return True
    return sum(before) / len(before) - sum(after) / len(after) <= FLUENCY

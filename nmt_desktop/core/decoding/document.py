"""Document translation: the one policy that cuts a text into the units the model translates.

The CLI (`Translator.translate_batch` over input lines) and the GUI (`Translator.stream_document` over
the editor's text) both cut with `Translator.units`, which follows it, so a text translates the same way in both:

- each line (paragraph) is translated on its own, so the output keeps the text's line structure;
- each sentence of a line (`split_sentences`) is a unit, and the line's translation is theirs joined
  with a space; a line of one sentence is one unit, as typed. Why: models trained on single sentences
  (the bundled ones: Tatoeba) degenerate on two at once ("Re Re Reziesiesie"); sentence by sentence
  gained 11-27 BLEU on dev lines of two or three sentences (benchmarks/RESULTS.md, "Sentence policy
  and language identification");
- a sentence longer than the model accepts (`max_positions` source tokens) is cut at ; and :, and a
  piece that still does not fit is refused (`InputTooLongError`);
- an empty (or blank) line has no unit: its translation is empty, and the line stays.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

class InputTooLongError(ValueError):
    """A sentence has more tokens than the model's max_positions and cannot be split further."""


_CLOSERS = "\"'”’»)]」』）"
# a sentence end: . ! ? … (any run, then closing quotes or brackets) before a space, or a CJK full stop
_END = re.compile(rf"[.!?…]+[{re.escape(_CLOSERS)}]*(?=\s)|[。！？]+[{re.escape(_CLOSERS)}]*")
_CLAUSE_END = re.compile(r"(?<=[;:])\s+|(?<=[；：])")
_NEXT = re.compile(r"\s*(\S?)")
# words a "." ends without ending the sentence (English, German, French, Spanish); dotted ones ("e.g.",
# "U.S.", "z.B.") and single capitals but "I" ("J. Smith") are recognised by their form
ABBREVIATIONS = frozenset(
    "Mr Mrs Ms Mx Dr Prof Sr Jr St Mt Ft Gen Col Lt Capt Sgt Cmdr Adm Gov Sen Rep Rev Hon Pres Supt Messrs "
    "Mme Mlle Mgr Hr Fr Frl Hrn Sra Sta Dra Inc Ltd Co Corp Bros vs cf ca approx Fig Vol Dept Univ "
    "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec bzw usw vgl evtl ggf inkl".split())
NUMBER_ABBREVIATIONS = frozenset("No Nos Nr Art p pp".split())  # abbreviations only before a number: "No. 5"
_DOTTED = re.compile(r"(?:[^\W\d_]{1,3}\.)+[^\W\d_]{1,3}")  # e.g, i.e, U.S, p.m, z.B


def split_sentences(text: str) -> list[str]:
    """The sentences of a text: cut after . ! ? … (and closing quotes) before a space, and after CJK 。！？;
    not after an abbreviation ("Mr. Smith", "e.g. this", "U.S. law", "No. 5"), in a number ("3.5"), or
    after an ellipsis that the sentence goes on from in lower case ("I think… maybe")."""
    sentences, start = [], 0
    for end in _END.finditer(text):
        if _goes_on(text, start, end):
            continue
        sentences.append(text[start:end.end()])
        start = end.end()
    sentences.append(text[start:])
    return [s for s in (s.strip() for s in sentences) if s]


def _goes_on(text: str, start: int, end: re.Match[str]) -> bool:
    """Whether the sentence goes on after this end mark (an abbreviation's dot, a lower-case ellipsis)."""
    mark = end.group().rstrip(_CLOSERS)
    following = _NEXT.match(text, end.end()).group(1)  # the next character after the spaces ("" at the end)
    if mark != "." and set(mark) <= {".", "…"}:  # an ellipsis
        return following.islower()
    if mark != ".":
        return False
    # the word before the dot (a bounded look back: a long text is split in linear time)
    word = text[max(start, end.start() - 32):end.start()].split()[-1:] or [""]
    word = word[0].lstrip(_CLOSERS + "\"'“‘«([¿¡")
    if word in ABBREVIATIONS or _DOTTED.fullmatch(word) or (len(word) == 1 and word.isupper() and word != "I"):
        return True
    return word in NUMBER_ABBREVIATIONS and following.isdigit()


def document_lines(text: str) -> list[str]:
    """The lines of a text ("\\n", "\\r\\n"); a final line end does not start another, empty line."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    return lines[:-1] if len(lines) > 1 and text.endswith("\n") else lines


def check_length(ids: Sequence[int], text: str, limit: int) -> None:
    """InputTooLongError unless `ids` (the source ids of `text`) fit a model of `limit` positions."""
    if len(ids) > limit:
        raise InputTooLongError(
            f"the sentence \"{_shorten(text)}\" has {len(ids)} tokens but this model accepts at most "
            f"{limit}; split it into shorter sentences")


def line_units(line: str, source_ids: Callable[[str], list[int]], limit: int,
               whole: bool = False) -> list[tuple[str, list[int]]]:
    """The units of one line as (text, source ids): its sentences (a line of one sentence is itself), a
    sentence too long for the model cut at ; and :, none for a blank line; InputTooLongError for a piece
    that still does not fit. `whole`: the line itself when it fits (what peers such as transformers and
    CTranslate2 translate: parity checks and benchmarks against them), else its sentences."""
    if not line.strip():
        return []
    if whole:
        ids = source_ids(line)
        if len(ids) <= limit:
            return [(line, ids)]
    sentences = split_sentences(line)
    units = []
    for sentence in [line] if len(sentences) == 1 else sentences:
        ids = source_ids(sentence)
        if len(ids) > limit:
            clauses = [c for c in (c.strip() for c in _CLAUSE_END.split(sentence)) if c]
            units += [(clause, source_ids(clause)) for clause in clauses]
        else:
            units.append((sentence, ids))
    for part, part_ids in units:
        check_length(part_ids, part, limit)
    return units


def _shorten(text: str, width: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"

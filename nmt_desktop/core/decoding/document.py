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
  piece that still does not fit is refused (`InputTooLongError`): a typed line says so rather than guess.
  A document never refuses (`cut_long`, `sentence_pieces`, issue 42: four real documents were refused for
  one list or table row): a sentence too long is cut at ; and :, then at commas and dashes, then before
  conjunctions, then hard on word boundaries, adjacent clauses merged again while they fit, so that each
  piece is as long as the model takes;
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


# where a sentence too long for the model is cut, coarsest first (then hard, on words): clauses after ; and :,
# after commas and before spaced dashes, before conjunctions (English, German, French, Spanish, Italian)
_CONJUNCTIONS = ("and or but nor because although though while whereas which who that so yet "
                 "und oder aber sondern denn weil obwohl während dass wenn als "
                 "et ou mais car donc puisque quand lorsque qui que "
                 "y o pero porque aunque cuando e ma perché mentre").split()
_CUTS = (
    _CLAUSE_END,
    re.compile(r"(?<=,)\s+|(?<=[，、])|\s+(?=[–—]\s)"),
    re.compile(rf"\s+(?=(?:{'|'.join(_CONJUNCTIONS)})\s)", re.IGNORECASE),
)


def sentence_pieces(sentence: str, source_ids: Callable[[str], list[int]], limit: int,
                    level: int = 0) -> list[tuple[str, list[int]]]:
    """A sentence as pieces (text, source ids) the model takes: itself when it fits, else cut at the
    coarsest boundaries (`_CUTS`) with neighbours merged again while they fit, a piece still too long cut
    at the next ones, and at last hard between words (between characters for one word over the limit).
    Each piece is a substring of the sentence, in order; none is longer than `limit` tokens."""
    ids = source_ids(sentence)
    if len(ids) <= limit:
        return [(sentence, ids)]
    if level == len(_CUTS):
        return _hard_pieces(sentence, source_ids, limit)
    spans, start = [], 0
    for cut in _CUTS[level].finditer(sentence):
        if cut.start() > start:
            spans.append((start, cut.start()))
        start = max(start, cut.end())
    spans.append((start, len(sentence)))
    spans = [(a, b) for a, b in spans if sentence[a:b].strip()]
    if len(spans) < 2:
        return sentence_pieces(sentence, source_ids, limit, level + 1)
    pieces, (first, last) = [], spans[0]
    for a, b in spans[1:]:
        if len(source_ids(sentence[first:b])) <= limit:
            last = b
            continue
        pieces += sentence_pieces(sentence[first:last].strip(), source_ids, limit, level + 1)
        first, last = a, b
    return pieces + sentence_pieces(sentence[first:last].strip(), source_ids, limit, level + 1)


def _hard_pieces(text: str, source_ids: Callable[[str], list[int]], limit: int) -> list[tuple[str, list[int]]]:
    """`text` cut greedily into the longest runs of whole words that fit; a word alone over the limit is
    cut between characters."""
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    pieces, (first, last) = [], words[0]
    for a, b in words[1:]:
        if len(source_ids(text[first:b])) <= limit:
            last = b
            continue
        pieces += _fitting(text[first:last], source_ids, limit)
        first, last = a, b
    return pieces + _fitting(text[first:last], source_ids, limit)


def _fitting(piece: str, source_ids: Callable[[str], list[int]], limit: int) -> list[tuple[str, list[int]]]:
    """`piece` when it fits, else (one word over the limit) its longest fitting prefixes in turn."""
    ids = source_ids(piece)
    if len(ids) <= limit:
        return [(piece, ids)]
    pieces, start = [], 0
    while start < len(piece):
        # binary search for the longest prefix from `start` that fits, within 32 characters a token (a blob of
        # 100,000 characters is not tokenized whole at every probe)
        lo, hi = start + 1, min(len(piece), start + 32 * limit)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if len(source_ids(piece[start:mid])) <= limit else (lo, mid - 1)
        pieces.append((piece[start:lo], source_ids(piece[start:lo])))
        start = lo
    return pieces


def line_sentences(line: str) -> list[str]:
    """The sentences of a line as the policy translates them (a line of one sentence is itself, as typed)."""
    sentences = split_sentences(line)
    return [line] if len(sentences) == 1 else sentences


def line_units(line: str, source_ids: Callable[[str], list[int]], limit: int,
               whole: bool = False, cut_long: bool = False) -> list[tuple[str, list[int]]]:
    """The units of one line as (text, source ids): its sentences (a line of one sentence is itself), a
    sentence too long for the model cut at ; and :, none for a blank line; InputTooLongError for a piece
    that still does not fit, unless `cut_long` (documents: `sentence_pieces` cuts it until it fits).
    `whole`: the line itself when it fits (what peers such as transformers and CTranslate2 translate:
    parity checks and benchmarks against them), else its sentences."""
    if not line.strip():
        return []
    if whole:
        ids = source_ids(line)
        if len(ids) <= limit:
            return [(line, ids)]
    if cut_long:
        return [piece for sentence in line_sentences(line) for piece in sentence_pieces(sentence, source_ids, limit)]
    units = []
    for sentence in line_sentences(line):
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
